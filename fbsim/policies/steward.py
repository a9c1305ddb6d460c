"""`steward`: the honest Steward. Keeps the projected final Dial in Warming.

Projects the final Dial from public information (world turns to come, plus the rest of the
table's average net chips so far) and cools just enough, spread over the rounds left, to land
`margin` ppm below Severe. With headroom to spare it burns a little, masked while it has
Masks, and claims from the Fog pot exactly what its own masked burns put in (never more).
Buys cooling assets (Carbon Sinks), points at the most open burner, reveals when cornered.
"""

from __future__ import annotations

from fbsim.game import layout as L
from fbsim.game import shape
from fbsim.game.jit import shared
from fbsim.game.public import mine, world_projection
from fbsim.policies import BotSpec, Param, param_index
from fbsim.policies.common import (
    ANY_INCOME,
    COOLING,
    NONE,
    ceil_div_pos,
    cheapest_slot,
    chip_rounds_left,
    clamp,
    mask_split,
    max_affordable_cool,
    most_by,
    others_net_per_round,
)

PARAMS = (
    Param("margin", 5.0, "ppm below Severe the projection aims for", -100, 100),
    Param("burn_slack", 15.0, "headroom (ppm) under the aim before it burns at all", 0,
          1000),
    Param("max_burn", 1.0, "BURN Agents at most per round", 0, 6),
    Param("mask_burns", 1.0, "1: mask its burns while Masks last; 0: never mask", 0, 1),
    Param("reserve", 0.0, "Capital kept after a purchase", 0, 1000),
)

P_MARGIN = param_index(PARAMS, "margin")
P_BURN_SLACK = param_index(PARAMS, "burn_slack")
P_MAX_BURN = param_index(PARAMS, "max_burn")
P_MASK_BURNS = param_index(PARAMS, "mask_burns")
P_RESERVE = param_index(PARAMS, "reserve")


@shared
def commit(R, V, P, seed, game):
    left = chip_rounds_left(R, V)
    proj = world_projection(R, V) + others_net_per_round(R, V, 0.0) * left
    target = R[L.R_SEVERE] - 1 - P[P_MARGIN]
    agents = R[L.R_AGENTS]
    cool = 0
    burn = 0
    if proj > target:
        cool = ceil_div_pos(proj - target, R[L.R_COOL_PPM] * left)
        cool = max_affordable_cool(R, V, clamp(cool, 0, agents), 0)
    elif target - proj >= P[P_BURN_SLACK] and R[L.R_BURN_PPM] > 0:
        most = clamp(int(P[P_MAX_BURN]), 0, agents)  # R-C1: never more chips than Agents
        burn = clamp(int((target - proj) / (R[L.R_BURN_PPM] * left)), 0, most)
    want_mb = burn if P[P_MASK_BURNS] > 0 else 0
    mb, mc = mask_split(V, burn, cool, want_mb, NONE)
    return agents - cool - burn, cool, burn, mc, mb


@shared
def fog_request(R, V, P, seed, game):
    # R-V5, honest: exactly what this round's own masked burns put in
    return mine(V, L.V_MY_FOG_IN_ROUND)


@shared
def market(R, V, P, seed, game):
    # cooling assets only, and only while a world turn is still to come (R-W1)
    if V[L.V_ROUND] >= shape.rounds(R):
        return -1
    return cheapest_slot(R, V, COOLING, int(P[P_RESERVE]), ANY_INCOME)


@shared
def accuse(R, V, P, seed, game):
    return most_by(R, V, L.V_OPEN_BURN_TOTAL, 1)


@shared
def cornered(R, V, P, seed, game):
    return 1


BOT = BotSpec(
    name="steward",
    summary="honest Steward: keeps the projected Dial in Warming, claims only its own",
    params=PARAMS,
    commit=commit,
    fog_request=fog_request,
    market=market,
    accuse=accuse,
    cornered=cornered,
)
