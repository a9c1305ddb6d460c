"""The map of a table size's equilibria (`fbsim equilibrium --map`): cold starts told apart
by outcome, basin shares with intervals, the stopping rule, and resumes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fbsim.cli import main
from fbsim.errors import UsageError
from fbsim.experiments.search import equilibrium as E
from fbsim.experiments.search.equilibrium import basins as B

AGENDAS = ("steward", "opportunist", "accelerationist")


def start(seed, chances, collapse=0.5, converged=True, held=None, half=0.01, fair=1 / 3,
          strategy=None):
    return B.Start(seed, converged, held, dict(zip(AGENDAS, chances, strict=True)),
                   {a: (c - half, c + half) for a, c in zip(AGENDAS, chances, strict=True)},
                   collapse, fair, strategy or {a: [0.5] * 3 for a in AGENDAS})


def test_answers_within_the_distance_are_one_equilibrium_and_farther_ones_another():
    starts = [start(0, (0.10, 0.50, 0.40)), start(1, (0.11, 0.49, 0.41)),
              start(2, (0.30, 0.30, 0.30)), start(3, (0.10, 0.51, 0.40), converged=False)]
    groups = B.group(starts, distance=0.03)
    assert [[m.seed for m in g.members] for g in groups] == [[0, 1], [2]]
    assert B.new_found_at(starts, 0.03) == [0, 2]
    # the Collapse rate tells answers apart too
    assert len(B.group([start(0, (0.1, 0.5, 0.4), 0.2), start(1, (0.1, 0.5, 0.4), 0.9)])) == 2


chances = st.tuples(*(st.floats(0, 1) for _ in AGENDAS))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(chances, st.floats(0, 1), st.booleans()), min_size=1, max_size=20),
       st.floats(0.001, 0.5), st.randoms(use_true_random=False))
def test_every_converged_start_is_in_one_group_near_its_representative(rows, distance, rnd):
    starts = [start(i, c, col, conv) for i, (c, col, conv) in enumerate(rows)]
    groups = B.group(starts, distance)
    members = [m.seed for g in groups for m in g.members]
    assert sorted(members) == [s.seed for s in starts if s.converged]
    for g in groups:
        assert all(B.outcome_distance(g.representative, m) <= distance for m in g.members)
    reps = [g.representative for g in groups]  # (a new group: far from every earlier one)
    assert all(B.outcome_distance(a, b) > distance for i, a in enumerate(reps)
               for b in reps[i + 1:])
    shuffled = list(starts)
    rnd.shuffle(shuffled)  # (grouped in seed order, whatever order they come in)
    assert [[m.seed for m in g.members] for g in B.group(shuffled, distance)] == \
        [[m.seed for m in g.members] for g in groups]
    m = B.map_summary(starts, 1, 99, 1, distance)
    shares = sum(e["basin_share"] for e in m["equilibria"]) + m["map"]["unsettled"]["share"]
    assert shares == pytest.approx(1.0)
    for e in m["equilibria"]:
        assert e["basin_ci"][0] <= e["basin_share"] <= e["basin_ci"][1]
    assert [e["starts"] for e in m["equilibria"]] == sorted(
        (e["starts"] for e in m["equilibria"]), reverse=True)


def test_the_map_stops_after_the_least_starts_once_the_last_ones_found_nothing_new():
    same = [start(s, (0.1, 0.5, 0.4)) for s in range(6)]
    assert B.stop_reason(same[:3], least=4, most=10, new_within=2) is None  # too few
    assert "no new equilibrium in the last 2 of 4" in B.stop_reason(same[:4], 4, 10, 2)
    # a new equilibrium among the last ones: go on, up to the most
    late = same[:3] + [start(3, (0.3, 0.3, 0.3))]
    assert B.stop_reason(late, 4, 10, 2) is None
    assert "the most starts asked (4)" in B.stop_reason(late, 4, 4, 2)
    assert "no new" in B.stop_reason(late + [start(4, (0.3, 0.3, 0.3)),
                                             start(5, (0.1, 0.5, 0.4))], 4, 10, 2)


def test_a_table_size_is_fair_only_when_every_weighty_equilibrium_is():
    fair = start(0, (1 / 3, 1 / 3, 1 / 3), half=0.02)
    assert B.is_fair(fair)
    assert not B.is_fair(start(1, (1 / 3, 1 / 3, 0.37), half=0.02))  # interval past 5 points
    assert B.map_summary([fair, start(1, (1 / 3,) * 3, half=0.02)], 1, 9, 1)["map"]["fair"]
    unfair = B.map_summary([fair, start(1, (0.1, 0.5, 0.4))], 1, 9, 1)
    assert [e["fair"] for e in unfair["equilibria"]] == [True, False]
    assert not unfair["map"]["fair"]


def test_strategies_read_apart_where_outcomes_agree():
    a = start(0, (0.1, 0.5, 0.4), strategy={x: [0.0, 0.5, 1.0] for x in AGENDAS})
    b = start(1, (0.1, 0.5, 0.4), strategy={x: [0.0, 0.9, 1.0] for x in AGENDAS})
    assert B.strategy_distance(a, b) == pytest.approx(0.4)
    (e,) = B.map_summary([a, b], 1, 9, 1)["equilibria"]
    assert e["strategy_spread"] == pytest.approx(0.4) and e["outcome_spread"] == 0


def test_a_mean_strategy_weighs_the_mixture_and_scales_each_parameter():
    from fbsim.policies.field import field_params
    from fbsim.policies.planner import PARAMS

    base = {p.name: p.default for p in PARAMS}
    lo = {**base, "aim": 300.0}
    hi = {**base, "aim": 800.0}
    v = B.mean_strategy(field_params([(1.0, lo), (3.0, hi)]))
    assert v[[p.name for p in B.STRATEGY_PARAMS].index("aim")] == pytest.approx(0.75)
    assert all(0 <= x <= 1 for x in v)


@pytest.mark.parametrize("args, what", [
    (dict(least=1, most=4), "--map: at least 2"),
    (dict(least=4, most=3), "--map-most"),
    (dict(least=4, most=8, new_within=4), "--map-new-within"),
    (dict(least=4, most=8, new_within=2, distance=0.0), "--map-distance"),
])
def test_bad_map_options_are_refused(args, what):
    with pytest.raises(UsageError, match=what):
        B.check_map(**args)


def run(capsys, *args):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


SMALL = ["--meta-games", "100", "--meta-steps", "1", "--generations", "1", "--population",
         "2", "--screen-games", "100", "--search-games", "100", "--select-games", "100",
         "--starts", "1", "--audit-starts", "1", "--confirm-games", "200", "--audit-games",
         "200", "--audits", "1", "--iterations", "1", "--searcher-games", "0", "-q"]


@pytest.mark.parametrize("flags, what", [
    (["--map-most", "4"], "--map-most: only with --map"),
    (["--map", "2", "--from", "results/equilibrium"], "not with --from"),
    (["--map", "2", "--draw", "agenda"], "only with --draw seat"),
    (["--map", "4", "--map-most", "3"], "--map-most: at least --map"),
    (["--map", "2", "--distill", "1", "--searcher-games", "100"], "--distill: not with --map"),
])
def test_map_flags_that_cannot_work_are_one_line_errors_and_write_nothing(capsys, tmp_path,
                                                                          flags, what):
    out = tmp_path / "map"
    code, _, err = run(capsys, "equilibrium", "--players", "3", "--out", out, *flags, "-q")
    assert code == 2 and what in err and err.count("\n") == 1, err
    assert not out.exists()


@pytest.mark.slow
def test_the_map_writes_each_start_and_its_basins_and_resumes_to_the_same_bytes(
        capsys, tmp_path, monkeypatch):
    """Two cold starts (a tolerance every answer meets: each converged), grouped as one at a
    wide distance and apart at none; killed after its first start and run again, the same
    bytes as the map run at once."""
    whole = tmp_path / "whole"
    code, stdout, err = run(capsys, "equilibrium", "--players", "3", "--out", whole, "--map",
                            "2", "--map-distance", "100", "--tolerance", "100", "--json",
                            *SMALL)
    assert code == 0, err
    s = json.loads(stdout)["players"]["3"]
    assert s == json.loads((whole / "summary.json").read_text())["players"]["3"]
    m = s["map"]
    assert m["starts"] == 2 and [x["seed"] for x in m["starts_played"]] == [0, 1]
    assert "no new equilibrium in the last 1 of 2" in m["stopped"]
    (e,) = s["equilibria"]
    assert e["basin_share"] == 1.0 and e["seeds"] == [0, 1] and e["representative"] == 0
    for seed in (0, 1):
        folder = B.start_folder(whole, 3, seed)
        start_doc = json.loads((folder / "summary.json").read_text())["players"]["3"]
        assert start_doc["converged"]
        assert (folder / "p3" / "state.json").is_file()
    assert (whole / "p3.toml").read_bytes() == (B.start_folder(whole, 3, 0) /
                                                  "p3.toml").read_bytes()
    assert "the map of equilibria (2 cold starts)" in (whole / "summary.md").read_text()
    # at no distance the two answers (other games) are two equilibria of one start each
    apart = B.map_summary([B.start_of(k, *solved(tmp_path, k)) for k in (0, 1)], 2, 6, 2, 1e-9)
    assert [x["starts"] for x in apart["equilibria"]] == [1, 1]
    # killed after the first start, then resumed: the same bytes
    cut = tmp_path / "cut"
    real = E.solve_size
    calls = {"n": 0}

    def dies(*a, **kw):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*a, **kw)

    monkeypatch.setattr(E, "solve_size", dies)
    code, _, err = run(capsys, "equilibrium", "--players", "3", "--out", cut, "--map", "2",
                       "--map-distance", "100", "--tolerance", "100", *SMALL)
    assert code != 0 and "interrupted" in err and calls["n"] == 2
    assert (cut / "summary.json").is_file() and not B.start_folder(cut, 3, 1).exists()
    monkeypatch.setattr(E, "solve_size", real)
    code, _, err = run(capsys, "equilibrium", "--players", "3", "--out", cut, "--map", "2",
                       "--map-distance", "100", "--tolerance", "100", *SMALL)
    assert code == 0, err
    files = sorted(p.relative_to(whole) for p in whole.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(cut) for p in cut.rglob("*") if p.is_file())
    for f in files:
        assert (whole / f).read_bytes() == (cut / f).read_bytes(), f


def solved(tmp_path, seed):
    """A start's finished search and summary, read back from the map run above."""
    from fbsim.experiments.search.equilibrium import summary
    from fbsim.experiments.search.equilibrium.trainer import Budget, SeatSearch

    b = Budget(meta_games=100, meta_steps=1, generations=1, population=2, screen_games=100,
               search_games=100, select_games=100, confirm_games=200, audit_games=200,
               audits=1, iterations=1, starts=1, audit_starts=1, tolerance=1.0)
    s = SeatSearch(3, B.start_folder(tmp_path / "whole", 3, seed), seed, b, None, {})
    return s, summary.summary(s)



