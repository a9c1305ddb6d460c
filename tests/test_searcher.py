"""The searcher (`fbsim.kernel.search`, `fbsim.experiments.search.searcher`): a seat that
scores its commitments by rollouts from worlds it samples from its own view.

- R-I3: it decides only from its own view. Every rival's hidden field, their bots and the
  asset deck's unseen order are scrambled before each of its decisions (`K_PERTURB`): every
  decision, every candidate's tally and every record stay the same.
- R-I1: the public ledger it samples rivals' Capital from is right: at every round's end,
  every seat's Capital is the ledger's less its masked COOLs' cost plus its Fog receipts.
- A searched game in which it never departs is the field's game, record for record (what
  makes its gain a paired comparison).
- The same games whatever the threads and chunks; the checked build agrees with the fast one.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from fbsim.errors import UsageError
from fbsim.experiments.search.searcher import Knobs, Searcher, search_gains, seat_games_for
from fbsim.kernel import Prepared
from fbsim.kernel import search as KS
from fbsim.lineup import parse_lineup
from fbsim.rules import load_rules

# (three builds in all, each compiled once: the checked one, the committed 4-player field's,
# and the generic fast one a random lineup plays)
CASES = [(3, None, True), (4, "results/equilibrium/p4.toml", False), (6, "random", False)]
IDS = ["3-default-checked", "4-field", "6-random"]
SMALL = Knobs(rollouts=12, margin=0.5)


def _searcher(players, lineup, knobs=SMALL, checked=None):
    return Searcher(load_rules(players=players), parse_lineup(lineup), knobs, checked=checked)


def _same_columns(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("players,lineup,checked", CASES, ids=IDS)
def test_r_i3_what_the_searcher_cannot_see_does_not_change_its_decisions(players, lineup,
                                                                         checked):
    s = _searcher(players, lineup, checked=checked)
    seat = players - 1
    plain = s.play(3, 0, 12, seat, full_log=True, threads=1)
    assert plain.searched() > 0 and plain.departures() > 0  # (a test that can fail)
    for key in (1, 977):
        K = SMALL.vector(perturb=key)
        scrambled = s.play(3, 0, 12, seat, full_log=True, threads=1, knob_vector=K)
        assert np.array_equal(plain.decisions, scrambled.decisions), f"key {key}"
        assert np.array_equal(plain.candidates, scrambled.candidates), f"key {key}"
        assert np.array_equal(plain.posterior, scrambled.posterior), f"key {key}"
        assert _same_columns(plain.columns, scrambled.columns)


def test_r_i3_the_scramble_test_can_fail():
    """A searcher that reads a rival's hidden Agenda (the scramble's target) decides
    differently once it is scrambled: the candidates' tallies move."""
    s = _searcher(4, "results/equilibrium/p4.toml", Knobs(rollouts=12, beliefs=False))
    plain = s.play(3, 0, 6, 3, full_log=True, threads=1)
    leaky = Knobs(rollouts=12, beliefs=False).vector(perturb=5)
    leaky[KS.K_PERTURB] = -5  # (negative: scramble the game itself, not a copy)
    scrambled = s.play(3, 0, 6, 3, full_log=True, threads=1, knob_vector=leaky)
    assert not np.array_equal(plain.candidates, scrambled.candidates)


@pytest.mark.parametrize("players,lineup,checked", CASES, ids=IDS)
def test_r_i1_the_public_ledger_keeps_every_seats_capital(players, lineup, checked):
    s = _searcher(players, lineup, Knobs(rollouts=2), checked=checked)
    for seat in range(players):
        g = s.play(11, 0, 40, seat, threads=1)
        assert g.decisions[:, :, KS.D_LEDGER].sum() == 0
        assert g.decisions[:, :, KS.D_SEARCHED].sum() > 0


@pytest.mark.parametrize("players,lineup,checked", CASES, ids=IDS)
def test_a_searcher_that_never_departs_plays_the_fields_game(players, lineup, checked):
    rules = load_rules(players=players)
    lu = parse_lineup(lineup)
    s = Searcher(rules, lu, Knobs(rollouts=8, margin=1e9), checked=checked)
    field = Prepared(rules, lu, checked).start(21, 5, 30, threads=1)()
    for seat in (0, players - 1):
        g = s.play(21, 5, 30, seat, threads=1)
        assert g.searched() > 0 and g.departures() == 0
        assert _same_columns(dict(field), dict(g.columns)), f"seat {seat}"


def test_a_searcher_that_departs_changes_games():
    rules = load_rules(players=4)
    lu = parse_lineup("results/equilibrium/p4.toml")
    s = Searcher(rules, lu, SMALL)
    field = Prepared(rules, lu).start(21, 0, 40, threads=1)()
    g = s.play(21, 0, 40, 2, threads=1)
    assert g.departures() > 0
    assert not np.array_equal(field["winner"], g.columns["winner"]) or not np.array_equal(
        field["final_dial"], g.columns["final_dial"])


