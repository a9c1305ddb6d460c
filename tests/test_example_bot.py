"""The README's example bot (`fbsim/policies/cooler.py`): one file is a whole bot. The
registry finds it, both engines play it game by game alike, and it does what it says."""

from __future__ import annotations

import numpy as np
import pytest

from fbsim.kernel import simulate
from fbsim.lineup import Lineup, parse_lineup
from fbsim.policies import registry
from fbsim.reference.engine import play_game
from fbsim.rules import load_rules

RULES = load_rules(sets=["players=4"])
LINEUP = Lineup(seats={0: "cooler"})


def test_the_registry_finds_the_one_file_bot():
    spec = registry()["cooler"]
    assert [p.name for p in spec.params] == ["reserve"]
    assert spec.compiled


@pytest.fixture(scope="module")
def games():
    return simulate(RULES, LINEUP, seed=3, n_games=120)


def test_kernel_and_reference_engine_agree_on_the_example_bot(games):
    for g in range(0, 120, 3):
        rec = play_game(RULES, LINEUP, 3, g)
        assert rec.seats[0].bot == "cooler"
        assert rec.winner == games["winner"][g] and rec.final_dial == games["final_dial"][g]
        for s, seat in enumerate(rec.seats):
            assert (seat.capital, seat.cool_open, seat.works) == (
                games["capital"][g, s], games["cool_open"][g, s], games["works"][g, s])


def test_R_C3_the_example_bot_cools_in_the_open_and_never_masks_or_burns(games):
    assert (games["cool_open"][:, 0] > 0).all()
    assert (games["burn_open"][:, 0] == 0).all() and (games["burn_masked"][:, 0] == 0).all()
    assert (games["cool_masked"][:, 0] == 0).all()
    assert (games["fog_requested"][:, 0] == 0).all()


def test_the_reserve_parameter_keeps_capital_back():
    keep_all = parse_lineup(None, ["0=cooler:reserve=100"], 4)
    cols = simulate(RULES, keep_all, seed=3, n_games=60)
    assert (cols["cool_open"][:, 0] == 0).all()  # never more than 100 Capital: never cools
    assert not np.array_equal(cols["capital"][:, 0], simulate(RULES, LINEUP, 3, 60)[
        "capital"][:, 0])
