"""The rules configuration: RULES.md defaults, TOML round trip, hash, overrides, validation."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given

from fbsim.errors import ConfigError
from fbsim.game import layout as L
from fbsim.rules import (
    Rules,
    load_rules,
    rules_hash,
    rules_to_toml,
    rules_vector,
    to_dict,
    validate_dict,
)
from tests.strategies import overrides_st, rules_st

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = Rules()


def leaves(d: dict, prefix: str = ""):
    """(dotted path, value) of every non-table value; lists count as one value."""
    for k, v in d.items():
        p = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict):
            yield from leaves(v, p)
        else:
            yield p, v


def flat(rules: Rules) -> dict:
    return dict(leaves(to_dict(rules)))


def nest(path: str, value) -> dict:
    out: dict = {}
    cur = out
    parts = path.split(".")
    for part in parts[:-1]:
        cur = cur.setdefault(part, {})
    cur[parts[-1]] = value
    return out


# ------------------------------------------------------------------------ defaults


def test_D1_default_baselines():
    b = DEFAULT.baseline
    assert b.p3 == (7, 7, 8, 9, 10, 10, 12, 12)
    assert sum(b.p3) == 75
    for n in (4, 5, 6):
        assert b.for_players(n) == tuple(x + 2 * (n - 3) for x in b.p3)
    assert sum(b.p6) == 123 and len(b.p6) == DEFAULT.rounds == 8


def test_D2_default_agenda_decks():
    want = {3: (2, 1, 1), 4: (2, 2, 2), 5: (3, 2, 2), 6: (3, 3, 2)}
    for n, counts in want.items():
        deck = DEFAULT.decks.for_players(n)
        assert deck.counts() == counts
        assert sum(counts) > n  # R-S4
        assert counts[0] < n  # an all-Steward table is impossible
    assert DEFAULT.decks.p3.accelerationist == 1  # two Accelerationists only from 4 players


def test_D3_default_asset_table():
    # count, price, income, ppm, Legacy warming/severe/extreme, accusation weight, tie-break
    want = {
        "refinery": (5, 4, 3, 1, 0, 0, 0, 0, False),
        "carbon-sink": (4, 5, 0, -2, 3, 0, 0, 0, False),
        "media-house": (2, 4, 1, 0, 0, 0, 0, 2, False),
        "grey-bank": (2, 3, 2, 0, 0, 0, 0, 0, False),
        "bunker": (2, 4, 0, 0, 0, 0, 3, 0, True),
    }
    got = {name: (a.count, a.price, a.income, a.ppm, a.legacy_warming, a.legacy_severe,
                  a.legacy_extreme, a.accusation_weight, a.collapse_tiebreak)
           for name, a in DEFAULT.assets.items()}
    assert got == want


def test_other_defaults_are_the_rulebook_numbers():
    r = DEFAULT
    assert r.dial.start == 450 and r.tipping.start_flipped == 1  # R-S1
    assert r.tipping.thresholds == (500, 550, 575) and r.tipping.penalty == 2  # R-W2, R-W3
    assert (r.agents, r.capital, r.masks, r.stagger) == (6, 8, 2, 1)  # R-S2, R-S3
    assert r.market.size == 4 and r.rounds == 8  # R-S5, R-S6
    j = r.jobs
    assert (j.cool_ppm, j.burn_ppm, j.cool_cost, j.burn_pay, j.burn_pay_revealed,
            j.fog_per_masked_burn) == (3, 3, 1, 3, 4, 3)  # R-V2..R-V4, R-A5
    assert (r.market.purchase_labour, r.market.wage) == (3, 2)  # R-V6
    a = r.accusation
    assert (a.rounds, a.point_weight, a.pay_per_accuser) == ((3, 6), 1, 2)  # R-A1..R-A4
    assert (r.dial.severe, r.dial.extreme, r.dial.collapse) == (510, 550, 600)  # R-E2
    assert r.scoring.collapse_min_capital == 10 and r.scoring.capital_per_legacy == 2
    g = r.agendas
    assert (g.steward_base, g.steward_per_step, g.steward_step, g.opportunist_severe,
            g.accelerationist_extreme, g.accelerationist_per_heat_asset,
            g.accelerationist_other) == (4, 3, 10, 9, 4, 1, -2)  # R-X1
    assert r.dial.floor_enabled is False  # D4
    assert r.fog.partial_fill is True and r.fog.carry_over is True  # D5, D6
    assert r.accusation.media_stacks is False  # D7
    assert r.scoring.tiebreak_first_player == "last-round"  # D8
    assert r.first_player == 0  # D9
    assert "bots" not in to_dict(r)  # bot parameters belong to the lineup


# ------------------------------------------------------------------------ TOML and hash


@given(rules=rules_st())
def test_rules_to_toml_parses_back_into_the_same_rules(rules):
    text = rules_to_toml(rules)
    doc = tomllib.loads(text)
    back = validate_dict(doc)
    assert back == rules and rules_hash(back) == rules_hash(rules)
    assert np.array_equal(rules_vector(back), rules_vector(rules))
    assert rules_hash(rules) in text.splitlines()[0]
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "rules.toml"
        f.write_text(text)
        loaded = load_rules(f)
    assert loaded == rules and rules_hash(loaded) == rules_hash(rules)
    assert list(loaded.assets) == list(rules.assets)  # kind order is kind index


def test_hash_is_the_same_for_equal_rules():
    h = rules_hash(DEFAULT)
    assert rules_hash(Rules()) == h
    assert rules_hash(load_rules()) == h
    assert rules_hash(load_rules(sets=["masks=2", "assets.bunker.price=4"])) == h
    bots: dict = {}
    assert rules_hash(load_rules(overrides={"bots": {"steward": {"margin": 5}}},
                                 bots=bots)) == h  # a bot parameter is no rule
    assert bots == {"steward": {"margin": 5.0}}
    a = load_rules(sets=["masks=3", "rounds=8", "players=5"])
    b = load_rules(sets=["players=5", "masks=3"])
    assert a == b and rules_hash(a) == rules_hash(b)


def test_hash_is_stable_across_processes():
    sets = ["masks=3", "assets.refinery.price=5", "assets.solar.count=2"]
    code = ("import sys; from fbsim.rules import load_rules, rules_hash; "
            "print(rules_hash(load_rules(sets=sys.argv[1:])))")
    for hashseed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        out = subprocess.run([sys.executable, "-c", code, *sets], env=env, cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.strip()
        assert out == rules_hash(load_rules(sets=sets))


def _changed_values(value, path: str):
    """Nearby values of one key, to try in turn (the first valid one is used)."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, str):
        # a choice: the others of the fields with choices (the first valid one is used)
        return [c for c in (*L.TIEBREAK_NAMES, *L.FLIP_NAMES) if c != value]
    if isinstance(value, float):
        return [value + 0.5, value - 0.5]
    if isinstance(value, int):
        return [value + 1, value - 1]
    if isinstance(value, list) and value:
        return [[value[0] + 1, *value[1:]], [value[0] - 1, *value[1:]]]
    return []


