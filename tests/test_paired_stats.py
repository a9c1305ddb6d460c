"""Paired differences of rates (common random numbers): Tango's score interval, McNemar's
exact test, the games whose outcome changed, and the correction of a sweep's comparisons."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from fbsim.experiments.metrics.stats import (
    Z95,
    benjamini_hochberg,
    holm,
    mcnemar_exact,
    paired,
    paired_proportions,
)
from fbsim.experiments.metrics.tables import adjust_comparisons
from fbsim.experiments.metrics.tally import Tally


def _tango_z(delta, b, c, n):
    """Tango's statistic written out from its likelihood: the restricted MLE of p01 found by
    maximising the log-likelihood numerically, not by the closed form."""
    from scipy.optimize import minimize_scalar

    hi = (1.0 - delta) / 2.0
    lo = max(0.0, -delta)

    def nll(q):
        p10, p01 = q + delta, q
        rest = 1.0 - p10 - p01
        out = 0.0
        for k, p in ((b, p10), (c, p01), (n - b - c, rest)):
            if k:
                out -= k * math.log(max(p, 1e-300))
        return out

    q = minimize_scalar(nll, bounds=(lo + 1e-15, hi - 1e-15), method="bounded",
                        options={"xatol": 1e-14}).x
    return (b - c - n * delta) / math.sqrt(n * (2 * q + delta * (1 - delta)))


@pytest.mark.parametrize(("b", "c", "n"), [(5, 1, 1000), (30, 12, 5000), (0, 4, 800),
                                           (200, 260, 10_000)])
def test_tango_bounds_are_where_the_score_statistic_is_z(b, c, n):
    d, lo, hi, _ = paired_proportions(b, c, n)
    assert d == (b - c) / n
    assert _tango_z(lo, b, c, n) == pytest.approx(Z95, abs=2e-4)
    assert _tango_z(hi, b, c, n) == pytest.approx(-Z95, abs=2e-4)


@pytest.mark.parametrize("n", [10, 1000, 200_000, 10**8])
def test_no_changed_game_gives_an_upper_bound_never_a_zero_width_interval(n):
    """No game changed: the interval is +-z^2 / (n + z^2) (about 3.84 / n), never [0, 0]."""
    d, lo, hi, p = paired_proportions(0, 0, n)
    bound = Z95 ** 2 / (n + Z95 ** 2)
    assert d == 0.0 and p == 1.0
    assert hi == pytest.approx(bound, rel=1e-6) and lo == pytest.approx(-bound, rel=1e-6)
    assert hi > 0.0 > lo


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 10**7), st.data())
def test_tango_interval_holds_the_difference_and_stays_in_range(n, data):
    b = data.draw(st.integers(0, min(n, 10**4)))
    c = data.draw(st.integers(0, min(n - b, 10**4)))
    d, lo, hi, p = paired_proportions(b, c, n)
    assert -1.0 <= lo < hi <= 1.0
    assert lo <= d <= hi
    assert 0.0 <= p <= 1.0


@pytest.mark.parametrize(("b", "c"), [(0, 0), (1, 0), (5, 1), (12, 30), (400, 460),
                                      (10, 10), (3000, 3200)])
def test_mcnemar_exact_is_the_two_sided_sign_test(b, c):
    want = 1.0 if b + c == 0 else binomtest(b, b + c, 0.5).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(want, rel=1e-9)


# (games, P(new only), P(old only)): few games change outcome
FEW_CHANGES = [(500, 0.004, 0.002), (100_000, 0.00002, 0.00001), (5000, 0.001, 0.0005),
               (20_000, 0.0002, 0.0003)]


@pytest.mark.parametrize(("n", "p10", "p01"), FEW_CHANGES)
def test_paired_interval_covers_at_least_93_percent_when_few_games_change(n, p10, p01):
    """Coverage of the 95% interval measured by simulation (3000 draws): >= 93%. The normal
    interval of per-game differences (the one used before) falls to 85-87% in the first two
    regimes, which is what this test guards against."""
    rng = np.random.default_rng(n)
    cells = rng.multinomial(n, [p10, p01, 1 - p10 - p01], size=3000)
    true = p10 - p01
    hits = sum(lo <= true <= hi for lo, hi in
               (paired_proportions(int(b), int(c), n)[1:3] for b, c, _ in cells))
    assert hits / len(cells) >= 0.93


def test_the_normal_interval_undercovers_where_the_score_interval_does_not():
    """The reason for the score interval: in a few-changes regime the normal interval's
    coverage is far below 95%."""
    n, p10, p01 = 500, 0.004, 0.002
    rng = np.random.default_rng(7)
    cells = rng.multinomial(n, [p10, p01, 1 - p10 - p01], size=3000)
    true = p10 - p01
    normal = np.mean([paired(int(b - c), int(b + c), n)[1] <= true
                      <= paired(int(b - c), int(b + c), n)[2] for b, c, _ in cells])
    score = np.mean([paired_proportions(int(b), int(c), n)[1] <= true
                     <= paired_proportions(int(b), int(c), n)[2] for b, c, _ in cells])
    assert normal < 0.90 < 0.93 <= score


def test_tally_counts_the_changed_games_from_its_cross_moments():
    """b, c and the interval of a paired rate from a Tally equal a direct count."""
    rng = np.random.default_rng(3)
    n = 5000
    old = rng.random(n) < 0.3
    new = old.copy()
    flip = rng.random(n) < 0.01
    new[flip] = ~new[flip]
    t = Tally(4, 8, paired=True)
    k = t.index["collapse"]
    t.games = n
    t.s1[k] = [new.sum(), n, old.sum(), n]
    ys = np.stack([new, np.ones(n), old, np.ones(n)]).astype(np.int64)
    t.s2[k] = ys @ ys.T
    b, c = int((new & ~old).sum()), int((old & ~new).sum())
    assert t.discordant("collapse") == (b, c)
    assert t.changed(k) == b + c
    assert t.difference(k) == paired_proportions(b, c, n)


def test_benjamini_hochberg_matches_a_worked_example():
    p = np.array([0.01, 0.04, 0.03, 0.005, np.nan])
    # sorted 0.005, 0.01, 0.03, 0.04 (m = 4): 0.02, 0.02, 0.04, 0.04
    assert benjamini_hochberg(p)[:4] == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert math.isnan(benjamini_hochberg(p)[4])
    assert holm(p)[:4] == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_a_sweeps_comparisons_are_corrected_together():
    import pandas as pd

    win = pd.DataFrame({"point": [0, 0, 1, 1], "baseline_point": [0, 0, 0, 0],
                        "diff_p_value": [np.nan, np.nan, 0.01, 0.02]})
    out = pd.DataFrame({"point": [0, 1], "baseline_point": [0, 0],
                        "collapse_diff_p_value": [np.nan, 0.03],
                        "everyone_loses_diff_p_value": [np.nan, 1.0]})
    meta = adjust_comparisons(win, out, "holm")
    assert meta["comparisons"] == 4 and meta["method"] == "holm"
    assert list(win["diff_p_adjusted"][2:]) == pytest.approx([0.04, 0.06])
    assert list(win["significant"]) == [False, False, True, False]
    assert out["collapse_diff_p_adjusted"][1] == pytest.approx(0.06)
    assert not out["collapse_significant"][1]
    meta = adjust_comparisons(win, out, "bh")
    assert out["collapse_significant"][1] and meta["method"] == "bh"


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 10**7), st.data())
def test_a_recorded_normal_interval_gives_back_its_changed_games(n, data):
    """Summaries recorded with the normal interval are given Tango's again: b and c follow
    exactly from the mean and the half-width."""
    from fbsim.experiments.metrics.stats import discordant_from_normal

    b = data.draw(st.integers(0, min(n, 10**5)))
    c = data.draw(st.integers(0, min(n - b, 10**5)))
    d, lo, hi = paired(b - c, b + c, n)
    assert discordant_from_normal(d, lo, hi, n) == (b, c)
