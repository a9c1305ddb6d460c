"""The searcher: one seat that decides its commitments by rollouts on the fast kernel.

One seat (`me`) plays the field's bot for its Agenda, except at each commitment (R-C1..R-C3)
of a round it searches: it scores its candidates (the field's own choice first, then open
splits of COOL and BURN on a grid, `K_STEP`; optionally with its BURNs masked, `K_MASKED`)
by `K_ROLLOUTS` rollouts each, the rest of the game played by the field from a copy of the
game (`fbsim.kernel.engine.continue_game`), and departs from the field's choice only when the
best candidate wins more often by a paired z above `K_MARGIN` (one step of policy
improvement over the field; common random numbers: every candidate meets the same sampled
worlds). Its other decisions (Fog, market, Accusations) stay the field's.

It decides only from its own view (R-I3). Before each rollout it samples what it cannot see,
from the public record and its own private fields alone (`sample_world`):

- rivals' Agendas: from the cards it cannot rule out (the deck less its own card and every
  revealed one), each assignment weighted by how likely each rival's play so far was under
  the field (`K_BELIEFS`: a naive-Bayes table of open chips, purchases, Accusations and
  payments when cornered per round, calibrated on field games, `observe_chunk`);
- rivals' Capital: the public ledger (`ledger_after`: starting Capital, income, open BURN
  pay, open COOL cost, purchases, wages, Accusation payments, all public, R-I1) less the
  cost of the masked COOLs it samples (the public Fog pile says how many masked COOLs the
  table made each round, R-V1, and each rival's masked chips are its Agents less its open
  ones) plus an equal share of the Fog the rivals took (the pot's fall less its own take);
- Masks left (public: R_MASKS less the masked chips so far), every total the rivals keep;
- the asset deck's order: its public composition (the deck less owned and market cards),
  shuffled afresh; and each rival's field component, drawn afresh by its bot (the rollout
  plays under its own seed).

The tests perturb every hidden field of the rivals and the deck's order and find the same
decision (tests/test_searcher.py). Every rollout's seed is a hash of (seed, game, round,
seat, rollout), so a searched game depends only on (rules, lineup, knobs, seed, game), never
on the thread or the chunk.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from fbsim.game import layout as L
from fbsim.game import shape
from fbsim.game.jit import shared_inline
from fbsim.game.legal import commit_is_legal
from fbsim.game.public import asset_field, owned, world_projection
from fbsim.game.rng import below, draw, shuffle_in_place
from fbsim.kernel import engine as E
from fbsim.kernel.buildtype import checked, rules_of, tape_of
from fbsim.kernel.layout import (
    ERR_COMMIT,
    S_ACCUSERS,
    S_BOT,
    S_BURN_OPEN_T,
    S_COOL_OPEN_T,
    S_DECK_LEN,
    S_DECK_POS,
    S_ENTRY,
    S_ERROR,
    S_INCOME,
    S_LEGACY,
    S_OVER,
    S_POINTED,
    S_REQUEST,
    S_REVEALED,
    S_WEIGHT,
    S_WINNER,
    S_WORKS_T,
    W_SIZE,
)
from fbsim.policies.common import chip_rounds_left, others_net_per_round
from fbsim.policies.planner import table_cell

jit = njit(cache=True, nogil=True, _nrt=False)
P6 = L.MAX_PLAYERS

# ---------------------------------------------------------------- knobs (an int64 vector)
KNOBS = L.Fields()
K_ROLLOUTS = KNOBS.take("rollouts")  # rollouts per candidate
K_STEP = KNOBS.take("step")  # the grid of open COOL and BURN: 0, step, 2 step, .. <= Agents
K_MASKED = KNOBS.take("masked")  # 1: each grid split with BURN also with its BURNs masked
K_MARGIN = KNOBS.take("margin_milli")  # the paired z a departure needs, in thousandths
K_BELIEFS = KNOBS.take("beliefs")  # 1: Agendas weighted by the field's likelihood; 0: cards
K_AGENDAS = KNOBS.take("agendas")  # bit a: search when dealt Agenda a (else play the field)
K_PERTURB = KNOBS.take("perturb")  # > 0: scramble what seat me cannot see before it decides
# (the R-I3 test: every rival's hidden field and the deck's unseen order drawn afresh under
# this key in the copy it decides in; the decision must not change); < 0: in the game itself
K_SIZE = KNOBS.size

MAX_CANDIDATES = 40

# ---------------------------------------------------------------- one decision's log
# LOGD[game, round - 1, D_*]: every round's commitment of the searching seat
DECISION = L.Fields()
D_SEARCHED = DECISION.take("searched")  # 1: searched (0: the field's, unsearched)
D_CHOSEN = DECISION.take("chosen")  # the candidate played (0: the field's choice)
D_CANDIDATES = DECISION.take("candidates")
D_ROLLOUTS = DECISION.take("rollouts")
D_FIELD_WINS = DECISION.take("field_wins")  # rollouts the field's choice won
D_BEST = DECISION.take("best")  # the candidate of most wins
D_BEST_WINS = DECISION.take("best_wins")
D_Z = DECISION.take("z_milli")  # the best's paired z against the field's choice, x1000
D_COMMIT = DECISION.take("commit", 5)  # what was played: works, cool, burn, masked cool, burn
D_LEDGER = DECISION.take("ledger")  # seats whose Capital the ledger missed at the round's end
D_DIAL = DECISION.take("dial")  # the Dial as it decided (R-I1)
D_CAPITAL = DECISION.take("capital")  # its own Capital as it decided (R-I2)
D_PROJECTION = DECISION.take("projection")  # the final Dial projected from its view (R-I1):
# the world turns to come plus the rest of the table's average net chips (the planner's)
D_NET = DECISION.take("net")  # the rest of the table's average net chip ppm per round so far
D_CELL = DECISION.take("cell")  # the planner's table cell it decided in (`table_cell`; -1: none)
D_MEMO = DECISION.take("memo")  # its bot's memo (the field: the offset of its component)
D_SIZE = DECISION.size
# LOGC[game, round - 1, candidate, C_*]: each candidate (candidate 0: the field's choice)
CANDIDATE = L.Fields()
C_COMMIT = CANDIDATE.take("commit", 5)
C_WINS = CANDIDATE.take("wins")
C_DIFF = CANDIDATE.take("diff")  # sum over rollouts of (win - the field's win)
C_DIFF2 = CANDIDATE.take("diff2")  # sum of its squares
C_SIZE = CANDIDATE.size
# LOGP[game, round - 1, seat, agenda]: the posterior the rollouts drew from, x10000

# ---------------------------------------------------------------- the public ledger
PUB = L.Fields()
PB_CAPITAL = PUB.take("capital", P6)  # Capital less masked COOLs' cost and Fog receipts
PB_OWNED = PUB.take("owned", P6 * L.MAX_KINDS)  # before the market: by seat and kind
PB_POINTS = PUB.take("points", P6 * P6)  # before the Accusation
PB_PAID = PUB.take("paid", P6)  # before the Accusation
PB_POT = PUB.take("pot")  # before the Fog claims
PB_MY_RECEIVED = PUB.take("my_received")  # before the Fog claims
PB_BUY = PUB.take("buy", P6)  # this round's purchases: BUY_* (the likelihood's feature)
PB_POINTED = PUB.take("pointed", P6)  # this round: 1 if the seat pointed at someone
PB_PAID_NOW = PUB.take("paid_now", P6)  # this round: 1 if cornered and paid (R-A4)
PB_MASKED = PUB.take("masked", L.MAX_ROUNDS * P6)  # masked chips by round and seat
PB_RIVAL_MC = PUB.take("rival_masked_cool", L.MAX_ROUNDS)  # the rivals' masked COOLs
PB_RIVAL_FOG = PUB.take("rival_fog", L.MAX_ROUNDS)  # the Fog the rivals took
PB_SIZE = PUB.size
BUY_NONE, BUY_HEAT, BUY_COOLING, BUY_OTHER = 0, 1, 2, 3


@shared_inline
def pb_owned(seat, kind):
    """The ledger's index of how many assets of `kind` seat `seat` owned before the market."""
    return PB_OWNED + seat * L.MAX_KINDS + kind


