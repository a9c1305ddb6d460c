"""Deviations from a field: what a strong player gains by switching strategy.

Firebreak is won by one player (R-E3, R-E4), so the measure of strong play is a **single
seat's** deviation: one seat plays strategy X whenever it is dealt Agenda A, every other seat
(and that seat, dealt another Agenda) plays the field. Its gain is the seat's win rate over
the games it was dealt A, minus the same seat's win rate in the same games played by the
field (common random numbers: the deal and every draw are the same in both arms). Seats
differ (R-S3: the first player, the order of the market), so the deviating seat is rotated:
seat s deviates on games [s * G, (s + 1) * G) of the seed, and each seat's paired games add
up. The pairs are then independent games, and the gain's interval is the paired score
interval of `fbsim.experiments.metrics.stats.paired_proportions` over them (b: games the
seat wins only as a deviant, c: only in the field, n: the seat-games dealt A).

A **team** deviation (every seat of A switching together, the Agenda's win counted) is the
other measure: what the players of an Agenda gain if they act as one. It is played on the same
games and its gain is the Agenda's win rate difference.

A gain found by a search is a lower bound of what exists: a better deviation may be there
that no search found.

`evaluate` plays a field and any number of deviants (each a `Deviant`) on the same games, on
Dask when given a client (`fbsim.experiments.run.cluster`), and returns the field's own
numbers (`FieldStats`: win rates, a player's chance by the Agenda dealt and by the deal) and
each deviant's `Gain`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from fbsim.experiments.metrics.stats import paired_proportions, wilson
from fbsim.experiments.metrics.tally import Tally
from fbsim.experiments.run.cluster import task_results
from fbsim.experiments.run.runner import POINTS_PER_TASK, NoProgress, Task
from fbsim.experiments.run.spec import Point
from fbsim.game import layout as L
from fbsim.lineup import Entry, Lineup
from fbsim.rules import Rules

SEAT, TEAM = "seat", "team"
MODES = (SEAT, TEAM)


@dataclass(frozen=True)
class Deviant:
    """Agenda `agenda` deviating to `entry`: one seat at a time (`mode` SEAT) or every seat
    of the Agenda together (TEAM)."""

    agenda: str
    entry: Entry
    mode: str = SEAT

    def lineup(self, field: Lineup, seat: int) -> Lineup:
        """The lineup of this deviant on the games where `seat` deviates."""
        if self.mode == TEAM:
            return Lineup({**field.by_agenda, self.agenda: self.entry}, field.seats)
        return Lineup(field.by_agenda, {**field.seats, seat: self.entry})


@dataclass
class Gain:
    """A deviant against the field on the same games. Seat mode: `rate` and `base` are the
    deviating seat's win rate over the seat-games it was dealt the Agenda (`n` of them),
    as a deviant and in the field; team mode: the Agenda's win rate over the `n` games.
    `gain` = rate - base with its paired 95% score interval `ci`; `changed`: the pairs
    whose outcome differs (b + c)."""

    mode: str
    agenda: str
    rate: float
    base: float
    gain: float
    ci: list[float]
    changed: int
    n: int

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class AgendaStats:
    """One Agenda in the field: its win rate (`win_rate`, a share of games, Wilson) and a
    player's chance to win given it was dealt (`player_win_rate`, the wins over the seats
    dealt, delta-method interval), and the latter by the deal (`by_deal`: per number k of
    seats holding it, the games and a player's chance in them)."""

    win_rate: float
    ci: list[float]
    player_win_rate: float
    player_win_ci: list[float]
    by_deal: dict[str, dict] = field(default_factory=dict)


@dataclass
class FieldStats:
    games: int
    agendas: dict[str, AgendaStats]
    collapse: dict
    everyone_loses: dict

    def as_dict(self) -> dict:
        return asdict(self)


def finite(x: float) -> float | None:
    """A number for JSON (NaN, where nothing was counted, as null)."""
    return None if x != x else float(x)


def field_stats(t: Tally) -> FieldStats:
    """The field's numbers from a tally of its games (`search_metrics`)."""
    agendas = {}
    for a in L.AGENDA_NAMES:
        r, lo, hi = wilson(t.total(f"win_{a}"), t.games)
        k = t.index[f"player_win_{a}"]
        p, plo, phi = t.estimate(k)
        deal = {}
        for n in range(1, t.players + 1):
            key = f"player_win_{a}_k{n}"
            seats = t.denominator(key)
            if seats:
                deal[str(n)] = {"games": seats // n, "player_win_rate": t.total(key) / seats}
        agendas[a] = AgendaStats(r, [lo, hi], finite(p), [finite(plo), finite(phi)], deal)

    def share(key: str) -> dict:
        r, lo, hi = wilson(t.total(key), t.games)
        return {"rate": r, "ci": [lo, hi]}

    return FieldStats(t.games, agendas, share("collapse"), share("everyone_loses"))


def seat_gain(agenda: str, tallies: list[Tally]) -> Gain:
    """A seat deviant's gain from its tallies, one per deviating seat (seat s's tally paired
    with the field on seat s's games)."""
    b = c = n = wins = base = 0
    for s, t in enumerate(tallies):
        key = f"seat_win_{s}_{agenda}"
        bs, cs = t.discordant(key)
        b, c, n = b + bs, c + cs, n + t.denominator(key)
        wins, base = wins + t.total(key), base + t.total(key, old=True)
    d, lo, hi, _ = paired_proportions(b, c, n)
    rate = wins / n if n else math.nan
    return Gain(SEAT, agenda, rate, base / n if n else math.nan, d, [lo, hi], b + c, n)


def team_gain(agenda: str, tallies: list[Tally]) -> Gain:
    """A team deviant's gain: the Agenda's win rate against the field's, its games merged."""
    t = tallies[0]
    for other in tallies[1:]:
        t.merge(other)
    key = f"win_{agenda}"
    b, c = t.discordant(key)
    d, lo, hi, _ = paired_proportions(b, c, t.games)
    return Gain(TEAM, agenda, t.total(key) / t.games, t.total(key, old=True) / t.games, d,
                [lo, hi], b + c, t.games)


@dataclass
class Evaluation:
    field: FieldStats  # the field's own numbers, over every range
    gains: list[Gain]  # one per deviant, in order
    games: int  # games played (the field's replays included)


def evaluate(rules: Rules, field_lineup: Lineup, deviants: list[Deviant], seed: int,
             games: int, client=None, progress=None, threads: int | None = None,
             task_games: int | None = None) -> Evaluation:
    """The field and every deviant on games of `seed`: seat s's range [s * games,
    (s + 1) * games) for s in 0..players-1 (a seat deviant deviates at seat s there; a team
    deviant plays every range). Returns the field's numbers over all its games and each
    deviant's gain. On a client the ranges are split into tasks of `task_games`."""
    if games < 1:
        raise ValueError(f"games: at least 1, got {games}")
    n = rules.players
    progress = progress or NoProgress()
    base = Point(0, {"players": n}, rules, field_lineup)
    tasks, owner = [], {}  # point index -> (deviant index, seat)
    index = 1
    for s in range(n):
        pts = []
        for i, d in enumerate(deviants):
            pts.append(Point(index, {"players": n}, rules, d.lineup(field_lineup, s), 0))
            owner[index] = (i, s)
            index += 1
        groups = [pts[i:i + POINTS_PER_TASK] for i in range(0, len(pts), POINTS_PER_TASK)]
        step = task_games or games
        for g, chunk in enumerate(groups or [[]]):
            for first in range(s * games, (s + 1) * games, step):
                m = min(step, (s + 1) * games - first)
                # the field's own tally comes with the first group of each range
                tasks.append(Task(seed, first, m, base, tuple(([base] if g == 0 else [])
                                                              + chunk), threads,
                                  bots=(), metrics="deal"))
    played = sum(t.n * (1 + len([p for p in t.points if p.index != 0])) for t in tasks)
    progress.start(sum(t.games for t in tasks), "games")
    field_tally = None
    per = [[None] * n for _ in deviants]
    try:
        for _, result in task_results(client, progress)(tasks):
            for idx, t in result.items():
                if idx == 0:
                    field_tally = t if field_tally is None else field_tally.merge(t)
                    continue
                i, s = owner[idx]
                per[i][s] = t if per[i][s] is None else per[i][s].merge(t)
    finally:
        progress.close()
    gains = [seat_gain(d.agenda, per[i]) if d.mode == SEAT else team_gain(d.agenda, per[i])
             for i, d in enumerate(deviants)]
    return Evaluation(field_stats(field_tally), gains, played)