def test_a_map_and_a_single_search_never_write_into_each_others_folder(capsys, tmp_path):
    """A map's folder refused to a single search and the other way round, and a file in the
    place of the starts' folder: one line, nothing changed."""
    one = tmp_path / "one"
    (one / "p3").mkdir(parents=True)  # (a single search's folder)
    code, _, err = run(capsys, "equilibrium", "--players", "3", "--out", one, "--map", "2",
                       *SMALL)
    assert code == 2 and "holds a single search at 3 players" in err and err.count("\n") == 1
    assert sorted(p.name for p in one.iterdir()) == ["p3"]
    mapped = tmp_path / "mapped"
    mapped.mkdir()
    entry = {k: 0 for k in E.PUBLISHED_ENTRY}
    doc = {"players": {"3": {**entry, "map": {}}}}
    (mapped / "summary.json").write_text(json.dumps(doc))
    before = (mapped / "summary.json").read_bytes()
    code, _, err = run(capsys, "equilibrium", "--players", "3", "--out", mapped, *SMALL)
    assert code == 2 and "holds a map of equilibria at 3 players" in err, err
    assert (mapped / "summary.json").read_bytes() == before
    assert sorted(p.name for p in mapped.iterdir()) == ["summary.json"]
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "starts").write_text("mine")
    code, _, err = run(capsys, "equilibrium", "--players", "3", "--out", blocked, "--map",
                       "2", *SMALL)
    assert code == 2 and "starts: a file is in the place of a folder" in err, err
    assert (blocked / "starts").read_text() == "mine"
    assert sorted(p.name for p in blocked.iterdir()) == ["starts"]


