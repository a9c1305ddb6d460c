"""What bots share: heuristics over the rules vector and the deciding player's view (the
rules' own predicates are in `fbsim.game.public` and `fbsim.game.legal`).

Every function here is `shared` (compiled by numba, also valid plain Python) and reads only
the rules vector R and the deciding player's view V.
"""

from __future__ import annotations

from fbsim.game import layout as L
from fbsim.game.jit import shared
from fbsim.game.legal import can_buy, commit_is_legal, is_eligible
from fbsim.game.public import asset_field, my_burn_pay
from fbsim.game.rng import below


@shared
def others_net_per_round(R, V, prior):
    """Average net chip ppm the rest of the table added per reveal so far.

    Public totals (open chips of every seat plus the Fog pool) minus the decider's own
    chips, which it knows. `prior` is used before the first reveal.
    """
    reveals = V[L.V_REVEALS]
    if reveals == 0:
        return prior
    me = V[L.V_SEAT]
    cool = V[L.V_FOG_COOL_TOTAL]
    burn = V[L.V_FOG_BURN_TOTAL]
    for s in range(R[L.R_PLAYERS]):
        if s != me:
            cool += V[L.V_OPEN_COOL_TOTAL + s]
            burn += V[L.V_OPEN_BURN_TOTAL + s]
    cool -= V[L.V_MY_MASKED_COOL_TOTAL]
    burn -= V[L.V_MY_MASKED_BURN_TOTAL]
    net = burn * R[L.R_BURN_PPM] - cool * R[L.R_COOL_PPM]
    return net / reveals


@shared
def chip_rounds_left(R, V):
    """Commit steps left, this round's included."""
    return R[L.R_ROUNDS] - V[L.V_ROUND] + 1


@shared
def max_affordable_cool(R, V, want, open_burn):
    """The most COOL up to `want` that R-C3 allows with this many open burns."""
    cost = R[L.R_COOL_COST]
    if cost == 0:
        return want
    budget = V[L.V_MY_CAPITAL] + open_burn * my_burn_pay(R, V)
    most = budget // cost
    return want if want < most else most


@shared
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@shared
def ceil_div_pos(a, b):
    """ceil(a / b) for floats, 0 when a <= 0 or b <= 0 (a job that moves no ppm)."""
    if a <= 0 or b <= 0:
        return 0
    q = int(a / b)
    if q * b < a:
        q += 1
    return q


@shared
def most_by(R, V, base, minimum):
    """The eligible rival with the largest V[base + seat] (>= minimum); ties: earliest in
    order from the first player. -1 if none."""
    best = -1
    best_val = minimum - 1
    n = R[L.R_PLAYERS]
    s = V[L.V_FIRST_PLAYER] - 1
    for _ in range(n):
        s += 1  # clockwise from the first player, without a division
        if s == n:
            s = 0
        if s == V[L.V_SEAT] or not is_eligible(V, s):
            continue
        if V[base + s] > best_val:
            best_val = V[base + s]
            best = s
    return best


@shared
def cheapest_slot(R, V, sign, reserve, min_income):
    """The cheapest affordable market slot whose asset's ppm has this sign (-1, 0, +1) and
    whose income is at least `min_income`, keeping `reserve` Capital; -1 if none. Ties: the
    lowest slot."""
    best = -1
    best_price = 1 << 40
    for m in range(R[L.R_MARKET_SIZE]):
        if not can_buy(R, V, m):
            continue
        kind = V[L.V_MARKET + m]
        ppm = asset_field(R, kind, L.A_PPM)
        s = 1 if ppm > 0 else (-1 if ppm < 0 else 0)
        price = asset_field(R, kind, L.A_PRICE)
        if s != sign or asset_field(R, kind, L.A_INCOME) < min_income:
            continue
        if V[L.V_MY_CAPITAL] - price >= reserve and price < best_price:
            best = m
            best_price = price
    return best


@shared
def mask_split(V, burn, cool, want_mburn, want_mcool):
    """How many of this commitment to mask (R-C2): burns first, within Masks left."""
    left = V[L.V_MY_MASKS]
    mb = clamp(want_mburn, 0, burn)
    if mb > left:
        mb = left
    mc = clamp(want_mcool, 0, cool)
    if mc > left - mb:
        mc = left - mb
    return mb, mc


@shared
def uniform_legal_commit(R, V, seed, game):
    """A uniformly random legal commitment (R-C1..R-C3): count, then pick by index."""
    agents = R[L.R_AGENTS]
    masks = V[L.V_MY_MASKS]
    count = 0
    pick = 0
    for pass_no in range(2):
        if pass_no == 1:
            pick = below(count, seed, game, V[L.V_ROUND], V[L.V_SEAT], L.DP_COMMIT, 0)
            count = 0
        for cool in range(agents + 1):
            for burn in range(agents - cool + 1):
                works = agents - cool - burn
                for mc in range(min(cool, masks) + 1):
                    for mb in range(min(burn, masks - mc) + 1):
                        if commit_is_legal(R, V, works, cool, burn, mc, mb):
                            if pass_no == 1 and count == pick:
                                return works, cool, burn, mc, mb
                            count += 1
    return agents, 0, 0, 0, 0  # unreachable: all WORKS is always legal


@shared
def greedy_claim(V, greed):
    """R-V5: this round's own masked-burn money plus `greed` (0..1) of the rest of the pot."""
    pot = V[L.V_POT]
    own = V[L.V_MY_FOG_IN_ROUND]
    if own > pot:
        own = pot
    if greed < 0.0:
        greed = 0.0
    if greed > 1.0:
        greed = 1.0
    return own + int(greed * (pot - own))


@shared
def reveal_pays(R, V, burns):
    """R-A4/R-A5: whether a cornered Accelerationist burning `burns` open Agents a round
    earns more by revealing (the higher open-BURN pay over the rounds left) than silence
    costs."""
    rounds_left = R[L.R_ROUNDS] - V[L.V_ROUND]
    gain = (R[L.R_BURN_PAY_REVEALED] - R[L.R_BURN_PAY]) * burns * rounds_left
    return gain >= V[L.V_CORNER_COST]
