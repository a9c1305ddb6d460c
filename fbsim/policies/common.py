"""What bots share: reading the rules and view vectors, projecting the Dial, legal moves.

Every function here is `shared` (compiled by numba, also valid plain Python) and reads only
the rules vector R and the deciding player's view V.
"""

from __future__ import annotations

from fbsim import layout as L
from fbsim.jit import shared
from fbsim.rng import below


@shared
def asset_field(R, kind, f):
    return R[L.R_ASSET + kind * L.ASSET_STRIDE + f]


@shared
def owned(V, seat, kind):
    return V[L.V_OWNED + seat * L.MAX_KINDS + kind]


@shared
def my_burn_pay(R, V):
    """R-V3/R-A5: what one open BURN pays the deciding player."""
    if V[L.V_REVEALED_AGENDA + V[L.V_SEAT]] == L.ACCELERATIONIST:
        return R[L.R_BURN_PAY_REVEALED]
    return R[L.R_BURN_PAY]


@shared
def commit_is_legal(R, V, works, cool, burn, mcool, mburn):
    """R-C1..R-C3 for the deciding player."""
    if works < 0 or cool < 0 or burn < 0 or works + cool + burn != R[L.R_AGENTS]:
        return False  # R-C1
    if mcool < 0 or mburn < 0 or mcool > cool or mburn > burn:
        return False  # R-C2
    if mcool + mburn > V[L.V_MY_MASKS]:
        return False  # R-C2
    open_burn = burn - mburn
    # R-C3: cooling is charged from Capital now plus open-burn pay only
    return cool * R[L.R_COOL_COST] <= V[L.V_MY_CAPITAL] + open_burn * my_burn_pay(R, V)


@shared
def can_buy(R, V, slot):
    """R-V6: the card in `slot` is affordable with free WORKS and Capital now."""
    if slot < 0 or slot >= R[L.R_MARKET_SIZE]:
        return False
    kind = V[L.V_MARKET + slot]
    if kind < 0:
        return False
    if V[L.V_MY_FREE_WORKS] < R[L.R_PURCHASE_LABOUR]:
        return False
    return V[L.V_MY_CAPITAL] >= asset_field(R, kind, L.A_PRICE)


@shared
def is_eligible(V, seat):
    return V[L.V_ELIGIBLE + seat] == 1


@shared
def table_asset_ppm(R, V):
    """Ongoing ppm of every owned asset at the table (R-W2), public (the view holds it as
    V_TABLE_PPM)."""
    total = 0
    for s in range(R[L.R_PLAYERS]):
        for k in range(R[L.R_N_KINDS]):
            total += owned(V, s, k) * asset_field(R, k, L.A_PPM)
    return total


@shared
def project_world(R, V):
    """The Dial after the remaining world turns if nobody commits another chip.

    Uses only public information: baselines, flipped tokens (flipping more as the
    projection crosses their thresholds, R-W3) and the ppm of owned assets.
    """
    dial = V[L.V_DIAL]
    n_tokens = R[L.R_N_TOKENS]
    flipped = 0  # bit t: token t is flipped (no allocation: this runs in the kernel's loop)
    n_flipped = 0
    for t in range(n_tokens):
        if V[L.V_FLIPPED + t] == 1:
            flipped |= 1 << t
            n_flipped += 1
    ppm = V[L.V_TABLE_PPM]
    for r in range(V[L.V_ROUND], R[L.R_ROUNDS]):  # world turns of rounds round+1 .. last
        dial += R[L.R_BASELINE + r] + R[L.R_BASELINE_OFFSET]
        dial += n_flipped * R[L.R_TOKEN_PENALTY] + ppm
        if n_flipped < n_tokens:
            for t in range(n_tokens):
                if (flipped >> t) & 1 == 0 and dial >= R[L.R_TOKEN_THRESHOLD + t]:
                    flipped |= 1 << t
                    n_flipped += 1
    return dial


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
    for i in range(n):
        s = (V[L.V_FIRST_PLAYER] + i) % n
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
