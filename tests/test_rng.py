"""The counter-based RNG: pure, uniform, and bit-identical compiled and as plain Python."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from fbsim.game import rng
from fbsim.game.rng import below, draw, shuffle_in_place
from fbsim.lineup import parse_lineup
from fbsim.reference.engine import play_game
from fbsim.rules import load_rules

ROOT = Path(__file__).resolve().parents[1]

# (seed, game, round, seat, purpose, counter), each over its documented range
RANGES = ((0, 2**63 - 1), (0, 2**62), (0, 255), (0, 255), (0, 255), (0, 2**32 - 1))
COORDS = st.tuples(*(st.integers(lo, hi) for lo, hi in RANGES))


@given(c=COORDS)
def test_draw_is_deterministic_and_32_bit(c):
    a = draw(*c)
    assert draw(*c) == a
    assert 0 <= int(a) < 2**32


@given(c=COORDS, which=st.integers(0, 5), data=st.data())
def test_changing_any_one_coordinate_changes_the_draw(c, which, data):
    lo, hi = RANGES[which]
    new = data.draw(st.integers(lo, hi).filter(lambda v: v != c[which]))
    other = list(c)
    other[which] = new
    assert draw(*other) != draw(*c)


def test_draw_has_no_state_call_order_does_not_matter():
    grid = list(itertools.product((0, 1, 2**40 + 3), (0, 5), (0, 1, 8), (0, 3), (1, 10),
                                  (0, 1, 2**31)))
    forward = {c: draw(*c) for c in grid}
    rnd = np.random.default_rng(0)
    for i in rnd.permutation(len(grid)):
        c = grid[i]
        assert draw(*c) == forward[c]
    assert len(set(forward.values())) == len(grid)


@given(n=st.integers(1, 2**31 - 1), c=COORDS)
def test_below_stays_in_range(n, c):
    v = below(n, *c)
    assert 0 <= v < n
    assert below(n, *c) == v


def test_below_n_1_is_always_0():
    assert all(below(1, 9, 0, 0, 0, 0, k) == 0 for k in range(100))


def chi_square(counts, expected):
    return float(((np.asarray(counts) - expected) ** 2 / expected).sum())


def test_below_is_roughly_uniform():
    draws = 60_000
    for n, seed, purpose in ((2, 1, 3), (7, 2, 1), (10, 3, 5), (37, 2**50, 2)):
        counts = np.zeros(n, dtype=np.int64)
        for k in range(draws):
            counts[below(n, seed, 4, 1, 2, purpose, k)] += 1
        df = n - 1
        # a generous bound: about 8 standard deviations above the mean of chi-square(df)
        assert chi_square(counts, draws / n) < df + 8 * (2 * df) ** 0.5 + 10, (n, counts)


@given(values=st.lists(st.integers(-(2**40), 2**40), max_size=40),
       seed=st.integers(0, 2**63 - 1), game=st.integers(0, 2**40), purpose=st.integers(0, 255))
def test_shuffle_in_place_is_a_deterministic_permutation(values, seed, game, purpose):
    a = np.array(values, dtype=np.int64)
    b = a.copy()
    shuffle_in_place(b, seed, game, purpose)
    assert sorted(b.tolist()) == sorted(values)
    c = a.copy()
    shuffle_in_place(c, seed, game, purpose)
    assert np.array_equal(b, c)


def test_shuffle_reaches_every_permutation_evenly():
    counts: dict[tuple, int] = {}
    games = 2400
    for g in range(games):
        a = np.arange(4, dtype=np.int64)
        shuffle_in_place(a, 77, g, 11)
        counts[tuple(a)] = counts.get(tuple(a), 0) + 1
    assert len(counts) == 24
    assert chi_square(list(counts.values()), games / 24) < 23 + 8 * 46**0.5 + 10


# ------------------------------------------------------------------------ both modes

SAMPLE = [(seed, game, r, seat, purpose, counter)
          for seed in (0, 1, 2**63 - 1) for game in (0, 7, 2**40)
          for r, seat, purpose in ((0, 0, 10), (3, 5, 1), (255, 255, 255))
          for counter in (0, 1, 2**32 - 1)]
GAMES = [  # players, lineup, seat overrides, seed, game index
    (3, "random", [], 12345, 0),
    (5, None, ["1=random", "3=hoarder"], 2**62 + 5, 7),
    (6, "steward=opportunist,accelerationist=fog-grabber", ["0=random"], 99, 123456),
]

SCRIPT = """
import json, sys
import numba
from fbsim.game import rng
from fbsim.lineup import parse_lineup
from fbsim.reference.engine import play_game
from fbsim.rules import load_rules

sample, games = json.loads(sys.argv[1])
out = {
    "jit_disabled": bool(numba.config.DISABLE_JIT),
    "draw_type": type(rng.draw).__name__,
    "draws": [int(rng.draw(*c)) for c in sample],
    "below": [int(rng.below(1000003, *c)) for c in sample],
    "records": [],
}
for players, lineup, seats, seed, game in games:
    rules = load_rules(sets=[f"players={players}"])
    rec = play_game(rules, parse_lineup(lineup, seats, players), seed, game, events=True)
    out["records"].append(rec.as_dict(events=True))
print(json.dumps(out))
"""


def compiled_results() -> dict:
    records = []
    for players, lineup, seats, seed, game in GAMES:
        rules = load_rules(sets=[f"players={players}"])
        rec = play_game(rules, parse_lineup(lineup, seats, players), seed, game, events=True)
        records.append(json.loads(json.dumps(rec.as_dict(events=True))))
    return {
        "draws": [int(draw(*c)) for c in SAMPLE],
        "below": [int(below(1000003, *c)) for c in SAMPLE],
        "records": records,
    }


def test_plain_python_mode_gives_bit_identical_results():
    """NUMBA_DISABLE_JIT=1 runs the same shared code as plain Python: same draws, same game."""
    assert isinstance(rng.draw, numba.core.registry.CPUDispatcher)  # compiled here
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps([SAMPLE, GAMES])],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    plain = json.loads(proc.stdout)
    assert plain.pop("jit_disabled") is True
    assert plain.pop("draw_type") == "function"  # really plain Python there
    want = compiled_results()
    assert plain["draws"] == want["draws"]
    assert plain["below"] == want["below"]
    for got, exp in zip(plain["records"], want["records"], strict=True):
        assert got == exp
    assert len({json.dumps(r["seats"]) for r in want["records"]}) == len(GAMES)