def test_the_same_games_whatever_the_threads_and_chunks():
    s = _searcher(5, "random")
    a = s.play(8, 100, 30, 1, full_log=True, threads=1, chunk=30)
    b = s.play(8, 100, 30, 1, full_log=True, threads=2, chunk=4)
    c = s.play(8, 110, 20, 1, full_log=True, threads=1, chunk=3)  # (the last 20 alone)
    assert _same_columns(a.columns, b.columns)
    assert np.array_equal(a.decisions, b.decisions)
    assert np.array_equal(a.candidates, b.candidates)
    assert np.array_equal(a.decisions[10:], c.decisions)
    assert np.array_equal(a.columns["winner"][10:], c.columns["winner"])


def test_the_checked_build_agrees_with_the_fast_one():
    fast = _searcher(4, "results/equilibrium/p4.toml")
    slow = _searcher(4, "results/equilibrium/p4.toml", checked=True)
    a = fast.play(2, 0, 10, 0, full_log=True, threads=1)
    b = slow.play(2, 0, 10, 0, full_log=True, threads=1)
    assert _same_columns(a.columns, b.columns)
    assert np.array_equal(a.candidates, b.candidates)


def test_the_log_explains_each_decision():
    g = _searcher(4, "results/equilibrium/p4.toml").play(3, 0, 10, 1, full_log=True,
                                                          threads=1)
    d, c, p = g.decisions, g.candidates, g.posterior
    searched = d[:, :, KS.D_SEARCHED] == 1
    for game, r in zip(*np.nonzero(searched), strict=True):
        row, cands = d[game, r], c[game, r, : d[game, r, KS.D_CANDIDATES]]
        assert row[KS.D_ROLLOUTS] == SMALL.rollouts
        assert cands[0, KS.C_WINS] == row[KS.D_FIELD_WINS]
        assert cands[:, KS.C_WINS].max() == row[KS.D_BEST_WINS]
        assert np.array_equal(cands[row[KS.D_CHOSEN], KS.C_COMMIT:KS.C_COMMIT + 5],
                              row[KS.D_COMMIT:KS.D_COMMIT + 5])
        assert (cands[:, KS.C_COMMIT:KS.C_COMMIT + 3].sum(axis=1) == 6).all()  # R-C1
        assert len({tuple(x) for x in cands[:, KS.C_COMMIT:KS.C_COMMIT + 5]}) == len(cands)
        if row[KS.D_CHOSEN] != 0:
            assert row[KS.D_Z] > int(SMALL.margin * 1000)
        # every seat's posterior over the Agendas sums to 1 (x10000, rounded per assignment)
        assert (abs(p[game, r, :4].sum(axis=1) - 10000) <= 3 ** 3).all()
        assert p[game, r, 1, g.columns["agenda"][game, 1]] == 10000  # its own Agenda


def test_search_gains_are_paired_on_the_fields_games():
    rules = load_rules(players=4)
    gains = search_gains(rules, parse_lineup("results/equilibrium/p4.toml"), 4, seat_games=60,
                         knobs=Knobs(rollouts=4), threads=1)
    assert set(gains) == {"steward", "opportunist", "accelerationist"}
    for rows in gains.values():
        assert [r.rollouts for r in rows] == [4, 16]
        for r in rows:
            assert 30 < r.n < 120 and r.decisions > 0  # (about 60 dealt the Agenda)
            assert r.gain == pytest.approx(r.rate - r.base)
            assert r.ci[0] <= r.gain <= r.ci[1]
            assert r.changed <= r.n
        assert rows[0].n == rows[1].n and rows[0].base == rows[1].base  # the same games


def test_seat_games_cover_the_agendas_dealt():
    rules = load_rules(players=4)
    deck = rules.decks.for_players(4).counts()
    for a in range(3):
        G = seat_games_for(rules, a, 3000)
        assert G * 4 * deck[a] / sum(deck) >= 3000 > (G - 1) * 4 * deck[a] / sum(deck)


@pytest.mark.parametrize("bad", [dict(rollouts=0), dict(step=0), dict(margin=-1.0),
                                 dict(margin=float("nan")), dict(rollouts=2.5)])
def test_bad_knobs_are_refused_naming_the_knob(bad):
    with pytest.raises(UsageError, match=next(iter(bad))):
        Knobs(**bad)


# ---------------------------------------------------------------- fbsim exploit --oracle search
FIELD4 = "results/equilibrium/p4.toml"