@shared_inline
def pb_points(pointer, target):
    """The ledger's index of the points `pointer` gave `target` before the Accusation."""
    return PB_POINTS + pointer * P6 + target


@shared_inline
def pb_masked(round_index, seat):
    """The ledger's index of seat `seat`'s masked chips in round `round_index` + 1."""
    return PB_MASKED + round_index * P6 + seat

# ---------------------------------------------------------------- the likelihood's features
CHIPS = 7  # open COOL and BURN counts 0..6 (more: 6)
F_CHIPS = 0  # (phase, open cool, open burn, masked 0..2)
F_BUY = F_CHIPS + 2 * CHIPS * CHIPS * 3  # (phase, BUY_*)
F_POINT = F_BUY + 2 * 4
F_PAID = F_POINT + 2
N_FEATURES = F_PAID + 2
FEATURE_GROUPS = ((F_CHIPS, F_BUY), (F_BUY, F_POINT), (F_POINT, F_PAID),
                  (F_PAID, N_FEATURES))
MAX_ASSIGNMENTS = 3 ** (P6 - 1)
IMPOSSIBLE = -1e300  # the log-weight of an assignment the cards rule out


@shared_inline
def seat_income(R, W, s):
    total = 0
    for k in range(shape.n_kinds(R)):
        total += owned(W, s, k) * asset_field(R, k, L.A_INCOME)
    return total


@shared_inline
def ledger_start(R, PUB, n):
    """R-S2, R-S3: every seat's starting Capital (public)."""
    for i in range(PB_SIZE):
        PUB[i] = 0
    first = R[L.R_FIRST_PLAYER]
    for place in range(n):
        s = E.seat_at(first, place, n)
        PUB[PB_CAPITAL + s] = R[L.R_CAPITAL] + place * R[L.R_STAGGER]


