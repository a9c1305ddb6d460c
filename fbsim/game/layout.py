"""Flat array layouts shared by the reference engine, the bots and the kernel.

Bots are numba-compatible functions over arrays and scalars, so everything they may read is
packed into two int64 vectors:

- the *rules vector* (`R_*` indices): every number of the effective rules for one table size,
  built once per run by :func:`fbsim.rules.rules_vector`;
- the *view vector* (`V_*` indices): what one player may know at one decision point
  (RULES.md section I), built by :func:`fbsim.reference.view.player_view`.

The layouts are fixed-size (the ``MAX_*`` bounds below) so that the indices are compile-time
constants under numba. Bump ``LAYOUT_VERSION`` whenever an index changes.
"""

from __future__ import annotations

LAYOUT_VERSION = 8  # in every output's provenance; what each change was: the commit log

MAX_PLAYERS = 6
MAX_ROUNDS = 16
MAX_TOKENS = 8
MAX_KINDS = 8
MAX_MARKET = 8
STALE = -(1 << 62)  # V_WORLD_PROJECTION not computed since what it reads changed
NO_MEMO = -1  # V_MY_MEMO: nothing kept yet
MAX_BOT_PARAMS = 944  # the field bot: 6 weights + 6 planners of 156 + its draw (943)

# Agendas (R-S4, D2)
STEWARD = 0
OPPORTUNIST = 1
ACCELERATIONIST = 2
N_AGENDAS = 3
AGENDA_NAMES = ("steward", "opportunist", "accelerationist")

# Bands of the final Dial (R-E2)
WARMING = 0
SEVERE = 1
EXTREME = 2
COLLAPSE = 3
BAND_NAMES = ("warming", "severe", "extreme", "collapse")

# R-W3: when a tipping token flips (`tipping.flip_when`, packed as the index of its choice)
FLIP_REACHING = 0  # the Dial >= the threshold (the rules page)
FLIP_CROSSING = 1  # the Dial > the threshold
FLIP_NAMES = ("reaching", "crossing")

# D8: whose order breaks end-of-game ties (`scoring.tiebreak_first_player`, packed as the
# index of its choice)
TIEBREAK_LAST_ROUND = 0  # the first player of the last round played
TIEBREAK_ROUND_1 = 1  # the round-1 first player
TIEBREAK_AFTER_ROTATION = 2  # the seat after the last round's first player
TIEBREAK_NAMES = ("last-round", "round-1", "after-rotation")

# How a game ended
END_SURVIVED = 0
END_COLLAPSE_WORLD = 1  # R-W4
END_COLLAPSE_REVEAL = 2  # R-V2
END_NAMES = ("survived", "collapse-world", "collapse-reveal")

# Decision points (RULES.md section P), also RNG purposes of the bots
DP_COMMIT = 1
DP_FOG = 2
DP_MARKET = 3
DP_ACCUSE = 4
DP_CORNERED = 5
# RNG purposes of the game itself
PURPOSE_AGENDA_DEAL = 10  # R-S4
PURPOSE_ASSET_SHUFFLE = 11  # R-S5
# RNG purposes of the bots' own devices
PURPOSE_FIELD = 12  # the field bot's choice of component (fbsim.policies.field)
PURPOSE_ROLLOUT = 13  # the searcher's rollouts: their seeds and the hidden state they sample
# (fbsim.kernel.search)



class Fields:
    """The named slots of a flat int64 vector, handed out in order: `take(name, n)` reserves
    n slots and returns the first one's index, a constant of the code that reads it. The
    names let a debugger, a test or an error message read a vector by name (`named`,
    `name_of`); no code computes an index but the accessors below."""

    def __init__(self, start: int = 0):
        self.size = start
        self.slots: dict[str, tuple[int, int]] = {}  # name -> (first index, length)

    def take(self, name: str, n: int = 1) -> int:
        if name in self.slots:
            raise ValueError(f"field {name!r} declared twice")
        start = self.size
        self.slots[name] = (start, n)
        self.size += n
        return start

    def name_of(self, i: int) -> str:
        """`dial`, or `owned[9]` for the tenth slot of a field of several."""
        for name, (start, n) in self.slots.items():
            if start <= i < start + n:
                return name if n == 1 else f"{name}[{i - start}]"
        raise IndexError(f"no field at index {i}")

    def named(self, vector) -> dict[str, int | list[int]]:
        """Every field of `vector` by name (a list for a field of several slots)."""
        return {name: (int(vector[i]) if n == 1 else [int(x) for x in vector[i:i + n]])
                for name, (i, n) in self.slots.items()}


