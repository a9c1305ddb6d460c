"""Generated malformed input files, every kind fbsim reads: each file is a valid example with
wrong types, shapes, nesting and sizes written into it (a value replaced at any depth, a key
deleted, an unknown key added, a value wrapped in a list, an element appended). fbsim must
accept the file or refuse it with its own error (`FbsimError`, one line of at most
`MAX_MESSAGE` characters) -- never any other exception. Parsing and pre-run checks only: no
game is played.

The kinds: rules files (`load_rules`), lineup and field files (`parse_lineup`,
`lineup_from_file`), sweep specs (`load_spec`, `build_points`), tune specs (`load_tune_spec`,
`check_tune_spec`), the rules-search specs of `fbsim tune --equilibrium`
(`load_rulebook_spec`, `check_rulebook_spec`), scripts of `fbsim replay --script`
(`load_script`, `prepare`), and the options of `fbsim experiment` (it reads no file of its
own but a `--field` file: the options and that file through the command, stopped where it
would open its client and play).
"""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import io
import json
import math
import shutil
import tempfile
import tomllib
from pathlib import Path
from unittest import mock

import pytest
import typer
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from fbsim.cli import app
from fbsim.errors import FbsimError
from fbsim.experiments.run.spec import SpecError, build_points, load_spec
from fbsim.experiments.search import rulebook
from fbsim.experiments.search.rulebook import check_rulebook_spec, load_rulebook_spec
from fbsim.experiments.search.tune import check_tune_spec, load_tune_spec
from fbsim.lineup import lineup_from_file, parse_lineup
from fbsim.reference.script import load_script, prepare
from fbsim.rules import load_rules, rules_to_toml

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"
EQUILIBRIUM = RESULTS / "equilibrium"  # solved fields: p3.toml .. p6.toml and their searches
# An error's message: one line, at most this long. It quotes a few values, each cut to 60
# characters (`fbsim.errors.cut`), the file's path and at times a list of the options (a
# planner's 20 parameter names: a lineup file's message can reach 460 characters that way).
MAX_MESSAGE = 500
MAX_GRID = 400  # sweep points built per case (a valid 100,000-point grid is slow, not wrong)
FUZZ = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                  HealthCheck.function_scoped_fixture])

assert issubclass(SpecError, FbsimError)


# --------------------------------------------------------------------------- TOML writer


