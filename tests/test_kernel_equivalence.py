"""The core property of the kernel: for every game, exactly the reference engine's record.

Random valid rules (every table size, deck compositions, prices, baselines, masks,
Accusation rounds, D-switches), lineups (every compiled bot, mixed seats, each entry with its
own bot parameters),
seeds and game ranges. On a mismatch the failure names the first differing record field and,
from a lockstep replay, the first differing view field with its round and step.

CI profile: 300 random rules x 20 games. `pytest -m long`: 2,500 rules x 50 games (125,000
games).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fbsim.kernel import simulate
from fbsim.kernel.lockstep import first_difference, record_difference
from fbsim.reference.engine import play_game
from tests.strategies import lineup_st, rules_st, seed_st


def check(data, games: int) -> None:
    rules = data.draw(rules_st(), label="rules")
    lineup = data.draw(lineup_st(rules.players), label="lineup")
    seed = data.draw(seed_st(), label="seed")
    first = data.draw(st.integers(0, 2**31), label="first_game")
    cols = simulate(rules, lineup, seed, games, first_game=first,
                    chunk=data.draw(st.integers(1, 8), label="chunk"))
    for i in range(games):
        rec = play_game(rules, lineup, seed, first + i)
        diff = record_difference(rec, cols, i, lineup)
        if diff:
            where = first_difference(rules, lineup, seed, first + i)
            pytest.fail(f"game {first + i} (seed {seed}): {diff}; lockstep: {where}")


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_kernel_equals_reference_on_random_rules(data):
    check(data, games=20)


@pytest.mark.long
@pytest.mark.slow
@settings(max_examples=2500, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_kernel_equals_reference_long(data):
    check(data, games=50)


@pytest.mark.slow
@pytest.mark.parametrize("bot", ["tunable", "planner", "field"])
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_search_bots_in_every_seat_equal_reference(bot, data):
    """The bots of the searches (tunable: fbsim exploit; planner and its mixtures, field:
    fbsim equilibrium) at every seat, each Agenda and seat override with its own parameters
    drawn anywhere in their ranges, play exactly the same games in both engines."""
    rules = data.draw(rules_st(), label="rules")
    lineup = data.draw(lineup_st(rules.players, bot), label="lineup")
    seed = data.draw(seed_st(), label="seed")
    cols = simulate(rules, lineup, seed, 15)
    for i in range(15):
        diff = record_difference(play_game(rules, lineup, seed, i), cols, i, lineup)
        assert diff is None, f"game {i} (seed {seed}): {diff}"
