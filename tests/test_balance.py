"""The report's metrics (fbsim.experiments.metrics.balance): per-game values against the
counts (fbsim.experiments.metrics.counts) and the reference engine, exact merging of integer
moments, the delta-method and paired intervals against direct computation, Holm's correction,
and the counts of kernel records (per-round Dial histograms included) against
reference-engine games."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fbsim.experiments.metrics import balance as B
from fbsim.experiments.metrics.counts import DIAL_HIST_LO, aggregate_records
from fbsim.experiments.metrics.stats import Z95, hist_quantile, paired
from fbsim.game import layout as L
from fbsim.game.lineup import Lineup, parse_lineup
from fbsim.kernel import simulate
from fbsim.reference.engine import play_game
from fbsim.rules import load_rules

RULES = load_rules(sets=["players=5"])


@pytest.fixture(scope="module")
def rec():
    return simulate(RULES, None, seed=5, n_games=3000)


def column(key: str, players: int = 5) -> int:
    return [m.key for m in B.metrics(players)].index(key)


def test_per_game_metrics_sum_to_the_counts(rec):
    y, x = B.per_game(rec, RULES)
    c = aggregate_records(rec, RULES)
    assert y.shape == x.shape == (3000, len(B.metrics(5)))
    for a, name in enumerate(L.AGENDA_NAMES):
        assert y[:, column(f"win_{name}")].sum() == c["wins_agenda"][a]
    assert y[:, column("everyone_loses")].sum() == c["nobody"]
    for b, name in enumerate(L.BAND_NAMES):
        assert y[:, column(f"band_{name}")].sum() == c["bands"][b]
    assert y[:, column("final_dial")].sum() == c["dial_sum"]
    assert y[:, column("rounds_played")].sum() == c["rounds_sum"]
    assert y[:, column("masks_per_seat")].sum() == c["masks_used"]
    for key in ("fog_in", "fog_requested", "fog_received", "overclaim"):
        assert y[:, column(key)].sum() == c[key]
    assert y[:, column("overclaimers")].sum() == c["overclaimers"]
    # R-S3/D9: place p is seat (first_player + p) % n, and the places share every win
    assert [y[:, column(f"win_place_{p}")].sum() for p in range(5)] == list(
        c["wins_seat"][:5])
    for a, name in enumerate(L.AGENDA_NAMES):
        assert y[:, column(f"legacy_{name}")].sum() == c["legacy_sum"][a]
        assert x[:, column(f"legacy_{name}")].sum() == c["legacy_n"][a]


def test_R_A3_accusation_metrics_match_the_reference_event_log():
    # Accuracy (cornered players who were Accelerationists), points at Accelerationists and
    # reveals, counted from the reference engine's narrated events instead of records.
    rules = load_rules(sets=["players=4"])
    games = 150
    cols = simulate(rules, None, seed=3, n_games=games)
    y, x = B.per_game(cols, rules)
    corners = accel_corners = points = accel_points = reveals = 0
    for g in range(games):
        r = play_game(rules, Lineup(), 3, g, events=True)
        agenda = {s.seat: s.agenda for s in r.seats}
        for e in r.events:
            if e.kind == "point" and e.data.get("target", -1) >= 0:
                points += 1
                accel_points += agenda[e.data["target"]] == "accelerationist"
            elif e.kind == "cornered" and e.data["seat"] >= 0:
                corners += 1
                accel_corners += agenda[e.data["seat"]] == "accelerationist"
            elif e.kind == "reveal" and e.step == "accusation":
                reveals += 1
    assert corners > 0 and points > 0
    k = column("accuracy", 4)
    assert (y[:, k].sum(), x[:, k].sum()) == (accel_corners, corners)
    k = column("points_at_accelerationists", 4)
    assert (y[:, k].sum(), x[:, k].sum()) == (accel_points, points)
    assert y[:, column("reveal_share", 4)].sum() == reveals


def test_tally_merges_blocks_exactly(rec):
    y, x = B.per_game(rec, RULES)
    whole = B.BalanceTally(y.shape[1], paired=True)
    whole.add((y, x), (y[::-1], x[::-1]))
    parts = B.BalanceTally(y.shape[1], paired=True)
    for lo, hi in ((0, 1), (1, 1000), (1000, 3000)):
        t = B.BalanceTally(y.shape[1], paired=True)
        t.add((y[lo:hi], x[lo:hi]), (y[::-1][lo:hi], x[::-1][lo:hi]))
        parts.merge(t)
    assert parts.games == whole.games == 3000
    assert np.array_equal(parts.s1, whole.s1) and np.array_equal(parts.s2, whole.s2)


def test_means_get_the_usual_interval_and_paired_differences_the_paired_one(rec):
    y, x = B.per_game(rec, RULES)
    k = column("final_dial")
    t = B.BalanceTally(y.shape[1], paired=True)
    shifted = y.copy()
    shifted[::3, k] += 7  # a rule that moves a third of the games by 7 ppm
    t.add((shifted, x), (y, x))
    v, lo, hi = t.estimate(k)
    d = shifted[:, k].astype(float)
    half = Z95 * d.std(ddof=1) / math.sqrt(len(d))
    assert v == pytest.approx(d.mean()) and hi - v == pytest.approx(half)
    diff, dlo, dhi, p = t.difference(k)
    dd = (shifted[:, k] - y[:, k]).astype(np.int64)
    want = paired(int(dd.sum()), int((dd * dd).sum()), len(dd))
    assert (diff, dlo, dhi) == pytest.approx(want)
    assert p < 1e-6


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(5, 400))
def test_ratio_difference_is_the_delta_method_on_direct_influences(seed, n):
    rng = np.random.default_rng(seed)
    x1, x0 = rng.integers(0, 4, n), rng.integers(0, 4, n)
    x1[0] = x0[0] = 1  # both ratios defined
    y1, y0 = rng.binomial(x1, 0.4), rng.binomial(x0, 0.5)
    t = B.BalanceTally(1, paired=True)
    t.add((y1[:, None], x1[:, None]), (y0[:, None], x0[:, None]))
    r1, r0 = y1.sum() / x1.sum(), y0.sum() / x0.sum()
    z = (y1 - r1 * x1) / x1.mean() - (y0 - r0 * x0) / x0.mean()
    se = math.sqrt((z * z).sum() / (n - 1) / n)
    d, lo, hi, p = t.difference(0)
    assert d == pytest.approx(r1 - r0)
    if se > 1e-9:
        assert hi - d == pytest.approx(Z95 * se, rel=1e-6)
        assert p == pytest.approx(math.erfc(abs(d) / se / math.sqrt(2)), rel=1e-6, abs=1e-12)
    v, vlo, vhi = t.estimate(0)
    z1 = (y1 - r1 * x1) / x1.mean()
    assert v == pytest.approx(r1)
    assert vhi - v == pytest.approx(Z95 * math.sqrt((z1 * z1).sum() / (n - 1) / n), abs=1e-12)


def test_identical_games_are_not_tested(rec):
    y, x = B.per_game(rec, RULES)
    t = B.BalanceTally(y.shape[1], paired=True)
    t.add((y, x), (y, x))
    for k in range(y.shape[1]):
        d, lo, hi, p = t.difference(k)
        assert d == 0 or math.isnan(d)
        assert math.isnan(p)


def test_holm_adjusts_step_down_and_ignores_nan():
    p = np.array([0.01, 0.04, np.nan, 0.03, 0.005])
    adj = B.holm(p)
    # sorted 0.005, 0.01, 0.03, 0.04 over m = 4: 0.02, 0.03, 0.06, 0.06 (monotone)
    assert np.isnan(adj[2])
    assert adj[[4, 0, 3, 1]] == pytest.approx([0.02, 0.03, 0.06, 0.06])
    assert np.all(adj[~np.isnan(p)] >= p[~np.isnan(p)])
    assert B.holm(np.array([0.9, 0.8]))[0] == 1.0


def test_dial_round_histograms_of_the_counts_equal_reference_games():
    # The per-round Dial histograms counted from kernel records against the trajectories of
    # the same games played by the reference engine, and their quantiles against numpy's
    # inverted-CDF quantiles of those trajectories.
    rules = load_rules(sets=["players=6"])
    lineup = parse_lineup("random", [], 6)  # random bots: some games collapse, some not
    games = 120
    agg = aggregate_records(simulate(rules, lineup, seed=9, n_games=games, chunk=7), rules)
    recs = [play_game(rules, lineup, 9, g) for g in range(games)]
    traj = np.array([r.dial_by_round for r in recs])
    assert agg["dial_round_hist"].shape == (rules.rounds, 1024)
    for r in range(rules.rounds):
        want = np.bincount(traj[:, r] - DIAL_HIST_LO, minlength=1024)
        assert np.array_equal(agg["dial_round_hist"][r], want), r
        for q in (0.05, 0.5, 0.95):
            assert hist_quantile(agg["dial_round_hist"][r], q, DIAL_HIST_LO) == np.quantile(
                traj[:, r], q, method="inverted_cdf")
    assert np.array_equal(traj[:, -1], [r.final_dial for r in recs])
    # the fan covers games that collapsed early and games that survived
    assert (traj[:, -1] >= rules.dial.collapse).any() and (
        traj[:, -1] < rules.dial.severe).any()
    assert any(r.rounds_played < rules.rounds for r in recs)


def test_counts_of_kernel_records_equal_counts_of_reference_games():
    """Every count, from the kernel's records, against the same count taken in plain Python
    over the reference engine's records of the same games."""
    from fbsim.kernel.dispatch import bot_id

    rules = load_rules(sets=["players=5"])
    lineup = parse_lineup("random", ["3=hoarder"], 5)  # some games collapse, some not
    games = 150
    got = aggregate_records(simulate(rules, lineup, seed=11, n_games=games, chunk=16), rules)
    recs = [play_game(rules, lineup, 11, g) for g in range(games)]
    ag = L.AGENDA_NAMES.index
    want = {k: np.zeros_like(v) if isinstance(v, np.ndarray) else 0 for k, v in got.items()}
    want["games"] = games
    for rec in recs:
        want["ends"][L.END_NAMES.index(rec.end)] += 1
        band = L.BAND_NAMES.index(rec.band)
        want["bands"][band] += 1
        if rec.winner >= 0:
            want["wins_agenda"][ag(rec.winner_agenda)] += 1
            want["wins_seat"][rec.winner] += 1
            want["wins_bot"][bot_id(rec.seats[rec.winner].bot)] += 1
        else:
            want["nobody"] += 1
        for a in {ag(s.agenda) for s in rec.seats}:
            want["games_with_agenda"][a] += 1
        for s in rec.seats:
            a = ag(s.agenda)
            want["seats_bot"][bot_id(s.bot)] += 1
            want["dealt"][a] += 1
            want["capital_sum"][a] += s.capital
            if band != L.COLLAPSE:
                want["legacy_sum"][a] += s.legacy
                want["legacy_n"][a] += 1
            want["masks_used"] += rules.masks - s.masks_left
            want["fog_in"] += s.fog_in
            want["fog_requested"] += s.fog_requested
            want["fog_received"] += s.fog_received
            if s.fog_received > s.fog_in:
                want["overclaim"] += s.fog_received - s.fog_in
                want["overclaimers"] += 1
        want["rounds_sum"] += rec.rounds_played
        want["dial_sum"] += rec.final_dial
        want["dial_sq_sum"] += rec.final_dial ** 2
        want["dial_hist"][rec.final_dial - DIAL_HIST_LO] += 1
        for r, d in enumerate(rec.dial_by_round):
            want["dial_round_hist"][r, d - DIAL_HIST_LO] += 1
    for k in got:
        assert np.array_equal(np.asarray(got[k]), np.asarray(want[k])), k
    assert got["nobody"] > 0 and got["legacy_n"].sum() > 0 and got["bands"].sum() == games