# ---------------------------------------------------------------- rules vector
RULES = Fields()
# Where each scalar field of the rules (`fbsim.rules.Rules`, by dotted path) goes in the rules
# vector, filled by `rule`: booleans as 0/1, a choice as the index of its value among the
# field's choices. `fbsim.rules.rules_vector` fills these and documents the fields packed
# otherwise (the table size, per-table-size tables, tokens, Accusation rounds, the assets); a
# test checks that every field of the rules is one or the other.
R_FIELDS: dict[str, int] = {}


def _rule(path: str) -> int:
    R_FIELDS[path] = index = RULES.take(path)
    return index


R_PLAYERS = RULES.take("players")
R_ROUNDS = _rule("rounds")
R_AGENTS = _rule("agents")
R_CAPITAL = _rule("capital")
R_STAGGER = _rule("stagger")
R_MASKS = _rule("masks")
R_FIRST_PLAYER = RULES.take("first_player")  # D9
R_BASELINE_OFFSET = _rule("baseline_offset")
R_BASELINE = RULES.take("baseline", MAX_ROUNDS)  # D1, for this table size, without the offset
R_DIAL_START = _rule("dial.start")
R_COLLAPSE = _rule("dial.collapse")  # R-W4, R-V2, R-E2
R_SEVERE = _rule("dial.severe")  # R-E2: first ppm of Severe
R_EXTREME = _rule("dial.extreme")  # R-E2: first ppm of Extreme
R_FLOOR_ENABLED = _rule("dial.floor_enabled")  # D4
R_FLOOR = _rule("dial.floor")
R_INCOME_BEFORE_COLLAPSE = _rule("income_before_collapse")  # R-W1 before R-W4
R_N_TOKENS = RULES.take("n_tokens")
R_TOKEN_THRESHOLD = RULES.take("token_threshold", MAX_TOKENS)
R_TOKEN_START_FLIPPED = RULES.take("token_start_flipped", MAX_TOKENS)
R_TOKEN_PENALTY = _rule("tipping.penalty")
R_FLIP_WHEN = _rule("tipping.flip_when")  # R-W3: FLIP_REACHING (>=) or FLIP_CROSSING (>)
R_COOL_PPM = _rule("jobs.cool_ppm")
R_BURN_PPM = _rule("jobs.burn_ppm")
R_COOL_COST = _rule("jobs.cool_cost")
R_BURN_PAY = _rule("jobs.burn_pay")
R_BURN_PAY_REVEALED = _rule("jobs.burn_pay_revealed")  # R-A5
R_FOG_PER_MASKED_BURN = _rule("jobs.fog_per_masked_burn")  # R-V3
R_FOG_PARTIAL_FILL = _rule("fog.partial_fill")  # D5
R_FOG_CARRY_OVER = _rule("fog.carry_over")  # D6
R_MARKET_SIZE = _rule("market.size")
R_PURCHASE_LABOUR = _rule("market.purchase_labour")
R_WAGE = _rule("market.wage")
R_ACCUSE_AFTER = RULES.take("accuse_after", MAX_ROUNDS)  # 1 after round r (index r-1)
R_POINT_WEIGHT = _rule("accusation.point_weight")
R_PAY_PER_ACCUSER = _rule("accusation.pay_per_accuser")
R_MEDIA_STACKS = _rule("accusation.media_stacks")  # D7
# R-A1/R-A5: 1 = a revealed Steward/Opportunist is eligible
R_REVEALED_ACCUSABLE = _rule("accusation.revealed_accusable")
R_CAPITAL_PER_LEGACY = _rule("scoring.capital_per_legacy")
R_COLLAPSE_MIN_CAPITAL = _rule("scoring.collapse_min_capital")
# D8: TIEBREAK_LAST_ROUND, _ROUND_1 or _AFTER_ROTATION
R_TIEBREAK_FIRST_PLAYER = _rule("scoring.tiebreak_first_player")
R_STEWARD_BASE = _rule("agendas.steward_base")
R_STEWARD_PER_STEP = _rule("agendas.steward_per_step")
R_STEWARD_STEP = _rule("agendas.steward_step")
R_OPPORTUNIST_SEVERE = _rule("agendas.opportunist_severe")
R_ACCEL_EXTREME = _rule("agendas.accelerationist_extreme")
R_ACCEL_PER_HEAT_ASSET = _rule("agendas.accelerationist_per_heat_asset")
# R-X1: 1 = own heat assets count, 0 = the whole table's
R_ACCEL_HEAT_OWN_ONLY = _rule("agendas.accelerationist_heat_own_only")
R_ACCEL_OTHER = _rule("agendas.accelerationist_other")
R_DECK = RULES.take("deck", N_AGENDAS)  # agenda deck for this table size (D2)
R_N_KINDS = RULES.take("n_kinds")

