"""The per-game quantities metrics are built from: compiled functions of one game's record.

Each function is `f(G, SE, j, n, c, a)`: game j of a block of records in the kernel's arrays
(`G` [games, game fields], `SE` [games, seat fields, seats], field positions in
`fbsim.game.record`), the table's size `n` (a constant of the generated measure, so that its
loops over the seats unroll), the block's context `c` (`context`: the Masks dealt, the
round-1 first player, each lineup entry's per-bot row) and the metric's argument `a` (an
Agenda, a seat, a place, a field, a bot row). Each returns an integer: a metric's y or x for
that game (`fbsim.experiments.metrics.definitions` names which, once per metric).

They are compiled and called game by game by the block measure that
`fbsim.experiments.metrics.compiled` generates from the metric declarations, inlined into it
(`fbsim.game.jit.shared_inline`: each is a line or two, not worth a compile of its own); with
`NUMBA_DISABLE_JIT=1` they run as plain Python with the same results.
"""

from __future__ import annotations

import numpy as np

from fbsim.game import layout as L
from fbsim.game.jit import shared_inline
from fbsim.game.record import (
    G_BAND,
    G_END,
    G_WINNER,
    SE_AGENDA,
    SE_BOT,
    SE_CORNERED,
    SE_FOG_IN,
    SE_FOG_RECEIVED,
    SE_LEGACY,
    SE_MASKS_LEFT,
    SE_PAID,
    SE_REVEALED,
)
from fbsim.lineup import N_ENTRIES

# the context vector c
C_MASKS = 0
C_FIRST_PLAYER = 1
C_ROW = 2  # N_ENTRIES values: each lineup entry's per-bot row (-1: none)
C_SIZE = C_ROW + N_ENTRIES


def context(masks: int, first_player: int, rows: np.ndarray) -> np.ndarray:
    c = np.zeros(C_SIZE, dtype=np.int64)
    c[C_MASKS], c[C_FIRST_PLAYER] = masks, first_player
    c[C_ROW:C_ROW + N_ENTRIES] = rows
    return c


# ---------------------------------------------------------------- game fields


@shared_inline
def one(G, SE, j, n, c, a):
    return 1


@shared_inline
def players(G, SE, j, n, c, a):
    return n


@shared_inline
def game_field(G, SE, j, n, c, a):
    """Game field a."""
    return G[j, a]


@shared_inline
def game_field_squared(G, SE, j, n, c, a):
    return G[j, a] * G[j, a]


@shared_inline
def ended(G, SE, j, n, c, a):
    """1 if the game ended in way a (fbsim.game.layout.END_NAMES)."""
    return 1 if G[j, G_END] == a else 0


@shared_inline
def collapsed(G, SE, j, n, c, a):
    """1 if the world collapsed (R-W4, R-V2)."""
    return 1 if G[j, G_END] != L.END_SURVIVED else 0


@shared_inline
def final_band(G, SE, j, n, c, a):
    """1 if the final Dial is in band a (R-E2)."""
    return 1 if G[j, G_BAND] == a else 0


# ---------------------------------------------------------------- who won


@shared_inline
def nobody_won(G, SE, j, n, c, a):
    return 1 if G[j, G_WINNER] < 0 else 0


@shared_inline
def winner_agenda(G, SE, j, n, c, a):
    """1 if the winner holds Agenda a."""
    w = G[j, G_WINNER]
    return 1 if w >= 0 and SE[j, SE_AGENDA, w] == a else 0


@shared_inline
def winner_seat(G, SE, j, n, c, a):
    return 1 if G[j, G_WINNER] == a else 0


@shared_inline
def winner_place(G, SE, j, n, c, a):
    """1 if the winner sits a places clockwise from the round-1 first player (R-S3, D9)."""
    s = c[C_FIRST_PLAYER] + a  # both below the table size: no division
    return 1 if G[j, G_WINNER] == (s - n if s >= n else s) else 0


@shared_inline
def winner_row(G, SE, j, n, c, a):
    """1 if the winner's lineup entry is counted in per-bot row a."""
    w = G[j, G_WINNER]
    return 1 if w >= 0 and c[C_ROW + SE[j, SE_BOT, w]] == a else 0


# ---------------------------------------------------------------- a player's chance, by deal
# The argument packs an Agenda and a count or a seat: a = DEAL_BASE * k + agenda.

DEAL_BASE = 4  # above the Agendas' codes (0..2)


@shared_inline
def winner_agenda_dealt(G, SE, j, n, c, a):
    """1 if the winner holds Agenda a % DEAL_BASE and exactly a // DEAL_BASE seats hold it."""
    return winner_agenda(G, SE, j, n, c, a % DEAL_BASE) if seats_dealt(
        G, SE, j, n, c, a % DEAL_BASE) == a // DEAL_BASE else 0


