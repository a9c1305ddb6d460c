"""Every metric of fbsim, declared once: what it counts per game, how it reads, its interval.

A metric is a ratio of two per-game integer sums, R = sum(y) / sum(x), over the games of one
setting (a sweep point, a report's table size):

- a win or outcome rate has y in {0, 1} and x = 1 (kind "rate": the Wilson interval);
- a mean per game has x = 1 (kind "mean"), a mean per seat x = the players;
- a share of something else, e.g. Accusation accuracy, y = corners of an Accelerationist and
  x = corners (kind "pct"); "mean" and "pct" get the delta-method interval.

Blocks of games combine by adding integer moments (`fbsim.experiments.metrics.tally.Tally`),
so no number depends on how the games were split into blocks, threads or machines. Besides
ratios, two distributions are counted exactly: the final Dial and the Dial at the end of each
round, as histograms of one bin per ppm.

`metrics(players, bots)` lists the metrics of one table size; those with a `section` are
shown on the report page (in this order), the others feed the sweep tables only. `bots` are
the per-bot rows (`bot_rows`): a lineup entry's label, its bot's name unless one lineup seats
the bot with different parameters. `measure` computes every metric's (y, x) for a block of
kernel records played by one lineup. Tables, the report, findings
and the notebook all read these.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fbsim.game import layout as L
from fbsim.game.lineup import N_ENTRIES, Lineup
from fbsim.rules import Rules

DIAL_HIST_LO = 0  # the Dial histograms have one bin per ppm from here (clipped at both ends)
DIAL_BINS = 1024

SECTIONS = {
    "wins": "Who wins",
    "world": "How the world ends",
    "seats": "Seat advantage",
    "fog": "Fog: the shared pot",
    "accusation": "Accusations",
    "legacy": "Legacy in survival games",
}


@dataclass(frozen=True)
class Metric:
    key: str  # column-safe identifier, e.g. win_accelerationist
    section: str | None  # the report section showing it (None: sweep tables only)
    label: str  # what a designer reads
    kind: str  # "rate": share of games (Wilson); "pct": a ratio shown in %; "mean": a number
    unit: str = ""
    y: Callable | None = None  # per game, from a `Games` block
    x: Callable | None = None  # per game; None: 1


def seat_sum(a) -> np.ndarray:
    """Per game, the sum over seats of a [games, seats] array (int64)."""
    a = np.asarray(a)
    return np.einsum("gs->g", a if a.dtype == np.int64 else a.astype(np.int64))


def bot_rows(*lineups: Lineup) -> tuple[str, ...]:
    """The per-bot rows of these lineups: each entry's label (`Lineup.labels()`), in the
    order of the bots (registry order), a bot's plain name before its labelled variants."""
    from fbsim.policies import registry

    order = {name: i for i, name in enumerate(registry())}
    labels = {(e.bot, lab) for lu in lineups
              for e, lab in zip(lu.entries(), lu.labels(), strict=True) if e is not None}
    return tuple(lab for _, lab in sorted(labels, key=lambda x: (order[x[0]], x[1] != x[0],
                                                                   x[1])))


def row_of_entry(lineup: Lineup, bots: tuple[str, ...]) -> np.ndarray:
    """For each lineup entry (the records' `bot` code), its row in `bots` (-1: none)."""
    out = np.full(N_ENTRIES, -1, dtype=np.int64)
    for i, lab in enumerate(lineup.labels()):
        if lab is not None and lab in bots:
            out[i] = bots.index(lab)
    return out