@shared_inline
def ledger_before(k, R, W, PUB, n, me):
    """What the ledger keeps of the public view before step k of a round."""
    if k == E.STEP_WORLD:
        for s in range(P6):
            PUB[PB_BUY + s] = BUY_NONE
            PUB[PB_POINTED + s] = 0
            PUB[PB_PAID_NOW + s] = 0
    elif k == E.STEP_FOG:
        PUB[PB_POT] = W[L.V_POT]
        PUB[PB_MY_RECEIVED] = W[L.V_MY_RECEIVED_TOTAL + me] if me >= 0 else 0
    elif k == E.STEP_MARKET:
        for i in range(P6 * L.MAX_KINDS):
            PUB[PB_OWNED + i] = W[L.V_OWNED + i]
    elif k == E.STEP_ACCUSATION:
        for i in range(P6 * P6):
            PUB[PB_POINTS + i] = W[L.V_POINTS + i]
        for s in range(P6):
            PUB[PB_PAID + s] = W[L.V_PAID_TOTAL + s]


@shared_inline
def ledger_after(k, R, W, PUB, n, me, r):
    """The public ledger after step k of round r: what every seat's Capital moved by, as far
    as the public view tells (R-I1), and the round's public facts the searcher samples
    from. `PB_CAPITAL + s` is then seat s's Capital less the cost of its masked COOLs so far
    and plus its Fog receipts (the test of the ledger checks this at every step)."""
    if k == E.STEP_WORLD:  # R-W1: income (before or after the Collapse check, R-W4)
        if R[L.R_INCOME_BEFORE_COLLAPSE] == 1 or W[S_OVER] == 0:
            for s in range(n):
                PUB[PB_CAPITAL + s] += seat_income(R, W, s)
    elif k == E.STEP_REVEAL:  # R-V1: open chips; masked ones counted, the Fog pile's COOLs
        mine_cool = W[L.V_MY_MASKED_COOL + me] if me >= 0 else 0
        for s in range(n):
            PUB[pb_masked(r - 1, s)] = (
                R[L.R_AGENTS] - W[L.V_LAST_OPEN_WORKS + s] - W[L.V_LAST_OPEN_COOL + s]
                - W[L.V_LAST_OPEN_BURN + s])
        PUB[PB_RIVAL_MC + r - 1] = W[L.V_LAST_FOG_COOL] - mine_cool
    elif k == E.STEP_PAYMENTS:  # R-V3, R-V4 (open chips; masked COOLs' cost is hidden)
        for s in range(n):
            pay = (R[L.R_BURN_PAY_REVEALED] if W[L.V_REVEALED_AGENDA + s] == L.ACCELERATIONIST
                   else R[L.R_BURN_PAY])
            PUB[PB_CAPITAL + s] += (W[L.V_LAST_OPEN_BURN + s] * pay
                                    - W[L.V_LAST_OPEN_COOL + s] * R[L.R_COOL_COST])
    elif k == E.STEP_FOG:  # R-V5: who took what is hidden; how much the pot lost is not
        taken = PUB[PB_POT] - W[L.V_POT]  # (D6 off: the pot is emptied, an upper bound)
        mine_took = (W[L.V_MY_RECEIVED_TOTAL + me] - PUB[PB_MY_RECEIVED]) if me >= 0 else 0
        PUB[PB_RIVAL_FOG + r - 1] = taken - mine_took
    elif k == E.STEP_MARKET:  # R-V6: purchases at their prices, wages for the WORKS left
        for s in range(n):
            bought = 0
            spent = 0
            cat = BUY_NONE
            for kind in range(shape.n_kinds(R)):
                b = owned(W, s, kind) - PUB[pb_owned(s, kind)]
                if b > 0:
                    bought += b
                    spent += b * asset_field(R, kind, L.A_PRICE)
                    ppm = asset_field(R, kind, L.A_PPM)
                    if ppm > 0:
                        cat = BUY_HEAT
                    elif ppm < 0 and cat != BUY_HEAT:
                        cat = BUY_COOLING
                    elif cat == BUY_NONE:
                        cat = BUY_OTHER
            free = W[L.V_LAST_OPEN_WORKS + s] - bought * R[L.R_PURCHASE_LABOUR]
            PUB[PB_CAPITAL + s] += free * R[L.R_WAGE] - spent
            PUB[PB_BUY + s] = cat
    elif k == E.STEP_ACCUSATION:  # R-A4: a cornered seat that paid paid each pointer
        pay = R[L.R_PAY_PER_ACCUSER]
        for s in range(n):
            for t in range(n):
                if W[L.points_at(s, t)] > PUB[pb_points(s, t)]:
                    PUB[PB_POINTED + s] = 1
        for c in range(n):
            if W[L.V_PAID_TOTAL + c] > PUB[PB_PAID + c]:
                PUB[PB_PAID_NOW + c] = 1
                for s in range(n):
                    if W[L.points_at(s, c)] > PUB[pb_points(s, c)]:
                        PUB[PB_CAPITAL + c] -= pay
                        PUB[PB_CAPITAL + s] += pay


