"""A player's view (RULES.md section I): what one seat may know, as the int64 view vector.

This is the only door between the game state and a bot. Public facts (R-I1) are copied for
every seat; private facts (R-I2) only for the deciding seat. Nothing of a rival's Agenda
(unless revealed), Capital, Masks, masked chips or Fog claims is ever copied in.
"""

from __future__ import annotations

import numpy as np

from fbsim.game import layout as L
from fbsim.game.legal import accusable
from fbsim.game.public import table_asset_ppm
from fbsim.reference.state import Game


def public_view(g: Game, decision: int) -> np.ndarray:
    """R-I1: the part of the view every seat shares."""
    V = np.zeros(L.V_SIZE, dtype=np.int64)
    V[L.V_DECISION] = decision
    V[L.V_ROUND] = g.round
    V[L.V_SEAT] = -1
    V[L.V_FIRST_PLAYER] = g.first_player
    V[L.V_DIAL] = g.dial
    V[L.V_POT] = g.pot
    V[L.V_DECK_LEFT] = len(g.deck)
    for t, f in enumerate(g.flipped):
        V[L.V_FLIPPED + t] = int(f)
    V[L.V_MARKET:L.V_MARKET + L.MAX_MARKET] = -1
    for m, kind in enumerate(g.market):
        V[L.V_MARKET + m] = kind
    for s, seat in enumerate(g.seats):
        for k, c in enumerate(seat.owned):
            V[L.owned_at(s, k)] = c
        V[L.V_REVEALED_AGENDA + s] = seat.agenda if seat.revealed else -1
        works, cool, burn = g.open_totals[s]
        V[L.V_OPEN_WORKS_TOTAL + s] = works
        V[L.V_OPEN_COOL_TOTAL + s] = cool
        V[L.V_OPEN_BURN_TOTAL + s] = burn
        lw, lc, lb = g.last_open[s]
        V[L.V_LAST_OPEN_WORKS + s] = lw
        V[L.V_LAST_OPEN_COOL + s] = lc
        V[L.V_LAST_OPEN_BURN + s] = lb
        V[L.V_CORNERED_TOTAL + s] = seat.cornered
        V[L.V_PAID_TOTAL + s] = seat.paid
        for t in range(g.n):
            V[L.points_at(s, t)] = g.points[s][t]
    V[L.V_FOG_COOL_TOTAL] = g.fog_cool_total
    V[L.V_FOG_BURN_TOTAL] = g.fog_burn_total
    V[L.V_LAST_FOG_COOL], V[L.V_LAST_FOG_BURN] = g.last_fog
    V[L.V_REVEALS] = g.reveals
    # derived from the public facts above; computed once here rather than in every bot
    V[L.V_TABLE_PPM] = table_asset_ppm(g.R, V)
    V[L.V_WORLD_PROJECTION] = L.STALE  # computed when a bot asks (world_projection)
    return V


def player_view(g: Game, seat: int, decision: int, accusers: int = 0,
                corner_cost: int = 0) -> np.ndarray:
    """The view of `seat` when asked `decision` (one of `fbsim.game.layout.DP_*`)."""
    V = public_view(g, decision)
    me = g.seats[seat]
    V[L.V_SEAT] = seat
    if decision == L.DP_ACCUSE:
        for s, other in enumerate(g.seats):
            # R-A1/R-A5: any other player who is not a revealed Accelerationist (nor, with
            # accusation.revealed_accusable false, revealed at all)
            V[L.V_ELIGIBLE + s] = int(s != seat and accusable(g.R, other.public_agenda()))
    V[L.V_ACCUSERS] = accusers
    V[L.V_CORNER_COST] = corner_cost
    # R-I2: the decider's own hidden state, in its own slot of each private field (the other
    # seats' slots stay 0; a bot reads its own with `fbsim.game.public.mine`)
    own = {L.V_MY_CAPITAL: me.capital, L.V_MY_AGENDA: me.agenda, L.V_MY_MASKS: me.masks,
           L.V_MY_FREE_WORKS: me.free_works, L.V_MY_BOUGHT: me.bought,
           L.V_MY_FOG_IN_ROUND: me.fog_in_round, L.V_MY_FOG_IN_TOTAL: me.fog_in,
           L.V_MY_REQUESTED_TOTAL: me.fog_requested, L.V_MY_RECEIVED_TOTAL: me.fog_received,
           L.V_MY_MASKED_COOL_TOTAL: me.cool_masked, L.V_MY_MASKED_BURN_TOTAL: me.burn_masked,
           L.V_MY_MEMO: L.NO_MEMO}  # a fresh view each decision: the bot computes its memo again
    c = me.commitment
    if c is not None:  # this round's commitment, once made (0 before)
        own.update({L.V_MY_WORKS: c.works, L.V_MY_COOL: c.cool, L.V_MY_BURN: c.burn,
                    L.V_MY_MASKED_COOL: c.masked_cool, L.V_MY_MASKED_BURN: c.masked_burn})
    for field, value in own.items():
        V[field + seat] = value
    return V