class Games:
    """One block of kernel records with the per-game quantities metrics are built from."""

    def __init__(self, rec: dict, rules: Rules, lineup: Lineup, bots: tuple[str, ...]):
        self.rec, self.rules, self.bots = rec, rules, bots
        self.n = rules.players
        g = len(rec["game"])
        self.one = np.ones(g, dtype=np.int64)
        w = rec["winner"]
        self.winner = w
        self.won = w >= 0
        idx = np.arange(g)
        ws = np.where(self.won, w, 0)
        self.agenda = rec["agenda"]
        self.win_agenda = np.where(self.won, self.agenda[idx, ws], -1)
        rows = row_of_entry(lineup, bots)
        self.seat_row = rows[rec["bot"]]  # [games, seats]: each seat's bot row
        self.win_row = np.where(self.won, self.seat_row[idx, ws], -1)
        self.accel = self.agenda == L.ACCELERATIONIST
        self.over = rec["fog_received"] - rec["fog_in"]
        self.survived = (rec["band"] != L.COLLAPSE)[:, None]
        self.cornered = rec["cornered"]

    def place_seat(self, p: int) -> int:
        # R-S3: place p counts clockwise from the round-1 first player (D9)
        return (self.rules.first_player + p) % self.n

    def bot_row(self, name: str) -> int:
        return self.bots.index(name)


def metrics(players: int, bots: tuple[str, ...]) -> list[Metric]:
    """The metrics of one table size: the report's, in page order, then the sweep tables'."""
    A = L.AGENDA_NAMES
    out = [Metric(f"win_{a}", "wins", f"{a.capitalize()} wins", "rate",
                  y=lambda G, i=i: G.win_agenda == i) for i, a in enumerate(A)]
    out.append(Metric("everyone_loses", "wins", "Everyone loses", "rate",
                      y=lambda G: ~G.won))
    out.append(Metric("collapse", "world", "Collapse", "rate",
                      y=lambda G: G.rec["end"] != L.END_SURVIVED))
    out += [Metric(f"band_{b}", "world", f"Final band {b.capitalize()}", "rate",
                   y=lambda G, i=i: G.rec["band"] == i) for i, b in enumerate(L.BAND_NAMES)]
    out.append(Metric("final_dial", "world", "Final Dial (mean)", "mean", "ppm",
                      y=lambda G: G.rec["final_dial"]))
    out.append(Metric("rounds_played", "world", "Rounds played (mean)", "mean", "rounds",
                      y=lambda G: G.rec["rounds_played"]))
    out += [Metric(f"win_place_{p}", "seats", f"Place {p} wins" + (" (first player)" if p == 0
                                                                    else ""), "rate",
                   y=lambda G, p=p: G.winner == G.place_seat(p)) for p in range(players)]
    out += [
        Metric("masks_per_seat", "fog", "Masks used per seat", "mean", "masks",
               y=lambda G: seat_sum(G.rules.masks - G.rec["masks_left"]),
               x=lambda G: G.one * G.n),
        Metric("fog_in", "fog", "Pot inflow per game", "mean", "Capital",
               y=lambda G: seat_sum(G.rec["fog_in"])),
        Metric("fog_requested", "fog", "Claims requested per game", "mean", "Capital",
               y=lambda G: seat_sum(G.rec["fog_requested"])),
        Metric("fog_received", "fog", "Claims received per game", "mean", "Capital",
               y=lambda G: seat_sum(G.rec["fog_received"])),
        Metric("overclaim", "fog", "Over-claimed per game (received beyond own payments)",
               "mean", "Capital", y=lambda G: seat_sum(np.where(G.over > 0, G.over, 0))),
        Metric("overclaimers", "fog", "Seats that over-claimed", "pct",
               y=lambda G: seat_sum(G.over > 0), x=lambda G: G.one * G.n),
        Metric("pot_lost", "fog", "Pot left unclaimed at the end", "mean", "Capital",
               y=lambda G: G.rec["pot_left"]),
        Metric("corners", "accusation", "Players cornered per game", "mean", "players",
               y=lambda G: seat_sum(G.cornered)),
        Metric("accuracy", "accusation",  # R-A3
               "Accuracy: cornered player was an Accelerationist", "pct",
               y=lambda G: seat_sum(G.cornered * G.accel),
               x=lambda G: seat_sum(G.cornered)),
        Metric("points_at_accelerationists", "accusation",  # R-A1
               "Points aimed at Accelerationists", "pct",
               y=lambda G: seat_sum(G.rec["pointed_at"] * G.accel),
               x=lambda G: seat_sum(G.rec["pointed_at"])),
        Metric("reveal_share", "accusation", "Cornered players who revealed", "pct",
               y=lambda G: seat_sum(G.cornered - G.rec["paid"]),  # R-A4: reveal or pay
               x=lambda G: seat_sum(G.cornered)),
        Metric("accelerationist_exposed", "accusation",
               "Games with an Accelerationist revealed (of games with one)", "pct",
               y=lambda G: (G.accel & (G.rec["revealed"] == 1)).any(axis=1),
               x=lambda G: G.accel.any(axis=1)),
    ]
    out += [Metric(f"legacy_{a}", "legacy", f"{a.capitalize()} Legacy (mean per seat)",
                   "mean", "Legacy",
                   y=lambda G, i=i: seat_sum(G.rec["legacy"] * (G.survived & (G.agenda == i))),
                   x=lambda G, i=i: seat_sum(G.survived & (G.agenda == i)))
            for i, a in enumerate(A)]
    # the sweep tables' own: seats dealt, wins and seats per bot, per seat, end kinds, spread
    out += [Metric(f"dealt_{a}", None, f"{a.capitalize()} seats dealt per game", "mean",
                   y=lambda G, i=i: seat_sum(G.agenda == i)) for i, a in enumerate(A)]
    for b in bots:
        out.append(Metric(f"win_bot_{b}", None, f"{b} wins", "rate",
                          y=lambda G, b=b: G.win_row == G.bot_row(b)))
        out.append(Metric(f"seats_bot_{b}", None, f"{b} seats per game", "mean",
                          y=lambda G, b=b: seat_sum(G.seat_row == G.bot_row(b))))
    out += [Metric(f"win_seat_{s}", None, f"Seat {s} wins", "rate",
                   y=lambda G, s=s: G.winner == s) for s in range(players)]
    out += [Metric(f"end_{e.replace('-', '_')}", None, f"Ends: {e}", "rate",
                   y=lambda G, i=i: G.rec["end"] == i) for i, e in enumerate(L.END_NAMES)]
    out.append(Metric("final_dial_sq", None, "Final Dial squared (mean)", "mean",
                      y=lambda G: G.rec["final_dial"] * G.rec["final_dial"]))
    return out


