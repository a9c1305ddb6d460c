"""Malformed input to every command: exit 2, one line on stderr, no traceback, nothing written.

The cases are generated from tables (a command x a bad value of one of its flags, a rules,
spec, script or lineup file x bad contents, a path x the wrong kind of thing). Each runs
in-process through `fbsim.cli.main` in an empty folder, with the kernel and the reference
engine replaced by a trap: bad input must fail before any game is played (and no case
compiles a kernel).
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from fbsim.cli import main

# ------------------------------------------------------------------------------ files

GOOD_RULES = "masks = 3\n"
BAD_RULES = {  # name: contents of a rules file
    "unknown-key": "masx = 3\n",
    "unknown-table": "[assets.refinary]\nprice = 5\n",
    "wrong-type": 'masks = "three"\n',
    "bool-for-int": "masks = true\n",
    "float-for-int": "masks = 2.5\n",
    "negative": "masks = -1\n",
    "too-many-players": "players = 7\n",
    "too-few-players": "players = 2\n",
    "huge-int": "masks = 99999999999999999999999\n",
    "big-int": "capital = 9223372036854775807\n",
    "nan": "dial.start = nan\n",
    "inf-float": "[bots.tunable]\naim = inf\n",
    "table-for-value": "[masks]\nx = 1\n",
    "value-for-table": "assets = 3\n",
    "bad-toml": "masks = = 3\n",
    "unclosed": "[assets\n",
    "binary": b"\xff\xfe\x00\x01garbage\x80\x81",
    "nul-bytes": b"masks = 3\x00\x00\n",
    "latin1": "masks = 3 # caf\xe9\n".encode("latin-1"),
    "bad-choice": 'scoring.tiebreak_first_player = "first"\n',
    "bad-bot-param": "[bots.fog-grabber]\ngred = 0.5\n",
    "bot-param-range": "[bots.fog-grabber]\ngreed = 2\n",
    "rounds-vs-baseline": "rounds = 6\nbaseline.p4 = [1, 2]\n",
    "accusation-round": "accusation.rounds = [3, 8]\n",
}
BAD_SPECS = {  # name: contents of a sweep spec file
    "unknown-key": "gmaes = 10\n",
    "games-zero": "games = 0\n[vary]\nmasks = [1, 2]\n",
    "games-huge": "games = 99999999999999999999\n[vary]\nmasks = [1, 2]\n",
    "seed-huge": "seed = 99999999999999999999\n[vary]\nmasks = [1, 2]\n",
    "seed-negative": "seed = -1\n[vary]\nmasks = [1, 2]\n",
    "vary-not-table": "vary = 3\n",
    "vary-empty-range": '[vary]\nmasks = "3..1"\n',
    "vary-bad-value": "[vary]\nmasks = [-1, 2]\n",
    "vary-players": "[vary]\nplayers = [3, 4]\n",
    "players-7": "players = [7]\n[vary]\nmasks = [1, 2]\n",
    "baseline-not-swept": "[vary]\nmasks = [1, 2]\n[baseline]\nmasks = 7\n",
    "ci-width": "ci_width = 2\n[vary]\nmasks = [1, 2]\n",
    "binary": b"\x89PNG\r\n\x1a\n\x00\x00",
    "bad-toml": "[vary\n",
    "rules-missing": 'rules = "nowhere.toml"\n[vary]\nmasks = [1, 2]\n',
}
BAD_SCRIPTS = {
    "binary": b"\xff\xd8\xff\xe0\x00\x10JFIF",
    "bad-toml": "round = [\n",
    "unknown-key": "rouns = 3\n",
}
BAD_TUNE = {
    "binary": b"\x00\x01\x02\xff",
    "no-params": "games = 100\n",
    "empty-range": "[params]\nmasks = [3, 1]\n",
    "bad-toml": "[params\n",
}
BAD_LINEUPS = {
    "binary": b"\xfe\xff\x00b\x00o\x00t",
    "bad-toml": "steward = \n",
    "unknown-bot": 'steward = "bogus"\n',
    "unknown-agenda": 'nobody = "steward"\n',
}


def _write(folder: Path, name: str, content: str | bytes) -> str:
    p = folder / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(p)


# ------------------------------------------------------------------------------ cases

# commands that read --rules/--set, with what they need to run at all (small and quick)
RULES_COMMANDS = {
    "rules": ["rules"],
    "bots": ["bots"],
    "simulate": ["simulate", "--games", "10", "-q"],
    "sweep": ["sweep", "--vary", "masks=1,2", "--games", "10", "-q", "--out", "{tmp}/sw"],
    "replay": ["replay"],
}
NUMBER_FLAGS = {  # (command prefix, flag): bad values
    ("simulate", "--games"): ["0", "-1", "abc", "1e20", "1e400", "nan", "inf", "1.5", "",
                              "99999999999999999999999", "0x10"],
    ("sweep --vary masks=1,2 --out {tmp}/sw", "--games"): ["0", "1e20", "nan", "abc"],
    ("sweep --vary masks=1,2 --out {tmp}/sw --ci-width 0.01", "--max-games"): ["0", "1e99"],
    ("sweep --vary masks=1,2 --out {tmp}/sw --ci-width 0.01", "--min-games"): ["-5", "x"],
    ("report --out {tmp}/r.html", "--games"): ["1", "1e20", "x"],
    ("bench", "--games"): ["0", "1e20"],
    ("exploit --agenda steward --out {tmp}/ex", "--budget"): ["0", "1e30"],
    ("equilibrium --out {tmp}/eq", "--cell-games"): ["5", "1e30"],
    ("simulate --games 10", "--seed"): ["-1", "abc", "99999999999999999999999",
                                        "9223372036854775808", "1.5"],
    ("sweep --vary masks=1,2 --out {tmp}/sw", "--seed"): ["-1", "99999999999999999999999"],
    ("replay", "--seed"): ["-1", "99999999999999999999"],
    ("replay", "--game"): ["-1", "99999999999999999999"],
    ("report --out {tmp}/r.html", "--seed"): ["-1", "99999999999999999999999"],
    ("exploit --agenda steward --out {tmp}/ex", "--seed"): ["99999999999999999999999"],
    ("simulate --games 10", "--players"): ["2", "7", "x", "", "4.5"],
    ("sweep --vary masks=1,2 --out {tmp}/sw", "--players"): ["2", "9", "3..", "6..3", "3,3",
                                                             "x"],
    ("replay", "--players"): ["2", "7", "a..b", "3..99999999999999999999", "-5..4"],
    ("report --out {tmp}/r.html", "--players"): ["7", "3,3"],
    ("bench", "--players"): ["9"],
    ("exploit --agenda steward --out {tmp}/ex", "--players"): ["3..4", "8"],
    ("equilibrium --out {tmp}/eq", "--players"): ["2"],
    ("sweep --vary masks=1,2 --out {tmp}/sw", "--ci-width"): ["0", "0.5", "nan", "x"],
    ("equilibrium --out {tmp}/eq", "--tolerance"): ["-1", "101", "nan"],
    ("bench", "--threads"): ["0", "100000"],
    ("sweep --vary masks=1,2 --out {tmp}/sw", "--workers"): ["0", "-2"],
}
SETS = ["masks=99999999999999999999999", "masks=-1", "nokey", "masx=3", "players=9",
        "dial.start=nan", "bots.tunable.aim=nan", "bots.tunable.aim=inf", "=3",
        "assets.refinery.price=1e999", "rounds=0"]
SEATS = ["1=tunable:aim=nan", "1=tunable:aim=inf", "1=tunable:greed=-inf", "9=steward",
         "x=steward", "1=bogus", "1", "1=tunable:nope=3", "1=scripted"]
LINEUPS = ["bogus", "nobody=steward", "steward=bogus", "steward=steward,steward=hoarder",
           "steward=tunable:aim=nan", "missing-file.toml"]
SEAT_COMMANDS = {
    "simulate": ["simulate", "--games", "10", "-q"],
    "sweep": ["sweep", "--vary", "masks=1,2", "--games", "10", "-q", "--out", "{tmp}/sw"],
    "replay": ["replay"],
}
OTHER = {  # name: argv (paths under {tmp}; {dir} an existing folder, {file} a plain file)
    "no-command": ["nope"],
    "unknown-option-simulate": ["simulate", "--bogus"],
    "unknown-option-sweep": ["sweep", "--gmaes", "10"],
    "missing-value": ["simulate", "--games"],
    "rules-is-dir": ["rules", "--rules", "{dir}"],
    "rules-missing": ["rules", "--rules", "{tmp}/missing.toml"],
    "rules-missing-parent": ["simulate", "--rules", "{tmp}/no/such.toml"],
    "simulate-out-dir": ["simulate", "--games", "10", "--out", "{dir}"],
    "simulate-out-missing-parent": ["simulate", "--games", "10", "--out", "{tmp}/no/m.parquet"],
    "simulate-out-under-file": ["simulate", "--games", "10", "--out", "{file}/m.parquet"],
    "simulate-records-dir": ["simulate", "--games", "10", "--records", "{dir}"],
    "simulate-out-is-records": ["simulate", "--games", "10", "--out", "{tmp}/a.parquet",
                                "--records", "{tmp}/./a.parquet"],
    "simulate-players-vs-rules": ["simulate", "--games", "10", "--players", "4", "--set",
                                  "players=5"],
    "sweep-out-is-file": ["sweep", "--vary", "masks=1,2", "--games", "10", "--out", "{file}"],
    "sweep-out-not-a-dataset": ["sweep", "--vary", "masks=1,2", "--games", "10", "--out",
                                "{dir}"],
    "sweep-spec-is-dir": ["sweep", "{dir}", "--out", "{tmp}/sw"],
    "sweep-spec-missing": ["sweep", "{tmp}/missing.toml", "--out", "{tmp}/sw"],
    "sweep-baseline-not-swept": ["sweep", "--vary", "masks=1,2", "--baseline", "masks=3",
                                 "--out", "{tmp}/sw"],
    "sweep-baseline-not-varied": ["sweep", "--vary", "masks=1,2", "--baseline", "rounds=3",
                                  "--out", "{tmp}/sw"],
    "sweep-vary-no-values": ["sweep", "--vary", "masks", "--out", "{tmp}/sw"],
    "sweep-vary-bad-range": ["sweep", "--vary", "masks=1..3:0", "--out", "{tmp}/sw"],
    "sweep-vary-unknown": ["sweep", "--vary", "masx=1,2", "--out", "{tmp}/sw"],
    "sweep-vary-infinite-range": ["sweep", "--vary", "bots.tunable.aim=1..inf:1", "--out",
                                  "{tmp}/sw"],
    "sweep-vary-inf-value": ["sweep", "--vary", "masks=1,1e400", "--out", "{tmp}/sw"],
    "sweep-players-vs-rules": ["sweep", "--vary", "masks=1,2", "--players", "3", "--set",
                               "players=5", "--out", "{tmp}/sw"],
    "sweep-scheduler-and-workers": ["sweep", "--vary", "masks=1,2", "--games", "10",
                                    "--scheduler", "tcp://127.0.0.1:1", "--workers", "2",
                                    "--out", "{tmp}/sw"],
    "plot-missing": ["plot", "{tmp}/missing"],
    "plot-file": ["plot", "{file}"],
    "plot-not-a-dataset": ["plot", "{dir}"],
    "report-out-dir": ["report", "--out", "{dir}"],
    "report-out-suffix": ["report", "--out", "{tmp}/r.txt"],
    "report-out-missing-parent": ["report", "--out", "{tmp}/no/r.html"],
    "report-against-missing": ["report", "--out", "{tmp}/r.html", "--against",
                               "{tmp}/missing.toml"],
    "report-against-set-bad": ["report", "--out", "{tmp}/r.html", "--against-set", "masks=-1"],
    "report-screenshot-suffix": ["report", "--out", "{tmp}/r.html", "--screenshot",
                                 "{tmp}/s.jpg"],
    "experiment-unknown": ["experiment", "nope", "--results", "{tmp}/res"],
    "experiment-none": ["experiment", "--results", "{tmp}/res"],
    "experiment-results-file": ["experiment", "masks", "--results", "{file}"],
    "experiment-field-bad": ["experiment", "masks", "--field", "bogus", "--results",
                             "{tmp}/res"],
    "experiment-games": ["experiment", "masks", "--games", "0", "--results", "{tmp}/res"],
    "exploit-no-agenda": ["exploit", "--out", "{tmp}/ex"],
    "exploit-bad-agenda": ["exploit", "--agenda", "nobody", "--out", "{tmp}/ex"],
    "exploit-field-bad": ["exploit", "--agenda", "steward", "--field", "bogus", "--out",
                          "{tmp}/ex"],
    "exploit-field-missing": ["exploit", "--agenda", "steward", "--field",
                              "{tmp}/p{players}.toml", "--out", "{tmp}/ex"],
    "exploit-out-file": ["exploit", "--agenda", "steward", "--out", "{file}"],
    "equilibrium-out-file": ["equilibrium", "--players", "4", "--out", "{file}"],
    "tune-target-missing": ["tune", "--target", "{tmp}/missing.toml", "--out", "{tmp}/tu"],
    "tune-target-dir": ["tune", "--target", "{dir}", "--out", "{tmp}/tu"],
    "tune-field-without-robust": ["tune", "--target", "{tmp}/tune-empty-range.toml",
                                  "--field", "x", "--out", "{tmp}/tu"],
    "replay-script-dir": ["replay", "--script", "{dir}"],
    "replay-script-missing": ["replay", "--script", "{tmp}/missing.toml"],
    "bench-threads-workers": ["bench", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"],
}


def _cases() -> list[tuple[str, list[str]]]:
    cases = []
    for (cmd, rules_name) in itertools.product(RULES_COMMANDS, BAD_RULES):
        cases.append((f"rules-file-{rules_name}-{cmd}",
                      [*RULES_COMMANDS[cmd], "--rules", f"{{tmp}}/rules-{rules_name}.toml"]))
    for (prefix, flag), values in NUMBER_FLAGS.items():
        for v in values:
            cases.append((f"{prefix.split()[0]}-{flag}={v}",
                          [*prefix.split(), flag, v]))
    for cmd, item in itertools.product(("rules", "simulate", "sweep", "replay"), SETS):
        cases.append((f"set-{item}-{cmd}", [*RULES_COMMANDS[cmd], "--set", item]))
    for cmd, item in itertools.product(SEAT_COMMANDS, SEATS):
        cases.append((f"seat-{item}-{cmd}", [*SEAT_COMMANDS[cmd], "--seat", item]))
    for cmd in SEAT_COMMANDS:
        cases.append((f"seat-twice-{cmd}", [*SEAT_COMMANDS[cmd], "--seat", "1=hoarder",
                                            "--seat", "1=steward"]))
    for cmd, item in itertools.product(SEAT_COMMANDS, LINEUPS):
        cases.append((f"lineup-{item}-{cmd}", [*SEAT_COMMANDS[cmd], "--lineup", item]))
    for cmd, name in itertools.product(SEAT_COMMANDS, BAD_LINEUPS):
        cases.append((f"lineup-file-{name}-{cmd}", [*SEAT_COMMANDS[cmd], "--lineup",
                                                    f"{{tmp}}/lineup-{name}.toml"]))
    for name in BAD_SPECS:
        cases.append((f"sweep-spec-{name}", ["sweep", f"{{tmp}}/spec-{name}.toml", "--out",
                                             "{tmp}/sw", "-q"]))
    for name in BAD_SCRIPTS:
        cases.append((f"script-{name}", ["replay", "--script", f"{{tmp}}/script-{name}.toml"]))
    for name in BAD_TUNE:
        cases.append((f"tune-{name}", ["tune", "--target", f"{{tmp}}/tune-{name}.toml",
                                       "--out", "{tmp}/tu"]))
    cases += list(OTHER.items())
    return cases


CASES = _cases()


def test_there_are_enough_cases():
    assert len(CASES) >= 150
    assert len({name for name, _ in CASES}) == len(CASES)


# ----------------------------------------------------------------------------- harness


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """An empty working folder holding the bad files, a folder and a plain file."""
    for name, text in BAD_RULES.items():
        _write(tmp_path, f"rules-{name}.toml", text)
    for prefix, table in (("spec", BAD_SPECS), ("script", BAD_SCRIPTS), ("tune", BAD_TUNE),
                          ("lineup", BAD_LINEUPS)):
        for name, text in table.items():
            _write(tmp_path, f"{prefix}-{name}.toml", text)
    (tmp_path / "a-folder").mkdir()
    (tmp_path / "a-folder" / "keep.txt").write_text("keep\n")
    (tmp_path / "a-file").write_text("not a folder\n")
    monkeypatch.chdir(tmp_path)  # (default outputs, e.g. out/sweep, would land here)
    return tmp_path


@pytest.fixture(autouse=True)
def no_games(monkeypatch):
    """Bad input fails before any game: playing one is a test failure (and no kernel is
    compiled)."""
    from fbsim import kernel
    from fbsim.experiments.run import runner
    from fbsim.reference import engine

    def trap(*args, **kwargs):
        raise AssertionError("a game was played for bad input")

    monkeypatch.setattr(runner, "play", trap)
    monkeypatch.setattr(runner, "start", trap)
    monkeypatch.setattr(kernel, "Prepared", trap)  # (what builds, and compiles, a kernel)
    monkeypatch.setattr(engine, "play_game", trap)


def snapshot(folder: Path) -> dict[str, tuple]:
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = Path(root) / name
            st = p.stat()
            out[str(p.relative_to(folder))] = (p.is_dir(), st.st_mtime_ns,
                                               None if p.is_dir() else p.read_bytes())
    return out


def assert_one_clean_line(code: int, out: str, err: str) -> None:
    """Exit 2, exactly one line on stderr (an fbsim error), no traceback anywhere."""
    assert "Traceback" not in out + err, err
    assert code == 2, (code, err)
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("fbsim: error: ") and lines[0].strip() != "fbsim: error:", err


def test_the_check_fails_on_a_traceback_or_more_lines():
    tb = "Traceback (most recent call last):\n  File \"x\", line 1\nValueError: x\n"
    for code, err in ((2, tb), (1, "fbsim: error: x\n"), (2, "fbsim: error: x\nmore\n"),
                      (2, "Error: x\n"), (2, "fbsim: error: x\n" + tb)):
        with pytest.raises(AssertionError):
            assert_one_clean_line(code, "", err)


# cases that wait out a timeout before their error (a Dask connection: 30 s)
SLOW_CASES = {"bench-threads-workers"}


@pytest.mark.parametrize("name,argv", [
    pytest.param(name, argv, marks=pytest.mark.slow) if name in SLOW_CASES else (name, argv)
    for name, argv in CASES], ids=[name for name, _ in CASES])
def test_malformed_input_is_one_line_exit_2_and_writes_nothing(folder, capfd, name, argv):
    dirs = {"{tmp}": str(folder), "{dir}": str(folder / "a-folder"),
            "{file}": str(folder / "a-file")}
    args = []
    for a in argv:
        for k, v in dirs.items():
            a = a.replace(k, v)
        args.append(a)
    before = snapshot(folder)
    code = main(args)
    out, err = capfd.readouterr()
    assert_one_clean_line(code, out, err)
    assert snapshot(folder) == before
