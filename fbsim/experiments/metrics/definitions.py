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
the bot with different parameters.

A metric's y and x are `Term`s: a function of one game's record from
`fbsim.experiments.metrics.per_game` and its argument. `measure` evaluates every term of a
block of records in one compiled pass (`fbsim.experiments.metrics.compiled` generates it from
these declarations), whether the records come from the kernel or the reference engine.
Tables, the report, findings and the notebook all read these.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fbsim.game import layout as L
from fbsim.game import record as GR
from fbsim.lineup import N_ENTRIES, Lineup
from fbsim.rules import Rules

DIAL_HIST_LO = 0  # the Dial histograms have one bin per ppm from here (clipped at both ends)
DIAL_BINS = 1024

SECTIONS = {
    "wins": "Who wins",
    "deal": "A player's chance, by the Agenda dealt",
    "world": "How the world ends",
    "seats": "Seat advantage",
    "fog": "Fog: the shared pot",
    "accusation": "Accusations",
    "legacy": "Legacy in survival games",
}


@dataclass(frozen=True)
class Term:
    """A per-game integer: a function of `fbsim.experiments.metrics.per_game` and its
    argument."""

    fn: str
    arg: int = 0


ONE = Term("one")


@dataclass(frozen=True)
class Metric:
    key: str  # column-safe identifier, e.g. win_accelerationist
    section: str | None  # the report section showing it (None: sweep tables only)
    label: str  # what a designer reads
    kind: str  # "rate": share of games (Wilson); "pct": a ratio shown in %; "mean": a number
    unit: str = ""
    y: Term = ONE  # per game
    x: Term = ONE  # per game


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


def metrics(players: int, bots: tuple[str, ...]) -> list[Metric]:
    """The metrics of one table size: the report's, in page order, then the sweep tables'."""
    A = L.AGENDA_NAMES
    out = [Metric(f"win_{a}", "wins", f"{a.capitalize()} wins", "rate",
                  y=Term("winner_agenda", i)) for i, a in enumerate(A)]
    out.append(Metric("everyone_loses", "wins", "Everyone loses", "rate",
                      y=Term("nobody_won")))
    out.append(Metric("collapse", "world", "Collapse", "rate", y=Term("collapsed")))
    out += [Metric(f"band_{b}", "world", f"Final band {b.capitalize()}", "rate",
                   y=Term("final_band", i)) for i, b in enumerate(L.BAND_NAMES)]
    out.append(Metric("final_dial", "world", "Final Dial (mean)", "mean", "ppm",
                      y=Term("game_field", GR.G_FINAL_DIAL)))
    out.append(Metric("rounds_played", "world", "Rounds played (mean)", "mean", "rounds",
                      y=Term("game_field", GR.G_ROUNDS_PLAYED)))
    # R-S3: place p counts clockwise from the round-1 first player (D9)
    out += [Metric(f"win_place_{p}", "seats", f"Place {p} wins" + (" (first player)" if p == 0
                                                                    else ""), "rate",
                   y=Term("winner_place", p)) for p in range(players)]
    out += [
        Metric("masks_per_seat", "fog", "Masks used per seat", "mean", "masks",
               y=Term("masks_used"), x=Term("players")),
        Metric("fog_in", "fog", "Pot inflow per game", "mean", "Capital",
               y=Term("seat_sum", GR.SE_FOG_IN)),
        Metric("fog_requested", "fog", "Claims requested per game", "mean", "Capital",
               y=Term("seat_sum", GR.SE_FOG_REQUESTED)),
        Metric("fog_received", "fog", "Claims received per game", "mean", "Capital",
               y=Term("seat_sum", GR.SE_FOG_RECEIVED)),
        Metric("overclaim", "fog", "Over-claimed per game (received beyond own payments)",
               "mean", "Capital", y=Term("overclaimed")),
        Metric("overclaimers", "fog", "Seats that over-claimed", "pct",
               y=Term("overclaimers"), x=Term("players")),
        Metric("pot_lost", "fog", "Pot left unclaimed at the end", "mean", "Capital",
               y=Term("game_field", GR.G_POT_LEFT)),
        Metric("corners", "accusation", "Players cornered per game", "mean", "players",
               y=Term("seat_sum", GR.SE_CORNERED)),
        Metric("accuracy", "accusation",  # R-A3
               "Accuracy: cornered player was an Accelerationist", "pct",
               y=Term("accelerationist_sum", GR.SE_CORNERED), x=Term("seat_sum", GR.SE_CORNERED)),
        Metric("points_at_accelerationists", "accusation",  # R-A1
               "Points aimed at Accelerationists", "pct",
               y=Term("accelerationist_sum", GR.SE_POINTED_AT),
               x=Term("seat_sum", GR.SE_POINTED_AT)),
        Metric("reveal_share", "accusation", "Cornered players who revealed", "pct",
               y=Term("revealed_when_cornered"),  # R-A4: reveal or pay
               x=Term("seat_sum", GR.SE_CORNERED)),
        Metric("accelerationist_exposed", "accusation",
               "Games with an Accelerationist revealed (of games with one)", "pct",
               y=Term("accelerationist_revealed"), x=Term("accelerationist_dealt")),
    ]
    out += [Metric(f"legacy_{a}", "legacy", f"{a.capitalize()} Legacy (mean per seat)",
                   "mean", "Legacy", y=Term("survivor_legacy", i), x=Term("survivor_seats", i))
            for i, a in enumerate(A)]
    # the sweep tables' own: seats dealt, wins and seats per bot, per seat, end kinds, spread
    out += [Metric(f"dealt_{a}", None, f"{a.capitalize()} seats dealt per game", "mean",
                   y=Term("seats_dealt", i)) for i, a in enumerate(A)]
    for row, b in enumerate(bots):
        out.append(Metric(f"win_bot_{b}", None, f"{b} wins", "rate", y=Term("winner_row", row)))
        out.append(Metric(f"seats_bot_{b}", None, f"{b} seats per game", "mean",
                          y=Term("seats_row", row)))
    out += [Metric(f"win_seat_{s}", None, f"Seat {s} wins", "rate", y=Term("winner_seat", s))
            for s in range(players)]
    out += [Metric(f"end_{e.replace('-', '_')}", None, f"Ends: {e}", "rate",
                   y=Term("ended", i)) for i, e in enumerate(L.END_NAMES)]
    out.append(Metric("final_dial_sq", None, "Final Dial squared (mean)", "mean",
                      y=Term("game_field_squared", GR.G_FINAL_DIAL)))
    return out


