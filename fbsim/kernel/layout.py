"""The kernel's state layout, apart from its step functions.

Each game in flight holds one int64 row `W`, allocated once per chunk of games and reused:

- `W[:V_SIZE]` is the game's view (layout `fbsim.game.layout` V_*), kept up to date as the
  game goes: the public facts, and every seat's private block in place (seat s's field F at
  F + s * PRIV, R-I2). Asking a seat writes only the decision and the seat; the bot is handed
  this section and reads its own block (`fbsim.game.public.mine`);
- `W[V_SIZE:]` is the rest of the hidden state (indices `S_*` below).

Per-game results go to one output array per shape of the record (`fbsim.game.record`).
"""

from __future__ import annotations

from fbsim.game import layout as L
from fbsim.game.record import GAME_FIELDS

KERNEL_VERSION = 3  # in every output's provenance; bumped when the records change

P6 = L.MAX_PLAYERS
PRIV = L.PRIV
_take = L.Fields(L.V_SIZE).take  # the hidden state follows the view

# Each seat's private fields (R-I2) are the view's blocks, `W[L.V_MY_F + s * PRIV]`
# (`fbsim.game.layout`); every other per-seat field below is `W[S_F + s]`. This round's
# commitment (V_MY_WORKS .. V_MY_MASKED_BURN) is 0 until the seat commits (`end_round`
# clears it), as the view shows it.
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
S_DECK_POS = _take()
S_DECK_LEN = _take()
S_END = _take()
S_OVER = _take()
S_WINNER = _take()
S_POT_LOST = _take()
S_ERROR = _take()  # 0, or an illegal decision: code * 1000 + round * 10 + seat
W_SIZE = _take(0)  # the whole row W, view included

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
    """The index in W of a per-seat field for one seat (a private field's stride is PRIV)."""
    private = L.V_PRIVATE_START <= field < L.V_PRIVATE_START + PRIV
    return field + seat * (PRIV if private else 1)
