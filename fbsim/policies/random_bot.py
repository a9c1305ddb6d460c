"""`random`: uniform over the legal moves at every decision point.

Each draw comes from the counter-based RNG at (seed, game, round, seat, decision point,
counter), so a random game replays exactly.
"""

from __future__ import annotations

from fbsim.game import layout as L
from fbsim.game import shape
from fbsim.game.jit import shared
from fbsim.game.legal import can_buy, is_eligible
from fbsim.game.public import mine
from fbsim.game.rng import below
from fbsim.policies import BotSpec
from fbsim.policies.common import uniform_legal_commit


@shared
def commit(R, V, P, seed, game):
    return uniform_legal_commit(R, V, seed, game)


@shared
def fog_request(R, V, P, seed, game):
    # any amount >= 0 is legal; asking for more than the pot is the same as asking for it
    return below(V[L.V_POT] + 1, seed, game, V[L.V_ROUND], V[L.V_SEAT], L.DP_FOG, 0)


@shared
def market(R, V, P, seed, game):
    count = 1  # taking wages
    for m in range(shape.market_size(R)):
        if can_buy(R, V, m):
            count += 1
    pick = below(count, seed, game, V[L.V_ROUND], V[L.V_SEAT], L.DP_MARKET, mine(V, L.V_MY_BOUGHT))
    if pick == 0:
        return -1
    for m in range(shape.market_size(R)):
        if can_buy(R, V, m):
            pick -= 1
            if pick == 0:
                return m
    return -1


@shared
def accuse(R, V, P, seed, game):
    count = 1  # abstain
    for s in range(shape.players(R)):
        if is_eligible(V, s):
            count += 1
    pick = below(count, seed, game, V[L.V_ROUND], V[L.V_SEAT], L.DP_ACCUSE, 0)
    if pick == 0:
        return -1
    for s in range(shape.players(R)):
        if is_eligible(V, s):
            pick -= 1
            if pick == 0:
                return s
    return -1


@shared
def cornered(R, V, P, seed, game):
    return below(2, seed, game, V[L.V_ROUND], V[L.V_SEAT], L.DP_CORNERED, 0)


BOT = BotSpec(
    name="random",
    summary="uniform over legal moves at every decision point",
    params=(),
    commit=commit,
    fog_request=fog_request,
    market=market,
    accuse=accuse,
    cornered=cornered,
)