@shared_inline
def features(R, W, PUB, s, r):
    """Seat s's play in round r as the likelihood's four features (`N_FEATURES`), all
    public: its open COOL and BURN and masked chips, its purchases, whether it pointed at
    someone and whether it paid when cornered; each in the round's half of the game."""
    phase = 1 if 2 * r > shape.rounds(R) else 0
    oc = min(W[L.V_LAST_OPEN_COOL + s], CHIPS - 1)
    ob = min(W[L.V_LAST_OPEN_BURN + s], CHIPS - 1)
    mk = min(PUB[pb_masked(r - 1, s)], 2)
    f0 = F_CHIPS + ((phase * CHIPS + oc) * CHIPS + ob) * 3 + mk
    f1 = F_BUY + phase * 4 + PUB[PB_BUY + s]
    return f0, f1, F_POINT + PUB[PB_POINTED + s], F_PAID + PUB[PB_PAID_NOW + s]


@shared_inline
def observe_round(R, W, PUB, n, me, r, BL, LL, COUNTS):
    """A round played through: every rival's log-likelihood of each Agenda (LL[s, a], from
    the table BL[a, feature]); a calibration (COUNTS of 3 rows) counts each seat's features
    under its own Agenda."""
    calibrate = COUNTS.shape[0] == L.N_AGENDAS
    for s in range(n):
        f0, f1, f2, f3 = features(R, W, PUB, s, r)
        if calibrate:
            a = W[L.V_MY_AGENDA + s]
            COUNTS[a, f0] += 1.0
            COUNTS[a, f1] += 1.0
            COUNTS[a, f2] += 1.0
            COUNTS[a, f3] += 1.0
        elif s != me and BL.shape[0] == L.N_AGENDAS:
            for a in range(L.N_AGENDAS):
                LL[s, a] += BL[a, f0] + BL[a, f1] + BL[a, f2] + BL[a, f3]


# ---------------------------------------------------------------- the hidden state, sampled


@shared_inline
def rollout_seed(seed, game, r, me, i):
    """Rollout i's seed at seat me's commitment in round r: a non-negative int64."""
    hi = draw(seed, game, r, me, L.PURPOSE_ROLLOUT, 2 * i)
    lo = draw(seed, game, r, me, L.PURPOSE_ROLLOUT, 2 * i + 1)
    return (hi << 31) | (lo >> 1)


@shared_inline
def posterior(R, W, n, me, LL, beliefs, POST, RIVALS):
    """The cumulative weights (POST[0 .. 3^u)) of every assignment of Agendas to the u rivals
    whose Agendas are hidden (RIVALS[0 .. u), in seat order): the cards left after seat me's
    own and every revealed one, dealt without replacement (the falling factorials), times
    each rival's likelihood under the field when `beliefs`. Returns u."""
    left0 = R[L.R_DECK + 0]
    left1 = R[L.R_DECK + 1]
    left2 = R[L.R_DECK + 2]
    u = 0
    for s in range(n):
        a = W[L.V_MY_AGENDA + s] if s == me else W[L.V_REVEALED_AGENDA + s]
        if a == 0:
            left0 -= 1
        elif a == 1:
            left1 -= 1
        elif a == 2:
            left2 -= 1
        elif s != me:
            RIVALS[u] = s
            u += 1
    m = 1
    for _ in range(u):
        m *= L.N_AGENDAS
    top = -1e300
    for code in range(m):
        c = code
        k0 = 0
        k1 = 0
        k2 = 0
        lw = 0.0
        for i in range(u):
            a = c % L.N_AGENDAS
            c //= L.N_AGENDAS
            # the k-th card of Agenda a dealt: left_a - k + 1 of them to choose from
            if a == 0:
                k0 += 1
                ways = left0 - k0 + 1
            elif a == 1:
                k1 += 1
                ways = left1 - k1 + 1
            else:
                k2 += 1
                ways = left2 - k2 + 1
            lw += math.log(ways) if ways > 0 else IMPOSSIBLE
            if beliefs == 1:
                lw += LL[RIVALS[i], a]
        POST[code] = lw
        if lw > top:
            top = lw
    total = 0.0
    for code in range(m):
        w = math.exp(POST[code] - top) if POST[code] > IMPOSSIBLE / 2 else 0.0
        total += w
        POST[code] = total
    return u


@shared_inline
def pick(POST, m, x):
    """The assignment of cumulative weight POST[0 .. m) that uniform x in [0, 1) falls in."""
    target = x * POST[m - 1]
    for code in range(m):
        if POST[code] > target:
            return code
    return m - 1


