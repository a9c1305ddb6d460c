"""The game as played, one seat at a time: fields drawn per seat, a player's chance by the
Agenda dealt, single-seat and team deviations, the single-seat equilibrium search (its
meta-solver, seeds, state, resuming, summary) and `fbsim exploit --deviate seat`."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fbsim.cli import main
from fbsim.errors import UsageError
from fbsim.experiments.metrics.definitions import search_metrics
from fbsim.experiments.run.runner import Arm, play
from fbsim.experiments.search.deviation import TEAM, Deviant, evaluate
from fbsim.experiments.search.equilibrium import metasolver
from fbsim.experiments.search.equilibrium.seeds import seed_of
from fbsim.game import layout as GL
from fbsim.lineup import Entry, Lineup, lineup_from_file, lineup_from_toml, lineup_to_toml
from fbsim.policies import registry
from fbsim.policies.field import (
    COMPONENTS,
    DRAW_AGENDA,
    DRAW_SEAT,
    P_DRAW,
    WIDTH,
    component,
    field_params,
)
from fbsim.rules import load_rules

A = {"aim": 470, "chips": 6, "buy": 1}
B = {"aim": 600, "chips": 0, "buy": 3, "greed": 1}


def run(capsys, *args):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def two(draw: str, w: float = 0.5) -> Entry:
    full = [Entry.make("planner", x).as_dict() for x in (A, B)]
    return Entry.make("field", field_params([(w, full[0]), (1 - w, full[1])], draw))


# ------------------------------------------------------------------ the field's draw


def test_the_draw_parameter_is_where_the_field_reads_it():
    """P_DRAW is the `draw` parameter's place in the field bot's vector (declared order)."""
    names = [p.name for p in registry()["field"].params]
    assert names.index("draw") == P_DRAW
    assert registry()["field"].defaults()["draw"] == DRAW_SEAT


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**40), game=st.integers(0, 2**30), agenda=st.integers(0, 2))
def test_r_i3_a_draw_per_agenda_is_shared_by_its_seats_and_one_per_seat_is_its_own(seed, game,
                                                                                    agenda):
    """R-I3: the draw reads only the seat, its own Agenda and the game's coordinates. Per
    Agenda every seat of the Agenda plays one component; per seat each draws its own."""
    by_agenda, by_seat = two("agenda").vector(), two("seat").vector()
    args = (np.int64(seed), np.int64(game), np.int64(agenda))
    shared = {component(by_agenda, *args, np.int64(s)) for s in range(6)}
    assert len(shared) == 1
    own = {component(by_seat, *args, np.int64(s)) for s in range(6)}
    assert own <= {COMPONENTS, COMPONENTS + WIDTH}  # component 0 or 1, whatever the seat


def test_seats_draw_independently_with_the_weights():
    """Per seat: over many games each seat plays the first component at its weight, and two
    seats of one Agenda agree about as often as independent draws do (w^2 + (1-w)^2)."""
    w = 0.3
    P = two("seat", w).vector()
    first = COMPONENTS  # the first component's offset (after the weights)
    picks = np.array([[component(P, np.int64(5), np.int64(g), np.int64(GL.STEWARD),
                                 np.int64(s)) == first for s in range(2)] for g in range(4000)])
    share = picks.mean(axis=0)
    assert np.all(np.abs(share - w) < 4 * np.sqrt(w * (1 - w) / 4000))
    agree = (picks[:, 0] == picks[:, 1]).mean()
    assert abs(agree - (w * w + (1 - w) ** 2)) < 0.04
    P = two("agenda", w).vector()
    picks = np.array([[component(P, np.int64(5), np.int64(g), np.int64(GL.STEWARD),
                                 np.int64(s)) for s in range(2)] for g in range(500)])
    assert (picks[:, 0] == picks[:, 1]).all()


def test_a_field_drawn_per_agenda_plays_todays_games():
    """A draw per Agenda keeps the draw the fields have always made (seat left out of the
    coordinates): a per-seat field's seat draws differ from it."""
    P = two("agenda").vector()
    assert P[P_DRAW] == DRAW_AGENDA
    assert two("seat").vector()[P_DRAW] == DRAW_SEAT


