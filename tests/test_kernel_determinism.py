"""Kernel determinism: the same records whatever the thread count, chunk size or sub-range."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from fbsim.kernel import simulate
from fbsim.lineup import parse_lineup
from fbsim.rules import load_rules

RULES = load_rules(sets=["players=5"])
LINEUP = parse_lineup(seats=["1=random", "3=hoarder"], players=5)


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def base():
    return simulate(RULES, LINEUP, seed=11, n_games=600, chunk=64)


def test_threads_do_not_change_records(base):
    prev = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = simulate(RULES, LINEUP, seed=11, n_games=600, chunk=64)
    finally:
        numba.set_num_threads(prev)
    assert same(one, base)


@pytest.mark.parametrize("chunk", [1, 7, 600, 10_000])
def test_chunk_size_does_not_change_records(base, chunk):
    assert same(simulate(RULES, LINEUP, seed=11, n_games=600, chunk=chunk), base)


def test_run_equals_concatenated_subranges(base):
    parts = [simulate(RULES, LINEUP, seed=11, n_games=m, first_game=lo)
             for lo, m in ((0, 250), (250, 1), (251, 349))]
    joined = {k: np.concatenate([p[k] for p in parts]) for k in base}
    assert same(joined, base)


def test_any_game_recomputes_alone(base):
    for g in (0, 137, 599):
        alone = simulate(RULES, LINEUP, seed=11, n_games=1, first_game=g)
        assert all(np.array_equal(alone[k][0], base[k][g]) for k in base)


def test_seed_changes_games(base):
    other = simulate(RULES, LINEUP, seed=12, n_games=600, chunk=64)
    assert not np.array_equal(other["final_dial"], base["final_dial"])


def test_records_false_is_refused():
    from fbsim.errors import UsageError

    with pytest.raises(UsageError, match="records only"):
        simulate(RULES, LINEUP, seed=3, n_games=10, records=False)


def test_numba_num_threads_1_and_2_give_the_same_bytes(tmp_path):
    # the same records from fresh processes started with NUMBA_NUM_THREADS=1 and =2
    import os
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from fbsim.kernel import simulate\n"
        "from fbsim.lineup import parse_lineup\n"
        "from fbsim.rules import load_rules\n"
        "c = simulate(load_rules(sets=['players=5']), parse_lineup(seats=['1=random']),"
        " seed=11, n_games=400, chunk=16)\n"
        "np.savez(sys.argv[1], **c)\n"
    )
    outs = []
    for threads in ("1", "2"):
        out = tmp_path / f"t{threads}.npz"
        env = dict(os.environ, NUMBA_NUM_THREADS=threads)
        subprocess.run([sys.executable, "-c", code, str(out)], env=env, check=True)
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def tally_state(t) -> tuple:
    return (t.games, t.s1.tobytes(), t.s2.tobytes(), t.dial_hist.tobytes(),
            t.dial_round_hist.tobytes(), t.old_dial_hist.tobytes())


@pytest.mark.slow
@pytest.mark.parametrize("threads,block", [(1, 8192), (2, 8192), (2, 97), (2, 1)])
def test_runner_blocks_in_flight_count_the_same(threads, block):
    # On more than one thread the runner plays the next block while it counts one (two sets
    # of arrays and measures in turn): two arms counted paired, block after block, give the
    # same integers as one thread in one block, and every block reaches `consume` in order,
    # holding the kernel's records of exactly its games.
    from fbsim.experiments.metrics.tally import Tally
    from fbsim.experiments.run.runner import Arm, run_blocks

    other = load_rules(sets=["players=5", "rounds=6"])
    arms = [Arm(RULES, LINEUP), Arm(other, LINEUP)]
    games = 300

    def run(threads: int, block: int):
        tally = Tally.for_rules(RULES, LINEUP, paired=True)
        firsts = []
        prev = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            def consume(first, recs, blocks):
                firsts.append(first)
                assert np.array_equal(recs[0]["game"],
                                      np.arange(first, first + len(recs[0]["game"])))
                tally.add(blocks[0], blocks[1])  # measured chunk by chunk as they were played
                if block < 8192 and first % 3 == 0:  # spot-check a block against the kernel
                    want = simulate(other, LINEUP, seed=5, n_games=len(recs[1]["game"]),
                                    first_game=first)
                    assert same(recs[1], want)
                    again = tally.measure(recs[1], other, LINEUP)  # measured again, at once
                    assert np.array_equal(again.y, blocks[1].y)
                    assert np.array_equal(again.x, blocks[1].x)

            run_blocks(arms, 5, 0, games, consume, block=block, tallies=[tally, tally])
        finally:
            numba.set_num_threads(prev)
        return tally, firsts

    want, _ = run(1, 8192)
    got, firsts = run(threads, block)
    assert firsts == list(range(0, games, min(block, games)))
    assert tally_state(got) == tally_state(want)
