"""Lineups own the bots' parameters: parsing (--lineup, --seat, lineup files), every bad
input as one line naming the field, the lineup hash, per-entry parameters in both engines,
stable ids when a bot is added, and the `bots.BOT.PARAM` shorthand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fbsim.errors import FbsimError, UsageError
from fbsim.game import layout as L
from fbsim.lineup import (
    Entry,
    Lineup,
    ParamError,
    lineup_from_description,
    lineup_hash,
    parse_lineup,
    split_seat_items,
)
from fbsim.rules import Rules, load_rules, rules_hash

DEFAULT_DESCRIPTION = "steward=steward,opportunist=opportunist,accelerationist=fog-grabber"


def params(entry: Entry) -> dict[str, float]:
    return dict(entry.params)


# ------------------------------------------------------------------------------ parsing


def test_default_lineup_reads_as_before():
    lu = Lineup()
    assert lu.describe() == DEFAULT_DESCRIPTION
    assert parse_lineup(None) == lu == lineup_from_description(DEFAULT_DESCRIPTION)
    assert lu.labels()[:3] == ["steward", "opportunist", "fog-grabber"]
    # every parameter resolved to a float, defaults filled in
    assert params(lu.by_agenda["accelerationist"]) == {
        "greed": 1.0, "burns": 3.0, "masks_per_round": 1.0, "reserve_extra": 0.0}


def test_seat_syntax_with_params():
    lu = parse_lineup(None, ["1=tunable:aim=520,greed=0.3", "2=tunable:aim=560;greed=0.5"], 4)
    assert params(lu.seats[1])["aim"] == 520.0 and params(lu.seats[1])["greed"] == 0.3
    assert params(lu.seats[2])["aim"] == 560.0 and params(lu.seats[2])["greed"] == 0.5
    assert params(lu.seats[1])["tolerance"] == 4.0  # the default
    assert lu.describe() == (DEFAULT_DESCRIPTION + ",seat1=tunable:aim=520;greed=0.3"
                             ",seat2=tunable:aim=560;greed=0.5")
    assert lineup_from_description(lu.describe()) == lu


def test_lineup_syntax_with_params_round_trips():
    lu = parse_lineup("steward=hoarder,accelerationist=tunable:aim=520;greed=0.3")
    assert lu.by_agenda["steward"].bot == "hoarder"
    assert lu.by_agenda["opportunist"].bot == "opportunist"  # not named: the default
    assert params(lu.by_agenda["accelerationist"])["aim"] == 520.0
    text = lu.describe()
    assert text == ("steward=hoarder,opportunist=opportunist,"
                    "accelerationist=tunable:aim=520;greed=0.3")
    assert parse_lineup(text) == lu == lineup_from_description(text)
    # one bot (with parameters) for every seat
    every = parse_lineup("tunable:aim=600")
    assert {e.bot for e in every.by_agenda.values()} == {"tunable"}
    assert {params(e)["aim"] for e in every.by_agenda.values()} == {600.0}


def test_values_that_do_not_print_short_round_trip_exactly():
    lu = parse_lineup(None, ["0=tunable:greed=0.1234567890123,aim=529.25"], 4)
    back = lineup_from_description(lu.describe())
    assert back == lu and lineup_hash(back) == lineup_hash(lu)


def test_seat_items_of_a_sweep_point_split_by_seat():
    assert split_seat_items("0=hoarder,1=tunable:aim=520,greed=0.3,2=random") == [
        "0=hoarder", "1=tunable:aim=520,greed=0.3", "2=random"]


def test_lineup_file(tmp_path):
    f = tmp_path / "field.toml"
    f.write_text('[agendas]\nsteward = "steward"\n'
                 'accelerationist = { bot = "tunable", aim = 560, greed = 0.5 }\n'
                 '[seats]\n1 = { bot = "tunable", aim = 520 }\n2 = "hoarder"\n'
                 '3 = "tunable:aim=430,chips_early=6"\n')
    lu = parse_lineup(str(f), [], 4)
    assert lu.by_agenda["opportunist"].bot == "opportunist"
    assert params(lu.by_agenda["accelerationist"])["aim"] == 560.0
    assert params(lu.by_agenda["accelerationist"])["greed"] == 0.5
    assert params(lu.seats[1])["aim"] == 520.0 and lu.seats[2].bot == "hoarder"
    assert params(lu.seats[3])["chips_early"] == 6.0
    assert lineup_from_description(lu.describe()) == lu
    # --seat adds to the file's seats
    assert parse_lineup(str(f), ["0=random"], 4).seats[0].bot == "random"


# ------------------------------------------------------------------------------ errors

BAD = [
    # (lineup, seats, players, fragments the one-line message must hold)
    ("accelerationist=fog-graber", [], None, ["--lineup accelerationist", "unknown bot",
                                             "did you mean 'fog-grabber'"]),
    (None, ["1=tunabel:aim=520"], 4, ["--seat 1", "unknown bot", "did you mean 'tunable'"]),
    (None, ["1=tunable:am=520"], 4, ["--seat 1", "unknown parameter 'am'",
                                     "did you mean 'aim'"]),
    (None, ["1=tunable:aim=high"], 4, ["--seat 1", "tunable.aim", "expected a number",
                                       "'high'"]),
    (None, ["1=tunable:aim=nan"], 4, ["--seat 1", "tunable.aim", "expected a number"]),
    (None, ["1=tunable:aim=\u0665\u0660\u0660"], 4, ["--seat 1", "tunable.aim",
                                                   "expected a number"]),  # (other digits)
    (None, ["1=tunable:aim=5_00"], 4, ["--seat 1", "tunable.aim", "expected a number"]),
    (None, ["1=tunable:aim=0x1f4"], 4, ["--seat 1", "tunable.aim", "expected a number"]),
    (None, ["1=tunable:aim= 5e2 "], 4, []),  # valid: spaces around, an exponent
    (None, ["1=tunable:greed=inf"], 4, ["--seat 1", "tunable.greed", "expected a number"]),
    (None, ["1=tunable:aim=1e999"], 4, ["--seat 1", "tunable.aim", "finite"]),
    (None, ["1=tunable:aim=900"], 4, ["--seat 1", "tunable.aim", "from 300 to 800", "got 900"]),
    (None, ["1=tunable:greed=-0.5"], 4, ["--seat 1", "tunable.greed", "from 0 to 1, got -0.5"]),
    (None, ["1=tunable:aim"], 4, ["--seat 1", "PARAM=VALUE"]),
    (None, ["1=tunable:aim=500,aim=510"], 4, ["--seat 1", "tunable.aim", "twice"]),
    (None, ["1=hoarder", "1=random"], 4, ["--seat 1", "given twice"]),
    (None, ["4=hoarder"], 4, ["--seat", "0 to 3"]),
    (None, ["x=hoarder"], 4, ["--seat", "integer"]),
    (None, ["1=scripted"], 4, ["scripted"]),
    ("accelerationist=tunable:aim=520,greed=0.3", [], None,
     ["--lineup", "unknown agenda 'greed'", "';'"]),
    ("steward=steward,steward=hoarder", [], None, ["--lineup steward", "twice"]),
    ("hero=steward", [], None, ["--lineup", "unknown agenda 'hero'"]),
    ("steward", [], None, []),  # valid: one bot everywhere (checked below not to raise)
]


@pytest.mark.parametrize("lineup,seats,players,fragments", BAD,
                         ids=[f"{b[0]}|{','.join(b[1])}" for b in BAD])
def test_bad_input_is_one_line_naming_the_field(lineup, seats, players, fragments):
    if not fragments:
        parse_lineup(lineup, seats, players)
        return
    with pytest.raises(UsageError) as e:
        parse_lineup(lineup, seats, players)
    msg = str(e.value)
    assert "\n" not in msg
    for frag in fragments:
        assert frag in msg, (frag, msg)


BAD_FILES = [
    ('[agendas]\nsteward = "stewrd"\n', ["agendas.steward", "did you mean 'steward'"]),
    ('[agendas]\nhero = "steward"\n', ["agendas.hero", "unknown agenda"]),
    ('[agendas]\nsteward = { aim = 5 }\n', ["agendas.steward.bot"]),
    ('[agendas]\nsteward = { bot = "tunable", aim = 900 }\n',
     ["agendas.steward.aim", "from 300 to 800"]),
    ('[agendas]\nsteward = { bot = "tunable", aim = "x" }\n',
     ["agendas.steward.aim", "expected a number"]),
    ('[agendas]\nsteward = { bot = "tunable", aim = "500" }\n',
     ["agendas.steward.aim", "expected a number, got '500' (text"]),
    ('[seats]\n1 = { bot = "tunable", margin = " 1_0 " }\n',
     ["seats.1.margin", "expected a number"]),
    ('[agendas.steward]\nmixture = [{ weight = 1, aim = "500" }]\n',
     ["agendas.steward.mixture[0].aim", "expected a number, got '500'"]),
    ('[agendas]\nsteward = { bot = "tunable", aim = true }\n',
     ["agendas.steward.aim", "expected a number"]),
    ('[agendas]\nsteward = { bot = "tunable", gred = 0.1 }\n',
     ["agendas.steward.gred", "did you mean 'greed'"]),
    ('[agendas]\nsteward = { bot = "tunable", aim = nan }\n', ["agendas.steward.aim", "finite"]),
    ('[seats]\n7 = "hoarder"\n', ["seats.7", "0 to 3"]),
    ('[seats]\nx = "hoarder"\n', ["seats.x"]),
    ('[seats]\n1 = 5\n', ["seats.1", "expected a bot name"]),
    ('[agendaz]\n', ["agendaz", "did you mean 'agendas'"]),
    ('agendas = 3\n', ["agendas", "expected a table"]),
    ('[agendas\n', ["not valid TOML"]),
]


@pytest.mark.parametrize("text,fragments", BAD_FILES, ids=[b[1][0] for b in BAD_FILES])
def test_bad_lineup_file_is_one_line_naming_the_key(tmp_path, text, fragments):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(UsageError) as e:
        parse_lineup(str(f), [], 4)
    msg = str(e.value)
    assert msg.startswith(f"lineup file {f}: ") and "\n" not in msg.rstrip()
    for frag in fragments:
        assert frag in msg, (frag, msg)


def test_missing_lineup_file(tmp_path):
    with pytest.raises(UsageError, match="cannot read"):
        parse_lineup(str(tmp_path / "none.toml"))


# ------------------------------------------------------------------------------ hashes


def test_lineup_hash_is_stable_and_sensitive_to_every_parameter():
    h = lineup_hash(Lineup())
    assert h == "3eaaffdcc29f3f06"  # the default lineup's hash must not drift
    assert lineup_hash(parse_lineup(DEFAULT_DESCRIPTION)) == h
    assert lineup_hash(parse_lineup("accelerationist=fog-grabber:greed=1")) == h  # default
    assert lineup_hash(parse_lineup("accelerationist=fog-grabber:greed=0.99")) != h
    assert lineup_hash(parse_lineup(None, ["0=steward"], 4)) != h  # an override is a change
    a = parse_lineup(None, ["1=tunable:aim=520"], 4)
    b = parse_lineup(None, ["1=tunable:aim=521"], 4)
    assert lineup_hash(a) != lineup_hash(b)
    assert len(h) == 16 and int(h, 16) >= 0


def test_rules_hash_does_not_depend_on_bots():
    h = rules_hash(Rules())
    bots: dict = {}
    assert rules_hash(load_rules(sets=["bots.fog-grabber.greed=0.5"], bots=bots)) == h
    assert bots == {"fog-grabber": {"greed": 0.5}}
    assert "bots" not in __import__("fbsim.rules", fromlist=["to_dict"]).to_dict(Rules())


def test_adding_a_bot_changes_no_id_and_no_hash(monkeypatch):
    """A new bot module (here: a fake BotSpec sorted before every other) leaves the rules
    hash, the lineup hash, the entries (the records' `bot` codes) and the table rows."""
    import fbsim.policies as P
    from fbsim.experiments.metrics.tally import bot_rows
    from fbsim.policies.hoarder import BOT as HOARDER

    lu = parse_lineup("accelerationist=tunable:aim=520;greed=0.3", ["2=hoarder"], 4)
    before = (rules_hash(Rules()), lineup_hash(lu), lu.describe(), lu.labels(),
              lu.param_matrix().tobytes(), bot_rows(lu), lu.entry_index(2, 0),
              lu.entry_index(1, L.ACCELERATIONIST))
    real = P.registry()
    fake = P.BotSpec("aaa-new", "a new bot", (P.Param("x", 1.0, "x", 0, 2),),
                     HOARDER.commit, HOARDER.fog_request, HOARDER.market, HOARDER.accuse,
                     HOARDER.cornered)
    monkeypatch.setattr(P, "registry", lambda: {"aaa-new": fake, **real})
    assert list(P.registry())[0] == "aaa-new"
    assert parse_lineup("steward=aaa-new:x=2").by_agenda["steward"].bot == "aaa-new"
    lu2 = parse_lineup("accelerationist=tunable:aim=520;greed=0.3", ["2=hoarder"], 4)
    after = (rules_hash(Rules()), lineup_hash(lu2), lu2.describe(), lu2.labels(),
             lu2.param_matrix().tobytes(), bot_rows(lu2), lu2.entry_index(2, 0),
             lu2.entry_index(1, L.ACCELERATIONIST))
    assert after == before


# ------------------------------------------------------------------------------ playing


def test_same_bot_with_different_params_plays_differently_and_equally_in_both_engines():
    from fbsim.kernel import simulate
    from fbsim.kernel.lockstep import record_difference
    from fbsim.reference.engine import play_game

    rules = load_rules(sets=["players=4"])
    hot, cold = "tunable:aim=700,burn_floor=2", "tunable:aim=430,chips_early=6,chips_late=6"
    lu = parse_lineup("tunable", [f"1={hot}", f"2={cold}"], 4)
    assert lu.labels()[L.N_AGENDAS + 1] == "tunable:aim=700;burn_floor=2"
    games = 300
    cols = simulate(rules, lu, 5, games)
    assert set(cols["bot"][:, 1]) == {L.N_AGENDAS + 1}  # the records' bot: the entry
    assert set(cols["bot"][:, 2]) == {L.N_AGENDAS + 2}
    for i in range(games):
        rec = play_game(rules, lu, 5, i)
        assert rec.seats[1].bot == "tunable:aim=700;burn_floor=2"
        diff = record_difference(rec, cols, i, lu)
        assert diff is None, f"game {i}: {diff}"
    burns = cols["burn_open"] + cols["burn_masked"]
    cools = cols["cool_open"] + cols["cool_masked"]
    assert burns[:, 1].mean() > burns[:, 2].mean() + 1
    assert cools[:, 2].mean() > cools[:, 1].mean() + 1
    # the same seats with one shared parameter set play other games
    same = simulate(rules, parse_lineup("tunable", [f"1={hot}", f"2={hot}"], 4), 5, games)
    assert not np.array_equal(same["burn_open"][:, 2], cols["burn_open"][:, 2])


@pytest.mark.slow  # (5-11 s)
def test_set_shorthand_gives_the_games_of_the_lineup_form():
    from fbsim.experiments.run.simulate import simulate as sim
    from fbsim.experiments.run.spec import SweepSpec, build_points
    from fbsim.kernel import simulate

    _, (a,) = build_points(SweepSpec(games=1, set={"bots.fog-grabber.greed": 0.5}))
    _, (b,) = build_points(SweepSpec(games=1, lineup="accelerationist=fog-grabber:greed=0.5"))
    _, (c,) = build_points(SweepSpec(games=1))
    assert a.lineup == b.lineup and a.lineup != c.lineup
    assert a.rules == b.rules == c.rules
    ra, rb, rc = (simulate(p.rules, p.lineup, 3, 400) for p in (a, b, c))
    for k in ra:
        assert np.array_equal(ra[k], rb[k]), k
    assert not np.array_equal(ra["fog_requested"], rc["fog_requested"])
    x = sim(games=500, seed=2, sets=["bots.fog-grabber.greed=0.5"])
    y = sim(games=500, seed=2, lineup="accelerationist=fog-grabber:greed=0.5")
    assert x.win_rates.equals(y.win_rates) and x.outcomes.equals(y.outcomes)
    assert x.provenance["lineup"] == y.provenance["lineup"]
    assert x.provenance["lineup_hash"] == y.provenance["lineup_hash"] == lineup_hash(b.lineup)
    assert x.provenance["rules_hash"] == rules_hash(Rules(players=4))


def test_shorthand_reaches_every_entry_of_the_bot_and_overrides_its_params():
    lu = parse_lineup("tunable:aim=600", ["1=tunable:aim=520", "2=hoarder"], 4)
    up = lu.with_bot_params({"tunable": {"greed": 0.25}})
    for e in list(up.by_agenda.values()) + [up.seats[1]]:
        assert params(e)["greed"] == 0.25
    assert params(up.seats[1])["aim"] == 520.0 and up.seats[2] == lu.seats[2]


def test_tables_name_bot_rows_by_bot_and_disambiguate_only_when_needed():
    from fbsim.experiments.run.simulate import simulate as sim

    plain = sim(games=1000, seed=1)
    bots = plain.win_rates[plain.win_rates["kind"] == "bot"]
    assert list(bots["name"]) == ["fog-grabber", "opportunist", "steward"]  # registry order
    assert bots["seats"].sum() == 1000 * 4
    mixed = sim(games=1000, seed=1, lineup="accelerationist=tunable",
                seats=["1=tunable:aim=520", "3=hoarder"])
    rows = mixed.win_rates[mixed.win_rates["kind"] == "bot"]
    assert list(rows["name"]) == ["hoarder", "opportunist", "steward", "tunable",
                                  "tunable:aim=520"]
    assert rows["seats"].sum() == 1000 * 4
    assert int(rows.set_index("name").loc["tunable:aim=520", "seats"]) == 1000
    assert int(rows.set_index("name").loc["hoarder", "seats"]) == 1000


def test_records_file_names_the_entries(tmp_path):
    import json

    import pyarrow.parquet as pq

    from fbsim.experiments.run.provenance import META_KEY
    from fbsim.experiments.run.simulate import simulate as sim

    out = tmp_path / "rec.parquet"
    sim(games=200, seed=1, seats=["1=tunable:aim=520"], records=out)
    t = pq.read_table(out)
    codes = json.loads(t.schema.metadata[b"fbsim.codes"])
    prov = json.loads(t.schema.metadata[META_KEY])
    assert codes["bot"][L.N_AGENDAS + 1] == "tunable"
    assert {codes["bot"][b] for b in t.column("bot_1").to_pylist()} == {"tunable"}
    assert {codes["bot"][b] for b in t.column("bot_0").to_pylist()} <= {
        "steward", "opportunist", "fog-grabber"}
    assert prov["lineup_hash"] == lineup_hash(parse_lineup(None, ["1=tunable:aim=520"]))


def test_old_datasets_with_bot_tables_in_their_rules_still_replay(tmp_path):
    """Datasets written while bot parameters were rules hold [bots.*] tables in their
    rules_toml and the plain lineup; point_setup moves the tables into the lineup."""
    import json

    import pyarrow.parquet as pq

    from fbsim.experiments.run.provenance import META_KEY, read_provenance
    from fbsim.experiments.run.spec import SweepSpec
    from fbsim.experiments.run.sweep import point_setup, run_sweep
    from fbsim.reference.engine import play_game

    out = tmp_path / "greed"
    run_sweep(SweepSpec(games=50, seed=3, players=[3],
                        vary={"bots.fog-grabber.greed": [0.25, 1.0]}), out)
    # rewrite the provenance as the old format had it
    path = out / "outcomes.parquet"
    table = pq.read_table(path)
    prov = read_provenance(path)
    for e in prov["points"]:
        greed = e["coordinates"]["bots.fog-grabber.greed"]
        e["lineup"] = Lineup().describe()
        prov["rules_toml"][str(e["point"])] += f"\n[bots.fog-grabber]\ngreed = {greed}\n"
    meta = {**table.schema.metadata, META_KEY: json.dumps(prov).encode()}
    pq.write_table(table.replace_schema_metadata(meta), path)
    entry = next(e for e in read_provenance(path)["points"]
                 if e["coordinates"]["bots.fog-grabber.greed"] == 0.25)
    assert "[bots." in read_provenance(path)["rules_toml"][str(entry["point"])]
    rules, lineup, seed = point_setup(out, entry["point"])
    assert params(lineup.by_agenda["accelerationist"])["greed"] == 0.25
    assert rules.players == 3 and seed == 3
    rec = play_game(rules, lineup, seed, 0)
    assert rec.seats[0].bot in {"steward", "opportunist", "fog-grabber"}


def test_committed_datasets_replay_with_their_lineup():
    from fbsim.experiments.run.provenance import read_provenance
    from fbsim.experiments.run.sweep import point_setup

    out = Path(__file__).resolve().parents[1] / "results" / "fog-greed"
    prov = read_provenance(out / "outcomes.parquet")
    entry = next(e for e in prov["points"]
                 if e["coordinates"]["bots.fog-grabber.greed"] not in (1, 1.0))
    rules, lineup, seed = point_setup(out, entry["point"])
    greed = params(lineup.by_agenda["accelerationist"])["greed"]
    assert greed == entry["coordinates"]["bots.fog-grabber.greed"]
    assert rules.players == entry["coordinates"]["players"]


def test_sweep_spec_vary_of_a_bot_param_and_seat_params(tmp_path):
    from fbsim.experiments.run.spec import build_points, load_spec

    (tmp_path / "field.toml").write_text('[agendas]\naccelerationist = "tunable:aim=650"\n')
    f = tmp_path / "s.toml"
    f.write_text('games = 10\nlineup = "field.toml"\nseats = ["1=tunable:aim=520,greed=0.3"]\n'
                 '[vary]\n"bots.tunable.tolerance" = [2, 8]\n')
    _, points = build_points(load_spec(f))
    assert len(points) == 2
    for p, tol in zip(points, (2.0, 8.0), strict=True):
        assert params(p.lineup.seats[1])["tolerance"] == tol
        assert params(p.lineup.seats[1])["aim"] == 520.0
        assert params(p.lineup.by_agenda["accelerationist"])["aim"] == 650.0
        assert params(p.lineup.by_agenda["accelerationist"])["tolerance"] == tol


def test_bad_shorthand_names_the_key():
    from fbsim.experiments.run.spec import SpecError, SweepSpec, build_points

    with pytest.raises(SpecError, match=r"bots\.tunable\.aim.*from 300 to 800"):
        build_points(SweepSpec(games=1, vary={"bots.tunable.aim": [500, 900]},
                               seats=["1=tunable"]))
    with pytest.raises(FbsimError, match=r"bots\.tunabl.*did you mean 'tunable'"):
        build_points(SweepSpec(games=1, set={"bots.tunabl.aim": 500}))


@pytest.mark.parametrize("where", ["vary", "set"])
def test_a_shorthand_for_a_bot_no_entry_plays_is_refused(where):
    """`bots.tunable.aim` where no seat or Agenda plays tunable would change nothing (a
    sweep over it would play the same games at every point): refused, naming the key."""
    from fbsim.experiments.run.spec import SpecError, SweepSpec, build_points

    given = {"vary": {"bots.tunable.aim": [500, 600]}} if where == "vary" else {
        "set": {"bots.tunable.aim": 500}}
    with pytest.raises(SpecError, match=r"^bots\.tunable: no entry of any point's lineup "
                                        r"plays tunable"):
        build_points(SweepSpec(games=1, **given))
    _, points = build_points(SweepSpec(games=1, lineup="steward=tunable", **given))
    assert points[0].lineup.by_agenda["steward"].as_dict()["aim"] == 500
    # (a point that plays it is enough: a field point beside the searched ones, as exploit's
    # confirmation has, carries the same columns)
    _, points = build_points(SweepSpec(games=1, points=[
        {"players": 3, "bots.tunable.aim": 500},
        {"players": 3, "lineup": "steward=tunable", "bots.tunable.aim": 500}]))
    assert len(points) == 2


def test_replay_refuses_a_shorthand_for_a_bot_no_entry_plays(capsys):
    from fbsim.cli import main

    assert main(["replay", "--players", "3", "--set", "bots.tunable.aim=500"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fbsim: error: bots.tunable.aim: no entry of the lineup plays")


@pytest.mark.parametrize("text", ["field:w0=0", "field:w0=0;w3=0"])
def test_a_field_whose_weights_are_all_zero_is_refused(text):
    """Each weight is in range (0 to 1), but together they draw no component."""
    with pytest.raises(UsageError, match=r"field: the weights w0\.\.w5 are all 0"):
        parse_lineup(seats=[f"0={text}"], players=4)
    assert parse_lineup(seats=["0=field:w0=0;w2=0.5"], players=4).seats[0].bot == "field"


@pytest.mark.parametrize("value", [0.7, 0.5, 0.01])
def test_a_fields_draw_is_0_or_1_and_nothing_between(value):
    """`draw` takes 0 (one draw per Agenda) or 1 (per seat) only: 0.7 was played per seat
    and written back as "agenda"."""
    with pytest.raises(ParamError, match=rf"field\.draw: expected one of 0, 1, got {value}"):
        Entry.make("field", {"draw": value})
    assert Entry.make("field", {"draw": 0}).as_dict()["draw"] == 0.0