def test_hash_changes_with_any_change():
    base = rules_hash(DEFAULT)
    seen = {base: "default"}
    unchanged = []
    for path, value in leaves(to_dict(DEFAULT)):
        for new in _changed_values(value, path):
            try:
                r = load_rules(overrides=nest(path, new))
            except ConfigError:
                continue
            assert flat(r)[path] == new
            h = rules_hash(r)
            assert h not in seen, f"{path}={new!r} has the hash of {seen.get(h)}"
            seen[h] = path
            break
        else:
            unchanged.append(path)
    assert unchanged == []
    # rounds with their own baselines
    r7 = load_rules(sets=["rounds=7"] + [f"baseline.p{n}={[1] * 7}" for n in range(3, 7)])
    assert rules_hash(r7) not in seen
    # a new asset kind changes it, and so does any field of it
    solar = load_rules(sets=["assets.solar.count=1"])
    assert rules_hash(solar) not in seen
    assert rules_hash(load_rules(base=solar, sets=["assets.solar.price=1"])) != rules_hash(solar)


def test_hash_tells_apart_rules_that_play_differently():
    """The order of asset kinds is their kind index (market slots, the deck, the rules
    vector), so rules that list new kinds in another order are different rules."""
    x = {"count": 3, "price": 1, "ppm": 2}
    y = {"count": 3, "price": 6, "ppm": -2}
    a = load_rules(overrides={"assets": {"x": x, "y": y}})
    b = load_rules(overrides={"assets": {"y": y, "x": x}})
    assert not np.array_equal(rules_vector(a), rules_vector(b))
    assert rules_hash(a) != rules_hash(b)


