"""`tunable`: one bot whose numeric parameters span the behaviours of the named bots.

It steers the projected final Dial (the Steward's and Opportunist's projection: world turns to
come plus the rest of the table's average net chips) towards `aim`: it cools when the
projection runs more than `tolerance` hot and burns when it runs cold, with at most
`chips_early` steering Agents in round 1 and `chips_late` in the last round (linear between),
on top of `burn_floor` BURN Agents every round for their pay. It masks up to `mask_burns`
burns and `mask_cools` cools per round while Masks last, and claims its own masked-burn money
plus `greed` of the rest of the Fog pot. It buys assets that push the Dial its way when
`buy_steer` is on, else income assets with no ppm while `payback` world turns remain, keeping
`reserve` Capital. It points at nobody, the most open burner, the most open cooler, or by the
way the Dial runs (`accuse` 0..3); when cornered it pays, reveals, or reveals when the revealed
Accelerationist's open-BURN pay over the rounds left is worth the price (`cornered` 0..2).

Presets close to the named bots: steward (aim 504, chips 6/6, burn_floor 0, greed 0,
buy_steer 1, accuse 1, cornered 1); opportunist (aim 529.5); fog-grabber (aim 700,
burn_floor 3, mask_burns 1, greed 1, cornered 2); hoarder (chips 0/0, payback 99, accuse 0).
"""

from __future__ import annotations

from fbsim.game import layout as L
from fbsim.game import shape
from fbsim.game.jit import shared
from fbsim.game.legal import commit_is_legal
from fbsim.game.public import mine, world_projection
from fbsim.policies import BotSpec, Param, param_index
from fbsim.policies.common import (
    ANY_INCOME,
    COOLING,
    HEATING,
    NEUTRAL,
    PAYING,
    ceil_div_pos,
    cheapest_slot,
    chip_rounds_left,
    clamp,
    greedy_claim,
    mask_split,
    max_affordable_cool,
    most_by,
    others_net_per_round,
    reveal_pays,
)

PARAMS = (
    Param("aim", 529.5, "final Dial (ppm) it steers the projection towards", 300, 800),
    Param("tolerance", 4.0, "ppm off the aim it accepts without steering", 0, 100),
    Param("chips_early", 3.0, "steering COOL/BURN Agents at most in round 1", 0, 6),
    Param("chips_late", 3.0, "... in the last round (linear in between)", 0, 6),
    Param("burn_floor", 0.0, "BURN Agents every round, whatever the Dial", 0, 6),
    Param("mask_burns", 1.0, "burns masked per round while Masks last", 0, 6),
    Param("mask_cools", 0.0, "cools masked per round while Masks last", 0, 6),
    Param("greed", 0.0, "share of the rest of the Fog pot it claims (0 honest, 1 all)",
          0, 1),
    Param("buy_steer", 1.0, "1: buy assets that push the Dial its way; 0: never", 0, 1),
    Param("payback", 3.0, "world turns left it needs to buy an income asset (99: never)",
          0, 99),
    Param("reserve", 0.0, "Capital kept after a purchase", 0, 100),
    Param("accuse", 3.0, "0 nobody, 1 most open burner, 2 most open cooler, 3 by the Dial",
          0, 3),
    Param("cornered", 1.0, "0 pay, 1 reveal, 2 reveal when the Accelerationist's pay is "
          "worth it", 0, 2),
)

P_AIM = param_index(PARAMS, "aim")
P_TOLERANCE = param_index(PARAMS, "tolerance")
P_CHIPS_EARLY = param_index(PARAMS, "chips_early")
P_CHIPS_LATE = param_index(PARAMS, "chips_late")
P_BURN_FLOOR = param_index(PARAMS, "burn_floor")
P_MASK_BURNS = param_index(PARAMS, "mask_burns")
P_MASK_COOLS = param_index(PARAMS, "mask_cools")
P_GREED = param_index(PARAMS, "greed")
P_BUY_STEER = param_index(PARAMS, "buy_steer")
P_PAYBACK = param_index(PARAMS, "payback")
P_RESERVE = param_index(PARAMS, "reserve")
P_ACCUSE = param_index(PARAMS, "accuse")
P_CORNERED = param_index(PARAMS, "cornered")


