"""`planner`: the strategy space of the equilibrium search (`fbsim equilibrium`).

One bot whose parameters reach the strategies that fixed bots miss, for any Agenda (a lineup
gives each Agenda its own parameters):

- **steering** (`aim`, `tolerance`, `chips`, `chips_change`): cools or burns up to `chips`
  Agents in round 1 (`chips + chips_change` in the last round) so that the projected final
  Dial (world turns to come plus the rest of the table's average net chips, as the Steward
  projects it) lands on `aim`;
- **horizon** (`futile`): gives up steering in a direction that `chips` Agents a round over
  the rounds left cannot reach any more (no cooling paid for a Warming already lost);
- **a Collapse plan** (`collapse`): burns every Agent once the projection plus its own burns
  over the rounds left reach Collapse, keeping `reserve` Capital (R-E3 needs 10) and buying
  Bunkers for the tie-break when `buy` says so;
- **pay and disguise** (`burn_floor`, `mask_burns`, `mask_cools`, `disguise`): BURN Agents
  every round for their pay, burns and cools hidden in the Fog, and open COOL Agents that
  make its open profile look like a Steward's;
- **the Fog pot** (`greed`): claims its own masked-burn money plus a share of the rest;
- **purchases, apart from steering** (`buy`, `buy_until`, `payback`, `reserve`): nothing,
  cooling assets, income assets, heat assets, whatever pushes the Dial towards `aim`, or
  Bunkers, up to round `buy_until`; besides, income assets while `payback` world turns remain;
  always keeping `reserve` Capital;
- **when it starts** (`steer_from`): before that round it plays a quiet opening, its
  `disguise` Agents on open COOL and the rest on WORKS (no steering, no BURN pay, no Collapse
  plan), then a late rush or a late correction once the first reveals have shown the table;
- **the last round** (`last_aim`): steers the final Dial (no world turn follows, R-E1) to
  `last_aim` with every Agent it has, no tolerance: the band its Agenda scores in (R-X1);
- **a table of commitments** (`r<round>_p<band>`, rounds 1 to `TABLE_ROUNDS`): in the round
  and the band of the final Dial it projects as it decides (`table_cell`: nine bands, from
  40 ppm under Severe to 25 ppm over Collapse), the commitment it plays instead of its plan
  (`table_commit`: 10 x COOL + BURN, + 100 with its BURNs masked while Masks last; -1, the
  default: its plan). The equilibrium search does not move these; the searcher's departures,
  distilled, set them (`fbsim.experiments.search.distill`);
- **a table by its own Capital** (`r<round>_c<band>`, rounds 1 to `TABLE_ROUNDS`, eight
  bands of its Capital as it decides, R-I2: `capital_cell`), played before the projection's
  table where a cell is set: in round 1 its Capital is its place in the staggered order
  (R-S3), which the projection cannot see (the searcher's 4-player Accelerationist opens with
  open COOL in place 0 and BURNs elsewhere); distilled the same way;
- **Accusations** (`accuse`, `accuse_min`, `cornered`): points at the most open burner, the
  most open cooler, by the way the Dial runs, or at the rival that public evidence names the
  likeliest Accelerationist (`fbsim.policies.beliefs`) when its score reaches `accuse_min`;
  when cornered it pays, reveals, or reveals when a revealed Accelerationist's open-BURN pay
  over the rounds left is worth the price.

With `futile`, `collapse` and `disguise` at 0 and `buy` 4 (or 0), it plays as the `tunable`
bot does with the same parameters, so its space contains `fbsim exploit`'s.

The decisions take an offset `o` into the parameter vector, so that the `field` bot (a
mixture of planners) runs the same code on one of its components.
"""

from __future__ import annotations