# ------------------------------------------------------------------------ overrides


def test_partial_toml_file_overrides_only_what_it_names(tmp_path):
    f = tmp_path / "partial.toml"
    f.write_text('masks = 3\n[dial]\nstart = 440\n[assets.bunker]\nprice = 7\n'
                 '[bots.steward]\nmargin = 2.5\n[scoring]\ntiebreak_first_player = "round-1"\n')
    bots: dict = {}
    r = load_rules(f, bots=bots)
    got, want = flat(r), flat(DEFAULT)
    diff = {k: got[k] for k in got if got[k] != want.get(k)}
    assert diff == {"masks": 3, "dial.start": 440, "assets.bunker.price": 7,
                    "scoring.tiebreak_first_player": "round-1"}
    assert got.keys() == want.keys()
    assert bots == {"steward": {"margin": 2.5}}  # for the lineup (a [bots.X] table)


@given(o=overrides_st())
def test_overrides_change_only_what_they_name(o):
    r = load_rules(overrides=o)
    named = dict(leaves(o))
    new_kinds = {f"assets.{k}" for k in o.get("assets", {}) if k not in DEFAULT.assets}
    got, want = flat(r), flat(DEFAULT)
    for path, value in named.items():
        v = got[path]
        assert (list(v) if isinstance(v, tuple) else v) == value, path
    for path in got:
        if path in named or path.rsplit(".", 1)[0] in new_kinds:
            continue
        assert got[path] == want[path], path


def test_set_items():
    sets = ["masks=3", "assets.refinery.price=5", "accusation.rounds=[2,5]",
            "scoring.tiebreak_first_player=round-1", "bots.fog-grabber.greed=0.5"]
    bots: dict = {}
    r = load_rules(sets=sets, bots=bots)
    assert r.masks == 3
    assert r.assets["refinery"].price == 5
    assert r.accusation.rounds == (2, 5)
    assert r.scoring.tiebreak_first_player == "round-1"
    assert bots == {"fog-grabber": {"greed": 0.5}}
    got, want = flat(r), flat(DEFAULT)
    assert {k for k in got if got[k] != want[k]} == {
        "masks", "assets.refinery.price", "accusation.rounds",
        "scoring.tiebreak_first_player"}


def test_a_bot_parameter_is_not_a_rule():
    with pytest.raises(ConfigError) as e:
        load_rules(sets=["masks=3", "bots.fog-grabber.greed=0.5"])
    assert e.value.key == "bots.fog-grabber.greed" and "not a rule" in e.value.message
    assert "\n" not in str(e.value)


def test_set_items_apply_after_the_file(tmp_path):
    f = tmp_path / "r.toml"
    f.write_text("masks = 3\ncapital = 9\n")
    r = load_rules(f, sets=["masks=4"])
    assert (r.masks, r.capital) == (4, 9)


# ------------------------------------------------------------------------ validation

SMALL_DECK = ["assets.refinery.count=0", "assets.carbon-sink.count=0",
              "assets.media-house.count=1", "assets.grey-bank.count=1",
              "assets.bunker.count=1"]

