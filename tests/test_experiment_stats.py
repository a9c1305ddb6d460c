"""Interval estimates: Wilson intervals against scipy's values, paired differences, quantiles
from histograms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fbsim.experiments.metrics.stats import hist_quantile, paired, unpaired, wilson

# scipy.stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
SCIPY_WILSON = [
    (0, 10, 0.0, 0.27753279986288926),
    (1, 10, 0.017876213095072896, 0.4041500267952385),
    (5, 10, 0.236593090512564, 0.7634069094874361),
    (404, 40000, 0.009166078620383676, 0.011128008877598),
    (29380, 40000, 0.7301500393193099, 0.7388049239011909),
    (999, 1000, 0.9943574414020421, 0.9998234536293739),
    (7, 7, 0.6456695649333126, 1.0),
    (3, 1000000, 1.0202712409681223e-06, 8.821149774312435e-06),
]


@pytest.mark.parametrize(("k", "n", "lo", "hi"), SCIPY_WILSON)
def test_wilson_matches_scipy(k, n, lo, hi):
    rate, got_lo, got_hi = wilson(k, n)
    assert rate == k / n
    assert got_lo == pytest.approx(lo, rel=1e-9, abs=1e-15)
    assert got_hi == pytest.approx(hi, rel=1e-9, abs=1e-15)


def test_wilson_of_no_games_is_nan():
    assert all(math.isnan(x) for x in wilson(0, 0))


@given(st.integers(1, 10**7), st.data())
def test_wilson_contains_the_rate_and_stays_in_unit_interval(n, data):
    k = data.draw(st.integers(0, n))
    rate, lo, hi = wilson(k, n)
    assert 0.0 <= lo <= rate <= hi <= 1.0


@given(st.lists(st.sampled_from([-1, 0, 1]), min_size=2, max_size=300))
def test_paired_matches_numpy_mean_and_sample_sd(d):
    a = np.array(d)
    mean, lo, hi = paired(int(a.sum()), int((a * a).sum()), len(a))
    assert mean == pytest.approx(a.mean())
    half = 1.959963984540054 * a.std(ddof=1) / math.sqrt(len(a))
    assert hi - mean == pytest.approx(half, abs=1e-12)
    assert mean - lo == pytest.approx(half, abs=1e-12)


def test_unpaired_interval_of_a_known_case():
    d, lo, hi = unpaired(500, 1000, 550, 1000)
    half = 1.959963984540054 * math.sqrt(0.25 / 1000 + 0.55 * 0.45 / 1000)
    assert d == pytest.approx(0.05)
    assert (lo, hi) == pytest.approx((0.05 - half, 0.05 + half))


@given(st.lists(st.integers(0, 60), min_size=1, max_size=200),
       st.sampled_from([0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 1.0]))
def test_hist_quantile_is_numpy_inverted_cdf(values, q):
    lo = 10
    v = np.array(values) + lo
    hist = np.bincount(v - lo, minlength=61)
    expected = float(np.quantile(v, q, method="inverted_cdf"))
    assert hist_quantile(hist, q, lo) == expected