@shared_inline
def seats_dealt_if(G, SE, j, n, c, a):
    """The seats holding Agenda a % DEAL_BASE when there are exactly a // DEAL_BASE, else 0."""
    k = seats_dealt(G, SE, j, n, c, a % DEAL_BASE)
    return k if k == a // DEAL_BASE else 0


@shared_inline
def seat_won_as(G, SE, j, n, c, a):
    """1 if seat a // DEAL_BASE holds Agenda a % DEAL_BASE and wins (R-E3, R-E4)."""
    s = a // DEAL_BASE
    return 1 if G[j, G_WINNER] == s and SE[j, SE_AGENDA, s] == a % DEAL_BASE else 0


@shared_inline
def seat_dealt_as(G, SE, j, n, c, a):
    """1 if seat a // DEAL_BASE holds Agenda a % DEAL_BASE (R-S4)."""
    return 1 if SE[j, SE_AGENDA, a // DEAL_BASE] == a % DEAL_BASE else 0


# ---------------------------------------------------------------- sums over seats


@shared_inline
def seat_sum(G, SE, j, n, c, a):
    """Seat field a summed over the seats."""
    t = 0
    for s in range(n):
        t += SE[j, a, s]
    return t


@shared_inline
def seats_dealt(G, SE, j, n, c, a):
    """Seats holding Agenda a (R-S4)."""
    t = 0
    for s in range(n):
        if SE[j, SE_AGENDA, s] == a:
            t += 1
    return t


@shared_inline
def seats_row(G, SE, j, n, c, a):
    """Seats whose lineup entry is counted in per-bot row a."""
    t = 0
    for s in range(n):
        if c[C_ROW + SE[j, SE_BOT, s]] == a:
            t += 1
    return t


@shared_inline
def masks_used(G, SE, j, n, c, a):
    """Masks used, all seats (R-C2)."""
    t = 0
    for s in range(n):
        t += c[C_MASKS] - SE[j, SE_MASKS_LEFT, s]
    return t


@shared_inline
def overclaimed(G, SE, j, n, c, a):
    """Capital received from the pot beyond the seat's own payments into it, summed (R-V5)."""
    t = 0
    for s in range(n):
        d = SE[j, SE_FOG_RECEIVED, s] - SE[j, SE_FOG_IN, s]
        if d > 0:
            t += d
    return t


@shared_inline
def overclaimers(G, SE, j, n, c, a):
    """Seats that received more from the pot than they paid into it."""
    t = 0
    for s in range(n):
        if SE[j, SE_FOG_RECEIVED, s] > SE[j, SE_FOG_IN, s]:
            t += 1
    return t


@shared_inline
def agenda_sum(SE, j, n, field, agenda):
    """Seat field `field` summed over the seats (of n) holding Agenda `agenda` (a helper of
    the terms below, not a term)."""
    t = 0
    for s in range(n):
        if SE[j, SE_AGENDA, s] == agenda:
            t += SE[j, field, s]
    return t


@shared_inline
def accelerationist_sum(G, SE, j, n, c, a):
    """Seat field a summed over the Accelerationists' seats."""
    return agenda_sum(SE, j, n, a, L.ACCELERATIONIST)


@shared_inline
def revealed_when_cornered(G, SE, j, n, c, a):
    """Cornerings answered by a reveal, all seats (R-A4: reveal or pay)."""
    t = 0
    for s in range(n):
        t += SE[j, SE_CORNERED, s] - SE[j, SE_PAID, s]
    return t


@shared_inline
def accelerationist_dealt(G, SE, j, n, c, a):
    """1 if some seat holds the Accelerationist Agenda."""
    for s in range(n):
        if SE[j, SE_AGENDA, s] == L.ACCELERATIONIST:
            return 1
    return 0


@shared_inline
def accelerationist_revealed(G, SE, j, n, c, a):
    """1 if an Accelerationist's Agenda is face up at the end."""
    for s in range(n):
        if SE[j, SE_AGENDA, s] == L.ACCELERATIONIST and SE[j, SE_REVEALED, s] == 1:
            return 1
    return 0


@shared_inline
def survivor_legacy(G, SE, j, n, c, a):
    """Legacy of the seats holding Agenda a, summed, when the world survived (R-E4)."""
    if G[j, G_BAND] == L.COLLAPSE:
        return 0
    return agenda_sum(SE, j, n, SE_LEGACY, a)


@shared_inline
def survivor_seats(G, SE, j, n, c, a):
    """Seats holding Agenda a when the world survived."""
    if G[j, G_BAND] == L.COLLAPSE:
        return 0
    return seats_dealt(G, SE, j, n, c, a)
