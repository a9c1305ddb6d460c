"""The command line: fbsim rules, bots and replay; bad input gives one line and exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Annotated

import pytest
import typer

from fbsim.cli import main
from fbsim.rules import Rules, load_rules, rules_hash

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "examples" / "tutorial.toml"


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_rules_prints_loadable_toml_with_hash(capsys, tmp_path):
    code, out, _ = run(capsys, "rules", "--set", "masks=3")
    assert code == 0
    doc = tomllib.loads(out)
    assert doc["masks"] == 3
    f = tmp_path / "r.toml"
    f.write_text(out)
    assert load_rules(f) == load_rules(sets=["masks=3"])
    assert rules_hash(load_rules(sets=["masks=3"])) in out.splitlines()[0]
    # every key line carries a comment
    keys = [ln for ln in out.splitlines() if "=" in ln and not ln.startswith("#")]
    assert keys and all(" # " in ln for ln in keys)


def test_rules_hash_flag(capsys):
    code, out, _ = run(capsys, "rules", "--hash")
    assert code == 0 and out.strip() == rules_hash(Rules())


def test_rules_file_partial_override(capsys, tmp_path):
    f = tmp_path / "partial.toml"
    f.write_text("baseline_offset = 2\n[assets.refinery]\nprice = 6\n")
    code, out, _ = run(capsys, "rules", "--rules", str(f))
    doc = tomllib.loads(out)
    assert code == 0
    assert doc["baseline_offset"] == 2 and doc["assets"]["refinery"]["price"] == 6
    assert doc["assets"]["refinery"]["income"] == 3  # untouched keys keep their defaults


BAD_SETS = [
    (["--set", "masx=3"], "masx", "did you mean 'masks'"),
    (["--set", "players=7"], "players", "from 3 to 6, got 7"),
    (["--set", "players=2"], "players", "from 3 to 6, got 2"),
    (["--set", "masks=two"], "masks", "integer"),
    (["--set", "assets.refinery.price=-1"], "assets.refinery.price",
     "from 0 to 1000000000, got -1"),
    (["--set", "assets.refinary.price=5"], "assets.refinary", "did you mean 'refinery'"),
    (["--set", "fog.partial_fill=1"], "fog.partial_fill", "true or false"),
    (["--set", "decks.p4.steward=0", "--set", "decks.p4.opportunist=1",
      "--set", "decks.p4.accelerationist=3"], "decks.p4", "more than the 4 players"),
    (["--set", "market.size=8", "--set", "assets.bunker.count=0",
      "--set", "assets.grey-bank.count=0", "--set", "assets.refinery.count=1",
      "--set", "assets.carbon-sink.count=1", "--set", "assets.media-house.count=1"],
     "market.size", "asset deck holds only 3"),
    (["--set", "bots.fog-grabber.greed=2"], "bots.fog-grabber.greed", "from 0 to 1, got 2"),
    (["--set", "bots.fog-grabber.gred=0.5"], "bots.fog-grabber.gred", "did you mean 'greed'"),
    (["--set", "accusation.rounds=[3, 8]"], "accusation.rounds[1]", "1 to 7"),
    (["--set", "rounds=10"], "baseline.p3", "rounds is 10"),
    (["--set", "rounds=6", "--set", "baseline.p4=[1, 2]"], "baseline.p4", "rounds is 6"),
    (["--set", "scoring.tiebreak_first_player=first"], "scoring.tiebreak_first_player",
     "\"last-round\", \"round-1\""),
    (["--set", "nokey"], "nokey", "path=value"),
]


@pytest.mark.parametrize("args,key,fragment", BAD_SETS)
def test_bad_set_exits_2_with_one_line(capsys, args, key, fragment):
    code, out, err = run(capsys, "rules", *args)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert key in lines[0] and fragment in lines[0], lines[0]


BAD_FILES = [
    ("masx = 3\n", "masx"),
    ("[dial]\nstrat = 3\n", "dial.strat"),
    ("players = \"four\"\n", "players"),
    ("[assets.refinery]\nprice = -2\n", "assets.refinery.price"),
    ("[baseline]\np4 = [1, 2]\n", "baseline.p4"),
    ("[decks.p3]\nsteward = 1\nopportunist = 1\naccelerationist = 1\n", "decks.p3"),
    ("not toml at all = = =\n", "(file)"),
]


@pytest.mark.parametrize("text,key", BAD_FILES)
def test_bad_rules_file_exits_2_with_one_line(capsys, tmp_path, text, key):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    code, out, err = run(capsys, "replay", "--rules", str(f))
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and key in lines[0] and str(f) in lines[0], err


def test_console_script_bad_input_has_no_traceback():
    exe = Path(sys.executable).with_name("fbsim")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "fbsim.cli"]
    p = subprocess.run(cmd + ["rules", "--set", "players=9"], capture_output=True, text=True)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("extra", [["--seed", "3"], ["--game", "0"], ["--players", "4"],
                                   ["--lineup", "steward"], ["--seat", "1=hoarder"]])
def test_replay_of_a_script_refuses_what_the_script_sets(capsys, extra):
    """A scripted game sets its table size, decisions and draws: an option that would be
    silently ignored is refused, naming it."""
    code, out, err = run(capsys, "replay", "--script", str(TUTORIAL), *extra)
    assert code == 2 and out == "", err
    assert err.startswith(f"fbsim: error: {extra[0]}: not with --script") and \
        err.count("\n") == 1, err


def test_replay_tutorial_script_narrates_the_numbers(capsys):
    code, out, _ = run(capsys, "replay", "--script", str(TUTORIAL))
    assert code == 0
    # R-W2 and R-V2 checks of RULES.md: 459, 441, then 452
    assert "= 459 ppm" in out and "= 441 ppm" in out and "= 452 ppm" in out
    # seat 0's Capital: 8 -> 7 -> 10 -> 6 -> 8 -> 11
    for holds in ("seat 0 holds 7", "seat 0 holds 10", "seat 0 holds 6", "seat 0 holds 8",
                  "seat 0 holds 11"):
        assert holds in out


@pytest.mark.parametrize("lineup", ["steward", "fog-grabber", "opportunist", "hoarder",
                                    "random", None])
def test_replay_every_size_and_bot_narrates_a_complete_game(capsys, lineup):
    args = ["replay", "--players", "3..6", "--seed", "5", "--game", "2"]
    if lineup:
        args += ["--lineup", lineup]
    code, out, _ = run(capsys, *args)
    assert code == 0
    assert out.count("Firebreak, ") == 4
    assert out.count("Round 1 (") == 4
    # every game ends with a verdict
    assert out.count("Winner: seat") + out.count("everyone loses") == 4


def test_replay_json_is_the_record(capsys):
    code, out, _ = run(capsys, "replay", "--players", "5", "--seed", "3", "--game", "9",
                       "--json", "--events")
    assert code == 0
    doc = json.loads(out)
    assert doc["players"] == 5 and doc["seed"] == 3 and doc["game"] == 9
    assert len(doc["seats"]) == 5 and doc["events"]
    assert doc["rules_hash"] == rules_hash(load_rules(sets=["players=5"]))


def test_replay_bad_seat_and_lineup(capsys):
    assert run(capsys, "replay", "--seat", "4=hoarder")[0] == 2
    code, _, err = run(capsys, "replay", "--lineup", "steward=stewrd")
    assert code == 2 and "did you mean 'steward'" in err
    code, _, err = run(capsys, "replay", "--lineup", "hero=steward")
    assert code == 2 and "unknown agenda" in err
    code, _, err = run(capsys, "replay", "--players", "3..x")
    assert code == 2 and "--players" in err


def test_replay_bad_script_names_round_seat_rule(capsys, tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text(TUTORIAL.read_text().replace("{ works = 3, cool = 3 }",
                                              "{ works = 0, cool = 6 }"))
    code, _, err = run(capsys, "replay", "--script", str(f))
    # seat 2 holds 10 Capital and no open burn: 6 COOL is affordable; make it 2 masks instead
    assert code == 0 or "R-C" in err
    f.write_text(TUTORIAL.read_text().replace("{ works = 3, cool = 3 }",
                                              "{ works = 3, cool = 3, masked_cool = 3 }"))
    code, _, err = run(capsys, "replay", "--script", str(f))
    assert code == 2
    assert "round 1" in err and "seat 2" in err and "R-C2" in err


def test_shorter_game_keeps_the_tables_nobody_set(capsys):
    # D1: the first 4 baselines; R-E1: only the Accusation after round 3 still has a round
    r = load_rules(sets=["rounds=4"])
    assert r.baseline.p3 == (7, 7, 8, 9) and r.baseline.p6 == (13, 13, 14, 15)
    assert r.accusation.rounds == (3,)
    r = load_rules(sets=["rounds=4", "baseline.p5=[1, 1, 1, 1]"])
    assert r.baseline.p5 == (1, 1, 1, 1) and r.baseline.p4 == (9, 9, 10, 11)


def test_bots_lists_every_bot(capsys):
    code, out, _ = run(capsys, "bots")
    assert code == 0
    for name in ("steward", "fog-grabber", "opportunist", "hoarder", "random", "scripted",
                 "planner", "field"):
        assert f"{name}:" in out
    assert "greed" in out
    # the field bot's components are the planner's parameters: listed once, with a note
    assert "    w5 = 0  [0..1, default 0]" in out and "c0_aim" not in out
    assert "c<k>_<param>" in out
    code, out, _ = run(capsys, "bots", "--set", "bots.fog-grabber.greed=0.25")
    assert code == 0 and "greed = 0.25 " in out


def test_bench_json_reports_every_path_with_ratios(capsys):
    from fbsim.bench import openspiel_available

    code, out, err = run(capsys, "bench", "--players", "4", "--games", "3000", "--ref-games",
                         "3", "--openspiel-games", "200", "--repeats", "1", "--no-compile",
                         "--json")
    assert code == 0, err
    res = json.loads(out)
    row = res["players"]["4"]
    paths = {"runner", "kernel", "checked", "floor", "reference"} | (
        {"openspiel"} if openspiel_available() else set())
    assert set(row["us_per_game"]) == paths == set(res["paths"])
    assert all(v > 0 for v in row["us_per_game"].values())
    assert row["vs_floor"]["floor"] == 1.0
    # the reference engine is far slower than the kernel on any machine
    assert row["vs_floor"]["reference"] > 20 * row["vs_floor"]["kernel"]
    import numba

    assert res["threads"] == numba.config.NUMBA_NUM_THREADS and row["scaling"] > 0
    assert res["machine"]["cores"] >= 1


def test_bench_decisions_prices_each_decision_of_the_lineup(capsys):
    code, out, err = run(capsys, "bench", "--decisions", "--players", "3", "--games", "2000",
                         "--repeats", "1", "--json")
    assert code == 0, err
    res = json.loads(out)
    rows = res["decisions"]
    assert set(rows) == {"commit", "fog_request", "market", "accuse", "cornered"}
    assert res["players"] == 3 and res["floor_us"] > 0
    # every seat commits, then asks the Fog pot, once a round (unless the reveal collapsed it)
    assert rows["commit"]["asked_per_game"] >= rows["fog_request"]["asked_per_game"] >= 3
    assert all(r["us_per_game"] >= 0 for r in rows.values())
    code, out, _ = run(capsys, "bench", "--decisions", "--players", "3", "--games", "1000",
                       "--repeats", "1")
    assert code == 0 and "commit" in out and "ns/question" in out
    code, _, err = run(capsys, "bench", "--decisions", "--players", "3", "--markdown")
    assert code == 2 and "--decisions" in err and len(err.strip().splitlines()) == 1


def test_bench_rejects_more_threads_than_the_machine(capsys):
    code, _, err = run(capsys, "bench", "--players", "4", "--threads", "4096", "--no-compile")
    assert code == 2 and "--threads" in err and len(err.strip().splitlines()) == 1


def test_simulate_checked_plays_the_same_games(capsys):
    code, fast, _ = run(capsys, "simulate", "--games", "3000", "--json", "--seed", "4")
    code2, checked, _ = run(capsys, "simulate", "--games", "3000", "--json", "--seed", "4",
                            "--checked")
    assert code == code2 == 0
    strip = lambda doc: {k: v for k, v in json.loads(doc).items() if k != "provenance"}  # noqa: E731
    assert strip(fast) == strip(checked)


def test_command_line_names_what_was_given_and_only_that():
    """`fbsim bench --markdown` names the command that made the page: the options given (flag
    pairs, repeated options, values needing quotes), not those left at their defaults."""
    from typer.testing import CliRunner

    from fbsim.experiments.run.options import command_line

    app = typer.Typer()
    seen = []

    @app.command()
    def cmd(ctx: typer.Context, players: str = "3..6", games: int = 10,
            seat: Annotated[list[str] | None, typer.Option()] = None,
            compile_times: Annotated[bool, typer.Option("--compile/--no-compile")] = True,
            markdown: Annotated[bool, typer.Option("--markdown")] = False):
        seen.append(command_line(ctx))

    given = ["--no-compile", "--seat", "1=tunable:aim=520", "--seat", "2=a b", "--players", "4",
             "--markdown"]
    assert CliRunner().invoke(app, given, prog_name="fbsim bench").exit_code == 0
    assert seen[-1] == ("fbsim bench --players 4 --seat 1=tunable:aim=520 --seat '2=a b' "
                        "--no-compile --markdown")
    assert CliRunner().invoke(app, [], prog_name="fbsim bench").exit_code == 0
    assert seen[-1] == "fbsim bench"
