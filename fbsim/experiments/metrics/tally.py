"""Counting one setting's games: integer moments of every metric, merged exactly.

A `Tally` keeps, for every metric of `fbsim.experiments.metrics.definitions`, the integer sums
of y and x and of their products; paired against a baseline played on the same games (common
random numbers) it also keeps the baseline's (y, x) and all cross products, so a difference
gets a paired interval. It keeps the Dial histograms too. Blocks, tasks and machines merge by
adding integers, so no number depends on how the games were split.

Estimates:
- `rate(k)`: a share of games with its Wilson interval (as everywhere in fbsim);
- `estimate(k)`: R = sum(y) / sum(x) with the delta-method normal interval,
  se(R)^2 = sum((y - R x)^2) / (n (n - 1) xbar^2);
- `difference(k)`: D = R_new - R_old on the same games. For a rate (y in {0, 1}, x = 1) from
  the games whose outcome changed (`discordant`): b games count under the new setting only,
  c under the old only, n11 = sum(y1 y0) games under both, so b = sum(y1) - n11 and
  c = sum(y0) - n11; Tango's score interval and McNemar's exact test
  (`fbsim.experiments.metrics.stats.paired_proportions`). For any other metric the paired
  delta-method interval: the per-game influence
  z = (y1 - R1 x1) / xbar1 - (y0 - R0 x0) / xbar0 has mean 0 and se(D)^2 = sum(z^2) / (n (n - 1));
- `paired_sums(k)`: sum(d) and sum(d^2) of d = y(point) - y(baseline), exact integers.

A paired difference is measured on the games that both settings played (with `--ci-width` a
sweep point may play more games than its baseline: its difference then uses the games common
to both, so it is not the difference of the two rates shown, each measured on all of its own
games).
"""

from __future__ import annotations

import math

import numpy as np

from fbsim.experiments.metrics.definitions import (
    DIAL_BINS,
    Metric,
    bot_rows,
    fair_win_rate,
    metrics,
    report_deal_metrics,
)
from fbsim.experiments.metrics.measure import Block, Measure
from fbsim.experiments.metrics.moments import (
    BX,
    BY,
    PARTS,
    X,
    Y,
    add_moments,
    add_table,
    parts,
)
from fbsim.experiments.metrics.stats import Z95, paired_proportions, wilson
from fbsim.game import layout as L
from fbsim.lineup import Lineup
from fbsim.rules import Rules


