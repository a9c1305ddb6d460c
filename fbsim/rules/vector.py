"""The rules vector: `Rules` packed for one table size into the int64 vector that the bots
and the kernel read (indices `R_*` in `fbsim.game.layout`), derived from the rules' fields."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np

from fbsim.game import layout as L
from fbsim.rules.schema import Rules

# The fields of the rules that `fbsim.game.layout.R_FIELDS` does not place, each packed by
# its own rule in `rules_vector` (or, for `bots`, not at all).
VECTOR_SPECIAL = {
    "players": "R_PLAYERS: the table size asked for (default: `players`)",
    "first_player": "R_FIRST_PLAYER: the seat modulo the table size (D9)",
    "baseline": "R_BASELINE: the table for this table size (`baseline.p<n>`, D1)",
    "decks": "R_DECK: the agenda deck for this table size (`decks.p<n>`, D2)",
    "tipping.start_flipped": "R_N_TOKENS, R_TOKEN_START_FLIPPED, R_TOKEN_THRESHOLD: the "
                             "tokens flipped at setup come first, at the Dial's start (R-S1)",
    "tipping.thresholds": "R_TOKEN_THRESHOLD: after the tokens flipped at setup (R-W3)",
    "accusation.rounds": "R_ACCUSE_AFTER: 1 after each round listed (R-A1)",
    "assets": "R_N_KINDS, then per kind in order a block at R_ASSET (layout.asset_at)",
    "bots": "not in the vector: each bot has its own parameter vector",
}


def _field_at(obj: Any, path: str) -> int:
    """The vector's value of the field at `path`: a number, a boolean as 0/1, a choice as the
    index of its value among the field's choices (`layout.TIEBREAK_*`, `layout.FLIP_*`)."""
    *parents, name = path.split(".")
    for part in parents:
        obj = getattr(obj, part)
    value = getattr(obj, name)
    if isinstance(value, str):
        choices = next(f for f in fields(obj) if f.name == name).metadata["choices"]
        return choices.index(value)
    return int(value)


def rules_vector(rules: Rules, players: int | None = None) -> np.ndarray:
    """The int64 rules vector for one table size (indices `fbsim.game.layout.R_*`): every
    field of `layout.R_FIELDS` at its index, then the fields of `VECTOR_SPECIAL`."""
    n = rules.players if players is None else players
    v = np.zeros(L.R_SIZE, dtype=np.int64)
    for path, i in L.R_FIELDS.items():
        v[i] = _field_at(rules, path)
    v[L.R_PLAYERS] = n
    v[L.R_FIRST_PLAYER] = rules.first_player % n  # D9
    for r, b in enumerate(rules.baseline.for_players(n)):  # D1
        v[L.R_BASELINE + r] = b
    for a, c in enumerate(rules.decks.for_players(n).counts()):  # D2
        v[L.R_DECK + a] = c
    t = rules.tipping
    v[L.R_N_TOKENS] = t.start_flipped + len(t.thresholds)
    for i in range(t.start_flipped):  # R-S1
        v[L.R_TOKEN_THRESHOLD + i] = rules.dial.start
        v[L.R_TOKEN_START_FLIPPED + i] = 1
    for j, th in enumerate(t.thresholds):  # R-W3
        v[L.R_TOKEN_THRESHOLD + t.start_flipped + j] = th
    for a in rules.accusation.rounds:  # R-A1
        v[L.R_ACCUSE_AFTER + a - 1] = 1
    v[L.R_N_KINDS] = len(rules.assets)
    for k, asset in enumerate(rules.assets.values()):
        for name, f in L.A_FIELDS.items():
            v[L.asset_at(k, f)] = int(getattr(asset, name))
    return v
