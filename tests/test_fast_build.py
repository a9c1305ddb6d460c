"""The kernel's builds (`fbsim.kernel.build`): the fast build plays exactly the checked build's
games, the specialised builds the generic build's, the replaying build the recorded games,
and a bot in the fast build still sees only its own player's view (R-I1..R-I3).

CI: random rules and lineups, and 4,000 games per table size. `pytest -m long`: 100,000
games per table size and 400 random rule sets x 200 games.
"""

from __future__ import annotations

import os
import random
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import njit

from fbsim.bench import tape_length
from fbsim.errors import UsageError
from fbsim.game import layout as L
from fbsim.game.shape import shape_of
from fbsim.kernel import Records, bot_arrays, columns, dispatch, simulate
from fbsim.kernel import layout as KL
from fbsim.kernel.build import build_for, kernel_build
from fbsim.kernel.buildtype import rules_of, tape_of
from fbsim.kernel.dispatch import compiled_bots
from fbsim.kernel.lockstep import first_difference, kernel_view, visible
from fbsim.lineup import Lineup, parse_lineup
from fbsim.rules import load_rules, rules_vector
from tests.strategies import lineup_st, rules_st, seed_st


@njit(cache=True, nogil=True, _nrt=False)
def decide(decision, bot, rules, V, P, seed, game, out, token):
    """Bot `bot`'s answer to `decision` (`fbsim.game.layout.DP_*`) from view V, compiled as the
    games of the build of `token` ask it (the build's rules and dispatch), into `out`: a
    commitment's five numbers, else one."""
    R = rules_of(rules, token)
    T = tape_of(out[5:], token)  # a playing build's dispatch never reads its tape
    if decision == L.DP_COMMIT:
        out[0], out[1], out[2], out[3], out[4] = dispatch.commit(bot, R, V, P, seed, game, T)
    elif decision == L.DP_FOG:
        out[0] = dispatch.fog_request(bot, R, V, P, seed, game, T)
    elif decision == L.DP_MARKET:
        out[0] = dispatch.market(bot, R, V, P, seed, game, T)
    elif decision == L.DP_ACCUSE:
        out[0] = dispatch.accuse(bot, R, V, P, seed, game, T)
    else:
        out[0] = dispatch.cornered(bot, R, V, P, seed, game, T)


def same(a: dict, b: dict) -> str | None:
    for k in a:
        if not np.array_equal(a[k], b[k]):
            rows = np.flatnonzero((a[k] != b[k]).reshape(len(a[k]), -1).any(axis=1))
            return f"{k} differs first at game {int(a['game'][rows[0]])}"
    return None


def test_builds_are_chosen_by_lineup(monkeypatch):
    monkeypatch.setenv("FBSIM_SPECIALISE", "lineups")  # (the suite's is `default`: conftest)
    default = build_for(Lineup())
    assert not default.checked and set(default.bots) == {"steward", "opportunist",
                                                        "fog-grabber"}
    hoarder = build_for(parse_lineup(seats=["1=hoarder"], players=4))
    assert set(hoarder.bots) == set(default.bots) | {"hoarder"}
    mixed = build_for(parse_lineup(seats=["0=random", "1=hoarder"], players=4))
    assert mixed.bots == compiled_bots()  # more than SPECIALISE_MAX bots: the generic build
    assert build_for(Lineup(), checked=True).checked
    # one checked build checks every lineup
    assert build_for(Lineup(), checked=True).bots == compiled_bots()
    assert build_for(parse_lineup(seats=["1=hoarder"], players=4), True).bots == compiled_bots()
    assert kernel_build(checked=True).module.__name__ == "fbsim.kernel.engine"


