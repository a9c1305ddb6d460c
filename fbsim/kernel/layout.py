"""The kernel's state layout, apart from its step functions.

Each game in flight holds two int64 rows, allocated once per chunk of games and reused:

- its public view `V` (layout `fbsim.game.layout.V_*`), kept up to date as the game goes, into
  which the deciding seat's private fields are written just before a bot is asked (the same
  vector the reference engine builds from scratch);
- its hidden state `S` (indices `S_*` below): Capital, Agendas, Masks, commitments, claims.

Per-game results go to one output array per shape of the record (`fbsim.game.record`).
"""

from __future__ import annotations

from fbsim.game import layout as L
from fbsim.game.record import GAME_FIELDS

KERNEL_VERSION = 3  # 2: the Dial at the end of every round (records and aggregates); 3: a
# seat's `bot` (records, per-bot counters) is its lineup entry, with that entry's parameters

P6 = L.MAX_PLAYERS
_take = L.Fields().take

# Each seat's private fields (R-I2) form one block per seat, in the order of the view's
# private section (V_MY_CAPITAL .. V_MY_MASKED_BURN_TOTAL), so that writing a seat's private
# view is one contiguous copy: seat s's field F is S[F + s * PRIV] (every other per-seat
# field below is S[F + s]). This round's commitment (S_WORKS .. S_MBURN) is 0 until the seat
# commits (`end_round` clears it), as the view shows it.
PRIV = L.V_MY_MASKED_BURN_TOTAL - L.V_PRIVATE_START + 1
S_PRIVATE = _take(P6 * PRIV)


def _private(view_field: int) -> int:
    """The S field of a private view field (seat 0's; seat s's is + s * PRIV)."""
    return S_PRIVATE + view_field - L.V_PRIVATE_START


S_CAPITAL = _private(L.V_MY_CAPITAL)
S_AGENDA = _private(L.V_MY_AGENDA)
S_MASKS = _private(L.V_MY_MASKS)
S_WORKS = _private(L.V_MY_WORKS)  # this round's commitment
S_COOL = _private(L.V_MY_COOL)
S_BURN = _private(L.V_MY_BURN)
S_MCOOL = _private(L.V_MY_MASKED_COOL)
S_MBURN = _private(L.V_MY_MASKED_BURN)
S_FREE_WORKS = _private(L.V_MY_FREE_WORKS)
S_BOUGHT = _private(L.V_MY_BOUGHT)
S_FOG_IN_ROUND = _private(L.V_MY_FOG_IN_ROUND)
S_FOG_IN = _private(L.V_MY_FOG_IN_TOTAL)
S_FOG_REQ = _private(L.V_MY_REQUESTED_TOTAL)
S_FOG_REC = _private(L.V_MY_RECEIVED_TOTAL)
S_COOL_MASKED_T = _private(L.V_MY_MASKED_COOL_TOTAL)
S_BURN_MASKED_T = _private(L.V_MY_MASKED_BURN_TOTAL)
S_BOT = _take(P6)  # the bot (dispatch id)
S_ENTRY = _take(P6)  # the lineup entry: its parameter row, the records' `bot`
S_REVEALED = _take(P6)
S_WORKS_T = _take(P6)
S_COOL_OPEN_T = _take(P6)
S_BURN_OPEN_T = _take(P6)
S_POINTED = _take(P6)
S_REQUEST = _take(P6)  # this round's Fog request / Accusation target (scratch)
S_WEIGHT = _take(P6)  # Accusation weight on each seat (scratch)
S_ACCUSERS = _take(P6)
S_LEGACY = _take(P6)
S_INCOME = _take(P6)  # income of the assets each seat owns (R-W1)
S_DIAL_ROUND = _take(L.MAX_ROUNDS)  # the Dial as each round ended (final Dial after the end)
S_N = _take()
S_DECK_POS = _take()
S_DECK_LEN = _take()
S_END = _take()
S_OVER = _take()
S_WINNER = _take()
S_POT_LOST = _take()
S_ERROR = _take()  # 0, or an illegal decision: code * 1000 + round * 10 + seat
S_SIZE = _take(0)

# S_ERROR codes: which rule an illegal bot decision broke
ERR_COMMIT = 1  # R-C1..R-C3
ERR_FOG = 2  # R-V5
ERR_MARKET = 3  # R-V6
ERR_ACCUSE = 4  # R-A1
ERR_CORNERED = 5  # R-A4
ERR_RULES = {ERR_COMMIT: "R-C1..R-C3", ERR_FOG: "R-V5", ERR_MARKET: "R-V6",
             ERR_ACCUSE: "R-A1", ERR_CORNERED: "R-A4"}

# the output arrays of a run, one per shape of the record (fbsim.game.record): game fields
# [games, G_COLUMNS], seat fields [games, SEAT_FIELDS, MAX_PLAYERS], per-seat-per-kind fields
# [games, SEAT_KIND_FIELDS, MAX_PLAYERS, MAX_KINDS], per-round fields [games, ROUND_FIELDS,
# MAX_ROUNDS]. The game array has one more column than the record's game fields: S_ERROR.
G_ERROR = len(GAME_FIELDS)
G_COLUMNS = G_ERROR + 1


def seat_index(field: int, seat: int) -> int:
    """The index in S of a per-seat field for one seat (a private field's stride is PRIV)."""
    private = S_PRIVATE <= field < S_PRIVATE + PRIV
    return field + seat * (PRIV if private else 1)
