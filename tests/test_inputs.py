"""The one schema mechanism of every input file (`fbsim.inputs`): what each type accepts, the
ranges, nested paths in messages, and that each file kind's declared keys are what its reader
accepts."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fbsim.errors import UsageError
from fbsim.experiments.run.spec import SPEC_FILE, spec_from_dict
from fbsim.experiments.search.rulebook import RULEBOOK_FILE, rulebook_spec_from_dict
from fbsim.experiments.search.tune import TUNE_FILE, tune_spec_from_dict
from fbsim.inputs import Key, check, failing
from fbsim.lineup import lineup_from_toml, lineup_keys
from fbsim.reference.script import SCRIPT_FILE, check_script

FAIL = failing(UsageError, "file.toml")


def refused(doc, keys) -> str:
    with pytest.raises(UsageError) as e:
        check(doc, keys, FAIL)
    message = str(e.value)
    assert message.startswith("file.toml: ") and "\n" not in message
    return message


KEYS = {
    "n": Key("count", lo=1, hi=10),
    "i": Key("int", lo=0),
    "x": Key("number", lo=0, hi=1, open=True),
    "flag": Key("bool"),
    "mode": Key("text", choices=("seat", "agenda")),
    "names": Key("list", item=Key("text"), size=(1, 3)),
    "t": Key("table", keys={"a": Key("int"), "b": Key("list", item=Key("table", keys={
        "c": Key("number")}))}),
    "either": Key(("text", "list"), "text or a list of text", item=Key("text")),
    "free": Key("table"),
}


def test_values_of_the_right_type_and_range_pass_converted():
    doc = {"n": 3.0, "i": 7, "x": 0.5, "flag": True, "mode": "seat", "names": ["a"],
           "t": {"a": 1, "b": [{"c": 2}]}, "either": "s", "free": {"anything": [1, {}]}}
    out = check(doc, KEYS, FAIL)
    assert out["n"] == 3 and isinstance(out["n"], int)
    assert out["x"] == 0.5 and isinstance(out["x"], float)
    assert out["t"]["b"][0]["c"] == 2.0 and isinstance(out["t"]["b"][0]["c"], float)
    assert out["free"] == {"anything": [1, {}]}


@pytest.mark.parametrize("doc,fragments", [
    ({"nn": 1}, ["nn: unknown key", "did you mean 'n'"]),
    ({"n": 0}, ["n: expected a whole number from 1 to 10, got 0"]),
    ({"n": 2.5}, ["n: expected a whole number", "got 2.5"]),
    ({"n": True}, ["n: expected a whole number", "got True"]),
    ({"n": 10**30}, ["from 1 to 10", "got 1000000000000000000000000000000"]),
    ({"i": -1}, ["i: expected an integer >= 0, got -1"]),
    ({"i": 1.0}, ["i: expected an integer", "got 1.0"]),
    ({"x": 1}, ["x: expected a number between 0 and 1, got 1"]),
    ({"x": math.nan}, ["x: expected a finite number"]),
    ({"x": "0.5"}, ["x: expected a number", "got '0.5'"]),
    ({"flag": 1}, ["flag: expected true or false, got 1"]),
    ({"mode": "seats"}, ['mode: expected one of "seat", "agenda"', "did you mean 'seat'"]),
    ({"names": []}, ["names: expected a list (1 to 3 items), got 0 items"]),
    ({"names": ["a", 2]}, ["names[1]: expected text, got 2"]),
    ({"t": 5}, ["t: expected a table, got 5"]),
    ({"t": {"z": 1}}, ["t.z: unknown key (keys: a, b)"]),
    ({"t": {"b": [{"c": 1}, {"c": "x"}]}}, ["t.b[1].c: expected a number, got 'x'"]),
    ({"t": {"b": [{"c": 1}, 3]}}, ["t.b[1]: expected a table, got 3"]),
    ({"either": 5}, ["either: expected text or a list of text, got 5"]),
    ({"either": ["a", None]}, ["either[1]: expected text"]),
    ({"names": ["x" * 500, 3]}, ["names[1]"]),
])
def test_a_wrong_value_is_one_line_naming_its_path_what_was_expected_and_found(doc, fragments):
    message = refused(doc, KEYS)
    for f in fragments:
        assert f in message, message


def test_long_and_control_character_values_are_cut_to_a_short_line():
    message = refused({"mode": "a\n" * 10_000}, KEYS)
    assert len(message) < 200 and "\\n" in message


def test_a_required_key_left_out_is_named():
    assert "k: missing: expected an integer" in refused({}, {"k": Key("int", required=True)})


def test_a_key_of_an_unknown_type_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown type"):
        Key("integer")


@given(st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5) | st.none(),
                       max_size=4))
def test_any_document_is_accepted_or_refused_in_one_line(doc):
    try:
        check(doc, KEYS, FAIL)
    except UsageError as e:
        assert "\n" not in str(e) and str(e).startswith("file.toml: ")


# Each file kind's declared keys are the keys its reader accepts: a key of the declaration
# gets past the unknown-key check, and one not declared is refused by name.
READERS = [
    ("sweep spec", SPEC_FILE, lambda d: spec_from_dict(d, "f")),
    ("tune spec", TUNE_FILE, lambda d: tune_spec_from_dict({"params": {"masks": [0, 2]}, **d},
                                                           "f")),
    ("rules-search spec", RULEBOOK_FILE,
     lambda d: rulebook_spec_from_dict({"params": {"masks": [0, 2]}, **d}, "f")),
    ("script", SCRIPT_FILE, lambda d: check_script(d, "f")),
    ("lineup", lineup_keys(), lambda d: lineup_from_toml(d, "f")),
]


@pytest.mark.parametrize("kind,keys,read", READERS, ids=[r[0] for r in READERS])
def test_each_file_kind_refuses_an_undeclared_key_and_knows_its_declared_ones(kind, keys, read):
    with pytest.raises(Exception) as e:
        read({"no_such_key": 1})
    assert "no_such_key: unknown key" in str(e.value)
    for k in keys:
        try:
            read({k: object()})  # a value no key accepts: refused as a value, not as a key
        except Exception as e:
            assert f"{k}: expected" in str(e) or f"{k}[" in str(e), (k, str(e))
            assert "unknown key" not in str(e), (k, str(e))
        else:
            assert keys[k].type == "any" or "any" in keys[k].type, k
