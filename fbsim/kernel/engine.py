"""The numba kernel: full games over flat int64 state, step for step as the reference engine.

Each function mirrors the reference engine's function of the same name
(`fbsim/reference/engine.py`) and cites the same rules; the property tests check that both
give the same record for every game. No Python objects below `run_chunk`, and nothing
allocated in compiled code (`scratch` allocates a chunk's buffers before it is played).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fbsim.game import layout as L
from fbsim.game import shape
from fbsim.game.jit import shared_inline
from fbsim.game.legal import accusable, can_buy, can_buy_any, commit_is_legal
from fbsim.game.public import asset_field, band_of, flips, owned
from fbsim.game.record import (
    G_BAND,
    G_PLAYERS,
    G_ROUNDS_PLAYED,
    G_TOKENS_FLIPPED,
    RD_DIAL_BY_ROUND,
    SK_ASSETS,
)
from fbsim.game.rng import shuffle_in_place
from fbsim.kernel import dispatch
from fbsim.kernel.buildtype import checked, rules_of, tape_of
from fbsim.kernel.layout import (
    ERR_ACCUSE,
    ERR_COMMIT,
    ERR_CORNERED,
    ERR_FOG,
    ERR_MARKET,
    GAME_SOURCES,
    S_ACCUSERS,
    S_BOT,
    S_BURN_OPEN_T,
    S_COOL_OPEN_T,
    S_DECK_LEN,
    S_DECK_POS,
    S_DIAL_ROUND,
    S_END,
    S_ENTRY,
    S_ERROR,
    S_INCOME,
    S_LEGACY,
    S_OVER,
    S_POINTED,
    S_POT_LOST,
    S_REQUEST,
    S_REVEALED,
    S_WEIGHT,
    S_WINNER,
    S_WORKS_T,
    SEAT_SOURCES,
    W_SIZE,
)

# the build (its bots, checks, mode and shape) is the type of the token the entry points take
# and of the tape T the steps pass on (`fbsim.kernel.buildtype`). `checked(T)` is a constant
# of the build: a checked build checks every bot decision (R-C1..R-C3, R-V5, R-V6, R-A1,
# R-A4), a fast build none.

# the step functions never allocate (see fbsim.game.jit.shared): no reference counting
jit = njit(cache=True, nogil=True, _nrt=False)

@shared_inline
def fail(W, code, r, s):
    if W[S_ERROR] == 0:
        W[S_ERROR] = code * 1000 + r * 10 + s
    W[S_OVER] = 1


@shared_inline
def seat_at(first, i, n):
    """The seat `i` places clockwise from seat `first` (0 <= first < n, 0 <= i < n), without
    a division."""
    s = first + i
    return s - n if s >= n else s


@shared_inline
def is_rev_accel(W, s):
    # (without a branch: asked of every seat at every payment)
    return (W[S_REVEALED + s] == 1) & (W[L.V_MY_AGENDA + s] == L.ACCELERATIONIST)


@shared_inline
def ask(W, s, decision):
    """Seat s is asked `decision`: its view is the view section of W (R-I1, and its own slot
    of each private field, R-I2, which the bot reads by its seat: `fbsim.game.public.mine`);
    nothing is copied."""
    W[L.V_DECISION] = decision
    W[L.V_SEAT] = s


# --------------------------------------------------------------------------- setup


@jit
def setup(R, bot_of_agenda, seat_bot, seed, game, W, deck, agenda_deck):
    """R-S1..R-S5 (and the deal of R-S4 and shuffle of R-S5), into a zeroed W."""
    W[:] = 0
    n = shape.players(R)
    # R-S4: shuffle the agenda deck, card s to seat s
    m = 0
    for a in range(L.N_AGENDAS):
        for _ in range(R[L.R_DECK + a]):
            agenda_deck[m] = a
            m += 1
    shuffle_in_place(agenda_deck[:m], seed, game, L.PURPOSE_AGENDA_DEAL)
    # R-S5: the asset deck
    m = 0
    for k in range(shape.n_kinds(R)):
        for _ in range(asset_field(R, k, L.A_COUNT)):
            deck[m] = k
            m += 1
    shuffle_in_place(deck[:m], seed, game, L.PURPOSE_ASSET_SHUFFLE)
    size = shape.market_size(R)
    for i in range(L.MAX_MARKET):
        W[L.V_MARKET + i] = deck[i] if i < size else -1
    W[S_DECK_POS] = size
    W[S_DECK_LEN] = m
    W[L.V_DECK_LEFT] = m - size
    W[L.V_DIAL] = R[L.R_DIAL_START]  # R-S1
    for t in range(shape.n_tokens(R)):
        W[L.V_FLIPPED + t] = R[L.R_TOKEN_START_FLIPPED + t]
    W[L.V_WORLD_PROJECTION] = L.STALE
    first = R[L.R_FIRST_PLAYER]  # D9
    W[L.V_FIRST_PLAYER] = first
    W[L.V_SEAT] = -1
    for s in range(n):
        W[L.V_REVEALED_AGENDA + s] = -1
        a = agenda_deck[s]
        W[L.V_MY_AGENDA + s] = a
        W[S_BOT + s] = seat_bot[s] if seat_bot[s] >= 0 else bot_of_agenda[a]
        W[S_ENTRY + s] = L.N_AGENDAS + s if seat_bot[s] >= 0 else a
        W[L.V_MY_MASKS + s] = R[L.R_MASKS]
        W[L.V_MY_MEMO + s] = L.NO_MEMO  # kept by the seat's bot from its first decision
    for place in range(n):
        s = seat_at(first, place, n)
        W[L.V_MY_CAPITAL + s] = R[L.R_CAPITAL] + place * R[L.R_STAGGER]  # R-S2, R-S3


# --------------------------------------------------------------------------- the round


@shared_inline
def pay_income(R, W, n):
    """R-W1 (S_INCOME holds each seat's income, kept up to date at every purchase)."""
    for s in range(n):
        W[L.V_MY_CAPITAL + s] += W[S_INCOME + s]


@shared_inline
def apply_floor(R, W):
    """D4."""
    if R[L.R_FLOOR_ENABLED] == 1 and W[L.V_DIAL] < R[L.R_FLOOR]:
        W[L.V_DIAL] = R[L.R_FLOOR]


@shared_inline
def flip_tokens(R, W):
    """R-W3: flip every unflipped token whose threshold is reached (or crossed, by
    `tipping.flip_when`); never unflip."""
    dial = W[L.V_DIAL]
    for t in range(shape.n_tokens(R)):  # without a branch: which tokens flip depends on the game
        W[L.V_FLIPPED + t] |= 1 if flips(R, dial, R[L.R_TOKEN_THRESHOLD + t]) else 0


@jit
def world_turn(R, W, n, r):
    """R-W1..R-W4."""
    income_first = R[L.R_INCOME_BEFORE_COLLAPSE] == 1
    if income_first:
        pay_income(R, W, n)
    delta = R[L.R_BASELINE + r - 1] + R[L.R_BASELINE_OFFSET]  # R-W2, D1
    flipped = 0
    for t in range(shape.n_tokens(R)):
        flipped += W[L.V_FLIPPED + t]
    delta += flipped * R[L.R_TOKEN_PENALTY]
    delta += W[L.V_TABLE_PPM]  # every owned asset's ppm, kept up to date at purchases
    W[L.V_DIAL] += delta
    apply_floor(R, W)
    flip_tokens(R, W)
    W[L.V_WORLD_PROJECTION] = L.STALE
    if W[L.V_DIAL] >= R[L.R_COLLAPSE]:  # R-W4
        W[S_OVER] = 1
        W[S_END] = L.END_COLLAPSE_WORLD
        return
    if not income_first:
        pay_income(R, W, n)


@shared_inline
def burn_pay(R, W, s):
    return R[L.R_BURN_PAY_REVEALED] if is_rev_accel(W, s) else R[L.R_BURN_PAY]


@shared_inline
def ask_commit(R, P, W, s, r, seed, game, T):
    """Seat s's commitment (R-C1..R-C3), asked and written into its round fields; False
    when a checked build finds it illegal (the game then stops with the error)."""
    ask(W, s, L.DP_COMMIT)
    V = W[:L.V_SIZE]  # what the bots are handed: the view section
    bot = W[S_BOT + s]
    works, cool, burn, mc, mb = dispatch.commit(bot, R, V, P[W[S_ENTRY + s]], seed, game, T)
    if checked(T) and not commit_is_legal(R, W, works, cool, burn, mc, mb):
        fail(W, ERR_COMMIT, r, s)
        return False
    set_commit(W, s, works, cool, burn, mc, mb)
    return True


@shared_inline
def set_commit(W, s, works, cool, burn, mc, mb):
    W[L.V_MY_WORKS + s] = works
    W[L.V_MY_COOL + s] = cool
    W[L.V_MY_BURN + s] = burn
    W[L.V_MY_MASKED_COOL + s] = mc
    W[L.V_MY_MASKED_BURN + s] = mb


@shared_inline
def book_commits(W, n):
    """Every seat's commitment made (R-C2: its Masks spent), into the game's totals."""
    for s in range(n):
        masked = W[L.V_MY_MASKED_COOL + s] + W[L.V_MY_MASKED_BURN + s]
        W[L.V_MY_MASKS + s] -= masked  # R-C2
        W[S_WORKS_T + s] += W[L.V_MY_WORKS + s]
        W[S_COOL_OPEN_T + s] += W[L.V_MY_COOL + s] - W[L.V_MY_MASKED_COOL + s]
        W[L.V_MY_MASKED_COOL_TOTAL + s] += W[L.V_MY_MASKED_COOL + s]
        W[S_BURN_OPEN_T + s] += W[L.V_MY_BURN + s] - W[L.V_MY_MASKED_BURN + s]
        W[L.V_MY_MASKED_BURN_TOTAL + s] += W[L.V_MY_MASKED_BURN + s]
        W[L.V_MY_FREE_WORKS + s] = W[L.V_MY_WORKS + s]
        W[L.V_MY_BOUGHT + s] = 0
        W[L.V_MY_FOG_IN_ROUND + s] = 0


@jit
def commit(R, P, W, n, r, seed, game, T):
    """R-C1..R-C4: the public view does not change while commitments are made."""
    for s in range(n):
        if not ask_commit(R, P, W, s, r, seed, game, T):
            return
    book_commits(W, n)


@jit
def reveal(R, W, n):
    """R-V1 + R-V2."""
    fog_cool = 0
    fog_burn = 0
    all_cool = 0
    all_burn = 0
    for s in range(n):
        oc = W[L.V_MY_COOL + s] - W[L.V_MY_MASKED_COOL + s]
        ob = W[L.V_MY_BURN + s] - W[L.V_MY_MASKED_BURN + s]
        W[L.V_LAST_OPEN_WORKS + s] = W[L.V_MY_WORKS + s]
        W[L.V_LAST_OPEN_COOL + s] = oc
        W[L.V_LAST_OPEN_BURN + s] = ob
        W[L.V_OPEN_WORKS_TOTAL + s] += W[L.V_MY_WORKS + s]
        W[L.V_OPEN_COOL_TOTAL + s] += oc
        W[L.V_OPEN_BURN_TOTAL + s] += ob
        fog_cool += W[L.V_MY_MASKED_COOL + s]
        fog_burn += W[L.V_MY_MASKED_BURN + s]
        all_cool += W[L.V_MY_COOL + s]
        all_burn += W[L.V_MY_BURN + s]
    W[L.V_LAST_FOG_COOL] = fog_cool
    W[L.V_LAST_FOG_BURN] = fog_burn
    W[L.V_FOG_COOL_TOTAL] += fog_cool
    W[L.V_FOG_BURN_TOTAL] += fog_burn
    W[L.V_REVEALS] += 1
    W[L.V_DIAL] += all_burn * R[L.R_BURN_PPM] - all_cool * R[L.R_COOL_PPM]
    apply_floor(R, W)
    flip_tokens(R, W)
    W[L.V_WORLD_PROJECTION] = L.STALE
    if W[L.V_DIAL] >= R[L.R_COLLAPSE]:
        W[S_OVER] = 1
        W[S_END] = L.END_COLLAPSE_REVEAL


@jit
def pay_burns_and_cools(R, W, n):
    """R-V3 then R-V4."""
    for s in range(n):
        ob = W[L.V_MY_BURN + s] - W[L.V_MY_MASKED_BURN + s]
        W[L.V_MY_CAPITAL + s] += ob * burn_pay(R, W, s)
        to_pot = W[L.V_MY_MASKED_BURN + s] * R[L.R_FOG_PER_MASKED_BURN]
        W[L.V_MY_FOG_IN_TOTAL + s] += to_pot
        W[L.V_MY_FOG_IN_ROUND + s] = to_pot
        W[L.V_POT] += to_pot
    for s in range(n):
        W[L.V_MY_CAPITAL + s] -= W[L.V_MY_COOL + s] * R[L.R_COOL_COST]


@jit
def fog_claims(R, P, W, n, r, seed, game, T):
    """R-V5 + D5 + D6."""
    V = W[:L.V_SIZE]  # what the bots are handed: the view section
    for s in range(n):
        ask(W, s, L.DP_FOG)
        bot = W[S_BOT + s]
        req = dispatch.fog_request(bot, R, V, P[W[S_ENTRY + s]], seed, game, T)
        if checked(T) and req < 0:
            fail(W, ERR_FOG, r, s)
            return
        W[S_REQUEST + s] = req
    first = W[L.V_FIRST_PLAYER]
    for i in range(n):
        s = seat_at(first, i, n)
        req = W[S_REQUEST + s]
        pot = W[L.V_POT]
        got = req if req < pot else pot
        if got < req and R[L.R_FOG_PARTIAL_FILL] == 0:
            got = 0
        W[L.V_MY_REQUESTED_TOTAL + s] += req
        W[L.V_MY_RECEIVED_TOTAL + s] += got
        W[L.V_MY_CAPITAL + s] += got
        W[L.V_POT] = pot - got
    if R[L.R_FOG_CARRY_OVER] == 0:
        W[L.V_POT] = 0


@jit
def market_turns(R, P, W, n, r, seed, game, deck, T):
    """R-V6."""
    V = W[:L.V_SIZE]  # what the bots are handed: the view section
    labour = R[L.R_PURCHASE_LABOUR]
    first = W[L.V_FIRST_PLAYER]
    for i in range(n):
        s = seat_at(first, i, n)
        bot = W[S_BOT + s]
        while True:
            ask(W, s, L.DP_MARKET)
            # an unchecked build does not ask a seat that can buy nothing: its only legal
            # answer is -1 (a checked build asks, and checks the answer)
            if not checked(T) and not can_buy_any(R, W):
                break
            slot = dispatch.market(bot, R, V, P[W[S_ENTRY + s]], seed, game, T)
            if slot == -1:
                break
            if checked(T) and not can_buy(R, W, slot):
                fail(W, ERR_MARKET, r, s)
                return
            kind = W[L.V_MARKET + slot]
            price = asset_field(R, kind, L.A_PRICE)
            W[L.V_MY_FREE_WORKS + s] -= labour
            W[L.V_MY_BOUGHT + s] += 1
            W[L.owned_at(s, kind)] += 1
            ppm = asset_field(R, kind, L.A_PPM)
            W[L.V_TABLE_PPM] += ppm
            W[S_INCOME + s] += asset_field(R, kind, L.A_INCOME)
            W[L.V_MY_CAPITAL + s] -= price
            pos = W[S_DECK_POS]
            if pos < W[S_DECK_LEN]:
                W[L.V_MARKET + slot] = deck[pos]
                W[S_DECK_POS] = pos + 1
            else:
                W[L.V_MARKET + slot] = -1
            W[L.V_DECK_LEFT] = W[S_DECK_LEN] - W[S_DECK_POS]
            if ppm != 0:  # of what the projection reads, a purchase changes only the ppm
                W[L.V_WORLD_PROJECTION] = L.STALE
        W[L.V_MY_CAPITAL + s] += W[L.V_MY_FREE_WORKS + s] * R[L.R_WAGE]
        W[L.V_MY_FREE_WORKS + s] = 0


@shared_inline
def point_weight(R, W, s):
    """R-A2 + D7."""
    best = R[L.R_POINT_WEIGHT]
    stacked = 0
    for k in range(shape.n_kinds(R)):
        count = owned(W, s, k)
        w = asset_field(R, k, L.A_ACCUSATION_WEIGHT)
        if count > 0 and w > 0:
            if w > best:
                best = w
            stacked += count * w
    if R[L.R_MEDIA_STACKS] == 1 and stacked > 0:
        return stacked
    return best


@jit
def accusation(R, P, W, n, r, seed, game, T):
    """R-A1..R-A5."""
    V = W[:L.V_SIZE]  # what the bots are handed: the view section
    for s in range(n):
        ask(W, s, L.DP_ACCUSE)
        for t in range(n):
            # R-A1/R-A5 (V_REVEALED_AGENDA is -1 while hidden)
            ok = (t != s) & accusable(R, W[L.V_REVEALED_AGENDA + t])  # (without a branch)
            W[L.V_ELIGIBLE + t] = 1 if ok else 0
        bot = W[S_BOT + s]
        t = dispatch.accuse(bot, R, V, P[W[S_ENTRY + s]], seed, game, T)
        if checked(T) and t != -1 and (t < 0 or t >= n or W[L.V_ELIGIBLE + t] == 0):
            fail(W, ERR_ACCUSE, r, s)
            return
        W[S_REQUEST + s] = t
    for t in range(L.MAX_PLAYERS):
        W[L.V_ELIGIBLE + t] = 0
        W[S_WEIGHT + t] = 0
        W[S_ACCUSERS + t] = 0
    for s in range(n):
        t = W[S_REQUEST + s]
        if t >= 0:
            W[S_WEIGHT + t] += point_weight(R, W, s)
            W[S_ACCUSERS + t] += 1
            W[L.points_at(s, t)] += 1
            W[S_POINTED + t] += 1
    top = 0
    leaders = 0
    c = -1
    for t in range(n):
        w = W[S_WEIGHT + t]
        if w > top:
            top = w
            leaders = 1
            c = t
        elif w == top:
            leaders += 1
    if top <= 0 or leaders != 1:  # R-A3
        return
    W[L.V_CORNERED_TOTAL + c] += 1
    cost = W[S_ACCUSERS + c] * R[L.R_PAY_PER_ACCUSER]
    if W[L.V_MY_CAPITAL + c] < cost:
        choice = 1  # R-A4: must reveal
    else:
        ask(W, c, L.DP_CORNERED)
        W[L.V_ACCUSERS] = W[S_ACCUSERS + c]
        W[L.V_CORNER_COST] = cost
        bot = W[S_BOT + c]
        choice = dispatch.cornered(bot, R, V, P[W[S_ENTRY + c]], seed, game, T)
        W[L.V_ACCUSERS] = 0
        W[L.V_CORNER_COST] = 0
        if checked(T) and choice != 0 and choice != 1:
            fail(W, ERR_CORNERED, r, c)
            return
    if choice == 1:
        W[S_REVEALED + c] = 1
        W[L.V_REVEALED_AGENDA + c] = W[L.V_MY_AGENDA + c]
    else:
        W[L.V_PAID_TOTAL + c] += 1
        pay = R[L.R_PAY_PER_ACCUSER]
        for s in range(n):
            if W[S_REQUEST + s] == c:
                W[L.V_MY_CAPITAL + c] -= pay
                W[L.V_MY_CAPITAL + s] += pay


@shared_inline
def end_round(W, n):
    for f in L.ROUND_PRIVATE:  # no commitment yet in the next round (the view's 0)
        for s in range(n):
            W[f + s] = 0
    W[L.V_FIRST_PLAYER] = seat_at(W[L.V_FIRST_PLAYER], 1, n)


# --------------------------------------------------------------------------- scoring


@shared_inline
def agenda_bonus(R, W, agenda, band, dial, s):
    """R-X1."""
    if agenda == L.STEWARD:
        if band != L.WARMING:
            return 0
        steps = (R[L.R_SEVERE] - dial) // R[L.R_STEWARD_STEP]
        return R[L.R_STEWARD_BASE] + R[L.R_STEWARD_PER_STEP] * steps
    if agenda == L.OPPORTUNIST:
        return R[L.R_OPPORTUNIST_SEVERE] if band == L.SEVERE else 0
    if band == L.EXTREME:
        heat = 0  # assets with positive ppm
        for k in range(shape.n_kinds(R)):
            if asset_field(R, k, L.A_PPM) > 0:
                if R[L.R_ACCEL_HEAT_OWN_ONLY] == 1:
                    heat += owned(W, s, k)
                else:  # every one owned at the table counts
                    for o in range(shape.players(R)):
                        heat += owned(W, o, k)
        return R[L.R_ACCEL_EXTREME] + R[L.R_ACCEL_PER_HEAT_ASSET] * heat
    return R[L.R_ACCEL_OTHER]


@jit
def score(R, W, n):
    """R-E3 or R-E4, tie-breaks by D8."""
    dial = W[L.V_DIAL]
    band = band_of(R, dial)
    mode = R[L.R_TIEBREAK_FIRST_PLAYER]
    if mode == L.TIEBREAK_ROUND_1:
        start = R[L.R_FIRST_PLAYER]
    elif mode == L.TIEBREAK_AFTER_ROTATION:  # the marker passed on once more at the end
        start = seat_at(W[L.V_FIRST_PLAYER], 1, n)
    else:  # TIEBREAK_LAST_ROUND
        start = W[L.V_FIRST_PLAYER]
    winner = -1
    if band == L.COLLAPSE:
        best_cap = -1
        best_bunk = -1
        for i in range(n):
            s = seat_at(start, i, n)
            cap = W[L.V_MY_CAPITAL + s]
            accel = W[L.V_MY_AGENDA + s] == L.ACCELERATIONIST
            if not accel or cap < R[L.R_COLLAPSE_MIN_CAPITAL]:
                continue
            bunk = 0
            for k in range(shape.n_kinds(R)):
                if asset_field(R, k, L.A_COLLAPSE_TIEBREAK) == 1:
                    bunk += owned(W, s, k)
            if cap > best_cap or (cap == best_cap and bunk > best_bunk):
                best_cap = cap
                best_bunk = bunk
                winner = s
    else:
        if band == L.WARMING:
            f = L.A_LEGACY_WARMING
        elif band == L.SEVERE:
            f = L.A_LEGACY_SEVERE
        else:
            f = L.A_LEGACY_EXTREME
        for s in range(n):
            leg = W[L.V_MY_CAPITAL + s] // R[L.R_CAPITAL_PER_LEGACY]
            for k in range(shape.n_kinds(R)):
                leg += owned(W, s, k) * asset_field(R, k, f)
            leg += (W[S_COOL_OPEN_T + s] + W[L.V_MY_MASKED_COOL_TOTAL + s]
                    - W[S_BURN_OPEN_T + s] - W[L.V_MY_MASKED_BURN_TOTAL + s])
            leg += agenda_bonus(R, W, W[L.V_MY_AGENDA + s], band, dial, s)
            W[S_LEGACY + s] = leg
        best_leg = 0
        best_cool = 0
        for i in range(n):
            s = seat_at(start, i, n)
            leg = W[S_LEGACY + s]
            cool = W[S_COOL_OPEN_T + s] + W[L.V_MY_MASKED_COOL_TOTAL + s]
            if winner < 0 or leg > best_leg or (leg == best_leg and cool > best_cool):
                winner = s
                best_leg = leg
                best_cool = cool
    W[S_WINNER] = winner
    W[S_POT_LOST] = W[L.V_POT]


# --------------------------------------------------------------------------- the game


# The play of one round, in order, by index (the reference engine's steps of the same names,
# fbsim.reference.engine.ROUND_STEPS). The game ends as soon as a step ends it (R-W4; R-V2:
# Collapse at the reveal stops every payment).
ROUND_STEPS = ("world", "commit", "reveal", "payments", "fog", "market", "accusation")
STEP_WORLD = ROUND_STEPS.index("world")  # R-W1..R-W4
STEP_COMMIT = ROUND_STEPS.index("commit")  # R-C1..R-C4
STEP_REVEAL = ROUND_STEPS.index("reveal")  # R-V1, R-V2
STEP_PAYMENTS = ROUND_STEPS.index("payments")  # R-V3, R-V4
STEP_FOG = ROUND_STEPS.index("fog")  # R-V5, D5, D6
STEP_MARKET = ROUND_STEPS.index("market")  # R-V6
STEP_ACCUSATION = ROUND_STEPS.index("accusation")  # R-A1..R-A5
N_ROUND_STEPS = len(ROUND_STEPS)


@shared_inline  # a switch: inlined into play_round (fbsim.game.jit.shared_inline)
def round_step(k, R, P, W, n, r, seed, game, deck, T):
    """Step k of ROUND_STEPS in round r."""
    if k == STEP_WORLD:
        world_turn(R, W, n, r)
    elif k == STEP_COMMIT:
        commit(R, P, W, n, r, seed, game, T)
    elif k == STEP_REVEAL:
        reveal(R, W, n)
    elif k == STEP_PAYMENTS:
        pay_burns_and_cools(R, W, n)
    elif k == STEP_FOG:
        fog_claims(R, P, W, n, r, seed, game, T)
    elif k == STEP_MARKET:
        market_turns(R, P, W, n, r, seed, game, deck, T)
    elif k == STEP_ACCUSATION:
        if R[L.R_ACCUSE_AFTER + r - 1] == 1:
            accusation(R, P, W, n, r, seed, game, T)


@shared_inline  # inlined into the game loop of run_chunk, which then counts no references
def play_round(R, P, W, n, r, seed, game, deck, T):
    """One round's play: the steps of ROUND_STEPS in order, until one ends the game."""
    W[L.V_ROUND] = r
    for k in range(N_ROUND_STEPS):
        round_step(k, R, P, W, n, r, seed, game, deck, T)
        if W[S_OVER] == 1:
            return


@shared_inline
def close_round(R, W, n, r):
    """The Dial as the round ended; the first player of the next round, if any (R-S6)."""
    W[S_DIAL_ROUND + r - 1] = W[L.V_DIAL]
    if r < shape.rounds(R):
        end_round(W, n)


@shared_inline
def play_rounds(R, P, W, n, first, seed, game, deck, T):
    """Rounds first.. (R-S6, R-E1) until the game ends, then the score (R-E3, R-E4); the
    last round played."""
    rounds = shape.rounds(R)
    r = first
    for r in range(first, rounds + 1):
        play_round(R, P, W, n, r, seed, game, deck, T)
        if W[S_OVER] == 1:
            break
        close_round(R, W, n, r)
    return finish(R, W, n, min(r, rounds))


@shared_inline
def finish(R, W, n, r):
    """The game over in round r: its final Dial for rounds r.. (as the reference), the
    score."""
    for rr in range(r, shape.rounds(R) + 1):
        W[S_DIAL_ROUND + rr - 1] = W[L.V_DIAL]
    if W[S_ERROR] == 0:
        score(R, W, n)
    return r


@shared_inline
def play_game(R, P, bot_of_agenda, seat_bot, seed, game, W, deck, agenda_deck, T):
    """Setup, then every round."""
    setup(R, bot_of_agenda, seat_bot, seed, game, W, deck, agenda_deck)
    return play_rounds(R, P, W, shape.players(R), 1, seed, game, deck, T)


@shared_inline
def play_from(R, P, W, n, r0, k0, seed, game, deck, T):
    """The game on from step k0 of round r0 (`ROUND_STEPS`; k0 = N_ROUND_STEPS: the round's
    close) of a state row W and its asset deck, to its end and score. Returns the last round
    played. A game continued from any step is the game played straight through
    (tests/test_kernel_continue.py)."""
    W[L.V_ROUND] = r0
    for k in range(k0, N_ROUND_STEPS):  # the rest of round r0
        round_step(k, R, P, W, n, r0, seed, game, deck, T)
        if W[S_OVER] == 1:
            return finish(R, W, n, r0)
    close_round(R, W, n, r0)
    if r0 >= shape.rounds(R):
        return finish(R, W, n, r0)
    return play_rounds(R, P, W, n, r0 + 1, seed, game, deck, T)


@jit
def continue_game(R, P, W, n, r0, k0, seed, game, deck, T):
    """`play_from`, called (not inlined): what the searcher's rollouts play
    (`fbsim.kernel.rollout`), one compiled copy of the game for all of them."""
    return play_from(R, P, W, n, r0, k0, seed, game, deck, T)


@jit
def setup_game(rules, bot_of_agenda, seat_bot, seed, game, W, deck, agenda_deck, token):
    """`setup` as `run_chunk` plays it in the build of `token` (the rules read as it reads
    them): the step-by-step comparison's entry (`fbsim.kernel.lockstep`)."""
    setup(rules_of(rules, token), bot_of_agenda, seat_bot, seed, game, W, deck, agenda_deck)


@jit
def play_step(k, rules, P, W, r, seed, game, deck, tape, token):
    """Step k of ROUND_STEPS in round r, or the round's close (k = N_ROUND_STEPS), as
    `run_chunk` plays it in the build of `token`: the step-by-step comparison's entry
    (`fbsim.kernel.lockstep`)."""
    R = rules_of(rules, token)
    T = tape_of(tape, token)
    n = shape.players(R)
    W[L.V_ROUND] = r
    if k == N_ROUND_STEPS:
        close_round(R, W, n, r)
    else:
        round_step(k, R, P, W, n, r, seed, game, deck, T)


@jit
def continue_entry(k, rules, P, W, r, seed, game, deck, tape, token):
    """The game on from step k of round r (`play_from`) as the build of `token` plays it;
    returns the last round played (what `write_record` takes)."""
    R = rules_of(rules, token)
    return continue_game(R, P, W, shape.players(R), r, k, seed, game, deck,
                         tape_of(tape, token))


@jit
def write_record(j, r, R, W, G, SE, AS, DR):
    """Game j's record (fields in `fbsim.game.record`) into row j of the output arrays."""
    n = shape.players(R)
    for rr in range(shape.rounds(R)):
        DR[j, RD_DIAL_BY_ROUND, rr] = W[S_DIAL_ROUND + rr]
    flipped = 0
    for t in range(shape.n_tokens(R)):
        flipped += W[L.V_FLIPPED + t]
    G[j, G_PLAYERS] = n
    G[j, G_ROUNDS_PLAYED] = r
    G[j, G_BAND] = band_of(R, W[L.V_DIAL])
    G[j, G_TOKENS_FLIPPED] = flipped
    for c, w in GAME_SOURCES:
        G[j, c] = W[w]
    for s in range(n):
        for f in range(len(SEAT_SOURCES)):  # (S_LEGACY: 0 unless the world survived)
            SE[j, f, s] = W[SEAT_SOURCES[f] + s]
        for k in range(shape.n_kinds(R)):
            AS[j, SK_ASSETS, s, k] = owned(W, s, k)


@shared_inline
def scratch_sizes(R):
    """Lengths of the per-chunk asset deck and agenda deck buffers."""
    deck_total = 0
    for k in range(shape.n_kinds(R)):
        deck_total += asset_field(R, k, L.A_COUNT)
    agenda_total = 0
    for a in range(L.N_AGENDAS):
        agenda_total += R[L.R_DECK + a]
    return max(deck_total, L.MAX_MARKET), agenda_total


@jit
def run_chunk(rules, P, bot_of_agenda, seat_bot, seed, first_game, lo, hi, G, SE, AS, DR, TAPES,
              W, deck, agenda_deck, token):
    """Play games first_game + lo .. first_game + hi - 1; game j's record goes to row j of G,
    SE, AS and DR (`write_record`). Every game's result depends only on (rules, lineup, seed,
    game index), never on the chunking or the threads (`fbsim.kernel.build.Build.run` runs
    chunks on a pool of threads; this never takes the GIL). TAPES: one row per game, the
    decisions' tape of a recording or replaying build (`fbsim.kernel.build`); a playing build
    is given one row that it never reads. W, deck and agenda_deck: the chunk's state row and
    deck buffers (`scratch`), reused by every game; nothing is allocated here. `rules`: the
    rules vector (of the build's shape, in a build for one shape); `token`: the build
    (`fbsim.kernel.buildtype`)."""
    R = rules_of(rules, token)
    per_game = TAPES.shape[0] == G.shape[0]
    for j in range(lo, hi):
        T = tape_of(TAPES[j] if per_game else TAPES[0], token)
        T[0] = 0  # the tape's cursor
        r = play_game(R, P, bot_of_agenda, seat_bot, seed, first_game + j, W, deck,
                      agenda_deck, T)
        write_record(j, r, R, W, G, SE, AS, DR)


def scratch(R):
    """A chunk's state row and deck buffers (`run_chunk`), for rules vector R."""
    sizes = getattr(scratch_sizes, "py_func", scratch_sizes)  # plain Python with the JIT off
    deck_total, agenda_total = sizes(R)
    return (np.zeros(W_SIZE, dtype=np.int64), np.zeros(deck_total, dtype=np.int64),
            np.zeros(agenda_total, dtype=np.int64))