# ------------------------------------------------------------------ lineup files


def test_lineup_files_say_how_their_mixtures_are_drawn(tmp_path):
    mix = {"agendas": {"steward": {"mixture": [{"weight": 1, "aim": 500}]}}}
    assert lineup_from_toml(mix).by_agenda["steward"].as_dict()["draw"] == DRAW_AGENDA
    for how, code in (("seat", DRAW_SEAT), ("agenda", DRAW_AGENDA)):
        lu = lineup_from_toml({"draw": how, **mix})
        assert lu.by_agenda["steward"].as_dict()["draw"] == code
        text = lineup_to_toml(lu)
        assert f'draw = "{how}"' in text
        path = tmp_path / f"{how}.toml"
        path.write_text(text)
        assert lineup_from_file(path) == lu


@pytest.mark.parametrize("doc, message", [
    ({"draw": "seats", "agendas": {"steward": {"mixture": [{"weight": 1}]}}},
     'draw: expected one of "agenda", "seat", got \'seats\''),
    ({"draw": 1, "agendas": {"steward": {"mixture": [{"weight": 1}]}}}, "draw: expected"),
    ({"draw": "seat"}, "draw: this lineup has no mixture to draw"),
])
def test_a_bad_draw_is_a_one_line_error(doc, message):
    with pytest.raises(UsageError, match="lineup") as e:
        lineup_from_toml(doc)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_the_committed_team_fields_read_as_drawn_per_agenda():
    for n in (3, 4, 5, 6):
        lu = lineup_from_file(f"results/equilibrium-team/p{n}.toml")
        assert {e.as_dict()["draw"] for e in lu.by_agenda.values()} == {DRAW_AGENDA}


# ------------------------------------------------------------------ a player's chance


def _records(lineup: Lineup, players: int, games: int, seed: int = 3):
    rules = load_rules(players=players)
    rec = play(Arm(rules, lineup), seed, 0, games)
    return rules, {k: np.array(v) for k, v in rec.items()}


@pytest.mark.parametrize("players", [3, 5])
def test_r_e3_r_e4_a_players_chance_counts_wins_over_the_seats_dealt(players):
    """player_win_{a} = wins by a's holders / seats dealt a; by the deal; a seat's own; all
    from the records directly."""
    from fbsim.experiments.metrics.tally import Tally

    lineup = Lineup()
    rules, rec = _records(lineup, players, 3000)
    t = Tally(players, rules.rounds, metric_list=search_metrics(players))
    t.add(t.measure(play(Arm(rules, lineup), 3, 0, 3000), rules, lineup))
    agenda, winner = rec["agenda"], rec["winner"]
    won = np.zeros_like(agenda, dtype=bool)
    rows = np.flatnonzero(winner >= 0)
    won[rows, winner[rows]] = True
    for i, a in enumerate(GL.AGENDA_NAMES):
        held = agenda == i
        assert t.total(f"player_win_{a}") == (won & held).sum()
        assert t.denominator(f"player_win_{a}") == held.sum()
        k = held.sum(axis=1)
        for n in range(1, players + 1):
            games = k == n
            assert t.denominator(f"player_win_{a}_k{n}") == n * games.sum()
            assert t.total(f"player_win_{a}_k{n}") == (won & held)[games].sum()
        for s in range(players):
            assert t.denominator(f"seat_win_{s}_{a}") == held[:, s].sum()
            assert t.total(f"seat_win_{s}_{a}") == (won[:, s] & held[:, s]).sum()


# ------------------------------------------------------------------ deviations


