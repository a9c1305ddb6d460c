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

LAYOUT_VERSION = 7  # in every output's provenance; what each change was: the commit log

MAX_PLAYERS = 6
MAX_ROUNDS = 16
MAX_TOKENS = 8
MAX_KINDS = 8
MAX_MARKET = 8
STALE = -(1 << 62)  # V_WORLD_PROJECTION not computed since what it reads changed
NO_MEMO = -1  # V_MY_MEMO: nothing kept yet
MAX_BOT_PARAMS = 128  # the field bot: 6 weights + 6 planners of 18

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



class Fields:
    """Hands out consecutive indices of a flat vector: `take(n)` reserves n slots."""

    def __init__(self, start: int = 0):
        self.size = start

    def take(self, n: int = 1) -> int:
        start = self.size
        self.size += n
        return start


# ---------------------------------------------------------------- rules vector
_take = Fields().take

R_PLAYERS = _take()
R_ROUNDS = _take()
R_AGENTS = _take()
R_CAPITAL = _take()
R_STAGGER = _take()
R_MASKS = _take()
R_FIRST_PLAYER = _take()  # D9
R_BASELINE_OFFSET = _take()
R_BASELINE = _take(MAX_ROUNDS)  # D1, for this table size, without the offset
R_DIAL_START = _take()
R_COLLAPSE = _take()  # R-W4, R-V2, R-E2
R_SEVERE = _take()  # R-E2: first ppm of Severe
R_EXTREME = _take()  # R-E2: first ppm of Extreme
R_FLOOR_ENABLED = _take()  # D4
R_FLOOR = _take()
R_INCOME_BEFORE_COLLAPSE = _take()  # R-W1 before R-W4
R_N_TOKENS = _take()
R_TOKEN_THRESHOLD = _take(MAX_TOKENS)
R_TOKEN_START_FLIPPED = _take(MAX_TOKENS)
R_TOKEN_PENALTY = _take()
R_FLIP_WHEN = _take()  # R-W3: FLIP_REACHING (>=) or FLIP_CROSSING (>)
R_COOL_PPM = _take()
R_BURN_PPM = _take()
R_COOL_COST = _take()
R_BURN_PAY = _take()
R_BURN_PAY_REVEALED = _take()  # R-A5
R_FOG_PER_MASKED_BURN = _take()  # R-V3
R_FOG_PARTIAL_FILL = _take()  # D5
R_FOG_CARRY_OVER = _take()  # D6
R_MARKET_SIZE = _take()
R_PURCHASE_LABOUR = _take()
R_WAGE = _take()
R_ACCUSE_AFTER = _take(MAX_ROUNDS)  # 1 after round r (index r-1)
R_POINT_WEIGHT = _take()
R_PAY_PER_ACCUSER = _take()
R_MEDIA_STACKS = _take()  # D7
R_REVEALED_ACCUSABLE = _take()  # R-A1/R-A5: 1 = a revealed Steward/Opportunist is eligible
R_CAPITAL_PER_LEGACY = _take()
R_COLLAPSE_MIN_CAPITAL = _take()
R_TIEBREAK_FIRST_PLAYER = _take()  # D8: TIEBREAK_LAST_ROUND, _ROUND_1 or _AFTER_ROTATION
R_STEWARD_BASE = _take()
R_STEWARD_PER_STEP = _take()
R_STEWARD_STEP = _take()
R_OPPORTUNIST_SEVERE = _take()
R_ACCEL_EXTREME = _take()
R_ACCEL_PER_HEAT_ASSET = _take()
R_ACCEL_HEAT_OWN_ONLY = _take()  # R-X1: 1 = own heat assets count, 0 = the whole table's
R_ACCEL_OTHER = _take()
R_DECK = _take(N_AGENDAS)  # agenda deck for this table size (D2)
R_N_KINDS = _take()
R_ASSET = _take(MAX_KINDS * 9)

