"""The skill ladder (`fbsim ladder`, `fbsim.experiments.search.ladder`): one seat at four
rungs of skill against a field, each Agenda's chance to win as a player (R-E3, R-E4: won by
one player) and each rung's paired gain over the field's own strategy."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from fbsim.experiments.search.deviation import Deviant, evaluate
from fbsim.experiments.search.equilibrium.seeds import seed_of
from fbsim.experiments.search.ladder import RUNGS, ladder
from fbsim.experiments.search.searcher import Knobs, search_gains
from fbsim.game import layout as L
from fbsim.lineup import Entry, Lineup
from fbsim.rules import load_rules

pytestmark = pytest.mark.slow

SMALL = ["--players", "3", "--field", "steward=steward", "--games", "300", "--seat-games",
         "20", "--rollouts", "2"]


@pytest.fixture(scope="module")
def rungs():
    return ladder(load_rules(players=3), Lineup(), seed=5, games=300, seat_games=20,
                  knobs=Knobs(rollouts=2))


def test_every_agenda_dealt_has_the_four_rungs_in_order(rungs):
    assert [(r.agenda, r.rung) for r in rungs] == [(a, k) for a in L.AGENDA_NAMES
                                                   for k in RUNGS]
    for r in rungs:
        assert r.n > 0 and 0 <= r.ci[0] <= r.rate <= r.ci[1] <= 1
        assert r.gain_ci[0] <= r.gain <= r.gain_ci[1]


def test_each_rung_is_paired_with_the_fields_own_strategy_on_the_same_games(rungs):
    """The random and default-bot rungs are single-seat deviations on the ladder's games; the
    field's rung is the same seats' chance in the field (gain 0); the searcher's rung is its
    audit on the ladder's own seed."""
    rules = load_rules(players=3)
    ev = evaluate(rules, Lineup(), [Deviant("opportunist", Entry.make("random"))],
                  seed_of(5, 3, "ladder"), 300)
    by = {(r.agenda, r.rung): r for r in rungs}
    g = ev.gains[0]
    assert by["opportunist", "random"].rate == g.rate
    assert by["opportunist", "random"].gain == g.gain
    assert by["opportunist", "field"].rate == g.base and by["opportunist", "field"].gain == 0
    # the default bot of the default lineup is the field's strategy: no gain, no change
    assert by["opportunist", "default bot"].rate == g.base
    assert by["opportunist", "default bot"].gain == 0
    s = search_gains(rules, Lineup(), seed_of(5, 3, "ladder-searcher"), seat_games=20,
                     knobs=Knobs(rollouts=2), budgets=(2,), agendas=("steward",))
    assert by["steward", "searcher"].rate == s["steward"][0].rate
    assert by["steward", "searcher"].gain == s["steward"][0].gain


def _run(capsys, *args):
    from fbsim.cli import main

    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_command_writes_the_ladder_and_resumes_without_replaying(capsys, tmp_path):
    out = tmp_path / "ladder"
    code, _, err = _run(capsys, "ladder", *SMALL, "--out", out, "--quiet")
    assert code == 0, err
    df = pd.read_parquet(out / "ladder.parquet")
    assert set(df["rung"]) == set(RUNGS) and set(df["players"]) == {3}
    assert (df["fair"] == 1 / 3).all()
    md = (out / "ladder.md").read_text()
    assert "| 3 | steward |" in md and "searcher" in md
    first = (out / "ladder.json").read_bytes()
    code, _, err = _run(capsys, "ladder", *SMALL, "--out", out)
    assert code == 0 and "kept from" in err
    assert (out / "ladder.json").read_bytes() == first
    assert json.loads(first)["players"]["3"]["inputs"]["seat_games"] == 20
    # a kept size cut short (rungs removed by hand) is refused, not rewritten short
    cut = json.loads(first)
    cut["players"]["3"]["rungs"] = cut["players"]["3"]["rungs"][:3]
    (out / "ladder.json").write_text(json.dumps(cut))
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    code, _, err = _run(capsys, "ladder", *SMALL, "--out", out)
    assert code == 2 and err.count("\n") == 1, err
    assert "players.3.rungs: the steward rung \"searcher\" is missing" in err, err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    (out / "ladder.json").write_bytes(first)
    code, _, err = _run(capsys, "ladder", *SMALL[:-2], "--rollouts", "3", "--out", out, "-q")
    assert code == 0, err
    doc = json.loads((out / "ladder.json").read_text())
    assert doc["players"]["3"]["inputs"]["knobs"]["rollouts"] == 3  # (other inputs: replayed)


@pytest.mark.parametrize("args, says", [
    (["--seat-games", "5"], "--seat-games: at least 10"),
    (["--games", "0"], "--games"),
    (["--players", "7"], "--players"),
    (["--field", "steward=nobot"], "nobot"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(capsys, tmp_path, args, says):
    out = tmp_path / "ladder"
    opts = dict(zip(SMALL[::2], SMALL[1::2], strict=True))
    opts.update(dict(zip(args[::2], args[1::2], strict=True)))
    code, _, err = _run(capsys, "ladder", *[x for kv in opts.items() for x in kv],
                        "--out", out)
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()


def test_a_damaged_ladder_file_is_named_and_nothing_is_overwritten(capsys, tmp_path):
    out = tmp_path / "ladder"
    out.mkdir()
    damaged = '{"players": {"3": {"rungs": [{"x": 1}]}}}'
    (out / "ladder.json").write_text(damaged)
    code, _, err = _run(capsys, "ladder", *SMALL, "--out", out)
    assert code == 2 and "ladder.json: not a ladder fbsim wrote" in err, err
    assert (out / "ladder.json").read_text() == damaged
    assert sorted(p.name for p in out.iterdir()) == ["ladder.json"]


def test_the_report_shows_the_ladder_of_its_own_rules_only(capsys, tmp_path):
    from fbsim.experiments.report.model import report
    from fbsim.experiments.report.page import write_report

    out = tmp_path / "ladder"
    assert _run(capsys, "ladder", *SMALL, "--out", out, "-q")[0] == 0
    same = report(games=200, players=[3], exploit_dir=None, ladder_dir=out)
    assert same.ladder and {r.players for r in same.ladder} == {3}
    page = tmp_path / "page.html"
    write_report(same, page)
    html = page.read_text()
    assert "How much skill pays" in html and "<td>3</td><td>accelerationist</td>" in html
    other = report(games=200, players=[3], sets=["masks=1"], exploit_dir=None, ladder_dir=out)
    assert other.ladder is None  # (played under other rules: not shown)


def test_a_report_with_a_damaged_ladder_refuses_before_any_game(capsys, tmp_path):
    ladder = tmp_path / "ladder"
    ladder.mkdir()
    (ladder / "ladder.json").write_text("{not json")
    page = tmp_path / "page" / "r.html"
    page.parent.mkdir()
    code, _, err = _run(capsys, "report", "--games", "200", "--players", "3", "--out", page,
                        "--ladder", ladder, "--exploit", "none", "-q")
    assert code == 2 and "ladder.json: not a ladder fbsim wrote" in err, err
    assert len(err.strip().splitlines()) == 1
    assert list(page.parent.iterdir()) == []