def test_a_seat_playing_the_field_itself_gains_exactly_nothing():
    """The deviant is the field's own entry (drawn per seat): every game is the same game,
    no pair changes, gain 0; and so for a team deviant playing the field's own entry."""
    field = Lineup({"steward": two("seat"), "accelerationist": Entry.make("planner", B)})
    rules = load_rules(players=4)
    ev = evaluate(rules, field, [Deviant("steward", field.by_agenda["steward"]),
                                 Deviant("accelerationist", field.by_agenda["accelerationist"],
                                         TEAM)], 11, 300)
    for g in ev.gains:
        assert g.gain == 0 and g.changed == 0 and g.rate == g.base
        assert g.ci[0] < 0 < g.ci[1]
    assert ev.gains[0].n == pytest.approx(4 * 300 * 2 / 6, rel=0.3)  # seat-games dealt
    assert ev.gains[1].n == 4 * 300
    assert ev.games == 4 * 300 * 3  # the field and both deviants, on every seat's range


def test_a_seat_deviation_is_paired_game_by_game_on_each_seats_range():
    """The gain's counts (b, c, n) are those of the records: on seat s's range [s G, (s+1) G)
    seat s plays the deviant; a pair is a game where it holds the Agenda."""
    players, G, seed = 4, 250, 9
    rules = load_rules(players=players)
    field = Lineup()
    strat = Entry.make("planner", A)
    ev = evaluate(rules, field, [Deviant("steward", strat)], seed, G)
    b = c = n = 0
    for s in range(players):
        base = play(Arm(rules, field), seed, s * G, G)
        base = {k: np.array(v) for k, v in base.items()}
        dev = play(Arm(rules, Lineup(field.by_agenda, {s: strat})), seed, s * G, G)
        dev = {k: np.array(v) for k, v in dev.items()}
        assert np.array_equal(base["agenda"], dev["agenda"])  # the same deal
        held = base["agenda"][:, s] == GL.STEWARD
        w0, w1 = base["winner"] == s, dev["winner"] == s
        b += (held & w1 & ~w0).sum()
        c += (held & w0 & ~w1).sum()
        n += held.sum()
    g = ev.gains[0]
    assert (g.n, g.changed) == (n, b + c)
    assert g.gain == pytest.approx((b - c) / n)
    assert g.ci[0] <= g.gain <= g.ci[1]


# ------------------------------------------------------------------ the meta-solver, seeds


def test_smooth_fictitious_play_moves_towards_the_better_strategy_and_averages():
    x = np.array([0.5, 0.5, 0.0])
    u = np.array([0.2, 0.3, 0.1])
    y = metasolver.step(x, u, 100.0, 0)
    assert y.sum() == pytest.approx(1) and y[1] > 0.5 > y[0]
    assert y[2] > 0  # a strategy left out gets its share back by its payoff
    z = metasolver.step(x, u, 100.0, 0, memory=4)
    assert 0.5 < z[1] < y[1]  # more memory, smaller steps


@given(st.lists(st.floats(0.001, 1.0), min_size=1, max_size=20))
def test_a_pruned_mixture_is_a_field(ws):
    x = metasolver.prune(np.array(ws))
    assert x.sum() == pytest.approx(1.0)
    assert (x > 0).sum() <= metasolver.COMPONENTS
    assert x[np.argmax(ws)] > 0


def test_matching_pennies_averages_to_its_equilibrium():
    """Role 0 wants to match, role 1 to mismatch: smooth fictitious play's average comes to
    (1/2, 1/2) where best responses cycle."""
    x, y = np.array([0.9, 0.1]), np.array([0.2, 0.8])
    for k in range(400):
        ux = np.array([y[0] - y[1], y[1] - y[0]])
        uy = -np.array([x[0] - x[1], x[1] - x[0]])
        x, y = metasolver.step(x, ux, 20.0, k), metasolver.step(y, uy, 20.0, k)
    assert np.allclose(x, 0.5, atol=0.08) and np.allclose(y, 0.5, atol=0.08)


def test_every_part_of_a_search_has_its_own_seed():
    seen = {seed_of(0, n, s, i, a, k, g) for n in (3, 4) for s in ("meta", "search", "confirm")
            for i in range(5) for a in range(4) for k in range(3) for g in range(3)}
    assert len(seen) == 2 * 3 * 5 * 4 * 3 * 3
    assert all(0 <= x < 2**62 for x in seen)
    assert seed_of(1, 3, "meta") == seed_of(1, 3, "meta")
    with pytest.raises(ValueError):
        seed_of(0, 3, "nope")


