"""The largest seed and number of games any command or spec accepts.

Seeds and game indices are int64 in the kernel; a larger number is refused with its range
rather than overflowing (or running for ever) somewhere inside a run."""

from __future__ import annotations

# 2**62 - 1, not int64's 2**63 - 1: searches play seeds derived by adding offsets to the
# seed given (seed + CONFIRM_SEED_OFFSET, seed + generation, ...), every one of them far
# below 2**62, so that any seed plus any offset still fits an int64.
MAX_SEED = 2**62 - 1
MAX_GAMES = 10**12  # games per point or table size (about a week of one machine)
