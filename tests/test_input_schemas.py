"""Malformed input files (tune spec, sweep spec, scripted game): one line naming the file and
the key, exit 2, before any game is played or any folder written; and the parsers, fed
wrong-typed values at every key, accept them or raise the project's error, nothing else."""

from __future__ import annotations

import contextlib
import copy
import math
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fbsim.cli import main
from fbsim.errors import ScriptError
from fbsim.experiments.run.spec import SpecError, build_points, spec_from_dict
from fbsim.experiments.search.tune import check_tune_spec, tune_spec_from_dict
from fbsim.reference.script import prepare

TUNE_TOP = ("players = [4]\ngames = 20\ngenerations = 1\npopulation = 2\nconfirm_games = 20\n"
            "top = 1\n")
TUNE_PARAMS = "[params]\nmasks = [0, 3]\n"
TUNE_CASES = {  # name: (contents, the key the error names)
    "target-not-a-table": (TUNE_TOP + "target = 5\n" + TUNE_PARAMS, "target"),
    "collapse-text": (TUNE_TOP + TUNE_PARAMS + '[target]\ncollapse = ["a", 1]\n',
                      "target.collapse"),
    "collapse-reversed": (TUNE_TOP + TUNE_PARAMS + "[target]\ncollapse = [0.5, 0.1]\n",
                          "target.collapse"),
    "seat-spread-text": (TUNE_TOP + TUNE_PARAMS + '[target]\nseat_spread = "x"\n',
                         "target.seat_spread"),
    "target-typo": (TUNE_TOP + TUNE_PARAMS + "[target]\ncolapse = [0.1, 0.2]\n",
                    "target.colapse"),
    "weights-not-a-table": (TUNE_TOP + "weights = 3\n" + TUNE_PARAMS, "weights"),
    "weight-negative": (TUNE_TOP + TUNE_PARAMS + "[weights]\nwin_rate = -5\n",
                        "weights.win_rate"),
    "weight-nan": (TUNE_TOP + TUNE_PARAMS + "[weights]\ncollapse = nan\n", "weights.collapse"),
    "weight-unknown": (TUNE_TOP + TUNE_PARAMS + "[weights]\nwinrate = 1\n", "weights.winrate"),
    "win-rate-text": (TUNE_TOP + TUNE_PARAMS + '[target.win_rate]\nsteward = "x"\n',
                      "target.win_rate.steward"),
    "win-rate-above-1": (TUNE_TOP + TUNE_PARAMS + "[target.win_rate]\nsteward = 1.5\n",
                         "target.win_rate.steward"),
    "win-rate-agenda": (TUNE_TOP + TUNE_PARAMS + "[target.win_rate]\nstewart = 0.3\n",
                        "target.win_rate.stewart"),
    "params-not-a-table": (TUNE_TOP + "params = 5\n", "params"),
    "params-nan": (TUNE_TOP + "[params]\nmasks = [nan, 3]\n", "params.masks"),
    "params-twice": (TUNE_TOP + '[params]\n"assets.refinery.price" = [1, 5]\n'
                     "[params.assets.refinery]\nprice = [2, 4]\n",
                     "params.assets.refinery.price"),
    "players-table": ("players = { a = 1 }\n" + TUNE_PARAMS, "players"),
    "players-empty": (TUNE_TOP.replace("players = [4]", "players = []") + TUNE_PARAMS,
                      "players"),
    "rules-number": (TUNE_TOP + "rules = 5\n" + TUNE_PARAMS, "rules"),
    "lineup-list": (TUNE_TOP + 'lineup = ["steward"]\n' + TUNE_PARAMS, "lineup"),
}