class Tally:
    """Integer moments of the metrics of one table size: of (y, x), and paired of
    (y_new, x_new, y_old, x_old)."""

    def __init__(self, players: int, rounds: int, paired: bool = False,
                 bots: tuple[str, ...] | None = None, metric_list: list[Metric] | None = None,
                 per_game: bool | None = None):
        """`metric_list`: these metrics instead of every metric of the table size.
        `per_game`: the blocks this tally measures keep every game's (y, x) (default: when
        paired, which needs them; a tally that only measures a baseline's games for paired
        tallies asks for them too); without, a block carries only its moments."""
        self.players, self.rounds, self.paired = players, rounds, paired
        self.per_game = paired if per_game is None else per_game
        self.bots = bot_rows(Lineup()) if bots is None else tuple(bots)
        self.metrics: list[Metric] = (metrics(players, self.bots) if metric_list is None
                                      else list(metric_list))
        self.index = {m.key: k for k, m in enumerate(self.metrics)}
        w = parts(paired)
        k = len(self.metrics)
        self.games = 0
        self.s1 = np.zeros((k, w), dtype=np.int64)
        self.s2 = np.zeros((k, w, w), dtype=np.int64)
        self.dial_hist = np.zeros(DIAL_BINS, dtype=np.int64)
        self.dial_round_hist = np.zeros((rounds, DIAL_BINS), dtype=np.int64)
        # paired: the baseline's (old rules') final Dial histogram
        self.old_dial_hist = np.zeros(DIAL_BINS, dtype=np.int64)
        self.old_dial_round_hist: np.ndarray | None = None
        self._measures: dict[tuple, tuple[Rules, Lineup, Measure]] = {}

    def __getstate__(self):
        # the compiled measures stay behind (a tally travels between Dask processes)
        return {**self.__dict__, "_measures": {}}

    @classmethod
    def for_rules(cls, rules: Rules, *lineups: Lineup, paired: bool = False,
                  bots: tuple[str, ...] | None = None, per_game: bool | None = None,
                  deal: bool = False) -> Tally:
        """A tally of games under `rules`, with a row per bot of `lineups` (or `bots`);
        `deal`: a player's chance by the Agenda dealt as well (`report_deal_metrics`)."""
        rows = bots if bots is not None else bot_rows(*(lineups or (Lineup(),)))
        extra = report_deal_metrics(rules) if deal else []
        return cls(rules.players, rules.rounds, paired, rows, per_game=per_game,
                   metric_list=(metrics(rules.players, tuple(rows)) + extra) if deal else None)

    def measurer(self, rules: Rules, lineup: Lineup, slot: object = None) -> Measure:
        """This tally's metrics over blocks of games of `rules` and `lineup`, chunk by chunk
        (what the runner counts each chunk with as the kernel plays it). `slot`: one measure
        per slot, each reusing its arrays block after block (the runner's blocks in flight
        at once, each counted before its slot's next block starts); None: new arrays for
        every block."""
        key = (id(rules), id(lineup), slot)  # the objects are kept with it (ids stay unique)
        got = self._measures.get(key)
        if got is None:
            got = self._measures[key] = (rules, lineup, Measure(
                rules, lineup, self.bots, self.metrics, reuse=slot is not None,
                per_game=self.per_game))
        return got[2]

    def measure(self, rec: dict, rules: Rules, lineup: Lineup) -> Block:
        """Every metric of this tally for a block of records played by `lineup` (the runner
        measures what it plays itself: `run_blocks`' blocks)."""
        return self.measurer(rules, lineup).block(rec)

    def add(self, block: Block, base: Block | None = None) -> Tally:
        """Count one block of games (and, paired, the baseline's same games)."""
        self.games += block.games
        if self.paired:
            if block.y is None or base.y is None:
                raise ValueError("a paired count needs blocks measured game by game "
                                 "(Tally(per_game=True))")
            add_moments(block.y, block.x, base.y, base.x, True, self.s1, self.s2)
        elif block.y is None:
            add_table(block.moments, False, self.s1, self.s2)
        else:
            add_moments(block.y, block.x, block.y, block.x, False, self.s1, self.s2)
        self.dial_hist += block.dial_hist
        self.dial_round_hist += block.dial_round_hist
        if self.paired:
            self.old_dial_hist += base.dial_hist
            if self.old_dial_round_hist is None:
                self.old_dial_round_hist = np.zeros_like(base.dial_round_hist)
            self.old_dial_round_hist += base.dial_round_hist
        return self

    def merge(self, other: Tally) -> Tally:
        """Add another tally of the same setting over other games (exact: integers only)."""
        self.games += other.games
        self.s1 += other.s1
        self.s2 += other.s2
        self.dial_hist += other.dial_hist
        self.dial_round_hist += other.dial_round_hist
        self.old_dial_hist += other.old_dial_hist
        if other.old_dial_round_hist is not None:
            if self.old_dial_round_hist is None:
                self.old_dial_round_hist = np.zeros_like(other.old_dial_round_hist)
            self.old_dial_round_hist += other.old_dial_round_hist
        return self

    # ------------------------------------------------------------------ sums

    def total(self, key: str, old: bool = False) -> int:
        """sum(y) of a metric over the games."""
        return int(self.s1[self.index[key], BY if old else Y])

    def denominator(self, key: str, old: bool = False) -> int:
        """sum(x) of a metric over the games."""
        return int(self.s1[self.index[key], BX if old else X])

    def fair_share(self, seats_key: str, old: bool = False) -> float:
        """The win rate a seat-holder would have if every seat won equally often: the seats
        held (`seats_key`, e.g. dealt_steward) over all seats played (R-S4), times the share of
        games that somebody wins. Games that everyone loses (a Collapse with no qualified
        Accelerationist, R-E3) have no winner to share: in them no seat can win, so the fair
        shares of all seats add up to the rate of games with a winner, as the win rates do."""
        seats = self.games * self.players
        if not seats:
            return math.nan
        return fair_win_rate(self.total(seats_key, old) / seats, self.everyone_loses(old))

    def everyone_loses(self, old: bool = False) -> float:
        """The share of games that nobody wins (0 when this tally does not count them)."""
        if "everyone_loses" not in self.index or self.games == 0:
            return 0.0
        return self.total("everyone_loses", old) / self.games

    def paired_sums(self, key: str) -> tuple[int, int]:
        """sum(d), sum(d^2) of d = y(this) - y(baseline), game by game."""
        k = self.index[key]
        s2 = self.s2[k]
        d = int(self.s1[k, Y]) - int(self.s1[k, BY])
        dd = int(s2[Y, Y]) - 2 * int(s2[Y, BY]) + int(s2[BY, BY])
        return d, dd

    def discordant(self, key: str | int) -> tuple[int, int]:
        """(b, c) of a rate measured on the same games: b games count under this setting
        only, c under the baseline only (the games whose outcome changed are b + c)."""
        k = self.index[key] if isinstance(key, str) else key
        n11 = int(self.s2[k, Y, BY])
        return int(self.s1[k, Y]) - n11, int(self.s1[k, BY]) - n11

    def changed(self, k: int) -> int | None:
        """Games whose outcome changed between the baseline and this setting (a rate metric,
        paired), else None."""
        if not self.paired or self.metrics[k].kind != "rate":
            return None
        b, c = self.discordant(k)
        return b + c

    # ------------------------------------------------------------------ estimates

    def rate(self, k: int, old: bool = False) -> tuple[float, float, float]:
        """A share of games (x = 1, y in {0, 1}) with its Wilson interval."""
        return wilson(int(self.s1[k, BY if old else Y]), self.games)

    def estimate(self, k: int, old: bool = False) -> tuple[float, float, float]:
        """(value, low, high) of metric k (the old rules' when `old`)."""
        i, j = (BY, BX) if old else (Y, X)
        n = self.games
        sy, sx = int(self.s1[k, i]), int(self.s1[k, j])
        if n == 0 or sx == 0:
            return math.nan, math.nan, math.nan
        r = sy / sx
        if n < 2:
            return r, math.nan, math.nan
        syy, sxx, sxy = (int(self.s2[k, i, i]), int(self.s2[k, j, j]),
                         int(self.s2[k, i, j]))
        var = max(0.0, (syy - 2 * r * sxy + r * r * sxx) / (n - 1))
        half = Z95 * math.sqrt(var / n) / (sx / n)
        return r, r - half, r + half

    def difference(self, k: int) -> tuple[float, float, float, float]:
        """(D, low, high, p) of R_new - R_old of metric k on the same games. A rate: Tango's
        interval and McNemar's exact p (1 when no game changed; the interval is then about
        +-3.84/n, never of zero width). Any other metric: the delta-method interval and a
        normal p, NaN when the metric is the same in every game (or undefined under either
        rules)."""
        n = self.games
        if self.paired and n > 0 and self.metrics[k].kind == "rate":
            b, c = self.discordant(k)
            return paired_proportions(b, c, n)
        s1 = self.s1[k].astype(np.float64)
        if not self.paired or n < 2 or s1[X] == 0 or s1[BX] == 0:
            return math.nan, math.nan, math.nan, math.nan
        r1, r0 = s1[Y] / s1[X], s1[BY] / s1[BX]
        xb1, xb0 = s1[X] / n, s1[BX] / n
        a = np.zeros(len(PARTS))  # the gradient of r1 - r0 in the parts' means
        a[[Y, X, BY, BX]] = 1 / xb1, -r1 / xb1, -1 / xb0, r0 / xb0
        ss = float(a @ self.s2[k].astype(np.float64) @ a)  # sum of z^2 (z has mean 0)
        d = float(r1 - r0)
        se = math.sqrt(max(0.0, ss) / (n - 1) / n)
        # no spread at all: every game moved by exactly d; d == 0 means the metric is
        # identical in every game (nothing to test: p is NaN and it leaves the family)
        if se == 0.0 or se < 1e-12 * max(1.0, abs(d)):
            return d, d, d, (math.nan if d == 0 else 0.0)
        p = math.erfc(abs(d) / se / math.sqrt(2))
        return d, d - Z95 * se, d + Z95 * se, p

    # ------------------------------------------------------------------ --ci-width

    def half_widths(self) -> list[float]:
        """The Wilson half-width of each Agenda's win rate (for --ci-width)."""
        out = []
        for a in L.AGENDA_NAMES:
            _, lo, hi = wilson(self.total(f"win_{a}"), self.games)
            out.append((hi - lo) / 2)
        return out

    def needed_games(self, width: float) -> int:
        """Games that would bring every Agenda's half-width to `width`, from the rates so far
        (normal approximation)."""
        n = max(1, self.games)
        worst = 0.0
        for a in L.AGENDA_NAMES:
            p = (self.total(f"win_{a}") + 0.5) / (n + 1)
            worst = max(worst, p * (1 - p))
        return int(math.ceil(Z95 ** 2 * worst / (width * width)))

    # ------------------------------------------------------------------ keeping

    def arrays(self) -> dict[str, np.ndarray]:
        """The integer state, e.g. to keep a finished part of a run on disk."""
        out = {"games": np.int64(self.games), "s1": self.s1, "s2": self.s2,
               "dial_hist": self.dial_hist, "dial_round_hist": self.dial_round_hist,
               "old_dial_hist": self.old_dial_hist}
        if self.old_dial_round_hist is not None:
            out["old_dial_round_hist"] = self.old_dial_round_hist
        return out

    def load_arrays(self, z) -> Tally:
        self.games = int(z["games"])
        for k in ("s1", "s2", "dial_hist", "dial_round_hist", "old_dial_hist",
                  "old_dial_round_hist"):
            if k in z:
                setattr(self, k, np.array(z[k], dtype=np.int64))
        return self

    def counts(self, old: bool = False) -> dict:
        """The Dial histograms and seats dealt per Agenda (of the old rules when `old`)."""
        return {"games": self.games,
                "dial_hist": self.old_dial_hist if old else self.dial_hist,
                "dial_round_hist": self.old_dial_round_hist if old else self.dial_round_hist,
                "dealt": np.array([self.total(f"dealt_{a}", old) for a in L.AGENDA_NAMES],
                                  dtype=np.int64)}