def test_fbsim_specialise_chooses_which_lineups_get_a_build_of_their_own(monkeypatch):
    hoarder = parse_lineup(seats=["1=hoarder"], players=4)
    monkeypatch.setenv("FBSIM_SPECIALISE", "default")
    assert build_for(hoarder).bots == compiled_bots()
    assert set(build_for(Lineup()).bots) == {"steward", "opportunist", "fog-grabber"}
    monkeypatch.setenv("FBSIM_SPECIALISE", "None")  # any case
    assert build_for(Lineup()).bots == compiled_bots()
    monkeypatch.setenv("FBSIM_SPECIALISE", "")  # unset or blank: every small lineup
    assert "hoarder" in build_for(hoarder).bots != compiled_bots()
    monkeypatch.setenv("FBSIM_SPECIALISE", "some")
    with pytest.raises(UsageError, match="FBSIM_SPECIALISE='some': expected one of lineups"):
        build_for(Lineup())


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_fast_build_equals_checked_build_on_random_rules(data):
    """No legality check (R-C1..R-C3, R-V5, R-V6, R-A1, R-A4) and no market question with one
    possible answer (R-V6: take wages) changes a game."""
    rules = data.draw(rules_st(), label="rules")
    lineup = data.draw(lineup_st(rules.players), label="lineup")
    seed = data.draw(seed_st(), label="seed")
    first = data.draw(st.integers(0, 2**31), label="first_game")
    fast = simulate(rules, lineup, seed, 60, first_game=first, checked=False)
    checked = simulate(rules, lineup, seed, 60, first_game=first, checked=True)
    assert same(fast, checked) is None, same(fast, checked)


# the default lineup at every table size; the others (each size one more compile of a build
# for its shape) at two
@pytest.mark.parametrize("players,lineup", [(3, None), (4, None), (5, None), (6, None),
                                            (4, "1=hoarder"), (6, "1=hoarder"),
                                            (3, "0=tunable"), (5, "0=tunable")])
def test_specialised_fast_build_equals_checked_generic_build(players, lineup, monkeypatch):
    monkeypatch.setenv("FBSIM_SPECIALISE", "lineups")  # (the suite's is `default`: conftest)
    lu = parse_lineup(seats=[lineup] if lineup else [], players=players)
    rules = load_rules(players=players)
    fast = simulate(rules, lu, 7, 4000, first_game=123)
    assert build_for(lu).bots != compiled_bots()  # a specialised build played
    assert build_for(lu, checked=True).bots == compiled_bots()  # against the generic one
    checked = simulate(rules, lu, 7, 4000, first_game=123, checked=True)
    assert same(fast, checked) is None, same(fast, checked)


def taping(players: int, n: int):
    """The recording and replaying builds of the default lineup, their arguments, tapes and
    two sets of output arrays for n games."""
    rules = load_rules(players=players)
    lu = Lineup()
    rec, rep = build_for(lu, False, "record"), build_for(lu, False, "replay")
    R = rules_vector(rules)
    P, by_agenda, seat_bot = bot_arrays(rules, lu, rec)
    tapes = np.zeros((n, tape_length(rules)), dtype=np.int64)
    return rules, lu, rec, rep, (R, P, by_agenda, seat_bot), tapes, Records(n), Records(n)


def test_replaying_recorded_answers_plays_the_same_games():
    """The engine-only floor of `fbsim bench` plays the very games the bots played."""
    n = 500
    rules, lu, rec, rep, (R, P, by_agenda, seat_bot), tapes, a, b = taping(5, n)
    rec.run(R, P, by_agenda, seat_bot, 3, 40, n, 64, a.arrays(n), tapes, threads=1)
    assert (tapes[:, 0] > 0).all() and tapes[:, 0].max() < tapes.shape[1]
    rep.run(R, P, by_agenda, seat_bot, 3, 40, n, 64, b.arrays(n), tapes.copy(), threads=2)
    played, replayed = columns(rules, a.arrays(n), 40, n), columns(rules, b.arrays(n), 40, n)
    assert same(played, replayed) is None, same(played, replayed)
    assert same(played, simulate(rules, lu, 3, n, first_game=40)) is None


@pytest.mark.parametrize("decision", ["commit", "market"])
def test_a_probe_asks_the_bots_on_the_side_and_plays_the_recorded_games(decision):
    """`fbsim bench --decisions`: replaying a tape while asking the bots one decision plays
    the very games the bots played, and asks that decision at every turn it is asked in play
    (commitments: every seat at once; a market answer that buys is asked again)."""
    from fbsim.kernel.dispatch import PROBE_WORDS, probe

    n = 300
    rules, lu, rec, _, (R, P, by_agenda, seat_bot), _, a, b = taping(4, n)
    tapes = np.zeros((n, tape_length(rules) + PROBE_WORDS), dtype=np.int64)
    rec.run(R, P, by_agenda, seat_bot, 2, 0, n, 50, a.arrays(n), tapes, threads=1)
    prober = build_for(lu, False, "probe")
    probe(tapes, None)  # no decision asked: nothing counted
    prober.run(R, P, by_agenda, seat_bot, 2, 0, n, 50, b.arrays(n), tapes, threads=1)
    assert not tapes[:, -2:].any()
    probe(tapes, decision)
    prober.run(R, P, by_agenda, seat_bot, 2, 0, n, 50, b.arrays(n), tapes, threads=1)
    played, probed = columns(rules, a.arrays(n), 0, n), columns(rules, b.arrays(n), 0, n)
    assert same(played, probed) is None, same(played, probed)
    asked, total = tapes[:, -2], tapes[:, -1]
    if decision == "commit":  # all four seats in each round that reached its commitments
        rounds = played["rounds_played"] - (played["end"] == L.END_COLLAPSE_WORLD)
        assert (asked == 4 * rounds).all()
        assert (total >= rules.agents * asked).all()
    else:  # a purchase is followed by another question to the same seat
        bought = played["assets"].sum(axis=(1, 2))
        assert (asked >= bought).all() and asked.sum() > bought.sum() > 0


