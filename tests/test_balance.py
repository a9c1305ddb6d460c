"""Every metric (fbsim.experiments.metrics.definitions) and its counting (Tally): per-game
values against the reference engine's records, exact merging of integer moments, the
delta-method and paired intervals against direct computation, Holm's correction, and the
per-round Dial histograms against reference-engine games."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fbsim.experiments.metrics import balance as B
from fbsim.experiments.metrics.definitions import DIAL_HIST_LO, bot_rows, metrics
from fbsim.experiments.metrics.measure import Block
from fbsim.experiments.metrics.stats import Z95, hist_quantile, paired
from fbsim.experiments.metrics.tally import Tally
from fbsim.game import layout as L
from fbsim.kernel import simulate
from fbsim.lineup import Lineup, parse_lineup
from fbsim.reference.engine import play_game
from fbsim.rules import load_rules

RULES = load_rules(sets=["players=5"])


@pytest.fixture(scope="module")
def rec():
    return simulate(RULES, None, seed=5, n_games=3000)


def column(key: str, players: int = 5) -> int:
    return [m.key for m in metrics(players, bot_rows(Lineup()))].index(key)


def per_game(rec: dict, rules) -> tuple[np.ndarray, np.ndarray]:
    """(y, x) as [games, metrics]."""
    b = Tally.for_rules(rules, per_game=True).measure(rec, rules, Lineup())
    return b.y.T, b.x.T


def block(y, x) -> Block:
    """A block from [games, metrics] arrays."""
    return Block(np.ascontiguousarray(y.T), np.ascontiguousarray(x.T),
                 np.zeros(1024, dtype=np.int64), np.zeros((8, 1024), dtype=np.int64))


def one_metric_tally(paired_: bool = True, kind: str = "pct") -> Tally:
    """A tally of one metric; of kind "pct" (a general ratio: the delta method) by default."""
    return Tally(4, 8, paired=paired_, bots=(),
                 metric_list=[dataclasses.replace(metrics(4, ())[0], kind=kind)])


def test_a_plain_count_adds_the_same_moments_game_by_game_as_from_kept_games(rec):
    """Unpaired, a block carries only its moments, added up as each game is measured (in
    chunks, as the runner measures them); the tally is the same integers as one counted from
    every game's kept (y, x)."""
    plain, kept = Tally.for_rules(RULES), Tally.for_rules(RULES, per_game=True)
    m = plain.measurer(RULES, Lineup(), slot=0)
    arrays = rec.kernel_arrays
    m.start(3000)
    for lo in range(0, 3000, 700):
        m.chunk((arrays[0], arrays[1], arrays[3]), lo, min(lo + 700, 3000))
    b = m.finish()
    assert b.y is None and b.games == 3000
    plain.add(b)
    kept.add(kept.measure(rec, RULES, Lineup()))
    assert plain.games == kept.games == 3000
    assert np.array_equal(plain.s1, kept.s1) and np.array_equal(plain.s2, kept.s2)
    assert np.array_equal(plain.dial_hist, kept.dial_hist)
    assert np.array_equal(plain.dial_round_hist, kept.dial_round_hist)
    assert plain.s1[:, 0].sum() > 0


def test_a_paired_count_refuses_blocks_without_their_games(rec):
    paired = Tally.for_rules(RULES, paired=True)
    plain = Tally.for_rules(RULES)
    b = plain.measure(rec, RULES, Lineup())
    with pytest.raises(ValueError, match="game by game"):
        paired.add(b, b)


