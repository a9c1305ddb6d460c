"""The kernel's state layout, apart from its step functions.

Each game in flight holds two int64 rows, allocated once per chunk of games and reused:

- its public view `V` (layout `fbsim.game.layout.V_*`), kept up to date as the game goes, into
  which the deciding seat's private fields are written just before a bot is asked (the same
  vector the reference engine builds from scratch);
- its hidden state `S` (indices `S_*` below): Capital, Agendas, Masks, commitments, claims.

Per-game results go to one output array per record field (struct of arrays over games).
"""

from __future__ import annotations

from fbsim.game import layout as L

KERNEL_VERSION = 3  # 2: the Dial at the end of every round (records and aggregates); 3: a
# seat's `bot` (records, per-bot counters) is its lineup entry, with that entry's parameters

P6 = L.MAX_PLAYERS
_take = L.Fields().take

S_CAPITAL = _take(P6)
S_AGENDA = _take(P6)
S_BOT = _take(P6)  # the bot (dispatch id)
S_ENTRY = _take(P6)  # the lineup entry: its parameter row, the records' `bot`
S_MASKS = _take(P6)
S_REVEALED = _take(P6)
S_WORKS_T = _take(P6)
S_COOL_OPEN_T = _take(P6)
S_COOL_MASKED_T = _take(P6)
S_BURN_OPEN_T = _take(P6)
S_BURN_MASKED_T = _take(P6)
S_FOG_IN = _take(P6)
S_FOG_REQ = _take(P6)
S_FOG_REC = _take(P6)
S_POINTED = _take(P6)
S_WORKS = _take(P6)  # this round's commitment
S_COOL = _take(P6)
S_BURN = _take(P6)
S_MCOOL = _take(P6)
S_MBURN = _take(P6)
S_COMMITTED = _take(P6)  # 1 once this round's commitment is made
S_FREE_WORKS = _take(P6)
S_BOUGHT = _take(P6)
S_FOG_IN_ROUND = _take(P6)
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

# game-level record columns (one int64 array each over games)
GAME_FIELDS = ("players", "rounds_played", "end", "final_dial", "band", "winner",
               "first_player_last", "tokens_flipped", "pot_left")
# per-seat record columns (an int64 array [games, MAX_PLAYERS] each); assets are separate
SEAT_FIELDS = ("agenda", "bot", "capital", "legacy", "works", "cool_open", "cool_masked",
               "burn_open", "burn_masked", "masks_left", "fog_in", "fog_requested",
               "fog_received", "pointed_at", "cornered", "revealed", "paid")

# ------------------------------------------------------------------ aggregate counters
# records=False: one int64 row of counters per chunk of games, summed at the end, so memory
# does not grow with the number of games.
MAX_BOTS = 16  # counters per lineup entry (N_ENTRIES of them are used)
DIAL_HIST_LO = 0  # the Dial histogram has one bin per ppm from here (clipped at both ends)
DIAL_BINS = 1024
_take = L.Fields().take
AC_GAMES = _take()
AC_END = _take(3)  # by L.END_*
AC_BAND = _take(4)  # by L.BAND
AC_WIN_AGENDA = _take(3)
AC_NOBODY = _take()  # everyone loses
AC_WIN_SEAT = _take(P6)
AC_WIN_BOT = _take(MAX_BOTS)
AC_SEATS_BOT = _take(MAX_BOTS)  # seats played by each bot (denominator of its win rate)
AC_DEALT = _take(3)  # seats dealt each Agenda
AC_GAMES_WITH_AGENDA = _take(3)  # games with at least one seat of the Agenda
AC_LEGACY_SUM = _take(3)  # by Agenda, survival games only
AC_LEGACY_N = _take(3)
AC_CAPITAL_SUM = _take(3)
AC_ROUNDS_SUM = _take()
AC_DIAL_SUM = _take()
AC_DIAL_SQ_SUM = _take()
AC_MASKS_USED = _take()
AC_FOG_IN = _take()
AC_FOG_REQUESTED = _take()
AC_FOG_RECEIVED = _take()
AC_OVERCLAIM = _take()  # sum over seats of max(0, received - put in)
AC_OVERCLAIMERS = _take()  # seats that received more than they put in
AC_DIAL_HIST = _take(DIAL_BINS)
# the Dial at the end of round r (index r-1; a finished game counts at its final Dial): one
# histogram per round, DIAL_BINS bins from DIAL_HIST_LO, as the final Dial's
AC_DIAL_ROUND_HIST = _take(L.MAX_ROUNDS * DIAL_BINS)
AC_SIZE = _take(0)
del _take
