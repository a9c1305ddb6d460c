"""`opportunist`: steers the projected final Dial into Severe.

Aims at the middle of Severe (plus `aim_offset`): projects the final Dial like the Steward
and cools or burns, spread over the rounds left, when the projection is more than
`tolerance` ppm off. Masks its burns while Masks last and claims honestly. Buys assets that
push the Dial its way, else income assets with no ppm while they can still pay back. Points
at the most open burner when the Dial runs hot, at the most open cooler when it runs cold.
Reveals when cornered.
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
    HEATING,
    NEUTRAL,
    NO_RESERVE,
    NONE,
    PAYING,
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
    Param("aim_offset", 0.0, "ppm added to the middle of Severe it aims at", -100, 100),
    Param("tolerance", 4.0, "ppm off the aim it accepts without acting", 0, 1000),
    Param("max_chips", 3.0, "COOL or BURN Agents at most per round", 0, 6),
    Param("mask_burns", 1.0, "1: mask a burn per round while Masks last; 0: never", 0, 1),
    Param("payback", 3.0, "world turns left it needs to buy an income asset", 0, 16),
)

P_AIM_OFFSET = param_index(PARAMS, "aim_offset")
P_TOLERANCE = param_index(PARAMS, "tolerance")
P_MAX_CHIPS = param_index(PARAMS, "max_chips")
P_MASK_BURNS = param_index(PARAMS, "mask_burns")
P_PAYBACK = param_index(PARAMS, "payback")


@shared
def aim(R, P):
    return (R[L.R_SEVERE] + R[L.R_EXTREME] - 1) / 2.0 + P[P_AIM_OFFSET]


@shared
def gap(R, V, P):
    """Projected final Dial minus the aim (positive: too hot)."""
    left = chip_rounds_left(R, V)
    proj = world_projection(R, V) + others_net_per_round(R, V, 0.0) * left
    return proj - aim(R, P)


@shared
def commit(R, V, P, seed, game):
    left = chip_rounds_left(R, V)
    g = gap(R, V, P)
    agents = R[L.R_AGENTS]
    most = clamp(int(P[P_MAX_CHIPS]), 0, agents)
    cool = 0
    burn = 0
    if g > P[P_TOLERANCE]:
        cool = clamp(ceil_div_pos(g, R[L.R_COOL_PPM] * left), 0, most)
        cool = max_affordable_cool(R, V, cool, 0)
    elif g < -P[P_TOLERANCE]:
        burn = clamp(ceil_div_pos(-g, R[L.R_BURN_PPM] * left), 0, most)
    want_mb = 1 if P[P_MASK_BURNS] > 0 else 0
    mb, mc = mask_split(V, burn, cool, want_mb, NONE)
    return agents - cool - burn, cool, burn, mc, mb


@shared
def fog_request(R, V, P, seed, game):
    return mine(V, L.V_MY_FOG_IN_ROUND)


@shared
def market(R, V, P, seed, game):
    if V[L.V_ROUND] >= shape.rounds(R):
        return -1
    g = gap(R, V, P)
    if g > P[P_TOLERANCE]:
        slot = cheapest_slot(R, V, COOLING, NO_RESERVE, ANY_INCOME)
    elif g < -P[P_TOLERANCE]:
        slot = cheapest_slot(R, V, HEATING, NO_RESERVE, ANY_INCOME)
    else:
        slot = -1
    if slot < 0 and shape.rounds(R) - V[L.V_ROUND] >= int(P[P_PAYBACK]):
        # an asset that pays, and moves no ppm
        slot = cheapest_slot(R, V, NEUTRAL, NO_RESERVE, PAYING)
    return slot


@shared
def accuse(R, V, P, seed, game):
    if gap(R, V, P) > 0:
        return most_by(R, V, L.V_OPEN_BURN_TOTAL, 1)
    return most_by(R, V, L.V_OPEN_COOL_TOTAL, 1)


@shared
def cornered(R, V, P, seed, game):
    return 1


BOT = BotSpec(
    name="opportunist",
    summary="Opportunist: steers the projected Dial into Severe",
    params=PARAMS,
    commit=commit,
    fog_request=fog_request,
    market=market,
    accuse=accuse,
    cornered=cornered,
)