# fields of one asset kind, at R_ASSET + kind * ASSET_STRIDE + A_*
A_COUNT = 0
A_PRICE = 1
A_INCOME = 2
A_PPM = 3
A_LEGACY_WARMING = 4
A_LEGACY_SEVERE = 5
A_LEGACY_EXTREME = 6
A_ACCUSATION_WEIGHT = 7  # 0: no ability
A_COLLAPSE_TIEBREAK = 8
ASSET_STRIDE = 9
# each field of an asset kind (`fbsim.rules.Asset`) at its A_* offset; booleans as 0/1
A_FIELDS = {
    "count": A_COUNT,
    "price": A_PRICE,
    "income": A_INCOME,
    "ppm": A_PPM,
    "legacy_warming": A_LEGACY_WARMING,
    "legacy_severe": A_LEGACY_SEVERE,
    "legacy_extreme": A_LEGACY_EXTREME,
    "accusation_weight": A_ACCUSATION_WEIGHT,
    "collapse_tiebreak": A_COLLAPSE_TIEBREAK,
}

R_SIZE = _take(0)

# Where each scalar field of the rules (`fbsim.rules.Rules`, by dotted path) goes in the rules
# vector; booleans as 0/1, a choice as the index of its value among the field's choices.
# `fbsim.rules.rules_vector` fills these and documents the few fields packed otherwise (the
# table size, per-table-size tables, tokens, Accusation rounds, the assets); a test checks
# that every field of the rules is one or the other.
R_FIELDS = {
    "rounds": R_ROUNDS,
    "agents": R_AGENTS,
    "capital": R_CAPITAL,
    "stagger": R_STAGGER,
    "masks": R_MASKS,
    "baseline_offset": R_BASELINE_OFFSET,
    "income_before_collapse": R_INCOME_BEFORE_COLLAPSE,
    "dial.start": R_DIAL_START,
    "dial.collapse": R_COLLAPSE,
    "dial.severe": R_SEVERE,
    "dial.extreme": R_EXTREME,
    "dial.floor_enabled": R_FLOOR_ENABLED,
    "dial.floor": R_FLOOR,
    "tipping.penalty": R_TOKEN_PENALTY,
    "tipping.flip_when": R_FLIP_WHEN,
    "jobs.cool_ppm": R_COOL_PPM,
    "jobs.burn_ppm": R_BURN_PPM,
    "jobs.cool_cost": R_COOL_COST,
    "jobs.burn_pay": R_BURN_PAY,
    "jobs.burn_pay_revealed": R_BURN_PAY_REVEALED,
    "jobs.fog_per_masked_burn": R_FOG_PER_MASKED_BURN,
    "fog.partial_fill": R_FOG_PARTIAL_FILL,
    "fog.carry_over": R_FOG_CARRY_OVER,
    "market.size": R_MARKET_SIZE,
    "market.purchase_labour": R_PURCHASE_LABOUR,
    "market.wage": R_WAGE,
    "accusation.point_weight": R_POINT_WEIGHT,
    "accusation.pay_per_accuser": R_PAY_PER_ACCUSER,
    "accusation.media_stacks": R_MEDIA_STACKS,
    "accusation.revealed_accusable": R_REVEALED_ACCUSABLE,
    "scoring.capital_per_legacy": R_CAPITAL_PER_LEGACY,
    "scoring.collapse_min_capital": R_COLLAPSE_MIN_CAPITAL,
    "scoring.tiebreak_first_player": R_TIEBREAK_FIRST_PLAYER,
    "agendas.steward_base": R_STEWARD_BASE,
    "agendas.steward_per_step": R_STEWARD_PER_STEP,
    "agendas.steward_step": R_STEWARD_STEP,
    "agendas.opportunist_severe": R_OPPORTUNIST_SEVERE,
    "agendas.accelerationist_extreme": R_ACCEL_EXTREME,
    "agendas.accelerationist_per_heat_asset": R_ACCEL_PER_HEAT_ASSET,
    "agendas.accelerationist_heat_own_only": R_ACCEL_HEAT_OWN_ONLY,
    "agendas.accelerationist_other": R_ACCEL_OTHER,
}