# ------------------------------------------------------------------ the search end to end

SMALL = ["--meta-games", "150", "--meta-steps", "1", "--generations", "1", "--population",
         "3", "--screen-games", "100", "--search-games", "100", "--select-games", "150",
         "--starts", "1", "--audit-starts", "1", "--confirm-games", "300", "--audit-games",
         "300", "--audits", "1", "--searcher-games", "0", "-q"]


def test_the_single_seat_search_writes_its_field_and_summary_and_resumes(capsys, tmp_path):
    out = tmp_path / "eq"
    code, stdout, err = run(capsys, "equilibrium", "--players", "3", "--out", out, "--json",
                            "--iterations", "2", *SMALL)
    assert code == 0, err
    printed = json.loads(stdout)
    assert printed == json.loads((out / "summary.json").read_text())
    s = printed["players"]["3"]
    assert s["draw"] == "seat" and 1 <= s["iterations"] <= 2 and s["games"] > 0
    assert s["audited"] and s["field_iteration"] < s["iterations"]
    for a in s["agendas"].values():
        assert a["player_win_ci"][0] <= a["player_win_rate"] <= a["player_win_ci"][1]
        assert a["seat_gain_ci"][0] <= a["seat_deviation_gain"] <= a["seat_gain_ci"][1]
        if s["field_iteration"] in s["audited"]:
            assert a["team_gain_ci"][0] <= a["team_deviation_gain"] <= a["team_gain_ci"][1]
        assert a["player_fair"] == pytest.approx((1 - s["everyone_loses"]["rate"]) / 3)
        deal = a["by_deal"]
        assert deal and all(int(k) >= 1 and v["games"] > 0 for k, v in deal.items())
        # a player's chance is the by-deal chances weighted by the seats dealt
        seats = sum(int(k) * v["games"] for k, v in deal.items())
        mean = sum(int(k) * v["games"] * v["player_win_rate"] for k, v in deal.items()) / seats
        assert mean == pytest.approx(a["player_win_rate"])
    field = lineup_from_file(out / "p3.toml")
    assert {e.as_dict()["draw"] for e in field.by_agenda.values()} == {DRAW_SEAT}
    assert 'draw = "seat"' in (out / "p3.toml").read_text()
    assert "| 3 | steward |" in (out / "summary.md").read_text()
    # a finished search resumes without playing anything
    state = (out / "p3" / "state.json").read_text()
    code, stdout2, err = run(capsys, "equilibrium", "--players", "3", "--out", out, "--json",
                             "--iterations", "2", *SMALL)
    assert code == 0, err
    assert json.loads(stdout2) == printed
    assert (out / "p3" / "state.json").read_text() == state
    # resumed with fewer iterations than it ran: its answer stands, and it says so
    assert s["iterations"] == 2  # (seed 0's search ran both: the premise of what follows)
    loud = [x for x in SMALL if x != "-q"]
    code, _, err = run(capsys, "equilibrium", "--players", "3", "--out", out,
                       "--iterations", "1", *loud)
    assert code == 0 and "already ran 2 iterations, more than --iterations 1" in err, err
    assert (out / "p3" / "state.json").read_text() == state
    code, _, err = run(capsys, "equilibrium", "--players", "3", "--out", out, *SMALL,
                       "--seed", "4")
    assert code == 2 and "another --out" in err and err.count("\n") == 1


