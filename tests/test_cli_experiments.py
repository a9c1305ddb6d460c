"""The experiment commands: fbsim simulate, sweep, plot and experiment (typer's runner for
the normal paths, `main` for errors: one line, exit code 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from fbsim import simulate as api_simulate
from fbsim.cli import app, main
from fbsim.experiments.run.provenance import read_provenance
from fbsim.kernel import simulate as kernel_simulate
from fbsim.rules import load_rules
from tests.record_counts import aggregate_records

runner = CliRunner()


@pytest.fixture(autouse=True)
def _fixed_time(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")


def invoke(*args):
    r = runner.invoke(app, list(args), catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return r


def test_simulate_prints_every_section():
    r = invoke("simulate", "--players", "3", "--games", "2e3", "--seed", "4", "-q")
    out = r.stdout
    for text in ("2,000 games, 3 players, seed 4", "Win rate", "accelerationist",
                 "everyone loses", "Win rate by seat", "place 0", "collapse", "final band",
                 "final Dial", "masks used per seat", "over-claims", "legacy"):
        assert text in out, text


def test_simulate_json_matches_the_kernel_and_the_api(tmp_path):
    r = invoke("simulate", "--players", "4", "--games", "1500", "--seed", "2", "--json",
               "--set", "masks=3", "--seat", "1=hoarder")
    doc = json.loads(r.stdout)
    rules = load_rules(sets=["masks=3", "players=4"])
    from fbsim.lineup import Lineup

    agg = aggregate_records(kernel_simulate(rules, Lineup(seats={1: "hoarder"}), 2, 1500), rules)
    got = {w["name"]: w["wins"] for w in doc["win_rates"] if w["kind"] == "agenda"}
    assert got == {"steward": agg["wins_agenda"][0], "opportunist": agg["wins_agenda"][1],
                   "accelerationist": agg["wins_agenda"][2]}
    assert [s["wins"] for s in doc["seats"]] == list(agg["wins_seat"][:4])
    res = api_simulate(players=4, games=1500, seed=2, sets=["masks=3"], seats=["1=hoarder"])
    assert isinstance(res.win_rates, pd.DataFrame)
    assert list(res.win_rates["wins"]) == [w["wins"] for w in doc["win_rates"]]
    assert doc["provenance"]["rules_hash"] == res.provenance["rules_hash"]


def test_simulate_out_and_records(tmp_path):
    out, rec = tmp_path / "m.parquet", tmp_path / "r.parquet"
    invoke("simulate", "--games", "1200", "--seed", "3", "--out", str(out), "--records",
           str(rec), "-q")
    m = pd.read_parquet(out)
    assert {"win_rate", "collapse_rate", "band_warming", "dial_q50"} <= set(m["metric"])
    games = pd.read_parquet(rec)
    assert len(games) == 1200 and list(games["game"]) == list(range(1200))
    k = kernel_simulate(load_rules(), None, 3, 1200)
    assert (games["final_dial"].to_numpy() == k["final_dial"]).all()
    assert (games["agenda_2"].to_numpy() == k["agenda"][:, 2]).all()
    assert read_provenance(rec)["seed"] == 3
    assert read_provenance(out)["games"] == 1200


def test_sweep_from_flags_writes_tables_and_json(tmp_path):
    out = tmp_path / "s"
    r = invoke("sweep", "--vary", "masks=1..2", "--vary", "stagger=0,1", "--players", "3",
               "--games", "800", "--out", str(out), "--json", "-q")
    summary = json.loads(r.stdout)
    assert summary["points"] == 4 and summary["points_run"] == 4
    win = pd.read_parquet(summary["tables"]["win_rates"])
    assert {"masks", "stagger", "rate", "ci_low", "ci_high", "diff", "diff_ci_low"} <= set(
        win.columns)
    r = invoke("sweep", "--vary", "masks=1..2", "--vary", "stagger=0,1", "--players", "3",
               "--games", "800", "--out", str(out), "-q")
    assert "4 points" in r.stdout and "4 points were already done" in r.stdout


def test_sweep_spec_file_and_plot(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text('games = 600\nplayers = [3, 4]\n[vary]\nmasks = [1, 2, 3]\n'
                    'baseline_offset = [0, 4]\n')
    out = tmp_path / "s"
    invoke("sweep", str(spec), "--out", str(out), "-q")
    r = invoke("plot", str(out))
    files = [Path(x) for x in r.stdout.split()]
    assert {f.name for f in files} == {"win_rates.png", "collapse.png", "heatmap_steward.png",
                                       "heatmap_opportunist.png",
                                       "heatmap_accelerationist.png"}
    for f in files:
        assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f.stat().st_size > 10_000


@pytest.mark.parametrize(("args", "text"), [
    (["sweep", "--vary", "maskz=1,2"], "maskz: "),
    (["sweep", "--vary", "masks=3..1"], "masks: the range '3..1' is empty"),
    (["sweep", "--vary", "masks=0,-2"], "masks: at the point"),
    (["sweep", "--players", "2..4"], "players: table sizes are 3 to 6"),
    (["simulate", "--games", "lots"], "--games: expected a number"),
    (["simulate", "--set", "capital=-1"], "capital"),
    (["experiment", "basline"], "did you mean 'baseline'"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, args, text):
    code = main(args + (["--out", str(tmp_path / "o")] if args[0] == "sweep" else []))
    err = capsys.readouterr().err
    assert code == 2
    assert text in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_experiment_list_and_a_small_run(tmp_path):
    r = invoke("experiment", "--list")
    names = [ln.split()[0] for ln in r.stdout.splitlines()]
    assert names == ["baseline", "baseline-schedule", "masks", "fog-greed", "hoarder",
                     "first-player"]
    invoke("experiment", "first-player", "--games", "500", "--results", str(tmp_path), "-q")
    d = tmp_path / "first-player"
    for f in ("win_rates.parquet", "outcomes.parquet", "seats.parquet", "summary.md",
              "win_rates.png", "collapse.png"):
        assert (d / f).exists(), f
    text = (d / "summary.md").read_text()
    assert "fbsim experiment first-player --games 500" in text
    assert "stagger = 0" in text and "| players | stagger |" in text


@pytest.mark.parametrize("text", ["", "{not json", "[1, 2]"])
def test_an_experiment_over_a_damaged_sweep_json_is_refused_not_replayed(capsys, tmp_path,
                                                                         text):
    """A damaged RESULTS/NAME/sweep.json is refused as `fbsim sweep` refuses it (one line, exit
    2, nothing written), not taken for another spec's dataset and replayed over."""
    from fbsim.cli import main

    invoke("experiment", "first-player", "--games", "200", "--results", str(tmp_path), "-q")
    d = tmp_path / "first-player"
    (d / "sweep.json").write_text(text)
    before = {p: p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}
    code = main(["experiment", "first-player", "--games", "200", "--results", str(tmp_path),
                 "-q"])
    err = capsys.readouterr().err
    if text == "[1, 2]":  # (valid JSON, not a sweep's: another dataset, replayed anew)
        assert code == 0, err
        return
    lines = err.strip().splitlines()  # (after the experiment's heading)
    assert code == 2 and lines[-1].startswith("fbsim: error: ") and "Traceback" not in err
    assert f"{d / 'sweep.json'}: unreadable" in lines[-1] and "--force" in lines[-1], err
    assert {p: p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()} == before