def _run(capsys, *args):
    from fbsim.cli import main

    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_exploit_oracle_search_writes_each_agendas_gain_at_two_budgets(capsys, tmp_path,
                                                                        monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    out = tmp_path / "ex"
    args = ("exploit", "--oracle", "search", "--players", "4", "--field", FIELD4,
            "--seat-games", "20", "--rollouts", "3", "--seed", "5", "--out", out, "-q")
    code, stdout, err = _run(capsys, *args)
    assert code == 0, err
    doc = json.loads((out / "search" / "summary.json").read_text())
    four = doc["players"]["4"]
    assert four["budgets"] == [3, 12] and four["field"] == FIELD4
    assert set(four["agendas"]) == {"steward", "opportunist", "accelerationist"}
    for a in four["agendas"].values():
        lo, hi = a["search_gain_ci"]
        assert lo <= a["search_gain"] <= hi
        assert a["search_gain"] == a["by_rollouts"]["3"]["gain"]
        assert a["held"] == all(r["ci"][1] <= 0.03 for r in a["by_rollouts"].values())
    md = (out / "search" / "summary.md").read_text()
    assert "lower bounds" in md and "| opportunist |" in md
    first = (out / "search" / "summary.json").read_bytes()
    assert _run(capsys, *args)[0] == 0  # (the same inputs: the same bytes)
    assert (out / "search" / "summary.json").read_bytes() == first


@pytest.mark.parametrize("extra,message", [
    (("--oracle", "oracle9"), "--oracle"),
    (("--oracle", "search", "--deviate", "team"), "--deviate"),
    (("--oracle", "search", "--seat-games", "5"), "--seat-games"),
    (("--oracle", "search", "--seat-games", "lots"), "--seat-games"),
    (("--oracle", "search", "--agenda", "banker"), "--agenda"),
    (("--oracle", "search", "--field", "nope.toml"), "nope.toml"),
    (("--oracle", "search", "--rollouts", "0"), "--rollouts"),
])
def test_exploit_oracle_search_refuses_bad_input_in_one_line(capsys, tmp_path, extra,
                                                             message):
    out = tmp_path / "ex"
    code, _, err = _run(capsys, "exploit", "--players", "4", "--out", out, "-q", *extra)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()  # (nothing written by a refused run)


# ---------------------------------------------------------------- fbsim replay --searcher
@pytest.mark.parametrize("players,lineup,checked", CASES, ids=IDS)
def test_a_searched_game_replayed_by_the_reference_engine_is_the_kernels(players, lineup,
                                                                         checked):
    from fbsim.experiments.search.searcher import replay_searched

    rules, lu = load_rules(players=players), parse_lineup(lineup)
    departed = 0
    for game in range(6):
        rep = replay_searched(rules, lu, SMALL, 13, game, game % players)  # (agrees, or raises)
        departed += rep.games.departures()
    assert departed > 0  # (the replays include commitments the field would not have made)


def test_replay_searcher_narrates_every_candidate_and_the_choice(capsys):
    code, out, err = _run(capsys, "replay", "--players", "4", "--lineup", FIELD4,
                          "--searcher", "1", "--seed", "3", "--game", "2", "--rollouts", "16")
    assert code == 0, err
    assert out.count("Seat 1 searches its commitment: ") >= 2
    assert "(the field's choice)" in out and "wins " in out
    assert "keeps the field's choice" in out or "departs: plays" in out
    assert "rivals' Agendas as it weighs them" in out
    code, _, err = _run(capsys, "replay", "--players", "4", "--searcher", "4")
    assert code == 2 and "--searcher" in err


def test_replay_searcher_json_says_which_seat_searched_and_how(capsys):
    code, out, err = _run(capsys, "replay", "--players", "3", "--searcher", "2", "--json",
                          "--rollouts", "8")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["searcher"]["seat"] == 2 and doc["searcher"]["rollouts"] == 8
    assert {"step", "masked", "margin", "beliefs"} <= set(doc["searcher"])


def test_the_command_lines_searcher_defaults_are_the_librarys():
    """Every command's searcher rollouts default is `Knobs()`'s, so that a notebook calling
    the library gets the searcher the commands report."""
    import typer.main

    from fbsim.cli import app
    from fbsim.experiments.search.searcher import ROLLOUTS

    group = typer.main.get_command(app)
    seen = {}
    for name, cmd in group.commands.items():
        for p in cmd.params:
            if p.name in ("rollouts", "searcher_rollouts"):
                # (None: the flag is refused without the searcher, and taken as ROLLOUTS
                # with it; its help names the default)
                seen[name] = (ROLLOUTS if p.default is None and f"default {ROLLOUTS}"
                              in (p.help or "") else p.default)
    assert set(seen) >= {"replay", "exploit", "ladder", "equilibrium"}, seen
    assert all(v == ROLLOUTS == Knobs().rollouts for v in seen.values()), seen