@shared_inline
def sample_world(R, W, PUB, n, me, r, by_agenda, seat_bot, rseed, game, POST, RIVALS, u,
                 BASE, deck, DB):
    """BASE: the game before round r's commitments as seat me may imagine it: the public
    view and its own fields as they are, every rival's hidden field drawn from what the
    public record allows (the module's docstring); DB: the asset deck, its unseen part
    rebuilt from the public composition and shuffled under the rollout's seed."""
    for i in range(W_SIZE):
        BASE[i] = W[i]
    m = 1
    for _ in range(u):
        m *= L.N_AGENDAS
    code = pick(POST, m, draw(rseed, game, 0, 0, L.PURPOSE_ROLLOUT, 0) / 4294967296.0)
    # the rivals' Fog receipts: an equal share of what the pot lost to them
    fog = 0
    for q in range(r - 1):
        fog += PUB[PB_RIVAL_FOG + q]
    rivals = n - 1
    for s in range(n):
        if s == me:
            continue
        for f in L.PRIVATE:
            BASE[f + s] = 0
        BASE[S_REQUEST + s] = 0
        BASE[S_WEIGHT + s] = 0
        BASE[S_ACCUSERS + s] = 0
        BASE[S_LEGACY + s] = 0
    idx = 0
    for s in range(n):
        if s == me:
            continue
        a = BASE[L.V_REVEALED_AGENDA + s]
        if a < 0:  # hidden: the assignment's digit
            c = code
            for i in range(u):
                if RIVALS[i] == s:
                    a = c % L.N_AGENDAS
                    break
                c //= L.N_AGENDAS
        BASE[L.V_MY_AGENDA + s] = a
        BASE[S_BOT + s] = seat_bot[s] if seat_bot[s] >= 0 else by_agenda[a]
        BASE[S_ENTRY + s] = L.N_AGENDAS + s if seat_bot[s] >= 0 else a
        BASE[L.V_MY_MEMO + s] = L.NO_MEMO
        BASE[S_REVEALED + s] = 1 if a == BASE[L.V_REVEALED_AGENDA + s] else 0
        BASE[S_WORKS_T + s] = W[L.V_OPEN_WORKS_TOTAL + s]
        BASE[S_COOL_OPEN_T + s] = W[L.V_OPEN_COOL_TOTAL + s]
        BASE[S_BURN_OPEN_T + s] = W[L.V_OPEN_BURN_TOTAL + s]
        pointed = 0
        for p in range(n):
            pointed += W[L.points_at(p, s)]
        BASE[S_POINTED + s] = pointed
        BASE[S_INCOME + s] = seat_income(R, W, s)
        share = fog // rivals + (1 if idx < fog % rivals else 0)
        idx += 1
        BASE[L.V_MY_REQUESTED_TOTAL + s] = share
        BASE[L.V_MY_RECEIVED_TOTAL + s] = share
        BASE[L.V_MY_CAPITAL + s] = PUB[PB_CAPITAL + s] + share  # (masked COOLs below)
    for q in range(r - 1):  # selection sampling (Knuth's algorithm S) of each round's COOLs
        need = PUB[PB_RIVAL_MC + q]
        slots = 0
        for s in range(n):
            if s != me:
                slots += PUB[pb_masked(q, s)]
        for s in range(n):
            if s == me:
                continue
            mk = PUB[pb_masked(q, s)]
            for t in range(mk):
                if slots > 0 and below(slots, rseed, game, q + 1, s, L.PURPOSE_ROLLOUT,
                                       1 + t) < need:
                    BASE[L.V_MY_MASKED_COOL_TOTAL + s] += 1
                    need -= 1
                else:
                    BASE[L.V_MY_MASKED_BURN_TOTAL + s] += 1
                slots -= 1
    for s in range(n):
        if s == me:
            continue
        mc = BASE[L.V_MY_MASKED_COOL_TOTAL + s]
        mb = BASE[L.V_MY_MASKED_BURN_TOTAL + s]
        BASE[L.V_MY_MASKS + s] = R[L.R_MASKS] - mc - mb
        BASE[L.V_MY_FOG_IN_TOTAL + s] = mb * R[L.R_FOG_PER_MASKED_BURN]
        BASE[L.V_MY_CAPITAL + s] = max(0, BASE[L.V_MY_CAPITAL + s] - mc * R[L.R_COOL_COST])
    # the deck: its public composition, in kind order, shuffled
    pos = W[S_DECK_POS]
    end = W[S_DECK_LEN]
    j = pos
    for kind in range(shape.n_kinds(R)):
        left = asset_field(R, kind, L.A_COUNT)
        for s in range(n):
            left -= owned(W, s, kind)
        for slot in range(shape.market_size(R)):
            if W[L.V_MARKET + slot] == kind:
                left -= 1
        for _ in range(left):
            if j < end:
                DB[j] = kind
                j += 1
    for i in range(pos):
        DB[i] = deck[i]
    shuffle_in_place(DB[pos:end], rseed, game, L.PURPOSE_ASSET_SHUFFLE)