# ---------------------------------------------------------------- view vector
_take = Fields().take
# public (R-I1)
V_DECISION = _take()  # DP_* of the question asked
V_ROUND = _take()  # 1-based
V_SEAT = _take()  # the deciding player
V_FIRST_PLAYER = _take()
V_DIAL = _take()
V_POT = _take()
V_DECK_LEFT = _take()
V_FLIPPED = _take(MAX_TOKENS)
V_MARKET = _take(MAX_MARKET)  # kind per slot, -1 when empty
V_OWNED = _take(MAX_PLAYERS * MAX_KINDS)  # seat * MAX_KINDS + kind
V_REVEALED_AGENDA = _take(MAX_PLAYERS)  # -1 while hidden
V_OPEN_WORKS_TOTAL = _take(MAX_PLAYERS)
V_OPEN_COOL_TOTAL = _take(MAX_PLAYERS)
V_OPEN_BURN_TOTAL = _take(MAX_PLAYERS)
V_LAST_OPEN_WORKS = _take(MAX_PLAYERS)  # the latest reveal (this round's once revealed)
V_LAST_OPEN_COOL = _take(MAX_PLAYERS)
V_LAST_OPEN_BURN = _take(MAX_PLAYERS)
V_FOG_COOL_TOTAL = _take()
V_FOG_BURN_TOTAL = _take()
V_LAST_FOG_COOL = _take()
V_LAST_FOG_BURN = _take()
V_REVEALS = _take()  # number of reveals so far
V_TABLE_PPM = _take()  # ongoing ppm of every owned asset at the table (R-W2)
# the Dial after the world turns to come if no chip is added: a memo of the public function
# `fbsim.game.public.world_projection`, which a bot calls; the engines set it STALE whenever
# what it reads changes (the Dial, a token, the table's ppm, the round), and the first bot
# to ask computes it (most engine steps change it, few decisions read it)
V_WORLD_PROJECTION = _take()
V_POINTS = _take(MAX_PLAYERS * MAX_PLAYERS)  # past points: pointer * MAX_PLAYERS + target
V_CORNERED_TOTAL = _take(MAX_PLAYERS)
V_PAID_TOTAL = _take(MAX_PLAYERS)  # times a cornered player chose to pay
V_ELIGIBLE = _take(MAX_PLAYERS)  # 1 if the seat may be pointed at now (R-A1)
V_ACCUSERS = _take()  # when cornered: how many pointed at me (R-A4)
V_CORNER_COST = _take()  # when cornered: what paying costs
# private (R-I2): one block per seat, seat s's at V_PRIVATE_START + s * PRIV. The V_MY_*
# indices are seat 0's; a bot reads its own field F as `fbsim.game.public.mine(V, F)`
# (V[F + V[V_SEAT] * PRIV]). The reference engine writes only the deciding seat's block (the
# others stay 0); the kernel keeps every seat's block in place, so that asking a seat copies
# nothing, and no bot reads another seat's block (`tests/test_fast_build.py` changes the
# rivals' blocks and checks every answer; the engines' agreement would break too).
V_PRIVATE_START = _take(0)
V_MY_CAPITAL = _take()
V_MY_AGENDA = _take()
V_MY_MASKS = _take()
V_MY_WORKS = _take()  # this round's commitment, once made
V_MY_COOL = _take()
V_MY_BURN = _take()
V_MY_MASKED_COOL = _take()
V_MY_MASKED_BURN = _take()
V_MY_FREE_WORKS = _take()  # WORKS not yet used for a purchase this round
V_MY_BOUGHT = _take()  # purchases made in this market turn so far
V_MY_FOG_IN_ROUND = _take()  # what my masked burns put in the pot this round
V_MY_FOG_IN_TOTAL = _take()
V_MY_REQUESTED_TOTAL = _take()
V_MY_RECEIVED_TOTAL = _take()
V_MY_MASKED_COOL_TOTAL = _take()
V_MY_MASKED_BURN_TOTAL = _take()
# a word the seat's bot keeps for the game (`fbsim.game.public.memo`): a value the bot
# derives from its own view and parameters alone that stays the same for the whole game (the
# `field` bot's component); NO_MEMO at the start of a game
V_MY_MEMO = _take()
PRIV = _take(0) - V_PRIVATE_START  # one seat's private block
_take((MAX_PLAYERS - 1) * PRIV)  # the other seats' blocks
V_SIZE = _take(0)

del _take