SWEEP_TOP = "games = 20\nplayers = [4]\n"
SWEEP_VARY = "[vary]\nmasks = [1, 2]\n"
SWEEP_CASES = {
    "seats-number": (SWEEP_TOP + "seats = 5\n" + SWEEP_VARY, "seats"),
    "seats-list-of-numbers": (SWEEP_TOP + "seats = [2]\n" + SWEEP_VARY, "seats"),
    "rules-number": (SWEEP_TOP + "rules = 5\n" + SWEEP_VARY, "rules"),
    "lineup-number": (SWEEP_TOP + "lineup = 5\n" + SWEEP_VARY, "lineup"),
    "title-number": (SWEEP_TOP + "title = 5\n" + SWEEP_VARY, "title"),
    "players-table": ("players = { a = 1 }\n" + SWEEP_VARY, "players"),
    "players-empty": ("games = 20\nplayers = []\n" + SWEEP_VARY, "players"),
    "vary-given-twice": (SWEEP_TOP + '[vary]\n"bots.fog-grabber.greed" = [0, 1]\n'
                         "[vary.bots.fog-grabber]\ngreed = [0.5]\n", "bots.fog-grabber.greed"),
    "set-given-twice": (SWEEP_TOP + '[set]\n"assets.refinery.price" = 3\n'
                        "[set.assets.refinery]\nprice = 4\n" + SWEEP_VARY,
                        "set.assets.refinery.price"),
    "vary-bad-range": (SWEEP_TOP + '[vary]\nmasks = "1..x"\n', "vary.masks"),
    "baseline-not-a-table": (SWEEP_TOP + "baseline = [1]\n" + SWEEP_VARY, "baseline"),
    "points-not-tables": (SWEEP_TOP + "points = [1, 2]\n", "points"),
    "point-lineup-number": ("games = 20\n[[points]]\nplayers = 4\nlineup = 5\n",
                            "points[0].lineup"),
    "vary-lineup-numbers": (SWEEP_TOP + "[vary]\nlineup = [1, 2]\n", "vary.lineup"),
}

SCRIPT_BASE = ('players = 3\nagendas = ["steward", "opportunist", "accelerationist"]\n'
               'fallback = "hoarder"\n')
SCRIPT_CASES = {
    "seats-at-the-top": ("seats = 5\n" + SCRIPT_BASE, "seats"),
    "rules-number": ("rules = 5\n" + SCRIPT_BASE, "rules"),
    "seed-text": ('seed = "x"\n' + SCRIPT_BASE, "seed"),
    "seed-negative": ("seed = -5\n" + SCRIPT_BASE, "seed"),
    "seed-20-digits": ("seed = 12345678901234567890\n" + SCRIPT_BASE, "seed"),
    "seed-float": ("seed = 1.5\n" + SCRIPT_BASE, "seed"),
    "deck-number": ("deck = 5\n" + SCRIPT_BASE, "deck"),
    "deck-of-numbers": ("deck = [1, 2]\n" + SCRIPT_BASE, "deck"),
    "rounds-of-numbers": ("rounds = [1, 2]\n" + SCRIPT_BASE, "rounds"),
    "buy-number": (SCRIPT_BASE + "[[rounds]]\nseats = [{ buy = 5 }, {}, {}]\n", "buy"),
    "buy-text": (SCRIPT_BASE + '[[rounds]]\nseats = [{ buy = "refinery" }, {}, {}]\n', "buy"),
    "works-text": (SCRIPT_BASE + '[[rounds]]\nseats = [{ works = "4" }, {}, {}]\n', "works"),
    "cornered-number": (SCRIPT_BASE + "[[rounds]]\nseats = [{}, { cornered = 1 }, {}]\n",
                        "cornered"),
    "round-seats-number": (SCRIPT_BASE + "[[rounds]]\nseats = 5\n", "seats"),
    "fallback-number": (SCRIPT_BASE.replace('"hoarder"', "5"), "fallback"),
    "fallback-unknown": (SCRIPT_BASE.replace('"hoarder"', '"hoardr"'), "fallback"),
    "players-text": (SCRIPT_BASE.replace("players = 3", 'players = "3"'), "players"),
    "agendas-text": (SCRIPT_BASE.replace('["steward", "opportunist", "accelerationist"]',
                                         '"steward"'), "agendas"),
    "title-table": ("title = { a = 1 }\n" + SCRIPT_BASE, "title"),
}


def run(capsys, *args):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(autouse=True)
def no_games(monkeypatch, tmp_path):
    """Bad input fails before any game: playing one is a test failure."""
    from fbsim import kernel
    from fbsim.experiments.run import runner
    from fbsim.reference import engine, script

    def trap(*args, **kwargs):
        raise AssertionError("a game was played for bad input")

    for module, name in ((runner, "play"), (runner, "start"), (kernel, "Prepared"),
                         (engine, "play_game"), (script, "run")):
        monkeypatch.setattr(module, name, trap)
    monkeypatch.chdir(tmp_path)  # (a default output folder would land here)