@shared_inline
def ledger_misses(R, W, PUB, n):
    """Seats whose Capital is not the ledger's less their masked COOLs' cost plus their Fog
    receipts (at a round's end; 0 when the ledger is right, the test of the ledger)."""
    bad = 0
    for s in range(n):
        if W[L.V_MY_CAPITAL + s] != (PUB[PB_CAPITAL + s]
                                     - W[L.V_MY_MASKED_COOL_TOTAL + s] * R[L.R_COOL_COST]
                                     + W[L.V_MY_RECEIVED_TOTAL + s]):
            bad += 1
    return bad


@shared_inline
def scramble(R, V, deck, n, me, key, game, r):
    """The R-I3 test's perturbation of V (the game as seat me decides in it) and of deck:
    every rival's private field and hidden state field drawn afresh under `key` (bots and
    their parameter rows swapped between rivals), the deck's undealt cards reshuffled."""
    for s in range(n):
        if s == me:
            continue
        for f in L.PRIVATE:
            V[f + s] = below(30, key, game, r, s, L.PURPOSE_ROLLOUT, f)
        V[L.V_MY_AGENDA + s] = below(L.N_AGENDAS, key, game, r, s, L.PURPOSE_ROLLOUT, 0)
        for f in range(S_REVEALED, S_INCOME + 1, P6):
            V[f + s] = below(30, key, game, r, s, L.PURPOSE_ROLLOUT, f)
    t = (me + 1) % n
    for s in range(n):
        if s != me and s != t and below(2, key, game, r, s, L.PURPOSE_ROLLOUT, 1) == 1:
            for f in (S_BOT, S_ENTRY):
                x = V[f + s]
                V[f + s] = V[f + t]
                V[f + t] = x
    shuffle_in_place(deck[V[S_DECK_POS]:V[S_DECK_LEN]], key, game, L.PURPOSE_ROLLOUT + r)


# ---------------------------------------------------------------- the decision


@shared_inline
def candidates(R, V, me, KN, CAND):
    """CAND[0 .. c): the commitments seat me scores (CAND[0], the field's choice, is there
    already): open splits of COOL and BURN on the grid of `K_STEP`, WORKS the rest (R-C1),
    each also with its BURNs masked when `K_MASKED` (R-C2), the legal ones (R-C3); c."""
    nc = 1
    agents = R[L.R_AGENTS]
    step = max(1, KN[K_STEP])
    V[L.V_SEAT] = me  # (the legality reads seat me's own fields)
    masks = V[L.V_MY_MASKS + me]
    for cool in range(0, agents + 1, step):
        for burn in range(0, agents - cool + 1, step):
            for variant in range(2 if KN[K_MASKED] == 1 else 1):
                mb = min(burn, masks) if variant == 1 else 0
                if variant == 1 and mb == 0:
                    continue
                works = agents - cool - burn
                if (works == CAND[0, 0] and cool == CAND[0, 1] and burn == CAND[0, 2]
                        and CAND[0, 3] == 0 and mb == CAND[0, 4]):
                    continue
                if nc < MAX_CANDIDATES and commit_is_legal(R, V, works, cool, burn, 0, mb):
                    CAND[nc, 0] = works
                    CAND[nc, 1] = cool
                    CAND[nc, 2] = burn
                    CAND[nc, 3] = 0
                    CAND[nc, 4] = mb
                    nc += 1
    return nc


@shared_inline
def copy_row(dst, src):
    for i in range(src.shape[0]):
        dst[i] = src[i]