from fbsim.game import layout as L
from fbsim.game import shape
from fbsim.game.jit import shared
from fbsim.game.legal import commit_is_legal
from fbsim.game.public import mine, world_projection
from fbsim.policies import BotSpec, Param, param_index
from fbsim.policies.beliefs import likeliest_accelerationist
from fbsim.policies.common import (
    ANY_INCOME,
    COOLING,
    HEATING,
    NEUTRAL,
    PAYING,
    ceil_div_pos,
    cheapest_bunker,
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

TABLE_ROUNDS = 8  # the table covers rounds 1 .. 8 (later rounds: the plan)
# the bands of the projected final Dial (`table_cell`), by their first ppm: an offset from
# Severe's first (R-E2), Extreme's, halfway to Collapse, or Collapse's
TABLE_BANDS = ("p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8")
BAND_TEXT = ("below Severe less 40 ppm", "from Severe less 40 ppm", "from Severe less 20 ppm",
              "from Severe's first ppm", "from Severe plus 20 ppm", "from Extreme's first ppm",
              "from halfway between Extreme and Collapse", "from Collapse",
              "from Collapse plus 25 ppm")
TABLE_OFF = -1.0  # a cell that plays the plan
TABLE_MASKED = 100  # + this: its BURNs masked


def table_name(r: int, band: int, bands: tuple[str, ...] = TABLE_BANDS) -> str:
    """The parameter of a table's cell for round r (1-based) and band `band` (of the
    projection's `TABLE_BANDS` or the Capital's `CAPITAL_BANDS`)."""
    return f"r{r}_{bands[band]}"


TABLE = tuple(Param(table_name(r, b), TABLE_OFF,
                    f"round {r}, the projected final Dial {BAND_TEXT[b]} (the next band's "
                    "excluded): the commitment it plays instead of its plan, 10 x COOL + "
                    "BURN (+100: its BURNs masked; -1: its plan)",
                    TABLE_OFF, TABLE_MASKED + 66, quiet=True)
              for r in range(1, TABLE_ROUNDS + 1) for b in range(len(TABLE_BANDS)))
# the bands of its own Capital (`capital_cell`), by their first Capital: round 1's places
# apart (R-S3: 8 + place), then wider
CAPITAL_EDGES = (9, 10, 11, 12, 14, 18, 24)
CAPITAL_BANDS = tuple(f"c{b}" for b in range(len(CAPITAL_EDGES) + 1))
CAPITAL_TEXT = (f"Capital below {CAPITAL_EDGES[0]}",) + tuple(
    f"Capital {lo}" if hi == lo + 1 else f"Capital {lo} to {hi - 1}"
    for lo, hi in zip(CAPITAL_EDGES, CAPITAL_EDGES[1:], strict=False)) + (
    f"Capital {CAPITAL_EDGES[-1]} or more",)
CAPITAL_TABLE = tuple(Param(table_name(r, b, CAPITAL_BANDS), TABLE_OFF,
                            f"round {r}, its own {CAPITAL_TEXT[b]}: the commitment it plays "
                            "instead of its projection's table and its plan, 10 x COOL + BURN "
                            "(+100: its BURNs masked; -1: not set)",
                            TABLE_OFF, TABLE_MASKED + 66, quiet=True)
                      for r in range(1, TABLE_ROUNDS + 1) for b in range(len(CAPITAL_BANDS)))
TABLE_NAMES = frozenset(p.name for p in TABLE + CAPITAL_TABLE)

PARAMS = (
    Param("aim", 529.5, "final Dial (ppm) it steers the projection towards", 300, 800),
    Param("tolerance", 4.0, "ppm off the aim it accepts without steering", 0, 100),
    Param("chips", 3.0, "steering COOL/BURN Agents at most in round 1", 0, 6),
    Param("chips_change", 0.0, "... plus this many by the last round (linear in between)",
          -6, 6),
    Param("burn_floor", 0.0, "BURN Agents every round, for their pay", 0, 6),
    Param("futile", 1.0, "1: stop steering where `chips` a round cannot reach the aim", 0, 1),
    Param("collapse", 0.0, "1: burn every Agent once Collapse is within reach", 0, 1),
    Param("mask_burns", 1.0, "burns masked per round while Masks last", 0, 6),
    Param("mask_cools", 0.0, "cools masked per round while Masks last", 0, 6),
    Param("disguise", 0.0, "open COOL Agents every round (a Steward's open profile)", 0, 6),
    Param("greed", 0.0, "share of the rest of the Fog pot it claims (0 honest, 1 all)", 0, 1),
    Param("buy", 0.0, "0 nothing, 1 cooling, 2 income, 3 heat assets, 4 towards the aim, "
          "5 Bunkers", 0, 5),
    Param("buy_until", 7.0, "last round in which it buys by `buy`", 0, L.MAX_ROUNDS),
    Param("payback", 99.0, "besides: buys income assets while this many world turns remain "
          "(99: never)", 0, 99),
    Param("reserve", 0.0, "Capital kept after a purchase", 0, 100),
    Param("accuse", 1.0, "0 nobody, 1 most open burner, 2 most open cooler, 3 by the Dial, "
          "4 the likeliest Accelerationist", 0, 4),
    Param("accuse_min", 0.0, "with accuse 4: the least evidence score it points on", -50, 50),
    Param("cornered", 1.0, "0 pay, 1 reveal, 2 reveal when the Accelerationist's pay is "
          "worth it", 0, 2),
    Param("last_aim", 0.0, "last round: the final Dial it steers to with every Agent it has "
          "(below 300: off)", 0, 650),
    Param("steer_from", 1.0, "the first round it steers, burns and pushes the Collapse plan in "
          "(before it: `disguise` open COOL, the rest WORKS)", 1, L.MAX_ROUNDS),
) + TABLE + CAPITAL_TABLE

P_AIM = param_index(PARAMS, "aim")
P_TOLERANCE = param_index(PARAMS, "tolerance")
P_CHIPS = param_index(PARAMS, "chips")
P_CHIPS_CHANGE = param_index(PARAMS, "chips_change")
P_BURN_FLOOR = param_index(PARAMS, "burn_floor")
P_FUTILE = param_index(PARAMS, "futile")
P_COLLAPSE = param_index(PARAMS, "collapse")
P_MASK_BURNS = param_index(PARAMS, "mask_burns")
P_MASK_COOLS = param_index(PARAMS, "mask_cools")
P_DISGUISE = param_index(PARAMS, "disguise")
P_GREED = param_index(PARAMS, "greed")
P_BUY = param_index(PARAMS, "buy")
P_BUY_UNTIL = param_index(PARAMS, "buy_until")
P_PAYBACK = param_index(PARAMS, "payback")
P_RESERVE = param_index(PARAMS, "reserve")
P_ACCUSE = param_index(PARAMS, "accuse")
P_ACCUSE_MIN = param_index(PARAMS, "accuse_min")
P_CORNERED = param_index(PARAMS, "cornered")
P_LAST_AIM = param_index(PARAMS, "last_aim")
LAST_AIM_OFF = 300.0  # `last_aim` below this: off
P_STEER_FROM = param_index(PARAMS, "steer_from")
TABLE_AT = param_index(PARAMS, table_name(1, 0))  # cell c at TABLE_AT + c (`table_cell`)
N_BANDS = len(TABLE_BANDS)
CAPITAL_AT = param_index(PARAMS, table_name(1, 0, CAPITAL_BANDS))  # (`capital_cell`)
N_CAPITAL = len(CAPITAL_BANDS)

# what `buy` buys
BUY_NOTHING = 0
BUY_COOLING = 1
BUY_INCOME = 2
BUY_HEAT = 3
BUY_STEER = 4
BUY_BUNKERS = 5


@shared
def projection(R, V):
    """The final Dial if the table keeps its average net chips (the Steward's projection)."""
    return world_projection(R, V) + others_net_per_round(R, V, 0.0) * chip_rounds_left(R, V)


@shared
def started(V, P, o):
    """From round `steer_from` on it steers (and may push the Collapse plan)."""
    return V[L.V_ROUND] >= P[o + P_STEER_FROM] - 0.5


@shared
def pushing(R, V, P, o):
    """The Collapse plan is on, started (`steer_from`) and within reach: the projection plus
    every one of its own Agents burning over the rounds left reaches Collapse."""
    if P[o + P_COLLAPSE] < 0.5 or R[L.R_BURN_PPM] <= 0 or not started(V, P, o):
        return False
    reach = R[L.R_AGENTS] * R[L.R_BURN_PPM] * chip_rounds_left(R, V)
    return projection(R, V) + reach >= R[L.R_COLLAPSE]


@shared
def steering_chips(R, V, P, o):
    """`chips` in round 1, `chips + chips_change` in the last round, linear in between."""
    rounds = shape.rounds(R)
    frac = 1.0 if rounds <= 1 else (V[L.V_ROUND] - 1) / (rounds - 1)
    return clamp(int(P[o + P_CHIPS] + P[o + P_CHIPS_CHANGE] * frac + 0.5), 0, R[L.R_AGENTS])


@shared
def band_edge(R, b):
    """The first ppm of the table's band b (1 .. N_BANDS - 1; `TABLE_BANDS`)."""
    severe, extreme, collapse = R[L.R_SEVERE], R[L.R_EXTREME], R[L.R_COLLAPSE]
    if b <= 4:
        return severe + 20 * (b - 3)
    if b == 5:
        return extreme
    if b == 6:
        return (extreme + collapse) // 2
    return collapse + 25 * (b - 7)


@shared
def table_cell(R, V):
    """The table's cell of this decision: (round - 1) x N_BANDS + the band of the final Dial
    it projects (`projection`, public: R-I1); -1 after round TABLE_ROUNDS."""
    r = V[L.V_ROUND]
    if r > TABLE_ROUNDS:
        return -1
    p = projection(R, V)
    band = 0
    for b in range(1, N_BANDS):
        if p >= band_edge(R, b):
            band = b
    return (r - 1) * N_BANDS + band


@shared
def capital_band(capital):
    """The band of a Capital (`CAPITAL_EDGES`)."""
    band = 0
    for b in range(len(CAPITAL_EDGES)):
        if capital >= CAPITAL_EDGES[b]:
            band = b + 1
    return band


@shared
def capital_cell(V):
    """The Capital table's cell of this decision: (round - 1) x N_CAPITAL + the band of its
    own Capital (R-I2); -1 after round TABLE_ROUNDS."""
    r = V[L.V_ROUND]
    if r > TABLE_ROUNDS:
        return -1
    return (r - 1) * N_CAPITAL + capital_band(mine(V, L.V_MY_CAPITAL))


@shared
def table_code(V, R, P, o):
    """The tables' commitment code for this decision (-1: the plan): the Capital table's cell
    where set, else the projection's. The projection is computed only where a cell of this
    round is set (a planner without a table pays nothing)."""
    r = V[L.V_ROUND]
    if r > TABLE_ROUNDS:
        return -1
    x = P[o + CAPITAL_AT + capital_cell(V)]
    if x >= -0.5:
        return int(x + 0.5)
    row = o + TABLE_AT + (r - 1) * N_BANDS
    used = False
    for b in range(N_BANDS):
        if P[row + b] >= -0.5:
            used = True
    if not used:
        return -1
    cell = table_cell(R, V)
    x = P[o + TABLE_AT + cell]
    if x < -0.5:
        return -1
    return int(x + 0.5)


@shared
def table_commit(R, V, code):
    """The commitment a table code asks for: 10 x COOL + BURN open chips (each at most the
    Agents), its BURNs masked while Masks last when code >= TABLE_MASKED (R-C2), the COOL cut
    to what it can pay (R-C3), WORKS the rest (R-C1)."""
    agents = R[L.R_AGENTS]
    c = code % 100
    cool = clamp(c // 10, 0, agents)
    burn = clamp(c % 10, 0, agents - cool)
    mb = 0
    if code >= TABLE_MASKED:
        mb, _ = mask_split(V, burn, 0, burn, 0)
    cool = max_affordable_cool(R, V, cool, burn - mb)
    works = agents - cool - burn
    if not commit_is_legal(R, V, works, cool, burn, 0, mb):
        return agents, 0, 0, 0, 0
    return works, cool, burn, 0, mb


@shared
def plan_commit(R, V, P, o):
    code = table_code(V, R, P, o)
    if code >= 0:
        return table_commit(R, V, code)
    agents = R[L.R_AGENTS]
    left = chip_rounds_left(R, V)
    most = steering_chips(R, V, P, o)
    steer = started(V, P, o)
    burn = clamp(int(P[o + P_BURN_FLOOR]), 0, agents) if steer else 0
    cool = 0
    aim = P[o + P_AIM]
    tolerance = P[o + P_TOLERANCE]
    futile = P[o + P_FUTILE] > 0.5
    if P[o + P_LAST_AIM] >= LAST_AIM_OFF and V[L.V_ROUND] >= shape.rounds(R):
        aim = P[o + P_LAST_AIM]  # the last round: every Agent towards the final Dial
        tolerance = 0.0
        most = agents
        futile = False
        steer = True
    if pushing(R, V, P, o):
        burn = agents
    else:
        g = projection(R, V) - aim  # positive: too hot
        if not steer:
            g = 0.0
        if g > tolerance and R[L.R_COOL_PPM] > 0:
            want = ceil_div_pos(g, R[L.R_COOL_PPM] * left)
            if futile and want > most:
                want = 0
            cool = clamp(want, 0, most)
        elif g < -tolerance and R[L.R_BURN_PPM] > 0:
            want = ceil_div_pos(-g, R[L.R_BURN_PPM] * left)
            if futile and want > most:
                want = 0
            extra = clamp(want, 0, most)
            if extra > burn:
                burn = extra
        disguise = clamp(int(P[o + P_DISGUISE]), 0, agents - burn)
        if disguise > cool:
            cool = disguise
    if cool > agents - burn:
        cool = agents - burn
    want_mb = int(P[o + P_MASK_BURNS])
    want_mc = int(P[o + P_MASK_COOLS])
    mb, mc = mask_split(V, burn, cool, want_mb, want_mc)
    cool = max_affordable_cool(R, V, cool, burn - mb)  # R-C3
    mb, mc = mask_split(V, burn, cool, want_mb, want_mc)
    works = agents - cool - burn
    if not commit_is_legal(R, V, works, cool, burn, mc, mb):
        return agents, 0, 0, 0, 0  # all WORKS is always legal
    return works, cool, burn, mc, mb


@shared
def buy_by_rule(R, V, P, o, reserve):
    """The slot that `buy` asks for (-1: none)."""
    rule = int(P[o + P_BUY] + 0.5)
    if rule == BUY_COOLING:
        return cheapest_slot(R, V, COOLING, reserve, ANY_INCOME)
    if rule == BUY_INCOME:
        return cheapest_slot(R, V, NEUTRAL, reserve, PAYING)
    if rule == BUY_HEAT:
        return cheapest_slot(R, V, HEATING, reserve, ANY_INCOME)
    if rule == BUY_STEER:
        if pushing(R, V, P, o):
            return cheapest_slot(R, V, HEATING, reserve, ANY_INCOME)
        g = projection(R, V) - P[o + P_AIM]
        if g > P[o + P_TOLERANCE]:
            return cheapest_slot(R, V, COOLING, reserve, ANY_INCOME)
        if g < -P[o + P_TOLERANCE]:
            return cheapest_slot(R, V, HEATING, reserve, ANY_INCOME)
        return -1
    if rule == BUY_BUNKERS:
        return cheapest_bunker(R, V, reserve)
    return -1


@shared
def plan_market(R, V, P, o):
    # an asset bought in the last round never pays nor moves the Dial (R-W1, R-E1)
    if V[L.V_ROUND] >= shape.rounds(R):
        return -1
    reserve = int(P[o + P_RESERVE])
    slot = -1
    if V[L.V_ROUND] <= P[o + P_BUY_UNTIL]:
        slot = buy_by_rule(R, V, P, o, reserve)
    # besides: an income asset (no ppm) while `payback` world turns remain to pay it back
    if slot < 0 and shape.rounds(R) - V[L.V_ROUND] >= int(P[o + P_PAYBACK]):
        slot = cheapest_slot(R, V, NEUTRAL, reserve, PAYING)
    return slot


@shared
def plan_accuse(R, V, P, o):
    rule = int(P[o + P_ACCUSE] + 0.5)
    if rule == 1:
        return most_by(R, V, L.V_OPEN_BURN_TOTAL, 1)
    if rule == 2:
        return most_by(R, V, L.V_OPEN_COOL_TOTAL, 1)
    if rule == 3:
        if projection(R, V) > P[o + P_AIM]:
            return most_by(R, V, L.V_OPEN_BURN_TOTAL, 1)
        return most_by(R, V, L.V_OPEN_COOL_TOTAL, 1)
    if rule == 4:
        return likeliest_accelerationist(R, V, P[o + P_ACCUSE_MIN])
    return -1


@shared
def plan_cornered(R, V, P, o):
    rule = int(P[o + P_CORNERED] + 0.5)
    if rule == 0:
        return 0
    if rule == 1 or mine(V, L.V_MY_AGENDA) != L.ACCELERATIONIST:
        return 1
    burns = R[L.R_AGENTS] if pushing(R, V, P, o) else int(P[o + P_BURN_FLOOR])
    return 1 if reveal_pays(R, V, burns) else 0


@shared
def commit(R, V, P, seed, game):
    return plan_commit(R, V, P, 0)


@shared
def fog_request(R, V, P, seed, game):
    return greedy_claim(V, P[P_GREED])


@shared
def market(R, V, P, seed, game):
    return plan_market(R, V, P, 0)


@shared
def accuse(R, V, P, seed, game):
    return plan_accuse(R, V, P, 0)


@shared
def cornered(R, V, P, seed, game):
    return plan_cornered(R, V, P, 0)


BOT = BotSpec(
    name="planner",
    summary="planner: steering, horizon, Collapse plan, disguise, purchases and beliefs as "
            "parameters (the equilibrium's strategy space)",
    params=PARAMS,
    commit=commit,
    fog_request=fog_request,
    market=market,
    accuse=accuse,
    cornered=cornered,
    listed=tuple(p.name for p in PARAMS if p.name not in TABLE_NAMES),
    note=f"r<round>_<band> (rounds 1..{TABLE_ROUNDS}, bands {TABLE_BANDS[0]}..{TABLE_BANDS[-1]}): "
         "the table of commitments, 10 x COOL + BURN (+100: BURNs masked; -1, the default: "
         "the plan) in that round when the projected final Dial is in that band: p0 below "
         "Severe less 40 ppm, p1 from there, p2 from Severe less 20, p3 from Severe, p4 from "
         "Severe plus 20, p5 from Extreme, p6 halfway to Collapse, p7 from Collapse, p8 from "
         f"Collapse plus 25; and r<round>_<{CAPITAL_BANDS[0]}..{CAPITAL_BANDS[-1]}>, played "
         "first where set: the table by its own Capital, "
         + ", ".join(f"{b} {t[len('Capital '):]}" for b, t in zip(CAPITAL_BANDS, CAPITAL_TEXT,
                                                                   strict=True))
         + " (both set by `fbsim equilibrium --distill`)",
)


def from_tunable(t: dict) -> dict:
    """The planner parameters that play the `tunable` bot's strategy `t` (every tunable
    parameter given): the same games, record for record (tests/test_equilibrium.py). The
    equilibrium search starts best responses here too, from `fbsim exploit`'s presets."""
    return {"aim": t["aim"], "tolerance": t["tolerance"], "chips": t["chips_early"],
            "chips_change": t["chips_late"] - t["chips_early"], "burn_floor": t["burn_floor"],
            "futile": 0, "collapse": 0, "mask_burns": t["mask_burns"],
            "mask_cools": t["mask_cools"], "disguise": 0, "greed": t["greed"],
            # the tunable bot buys in every round but the last, whatever the rules' rounds
            "buy": BUY_STEER if t["buy_steer"] > 0.5 else BUY_NOTHING,
            "buy_until": L.MAX_ROUNDS, "payback": min(99.0, t["payback"]),
            "reserve": t["reserve"], "accuse": float(int(t["accuse"])),
            "cornered": float(int(t["cornered"]))}