BAD = [
    (["masx=3"], "masx", ["unknown key", "did you mean 'masks'"]),
    (["dial.strat=400"], "dial.strat", ["unknown key", "did you mean 'start'"]),
    (["jobs.burn_pya=3"], "jobs.burn_pya", ["unknown key", "did you mean 'burn_pay'"]),
    (["assets.refinry.price=5"], "assets.refinry",
     ["unknown asset kind", "did you mean 'refinery'", "count"]),
    (["players=four"], "players", ["expected an integer", "'four'"]),
    (["fog.partial_fill=1"], "fog.partial_fill", ["expected true or false"]),
    (["capital=8.5"], "capital", ["expected an integer"]),
    (["masks=true"], "masks", ["expected an integer"]),
    (["scoring.tiebreak_first_player=first"], "scoring.tiebreak_first_player",
     ["expected one of"]),
    (["players=2"], "players", ["from 3 to 6", "got 2"]),
    (["players=7"], "players", ["from 3 to 6", "got 7"]),
    (["assets.refinery.price=-1"], "assets.refinery.price", ["from 0 to", "got -1"]),
    (["decks.p4.steward=0"], "decks.p4", ["holds 4 cards", "more than the 4 players"]),
    (["decks.p6.opportunist=1"], "decks.p6", ["holds 6 cards"]),
    (SMALL_DECK + ["market.size=4"], "market.size", ["asset deck holds only 3"]),
    (["rounds=7", "baseline.p3=[7, 7]"], "baseline.p3", ["has 2 entries but rounds is 7"]),
    (["baseline.p5=[9, 9, 9]"], "baseline.p5", ["has 3 entries"]),
    (["accusation.rounds=[3, 8]"], "accusation.rounds[1]", ["from 1 to 7", "got 8"]),
    (["accusation.rounds=[0]"], "accusation.rounds[0]", ["got 0"]),
    (["accusation.rounds=[3, 3]"], "accusation.rounds", ["twice"]),
    (["tipping.thresholds=[575, 500, 550]"], "tipping.thresholds", ["must not fall",
                                                                     "got [575, 500, 550]"]),
    (["dial.floor_enabled=true", "dial.floor=600"], "dial.floor",
     ["below dial.collapse=600", "got 600"]),  # (D4: every game a Collapse, R-W4)
    (["dial.floor_enabled=true", "dial.collapse=580", "dial.floor=590"], "dial.floor",
     ["below dial.collapse=580"]),
    (["bots.fog-grabber.greed=2"], "bots.fog-grabber.greed", ["from 0 to 1", "got 2"]),
    (["bots.fog-grabber.greed=-0.5"], "bots.fog-grabber.greed", ["from 0 to 1", "got -0.5"]),
    (["bots.fog-grabber.gred=0.5"], "bots.fog-grabber.gred",
     ["unknown parameter", "did you mean 'greed'"]),
    (["bots.fog-graber.greed=0.5"], "bots.fog-graber", ["unknown bot", "'fog-grabber'"]),
]


def test_a_floor_not_enabled_may_be_anything_D4():
    assert load_rules(sets=["dial.floor=700"]).dial.floor == 700
    assert load_rules(sets=["dial.floor_enabled=true", "dial.floor=599"]).dial.floor == 599


@pytest.mark.parametrize("sets,key,fragments", BAD, ids=[b[1] + ":" + b[0][-1] for b in BAD])
def test_bad_set_item_names_the_key(sets, key, fragments):
    with pytest.raises(ConfigError) as e:
        load_rules(sets=sets)
    assert e.value.key == key
    assert e.value.source == "--set"
    for frag in fragments:
        assert frag in e.value.message, (frag, e.value.message)
    assert key in str(e.value)


@pytest.mark.parametrize("text,key", [
    ("[dial]\nstrat = 400\n", "dial.strat"),
    ("[fog]\ncarry_over = 1\n", "fog.carry_over"),
    ("rounds = 3.0\n", "rounds"),
    ("[assets.solar]\nprice = 3\n", "assets.solar"),
    ("[decks.p3]\nsteward = 0\nopportunist = 1\naccelerationist = 1\n", "decks.p3"),
])
def test_bad_rules_file_names_the_key_and_the_file(tmp_path, text, key):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_rules(f)
    assert e.value.key == key
    assert str(f) in e.value.source


def test_bad_overrides_name_the_key():
    with pytest.raises(ConfigError) as e:
        load_rules(overrides={"fog": {"carry_over": 1}})
    assert e.value.key == "fog.carry_over"
    with pytest.raises(ConfigError) as e:
        load_rules(overrides={"tipping": {"thresholds": [500, "x"]}})
    assert e.value.key == "tipping.thresholds[1]"


def test_valid_bot_param_and_new_asset_kind_load():
    bots: dict = {}
    r = load_rules(sets=["bots.fog-grabber.greed=0.5", "assets.solar.count=2",
                         "assets.solar.ppm=-1"], bots=bots)
    assert bots["fog-grabber"]["greed"] == 0.5
    assert list(r.assets)[-1] == "solar"
    assert (r.assets["solar"].count, r.assets["solar"].ppm, r.assets["solar"].price) == (2, -1, 0)
