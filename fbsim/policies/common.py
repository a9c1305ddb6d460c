"""What bots share: heuristics over the rules vector and the deciding player's view (the
rules' own predicates are in `fbsim.game.public` and `fbsim.game.legal`).

Every function here is `shared` (compiled by numba, also valid plain Python) and reads only
the rules vector R and the deciding player's view V.
"""

from __future__ import annotations

import numpy as np

from fbsim.game import layout as L
from fbsim.game import shape
from fbsim.game.jit import shared
from fbsim.game.legal import can_buy, commit_is_legal, is_eligible
from fbsim.game.public import asset_field, mine, my_burn_pay
from fbsim.game.rng import below

# Arguments of the helpers below as int64 constants. numba compiles a helper called with a
# literal argument (a plain 0 or 1) once per distinct value: five copies of `cheapest_slot`
# in the default lineup's build alone, a second of a cold compile. cheapest_slot's filters:
COOLING, NEUTRAL, HEATING = np.int64(-1), np.int64(0), np.int64(1)  # the asset's ppm sign
ANY_INCOME, PAYING = np.int64(0), np.int64(1)  # the least income the asset pays
NO_RESERVE = np.int64(0)  # Capital to keep after buying
NONE = np.int64(0)  # mask_split: no chips of that kind, or no Masks wanted for them

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
    for s in range(shape.players(R)):  # every seat's open chips (a loop without a branch) ...
        cool += V[L.V_OPEN_COOL_TOTAL + s]
        burn += V[L.V_OPEN_BURN_TOTAL + s]
    # ... less the decider's own, open and masked
    cool -= V[L.V_OPEN_COOL_TOTAL + me] + mine(V, L.V_MY_MASKED_COOL_TOTAL)
    burn -= V[L.V_OPEN_BURN_TOTAL + me] + mine(V, L.V_MY_MASKED_BURN_TOTAL)
    net = burn * R[L.R_BURN_PPM] - cool * R[L.R_COOL_PPM]
    return net / reveals


@shared
def chip_rounds_left(R, V):
    """Commit steps left, this round's included."""
    return shape.rounds(R) - V[L.V_ROUND] + 1


@shared
def max_affordable_cool(R, V, want, open_burn):
    """The most COOL up to `want` that R-C3 allows with this many open burns."""
    cost = R[L.R_COOL_COST]
    if cost == 0:
        return want
    budget = mine(V, L.V_MY_CAPITAL) + open_burn * my_burn_pay(R, V)
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
def rival_in_turn(R, V, i):
    """The seat `i` places clockwise from the first player, if it is an eligible rival of
    the deciding player (R-A1); else -1."""
    n = shape.players(R)
    s = V[L.V_FIRST_PLAYER] + i
    if s >= n:  # without a division
        s -= n
    if s == V[L.V_SEAT] or not is_eligible(V, s):
        return -1
    return s


@shared
def most_by(R, V, base, minimum):
    """The eligible rival with the largest V[base + seat] (>= minimum); ties: earliest in
    order from the first player. -1 if none."""
    best = -1
    best_val = minimum - 1
    for i in range(shape.players(R)):
        s = rival_in_turn(R, V, i)
        if s >= 0 and V[base + s] > best_val:
            best_val = V[base + s]
            best = s
    return best


@shared
def price_keeping(R, V, slot, reserve):
    """The price of the card in `slot` if it can be bought now (R-V6) keeping `reserve`
    Capital, else -1."""
    if not can_buy(R, V, slot):
        return -1
    price = asset_field(R, V[L.V_MARKET + slot], L.A_PRICE)
    return price if mine(V, L.V_MY_CAPITAL) - price >= reserve else -1


NO_SLOT = 1 << 62  # cheapest_slot's key of a slot that does not qualify


@shared
def cheapest_slot(R, V, sign, reserve, min_income):
    """The cheapest affordable market slot whose asset's ppm has this sign (-1, 0, +1) and
    whose income is at least `min_income`, keeping `reserve` Capital; -1 if none. Ties: the
    lowest slot.

    Affordable as `price_keeping`: R-V6 (enough free WORKS, the price in Capital) and the
    reserve kept. Written without a branch per slot (which slots qualify changes from one
    call to the next, so a branch there is mispredicted): each slot's key is its price and
    slot number (price * 16 + slot, a price being at most the rules' 10**9 and a slot below
    MAX_MARKET), or NO_SLOT, and the least key wins."""
    if mine(V, L.V_MY_FREE_WORKS) < R[L.R_PURCHASE_LABOUR]:
        return -1
    capital = mine(V, L.V_MY_CAPITAL)
    most = capital - reserve if reserve > 0 else capital  # the most it may pay
    best = NO_SLOT
    for m in range(shape.market_size(R)):
        kind = V[L.V_MARKET + m]
        k = kind if kind >= 0 else 0  # an empty slot reads kind 0's fields, then fails `ok`
        price = asset_field(R, k, L.A_PRICE)
        ppm = asset_field(R, k, L.A_PPM)
        s = 1 if ppm > 0 else (-1 if ppm < 0 else 0)
        ok = ((kind >= 0) & (price <= most) & (s == sign)
              & (asset_field(R, k, L.A_INCOME) >= min_income))
        key = price * 16 + m if ok else NO_SLOT
        best = key if key < best else best
    return -1 if best == NO_SLOT else best & 15


@shared
def cheapest_bunker(R, V, reserve):
    """The cheapest affordable market slot holding a Collapse tie-break asset (R-E3),
    keeping `reserve` Capital; -1 if none. Ties: the lowest slot."""
    best = -1
    best_price = 1 << 40
    for m in range(shape.market_size(R)):
        price = price_keeping(R, V, m, reserve)
        if price < 0 or price >= best_price:
            continue
        if asset_field(R, V[L.V_MARKET + m], L.A_COLLAPSE_TIEBREAK) == 1:
            best = m
            best_price = price
    return best


@shared
def mask_split(V, burn, cool, want_mburn, want_mcool):
    """How many of this commitment to mask (R-C2): burns first, within Masks left."""
    left = mine(V, L.V_MY_MASKS)
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
    masks = mine(V, L.V_MY_MASKS)
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
    own = mine(V, L.V_MY_FOG_IN_ROUND)
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
    rounds_left = shape.rounds(R) - V[L.V_ROUND]
    gain = (R[L.R_BURN_PAY_REVEALED] - R[L.R_BURN_PAY]) * burns * rounds_left
    return gain >= V[L.V_CORNER_COST]