@shared_inline
def search_commit(R, P, W, B, D, PUB, LL, POST, RIVALS, CAND, ACC, n, me, r, seed, game,
                  by_agenda, seat_bot, KN, LD, LC, LP, full, T):
    """Seat me's commitment in round r, searched: W holds every seat's commitment as the
    field made it (seat me's the field's choice), B[0] the game before them (what seat me
    saw). Scores every candidate on the same `K_ROLLOUTS` sampled worlds and plays the best
    when its paired z against the field's choice exceeds `K_MARGIN`; logs the decision (LD),
    each candidate (LC) and the posterior (LP). False if a checked build found a bot's
    decision illegal in a rollout (the game then stops with it)."""
    PRE, BASE, W2 = B[0], B[1], B[2]
    deck, DB, D2 = D[3], D[1], D[2]  # (D[3]: the deck as it decides in it, `scramble`)
    CAND[0, 0] = W[L.V_MY_WORKS + me]
    CAND[0, 1] = W[L.V_MY_COOL + me]
    CAND[0, 2] = W[L.V_MY_BURN + me]
    CAND[0, 3] = W[L.V_MY_MASKED_COOL + me]
    CAND[0, 4] = W[L.V_MY_MASKED_BURN + me]
    nc = candidates(R, PRE, me, KN, CAND)
    u = posterior(R, PRE, n, me, LL, KN[K_BELIEFS], POST, RIVALS)
    for c in range(nc):
        ACC[c, 0] = 0
        ACC[c, 1] = 0
        ACC[c, 2] = 0
    K = KN[K_ROLLOUTS]
    for i in range(K):
        rseed = rollout_seed(seed, game, r, me, i)
        sample_world(R, PRE, PUB, n, me, r, by_agenda, seat_bot, rseed, game, POST, RIVALS,
                     u, BASE, deck, DB)
        BASE[L.V_MY_MEMO + me] = W[L.V_MY_MEMO + me]  # its own component, as it keeps it
        for s in range(n):  # the rivals' commitments in this world (R-C4: not seat me's)
            if s != me and not E.ask_commit(R, P, BASE, s, r, rseed, game, T):
                E.fail(W, ERR_COMMIT, r, s)
                return False
        field_win = 0
        for c in range(nc):
            copy_row(W2, BASE)
            copy_row(D2, DB)
            E.set_commit(W2, me, CAND[c, 0], CAND[c, 1], CAND[c, 2], CAND[c, 3], CAND[c, 4])
            E.book_commits(W2, n)
            E.continue_game(R, P, W2, n, r, E.STEP_REVEAL, rseed, game, D2, T)
            if checked(T) and W2[S_ERROR] != 0:
                W[S_ERROR] = W2[S_ERROR]
                W[S_OVER] = 1
                return False
            win = 1 if W2[S_WINNER] == me else 0
            if c == 0:
                field_win = win
            d = win - field_win
            ACC[c, 0] += win
            ACC[c, 1] += d
            ACC[c, 2] += d * d
    best = 0
    for c in range(1, nc):
        if ACC[c, 0] > ACC[best, 0]:
            best = c
    z = 0.0
    if best != 0 and K > 1:
        mean = ACC[best, 1] / K
        var = (ACC[best, 2] - K * mean * mean) / (K - 1)
        z = mean / math.sqrt(var / K) if var > 0 else (1e6 if mean > 0 else 0.0)
    chosen = best if best != 0 and z * 1000.0 > KN[K_MARGIN] else 0
    E.set_commit(W, me, CAND[chosen, 0], CAND[chosen, 1], CAND[chosen, 2], CAND[chosen, 3],
                 CAND[chosen, 4])
    LD[D_SEARCHED] = 1
    LD[D_DIAL] = PRE[L.V_DIAL]
    LD[D_CAPITAL] = PRE[L.V_MY_CAPITAL + me]
    net = others_net_per_round(R, PRE, 0.0)
    LD[D_NET] = int(round(net))
    LD[D_PROJECTION] = int(round(world_projection(R, PRE) + net * chip_rounds_left(R, PRE)))
    LD[D_CELL] = table_cell(R, PRE)
    LD[D_MEMO] = W[L.V_MY_MEMO + me]
    LD[D_CHOSEN] = chosen
    LD[D_CANDIDATES] = nc
    LD[D_ROLLOUTS] = K
    LD[D_FIELD_WINS] = ACC[0, 0]
    LD[D_BEST] = best
    LD[D_BEST_WINS] = ACC[best, 0]
    LD[D_Z] = int(min(z, 1e6) * 1000.0)
    for f in range(5):
        LD[D_COMMIT + f] = CAND[chosen, f]
    if full:  # (a log of every candidate was asked for)
        for c in range(nc):
            for f in range(5):
                LC[c, C_COMMIT + f] = CAND[c, f]
            LC[c, C_WINS] = ACC[c, 0]
            LC[c, C_DIFF] = ACC[c, 1]
            LC[c, C_DIFF2] = ACC[c, 2]
        m = 1
        for _ in range(u):
            m *= L.N_AGENDAS
        for s in range(n):
            for a in range(L.N_AGENDAS):
                LP[s, a] = 0
        for code in range(m):
            w = POST[code] - (POST[code - 1] if code > 0 else 0.0)
            c = code
            for i in range(u):
                LP[RIVALS[i], c % L.N_AGENDAS] += int(10000.0 * w / POST[m - 1] + 0.5)
                c //= L.N_AGENDAS
        for s in range(n):
            a = W[L.V_REVEALED_AGENDA + s] if s != me else W[L.V_MY_AGENDA + s]
            if a >= 0:
                LP[s, a] = 10000
    return True


# ---------------------------------------------------------------- the searched game


