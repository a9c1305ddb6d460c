"""The helper process that compiles the block measure while the kernel compiles
(`fbsim.experiments.run.prewarm`): it must compile the very version the runner calls, so that
the runner loads it from numba's cache instead of compiling it again."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import pytest

from fbsim.experiments.metrics.tally import Tally
from fbsim.experiments.run import prewarm
from fbsim.lineup import Lineup, parse_lineup
from fbsim.rules import load_rules

# a process measuring chunks of 5 games and of 1 game as the runner does; prints the measure's
# compiles and cache loads
MEASURE = """
import pickle, sys
from fbsim.experiments.metrics.tally import Tally
from fbsim.kernel import Records
rules, lineup = pickle.load(sys.stdin.buffer)
m = Tally.for_rules(rules, lineup).measurer(rules, lineup)
rec = Records(6)
G, SE, _, DR = rec.arrays(6)
for a in (G, SE, DR):
    a[:] = 0
m.start(6)
m.chunk((G, SE, DR), 0, 5)
m.chunk((G, SE, DR), 5, 6)
m.finish()
s = m.fn.stats
print(sum(s.cache_misses.values()), sum(s.cache_hits.values()), len(m.fn.signatures))
"""


def run(args: list[str], data: bytes, cache: str) -> str:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    env.pop("NUMBA_DISABLE_JIT", None)
    out = subprocess.run([sys.executable, *args], input=data, env=env, capture_output=True,
                         check=True)
    return out.stdout.decode()


@pytest.mark.slow
def test_the_helper_compiles_the_measure_the_runner_loads(tmp_path):
    rules, lineup = load_rules(players=3), parse_lineup("steward=hoarder")
    tally = Tally.for_rules(rules, lineup)
    m = tally.measurer(rules, lineup)
    cache = str(tmp_path / "cache")
    run(["-m", "fbsim.experiments.run.prewarm"],
        pickle.dumps((rules, lineup, tally.bots, m.metrics)), cache)
    misses, hits, versions = map(int, run(["-c", MEASURE], pickle.dumps((rules, lineup)),
                                          cache).split())
    # loaded from the helper's cache, not compiled; one version for chunks of 5 and of 1
    assert (misses, hits, versions) == (0, 1, 1)


@pytest.mark.slow
def test_a_cold_measure_compiles_one_version_for_any_chunk(tmp_path):
    misses, hits, versions = map(int, run(["-c", MEASURE],
                                          pickle.dumps((load_rules(players=5), Lineup())),
                                          str(tmp_path / "cache")).split())
    assert (misses, hits, versions) == (1, 0, 1)


def test_a_helper_starts_only_for_a_measure_not_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    module = "fbsim_measure_000000000000"
    assert not prewarm.is_cached(module)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / f"{module}.measure-8.py311.nbi").write_bytes(b"")
    assert prewarm.is_cached(module)


def test_one_helper_per_measure_per_process(monkeypatch):
    rules, lineup = load_rules(players=4), Lineup()
    tally = Tally.for_rules(rules, lineup)
    m = tally.measurer(rules, lineup)
    monkeypatch.setattr(prewarm, "_started", {})
    started = []
    monkeypatch.setattr(prewarm, "is_cached", lambda module: False)
    monkeypatch.setattr(prewarm.subprocess, "Popen",
                        lambda *a, **k: started.append(a) or FakeProc())
    first = prewarm.start(m, rules, lineup, tally.bots)
    again = prewarm.start(m, rules, lineup, tally.bots)
    assert first is again and len(started) == 1
    first.wait()
    first.wait()  # at once the second time


class FakeProc:
    def __init__(self):
        self.stdin = open(os.devnull, "wb")
        self.waited = 0

    def wait(self, timeout=None):
        self.waited += 1
        assert self.waited == 1
        return 0
