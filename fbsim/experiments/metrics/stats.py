"""Interval estimates for win and collapse rates.

- `wilson`: the Wilson score interval of a binomial proportion (95% by default), which stays
  inside [0, 1] and behaves at rates near 0 or 1, unlike the normal (Wald) interval.
- `paired`: the mean and normal interval of per-game differences d_i in {-1, 0, 1} between two
  sweep points that played the same games (common random numbers), from the integer sums
  sum(d) and sum(d^2).
- `unpaired`: the interval of a difference of two independent proportions, for comparison.
- `hist_quantile`: exact quantiles of integer values from their histogram.
"""

from __future__ import annotations

import math

import numpy as np

Z95 = 1.959963984540054  # the 0.975 quantile of the standard normal


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
