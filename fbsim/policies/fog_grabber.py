"""`fog-grabber`: the Fog-grabbing Accelerationist.

Burns `burns` Agents every round, masking up to `masks_per_round` of them to hide, and asks
the Fog pot for its own masked-burn money plus `greed` of the rest (0: honest, 1: the whole
pot). Buys heat assets (positive ppm) while keeping the Capital a Collapse win needs (R-E3).
Points at the most open cooler. When cornered it reveals if the extra open-BURN pay of a
revealed Accelerationist (R-A5) over the rounds left is worth at least the price of silence,
else it pays.
"""

from __future__ import annotations

from fbsim.game import layout as L
from fbsim.game import shape
from fbsim.game.jit import shared
from fbsim.game.public import mine
from fbsim.policies import BotSpec, Param, param_index
from fbsim.policies.common import (
    ANY_INCOME,
    HEATING,
    NONE,
    cheapest_slot,
    clamp,
    greedy_claim,
    mask_split,
    most_by,
    reveal_pays,
)

PARAMS = (
    Param("greed", 1.0, "share of the rest of the pot it claims (0 honest, 1 all)", 0, 1),
    Param("burns", 3.0, "BURN Agents per round", 0, 6),
    Param("masks_per_round", 1.0, "burns it masks per round while Masks last", 0, 6),
    Param("reserve_extra", 0.0, "Capital kept above the Collapse minimum after buying",
          0, 1000),
)

P_GREED = param_index(PARAMS, "greed")
P_BURNS = param_index(PARAMS, "burns")
P_MASKS_PER_ROUND = param_index(PARAMS, "masks_per_round")
P_RESERVE_EXTRA = param_index(PARAMS, "reserve_extra")


@shared
def commit(R, V, P, seed, game):
    agents = R[L.R_AGENTS]
    burn = clamp(int(P[P_BURNS]), 0, agents)
    mb, mc = mask_split(V, burn, NONE, int(P[P_MASKS_PER_ROUND]), NONE)
    return agents - burn, 0, burn, mc, mb


@shared
def fog_request(R, V, P, seed, game):
    return greedy_claim(V, P[P_GREED])


@shared
def market(R, V, P, seed, game):
    if V[L.V_ROUND] >= shape.rounds(R):
        return -1
    reserve = R[L.R_COLLAPSE_MIN_CAPITAL] + int(P[P_RESERVE_EXTRA])
    return cheapest_slot(R, V, HEATING, reserve, ANY_INCOME)


@shared
def accuse(R, V, P, seed, game):
    return most_by(R, V, L.V_OPEN_COOL_TOTAL, 1)


@shared
def cornered(R, V, P, seed, game):
    if mine(V, L.V_MY_AGENDA) != L.ACCELERATIONIST:
        return 1
    return 1 if reveal_pays(R, V, int(P[P_BURNS])) else 0


BOT = BotSpec(
    name="fog-grabber",
    summary="Fog-grabbing Accelerationist: burns, masks, grabs the pot, buys heat",
    params=PARAMS,
    commit=commit,
    fog_request=fog_request,
    market=market,
    accuse=accuse,
    cornered=cornered,
)