def test_a_start_blocked_by_a_file_is_refused_before_any_start_runs(capsys, tmp_path):
    """A file in the place of a later start's folder: refused before the first start is
    played, nothing written (each start's folder was checked only when its turn came)."""
    out = tmp_path / "map"
    B.start_folder(out, 3, 1).parent.mkdir(parents=True)
    B.start_folder(out, 3, 1).write_text("mine")
    code, _, err = run(capsys, "equilibrium", "--players", "3", "--out", out, "--map", "2",
                       *SMALL)
    assert code == 2 and "s1: a file is in the place of a folder" in err, err
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == [
        "starts", "starts/p3", "starts/p3/s1"]


def test_a_damaged_start_of_a_finished_map_is_refused_before_its_summary_is_rewritten(
        capsys, tmp_path):
    out = tmp_path / "map"
    code, _, err = run(capsys, "equilibrium", "--players", "3", "--out", out, "--map", "2",
                       "--map-distance", "100", "--tolerance", "100", *SMALL)
    assert code == 0, err
    state = B.start_folder(out, 3, 1) / "p3" / "state.json"
    doc = json.loads(state.read_text())
    doc["games"] = -5
    state.write_text(json.dumps(doc))
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    code, _, err = run(capsys, "equilibrium", "--players", "3", "--out", out, "--map", "2",
                       "--map-distance", "100", "--tolerance", "100", *SMALL)
    assert code == 2 and f"{state}: games" in err and err.count("\n") == 1, err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_summary_entry_summary_md_cannot_be_written_of_is_refused_before_any_game(
        capsys, tmp_path):
    """Another table size's entry of OUT/summary.json with every key but no Agendas: the
    search would run, then fail writing summary.md; refused first, nothing changed."""
    out = tmp_path / "eq"
    out.mkdir()
    entry = {k: 0 for k in E.PUBLISHED_ENTRY}
    (out / "summary.json").write_text(json.dumps(
        {"players": {"4": {**entry, "draw": "seat", "agendas": {}}}}))
    before = (out / "summary.json").read_bytes()
    code, _, err = run(capsys, "equilibrium", "--players", "3", "--out", out, *SMALL)
    assert code == 2 and "summary.json: players.4: not a table size's summary" in err, err
    assert (out / "summary.json").read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["summary.json"]