@shared_inline
def searched_game(R, P, by_agenda, seat_bot, seed, game, me, KN, BL, COUNTS, W, B, D,
                  agenda_deck, PUB, LL, POST, RIVALS, CAND, ACC, LD, LC, LP, full, T):
    """One game in which seat me searches its commitments (`search_commit`; me = -1: no
    seat searches, the field's game, observed for a calibration into COUNTS). A game in
    which the searcher never departs is the field's game, record for record. Returns the
    last round played (what `write_record` takes)."""
    deck = D[0]
    E.setup(R, by_agenda, seat_bot, seed, game, W, deck, agenda_deck)
    n = shape.players(R)
    rounds = shape.rounds(R)
    ledger_start(R, PUB, n)
    for s in range(P6):
        for a in range(L.N_AGENDAS):
            LL[s, a] = 0.0
    for i in range(LD.shape[0]):
        for f in range(D_SIZE):
            LD[i, f] = 0
    search = me >= 0 and ((KN[K_AGENDAS] >> W[L.V_MY_AGENDA + me]) & 1) == 1
    r = 1
    for r in range(1, rounds + 1):
        W[L.V_ROUND] = r
        for k in range(E.N_ROUND_STEPS):
            ledger_before(k, R, W, PUB, n, me)
            if k == E.STEP_COMMIT and search:
                if KN[K_PERTURB] < 0:  # (the game itself: the test that the scramble bites)
                    scramble(R, W, deck, n, me, -KN[K_PERTURB], game, r)
                copy_row(B[0], W)
                copy_row(D[3], deck)
                if KN[K_PERTURB] != 0:
                    scramble(R, B[0], D[3], n, me, KN[K_PERTURB], game, r)
                ok = True
                for s in range(n):
                    if ok and not E.ask_commit(R, P, W, s, r, seed, game, T):
                        ok = False
                if ok and search_commit(R, P, W, B, D, PUB, LL, POST, RIVALS, CAND, ACC, n,
                                        me, r, seed, game, by_agenda, seat_bot, KN,
                                        LD[r - 1], LC[r - 1], LP[r - 1], full, T):
                    E.book_commits(W, n)
            else:
                E.round_step(k, R, P, W, n, r, seed, game, deck, T)
            if W[S_OVER] == 1:
                break
            ledger_after(k, R, W, PUB, n, me, r)
        if W[S_OVER] == 1:
            break
        observe_round(R, W, PUB, n, me, r, BL, LL, COUNTS)
        LD[r - 1, D_LEDGER] = ledger_misses(R, W, PUB, n)
        E.close_round(R, W, n, r)
    return E.finish(R, W, n, min(r, rounds))


@jit
def search_chunk(rules, P, by_agenda, seat_bot, seed, first_game, lo, hi, me, KN, BL, COUNTS,
                 G, SE, AS, DR, LOGD, LOGC, LOGP, tape, W, B, D, agenda_deck, PUB, LL, POST,
                 RIVALS, CAND, ACC, token):
    """Games first_game + lo .. first_game + hi - 1 with seat me searching (`searched_game`)
    in the build of `token`; game j's record into row j of G, SE, AS, DR (as `run_chunk`),
    its decisions into LOGD[j], and, when LOGC has a row per game, every candidate's
    estimates into LOGC[j] and the posterior into LOGP[j]. The buffers from W on are the
    chunk's (`scratch`)."""
    R = rules_of(rules, token)
    T = tape_of(tape, token)
    per_game = LOGC.shape[0] == G.shape[0]
    for j in range(lo, hi):
        row = j if per_game else 0
        T[0] = 0
        r = searched_game(R, P, by_agenda, seat_bot, seed, first_game + j, me, KN, BL, COUNTS,
                          W, B, D, agenda_deck, PUB, LL, POST, RIVALS, CAND, ACC, LOGD[j],
                          LOGC[row], LOGP[row], per_game, T)
        E.write_record(j, r, R, W, G, SE, AS, DR)


def scratch(R):
    """A chunk's buffers for `search_chunk` after its log arrays: the game's state row and
    three more (the game before the commitments, a sampled world, a rollout), the asset deck
    and three more (a sampled one, a rollout's, the one seat me decides in), the agenda deck,
    the ledger, the log-likelihoods, the posterior, the rivals, the candidates and their
    tallies."""
    W, deck, agenda_deck = E.scratch(R)
    return (W, np.zeros((3, W.shape[0]), dtype=np.int64),
            np.zeros((4, deck.shape[0]), dtype=np.int64), agenda_deck,
            np.zeros(PB_SIZE, dtype=np.int64), np.zeros((P6, L.N_AGENDAS)),
            np.zeros(MAX_ASSIGNMENTS), np.zeros(P6, dtype=np.int64),
            np.zeros((MAX_CANDIDATES, 5), dtype=np.int64),
            np.zeros((MAX_CANDIDATES, 3), dtype=np.int64))


def log_arrays(games: int, per_candidate: bool):
    """LOGD [games, rounds, D_SIZE]; LOGC and LOGP with a row per game when `per_candidate`
    (else one scratch row)."""
    rows = games if per_candidate else 1
    return (np.zeros((games, L.MAX_ROUNDS, D_SIZE), dtype=np.int64),
            np.zeros((rows, L.MAX_ROUNDS, MAX_CANDIDATES, C_SIZE), dtype=np.int64),
            np.zeros((rows, L.MAX_ROUNDS, P6, L.N_AGENDAS), dtype=np.int64))