def toml_value(v) -> str:
    """`v` as an inline TOML value (tables inline, arrays of tables as arrays of them)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return toml_string(v)
    if isinstance(v, dt.date | dt.time):  # (datetime is a date)
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{toml_string(k)} = {toml_value(x)}"
                                for k, x in v.items()) + " }"
    raise TypeError(f"no TOML form for {type(v).__name__}")


def toml_string(s: str) -> str:
    # json's escapes are TOML's, but for DEL, which TOML also wants escaped
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


def to_toml(doc: dict) -> str:
    return "".join(f"{toml_string(k)} = {toml_value(v)}\n" for k, v in doc.items())


# --------------------------------------------------------------------------- values

HUGE = (10**30, -10**30, 2**63, 2**63 - 1, -2**63 - 1, 2**64 + 1, 10**300)
INTS = st.one_of(st.integers(-3, 10), st.sampled_from(HUGE), st.integers())
FLOATS = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e308, -1e308, 5e-324, 0.5, 1.5,
                     1e15, 3.0]),
    st.floats())
BOOLS = st.booleans()
WORDS = ["", " ", "٣", "٣..٦", "３", "1_0", "+1", "-1", "nan", "inf", "1e6", "fair", "3..6",
         "0..1:0.25", "0..1:5e-324", "1..", "..", "1,2", ",", "x.toml", "{players}",
         "steward", "opportunist", "accelerationist", "hoarder", "field", "tunable:aim=520",
         "2=random", "0=hoarder", "refinery", "reveal", "pay", "default", "seat", "agenda",
         "masks", "players", "bots.tunable.aim", "a\x00.toml", "é", "\t", "\n", "a\nb"]
LONG_STRINGS = st.builds(lambda c, n: c * n, st.sampled_from(["x", "٣", "9", "a,", "1..",
                                                              "é", " "]),
                         st.integers(5_000, 10_000))
STRINGS = st.one_of(st.sampled_from(WORDS), st.sampled_from(WORDS), LONG_STRINGS,
                    st.text(max_size=12))
DATES = st.sampled_from([dt.datetime(1979, 5, 27, 7, 32), dt.date(1979, 5, 27),
                         dt.time(7, 32, 0, 999000),
                         dt.datetime(1979, 5, 27, 7, 32, tzinfo=dt.UTC)])
SCALARS = st.one_of(INTS, FLOATS, BOOLS, STRINGS, DATES)
KEYS = st.one_of(st.sampled_from(["x", "unknown", "", " ", "٣", "a.b", "bots", "count",
                                  "players", "0", "7", "-1", "mixture", "weight", "choices",
                                  "seats", "bot"]),
                 st.text(max_size=8), st.builds(lambda n: "k" * n, st.integers(100, 10_000)))


def _nest(depth: int, leaf, key: str = "k"):
    for _ in range(depth):
        leaf = {key: leaf}
    return leaf


def _nest_list(depth: int, leaf):
    for _ in range(depth):
        leaf = [leaf]
    return leaf


LISTS = st.one_of(
    st.builds(list),
    st.lists(SCALARS, min_size=1, max_size=5),  # mixed types
    st.builds(_nest_list, st.integers(2, 6), SCALARS),  # nested lists
    st.lists(st.lists(SCALARS, max_size=3), min_size=1, max_size=3),
    st.builds(lambda n: list(range(n)), st.sampled_from([100, 1_000])),  # long, distinct
    st.builds(lambda n, x: [x] * n, st.sampled_from([2, 1_000]), SCALARS),  # long, repeated
    st.lists(st.dictionaries(KEYS, SCALARS, max_size=2), min_size=1, max_size=3),
    st.builds(_nest_list, st.just(40), st.just(1)),  # deeper than fbsim reads
)
TABLES = st.one_of(
    st.builds(dict),
    st.builds(_nest, st.integers(3, 6), SCALARS, KEYS),  # nested 3-6 levels
    st.dictionaries(KEYS, SCALARS, min_size=1, max_size=3),
    st.builds(_nest, st.just(40), st.just(1)),
)
# (a drawn value is copied before it goes into a document: a later mutation may change it)
VALUES = st.one_of(SCALARS, LISTS, TABLES).map(copy.deepcopy)


# --------------------------------------------------------------------------- mutations


def _slots(doc) -> list[tuple[list | dict, str | int]]:
    """Every (container, key) of `doc`, at any depth, in document order."""
    out = []

    def walk(c):
        for k, v in (c.items() if isinstance(c, dict) else enumerate(c)):
            out.append((c, k))
            if isinstance(v, dict | list):
                walk(v)

    walk(doc)
    return out


def _path(doc, container) -> str:
    """Where `container` is in `doc`, for the notes (`a.b[2]`)."""
    def walk(c, at):
        if c is container:
            return at
        for k, v in (c.items() if isinstance(c, dict) else enumerate(c)):
            if isinstance(v, dict | list):
                found = walk(v, f"{at}[{k}]" if isinstance(c, list) else f"{at}.{k}")
                if found is not None:
                    return found
        return None

    return walk(doc, "") or "(top)"


def _short(v) -> str:
    text = repr(v)
    return text if len(text) <= 120 else text[:120] + f"... ({len(text)} chars)"


@st.composite
def mutated(draw, docs: list[dict]) -> dict:
    """One of `docs`, with 1 to 3 mutations at random places (each described in a note)."""
    doc = copy.deepcopy(draw(st.sampled_from(docs)))
    steps = []
    for _ in range(draw(st.integers(1, 3))):
        slots = _slots(doc)
        op = draw(st.sampled_from(["replace", "delete", "add", "wrap", "copy"]
                                  if slots else ["add"]))
        if op == "add":
            tables = [doc] + [c[k] for c, k in slots if isinstance(c[k], dict | list)]
            c = draw(st.sampled_from(tables))
            value = draw(VALUES)
            if isinstance(c, dict):
                key = draw(KEYS)
                c[key] = value
                steps.append(f"add {_path(doc, c)}.{key!r} = {_short(value)}")
            else:
                c.append(value)
                steps.append(f"append to {_path(doc, c)}: {_short(value)}")
            continue
        c, k = draw(st.sampled_from(slots))
        where = f"{_path(doc, c)}[{k!r}]"
        if op == "replace":
            c[k] = draw(VALUES)
            steps.append(f"replace {where} by {_short(c[k])}")
        elif op == "delete":
            del c[k]
            steps.append(f"delete {where}")
        elif op == "wrap":
            c[k] = [c[k]]
            steps.append(f"wrap {where} in a list")
        else:  # another place's value (a valid value at the wrong key)
            src, sk = draw(st.sampled_from(slots))
            c[k] = copy.deepcopy(src[sk])
            steps.append(f"replace {where} by the value of {_path(doc, src)}[{sk!r}]: "
                         f"{_short(c[k])}")
    for s in steps:
        note(s)
    return doc


# --------------------------------------------------------------------------- checking


def refused_well(e: FbsimError) -> None:
    msg = str(e)
    assert "\n" not in msg and "\r" not in msg, f"a message of several lines: {msg[:600]!r}"
    assert len(msg) <= MAX_MESSAGE, f"a message of {len(msg)} characters: {msg[:600]!r}..."


def accepts_or_refuses(call, *args, **kwargs):
    """`call`'s result, or None when it refuses with an FbsimError (checked); any other
    exception fails the test."""
    try:
        return call(*args, **kwargs)
    except FbsimError as e:
        refused_well(e)
        return None


def write(folder: Path, name: str, doc: dict) -> Path:
    path = folder / name
    path.write_text(to_toml(doc), encoding="utf-8")
    return path


def valid(text: str) -> dict:
    return tomllib.loads(text)


# --------------------------------------------------------------------------- 1. rules

RULES_DOCS = [  # (the smallest first: a failing case shrinks towards it)
    {"masks": 3},
    {"dial": {"start": 440, "floor_enabled": True, "floor": 400},
     "accusation": {"rounds": [2, 5]}, "tipping": {"thresholds": [500, 560]}},
    {"rounds": 6, "assets": {"refinery": {"price": 5},
                             "solar-farm": {"count": 3, "price": 4, "ppm": -1}}},
    {"players": 5, "decks": {"p5": {"steward": 3}}, "baseline": {"p4": [9] * 8},
     "scoring": {"tiebreak_first_player": "round-1"}},
    {"stagger": 2, "bots": {"tunable": {"aim": 520}}},
    valid(rules_to_toml(load_rules())),  # what `fbsim rules` prints
]


@pytest.mark.slow
@settings(max_examples=150, **FUZZ)
@given(doc=mutated(RULES_DOCS))
def test_rules_file(doc):
    with tempfile.TemporaryDirectory() as d:
        path = write(Path(d), "rules.toml", doc)
        accepts_or_refuses(load_rules, path, bots={})
        accepts_or_refuses(load_rules, path)


# --------------------------------------------------------------------------- 2. lineups

LINEUP_DOCS = [
    {  # the docstring's (`lineup_from_toml`)
        "agendas": {"steward": "steward",
                    "accelerationist": {"bot": "tunable", "aim": 560, "greed": 0.5}},
        "seats": {"1": {"bot": "tunable", "aim": 520}, "2": "hoarder",
                  "3": "tunable:aim=520,greed=0.3"},
    },
    valid((RESULTS / "equilibrium-team" / "p4.toml").read_text()),
    valid((EQUILIBRIUM / "p4.toml").read_text()),
]


@settings(max_examples=150, **FUZZ)
@given(doc=mutated(LINEUP_DOCS))
def test_lineup_file(doc):
    with tempfile.TemporaryDirectory() as d:
        path = write(Path(d), "field.toml", doc)
        accepts_or_refuses(parse_lineup, str(path), players=4)
        accepts_or_refuses(lineup_from_file, path)


# --------------------------------------------------------------------------- 3. sweeps

SWEEP_DOCS = [
    {  # the module docstring's grid (smaller: its 100 points are slow to build 100 times)
        "games": 1_000_000, "seed": 1, "players": "3..4", "rules": "my-rules.toml",
        "lineup": "opportunist=hoarder", "seats": ["2=random"], "title": "grid",
        "set": {"masks": 3},
        "vary": {"baseline_offset": "-1..1", "bots.fog-grabber.greed": "0..1:0.5"},
        "baseline": {"baseline_offset": 0},
    },
    {  # the docstring's explicit points, adaptive, with a lineup file beside the spec
        "ci_width": 0.01, "min_games": 1_000, "max_games": 100_000, "seed": 2,
        "lineup": "field.toml",
        "points": [{"players": 4, "seat_bot": "0=hoarder"},
                   {"players": 4, "masks": 3, "lineup": "hoarder"},
                   {"players": 3, "bots": {"tunable": {"aim": 520}}, "lineup": "tunable"}],
    },
]


def _grid_size(spec) -> int:
    return len(spec.points) or len(spec.players) * math.prod(len(v) for v in spec.vary.values())


@pytest.mark.slow
@settings(max_examples=150, **FUZZ)
@given(doc=mutated(SWEEP_DOCS))
def test_sweep_spec(doc):
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        write(d, "my-rules.toml", {"stagger": 2})
        shutil.copy(EQUILIBRIUM / "p4.toml", d / "field.toml")
        spec = accepts_or_refuses(load_spec, write(d, "spec.toml", doc))
        if spec is not None and _grid_size(spec) <= MAX_GRID:
            accepts_or_refuses(build_points, spec)


# --------------------------------------------------------------------------- 4. tune specs

TUNE = valid((RESULTS / "tune" / "spec.toml").read_text())
TUNE_ROBUST = valid((RESULTS / "tune-robust" / "spec.toml").read_text())
TUNE_ROBUST["fields"] = ["default", str(EQUILIBRIUM / "p{players}.toml")]  # as --robust sets
TUNE_DOCS = [
    TUNE, TUNE_ROBUST,
    {**TUNE, "players": [4], "rules": "base.toml", "lineup": "field.toml",
     "target": {"win_rate": {"steward": 0.4, "opportunist": 0.3, "accelerationist": 0.3},
                "collapse": [0.05, 0.15], "seat_spread": 0.05}},
]


@settings(max_examples=120, **FUZZ)
@given(doc=mutated(TUNE_DOCS))
def test_tune_spec(doc):
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        write(d, "base.toml", {"masks": 3})
        shutil.copy(EQUILIBRIUM / "p4.toml", d / "field.toml")
        spec = accepts_or_refuses(load_tune_spec, write(d, "spec.toml", doc))
        if spec is not None:
            accepts_or_refuses(check_tune_spec, spec)


# --------------------------------------------------------------------------- 5. rules search

RULEBOOK_SMALL = {
    "players": [4], "trials": 5, "startup": 2, "finalists": 1, "seed": 3,
    "from": "../equilibrium", "confirm_games": 1000, "rules": "base.toml",
    "params": {"dial.collapse": [560, 760], "masks": [1, 3],
               "accusation": {"rounds": {"choices": [[3, 6], [2, 4, 6]]}}},
    "start": [{"dial.collapse": 700}, {"masks": 2, "accusation.rounds": [2, 4, 6]}],
    "target": {"fair_band": 0.05, "gain": 0.03, "collapse": [0.0, 0.5],
               "everyone_loses": [0.0, 0.2]},
    "budget": {"trial": {"iterations": 2}, "final": {"iterations": 5, "meta_games": 500}},
}
RULEBOOK_DOCS = [  # the full specs take a second each to check: a quarter of the cases
    RULEBOOK_SMALL, RULEBOOK_SMALL, RULEBOOK_SMALL,
    valid((RESULTS / "tune-equilibrium" / "spec.toml").read_text()),
    valid(rulebook.DEFAULT_SPEC),
]


@pytest.mark.slow
@settings(max_examples=120, **FUZZ)
@given(doc=mutated(RULEBOOK_DOCS))
def test_rulebook_spec(doc):
    with tempfile.TemporaryDirectory() as d:
        write(Path(d), "base.toml", {"stagger": 2})
        spec = accepts_or_refuses(load_rulebook_spec, write(Path(d), "spec.toml", doc))
        if spec is not None:
            spec.start_from = str(EQUILIBRIUM)
            accepts_or_refuses(check_rulebook_spec, spec)


# --------------------------------------------------------------------------- 6. scripts

SCRIPT_DOCS = [
    valid((ROOT / "examples" / "tutorial.toml").read_text()),
    {  # the module docstring's, and the keys it leaves out
        "players": 3, "agendas": ["steward", "opportunist", "accelerationist"],
        "deck": ["refinery", "carbon-sink", "media-house", "grey-bank", "refinery"],
        "seed": 0, "fallback": "tunable:aim=520;greed=0", "title": "t",
        "rules": {"baseline_offset": 0, "dial": {"start": 440}},
        "rounds": [
            {"seats": [{"works": 4, "cool": 1, "burn": 1, "masked_burn": 1, "request": 3,
                        "buy": ["refinery"]}, {"works": 3, "cool": 3}, {}]},
            {"seats": [{"masked_cool": 1, "point": 2, "cornered": "pay"}, {},
                       {"point": -1, "cornered": "reveal"}]},
        ],
    },
]


@settings(max_examples=150, **FUZZ)
@given(doc=mutated(SCRIPT_DOCS))
def test_script(doc):
    with tempfile.TemporaryDirectory() as d:
        script = accepts_or_refuses(load_script, write(Path(d), "script.toml", doc))
        if script is not None:  # what `fbsim replay --script` checks before it plays
            accepts_or_refuses(prepare, script)


# --------------------------------------------------------------------------- 7. experiment


class WouldPlay(Exception):
    """`fbsim experiment` passed its checks and would open its client and play."""


def _would_play(*args, **kwargs):
    raise WouldPlay


ARGS = STRINGS.map(lambda s: s.replace("\x00", ""))  # (no command line can hold a NUL)
GAMES = st.one_of(st.sampled_from(["1", "1000", "1e6", "1_000_000", "0", "-5", "1.5", "1e12",
                                   "1e13", "1e309", "nan", "inf", "-inf", "٣", "", "0x10",
                                   "1e-3", "9" * 5_000]), ARGS)
NAMES = st.lists(st.one_of(st.sampled_from(["baseline", "masks", "fog-greed", "first-player",
                                            "mask", "--all", "--list", "--force"]), ARGS),
                 max_size=3)
EXPERIMENT = st.fixed_dictionaries({
    "names": NAMES,
    "games": st.none() | GAMES,
    # a field file (a mutated one), the solved fields by table size, or lineup text
    "field": st.none() | mutated(LINEUP_DOCS) | st.sampled_from(
        [str(EQUILIBRIUM / "p{players}.toml"), "hoarder", "steward=random"]) | ARGS,
    "results": st.sampled_from([None, "out", "file", ""]),
})


@pytest.mark.slow
@settings(max_examples=100, **FUZZ)
@given(case=EXPERIMENT)
def test_experiment_options(case):
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        (d / "file").write_text("")
        argv = ["experiment", *case["names"]]
        if case["games"] is not None:
            argv += ["--games", case["games"]]
        field = case["field"]
        if isinstance(field, dict):
            field = str(write(d, "field.toml", field))
        if field is not None:
            argv += ["--field", field]
        if case["results"] is not None:
            argv += ["--results", str(d / case["results"])]
        note(f"argv: {_short(argv)}")
        with (mock.patch("fbsim.experiments.run.cluster.open_client", _would_play),
              contextlib.redirect_stdout(io.StringIO()),
              contextlib.redirect_stderr(io.StringIO())):
            try:
                app(args=argv, standalone_mode=False)
            except WouldPlay:
                pass
            except FbsimError as e:
                refused_well(e)
            except (typer.Exit, typer.TyperException):  # the option parser's refusals
                pass


# --------------------------------------------------------------------------- the premise


def test_the_valid_examples_round_trip_and_are_accepted():
    """The mutations start from valid files: each, as this test writes it, is accepted."""
    for doc in (RULES_DOCS + LINEUP_DOCS + SWEEP_DOCS + TUNE_DOCS + RULEBOOK_DOCS[2:]
                + SCRIPT_DOCS):
        assert tomllib.loads(to_toml(doc)) == doc
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        write(d, "my-rules.toml", {"stagger": 2})
        write(d, "base.toml", {"masks": 3})
        shutil.copy(EQUILIBRIUM / "p4.toml", d / "field.toml")
        for doc in RULES_DOCS:
            load_rules(write(d, "rules.toml", doc), bots={})
        for doc in LINEUP_DOCS:
            parse_lineup(str(write(d, "lineup.toml", doc)), players=4)
        for doc in SWEEP_DOCS:
            build_points(load_spec(write(d, "spec.toml", doc)))
        for doc in TUNE_DOCS:
            check_tune_spec(load_tune_spec(write(d, "spec.toml", doc)))
        for doc in RULEBOOK_DOCS[2:]:
            spec = load_rulebook_spec(write(d, "spec.toml", doc))
            spec.start_from = str(EQUILIBRIUM)
            check_rulebook_spec(spec)
        for doc in SCRIPT_DOCS:
            prepare(load_script(write(d, "script.toml", doc)))


# ------------------------------------------------------------- what searches read back


def _small_state() -> dict:
    """A valid equilibrium state (results/equilibrium-extended's 4-player search, cut to two
    strategies per Agenda and its first iteration): what `fbsim equilibrium` resumes from."""
    doc = json.loads((RESULTS / "equilibrium-extended" / "p4" / "state.json").read_text())
    doc["populations"] = {a: p[:2] for a, p in doc["populations"].items()}

    def cut(w: list[float]) -> list[float]:  # (two weights at most, summing to 1)
        return [x / sum(w[:2]) for x in w[:2]] if sum(w[:2]) > 0 else [1.0]

    it = doc["iterations"][0]
    it["mixture"] = {a: cut(w) for a, w in it["mixture"].items()}
    it["population"] = {a: len(w) for a, w in it["mixture"].items()}
    for a in it["payoffs"] or {}:
        it["payoffs"][a] = it["payoffs"][a][:len(it["mixture"][a])]
    doc["mixture"] = copy.deepcopy(it["mixture"])  # (the search goes on from the last one)
    doc["iterations"], doc["audits"], doc["pending"] = [it], [], {}
    return doc


STATE_DOCS = [_small_state()]


def test_the_small_state_is_a_state_the_search_resumes():
    """(The fuzz below mutates a state that is accepted as it is.)"""
    from fbsim.experiments.search.equilibrium.state import check_state

    check_state(copy.deepcopy(STATE_DOCS[0]), Path("state.json"))


@settings(max_examples=150, **FUZZ)
@given(doc=mutated(STATE_DOCS))
def test_equilibrium_state(doc):
    """A damaged OUT/pN/state.json is resumed or refused in one line naming the file (never
    a traceback): `State.load` behind `fbsim equilibrium`, and the warm start of `--from`."""
    from fbsim.experiments.search.equilibrium.state import State

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "state.json"
        path.write_text(json.dumps(doc, default=str))  # (a TOML date: text in JSON)
        state = accepts_or_refuses(State.load, path, doc.get("config"))
        if state is not None:  # (what it accepted, it can use)
            assert all(len(state.mixture[a]) <= len(state.populations[a])
                       for a in state.populations)


RULEBOOK_SUMMARY_DOCS = [json.loads((RESULTS / "tune-equilibrium" / "summary.json")
                                    .read_text())]


@settings(max_examples=150, **FUZZ)
@given(doc=mutated(RULEBOOK_SUMMARY_DOCS))
def test_rulebook_summary_read_by_the_report(doc):
    """A damaged summary.json under `fbsim report --rulebook` is read or refused in one line
    (never a traceback), and what is read the report can word."""
    from fbsim.experiments.report.model import read_rulebook_folder, rulebook_verdict

    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "summary.json").write_text(json.dumps(doc, default=str))
        read = accepts_or_refuses(read_rulebook_folder, d)
        if read is not None:
            assert rulebook_verdict({**read, "role": "recommended"})


MAP_DOCS = [json.loads((RESULTS / "equilibrium-map" / "summary.json").read_text())]


@settings(max_examples=150, **FUZZ)
@given(doc=mutated(MAP_DOCS))
def test_map_summary_read_by_the_report(doc):
    """A damaged summary.json under `fbsim report --map` is read or refused in one line
    (never a traceback), and what is read the report can word and draw."""
    from fbsim.experiments.report.model import map_verdict, read_map_folder
    from fbsim.experiments.report.page import map_section

    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "summary.json").write_text(json.dumps(doc, default=str))
        read = accepts_or_refuses(read_map_folder, d)
        if read is not None:
            assert all(map_verdict(n, part) for n, part in read.items())
            assert map_section(read).count("<h3>") == len(read)


@settings(max_examples=100, **FUZZ)
@given(doc=mutated(MAP_DOCS))
def test_equilibrium_summary_read_back_by_a_search(doc):
    """A damaged OUT/summary.json, which a search merges its table size into, is accepted or
    refused in one line naming it before any game (`check_folders`), and what is accepted
    summary.md can be written of."""
    from fbsim.experiments.search.equilibrium import check_folders
    from fbsim.experiments.search.equilibrium.state import read_published
    from fbsim.experiments.search.equilibrium.summary import summary_md_text

    def checked(folder: str) -> dict:
        check_folders(folder, [5], True)
        return read_published(folder)

    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "summary.json").write_text(json.dumps(doc, default=str))
        published = accepts_or_refuses(checked, d)
        if published is not None:
            seat = {n: e for n, e in published["players"].items() if e.get("draw") != "agenda"}
            assert summary_md_text({"players": seat})


def _rulebook_spec():
    spec = load_rulebook_spec(RESULTS / "tune-equilibrium" / "spec.toml")
    return spec


def _small_trials() -> dict:
    """results/tune-equilibrium's trials.json cut to its first three trials, under the spec
    it is read with (what `fbsim tune --equilibrium` resumes from)."""
    doc = json.loads((RESULTS / "tune-equilibrium" / "trials.json").read_text())
    doc["spec"], doc["trials"] = _rulebook_spec().digest(), doc["trials"][:3]
    return doc


TRIALS_DOCS = [_small_trials()]


@settings(max_examples=150, **FUZZ)
@given(doc=mutated(TRIALS_DOCS))
def test_rulebook_trials(doc):
    """A damaged OUT/trials.json is resumed or refused in one line naming the file (never a
    traceback), and what is accepted is trials `play_trial` could have written: numbered in
    order, each with a loss."""
    spec = _rulebook_spec()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "trials.json"
        trials = accepts_or_refuses(rulebook.check_trials, doc, path, spec)
        if trials is not None:
            assert [t["number"] for t in trials] == list(range(len(trials)))
            assert all(0 <= t["loss"] for t in trials)


CONFIRMED_DOCS = [json.loads((RESULTS / "tune-equilibrium" / "final" / "unchanged"
                              / "confirmed.json").read_text())]


@settings(max_examples=150, **FUZZ)
@given(doc=mutated(CONFIRMED_DOCS))
def test_rulebook_confirmed_finalist(doc):
    """A damaged final/NN/confirmed.json is read or refused in one line naming the file;
    what is read holds together (its loss its table sizes' largest)."""
    spec = _rulebook_spec()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "confirmed.json"
        path.write_text(json.dumps(doc, default=str))
        conf = accepts_or_refuses(rulebook.read_confirmed, path, spec)
        if conf is not None:
            assert conf["loss"] == max(x["loss"] for x in conf["sizes"].values())


RESULT_DOCS = [json.loads((RESULTS / "exploit" / f"{a}-p4" / "result.json").read_text())
               for a in ("steward", "accelerationist")]


@settings(max_examples=150, **FUZZ)
@given(doc=mutated(RESULT_DOCS))
def test_exploit_result_read_by_the_report(doc):
    """A damaged exploit result.json (what `fbsim report` reads beside the field) is read
    or refused in one line; what is read has its rates in [0, 1]."""
    from fbsim.errors import UsageError
    from fbsim.experiments.search.exploit import check_result
    from fbsim.inputs import failing

    got = accepts_or_refuses(check_result, doc, failing(UsageError, "result.json"))
    if got is not None:
        assert all(0 <= got[k] <= 1 for k in ("field_rate", "best_rate"))


LADDER_DOCS = [json.loads((RESULTS / "ladder" / "ladder.json").read_text())]


@settings(max_examples=150, **FUZZ)
@given(doc=mutated(LADDER_DOCS))
def test_ladder_read_back(doc):
    """A damaged ladder.json (resumed by `fbsim ladder`, shown by the report) is read or
    refused in one line naming the file."""
    from fbsim.experiments.search.ladder import read_ladder

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "ladder.json"
        path.write_text(json.dumps(doc, default=str))
        accepts_or_refuses(read_ladder, path)


ENVIRONMENT = ["FBSIM_SHAPES", "FBSIM_SPECIALISE", "FBSIM_LLVM_TUNING", "NUMBA_NUM_THREADS",
               "SOURCE_DATE_EPOCH", "NUMBA_CACHE_DIR", "NUMBA_THREADING_LAYER",
               "NUMBA_DISABLE_JIT", "NUMBA_OPT", "NUMBA_BOUNDSCHECK", "FBSIM_CHECKED"]
ENV_VALUES = st.one_of(
    st.sampled_from(["", " ", "0", "1", "2", "-1", " 7", "1e3", "all", "none", "standard",
                     "lineups", "default", "NaN", "99999999999999999999", "١", "tbb", "omp",
                     "workqueue", "safe", "max"]),
    st.text(max_size=12))


@settings(max_examples=200, **FUZZ)
@given(env=st.dictionaries(st.sampled_from(ENVIRONMENT), ENV_VALUES, min_size=1, max_size=3),
       under_a_file=st.booleans())
def test_environment_variables(env, under_a_file):
    """Any value of the variables fbsim and numba read is accepted or refused in one line
    naming the variable (never a traceback in the middle of a run): `check_environment`,
    which every command runs first. The cache folder may be drawn below a plain file."""
    from fbsim.environment import check_environment

    env = {k: v for k, v in env.items() if "\x00" not in v}
    with tempfile.TemporaryDirectory() as d:
        if "NUMBA_CACHE_DIR" in env:
            plain = Path(d) / "plain"
            plain.write_text("x")
            env["NUMBA_CACHE_DIR"] = str((plain if under_a_file else Path(d)) / "cache"
                                         / env["NUMBA_CACHE_DIR"].replace("/", "_"))
        with mock.patch.dict("os.environ", env):
            try:
                check_environment()
            except FbsimError as e:
                refused_well(e)
                assert any(k in str(e) for k in env), str(e)
