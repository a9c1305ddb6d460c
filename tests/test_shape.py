"""Builds for one table's shape (`fbsim.game.shape`, `fbsim.kernel.build.shaped`): which runs
get them, and that they play exactly the games of the build for any shape, of the checked
build and of the reference engine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fbsim.errors import UsageError
from fbsim.game import layout as L
from fbsim.game import shape
from fbsim.kernel import Prepared, simulate
from fbsim.kernel.build import build_for, kernel_build, standard_shapes
from fbsim.kernel.dispatch import compiled_bots
from fbsim.kernel.lockstep import first_difference
from fbsim.lineup import Lineup, parse_lineup
from fbsim.rules import load_rules, rules_vector
from tests.test_fast_build import same

PACKAGE = Path(__file__).resolve().parents[1] / "fbsim"


def test_accessors_read_the_rules_vector():
    R = rules_vector(load_rules(players=5))
    assert [f(R) for f in (shape.players, shape.rounds, shape.market_size, shape.n_tokens,
                           shape.n_kinds)] == [R[i] for i in shape.FIELDS]
    assert shape.shape_of(R)[0] == 5


def test_shaped_types_differ_by_shape():
    a, b = shape.Shaped((4, 8, 4, 4, 5)), shape.Shaped((5, 8, 4, 4, 5))
    assert a != b and hash(a) != hash(b)
    assert a == shape.Shaped((4, 8, 4, 4, 5))
    assert a.mangling_args != b.mangling_args  # the compiled functions' names differ too


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_the_default_rules_play_a_build_for_their_shape(players, monkeypatch):
    monkeypatch.delenv("FBSIM_SHAPES", raising=False)
    R = rules_vector(load_rules(players=players))
    build = Prepared(load_rules(players=players)).build
    assert build.shape == shape.shape_of(R) and not build.checked
    assert shape.shape_of(R) in standard_shapes()
    # never the checked build, nor the generic build (random lineups)
    assert build_for(Lineup(), True, shape=shape.shape_of(R)).shape is None
    generic = build_for(parse_lineup(seats=["0=random", "1=hoarder"], players=players),
                        shape=shape.shape_of(R))
    assert generic.bots == compiled_bots() and generic.shape is None


def test_fbsim_shapes_chooses_which_shapes_get_a_build(monkeypatch):
    R = rules_vector(load_rules(players=4))
    odd = tuple(d + 1 if i == 1 else d for i, d in enumerate(shape.shape_of(R)))
    assert odd not in standard_shapes()
    monkeypatch.delenv("FBSIM_SHAPES", raising=False)
    assert build_for(Lineup(), shape=odd).shape is None
    monkeypatch.setenv("FBSIM_SHAPES", "all")
    assert build_for(Lineup(), shape=odd).shape == odd
    monkeypatch.setenv("FBSIM_SHAPES", "none")
    assert build_for(Lineup(), shape=shape.shape_of(R)).shape is None
    monkeypatch.setenv("FBSIM_SHAPES", "some")
    with pytest.raises(UsageError, match="FBSIM_SHAPES='some'"):
        build_for(Lineup(), shape=odd)


def test_a_build_for_one_shape_refuses_rules_of_another():
    R4, R5 = (rules_vector(load_rules(players=n)) for n in (4, 5))
    build = kernel_build(build_for(Lineup()).bots, False, "play", shape.shape_of(R4))
    prepared = Prepared(load_rules(players=5))
    with pytest.raises(ValueError, match="shape"):
        build.run(R5, prepared.P, prepared.by_agenda, prepared.seat_bot, 1, 0, 1, 1,
                  prepared.start(1, 0, 1)().kernel_arrays)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_a_build_for_one_shape_plays_the_games_of_the_build_for_any(players, monkeypatch):
    rules = load_rules(players=players)
    monkeypatch.setenv("FBSIM_SHAPES", "none")
    any_shape = simulate(rules, Lineup(), 11, 3000, first_game=77)
    monkeypatch.setenv("FBSIM_SHAPES", "standard")
    assert Prepared(rules).build.shape is not None
    one_shape = simulate(rules, Lineup(), 11, 3000, first_game=77)
    assert same(one_shape, any_shape) is None, same(one_shape, any_shape)
    assert one_shape["final_dial"].std() > 0  # games that differ from one another


@pytest.mark.parametrize("players", [4, 6])
def test_a_build_for_one_shape_agrees_with_reference_step_by_step(players, monkeypatch):
    """Lockstep through the build's own entry points, which read the rules as its games do
    (typed with the shape)."""
    monkeypatch.delenv("FBSIM_SHAPES", raising=False)
    rules = load_rules(players=players)
    build = build_for(Lineup(), shape=shape.shape_of(rules_vector(rules)))
    assert build.shape is not None
    for game in range(3):
        assert first_difference(rules, Lineup(), 5, game, build) is None


def test_shared_code_reads_the_shape_through_its_accessors():
    """A read of a shape field straight from the rules vector would compile to a load in a
    build for one shape: every read goes through `fbsim.game.shape`."""
    names = [n for n in dir(L) if getattr(L, n) in shape.FIELDS and n.startswith("R_")]
    assert len(names) == len(shape.FIELDS)
    pattern = re.compile(r"\bR\[\s*L\.(" + "|".join(names) + r")\s*\]")
    found = [f"{p.relative_to(PACKAGE)}:{i}" for p in PACKAGE.rglob("*.py")
             if p.name != "shape.py"
             for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert found == [], found
    # ... and the test can fail: the pattern finds such a read
    assert pattern.search("for s in range(R[L.R_PLAYERS]):")
    assert pattern.search("if g.R[L.R_ROUNDS] > 1:")
