"""Measuring blocks of records: every declared metric (`fbsim.experiments.metrics.definitions`)
of each game, by the compiled block measure (`fbsim.experiments.metrics.compiled`), with the
Dial's histograms: per game (y, x) or their moments (`fbsim.experiments.metrics.moments`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fbsim.experiments.metrics.definitions import (
    DIAL_BINS,
    DIAL_HIST_LO,
    Metric,
    metrics,
    row_of_entry,
)
from fbsim.experiments.metrics.moments import COLUMNS
from fbsim.game import record as GR
from fbsim.lineup import Lineup
from fbsim.rules import Rules


@dataclass
class Block:
    """What one block of games adds: every metric's per-game (y, x) and the Dial histograms;
    or, measured without keeping the games (`Measure`'s per_game=False), their moments
    instead of y and x (None)."""

    y: np.ndarray | None  # int64 [metrics, games]
    x: np.ndarray | None
    dial_hist: np.ndarray  # [DIAL_BINS]
    dial_round_hist: np.ndarray  # [rounds, DIAL_BINS]
    moments: np.ndarray | None = None  # [metrics, COLUMNS] (`moments.moments_table`), no y
    n: int = 0  # the games, when no y

    @property
    def games(self) -> int:
        return self.y.shape[1] if self.y is not None else self.n


class Measure:
    """The metrics of one setting (rules, lineup, per-bot rows, metric list) over blocks of
    records, chunk by chunk: `start(g)` a block of g games, `chunk(arrays, lo, hi)` its games
    lo..hi - 1 (chunks may run at once on several threads: each writes its own columns,
    moments and histograms), `finish()` the block. The compiled function comes from
    `fbsim.experiments.metrics.compiled`, generated from the metrics' declarations."""

    def __init__(self, rules: Rules, lineup: Lineup, bots: tuple[str, ...],
                 metric_list: list[Metric] | None = None, reuse: bool = False,
                 per_game: bool = True):
        """reuse: every block is written into the same arrays (a `Block` is then valid until
        the next `start`). per_game: the blocks keep every game's (y, x) (what a paired
        count needs); else only their moments, added up game by game as they are measured
        (a plain count: nothing the size of a block is written or read again)."""
        from fbsim.experiments.metrics.compiled import block_measure
        from fbsim.experiments.metrics.per_game import context

        self.rules, self.lineup, self.reuse, self.per_game = rules, lineup, reuse, per_game
        self.yg = self.xg = None
        self.metrics = metric_list if metric_list is not None else metrics(rules.players, bots)
        # what the measure is given for Y and X when it keeps no games (it never touches them)
        self.no_games = np.empty((0, len(self.metrics)), dtype=np.int64)
        self.fn = block_measure(self.metrics, rules.players)
        self.c = context(rules.masks, rules.first_player,
                         row_of_entry(lineup, bots))
        self.lo = np.int64(DIAL_HIST_LO)
        # the sums of the block being measured (Dial histograms and moments), kept for the
        # next block once `finish` has added them up and emptied them
        self.idle: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def start(self, g: int) -> None:
        k = len(self.metrics)
        self.g = g
        if not self.per_game:
            return
        # [metrics, games] over memory laid out game by game: a game's terms are written
        # together. The compiled measure writes the [games, metrics] arrays themselves (C
        # order whatever the chunk's size, so that a chunk of one game compiles no second
        # version of it)
        if not (self.reuse and self.yg is not None and self.yg.shape == (g, k)):
            self.yg = np.empty((g, k), dtype=np.int64)
            self.xg = np.empty((g, k), dtype=np.int64)
        self.y, self.x = self.yg.T, self.xg.T

    def chunk(self, arrays: tuple, lo: int, hi: int) -> None:
        G, SE, DR = arrays
        try:  # the block's sums: one set per chunk running at once (list.pop is atomic)
            sums = self.idle.pop()
        except IndexError:
            sums = self.zero_sums()
        hist, rounds, T = sums
        if self.per_game:
            y, x = self.yg[lo:hi], self.xg[lo:hi]
        else:  # the games' moments go to T
            y = x = self.no_games
        self.fn(G[lo:hi], SE[lo:hi], DR[lo:hi], self.c, y, x, hist, rounds, self.lo,
                np.int64(self.per_game), T)
        self.idle.append(sums)  # for the block's next chunk (list.append is atomic)

    def zero_sums(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A block's sums at zero: the final Dial's histogram, each round's, the moments."""
        return (np.zeros(DIAL_BINS, dtype=np.int64),
                np.zeros((self.rules.rounds, DIAL_BINS), dtype=np.int64),
                np.zeros((len(self.metrics), COLUMNS), dtype=np.int64))

    def finish(self) -> Block:
        """The block's Block (every chunk measured); its sums are emptied for the next."""
        hist, rounds, moments = self.zero_sums()
        for sums in self.idle:
            for total, part in zip((hist, rounds, moments), sums, strict=True):
                total += part
                part.fill(0)
        if self.per_game:
            return Block(self.y, self.x, hist, rounds)
        return Block(None, None, hist, rounds, moments, self.g)

    def block(self, rec: dict) -> Block:
        """Every metric of a whole block of records at once."""
        arrays = record_arrays(rec, self.rules)
        g = arrays[0].shape[0]
        self.start(g)
        self.chunk(arrays, 0, g)
        return self.finish()


def record_arrays(rec: dict, rules: Rules) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kernel's arrays (G, SE, DR: `fbsim.kernel.layout`) behind a block of columns; built
    from the columns when they are not the kernel's."""
    arrays = getattr(rec, "kernel_arrays", None)
    if arrays is not None:
        G, SE, _, DR = arrays
        return G, SE, DR
    g = len(rec[GR.INDEX.name])
    G = np.zeros((g, len(GR.GAME_FIELDS)), dtype=np.int64)
    for i, f in enumerate(GR.GAME_FIELDS):
        G[:, i] = rec[f]
    SE = np.zeros((g, len(GR.SEAT_FIELDS), rules.players), dtype=np.int64)
    for i, f in enumerate(GR.SEAT_FIELDS):
        SE[:, i, :] = rec[f]
    DR = np.zeros((g, len(GR.ROUND_FIELDS), rules.rounds), dtype=np.int64)
    for i, f in enumerate(GR.ROUND_FIELDS):
        DR[:, i, :] = rec[f]
    return G, SE, DR