# the fields of one asset kind (`fbsim.rules.Asset`, booleans as 0/1), a block per kind at
# R_ASSET (`asset_at`)
ASSET = Fields()
A_COUNT = ASSET.take("count")
A_PRICE = ASSET.take("price")
A_INCOME = ASSET.take("income")
A_PPM = ASSET.take("ppm")
A_LEGACY_WARMING = ASSET.take("legacy_warming")
A_LEGACY_SEVERE = ASSET.take("legacy_severe")
A_LEGACY_EXTREME = ASSET.take("legacy_extreme")
A_ACCUSATION_WEIGHT = ASSET.take("accusation_weight")  # 0: no ability
A_COLLAPSE_TIEBREAK = ASSET.take("collapse_tiebreak")
A_FIELDS = {name: i for name, (i, _) in ASSET.slots.items()}
ASSET_STRIDE = ASSET.size

R_ASSET = RULES.take("asset", MAX_KINDS * ASSET_STRIDE)
R_SIZE = RULES.size

# ---------------------------------------------------------------- view vector
VIEW = Fields()
# public (R-I1)
V_DECISION = VIEW.take("decision")  # DP_* of the question asked
V_ROUND = VIEW.take("round")  # 1-based
V_SEAT = VIEW.take("seat")  # the deciding player
V_FIRST_PLAYER = VIEW.take("first_player")
V_DIAL = VIEW.take("dial")
V_POT = VIEW.take("pot")
V_DECK_LEFT = VIEW.take("deck_left")
V_FLIPPED = VIEW.take("flipped", MAX_TOKENS)
V_MARKET = VIEW.take("market", MAX_MARKET)  # kind per slot, -1 when empty
V_OWNED = VIEW.take("owned", MAX_PLAYERS * MAX_KINDS)  # by seat and kind: `owned_at`
V_REVEALED_AGENDA = VIEW.take("revealed_agenda", MAX_PLAYERS)  # -1 while hidden
V_OPEN_WORKS_TOTAL = VIEW.take("open_works_total", MAX_PLAYERS)
V_OPEN_COOL_TOTAL = VIEW.take("open_cool_total", MAX_PLAYERS)
V_OPEN_BURN_TOTAL = VIEW.take("open_burn_total", MAX_PLAYERS)
# the latest reveal (this round's once revealed)
V_LAST_OPEN_WORKS = VIEW.take("last_open_works", MAX_PLAYERS)
V_LAST_OPEN_COOL = VIEW.take("last_open_cool", MAX_PLAYERS)
V_LAST_OPEN_BURN = VIEW.take("last_open_burn", MAX_PLAYERS)
V_FOG_COOL_TOTAL = VIEW.take("fog_cool_total")
V_FOG_BURN_TOTAL = VIEW.take("fog_burn_total")
V_LAST_FOG_COOL = VIEW.take("last_fog_cool")
V_LAST_FOG_BURN = VIEW.take("last_fog_burn")
V_REVEALS = VIEW.take("reveals")  # number of reveals so far
V_TABLE_PPM = VIEW.take("table_ppm")  # ongoing ppm of every owned asset at the table (R-W2)
# the Dial after the world turns to come if no chip is added: a memo of the public function
# `fbsim.game.public.world_projection`, which a bot calls; the engines set it STALE whenever
# what it reads changes (the Dial, a token, the table's ppm, the round), and the first bot
# to ask computes it (most engine steps change it, few decisions read it)
V_WORLD_PROJECTION = VIEW.take("world_projection")
# past points, by pointer and target: `points_at`
V_POINTS = VIEW.take("points", MAX_PLAYERS * MAX_PLAYERS)
V_CORNERED_TOTAL = VIEW.take("cornered_total", MAX_PLAYERS)
V_PAID_TOTAL = VIEW.take("paid_total", MAX_PLAYERS)  # times a cornered player chose to pay
V_ELIGIBLE = VIEW.take("eligible", MAX_PLAYERS)  # 1 if the seat may be pointed at now (R-A1)
V_ACCUSERS = VIEW.take("accusers")  # when cornered: how many pointed at me (R-A4)
V_CORNER_COST = VIEW.take("corner_cost")  # when cornered: what paying costs
# private (R-I2): each field holds one slot per seat, like every per-seat field (seat s's
# at F + s); a bot reads its own with `fbsim.game.public.mine(V, F)` (V[F + V[V_SEAT]]). The
# reference engine writes only the deciding seat's slots (the others stay 0); the kernel keeps
# every seat's in place, so that asking a seat copies nothing, and no bot reads another
# seat's (`tests/test_fast_build.py` changes the rivals' slots and checks every answer; the
# engines' agreement would break too).
V_PRIVATE_START = VIEW.size
V_MY_CAPITAL = VIEW.take("my_capital", MAX_PLAYERS)
V_MY_AGENDA = VIEW.take("my_agenda", MAX_PLAYERS)
V_MY_MASKS = VIEW.take("my_masks", MAX_PLAYERS)
V_MY_WORKS = VIEW.take("my_works", MAX_PLAYERS)  # this round's commitment, once made
V_MY_COOL = VIEW.take("my_cool", MAX_PLAYERS)
V_MY_BURN = VIEW.take("my_burn", MAX_PLAYERS)
V_MY_MASKED_COOL = VIEW.take("my_masked_cool", MAX_PLAYERS)
V_MY_MASKED_BURN = VIEW.take("my_masked_burn", MAX_PLAYERS)
V_MY_FREE_WORKS = VIEW.take("my_free_works", MAX_PLAYERS)  # WORKS not yet used this round
V_MY_BOUGHT = VIEW.take("my_bought", MAX_PLAYERS)  # purchases made in this market turn so far
# what my masked burns put in the pot this round
V_MY_FOG_IN_ROUND = VIEW.take("my_fog_in_round", MAX_PLAYERS)
V_MY_FOG_IN_TOTAL = VIEW.take("my_fog_in_total", MAX_PLAYERS)
V_MY_REQUESTED_TOTAL = VIEW.take("my_requested_total", MAX_PLAYERS)
V_MY_RECEIVED_TOTAL = VIEW.take("my_received_total", MAX_PLAYERS)
V_MY_MASKED_COOL_TOTAL = VIEW.take("my_masked_cool_total", MAX_PLAYERS)
V_MY_MASKED_BURN_TOTAL = VIEW.take("my_masked_burn_total", MAX_PLAYERS)
# a word the seat's bot keeps for the game (`fbsim.game.public.memo`): a value the bot
# derives from its own view and parameters alone that stays the same for the whole game (the
# `field` bot's component); NO_MEMO at the start of a game
V_MY_MEMO = VIEW.take("my_memo", MAX_PLAYERS)
V_SIZE = VIEW.size
PRIVATE = tuple(range(V_PRIVATE_START, V_SIZE, MAX_PLAYERS))  # every V_MY_* field
# the private fields of one round, 0 again once it ends (the kernel's `end_round`)
ROUND_PRIVATE = (V_MY_WORKS, V_MY_COOL, V_MY_BURN, V_MY_MASKED_COOL, V_MY_MASKED_BURN,
                 V_MY_FOG_IN_ROUND, V_MY_BOUGHT)


# ---------------------------------------------------------------- the fields of two indices
# The one place each computes its index: plain Python (this module imports no numba), compiled
# inline where compiled code calls it (`fbsim.game.jit` registers every one of ACCESSORS).


def asset_at(kind, field):
    """The index in the rules vector of field `field` (A_*) of asset kind `kind`."""
    return R_ASSET + kind * ASSET_STRIDE + field


def owned_at(seat, kind):
    """The index in the view of how many assets of `kind` seat `seat` owns."""
    return V_OWNED + seat * MAX_KINDS + kind


def points_at(pointer, target):
    """The index in the view of the points seat `pointer` gave seat `target` so far."""
    return V_POINTS + pointer * MAX_PLAYERS + target


ACCESSORS = (asset_at, owned_at, points_at)
