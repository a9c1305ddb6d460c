"""Beliefs from public information (R-I1): how likely each rival is to hold an Agenda.

A player sees every past reveal (each seat's open WORKS/COOL/BURN totals), every owned asset,
every Accusation and its outcome, and every revealed Agenda (R-I1). The score below weighs
that evidence for "this seat is the Accelerationist" as a log-odds-like sum: open burns and
heat assets (positive ongoing ppm) raise it, open cools and cooling assets lower it, and a
seat that paid to stay hidden when cornered (R-A4) is more suspect. A revealed Agenda is
known outright. The weights are the bots' parameters' business: a bot points at the rival of
highest score when it clears the bot's threshold.

Everything here is `shared` (compiled, also plain Python) and reads only the rules vector and
the deciding player's view, so a bot that uses it still decides from its own view (R-I3).
"""

from __future__ import annotations

from fbsim.game import layout as L
from fbsim.game import shape
from fbsim.game.jit import shared
from fbsim.game.public import asset_field, owned
from fbsim.policies.common import rival_in_turn

KNOWN = 1000  # the score of a seat whose revealed Agenda is the Accelerationist


@shared
def accel_score(R, V, seat):
    """Public evidence that `seat` is an Accelerationist (higher: more likely)."""
    revealed = V[L.V_REVEALED_AGENDA + seat]
    if revealed >= 0:
        return KNOWN if revealed == L.ACCELERATIONIST else -KNOWN
    score = 2 * V[L.V_OPEN_BURN_TOTAL + seat] - V[L.V_OPEN_COOL_TOTAL + seat]
    for k in range(shape.n_kinds(R)):
        ppm = asset_field(R, k, L.A_PPM)
        if ppm > 0:
            score += 3 * owned(V, seat, k)
        elif ppm < 0:
            score -= 2 * owned(V, seat, k)
    score += 2 * V[L.V_PAID_TOTAL + seat]
    return score


@shared
def likeliest_accelerationist(R, V, minimum):
    """The eligible rival (R-A1) of highest `accel_score`, if it is at least `minimum`;
    ties: the earliest in order from the first player; -1 if none."""
    best = -1
    best_score = 0
    for i in range(shape.players(R)):
        s = rival_in_turn(R, V, i)
        if s < 0:
            continue
        sc = accel_score(R, V, s)
        if sc >= minimum and (best < 0 or sc > best_score):
            best = s
            best_score = sc
    return best
