"""Every seed the single-seat search plays, derived in one place.

A seed is a hash of the search's seed and the coordinates of what it plays: the table size,
the stream (what kind of games: `STREAMS`), the iteration, the Agenda, the start of a
best-response search and the step within it (a meta-solver's step, a generation). Distinct
coordinates give unrelated seeds, so no two parts of a search replay each other's games, a
confirmation never replays the games its best response was searched on, and nothing has to
leave room for how many iterations or generations a search may take.
"""

from __future__ import annotations

import hashlib

STREAMS = ("meta", "search", "select", "confirm", "audit-search", "audit-select",
           "audit-confirm", "audit-searcher", "searcher-beliefs", "distill", "ladder",
           "ladder-searcher",
           "rulebook-sampler", "rulebook-final", "rulebook-confirm")
SEED_BITS = 62  # the seeds stay non-negative int64 values


def seed_of(seed: int, players: int, stream: str, iteration: int = 0, agenda: int = 0,
            start: int = 0, step: int = 0) -> int:
    """The seed of one part of a search (`stream` one of STREAMS)."""
    if stream not in STREAMS:
        raise ValueError(f"unknown stream {stream!r}")
    key = f"fbsim-equilibrium/{seed}/{players}/{stream}/{iteration}/{agenda}/{start}/{step}"
    digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> (64 - SEED_BITS)