@shared
def gap(R, V, P):
    """Projected final Dial minus the aim (positive: too hot)."""
    left = chip_rounds_left(R, V)
    return world_projection(R, V) + others_net_per_round(R, V, 0.0) * left - P[P_AIM]


@shared
def steering_chips(R, V, P):
    rounds = shape.rounds(R)
    frac = 1.0 if rounds <= 1 else (V[L.V_ROUND] - 1) / (rounds - 1)
    most = P[P_CHIPS_EARLY] + (P[P_CHIPS_LATE] - P[P_CHIPS_EARLY]) * frac
    return clamp(int(most + 0.5), 0, R[L.R_AGENTS])


@shared
def commit(R, V, P, seed, game):
    agents = R[L.R_AGENTS]
    left = chip_rounds_left(R, V)
    g = gap(R, V, P)
    most = steering_chips(R, V, P)
    cool = 0
    burn = clamp(int(P[P_BURN_FLOOR]), 0, agents)
    if g > P[P_TOLERANCE]:
        cool = clamp(ceil_div_pos(g, R[L.R_COOL_PPM] * left), 0, most)
    elif g < -P[P_TOLERANCE]:
        extra = clamp(ceil_div_pos(-g, R[L.R_BURN_PPM] * left), 0, most)
        if extra > burn:
            burn = extra
    if cool > agents - burn:
        cool = agents - burn
    want_mb = int(P[P_MASK_BURNS])
    want_mc = int(P[P_MASK_COOLS])
    mb, mc = mask_split(V, burn, cool, want_mb, want_mc)
    cool = max_affordable_cool(R, V, cool, burn - mb)  # R-C3
    mb, mc = mask_split(V, burn, cool, want_mb, want_mc)
    works = agents - cool - burn
    if not commit_is_legal(R, V, works, cool, burn, mc, mb):
        return agents, 0, 0, 0, 0  # all WORKS is always legal
    return works, cool, burn, mc, mb


@shared
def fog_request(R, V, P, seed, game):
    return greedy_claim(V, P[P_GREED])


@shared
def market(R, V, P, seed, game):
    if V[L.V_ROUND] >= shape.rounds(R):
        return -1
    reserve = int(P[P_RESERVE])
    slot = -1
    if P[P_BUY_STEER] > 0.5:
        g = gap(R, V, P)
        if g > P[P_TOLERANCE]:
            slot = cheapest_slot(R, V, COOLING, reserve, ANY_INCOME)
        elif g < -P[P_TOLERANCE]:
            slot = cheapest_slot(R, V, HEATING, reserve, ANY_INCOME)
    if slot < 0 and shape.rounds(R) - V[L.V_ROUND] >= int(P[P_PAYBACK]):
        slot = cheapest_slot(R, V, NEUTRAL, reserve, PAYING)
    return slot


@shared
def accuse(R, V, P, seed, game):
    rule = int(P[P_ACCUSE])
    if rule == 1:
        return most_by(R, V, L.V_OPEN_BURN_TOTAL, 1)
    if rule == 2:
        return most_by(R, V, L.V_OPEN_COOL_TOTAL, 1)
    if rule == 3:
        if gap(R, V, P) > 0:
            return most_by(R, V, L.V_OPEN_BURN_TOTAL, 1)
        return most_by(R, V, L.V_OPEN_COOL_TOTAL, 1)
    return -1


@shared
def cornered(R, V, P, seed, game):
    rule = int(P[P_CORNERED])
    if rule == 0:
        return 0
    if rule == 1 or mine(V, L.V_MY_AGENDA) != L.ACCELERATIONIST:
        return 1
    return 1 if reveal_pays(R, V, int(P[P_BURN_FLOOR])) else 0


BOT = BotSpec(
    name="tunable",
    summary="tunable: steers the projected Dial to a chosen aim; every habit a parameter",
    params=PARAMS,
    commit=commit,
    fog_request=fog_request,
    market=market,
    accuse=accuse,
    cornered=cornered,
)
