"""Sweeps: specs, paired differences, provenance, atomic resumable datasets, --ci-width."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

from fbsim.experiments.metrics.stats import unpaired, wilson
from fbsim.experiments.run import runner
from fbsim.experiments.run.provenance import read_provenance
from fbsim.experiments.run.spec import (
    SpecError,
    SweepSpec,
    build_points,
    load_spec,
    parse_values,
    spec_from_dict,
)
from fbsim.experiments.run.sweep import TABLES, load, run_sweep
from fbsim.game import layout as L
from fbsim.kernel import simulate
from fbsim.lineup import Lineup
from fbsim.rules import load_rules, rules_from_toml, rules_hash
from tests.record_counts import aggregate_records

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _fixed_time(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")


# ------------------------------------------------------------------------------ specs


def test_ranges_and_lists():
    assert parse_values("baseline_offset", "-2..2") == [-2, -1, 0, 1, 2]
    assert parse_values("x", "0..1:0.25") == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert parse_values("masks", "0,1,3") == [0, 1, 3]
    assert parse_values("masks", [2, 4]) == [2, 4]
    assert parse_values("fog.partial_fill", "true,false") == [True, False]


@pytest.mark.parametrize(("raw", "msg"), [("3..1", "empty"), ("0..4:0", "step"),
                                          ("1,1", "repeated"), ("a..b", "not a number"),
                                          ("", "no values")])
def test_bad_ranges_name_the_parameter(raw, msg):
    with pytest.raises(SpecError, match=f"^masks: .*{msg}"):
        parse_values("masks", raw)


def test_grid_is_the_product_crossed_with_players():
    spec = SweepSpec(games=10, players=[3, 5], vary={"masks": [1, 2], "stagger": [0, 1, 2]})
    _, points = build_points(spec)
    assert len(points) == 12
    assert [p.values for p in points[:3]] == [{"players": 3, "masks": 1, "stagger": 0},
                                              {"players": 3, "masks": 1, "stagger": 1},
                                              {"players": 3, "masks": 1, "stagger": 2}]
    assert all(p.rules.masks == p.values["masks"] for p in points)
    # the baseline of each size: each key at its default value (masks 2, stagger 1)
    for p in points:
        b = points[p.baseline]
        assert b.players == p.players
        assert (b.values["masks"], b.values["stagger"]) == (2, 1)


@pytest.mark.parametrize(("spec", "msg"), [
    (SweepSpec(vary={"maskz": [1, 2]}), r"^maskz: .*unknown key; did you mean 'masks'"),
    (SweepSpec(vary={"masks": [2, -1]}), r"^masks: at the point \(players=4, masks=-1\)"),
    (SweepSpec(vary={"bots.fog-grabber.greed": [0.5, 3.0]}), r"^bots.fog-grabber.greed: "),
    (SweepSpec(vary={"masks": [1]}, baseline={"stagger": 1}), r"^baseline: stagger: not a"),
    (SweepSpec(points=[{"players": 4, "seat_bot": "7=hoarder"}]), r"seat must be 0 to 3"),
    # (set and varied: the varied values replace the set one at every point)
    (SweepSpec(vary={"dial.collapse": [600, 700]}, set={"dial.collapse": 650}),
     r"^set: dial.collapse: also varied"),
    (SweepSpec(points=[{"masks": 0}, {"masks": 1}], set={"masks": 2}),
     r"^set: masks: every point gives its own value"),
])
def test_bad_specs_fail_before_any_game(tmp_path, spec, msg):
    out = tmp_path / "never"
    with pytest.raises(SpecError, match=msg):
        run_sweep(spec, out)
    assert not out.exists()


def test_spec_file(tmp_path):
    (tmp_path / "r.toml").write_text("capital = 9\n")
    f = tmp_path / "s.toml"
    f.write_text('games = 500\nseed = 3\nplayers = "3..4"\nrules = "r.toml"\n'
                 '[set]\nstagger = 2\n[vary]\nmasks = "1..2"\n'
                 '[vary.bots.fog-grabber]\ngreed = [0.5, 1.0]\n')
    spec = load_spec(f)
    assert spec.games == 500 and spec.seed == 3 and spec.players == [3, 4]
    assert spec.vary == {"masks": [1, 2], "bots.fog-grabber.greed": [0.5, 1.0]}
    _, points = build_points(spec)
    assert len(points) == 8
    assert all(p.rules.capital == 9 and p.rules.stagger == 2 for p in points)
    with pytest.raises(SpecError, match="gamez: unknown key; did you mean 'games'"):
        spec_from_dict({"gamez": 3})


# ------------------------------------------------------------------- counting, pairing


def _small_spec(**kw) -> SweepSpec:
    base = {"games": 3000, "seed": 5, "players": [4], "vary": {"masks": [1, 2, 3]}}
    base.update(kw)
    return SweepSpec(**base)


def test_tables_match_the_counts_of_the_kernels_records(tmp_path):
    spec = _small_spec()
    res = run_sweep(spec, tmp_path / "s")
    _, points = build_points(spec)
    for p in points:
        agg = aggregate_records(simulate(p.rules, p.lineup, spec.seed, spec.games), p.rules)
        w = res.win_rates[(res.win_rates["point"] == p.index)
                          & (res.win_rates["kind"] == "agenda")].set_index("name")
        for a, name in enumerate(L.AGENDA_NAMES):
            assert w.loc[name, "wins"] == agg["wins_agenda"][a]
            assert w.loc[name, "seats"] == agg["dealt"][a]
            rate, lo, hi = wilson(int(agg["wins_agenda"][a]), spec.games)
            assert (w.loc[name, "rate"], w.loc[name, "ci_low"], w.loc[name, "ci_high"]) == (
                rate, lo, hi)
        o = res.outcomes.set_index("point").loc[p.index]
        assert o["collapses"] == agg["ends"][1] + agg["ends"][2]
        assert o["everyone_loses_games"] == agg["nobody"]
        s = res.seats[res.seats["point"] == p.index]
        assert list(s["wins"]) == list(agg["wins_seat"][:4])


def test_paired_difference_is_the_difference_of_rates(tmp_path):
    res = run_sweep(_small_spec(), tmp_path / "s")
    w = res.win_rates[res.win_rates["kind"] == "agenda"]
    for row in w.to_dict("records"):
        base = w[(w["point"] == row["baseline_point"]) & (w["name"] == row["name"])].iloc[0]
        assert row["diff"] == pytest.approx(row["rate"] - base["rate"], abs=1e-12)
        if row["point"] == row["baseline_point"]:  # no comparison: no interval, no test
            assert row["diff"] == 0.0 and math.isnan(row["diff_ci_low"])
            assert math.isnan(row["diff_p_value"]) and math.isnan(row["diff_p_adjusted"])
        else:  # a real interval, never of zero width, even when no game changed
            assert row["diff_ci_low"] <= row["diff"] <= row["diff_ci_high"]
            assert row["diff_ci_low"] < row["diff_ci_high"]
            assert row["changed_games"] >= abs(row["diff"]) * row["games"] - 1e-9
    prov = read_provenance(tmp_path / "s" / "win_rates.parquet")
    assert prov["multiple_comparisons"]["method"] == "holm"
    assert prov["multiple_comparisons"]["comparisons"] == int(
        res.win_rates["diff_p_adjusted"].notna().sum()
        + res.outcomes["collapse_diff_p_adjusted"].notna().sum()
        + res.outcomes["everyone_loses_diff_p_adjusted"].notna().sum())


def test_paired_intervals_are_narrower_than_independent_runs(tmp_path):
    """A one-unit change (masks 2 -> 3) measured on the same games has a far tighter interval
    than the same change measured by two independent runs of the same size."""
    n = 20_000
    spec = SweepSpec(games=n, seed=11, players=[4], vary={"masks": [2, 3]})
    _, (p2, p3) = build_points(spec)
    w = run_sweep(spec, tmp_path / "s").win_rates
    w3 = w[(w["point"] == 1) & (w["kind"] == "agenda")].set_index("name")
    assert (w3["baseline_point"] == 0).all()
    other = aggregate_records(simulate(p2.rules, p2.lineup, 12, n), p2.rules)  # another seed
    mine = aggregate_records(simulate(p3.rules, p3.lineup, 11, n), p3.rules)
    for a, name in enumerate(L.AGENDA_NAMES):
        paired_half = (w3.loc[name, "diff_ci_high"] - w3.loc[name, "diff_ci_low"]) / 2
        _, lo, hi = unpaired(int(other["wins_agenda"][a]), n, int(mine["wins_agenda"][a]), n)
        if name == "steward" and w3.loc[name, "wins"] < 400:
            continue  # too rare at 4 players for either interval to mean much
        assert paired_half < 0.6 * (hi - lo) / 2, name


def test_bot_rows_follow_the_seat_overrides(tmp_path):
    spec = SweepSpec(games=2000, seed=2, players=[4], points=[
        {"players": 4, "seat_bot": ""}, {"players": 4, "seat_bot": "1=hoarder"}],
        baseline={"seat_bot": ""})
    res = run_sweep(spec, tmp_path / "h")
    hb = res.win_rates[(res.win_rates["kind"] == "bot") & (res.win_rates["name"] == "hoarder")]
    assert list(hb["point"]) == [1]
    assert hb["seats"].iloc[0] == 2000
    rec = simulate(load_rules(sets=["players=4"]), Lineup(seats={1: "hoarder"}), 2, 2000)
    assert hb["wins"].iloc[0] == int((rec["winner"] == 1).sum())


# ---------------------------------------------------------------- files and provenance


def _bytes(out: Path) -> dict[str, bytes]:
    return {t: (out / f"{t}.parquet").read_bytes() for t in TABLES}


def test_provenance_keys_and_rules_round_trip(tmp_path):
    spec = _small_spec(games=500)
    run_sweep(spec, tmp_path / "s")
    need = {"fbsim_version", "kernel_version", "rules_version", "git_revision", "numba_version",
            "numpy_version", "time", "seed", "sweep_spec"}
    for t in TABLES:
        prov = read_provenance(tmp_path / "s" / f"{t}.parquet")
        assert need <= set(prov), need - set(prov)
        assert prov["seed"] == 5 and prov["games"] == 500 and prov["table"] == t
        assert prov["sweep_spec"]["vary"] == {"masks": [1, 2, 3]}
        assert prov["time"] == "2023-11-14T22:13:20+00:00"
        for entry in prov["points"]:
            rules = rules_from_toml(prov["rules_toml"][str(entry["point"])])
            assert rules_hash(rules) == entry["rules_hash"]
            assert rules.masks == entry["coordinates"]["masks"]
    part = read_provenance(tmp_path / "s" / "points" / "0001" / "win_rates.parquet")
    assert rules_hash(rules_from_toml(part["rules_toml"])) == part["rules_hash"]
    assert part["coordinates"] == {"players": 4, "masks": 2}


def test_a_real_client_reads_the_tables(tmp_path):
    import duckdb

    res = run_sweep(_small_spec(games=800), tmp_path / "s")
    path = str(tmp_path / "s" / "win_rates.parquet")
    got = duckdb.sql(f"select point, name, wins, rate from read_parquet('{path}') "
                     "where kind = 'agenda' order by point, name").df()
    want = (res.win_rates[res.win_rates["kind"] == "agenda"][["point", "name", "wins", "rate"]]
            .sort_values(["point", "name"]).reset_index(drop=True))
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    n = duckdb.sql(f"select sum(games) from read_parquet('{tmp_path}/s/outcomes.parquet')"
                   ).fetchall()[0][0]
    assert n == 3 * 800


def test_same_bytes_whatever_the_block_size_and_threads(tmp_path, monkeypatch):
    spec = _small_spec(games=2500)
    run_sweep(spec, tmp_path / "a")
    monkeypatch.setattr(runner, "BLOCK", 700)
    prev = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        run_sweep(spec, tmp_path / "b")
    finally:
        numba.set_num_threads(prev)
    assert _bytes(tmp_path / "a") == _bytes(tmp_path / "b")


def test_points_played_now_and_points_read_back_give_the_same_bytes(tmp_path):
    """The tables take the points a run has just played from memory and finished points from
    their files: either way the same bytes."""
    spec = _small_spec(games=700)
    run_sweep(spec, tmp_path / "s")  # every point from memory
    before = _bytes(tmp_path / "s")
    for t in TABLES:
        (tmp_path / "s" / f"{t}.parquet").unlink()
    again = run_sweep(spec, tmp_path / "s")  # every point read back from points/
    assert again.games_played == 0
    assert _bytes(tmp_path / "s") == before


def test_a_sweep_without_checkpoints_writes_the_same_tables_and_no_point_files(tmp_path):
    spec = _small_spec(games=700)
    run_sweep(spec, tmp_path / "a")
    first = run_sweep(spec, tmp_path / "b", checkpoints=False)
    assert _bytes(tmp_path / "a") == _bytes(tmp_path / "b")
    assert not list((tmp_path / "b" / "points").iterdir())
    # finished: read back as it is, nothing played
    again = run_sweep(spec, tmp_path / "b", checkpoints=False)
    assert (again.points_run, again.points_skipped, again.games_played) == (0, 3, 0)
    pd.testing.assert_frame_equal(first.win_rates, again.win_rates)
    # killed before its tables were written: played again from the start, the same bytes
    before = _bytes(tmp_path / "b")
    (tmp_path / "b" / "seats.parquet").unlink()
    replay = run_sweep(spec, tmp_path / "b", checkpoints=False)
    assert replay.points_run == 3 and replay.games_played == 3 * 700
    assert _bytes(tmp_path / "b") == before


def test_rerun_skips_finished_points_and_another_spec_is_refused(tmp_path):
    spec = _small_spec(games=600)
    first = run_sweep(spec, tmp_path / "s")
    again = run_sweep(spec, tmp_path / "s")
    assert (again.points_run, again.points_skipped, again.games_played) == (0, 3, 0)
    pd.testing.assert_frame_equal(first.win_rates, again.win_rates)
    from fbsim.errors import UsageError

    with pytest.raises(UsageError, match="holds a different sweep"):
        run_sweep(_small_spec(games=601), tmp_path / "s")
    fresh = run_sweep(_small_spec(games=601), tmp_path / "s", force=True)
    assert fresh.points_run == 3


def _sweep_cmd(out: Path, spec: Path) -> list[str]:
    return [sys.executable, "-m", "fbsim.cli", "sweep", str(spec), "--out", str(out), "-q"]


@pytest.mark.slow
def test_killed_sweep_resumes_to_identical_bytes(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text('games = 150000\nseed = 9\nplayers = [3, 4]\n[vary]\nmasks = "0..3"\n')
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    clean = tmp_path / "clean"
    subprocess.run(_sweep_cmd(clean, spec), env=env, check=True, capture_output=True)

    out = tmp_path / "killed"
    proc = subprocess.Popen(_sweep_cmd(out, spec), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    # killed as soon as the first table size's points are on disk (points sharing a baseline
    # finish together), while the second's are being played
    while time.time() < deadline and not (out / "points" / "0001").exists():
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = sorted(p.name for p in (out / "points").iterdir() if not p.name.startswith("."))
    assert 1 <= len(finished) < 8, finished
    assert not (out / "win_rates.parquet").exists()
    for d in finished:  # every point on disk is whole
        assert sorted(f.name for f in (out / "points" / d).iterdir()) == sorted(
            f"{t}.parquet" for t in TABLES)

    r = subprocess.run(_sweep_cmd(out, spec) + ["--json"], env=env, check=True,
                       capture_output=True, text=True)
    summary = json.loads(r.stdout)
    assert summary["points_skipped"] == len(finished)
    assert summary["points_run"] == 8 - len(finished)
    assert _bytes(out) == _bytes(clean)
    assert not [p for p in (out / "points").iterdir() if p.name.startswith(".")]


def test_ci_width_plays_until_every_agenda_is_tight_enough(tmp_path):
    spec = SweepSpec(players=[3], vary={"masks": [1, 2]}, ci_width=0.02, min_games=500,
                     max_games=200_000, seed=4)
    res = run_sweep(spec, tmp_path / "w")
    w = res.win_rates[res.win_rates["kind"] == "agenda"]
    assert ((w["ci_high"] - w["ci_low"]) / 2 <= 0.02).all()
    games = res.outcomes["games"]
    assert (games > 500).all() and (games < 200_000).all()
    # it stopped near the games the normal approximation says are needed, not far beyond
    for p in res.outcomes.to_dict("records"):
        rates = w[w["point"] == p["point"]]["rate"]
        needed = 1.959963984540054 ** 2 * (rates * (1 - rates)).max() / 0.02 ** 2
        assert p["games"] <= 1.3 * needed + 1000, (p["games"], needed)
    again = run_sweep(spec, tmp_path / "w2")
    assert _bytes(tmp_path / "w") == _bytes(tmp_path / "w2")
    np.testing.assert_array_equal(res.outcomes["games"], again.outcomes["games"])


def test_load_gives_tables_with_provenance(tmp_path):
    run_sweep(_small_spec(games=300), tmp_path / "s")
    tables = load(tmp_path / "s")
    assert set(tables) == set(TABLES)
    assert tables["outcomes"].attrs["provenance"]["games"] == 300


def test_python_api(tmp_path):
    import fbsim

    res = fbsim.sweep({"games": 400, "players": [3], "vary": {"masks": "1..2"}},
                      out=tmp_path / "api", seed=7)
    assert list(res.outcomes["masks"]) == [1, 2]
    assert read_provenance(tmp_path / "api" / "outcomes.parquet")["seed"] == 7


def test_provenance_names_the_git_revision_of_a_checkout():
    import subprocess
    from pathlib import Path

    from fbsim.experiments.run.provenance import git_revision

    root = Path(__file__).resolve().parent.parent
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                          text=True, check=True).stdout.strip()
    assert git_revision() in (head, head + "-dirty")


def test_a_dataset_of_an_older_version_resumes_with_todays_intervals(tmp_path):
    """Points written before stats version 2 (normal intervals, no p-values, a sweep.json
    digest of the rules' printed TOML) resume without replaying a game: their Tango intervals,
    McNemar p-values and changed games come back from the recorded differences, equal to a
    fresh run's."""
    from fbsim.experiments.metrics.stats import paired
    from fbsim.experiments.run.provenance import read_provenance as rp
    from fbsim.experiments.run.provenance import write_table

    spec = _small_spec()
    fresh = run_sweep(spec, tmp_path / "new")
    old = tmp_path / "old"
    run_sweep(spec, old)
    for d in sorted((old / "points").iterdir()):  # write the points as the old version did
        for t, cols in (("win_rates", [""]), ("outcomes", ["collapse_", "everyone_loses_"])):
            path = d / f"{t}.parquet"
            df, prov = pd.read_parquet(path), rp(path)
            for c in cols:
                n = df["paired_games"].to_numpy()
                b_plus_c, diff = df[f"{c}changed_games"], df[f"{c}diff"]
                iv = [paired(int(round(x * m)), int(bc), int(m)) if p != bp else (0.0, 0.0, 0.0)
                      for x, bc, m, p, bp in zip(diff, b_plus_c, n, df["point"],
                                                 df["baseline_point"], strict=True)]
                df[f"{c}diff_ci_low"] = [v[1] for v in iv]
                df[f"{c}diff_ci_high"] = [v[2] for v in iv]
                df = df.drop(columns=[f"{c}diff_p_value", f"{c}changed_games"])
            write_table(df, path, prov)
    doc = json.loads((old / "sweep.json").read_text())
    (old / "sweep.json").write_text(json.dumps({**doc, "digest": "0123456789abcdef"}))
    again = run_sweep(spec, old)
    assert again.games_played == 0
    cols = ["diff", "diff_ci_low", "diff_ci_high", "diff_p_value", "changed_games",
            "diff_p_adjusted", "significant"]
    pd.testing.assert_frame_equal(again.win_rates[cols], fresh.win_rates[cols],
                                  check_dtype=False, atol=1e-9)
    assert list(read_provenance(old / "outcomes.parquet")["upgraded_points"]["points"]) == [
        0, 1, 2]
    # another spec into the same folder is still refused
    from fbsim.errors import UsageError

    with pytest.raises(UsageError, match="different sweep"):
        run_sweep(_small_spec(seed=6), old)


def test_a_sweep_names_the_field_that_played_it(tmp_path, capsys):
    """The header, the printed table and the tables' provenance say who played the games:
    the default bots (and that they are bots), or the lineup given."""
    from fbsim.cli import main
    from fbsim.experiments.run.provenance import read_provenance

    for extra, said in (([], "the default bots"),
                        (["--lineup", "accelerationist=hoarder"],
                         "the lineup accelerationist=hoarder")):
        out = tmp_path / ("a" if not extra else "b")
        code = main(["sweep", "--vary", "masks=1,2", "--players", "3", "--games", "300",
                     "--out", str(out), "-q", *extra])
        assert code == 0
        printed = capsys.readouterr()
        assert f"field: {said}" in printed.err + printed.out
        assert f"Field: {said}" in printed.out
        for table in ("win_rates", "outcomes", "seats"):
            assert read_provenance(out / f"{table}.parquet")["field"].startswith(said)
    assert "not what the game does under strong play" in read_provenance(
        tmp_path / "a" / "win_rates.parquet")["field"]
