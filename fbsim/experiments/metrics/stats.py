"""Interval estimates for win and collapse rates.

- `wilson`: the Wilson score interval of a binomial proportion (95% by default), which stays
  inside [0, 1] and behaves at rates near 0 or 1, unlike the normal (Wald) interval.
- `paired_proportions`: the difference of two proportions measured on the same games (common
  random numbers), from the discordant games alone: b games count under the new setting only,
  c under the old only. Tango's score interval (1998), which keeps its coverage when few games
  change and is never of zero width (no game changed: about +-3.84/n), and McNemar's exact
  test (a two-sided sign test on the b + c changed games). Used for every paired win, collapse
  and everyone-loses rate.
- `paired`: the mean and normal interval of per-game differences from the integer sums
  sum(d) and sum(d^2) (the paired interval of a general metric; for proportions
  `paired_proportions` is used instead, the normal interval undercovering when few games
  change).
- `unpaired`: the interval of a difference of two independent proportions, for comparison.
- `hist_quantile`: exact quantiles of integer values from their histogram.
- `holm` and `benjamini_hochberg`: p-values adjusted over a family of comparisons.
"""

from __future__ import annotations

import math

import numpy as np

Z95 = 1.959963984540054  # the 0.975 quantile of the standard normal
# written in every output's provenance; 2: paired rates by Tango's interval and McNemar's exact
# test with the changed games, corrected sweep comparisons, fair shares over games with a winner
STATS_VERSION = 2


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float, float]:
    """(rate, low, high) of k successes in n trials; (nan, nan, nan) when n == 0."""
    if n <= 0:
        return math.nan, math.nan, math.nan
    p = k / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
    lo = 0.0 if k == 0 else max(0.0, centre - half)  # exact at the ends, free of rounding
    hi = 1.0 if k == n else min(1.0, centre + half)
    return p, min(lo, p), max(hi, p)


def wilson_half_width(k: int, n: int, z: float = Z95) -> float:
    _, lo, hi = wilson(k, n, z)
    return (hi - lo) / 2 if n > 0 else math.inf


def paired(sum_d: int, sum_d2: int, n: int, z: float = Z95) -> tuple[float, float, float]:
    """(mean, low, high) of per-game differences from their sum and sum of squares."""
    if n <= 0:
        return math.nan, math.nan, math.nan
    mean = sum_d / n
    if n == 1:
        return mean, math.nan, math.nan
    var = max(0.0, (sum_d2 - n * mean * mean) / (n - 1))
    half = z * math.sqrt(var / n)
    return mean, mean - half, mean + half


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: under no difference each of the b + c changed games
    is equally likely to have changed either way (a sign test); 1 when nothing changed."""
    m = b + c
    if m == 0:
        return 1.0
    from scipy.special import bdtr  # here, as brentq below: scipy costs a start 0.4 s

    return float(min(1.0, 2.0 * bdtr(min(b, c), m, 0.5)))


def _tango_z(delta: float, b: int, c: int, n: int) -> float:
    """Tango's score statistic for p10 - p01 = delta (b: the 1-0 games, c: the 0-1 games):
    (b - c - n delta) / sqrt(n (2 q + delta (1 - delta))), q the restricted maximum-likelihood
    p01: the root of 2n q^2 + W q - c delta (1 - delta) = 0, W = -b - c + (2n - b + c) delta."""
    w = -b - c + (2 * n - b + c) * delta
    q = (math.sqrt(max(0.0, w * w + 8.0 * n * c * delta * (1.0 - delta))) - w) / (4.0 * n)
    var = n * (2.0 * q + delta * (1.0 - delta))
    num = b - c - n * delta
    if var <= 0.0:
        return math.copysign(math.inf, num) if num != 0 else 0.0
    return num / math.sqrt(var)


def paired_proportions(b: int, c: int, n: int, z: float = Z95
                       ) -> tuple[float, float, float, float]:
    """(difference, low, high, p) of two proportions on the same n games: b games are
    successes under the new setting only, c under the old only. The interval is Tango's score
    interval: every delta whose score statistic lies within +-z (found by root finding; the
    statistic decreases in delta). p is McNemar's exact test. NaNs when n == 0."""
    if n <= 0:
        return math.nan, math.nan, math.nan, math.nan
    from scipy.optimize import brentq  # imported here: scipy costs every start about 0.4 s

    d = (b - c) / n
    p = mcnemar_exact(b, c)
    eps = 1e-12

    def f(x: float, target: float) -> float:
        return _tango_z(x, b, c, n) - target

    lo = -1.0 if b == 0 and c == n else brentq(f, -1.0 + eps, d, args=(z,), xtol=1e-15)
    hi = 1.0 if c == 0 and b == n else brentq(f, d, 1.0 - eps, args=(-z,), xtol=1e-15)
    return d, min(lo, d), max(hi, d), p


def discordant_from_normal(d: float, lo: float, hi: float, n: int,
                           z: float = Z95) -> tuple[int, int]:
    """(b, c) of a paired difference of rates recorded as its normal interval (`paired`, on
    d in {-1, 0, 1} per game): sum(d^2) = b + c and sum(d) = b - c follow from the mean and
    the half-width, so an interval recorded that way can be given again as
    `paired_proportions(b, c, n)`."""
    half = (hi - lo) / 2.0
    m = round(half * half * n * (n - 1) / (z * z) + n * d * d)
    diff = round(n * d)
    return (m + diff) // 2, (m - diff) // 2


def unpaired(k1: int, n1: int, k2: int, n2: int, z: float = Z95) -> tuple[float, float, float]:
    """(p2 - p1, low, high) for two independent samples (normal approximation)."""
    p1, p2 = k1 / n1, k2 / n2
    half = z * math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    d = p2 - p1
    return d, d - half, d + half


def hist_quantile(hist: np.ndarray, q: float, lo: int = 0) -> float:
    """The q-quantile (inverse of the empirical CDF: the smallest value v with
    F(v) >= q) of integer values whose histogram, starting at value `lo`, is `hist`."""
    n = int(hist.sum())
    if n == 0:
        return math.nan
    cum = np.cumsum(hist)
    target = max(1, math.ceil(q * n - 1e-9))
    return float(lo + int(np.searchsorted(cum, target)))


def _family(p) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p as floats, an all-NaN result, the indices of the tested p-values, smallest first)."""
    p = np.asarray(p, dtype=float)
    ok = np.flatnonzero(~np.isnan(p))
    return p, np.full_like(p, np.nan), ok[np.argsort(p[ok], kind="stable")]


def holm(p) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error over all of `p`; NaN left out of
    the family)."""
    p, out, order = _family(p)
    m = len(order)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def benjamini_hochberg(p) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (false discovery rate over all of `p`; NaN left
    out of the family)."""
    p, out, order = _family(p)
    m = len(order)
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, m * p[i] / (rank + 1))
        out[i] = min(1.0, running)
    return out


ADJUSTMENTS = {"holm": holm, "bh": benjamini_hochberg}
