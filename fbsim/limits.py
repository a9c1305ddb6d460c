"""The largest seed and number of games any command or spec accepts.

Seeds and game indices are int64 in the kernel; a larger number is refused with its range
rather than overflowing (or running for ever) somewhere inside a run."""

from __future__ import annotations

MAX_SEED = 2**63 - 1
MAX_GAMES = 10**12  # games per point or table size (about a week of one machine)