def deck_share(rules: Rules, agenda: str) -> float:
    """An Agenda's expected share of the seats, from the deck (R-S4): the fair share of a
    win rate before any game is played."""
    counts = dict(zip(L.AGENDA_NAMES, rules.decks.for_players(rules.players).counts(),
                      strict=True))
    return counts[agenda] / sum(counts.values())


def report_metrics(metric_list: list[Metric]) -> list[Metric]:
    """The metrics the report page shows, in page order."""
    return [m for m in metric_list if m.section is not None]


@dataclass
class Block:
    """What one block of games adds: every metric's per-game (y, x) and the Dial histograms."""

    y: np.ndarray  # int64 [metrics, games]
    x: np.ndarray
    dial_hist: np.ndarray  # [DIAL_BINS]
    dial_round_hist: np.ndarray  # [rounds, DIAL_BINS]

    @property
    def games(self) -> int:
        return self.y.shape[1]


def measure(rec: dict, rules: Rules, lineup: Lineup, bots: tuple[str, ...],
            metric_list: list[Metric] | None = None) -> Block:
    """Every metric of `metrics(rules.players, bots)` for a block of kernel records played
    by `lineup`."""
    ms = metric_list if metric_list is not None else metrics(rules.players, bots)
    G = Games(rec, rules, lineup, bots)
    y = np.stack([np.asarray(m.y(G), dtype=np.int64) for m in ms])
    x = np.stack([G.one if m.x is None else np.asarray(m.x(G), dtype=np.int64) for m in ms])
    bins = np.clip(rec["final_dial"] - DIAL_HIST_LO, 0, DIAL_BINS - 1)
    hist = np.bincount(bins, minlength=DIAL_BINS).astype(np.int64)
    by_round = np.clip(rec["dial_by_round"] - DIAL_HIST_LO, 0, DIAL_BINS - 1)
    rounds = np.zeros((by_round.shape[1], DIAL_BINS), dtype=np.int64)
    for r in range(by_round.shape[1]):
        rounds[r] = np.bincount(by_round[:, r], minlength=DIAL_BINS)
    return Block(y, x, hist, rounds)
