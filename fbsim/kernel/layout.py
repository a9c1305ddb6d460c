"""The kernel's state layout, apart from its step functions.

Each game in flight holds one int64 row `W`, allocated once per chunk of games and reused:

- `W[:V_SIZE]` is the game's view (layout `fbsim.game.layout` V_*), kept up to date as the
  game goes: the public facts, and every seat's private fields in place (seat s's field F at
  F + s, R-I2). Asking a seat writes only the decision and the seat; the bot is handed this
  section and reads its own fields (`fbsim.game.public.mine`);
- `W[V_SIZE:]` is the rest of the hidden state (indices `S_*` below).

Per-game results go to one output array per shape of the record (`fbsim.game.record`).
"""

from __future__ import annotations

from fbsim.game import layout as L
from fbsim.game.record import GAME_FIELDS, SEAT_FIELDS

KERNEL_VERSION = 3  # in every output's provenance; bumped when the records change

P6 = L.MAX_PLAYERS
STATE = L.Fields(L.V_SIZE)  # the hidden state follows the view

# Each seat's private fields (R-I2) are the view's, `W[L.V_MY_F + s]` (`fbsim.game.layout`),
# as every per-seat field below is `W[S_F + s]`. This round's commitment (V_MY_WORKS ..
# V_MY_MASKED_BURN) is 0 until the seat commits (`end_round` clears it), as the view shows it.
S_BOT = STATE.take("bot", P6)  # the bot (dispatch id)
S_ENTRY = STATE.take("entry", P6)  # the lineup entry: its parameter row, the records' `bot`
S_REVEALED = STATE.take("revealed", P6)
S_WORKS_T = STATE.take("works_total", P6)
S_COOL_OPEN_T = STATE.take("cool_open_total", P6)
S_BURN_OPEN_T = STATE.take("burn_open_total", P6)
S_POINTED = STATE.take("pointed", P6)
S_REQUEST = STATE.take("request", P6)  # this round's Fog request / Accusation target (scratch)
S_WEIGHT = STATE.take("weight", P6)  # Accusation weight on each seat (scratch)
S_ACCUSERS = STATE.take("accusers_of", P6)  # how many point at each seat (scratch)
S_LEGACY = STATE.take("legacy", P6)
S_INCOME = STATE.take("income", P6)  # income of the assets each seat owns (R-W1)
# the Dial as each round ended (final Dial after the end)
S_DIAL_ROUND = STATE.take("dial_round", L.MAX_ROUNDS)
S_DECK_POS = STATE.take("deck_pos")
S_DECK_LEN = STATE.take("deck_len")
S_END = STATE.take("end")
S_OVER = STATE.take("over")
S_WINNER = STATE.take("winner")
S_POT_LOST = STATE.take("pot_lost")
S_ERROR = STATE.take("error")  # 0, or an illegal decision: code * 1000 + round * 10 + seat
W_SIZE = STATE.size  # the whole row W, view included

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


# Where the kernel keeps each record field it copies from the state row W
# (`fbsim.kernel.engine.write_record`, which computes the other game fields): game field f is
# W[GAME_SOURCE[f]]; seat s's value of seat field f is W[SEAT_SOURCE[f] + s].
GAME_SOURCE = {"end": S_END, "final_dial": L.V_DIAL, "winner": S_WINNER,
               "first_player_last": L.V_FIRST_PLAYER, "pot_left": S_POT_LOST}
SEAT_SOURCE = {
    "agenda": L.V_MY_AGENDA, "bot": S_ENTRY, "capital": L.V_MY_CAPITAL, "legacy": S_LEGACY,
    "works": S_WORKS_T, "cool_open": S_COOL_OPEN_T, "cool_masked": L.V_MY_MASKED_COOL_TOTAL,
    "burn_open": S_BURN_OPEN_T, "burn_masked": L.V_MY_MASKED_BURN_TOTAL,
    "masks_left": L.V_MY_MASKS, "fog_in": L.V_MY_FOG_IN_TOTAL,
    "fog_requested": L.V_MY_REQUESTED_TOTAL, "fog_received": L.V_MY_RECEIVED_TOTAL,
    "pointed_at": S_POINTED, "cornered": L.V_CORNERED_TOTAL, "revealed": S_REVEALED,
    "paid": L.V_PAID_TOTAL}
# (column of the game array, index in W), the error column included
GAME_SOURCES = tuple((GAME_FIELDS.index(f), w) for f, w in GAME_SOURCE.items()) + (
    (G_ERROR, S_ERROR),)
SEAT_SOURCES = tuple(SEAT_SOURCE[f] for f in SEAT_FIELDS)


def named_state(W) -> dict[str, int | list[int]]:
    """Every field of a state row W by name: the view's (`fbsim.game.layout.VIEW`), then the
    hidden state's (what to print of W in a debugger)."""
    return {**L.VIEW.named(W), **STATE.named(W)}