def test_a_search_stopped_and_resumed_is_the_search_run_at_once(tmp_path, monkeypatch):
    """Killed in the middle of an iteration (after its meta steps and a best response) and
    run again: the same state, games counted once."""
    from fbsim.experiments.search.equilibrium import trainer
    from fbsim.experiments.search.equilibrium.trainer import Budget, SeatSearch

    b = Budget(meta_games=100, meta_steps=2, generations=1, population=2, screen_games=100,
               search_games=100, select_games=100, confirm_games=200, audit_games=200,
               iterations=1, starts=1, audit_starts=1, audits=0)
    whole = SeatSearch(3, tmp_path / "a", 0, b, None, {})
    whole.run()
    calls = {"n": 0}
    real = trainer.best_response

    def dies(*args, **kw):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(trainer, "best_response", dies)
    with pytest.raises(KeyboardInterrupt):
        SeatSearch(3, tmp_path / "b", 0, b, None, {}).run()
    monkeypatch.setattr(trainer, "best_response", real)
    again = SeatSearch(3, tmp_path / "b", 0, b, None, {})
    assert again.state.pending["step"] == 2 and len(again.state.pending["responses"]) == 1
    again.run()
    assert json.loads((tmp_path / "a" / "p3" / "state.json").read_text()) == json.loads(
        (tmp_path / "b" / "p3" / "state.json").read_text())


def test_seat_and_team_options_are_their_own_games(capsys, tmp_path):
    for args, message in ((["--cell-games", "300"], "--cell-games: only with --draw agenda"),
                          (["--draw", "agenda", "--meta-games", "300"],
                           "--meta-games: only with --draw seat"),
                          (["--draw", "both"], "--draw: one of seat, agenda"),
                          (["--meta-games", "10"], "--meta-games: at least 100 games"),
                          (["--meta-steps", "0"], "--meta-steps: 1 to 50")):
        code, _, err = run(capsys, "equilibrium", "--out", tmp_path / "x", *args)
        assert code == 2, err
        assert message in err and err.count("\n") == 1
        assert not (tmp_path / "x").exists()


def test_exploit_searches_one_seats_best_response(capsys, tmp_path):
    field = tmp_path / "f.toml"
    field.write_text(lineup_to_toml(Lineup({"steward": two("seat")})))
    code, stdout, err = run(capsys, "exploit", "--agenda", "steward", "--players", "3",
                            "--field", field, "--budget", "3600", "--generations", "1",
                            "--population", "3", "--confirm-games", "900", "--out",
                            tmp_path / "x", "--json", "-q")
    assert code == 0, err
    r = json.loads(stdout)
    assert r["mode"] == "seat" and r["bot"] == "planner"
    assert r["fair_share"] == pytest.approx(1 / 3)
    assert r["diff_ci_low"] <= r["diff"] <= r["diff_ci_high"]
    assert r["diff"] == pytest.approx(r["best_rate"] - r["field_rate"], abs=1e-9)
    assert (tmp_path / "x" / "steward-p3" / "result.json").exists()
    code, _, err = run(capsys, "exploit", "--agenda", "steward", "--deviate", "all")
    assert code == 2 and "--deviate: one of seat, team" in err
    # a budget too small for one seat's ranges: refused before anything is written
    code, _, err = run(capsys, "exploit", "--agenda", "steward", "--players", "4", "--budget",
                       "20000", "--out", tmp_path / "y")
    assert code == 2 and "per candidate, generation and seat" in err
    assert not (tmp_path / "y").exists()


def test_the_report_shows_a_players_chance_by_the_deal(tmp_path, capsys):
    """The report's section "deal": each Agenda's player chance (fair share 1/players of the
    games somebody wins) and by the deal up to the deck's count, in the page and its table."""
    import pandas as pd

    out = tmp_path / "r.html"
    code, _, err = run(capsys, "report", "--players", "4", "--games", "2000", "--out", out,
                       "--exploit", "none", "-q")
    assert code == 0, err
    df = pd.read_parquet(out.with_suffix(".parquet"))
    deal = df[df["section"] == "deal"].set_index("metric")
    rules = load_rules(players=4)
    most = rules.decks.for_players(4).counts()
    for i, a in enumerate(GL.AGENDA_NAMES):
        r = deal.loc[f"player_win_{a}"]
        loses = df.set_index("metric").loc["everyone_loses", "value"]
        assert r["fair_share"] == pytest.approx((1 - loses) / 4)
        assert r["ci_low"] <= r["value"] <= r["ci_high"]
        assert f"player_win_{a}_k{most[i]}" in deal.index
        assert f"player_win_{a}_k{most[i] + 1}" not in deal.index
    assert "A player&#x27;s chance, by the Agenda dealt" in out.read_text() or \
        "A player's chance, by the Agenda dealt" in out.read_text()


