"""The team equilibrium search (`fbsim equilibrium --draw agenda`): its meta-solver, the field
bot (a mixture drawn per Agenda and game), field files, and the search end to end (written
files, --json, resuming). The single-seat game: tests/test_seat_equilibrium.py."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fbsim.cli import main
from fbsim.errors import UsageError
from fbsim.experiments.search.meta import payoffs, regrets, solve
from fbsim.game import layout as GL
from fbsim.kernel import simulate
from fbsim.lineup import (
    Entry,
    Lineup,
    lineup_from_file,
    lineup_from_toml,
    lineup_hash,
    lineup_to_toml,
)
from fbsim.policies.field import component_params, field_params
from fbsim.policies.planner import from_tunable
from fbsim.rules import load_rules


def run(capsys, *args):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


# ------------------------------------------------------------------ the meta-solver


def test_meta_solver_finds_the_mixed_equilibrium_of_matching_pennies():
    """Roles 0 and 1 play matching pennies (unique equilibrium: 1/2, 1/2); role 2 has a
    strictly better strategy."""
    W = np.zeros((3, 2, 2, 2))
    for i in range(2):
        for j in range(2):
            W[0, i, j, :] = 1.0 if i == j else 0.0
            W[1, i, j, :] = 0.0 if i == j else 1.0
            W[2, i, j, :] = [0.3, 0.5]
    mix, reg = solve(W)
    assert np.allclose(mix[0], [0.5, 0.5], atol=0.02)
    assert np.allclose(mix[1], [0.5, 0.5], atol=0.02)
    assert np.allclose(mix[2], [0.0, 1.0])
    assert reg.max() < 0.01


def test_meta_solver_plays_dominant_strategies():
    rng = np.random.default_rng(3)
    W = rng.random((3, 3, 4, 2)) * 0.5
    W[0, 2] += 0.5  # role 0's strategy 2, role 1's strategy 1, role 2's 0 dominate
    W[1, :, 1] += 0.5
    W[2, :, :, 0] += 0.5
    mix, reg = solve(W)
    assert [int(np.argmax(x)) for x in mix] == [2, 1, 0]
    assert all(x.max() > 0.99 for x in mix)
    assert reg.max() < 1e-6


def test_regrets_are_best_pure_payoff_minus_the_mixtures():
    rng = np.random.default_rng(5)
    W = rng.random((3, 2, 3, 2))
    mix = [np.array([0.3, 0.7]), np.array([0.2, 0.5, 0.3]), np.array([1.0, 0.0])]
    us = payoffs(W, mix)
    # role 0's payoff of pure strategy 1, by hand
    assert us[0][1] == pytest.approx(sum(W[0, 1, j, k] * mix[1][j] * mix[2][k]
                                         for j in range(3) for k in range(2)))
    r = regrets(W, mix)
    assert r == pytest.approx([u.max() - u @ x for u, x in zip(us, mix, strict=True)])
    assert (r >= 0).all()


def test_meta_solver_rejects_a_table_of_the_wrong_shape():
    with pytest.raises(ValueError, match="shape"):
        solve(np.zeros((2, 2, 2)))


# ------------------------------------------------------------------ the field bot

A = {"aim": 470, "chips": 6, "buy": 1}
B = {"aim": 700, "burn_floor": 4, "collapse": 1, "greed": 1, "buy": 3, "reserve": 10}


def _records(lineup: Lineup, games: int = 1500):
    cols = simulate(load_rules(players=4), lineup, 11, games)
    return np.column_stack([cols["winner"], cols["final_dial"], cols["capital"]])


def test_a_field_of_one_component_plays_that_planner_game_by_game():
    pure = Lineup({"steward": Entry.make("planner", A)})
    field = Lineup({"steward": Entry.make("field", field_params([(1.0, Entry.make(
        "planner", A).as_dict())]))})
    assert np.array_equal(_records(pure), _records(field))


def test_the_field_bot_keeps_its_drawn_component_as_its_memo():
    """The field bot draws its component once a game and keeps it as its memo
    (`fbsim.game.public.memo`): a fresh view (NO_MEMO, as the reference engine builds every
    view) and a view holding the kept memo give the same answers, and the memo is what it
    answers from (another component kept there changes the answer)."""
    from fbsim.kernel import bot_arrays
    from fbsim.kernel.build import kernel_build
    from fbsim.policies import field
    from fbsim.rules import rules_vector

    rules = load_rules(players=4)
    full = [Entry.make("planner", x).as_dict() for x in (A, B)]
    lu = Lineup({"steward": Entry.make("field", field_params([(0.5, full[0]),
                                                               (0.5, full[1])]))})
    P, _, _ = bot_arrays(rules, lu, kernel_build())
    row = P[lu.entry_index(0, GL.STEWARD)]
    R = rules_vector(rules)
    V = np.zeros(GL.V_SIZE, dtype=np.int64)
    V[GL.V_SEAT] = 2
    V[GL.V_MY_AGENDA + 2] = GL.STEWARD
    V[GL.V_MY_CAPITAL + 2] = 30
    V[GL.V_MY_MASKS + 2] = 2
    V[GL.V_ROUND] = 1
    V[GL.V_DIAL] = 450
    V[GL.V_WORLD_PROJECTION] = GL.STALE
    kept = {}
    for game in range(40):
        fresh = V.copy()
        fresh[GL.V_MY_MEMO + 2] = GL.NO_MEMO
        a = field.commit(R, fresh, row, np.int64(7), np.int64(game))
        o = int(fresh[GL.V_MY_MEMO + 2])
        assert o == field.component(row, np.int64(7), np.int64(game), GL.STEWARD,
                                   np.int64(2))
        again = field.commit(R, fresh, row, np.int64(7), np.int64(game))  # from the memo
        assert again == a
        kept.setdefault(o, a)
    assert len(kept) == 2 and len(set(kept.values())) == 2  # both drawn, answering apart
    (o0, a0), (o1, a1) = kept.items()
    swapped = V.copy()
    swapped[GL.V_MY_MEMO + 2] = o1  # whatever the game draws, the memo decides
    assert field.commit(R, swapped, row, np.int64(7), np.int64(0)) == a1


def test_a_field_drawn_per_agenda_draws_each_component_with_its_weight_per_game():
    """Every game of a two-component field drawn per Agenda is game for game the game of one
    component played pure, and the share of games of the first is its weight (binomial
    bounds)."""
    full = [Entry.make("planner", x).as_dict() for x in (A, B)]
    w = 0.3
    field = _records(Lineup({"steward": Entry.make("field", field_params(
        [(w, full[0]), (1 - w, full[1])], "agenda"))}))
    a = _records(Lineup({"steward": Entry.make("planner", A)}))
    b = _records(Lineup({"steward": Entry.make("planner", B)}))
    is_a = (field == a).all(axis=1)
    is_b = (field == b).all(axis=1)
    assert (is_a | is_b).all()
    differ = ~(a == b).all(axis=1)
    share = is_a[differ].mean()
    n = differ.sum()
    assert n > 500
    assert abs(share - w) < 4 * np.sqrt(w * (1 - w) / n)


# ------------------------------------------------------------------ field files


def test_field_files_round_trip(tmp_path):
    lu = Lineup({"steward": Entry.make("field", field_params([
        (0.25, Entry.make("planner", A).as_dict()), (0.75, Entry.make("planner", B).as_dict())])),
        "opportunist": Entry.make("planner", {"aim": 540})},
        {1: Entry.make("hoarder")})
    path = tmp_path / "f.toml"
    path.write_text(lineup_to_toml(lu, ["a field"]))
    back = lineup_from_file(path)
    assert lineup_hash(back) == lineup_hash(lu)
    comps = component_params(back.by_agenda["steward"].as_dict())
    assert [w for w, _ in comps] == [0.25, 0.75]
    assert comps[1][1]["aim"] == 700


def test_mixture_weights_are_normalised():
    doc = {"agendas": {"steward": {"mixture": [{"weight": 2, "aim": 500}, {"weight": 6}]}}}
    lu = lineup_from_toml(doc)
    assert [w for w, _ in component_params(lu.by_agenda["steward"].as_dict())] == [0.25, 0.75]


@pytest.mark.parametrize(("mixture", "message"), [
    ([], "a list of 1 to 6 tables"),
    ([{"weight": 1}] * 7, "a list of 1 to 6 tables"),
    ([{"weight": -1}], "mixture[0].weight: expected a positive number"),
    ([{"weight": float("nan")}], "mixture[0].weight: expected a positive number"),
    ([{"aim": 500}], "mixture[0].weight"),
    ([{"weight": 1, "bot": "steward"}], "mixture[0].bot: a mixture mixes planners only"),
    ([{"weight": 1, "aimm": 500}], "mixture[0].aimm: unknown parameter 'aimm'"),
    ([{"weight": 1, "aim": 5000}],
     "mixture[0].aim: planner.aim: expected a number from 300 to 800"),
    (["planner"], "mixture[0]: expected a table"),
])
def test_bad_mixtures_are_one_line_errors(mixture, message):
    with pytest.raises(UsageError) as e:
        lineup_from_toml({"agendas": {"steward": {"mixture": mixture}}}, "f.toml")
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_a_mixture_takes_no_other_key():
    with pytest.raises(UsageError, match="a mixture takes no other key"):
        lineup_from_toml({"agendas": {"steward": {"mixture": [{"weight": 1}], "bot": "x"}}})


# ------------------------------------------------------------------ fbsim equilibrium

SMALL = ["--draw", "agenda", "--cell-games", "300", "--generations", "1", "--population", "3",
         "--search-games", "200", "--confirm-games", "1000", "--iterations", "2", "-q"]


@pytest.mark.slow
def test_equilibrium_end_to_end_writes_the_field_and_summary_and_resumes(capsys, tmp_path,
                                                                          monkeypatch):
    from fbsim.experiments.search.equilibrium import team as equilibrium

    monkeypatch.setattr(equilibrium, "LEAKAGE_GAMES", 60)
    out = tmp_path / "eq"
    code, stdout, err = run(capsys, "equilibrium", "--players", "3", "--out", out, "--json",
                            *SMALL)
    assert code == 0, err
    printed = json.loads(stdout)
    saved = json.loads((out / "summary.json").read_text())
    assert printed == saved
    s = saved["players"]["3"]
    assert set(s["agendas"]) == {"steward", "opportunist", "accelerationist"}
    for a in s["agendas"].values():
        assert set(a) >= {"win_rate", "ci", "fair", "deviation_gain", "gain_ci"}
        assert a["ci"][0] <= a["win_rate"] <= a["ci"][1]
        assert a["gain_ci"][0] <= a["deviation_gain"] <= a["gain_ci"][1]
    assert sum(a["fair"] for a in s["agendas"].values()) == pytest.approx(1.0)
    assert 1 <= s["iterations"] <= 2 and s["games"] > 0
    assert s["field_iteration"] in s["audited"] or len(s["audited"]) == 2  # audits: 2
    for key in ("collapse", "everyone_loses"):
        assert 0 <= s[key]["ci"][0] <= s[key]["rate"] <= s[key]["ci"][1] <= 1
    acc = s["accusation_accuracy"]
    assert acc["rate"] is None if acc["cornered"] == 0 else (
        acc["ci"][0] <= acc["rate"] <= acc["ci"][1])
    assert set(s["leakage"]) == {"steward", "opportunist", "accelerationist"}
    for v in s["leakage"].values():
        assert 1 <= len(v["by_round"]) <= 8
        assert all(0 <= lo <= r <= hi <= 1 and 0 < c <= 1 for r, lo, hi, c in v["by_round"])
    md = (out / "summary.md").read_text()
    assert "| 3 | steward |" in md and "| 3 | accelerationist |" in md
    # the field file is a lineup file that simulate plays
    field = lineup_from_file(out / "p3.toml")
    assert {e.bot for e in field.by_agenda.values()} == {"field"}
    code, stdout, err = run(capsys, "simulate", "--lineup", out / "p3.toml", "--players", "3",
                            "--games", "500", "--json")
    assert code == 0, err
    # a second run resumes the finished search: nothing is played again
    state = (out / "p3" / "state.json").read_text()
    code, stdout, err = run(capsys, "equilibrium", "--players", "3", "--out", out, "--json",
                            *SMALL)
    assert code == 0, err
    assert json.loads(stdout) == printed
    assert (out / "p3" / "state.json").read_text() == state
    # other settings in the same folder: a one-line error
    code, _, err = run(capsys, "equilibrium", "--players", "3", "--out", out, *SMALL,
                       "--seed", "5")
    assert code == 2
    assert "another --out" in err and err.count("\n") == 1


def test_equilibrium_rejects_bad_input(capsys, tmp_path):
    for args, message in ((["--players", "7"], "--players: table sizes are 3 to 6"),
                          (["--cell-games", "10"], "--cell-games: at least 100 games"),
                          (["--confirm-games", "lots"], "--confirm-games"),
                          (["--iterations", "100"], "--iterations: 1 to 99, got 100"),
                          (["--generations", "0"], "--generations: 1 to 99, got 0"),
                          (["--starts", "5"], "--starts: 1 to 4, got 5")):
        code, _, err = run(capsys, "equilibrium", "--out", tmp_path / "x", "--draw", "agenda",
                           *args)
        assert code == 2
        assert message in err and err.count("\n") == 1
        assert not (tmp_path / "x").exists()


# ------------------------------------------------------------------ Agenda leakage


def test_leakage_is_chance_when_every_seat_plays_alike():
    """Every seat plays the same bot whatever its Agenda: public play says nothing, so the
    observer names each Agenda at about its share of the seats."""
    from fbsim.experiments.metrics.leakage import leakage

    alike = Lineup({a: Entry.make("hoarder") for a in ("steward", "opportunist",
                                                        "accelerationist")})
    df = leakage(load_rules(players=4), alike, seed=2, games=600)
    last = df[df["round"] == 3]
    for r in last.itertuples():
        assert r.ci_low - 0.03 <= r.chance <= r.ci_high + 0.03, r


def test_leakage_names_an_open_burner():
    """An Accelerationist that burns six open Agents a round, among seats that never burn,
    is named in every game it is dealt (at 4 players: 14 games of 15)."""
    from fbsim.experiments.metrics.leakage import leakage

    lu = Lineup({"steward": Entry.make("steward", {"max_burn": 0}),
                 "opportunist": Entry.make("hoarder"),
                 "accelerationist": Entry.make("fog-grabber",
                                               {"burns": 6, "masks_per_round": 0})})
    df = leakage(load_rules(players=4), lu, seed=2, games=300)
    r1 = df[(df["round"] == 1) & (df["agenda"] == "accelerationist")].iloc[0]
    assert r1.rate == 1.0
    assert 250 <= r1.games < 300  # the games with an Accelerationist dealt
    # chance: E[Accelerationists | at least one] / 4 = (8/14 x 1 + 6/14 x 2) / 4 (deck 2/2/2)
    assert r1.chance == pytest.approx(20 / 56, abs=0.03)


def test_players_in_a_lineup_path_stands_for_the_table_size(tmp_path, capsys):
    """A field per table size: "{players}" in a lineup file's path, in simulate, sweeps and
    experiments."""
    for n, aim in ((3, 480), (4, 520)):
        (tmp_path / f"p{n}.toml").write_text(lineup_to_toml(Lineup(
            {"steward": Entry.make("planner", {"aim": aim})})))
    from fbsim.lineup import parse_lineup

    pattern = str(tmp_path / "p{players}.toml")
    assert parse_lineup(pattern, players=3).by_agenda["steward"].as_dict()["aim"] == 480
    assert parse_lineup(pattern, players=4).by_agenda["steward"].as_dict()["aim"] == 520
    code, out, err = run(capsys, "experiment", "masks", "--field", pattern, "--games", "200")
    assert code == 2 and "another --results" in err
    code, out, err = run(capsys, "simulate", "--lineup", pattern, "--players", "4", "--games",
                         "300", "--json")
    assert code == 0, err
    assert "planner:aim=520" in json.dumps(json.loads(out))


@pytest.mark.slow
def test_an_extended_search_equals_one_run_of_as_many_iterations(tmp_path, monkeypatch):
    """Stopping a search after one iteration and resuming it for a second gives the state of
    a search run for two iterations at once (populations, payoff table, iterations, games)."""
    from fbsim.experiments.search.equilibrium import team as eq

    monkeypatch.setattr(eq, "LEAKAGE_GAMES", 40)
    # no audits: a run that stops early audits the field it would answer with then
    small = dict(cell_games=300, generations=1, population=3, search_games=200,
                 confirm_games=800, audits=0)
    eq.run_equilibrium([3], tmp_path / "a", budget=eq.Budget(iterations=1, **small))
    eq.run_equilibrium([3], tmp_path / "a", budget=eq.Budget(iterations=2, **small))
    eq.run_equilibrium([3], tmp_path / "b", budget=eq.Budget(iterations=2, **small))
    a = json.loads((tmp_path / "a" / "p3" / "state.json").read_text())
    b = json.loads((tmp_path / "b" / "p3" / "state.json").read_text())
    assert len(b["iterations"]) == 2
    for key in ("populations", "cells", "iterations", "games", "extended", "measures"):
        assert a[key] == b[key], key
    assert (tmp_path / "a" / "p3.toml").read_text() == (tmp_path / "b" / "p3.toml").read_text()


def test_an_unconverged_search_answers_with_its_least_exploitable_field(tmp_path):
    from fbsim.experiments.search.equilibrium import team as eq

    s = eq.Search(3, tmp_path, 0, eq.Budget(iterations=3), None, {})
    gains = [[0.10, 0.02, 0.0], [0.04, 0.05, 0.01], [0.2, 0.0, 0.0]]
    s.state["iterations"] = [
        {"agendas": {a: {"gain_ci": [g - 0.01, g], "win_rate": w}
                     for a, g, w in zip(eq.AGENDAS, row, (0.1 * k, 0.5, 0.4), strict=True)}}
        for k, row in enumerate(gains)]
    assert not s.converged()  # gains above 3 points
    assert s.chosen() == 1  # its largest gain (5 points) is the smallest
    assert not s.audited()  # the chosen field is audited before the search answers


def test_an_audit_that_finds_a_larger_gain_moves_the_choice(tmp_path):
    """A field's deviation gain is the largest any search confirmed against it: an audit
    that finds more than the iteration's own search replaces its figure and moves the
    choice to the next least exploitable field."""
    from fbsim.experiments.search.equilibrium import team as eq

    s = eq.Search(3, tmp_path, 0, eq.Budget(iterations=3, audits=2), None, {})
    gains = [[0.10, 0.02, 0.0], [0.04, 0.05, 0.01], [0.2, 0.0, 0.0]]
    s.state["iterations"] = [
        {"agendas": {a: {"gain_ci": [g - 0.01, g], "deviation_gain": g - 0.005,
                         "changed_games": 10, "win_rate": 0.3, "best_response": {}}
                     for a, g in zip(eq.AGENDAS, row, strict=True)}}
        for row in gains]
    found = {a: {"gain_ci": [0.15, 0.16], "deviation_gain": 0.155, "changed_games": 99,
                 "best_response": {"aim": 517}} if a == "opportunist" else
             {"gain_ci": [-0.01, 0.0], "deviation_gain": -0.005, "changed_games": 1,
              "best_response": {}} for a in eq.AGENDAS}
    s.state["audits"] = {"1": found}
    g = s.gains(1)
    assert g["opportunist"]["found_by"] == "audit" and g["opportunist"]["gain_ci"][1] == 0.16
    assert g["steward"]["found_by"] == "search"  # the audit found less: the search's figure
    assert s.worst_gain(1) == 0.16
    assert s.chosen() == 0  # 10 points now the smallest largest gain
    assert not s.audited()  # ... and iteration 0 is audited next
    s.state["audits"]["0"] = {a: dict(found[a], gain_ci=[-0.02, -0.01]) for a in eq.AGENDAS}
    assert s.audited() and s.chosen() == 0  # audits spent (2)


def test_best_responses_search_from_every_start_and_keep_the_best(tmp_path, monkeypatch):
    """Each start gets its own search (its own seeds), the finalists of all starts are
    compared on a seed no search played, and the best one is returned with its start."""
    from fbsim.experiments.search.equilibrium import team as eq

    s = eq.Search(3, tmp_path, 0, eq.Budget(generations=2, population=3, starts=3), None, {})
    played = []

    def scores(self, name, seed, games, agenda, field, cands):
        played.append((name, seed, games))
        return [-abs(c["aim"] - 517) for c in cands]  # the best aim is 517

    monkeypatch.setattr(eq.Search, "_scores", scores)
    far = {"aim": 700, "tolerance": 0}
    near = eq.exploit_start("opportunist")  # aim 529.5
    best, start = s.best_response("x", 1000, "opportunist", Lineup(),
                                  {"far": far, "again": dict(far), "near": near})
    assert start == "near"  # the duplicate start is not searched again
    assert abs(best["aim"] - 517) < abs(529.5 - 517)
    names = [n for n, _, _ in played]
    assert names[:2] == ["x/start-0/gen-00", "x/start-0/gen-01"]
    assert names[2:4] == ["x/start-2/gen-00", "x/start-2/gen-01"] and names[-1] == "x/select"
    seeds = [sd for _, sd, _ in played]
    assert len(set(seeds)) == len(seeds)  # every sweep on games of its own
    assert played[-1][2] == eq.SELECT_GAMES_FACTOR * s.budget.search_games


def test_meta_solver_started_near_an_equilibrium_stays_there():
    """A coordination game has two pure equilibria; started near one (a population that
    grew by a strategy), the solver keeps it."""
    W = np.zeros((3, 2, 2, 2))
    for i in range(2):
        W[:, i, i, i] = 1.0  # all roles win when they all pick the same strategy
    for first in (0, 1):
        mix, reg = solve(W, start=[np.eye(2)[first][:1] if first == 0 else np.eye(2)[first]
                                   for _ in range(3)])
        assert [int(np.argmax(x)) for x in mix] == [first] * 3
        assert reg.max() < 1e-6


def test_exploit_searches_a_best_response_against_a_field_file(tmp_path, capsys):
    """`fbsim exploit --field` takes a field file per table size; the field keeps its
    mixtures and the searched Agenda plays the tunable bot."""
    full = [Entry.make("planner", x).as_dict() for x in (A, B)]
    field = Lineup({"accelerationist": Entry.make("field", field_params(
        [(0.5, full[0]), (0.5, full[1])]))})
    (tmp_path / "p3.toml").write_text(lineup_to_toml(field))
    code, out, err = run(capsys, "exploit", "--agenda", "steward", "--players", "3",
                         "--field", tmp_path / "p{players}.toml", "--budget", "3200",
                         "--generations", "2", "--population", "4", "--confirm-games", "1000",
                         "--out", tmp_path / "x", "--json", "-q", "--deviate", "team")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["agenda"] == "steward" and doc["players"] == 3
    assert doc["mode"] == "team" and doc["bot"] == "tunable"
    result = json.loads((tmp_path / "x" / "steward-p3" / "result.json").read_text())
    assert result["field_rate"] == doc["field_rate"]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_the_planner_space_contains_the_tunable_bot(data):
    """Any tunable strategy (the space of `fbsim exploit`) is a planner strategy: the same
    games, record for record, so a best response that exploit finds is one the equilibrium
    search can find."""

    from tests.strategies import entry_st, rules_st, seed_st

    rules = data.draw(rules_st(), label="rules")
    entries = {a: data.draw(entry_st("tunable"), label=a) for a in GL.AGENDA_NAMES}
    seed = data.draw(seed_st(), label="seed")
    tun = Lineup(entries)
    pla = Lineup({a: Entry.make("planner", from_tunable(e.as_dict())) for a, e in
                  entries.items()})
    a, b = simulate(rules, tun, seed, 40), simulate(rules, pla, seed, 40)
    for k in a:
        if k != "bot":
            assert np.array_equal(a[k], b[k]), k


def test_exploits_search_is_a_start_in_the_tunable_bots_space(tmp_path, monkeypatch):
    """The "exploit-search" start searches `fbsim exploit`'s own space (the tunable bot's
    parameters, from its preset) and scores each candidate as the planner that plays it."""
    from fbsim.experiments.search.equilibrium import team as eq
    from fbsim.experiments.search.exploit import PRESETS

    s = eq.Search(3, tmp_path, 0, eq.Budget(generations=1, population=3), None, {})
    seen = []

    def scores(self, name, seed, games, agenda, field, cands):
        seen.extend(cands)
        return [float(c["aim"]) for c in cands]

    monkeypatch.setattr(eq.Search, "_scores", scores)
    best, start = s.best_response("x", 0, "steward", Lineup(), {eq.EXPLOIT_SEARCH: None})
    assert start == eq.EXPLOIT_SEARCH
    preset = Entry.make("planner", from_tunable(PRESETS["steward"])).as_dict()
    assert seen[0] == preset  # generation 0's first candidate: the mean, exploit's preset
    for c in seen:  # every candidate a planner strategy of the tunable subspace
        assert c["futile"] == 0 and c["collapse"] == 0 and c["disguise"] == 0
        assert c["buy"] in (0, 4) and c["buy_until"] == GL.MAX_ROUNDS


def test_a_search_resumes_with_more_iterations_audits_or_other_starts(tmp_path):
    """The budget's iterations, audits and starts may change between runs of one search
    (each iteration records its starts); anything else is another search."""
    from fbsim.experiments.search.equilibrium import team as eq

    s = eq.Search(3, tmp_path, 0, eq.Budget(iterations=2, audits=1, starts=3), None, {})
    s.state["iterations"] = [{"mark": 1}]
    s._save()
    again = eq.Search(3, tmp_path, 0, eq.Budget(iterations=9, audits=0, starts=1), None, {})
    assert again.state["iterations"] == [{"mark": 1}]
    with pytest.raises(UsageError, match="another --out"):
        eq.Search(3, tmp_path, 0, eq.Budget(search_games=999), None, {})


def later_strategy_state(s, eq):
    """Two iterations: the first field's own searches found little, but the Opportunist
    strategy added after it beats that field by 20 points in the payoff table."""
    s.state["populations"] = {"steward": [{}], "opportunist": [{}, {"aim": 517}],
                              "accelerationist": [{}]}
    s.state["cells"] = {"0,0,0": [0.3, 0.3, 0.4], "0,1,0": [0.2, 0.5, 0.3]}

    def it(mix, gain):
        return {"mixture": {"steward": [1.0], "opportunist": mix, "accelerationist": [1.0]},
                "population": [1, len(mix), 1],
                "agendas": {a: {"gain_ci": [gain - 0.01, gain], "deviation_gain": gain - 0.005,
                                "changed_games": 10, "win_rate": 0.3, "best_response": {}}
                            for a in eq.AGENDAS}}

    s.state["iterations"] = [it([1.0], 0.01), it([0.5, 0.5], 0.05)]


def test_a_strategy_found_later_that_beats_an_earlier_field_moves_the_choice(tmp_path):
    """A field's exploitability counts what a strategy of the population (found after it)
    gains against it in the payoff table, not only the searches run against it: a field
    whose own search found little is not chosen when a later strategy beats it."""
    from fbsim.experiments.search.equilibrium import team as eq

    s = eq.Search(3, tmp_path, 0, eq.Budget(iterations=2), None, {})
    later_strategy_state(s, eq)
    g0 = s.population_gains(0)
    assert g0["opportunist"]["index"] == 1 and g0["opportunist"]["gain"] == pytest.approx(0.2)
    assert g0["steward"]["gain"] == pytest.approx(0.0)
    assert s.worst_gain(0) == pytest.approx(0.01)  # its own searches found 1 point
    assert s.exploitability(0) == pytest.approx(0.2)
    assert s.exploitability(1) == pytest.approx(0.1)  # 0.5 against the mixture's 0.4
    assert s.chosen() == 1
    s.state["cells"]["0,1,0"] = [0.3, 0.3, 0.4]  # the later strategy no better: back to 0
    assert s.chosen() == 0


def test_an_audit_starts_from_the_populations_strongest_strategy_and_keeps_it(tmp_path,
                                                                              monkeypatch):
    """An audit searches from the population's strongest strategy against the field (by
    the payoff table) among its starts, and keeps every start itself among the finalists:
    a strategy already known to beat the field is never missed."""
    from fbsim.experiments.search.equilibrium import team as eq

    s = eq.Search(3, tmp_path, 0, eq.Budget(iterations=2, generations=1, population=3),
                  None, {})
    later_strategy_state(s, eq)
    asked = []

    def best_response(self, name, seed, agenda, field, starts, keep_starts=False):
        asked.append((agenda, dict(starts), keep_starts))
        return {}, next(iter(starts))

    monkeypatch.setattr(eq.Search, "best_response", best_response)
    monkeypatch.setattr(eq.Search, "deviations", lambda self, *a: {})
    s.audit(0)
    opp = next(st for a, st, _ in asked if a == "opportunist")
    assert list(opp)[0] == "population" and opp["population"] == {"aim": 517}
    assert all(keep for _, _, keep in asked)

    # and with keep_starts the answer is never worse than a start on the select seed: the
    # scores favour the start itself, which the search's box cannot hold (payback 99)
    monkeypatch.undo()
    start = eq.planner({"aim": 517, "payback": 99}).as_dict()

    def scores(self, name, seed, games, agenda, field, cands):
        return [1.0 if c == start else -abs(c["aim"] - 517) for c in cands]

    monkeypatch.setattr(eq.Search, "_scores", scores)
    for keep in (False, True):
        best, label = s.best_response(f"y{keep}", 2000, "opportunist", Lineup(),
                                      {"kept": start}, keep_starts=keep)
        assert label == "kept" and (best == start) == keep


@pytest.mark.slow
def test_a_team_search_killed_mid_sweep_and_resumed_counts_every_game_once(capsys, tmp_path,
                                                                          monkeypatch):
    """Killed after a few points of a sweep were saved, then resumed: the same summary and
    state as the uninterrupted search, the games total included (the resumed sweep's saved
    points count as the games they are)."""
    from fbsim.experiments.run import sweep
    from fbsim.experiments.search.equilibrium import team as equilibrium

    monkeypatch.setattr(equilibrium, "LEAKAGE_GAMES", 60)
    args = ["equilibrium", "--players", "3", "--json", *SMALL]
    code, whole, err = run(capsys, *args, "--out", tmp_path / "a")
    assert code == 0, err
    real, calls = sweep._write_point, {"n": 0}

    def dies(*a, **k):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(sweep, "_write_point", dies)
    code, _, _ = run(capsys, *args, "--out", tmp_path / "b")
    assert code != 0 and calls["n"] == 3
    monkeypatch.setattr(sweep, "_write_point", real)
    code, resumed, err = run(capsys, *args, "--out", tmp_path / "b")
    assert code == 0, err
    assert json.loads(resumed) == json.loads(whole)
    a, b = (json.loads((tmp_path / x / "p3" / "state.json").read_text()) for x in "ab")
    assert a["games"] == b["games"] > 0


def test_r_e1_the_planners_last_aim_steers_the_final_dial_with_every_agent():
    """`last_aim`: in the last round (no world turn follows, R-E1) the planner commits every
    Agent towards that final Dial. A table of planners that otherwise hold still ends far
    hotter with a hot last aim and far cooler with a cool one; games that end before the last
    round are the same games."""
    rules = load_rules(players=4)
    still = {"aim": 529.5, "tolerance": 100, "chips": 0, "mask_burns": 0}

    def dials(**extra):
        lu = Lineup({a: Entry.make("planner", {**still, **extra}) for a in GL.AGENDA_NAMES})
        cols = simulate(rules, lu, seed=3, n_games=400)
        return np.asarray(cols["final_dial"]), np.asarray(cols["rounds_played"])

    off, rounds = dials()
    hot, _ = dials(last_aim=650)
    cool, _ = dials(last_aim=300)
    last = rounds == rules.rounds
    assert last.sum() > 100
    assert np.array_equal(off[~last], hot[~last]) and np.array_equal(off[~last], cool[~last])
    assert (hot[last] >= off[last]).all() and (cool[last] <= off[last]).all()
    assert hot[last].mean() > off[last].mean() + 30 > cool[last].mean() + 60
    below, _ = dials(last_aim=299.9)  # (below 300: off)
    assert np.array_equal(below, off)


def test_the_planners_steer_from_holds_its_steering_and_its_collapse_plan_until_that_round():
    """`steer_from`: before that round the planner neither steers nor pushes its Collapse plan
    (a quiet opening). Planners that cool hard towards a low aim end cooler the sooner they
    start; from round 1 (the default) they play the games they play without it; a Collapse
    plan held back to the last rounds reaches Collapse less often."""
    rules = load_rules(players=4)
    cooling = {"aim": 300, "tolerance": 0, "chips": 3, "futile": 0, "mask_burns": 0}

    def play(strategy):
        lu = Lineup({a: Entry.make("planner", strategy) for a in GL.AGENDA_NAMES})
        return simulate(rules, lu, seed=5, n_games=400)

    def mean_dial(**extra):
        return float(np.mean(play({**cooling, **extra})["final_dial"]))

    base = play(cooling)
    first = play({**cooling, "steer_from": 1})
    assert all(np.array_equal(base[k], first[k]) for k in base)
    d = [mean_dial(steer_from=k) for k in (1, 4, 8)]
    still = mean_dial(chips=0)
    assert d[0] < d[1] < d[2] < still
    rush = {"aim": 700, "chips": 0, "collapse": 1, "mask_burns": 0}
    early = np.mean(np.asarray(play(rush)["final_dial"]) >= rules.dial.collapse)
    late = np.mean(np.asarray(play({**rush, "steer_from": 8})["final_dial"]) >= rules.dial.collapse)
    assert early > late + 0.2