def test_a_replay_of_other_answers_plays_other_games():
    """The replay does follow its tape: a changed answer changes the game."""
    n = 200
    rules, lu, rec, rep, (R, P, by_agenda, seat_bot), tapes, a, b = taping(4, n)
    rec.run(R, P, by_agenda, seat_bot, 1, 0, n, n, a.arrays(n), tapes, threads=1)
    # every game's first commitment becomes all WORKS (legal: R-C1)
    tapes[:, 1:6] = [rules.agents, 0, 0, 0, 0]
    rep.run(R, P, by_agenda, seat_bot, 1, 0, n, n, b.arrays(n), tapes, threads=1)
    assert same(columns(rules, a.arrays(n), 0, n), columns(rules, b.arrays(n), 0, n))


@pytest.mark.parametrize("players,lineup", [(4, None), (3, "random"), (6, None)])
def test_fast_build_agrees_with_reference_step_by_step(players, lineup):
    """Lockstep: after every step the fast build's views and state equal the reference's."""
    rules = load_rules(players=players)
    lu = parse_lineup(lineup)
    for game in range(3):
        assert first_difference(rules, lu, 9, game, build_for(lu)) is None


# the hidden state of a seat (R-I2): what a rival may not see
# every private field but its Agenda (changed below while it is hidden), and its Fog
# request / Accusation target of this round
HIDDEN = tuple(f for f in L.PRIVATE if f != L.V_MY_AGENDA) + (KL.S_REQUEST,)


def perturbed(W, seat: int, n: int, rnd: random.Random) -> np.ndarray:
    W2 = W.copy()
    for t in range(n):
        if t == seat:
            continue
        for f in HIDDEN:
            W2[f + t] = rnd.randrange(0, 40)
        if W[KL.S_REVEALED + t] == 0:
            W2[L.V_MY_AGENDA + t] = rnd.randrange(L.N_AGENDAS)
    return W2


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=seed_st(), game=st.integers(0, 10**6), players=st.integers(3, 6),
       perturb=st.integers(0, 2**32), random_lineup=st.booleans())
