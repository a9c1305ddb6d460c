"""Agenda leakage: how well public information names each seat's Agenda, round by round.

The observer is the project's best: the public-evidence score of `fbsim.policies.beliefs`
(the one the `planner` bot points with), computed from what anyone at the table saw (R-I1):
every reveal's open chips, every purchase, every Accusation and its outcome, every revealed
Agenda. After each round the observer ranks the seats by that score and names the top seat
the Accelerationist, the bottom seat a Steward and the seat ranked second an Opportunist; the
leakage of an Agenda after round r is the share of games in which the seat named holds that
Agenda (among games still running after round r), against chance (the Agenda's share of the
seats, from the deck). Near chance: the Agenda stays hidden; near 1: the table can read it.

The reference engine's event log carries exactly the public record, so this replays a sample
of games there (a few thousand games are plenty for intervals of a few points).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fbsim.experiments.metrics.stats import wilson
from fbsim.game import layout as L
from fbsim.lineup import Lineup
from fbsim.policies.beliefs import accel_score
from fbsim.rules import Rules, rules_vector

NAMED = {"accelerationist": 0, "opportunist": 1, "steward": -1}  # rank named, top first


def _public_view() -> np.ndarray:
    V = np.zeros(L.V_SIZE, dtype=np.int64)
    V[L.V_REVEALED_AGENDA:L.V_REVEALED_AGENDA + L.MAX_PLAYERS] = -1
    return V


def _apply(V: np.ndarray, event, kinds: dict[str, int]) -> None:
    """Add one public event to the observer's view (R-I1)."""
    d = event.data
    if event.step == "reveal" and event.kind == "reveal":  # R-V1: open chips by owner
        for s, (_works, cool, burn) in enumerate(d["open"]):
            V[L.V_OPEN_COOL_TOTAL + s] += cool
            V[L.V_OPEN_BURN_TOTAL + s] += burn
    elif event.step == "market" and event.kind == "buy":
        V[L.owned_at(d["seat"], kinds[d["asset"]])] += 1
    elif event.step == "accusation" and event.kind == "reveal":  # R-A4
        V[L.V_REVEALED_AGENDA + d["seat"]] = L.AGENDA_NAMES.index(d["agenda"])
    elif event.step == "accusation" and event.kind == "pay":
        V[L.V_PAID_TOTAL + d["seat"]] += 1


def named_seats(R: np.ndarray, V: np.ndarray, players: int) -> dict[str, int]:
    """The seat the observer names for each Agenda (ties: the lower seat)."""
    scores = np.array([accel_score(R, V, s) for s in range(players)])
    order = sorted(range(players), key=lambda s: (-scores[s], s))
    return {a: order[k] for a, k in NAMED.items()}


def leakage(rules: Rules, lineup: Lineup | None = None, seed: int = 0, games: int = 2000,
            first: int = 0) -> pd.DataFrame:
    """One row per Agenda and round: games (running, with the Agenda dealt), named
    correctly, rate with its 95% interval, chance on the same games."""
    from fbsim.reference.engine import play_game

    n = rules.players
    R = rules_vector(rules, n)
    kinds = {name: k for k, name in enumerate(rules.asset_names)}
    rounds = rules.rounds
    hits = np.zeros((len(NAMED), rounds), dtype=np.int64)
    seen = np.zeros((len(NAMED), rounds), dtype=np.int64)  # running, the Agenda at the table
    chance = np.zeros((len(NAMED), rounds))
    for g in range(first, first + games):
        rec = play_game(rules, lineup, seed, g, events=True)
        agendas = [s.agenda for s in rec.seats]
        V = _public_view()
        by_round: dict[int, list] = {}
        for e in rec.events:
            by_round.setdefault(e.round, []).append(e)
        for r in range(1, rounds + 1):
            for e in by_round.get(r, []):
                _apply(V, e, kinds)
            if r > rec.rounds_played or (r == rec.rounds_played and rec.end != "survived"):
                break  # the game ended in this round: no table left to read it
            for i, (a, seat) in enumerate(named_seats(R, V, n).items()):
                held = agendas.count(a)
                if held:
                    seen[i, r - 1] += 1
                    hits[i, r - 1] += agendas[seat] == a
                    chance[i, r - 1] += held / n
    rows = []
    for i, a in enumerate(NAMED):
        for r in range(rounds):
            if seen[i, r] == 0:
                continue
            rate, lo, hi = wilson(int(hits[i, r]), int(seen[i, r]))
            rows.append({"players": n, "agenda": a, "round": r + 1, "games": int(seen[i, r]),
                         "named": int(hits[i, r]), "rate": rate, "ci_low": lo, "ci_high": hi,
                         "chance": chance[i, r] / seen[i, r]})
    return pd.DataFrame(rows)