@pytest.mark.slow  # (5-11 s)
def test_a_warm_start_goes_on_from_a_finished_searchs_field(capsys, tmp_path):
    """`--from`: the new search starts with the old one's populations and the mixture of the
    field it answered with, under other rules; a folder with nothing to start from, or a
    team search, is refused before anything is written."""
    from fbsim.experiments.search.equilibrium.state import State
    from fbsim.experiments.search.equilibrium.trainer import warm_start

    old = tmp_path / "old"
    code, _, err = run(capsys, "equilibrium", "--players", "3", "--out", old, "--iterations",
                       "1", *SMALL)
    assert code == 0, err
    pops, mix, _ = warm_start(old, 3)
    new = tmp_path / "new"
    code, _, err = run(capsys, "equilibrium", "--players", "3", "--out", new, "--iterations",
                       "1", "--from", old, "--set", "masks=3", *SMALL)
    assert code == 0, err
    doc = json.loads((new / "p3" / "state.json").read_text())
    state = State.load(new / "p3" / "state.json", doc["config"])
    assert doc["config"]["from"]["folder"] == str(old)
    for a in GL.AGENDA_NAMES:
        assert state.populations[a][:len(pops[a])] == pops[a]  # every old strategy kept
    assert state.iterations[0].population == {a: len(p) for a, p in pops.items()}
    from fbsim.experiments.search.equilibrium.trainer import Budget, SeatSearch

    fresh = SeatSearch(3, tmp_path / "fresh", 0, Budget(), None, {"masks": 3},
                       start_from=old)
    assert fresh.state.mixture == mix and fresh.state.populations == pops
    assert sum(mix["steward"]) == pytest.approx(1.0)
    for args, message in ((["--from", tmp_path / "nothing"], "no finished 3-player search"),
                          (["--from", old, "--draw", "agenda"], "--from: a warm start is for")):
        code, _, err = run(capsys, "equilibrium", "--players", "3", "--out", tmp_path / "x",
                           *args)
        assert code == 2 and message in err and err.count("\n") == 1
        assert not (tmp_path / "x").exists()


def test_the_oracles_whole_planner_space_rounds_what_the_team_search_rounds():
    """The single-seat oracle searches every planner parameter but the table's within its
    declared range (the table is the distillation's, kept as the start has it), and takes the
    same ones as whole numbers as the team search's box does. The team box lacks the two
    parameters added from the searcher's lessons (`last_aim`, `steer_from`: the team game is
    solved in the planner family as it was), of which `steer_from` is whole."""
    from fbsim.experiments.search.equilibrium import oracle, team
    from fbsim.policies.planner import PARAMS, TABLE_NAMES

    searched = [p for p in PARAMS if p.name not in TABLE_NAMES]
    dims = oracle.box(oracle.planner_params({}))
    assert [d.name for d in dims] == [p.name for p in searched]
    assert all((d.lo, d.hi) == (p.lo, p.hi) for d, p in zip(dims, searched, strict=True))
    in_team = {d.name for d in team.DIMS}
    assert {p.name for p in searched} - in_team == {"last_aim", "steer_from"}
    assert {d.name for d in team.DIMS if d.integer} == oracle.INTEGER & in_team
    assert oracle.INTEGER - in_team == {"steer_from"}