def assert_refused(code, out, err, path: Path, key: str) -> None:
    assert "Traceback" not in out + err, err
    assert code == 2, (code, err)
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("fbsim: error:"), err
    assert key in lines[0] and str(path) in lines[0], err


@pytest.mark.parametrize("text,key", TUNE_CASES.values(), ids=list(TUNE_CASES))
def test_bad_tune_spec_is_one_line_naming_the_key(capsys, tmp_path, text, key):
    f = tmp_path / "tune.toml"
    f.write_text(text)
    out = tmp_path / "out"
    assert_refused(*run(capsys, "tune", "--target", f, "--out", out, "-q"), f, key)
    assert not out.exists()


@pytest.mark.parametrize("text,key", SWEEP_CASES.values(), ids=list(SWEEP_CASES))
def test_bad_sweep_spec_is_one_line_naming_the_key(capsys, tmp_path, text, key):
    f = tmp_path / "spec.toml"
    f.write_text(text)
    out = tmp_path / "out"
    assert_refused(*run(capsys, "sweep", f, "--out", out, "-q"), f, key)
    assert not out.exists()


@pytest.mark.parametrize("text,key", SCRIPT_CASES.values(), ids=list(SCRIPT_CASES))
def test_bad_script_is_one_line_naming_the_key(capsys, tmp_path, text, key):
    f = tmp_path / "script.toml"
    f.write_text(text)
    code, out, err = run(capsys, "replay", "--script", f)
    assert_refused(code, out, err, f, key)
    assert out == ""


def test_found_values_are_cut_short(capsys, tmp_path):
    f = tmp_path / "script.toml"
    f.write_text(f'seed = "{"x" * 500}"\n' + SCRIPT_BASE)
    code, _, err = run(capsys, "replay", "--script", f)
    assert code == 2 and "x" * 50 in err and "x" * 100 not in err and "..." in err


def test_the_valid_files_pass_the_checks():
    spec = tune_spec_from_dict(tomllib.loads(TUNE_TOP + TUNE_PARAMS))
    check_tune_spec(spec)
    build_points(spec_from_dict(tomllib.loads(SWEEP_TOP + SWEEP_VARY)))
    prepare(tomllib.loads(SCRIPT_BASE))
    for doc in (VALID_TUNE, VALID_SWEEP, VALID_POINTS, VALID_SCRIPT):
        assert tomllib.loads(_toml(doc)) == doc
    check_tune_spec(tune_spec_from_dict(VALID_TUNE))
    build_points(spec_from_dict(VALID_SWEEP))
    build_points(spec_from_dict(VALID_POINTS))
    prepare(VALID_SCRIPT)


# --------------------------------------------------------------------------- properties

VALID_TUNE = {
    "players": [4], "games": 20, "generations": 1, "population": 2, "confirm_games": 20,
    "top": 1, "seed": 3, "lineup": "steward", "fields": ["default"],
    "params": {"masks": [0, 3], "assets": {"refinery": {"price": [2, 5]}}},
    "target": {"win_rate": {"steward": 0.3, "opportunist": 0.3, "accelerationist": 0.4},
               "collapse": [0.05, 0.15], "seat_spread": 0.05},
    "weights": {"win_rate": 1.0, "collapse": 2, "seat_spread": 0.5},
}
VALID_SWEEP = {
    "games": 20, "seed": 1, "players": [3, 4], "seats": ["2=random"], "title": "t",
    "set": {"stagger": 1},
    "vary": {"masks": [1, 2], "bots.fog-grabber.greed": [0.5, 1.0]},
    "baseline": {"masks": 1},
}
VALID_POINTS = {"games": 20, "points": [{"players": 4, "masks": 1, "seat_bot": "1=hoarder"},
                                        {"players": 3, "lineup": "hoarder"}]}
VALID_SCRIPT = {
    "players": 3, "agendas": ["steward", "opportunist", "accelerationist"],
    "deck": ["refinery"], "seed": 0, "fallback": "hoarder", "title": "t",
    "rules": {"masks": 2},
    "rounds": [{"seats": [{"works": 4, "cool": 1, "burn": 1}, {},
                          {"buy": ["refinery"], "cornered": "pay", "point": 1}]}],
}
TUNE_PATHS = [(k,) for k in VALID_TUNE] + [
    ("params", "masks"), ("params", "assets"), ("params", "assets", "refinery", "price"),
    ("target", "win_rate"), ("target", "win_rate", "steward"), ("target", "collapse"),
    ("target", "seat_spread"), ("weights", "win_rate"), ("weights", "collapse"),
    ("fields", 0), ("target", "collapse", 1)]