def deal_metrics(players: int, most: tuple[int, ...] | None = None) -> list[Metric]:
    """A player's chance to win given the Agenda dealt, the measure of a game won by one
    player (R-E3, R-E4): for each Agenda a, `player_win_{a}` = the wins of a's holders over
    the seats dealt a (a seat's chance, averaged over the seats and deals; fair share
    1 / players of the games somebody wins); `player_win_{a}_k{k}` the same over the games
    where exactly k seats hold a (its x adds up k per such game; k up to `most[a]`, the
    deck's count, default every seat); these are the report's section "deal". And for each
    seat s, `seat_win_{s}_{a}`: seat s's wins over the games it holds a (what a single seat's
    deviation changes, `fbsim.experiments.search.deviation`). Not among the sweep tables'
    metrics: the report and the searches count them."""
    from fbsim.experiments.metrics.per_game import DEAL_BASE

    out = []
    for i, a in enumerate(L.AGENDA_NAMES):
        article = "An" if a[0] in "aeiou" else "A"
        out.append(Metric(f"player_win_{a}", "deal", f"{article} {a.capitalize()}'s chance to win",
                          "pct", y=Term("winner_agenda", i), x=Term("seats_dealt", i)))
        for k in range(1, (players if most is None else min(players, most[i])) + 1):
            arg = DEAL_BASE * k + i
            out.append(Metric(f"player_win_{a}_k{k}", "deal",
                              f"... with {k} {a.capitalize()}{'s' if k > 1 else ''} dealt",
                              "pct", y=Term("winner_agenda_dealt", arg),
                              x=Term("seats_dealt_if", arg)))
        for s in range(players):
            arg = DEAL_BASE * s + i
            out.append(Metric(f"seat_win_{s}_{a}", None, f"Seat {s}'s chance to win as {a}",
                              "pct", y=Term("seat_won_as", arg), x=Term("seat_dealt_as", arg)))
    return out


def search_metrics(players: int) -> list[Metric]:
    """The metrics a single-seat search counts: each Agenda's win, the games nobody wins,
    Collapse, and a player's chance by the Agenda dealt (`deal_metrics`)."""
    keep = {f"win_{a}" for a in L.AGENDA_NAMES} | {"everyone_loses", "collapse"}
    return [m for m in metrics(players, ()) if m.key in keep] + deal_metrics(players)


def report_deal_metrics(rules: Rules) -> list[Metric]:
    """The report's section "deal" for these rules: a player's chance by the Agenda dealt and
    by how many seats hold it (up to the deck's count)."""
    most = tuple(rules.decks.for_players(rules.players).counts())
    return [m for m in deal_metrics(rules.players, most) if m.section is not None]


def deck_share(rules: Rules, agenda: str) -> float:
    """An Agenda's expected share of the seats, from the deck (R-S4): the fair share of a
    win rate before any game is played."""
    counts = dict(zip(L.AGENDA_NAMES, rules.decks.for_players(rules.players).counts(),
                      strict=True))
    return counts[agenda] / sum(counts.values())


def fair_win_rate(seat_share: float, everyone_loses: float = 0.0) -> float:
    """The fair share of a win rate: the win rate of a seat-holder if every seat were equally
    likely to win, `seat_share` being the seats held over all seats (R-S4). In a game that
    everyone loses (a Collapse with no qualified Accelerationist, R-E3) no seat wins, so the
    fair share is taken over the games that somebody wins: seat_share x (1 - the share of
    games everyone loses). Fair shares then add up to the win rates' own total."""
    return seat_share * (1.0 - everyone_loses)


def report_metrics(metric_list: list[Metric]) -> list[Metric]:
    """The metrics the report page shows, in page order."""
    return [m for m in metric_list if m.section is not None]