def test_per_game_metrics_count_what_the_reference_records_say():
    rules = load_rules(sets=["players=5"])
    games = 200
    cols = simulate(rules, None, seed=11, n_games=games)
    t = Tally.for_rules(rules)
    t.add(t.measure(cols, rules, Lineup()))
    recs = [play_game(rules, Lineup(), 11, g) for g in range(games)]
    assert t.games == games
    for name in L.AGENDA_NAMES:
        assert t.total(f"win_{name}") == sum(r.winner_agenda == name for r in recs)
        assert t.total(f"dealt_{name}") == sum(s.agenda == name for r in recs for s in r.seats)
        surv = [s.legacy for r in recs if r.band != "collapse" for s in r.seats
                if s.agenda == name]
        assert (t.total(f"legacy_{name}"), t.denominator(f"legacy_{name}")) == (
            sum(surv), len(surv))
    assert t.total("everyone_loses") == sum(r.winner < 0 for r in recs)
    for name in L.BAND_NAMES:
        assert t.total(f"band_{name}") == sum(r.band == name for r in recs)
    for name in L.END_NAMES:
        assert t.total(f"end_{name.replace('-', '_')}") == sum(r.end == name for r in recs)
    assert t.total("final_dial") == sum(r.final_dial for r in recs)
    assert t.total("final_dial_sq") == sum(r.final_dial ** 2 for r in recs)
    assert t.total("rounds_played") == sum(r.rounds_played for r in recs)
    assert t.total("masks_per_seat") == sum(rules.masks - s.masks_left for r in recs
                                            for s in r.seats)
    for key in ("fog_in", "fog_requested", "fog_received"):
        assert t.total(key) == sum(getattr(s, key) for r in recs for s in r.seats)
    over = [s.fog_received - s.fog_in for r in recs for s in r.seats]
    assert t.total("overclaim") == sum(o for o in over if o > 0)
    assert t.total("overclaimers") == sum(o > 0 for o in over)
    for s in range(5):
        assert t.total(f"win_seat_{s}") == sum(r.winner == s for r in recs)
        # R-S3/D9: place p is seat (first_player + p) % n
        assert t.total(f"win_place_{s}") == sum(
            r.winner == (rules.first_player + s) % 5 for r in recs)
    for b in bot_rows(Lineup()):
        assert t.total(f"seats_bot_{b}") == sum(s.bot == b for r in recs for s in r.seats)
        assert t.total(f"win_bot_{b}") == sum(r.winner >= 0 and r.seats[r.winner].bot == b
                                              for r in recs)
    assert np.array_equal(t.dial_hist, np.bincount([r.final_dial for r in recs],
                                                   minlength=1024))


def test_R_A3_accusation_metrics_match_the_reference_event_log():
    # Accuracy (cornered players who were Accelerationists), points at Accelerationists and
    # reveals, counted from the reference engine's narrated events instead of records.
    rules = load_rules(sets=["players=4"])
    games = 150
    cols = simulate(rules, None, seed=3, n_games=games)
    y, x = per_game(cols, rules)
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
    y, x = per_game(rec, RULES)
    whole = Tally.for_rules(RULES, paired=True)
    whole.add(block(y, x), block(y[::-1], x[::-1]))
    parts = Tally.for_rules(RULES, paired=True)
    for lo, hi in ((0, 1), (1, 1000), (1000, 3000)):
        t = Tally.for_rules(RULES, paired=True)
        t.add(block(y[lo:hi], x[lo:hi]), block(y[::-1][lo:hi], x[::-1][lo:hi]))
        parts.merge(t)
    assert parts.games == whole.games == 3000
    assert np.array_equal(parts.s1, whole.s1) and np.array_equal(parts.s2, whole.s2)


def test_means_get_the_usual_interval_and_paired_differences_the_paired_one(rec):
    y, x = per_game(rec, RULES)
    k = column("final_dial")
    t = Tally.for_rules(RULES, paired=True)
    shifted = y.copy()
    shifted[::3, k] += 7  # a rule that moves a third of the games by 7 ppm
    t.add(block(shifted, x), block(y, x))
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
    t = one_metric_tally()
    t.add(block(y1[:, None], x1[:, None]), block(y0[:, None], x0[:, None]))
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
    y, x = per_game(rec, RULES)
    t = Tally.for_rules(RULES, paired=True)
    t.add(block(y, x), block(y, x))
    for k in range(y.shape[1]):
        d, lo, hi, p = t.difference(k)
        assert d == 0 or math.isnan(d)
        if t.metrics[k].kind == "rate":  # McNemar on no changed game; a real bound (~3.84/n)
            assert t.changed(k) == 0 and p == 1.0
            assert lo < 0 < hi and hi == pytest.approx(Z95 ** 2 / (t.games + Z95 ** 2))
        else:
            assert math.isnan(p) and t.changed(k) is None