def test_the_answer_is_audited_by_the_searcher_and_not_converged_when_it_gains(capsys,
                                                                               tmp_path):
    """The searcher's gains (out of the planner family) stand beside the family's in
    summary.json, summary.md and the field file; a field it beats by more than the
    tolerance is not converged, whatever the family's own audit says."""
    out = tmp_path / "eq"
    small = list(SMALL)
    small[small.index("--searcher-games") + 1] = "40"  # (seat-games per Agenda)
    code, stdout, err = run(capsys, "equilibrium", "--players", "3", "--out", out, "--json",
                            "--iterations", "1", "--searcher-rollouts", "4", *small)
    assert code == 0, err
    s = json.loads(stdout)["players"]["3"]
    audit = s["searcher_audit"]
    assert audit["budgets"] == [4, 16] and audit["seat_games"] == 40
    held = True
    for a in s["agendas"].values():
        lo, hi = a["search_gain_ci"]
        assert lo <= a["search_gain"] <= hi
        assert set(a["search_gain_by_rollouts"]) == {"4", "16"}
        assert a["search_held"] == all(r["ci"][1] <= s["tolerance"]
                                       for r in a["search_gain_by_rollouts"].values())
        held &= a["search_held"]
    assert audit["held"] == held
    if not held:
        assert not s["converged"] and "the searcher" in (out / "p3.toml").read_text()
    assert "the searcher's gain" in (out / "summary.md").read_text()


@pytest.mark.slow  # (5-11 s)
def test_the_searchers_departures_are_distilled_and_the_search_goes_on_from_them(capsys,
                                                                                tmp_path):
    """--distill: where the searcher beats the answer, its departures become table cells of
    copies of the field's components (each copy taking its parent's weight), the search goes
    on from that mixture in a new phase, and the phase's answer is audited again. The record
    is in summary.json; a finished search run again answers the same bytes."""
    out = tmp_path / "eq"
    small = list(SMALL)
    small[small.index("--searcher-games") + 1] = "300"
    args = ["equilibrium", "--players", "3", "--out", out, "--json", "--iterations", "1",
            "--searcher-rollouts", "8", "--distill", "1", *small]
    code, stdout, err = run(capsys, *args)
    assert code == 0, err
    s = json.loads(stdout)["players"]["3"]
    state = json.loads((out / "p3" / "state.json").read_text())
    if s["distillations"]:
        (d,) = s["distillations"]
        assert d["after"] == 1 and d["field_iteration"] == 0
        # (each phase's answer audited; the answer is the one the searcher gains least on)
        phases = state["searched"]
        assert [x["phase"] for x in phases] == [0, 1] and phases[1]["field_iteration"] >= 1
        least = min(reversed(phases), key=lambda x: x["worst"])
        assert s["field_iteration"] == least["field_iteration"]
        assert {a: r["search_gain"] for a, r in s["agendas"].items()} == \
            {a: r["search_gain"] for a, r in least["agendas"].items()}
        changed = sum(len(a["changes"]) for a in d["agendas"].values())
        assert changed > 0, "a distillation that changes nothing is not recorded"
        for a, rec in d["agendas"].items():
            for c in rec["changes"]:  # (the copies joined the population)
                name = f"r{c['round']}_{c['band']}"
                assert any(p[name] == c["code"] for p in state["populations"][a])
                assert c["before"] != c["code"]
            assert abs(sum(state["iterations"][d["after"]]["mixture"][a]) - 1) < 1e-9
        assert "distilled" in (out / "summary.md").read_text()
    else:
        assert s["searcher_audit"]["held"]
    before = [(out / f).read_bytes() for f in ("summary.json", "summary.md", "p3.toml")]
    code, _, err = run(capsys, *args)
    assert code == 0, err
    # (its audits read back from the state, whose keys JSON sorts: the same bytes)
    assert [(out / f).read_bytes() for f in ("summary.json", "summary.md", "p3.toml")] == before


def _damage(doc: dict, how: str) -> str:
    """The state `doc` damaged one way; the key the error must name."""
    if how == "nan weight":
        doc["mixture"]["steward"][0] = float("nan")
        return "mixture.steward[0]"
    if how == "negative weight":
        doc["mixture"]["opportunist"][0] = -0.5
        return "mixture.opportunist[0]"
    if how == "all-zero weights":
        doc["mixture"]["steward"] = [0.0] * len(doc["mixture"]["steward"])
        return "mixture.steward"
    if how == "longer than its population":
        doc["mixture"]["accelerationist"] += [0.1] * 9
        return "mixture.accelerationist"
    if how == "empty population":
        doc["populations"]["steward"] = []
        return "populations.steward"
    if how == "nan planner parameter":
        doc["populations"]["opportunist"][0]["aim"] = float("nan")
        return "populations.opportunist[0]"
    if how == "negative games":
        doc["games"] = -3
        return "games"
    assert how == "an iteration's mixture"
    doc["iterations"][0]["mixture"]["steward"] = "heavy"
    return "iterations[0].mixture.steward"