def test_R_I3_fast_build_views_and_decisions_ignore_rivals_hidden_state(
        seed, game, players, perturb, random_lineup):
    """At every step of a game played by the fast build, every bot's answer to each decision
    is the same when the rivals' hidden state is changed at random in the very array the bot
    is handed (the kernel keeps every seat's private fields in the view section: a bot must
    read only its own, `fbsim.game.public.mine`); what the seat may know of it is unchanged
    too. The seat's own hidden state does reach its view."""
    rules = load_rules(players=players)
    lu = parse_lineup("random" if random_lineup else None)
    R = rules_vector(rules)
    with shapes_on():
        build = build_for(lu, shape=shape_of(R))
    assert build.shape == shape_of(R)  # a build for the table's shape, as the games play
    K = build.module
    P, by_agenda, seat_bot = bot_arrays(rules, lu, build)
    W = np.zeros(KL.W_SIZE, dtype=np.int64)
    deck_total, agenda_total = K.scratch_sizes(R)
    deck = np.zeros(deck_total, dtype=np.int64)
    agenda_deck = np.zeros(agenda_total, dtype=np.int64)
    T = np.zeros(1, dtype=np.int64)
    K.setup(R, by_agenda, seat_bot, np.int64(seed), np.int64(game), W, deck, agenda_deck)
    rnd = random.Random(perturb)
    checks = 0
    decisions = (L.DP_COMMIT, L.DP_FOG, L.DP_MARKET, L.DP_ACCUSE)
    for r in range(1, rules.rounds + 1):
        W[L.V_ROUND] = r
        for k in range(K.N_ROUND_STEPS):
            for s in range(players):
                entry = int(W[KL.S_ENTRY + s])
                bot = W[KL.S_BOT + s]  # the build's id of the seat's bot
                for d in decisions:
                    view = kernel_view(K, W, s, d)
                    other = kernel_view(K, perturbed(W, s, players, rnd), s, d)
                    assert not np.array_equal(view, other)  # the rivals' blocks did change
                    assert np.array_equal(visible(view, s), visible(other, s)), (r, k, s, d)
                    # the build's own compiled bot, as its games ask it
                    a, b = np.zeros(6, dtype=np.int64), np.ones(6, dtype=np.int64)
                    for ans, v in ((a, view), (b, other)):
                        decide(np.int64(d), bot, R, v, P[entry], np.int64(seed),
                                 np.int64(game), ans, build.token)
                    n_ans = 5 if d == L.DP_COMMIT else 1
                    assert np.array_equal(a[:n_ans], b[:n_ans]), (r, k, s, d)
                    checks += 1
                mine = W.copy()
                mine[L.V_MY_CAPITAL + s] += 1 + rnd.randrange(9)
                assert not np.array_equal(visible(kernel_view(K, mine, s, L.DP_COMMIT), s),
                                          visible(kernel_view(K, W, s, L.DP_COMMIT), s))
            K.round_step(k, R, P, W, players, r, np.int64(seed), np.int64(game), deck, T)
            if W[KL.S_OVER] == 1:
                break
        if W[KL.S_OVER] == 1:
            break
        K.close_round(R, W, players, r)
    assert checks >= players * len(decisions)


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_fast_build_equals_checked_build_long(players):
    rules = load_rules(players=players)
    for lu in (Lineup(), parse_lineup("random")):
        for first in range(0, 100_000, 25_000):
            fast = simulate(rules, lu, 11, 25_000, first_game=first)
            checked = simulate(rules, lu, 11, 25_000, first_game=first, checked=True)
            assert same(fast, checked) is None, same(fast, checked)


@pytest.mark.long
@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_fast_build_equals_checked_build_on_random_rules_long(data):
    rules = data.draw(rules_st(), label="rules")
    lineup = data.draw(lineup_st(rules.players), label="lineup")
    seed = data.draw(seed_st(), label="seed")
    fast = simulate(rules, lineup, seed, 200)
    checked = simulate(rules, lineup, seed, 200, checked=True)
    assert same(fast, checked) is None, same(fast, checked)


def test_an_illegal_answer_stops_the_run_naming_its_game():
    """The checked build flags an illegal answer (R-C1: more chips than Agents) in the game's
    record, and reading the block's columns stops with that game, round and seat."""
    from fbsim.errors import FbsimError

    n = 50
    rules, lu, fast, _, (R, P, by_agenda, seat_bot), tapes, a, b = taping(4, n)
    # the checked build's tapes (the fast build does not ask a market question with one
    # possible answer, so its tapes lack answers the checked build asks for)
    rec, rep = (kernel_build(fast.bots, True, m) for m in ("record", "replay"))
    rec.run(R, P, by_agenda, seat_bot, 1, 0, n, n, a.arrays(n), tapes, threads=1)
    assert columns(rules, a.arrays(n), 0, n)["game"].size == n  # legal answers: no error
    tapes[7, 1:6] = [rules.agents + 1, 0, 0, 0, 0]  # game 7's first commitment
    rep.run(R, P, by_agenda, seat_bot, 1, 0, n, n, b.arrays(n), tapes, threads=1)
    with pytest.raises(FbsimError, match=r"game 7: an illegal bot decision at round 1, seat \d"):
        columns(rules, b.arrays(n), 0, n)


@contextmanager
def shapes_on():
    """FBSIM_SHAPES=standard and FBSIM_SPECIALISE=lineups for the block (the suite plays
    builds for any shape, specialised to the default lineup only: tests/conftest.py)."""
    names = {"FBSIM_SHAPES": "standard", "FBSIM_SPECIALISE": "lineups"}
    before = {k: os.environ.get(k) for k in names}
    os.environ.update(names)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                del os.environ[k]
            else:
                os.environ[k] = v
