"""Best responses and rules search: the CEM optimiser, fbsim exploit and fbsim tune."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fbsim.cli import main
from fbsim.experiments.run.provenance import read_provenance
from fbsim.experiments.run.sweep import run_sweep
from fbsim.experiments.search.cem import Dim, cem
from fbsim.experiments.search.exploit import exploit
from fbsim.experiments.search.tune import losses, tune, tune_spec_from_dict, write_tune


def test_cem_finds_a_known_optimum_of_a_noisy_objective():
    rng = np.random.default_rng(5)

    def score(cands, gen):
        return [-(c["x"] - 0.3) ** 2 - 0.05 * (c["k"] + 2) ** 2 + rng.normal(0, 0.002)
                for c in cands]

    res = cem(score, [Dim("x", -1, 1), Dim("k", -5, 5, integer=True)], generations=15,
              population=24, seed=1)
    assert abs(res.best_mean["x"] - 0.3) < 0.05
    assert res.best_mean["k"] == -2
    assert len(res.curve) == 15 and len(res.candidates) == 15 * 24
    # the search improves: the elite's mean score rises from the first generation
    assert res.curve[-1]["elite_mean"] > res.curve[0]["elite_mean"]


def test_cem_is_reproducible():
    def score(cands, gen):
        return [-(c["x"] - 0.5) ** 2 for c in cands]

    a = cem(score, [Dim("x", 0, 1)], generations=4, population=8, seed=3)
    b = cem(score, [Dim("x", 0, 1)], generations=4, population=8, seed=3)
    assert a.candidates == b.candidates


@pytest.mark.slow
def test_exploit_finds_the_rigged_bonus_and_confirms_on_fresh_seeds(tmp_path):
    # a huge Steward bonus per 10 ppm below Severe: the default Steward (aiming just under
    # Severe) leaves it on the table, a best response cools hard and takes it
    res = exploit("steward", 4, budget=16 * 8 * 1500, confirm_games=20_000,
                  sets={"agendas.steward_per_step": 30}, out=tmp_path, seed=4, deviate="team")
    assert res.best_ci[0] > res.field_ci[1] + 0.10, (res.field_rate, res.best_rate)
    assert res.diff_ci[0] > 0.10
    assert res.params["aim"] < 505  # it aims lower than the default Steward
    # the confirmation and the selection play seeds the search never saw
    search = set(res.seeds["search"])
    assert res.seeds["confirm"] not in search and res.seeds["select"] not in search
    d = tmp_path / "steward-p4"
    assert read_provenance(d / "confirm" / "win_rates.parquet")["seed"] == res.seeds["confirm"]
    seen = {read_provenance(d / f"gen-{g:02d}" / "win_rates.parquet")["seed"]
            for g in range(8)}
    assert seen == search


def test_tune_recovers_the_best_value_of_a_fine_sweep(tmp_path):
    doc = {"players": [3], "games": 3000, "generations": 5, "population": 8,
           "confirm_games": 10_000, "top": 3, "seed": 2,
           "params": {"baseline_offset": [-4, 6]},
           "target": {"win_rate": {"opportunist": 0.48}}}
    spec = tune_spec_from_dict(doc)
    res = tune(spec, tmp_path / "tune")
    # the fine sweep: every value, on the confirmation's games
    from fbsim.experiments.search.tune import _sweep_spec

    values = [{"baseline_offset": v} for v in range(-4, 7)]
    fine = run_sweep(_sweep_spec(spec, values, 10_000, spec.seed + 90_000), tmp_path / "fine")
    ls = [r["loss"] for r in losses(spec, fine, len(values))]
    assert res.best["baseline_offset"] == values[int(np.argmin(ls))]["baseline_offset"]
    paths = write_tune(res, spec, tmp_path / "tune", "2026-01-01T00:00:00+00:00")
    ranked = read_provenance(paths[0])
    assert ranked["confirm_seed"] not in ranked["search_seeds"]
    text = paths[3].read_text()
    assert f"baseline_offset = {res.best['baseline_offset']}" in text
    from fbsim.rules import rules_from_toml

    assert rules_from_toml(text).baseline_offset == res.best["baseline_offset"]


@pytest.mark.parametrize(("args", "msg"), [
    (["exploit", "--agenda", "stewart"], "--agenda: one of"),
    (["exploit", "--agenda", "steward", "--budget", "10"], "--budget"),
    (["exploit", "--agenda", "steward", "--set", "maskz=1"], "maskz"),
])
def test_exploit_bad_input(capsys, tmp_path, args, msg):
    assert main(args + ["--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert msg in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("doc", "msg"), [
    ({"params": {"masks": [3, 1]}}, "params.masks: the range"),
    ({"params": {}}, "params: name at least one"),
    ({"params": {"maskz": [0, 2]}}, "maskz"),
    ({"params": {"masks": [0, 2]}, "gamez": 3}, "gamez: unknown key"),
    # (as --population bounds it: a spread needs two candidates)
    ({"params": {"masks": [0, 2]}, "population": 1}, "population: expected a whole number from 2"),
])
def test_tune_bad_specs_fail_before_any_game(capsys, tmp_path, doc, msg):
    import tomllib  # noqa: F401

    f = tmp_path / "t.toml"
    lines = []
    for k, v in doc.items():
        if k == "params":
            lines.append("[params]")
            lines += [f"{pk} = {json.dumps(pv)}" for pk, pv in v.items()]
        else:
            lines.insert(0, f"{k} = {json.dumps(v)}")
    f.write_text("\n".join(lines) + "\n")
    assert main(["tune", "--target", str(f), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert msg in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_exploit_and_tune_commands(capsys, tmp_path):
    code = main(["exploit", "--agenda", "accelerationist", "--players", "3", "--budget",
                 "3200", "--confirm-games", "2000", "--generations", "2", "--population",
                 "4", "--out", str(tmp_path / "x"), "--json", "-q", "--deviate", "team"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["agenda"] == "accelerationist" and doc["players"] == 3
    assert doc["field_ci_low"] <= doc["field_rate"] <= doc["field_ci_high"]
    assert doc["fair_share"] == 0.25 and json.loads(doc["params"])["aim"] >= 420
    d = tmp_path / "x" / "accelerationist-p3"
    assert len(read_provenance(d / "search.parquet")["seeds"]["search"]) == 2
    f = tmp_path / "t.toml"
    f.write_text("players = [3]\ngames = 500\ngenerations = 2\npopulation = 4\n"
                 "confirm_games = 1000\ntop = 2\n[params]\nmasks = [0, 3]\n")
    assert main(["tune", "--target", str(f), "--out", str(tmp_path / "t"), "-q"]) == 0
    out = capsys.readouterr().out
    assert "best: masks = " in out and (tmp_path / "t" / "best_rules.toml").exists()


def test_robust_tune_ranks_by_the_worst_field(tmp_path):
    """With several fields each candidate's loss is its worst field's (each field's loss is
    the single-field loss measured alone on the same games)."""
    fields = ["default", "accelerationist=planner:collapse=1;burn_floor=3;reserve=10"]
    doc = {"players": [3], "games": 1500, "generations": 2, "population": 4,
           "confirm_games": 3000, "top": 2, "seed": 4, "fields": fields,
           "params": {"baseline_offset": [-4, 6]}}
    spec = tune_spec_from_dict(doc)
    res = tune(spec, tmp_path / "robust")
    r = res.ranked
    assert {"loss_f0", "loss_f1", "worst_field"} <= set(r.columns)
    assert np.allclose(r["loss"], r[["loss_f0", "loss_f1"]].max(axis=1))
    assert set(r["worst_field"]) <= set(fields)
    # field 1's loss alone: a plain tune spec with that lineup, on the confirmation's games
    from fbsim.experiments.search.tune import _sweep_spec

    alone = tune_spec_from_dict({**{k: v for k, v in doc.items() if k != "fields"},
                                 "lineup": fields[1]})
    best = [{"baseline_offset": int(r.loc[0, "baseline_offset"])}]
    res1 = run_sweep(_sweep_spec(alone, best, 3000, spec.seed + 90_000), tmp_path / "alone")
    assert losses(alone, res1, 1)[0]["loss"] == pytest.approx(r.loc[0, "loss_f1"])


def test_tune_field_needs_robust(capsys, tmp_path):
    f = tmp_path / "t.toml"
    f.write_text('players = [3]\n[params]\nmasks = [0, 3]\n')
    code = main(["tune", "--target", str(f), "--field", "default", "--out",
                 str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "--field: give it with --robust" in err
    f.write_text('players = [3]\nfields = ["default", "nothere/p{players}.toml"]\n'
                 '[params]\nmasks = [0, 3]\n')
    code = main(["tune", "--target", str(f), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "nothere/p3.toml" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()