SWEEP_PATHS = [(k,) for k in VALID_SWEEP] + [
    ("rules",), ("lineup",), ("points",), ("ci_width",), ("min_games",), ("max_games",),
    ("set", "stagger"), ("vary", "masks"), ("vary", "bots"), ("vary", "bots.fog-grabber.greed"),
    ("baseline", "masks"), ("seats", 0), ("players", 1), ("vary", "lineup"),
    ("points", 0, "lineup"), ("points", 0, "seat_bot"), ("points", 0, "players"),
    ("points", 0, "masks")]
SCRIPT_PATHS = [(k,) for k in VALID_SCRIPT] + [
    ("rules", "masks"), ("agendas", 0), ("deck", 0), ("rounds", 0), ("rounds", 0, "seats"),
    ("rounds", 0, "seats", 1), ("rounds", 0, "seats", 0, "works"),
    ("rounds", 0, "seats", 2, "buy"), ("rounds", 0, "seats", 2, "buy", 0),
    ("rounds", 0, "seats", 2, "cornered"), ("rounds", 0, "seats", 2, "point"),
    ("rounds", 0, "seats", 0, "request"), ("rounds", 0, "seats", 0, "masked_cool")]

WORDS = ["fair", "3..6", "0..1:0.25", "1,2", "hoarder", "2=random", "steward", "refinery",
         "reveal", "pay", "default", "", "x.toml", "masks", "seats"]
SCALARS = st.one_of(st.integers(), st.integers(min_value=-2**80, max_value=2**80),
                    st.text(max_size=12), st.sampled_from(WORDS), st.booleans(),
                    st.floats(allow_nan=True, allow_infinity=True))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.one_of(st.sampled_from(WORDS), st.text(max_size=6)), inner,
                    max_size=3)), max_leaves=8)


def _toml(value) -> str:
    """A document as TOML text (the test's check that the valid documents are TOML)."""
    import json

    def v(x):
        if isinstance(x, dict):
            return "{ " + ", ".join(f"{json.dumps(k)} = {v(y)}" for k, y in x.items()) + " }"
        if isinstance(x, list):
            return "[" + ", ".join(v(y) for y in x) + "]"
        return json.dumps(x)

    return "".join(f"{json.dumps(k)} = {v(x)}\n" for k, x in value.items())


def _with(doc: dict, path: tuple, value) -> dict:
    """A copy of `doc` with `value` at `path` (tables made on the way where needed)."""
    doc = copy.deepcopy(doc)
    cur = doc
    for part in path[:-1]:
        if isinstance(cur, dict):
            if not isinstance(cur.get(part), dict | list):
                cur[part] = {}
            cur = cur[part]
        else:
            cur = cur[part]
    cur[path[-1]] = value
    return doc


@settings(max_examples=100)
@given(path=st.sampled_from(TUNE_PATHS), value=VALUES)
def test_tune_spec_parser_accepts_or_raises_spec_error(path, value):
    doc = _with(VALID_TUNE, path, value)
    try:
        spec = tune_spec_from_dict(doc, "tune spec t.toml")
    except SpecError as e:
        assert str(e).startswith("tune spec t.toml: ")
        return
    with contextlib.suppress(SpecError):  # (what the command checks before any game)
        check_tune_spec(spec)


@settings(max_examples=100)
@given(path=st.sampled_from(SWEEP_PATHS), value=VALUES)
def test_sweep_spec_parser_accepts_or_raises_spec_error(path, value):
    doc = _with(VALID_POINTS if path[0] == "points" else VALID_SWEEP, path, value)
    try:
        spec = spec_from_dict(doc, "sweep spec s.toml")
    except SpecError as e:
        assert str(e).startswith("sweep spec s.toml: ")
        return
    if len(spec.players) * math.prod(len(v) for v in spec.vary.values()) <= 200:
        with contextlib.suppress(SpecError):  # (what the command checks before any game)
            build_points(spec)


@settings(max_examples=100)
@given(path=st.sampled_from(SCRIPT_PATHS), value=VALUES)
def test_script_parser_accepts_or_raises_script_error(path, value):
    doc = _with(VALID_SCRIPT, path, value)
    try:
        prepare(doc)
    except ScriptError:
        pass
