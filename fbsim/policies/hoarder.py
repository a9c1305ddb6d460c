"""`hoarder`: all WORKS, takes wages, never buys, never masks, claims nothing.

Abstains at Accusations and reveals when cornered (revealing keeps the hoard).
"""

from __future__ import annotations

from fbsim.game import layout as L
from fbsim.game.jit import shared
from fbsim.policies import BotSpec


@shared
def commit(R, V, P, seed, game):
    return R[L.R_AGENTS], 0, 0, 0, 0


@shared
def fog_request(R, V, P, seed, game):
    return 0


@shared
def market(R, V, P, seed, game):
    return -1


@shared
def accuse(R, V, P, seed, game):
    return -1


@shared
def cornered(R, V, P, seed, game):
    return 1


BOT = BotSpec(
    name="hoarder",
    summary="all WORKS and wages; never buys, masks or claims",
    params=(),
    commit=commit,
    fog_request=fog_request,
    market=market,
    accuse=accuse,
    cornered=cornered,
)