def test_holm_adjusts_step_down_and_ignores_nan():
    p = np.array([0.01, 0.04, np.nan, 0.03, 0.005])
    adj = B.holm(p)
    # sorted 0.005, 0.01, 0.03, 0.04 over m = 4: 0.02, 0.03, 0.06, 0.06 (monotone)
    assert np.isnan(adj[2])
    assert adj[[4, 0, 3, 1]] == pytest.approx([0.02, 0.03, 0.06, 0.06])
    assert np.all(adj[~np.isnan(p)] >= p[~np.isnan(p)])
    assert B.holm(np.array([0.9, 0.8]))[0] == 1.0


def test_dial_round_histograms_equal_reference_games():
    # The per-round Dial histograms counted from kernel records, block by block, against the
    # trajectories of the same games played by the reference engine, and their quantiles
    # against numpy's inverted-CDF quantiles of those trajectories.
    from fbsim.experiments.run.runner import Arm, run_blocks

    rules = load_rules(sets=["players=6"])
    lineup = parse_lineup("random", [], 6)  # random bots: some games collapse, some not
    games = 120
    t = Tally.for_rules(rules, lineup)
    run_blocks([Arm(rules, lineup)], 9, 0, games,
               lambda first, recs, blocks: t.add(t.measure(recs[0], rules, lineup)), block=7)
    recs = [play_game(rules, lineup, 9, g) for g in range(games)]
    traj = np.array([r.dial_by_round for r in recs])
    assert t.dial_round_hist.shape == (rules.rounds, 1024)
    for r in range(rules.rounds):
        want = np.bincount(traj[:, r] - DIAL_HIST_LO, minlength=1024)
        assert np.array_equal(t.dial_round_hist[r], want), r
        for q in (0.05, 0.5, 0.95):
            assert hist_quantile(t.dial_round_hist[r], q, DIAL_HIST_LO) == np.quantile(
                traj[:, r], q, method="inverted_cdf")
    assert np.array_equal(traj[:, -1], [r.final_dial for r in recs])
    # the fan covers games that collapsed early and games that survived
    assert (traj[:, -1] >= rules.dial.collapse).any() and (traj[:, -1] < rules.dial.severe).any()


def test_the_moments_table_holds_each_named_sum():
    """`moments.moments_table`'s columns, by their names: the sums of the parts and of the
    products of each pair of parts, paired and not (the unpaired table leaves the baseline's
    columns at zero)."""
    from fbsim.experiments.metrics import moments as M

    rng = np.random.default_rng(3)
    parts = [rng.integers(-5, 9, size=(3, 40)) for _ in M.PARTS]
    T = M.moments_table(*parts, paired=True)
    assert T.shape == (3, M.COLUMNS)
    for i in range(len(M.PARTS)):
        assert np.array_equal(T[:, M.column(i)], parts[i].sum(axis=1))
        for j in range(len(M.PARTS)):
            assert np.array_equal(T[:, M.column(i, j)], (parts[i] * parts[j]).sum(axis=1))
    U = M.moments_table(*parts, paired=False)
    assert np.array_equal(U[:, [M.SUM_Y, M.SUM_X, M.YY, M.YX, M.XX]],
                          T[:, [M.SUM_Y, M.SUM_X, M.YY, M.YX, M.XX]])
    assert not U[:, [M.SUM_BY, M.SUM_BX, M.Y_BY, M.BX_BX]].any()