DAMAGES = ("nan weight", "negative weight", "all-zero weights", "longer than its population",
           "empty population", "nan planner parameter", "negative games",
           "an iteration's mixture")


def test_a_damaged_state_is_refused_in_one_line_naming_the_key_and_left_as_it_was(
        capsys, tmp_path):
    """A hand-edited or damaged OUT/pN/state.json (NaN, negative or all-zero weights, a
    mixture longer than its population, an empty population, a planner parameter out of its
    range, negative games) is refused on resume in one line that names the file, the key and
    the way out, exit 2, the file left as it was; as a `--from` folder too."""
    import shutil

    good = tmp_path / "good"
    args = ["--players", "3", "--iterations", "1", *SMALL]
    assert run(capsys, "equilibrium", "--out", good, *args)[0] == 0
    for how in DAMAGES:
        out = tmp_path / how.replace(" ", "-").replace("'", "")
        shutil.copytree(good, out)
        path = out / "p3" / "state.json"
        doc = json.loads(path.read_text())
        key = _damage(doc, how)
        path.write_text(json.dumps(doc))
        before = path.read_bytes()
        code, _, err = run(capsys, "equilibrium", "--out", out, *args)
        assert code == 2 and err.count("\n") == 1, (how, err)
        assert f"{path}: {key}: " in err and "--force" in err, (how, err)
        assert path.read_bytes() == before
        code, _, err = run(capsys, "equilibrium", "--out", tmp_path / "warm", "--from", out,
                           *args)
        assert code == 2 and f"{key}: " in err and "another folder" in err, (how, err)
        assert not (tmp_path / "warm").exists()
    bad = json.loads((good / "summary.json").read_text())
    bad["players"]["3"]["field_iteration"] = -1
    (good / "summary.json").write_text(json.dumps(bad))
    code, _, err = run(capsys, "equilibrium", "--out", tmp_path / "warm", "--from", good, *args)
    assert code == 2 and "field_iteration: expected an iteration of its search" in err, err


def test_a_full_disk_names_the_file_removes_its_temporary_and_keeps_the_old_state(
        tmp_path, monkeypatch):
    """A state written on a full disk (the write of its temporary fails part way): OSError
    naming the state's file (the command prints it in one line), no temporary left, the
    state before it intact; a killed writer's temporary is removed by the next run."""
    import errno
    import os
    from pathlib import Path

    from fbsim.experiments.search.equilibrium.state import clear_temporaries, write_json

    path = tmp_path / "p3" / "state.json"
    write_json(path, {"games": 1})
    real = Path.write_text

    def full(self, text, *a, **k):
        real(self, text[:5], *a, **k)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(OSError) as e:
        write_json(path, {"games": 2})
    monkeypatch.undo()
    assert e.value.filename == str(path) and e.value.errno == errno.ENOSPC
    assert sorted(p.name for p in path.parent.iterdir()) == ["state.json"]
    assert json.loads(path.read_text()) == {"games": 1}
    dead = 2**22 + 12345  # (no such process)
    while True:
        try:
            os.kill(dead, 0)
            dead += 1
        except ProcessLookupError:
            break
        except PermissionError:
            dead += 1
    (path.parent / f".state.json.tmp{dead}").write_text("{")
    (path.parent / f".state.json.tmp{os.getpid()}").write_text("{")  # (a live writer's)
    clear_temporaries(path.parent)
    assert sorted(p.name for p in path.parent.iterdir()) == [
        f".state.json.tmp{os.getpid()}", "state.json"]
