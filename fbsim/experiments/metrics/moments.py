"""The integer moments a tally keeps of each metric, and their layout, named once.

A metric's parts, per game: y, x and, paired, the baseline's same game's by, bx. A table of
moments [metrics, COLUMNS] holds the sums of the parts (`SUM_Y` ..) then the sums of the
products of each pair in PAIRS (`YY`, `YX`, ..): what the block measure adds up game by game
(`fbsim.experiments.metrics.compiled`) and the tally adds into its s1 [metrics, part] and
s2 [metrics, part, part] (`fbsim.experiments.metrics.tally`)."""

from __future__ import annotations

import numpy as np
from numba import njit

PARTS = ("y", "x", "by", "bx")
Y, X, BY, BX = range(len(PARTS))  # a part's index (in a tally's s1 and s2)
PAIRS = ((Y, Y), (Y, X), (X, X), (Y, BY), (Y, BX), (X, BY), (X, BX), (BY, BY), (BY, BX),
         (BX, BX))
COLUMNS = len(PARTS) + len(PAIRS)


def parts(paired: bool) -> int:
    """How many parts a tally keeps: y and x, and paired the baseline's by and bx too."""
    return len(PARTS) if paired else X + 1


def column(i: int, j: int | None = None) -> int:
    """The column of the sum of part i, or of the products of parts i and j."""
    if j is None:
        return i
    return len(PARTS) + PAIRS.index((min(i, j), max(i, j)))


SUM_Y, SUM_X, SUM_BY, SUM_BX = (column(i) for i in (Y, X, BY, BX))
YY, YX, XX, Y_BY, Y_BX, X_BY, X_BX, BY_BY, BY_BX, BX_BX = (column(i, j) for i, j in PAIRS)


@njit(cache=True, nogil=True)
def _unpaired(y, x, T):
    K, g = y.shape
    for j in range(g):
        for k in range(K):
            a = y[k, j]
            b = x[k, j]
            T[k, SUM_Y] += a
            T[k, SUM_X] += b
            T[k, YY] += a * a
            T[k, YX] += a * b
            T[k, XX] += b * b


@njit(cache=True, nogil=True)
def _paired(y, x, by, bx, T):
    K, g = y.shape
    for j in range(g):
        for k in range(K):
            a = y[k, j]
            b = x[k, j]
            c = by[k, j]
            d = bx[k, j]
            T[k, SUM_Y] += a
            T[k, SUM_X] += b
            T[k, SUM_BY] += c
            T[k, SUM_BX] += d
            T[k, YY] += a * a
            T[k, YX] += a * b
            T[k, XX] += b * b
            T[k, Y_BY] += a * c
            T[k, Y_BX] += a * d
            T[k, X_BY] += b * c
            T[k, X_BX] += b * d
            T[k, BY_BY] += c * c
            T[k, BY_BX] += c * d
            T[k, BX_BX] += d * d


def moments_table(y, x, by, bx, paired: bool) -> np.ndarray:
    """One block's integer moments, as a table [metrics, 14]: the sums of the parts (y, x and,
    paired, the baseline's by, bx: each [metrics, games]) in columns 0-3, then the sums of
    the products of PAIRS in columns 4-13 (the unpaired ones: 4, 5, 6)."""
    T = np.zeros((y.shape[0], COLUMNS), dtype=np.int64)
    if paired:
        _paired(y, x, by, bx, T)
    else:
        _unpaired(y, x, T)
    return T


def add_table(T, paired: bool, s1, s2) -> None:
    """Add a table of moments (`moments_table`) to a tally's: s1[k, i] += the sum over games
    of part i, s2[k, i, j] += the sum of part i * part j."""
    w = parts(paired)
    s1[:, :w] += T[:, :w]
    for n, (i, j) in enumerate(PAIRS):
        if i < w and j < w:
            s2[:, i, j] += T[:, len(PARTS) + n]
            if i != j:
                s2[:, j, i] += T[:, len(PARTS) + n]


def add_moments(y, x, by, bx, paired: bool, s1, s2) -> None:
    """Add one block's integer moments to a tally's (`moments_table`, `add_table`)."""
    add_table(moments_table(y, x, by, bx, paired), paired, s1, s2)
