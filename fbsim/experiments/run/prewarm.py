"""The block measure compiled in a second process while this one compiles the kernel.

On a cold cache the runner path compiles two independent things: the lineup's kernel build
(most of the time) and the block measure of its metrics (`fbsim.experiments.metrics.compiled`,
about a fifth). numba compiles one function at a time in a process, so the runner starts a
helper process (`python -m fbsim.experiments.run.prewarm`) that compiles the measure into
numba's disk cache while this process compiles the kernel; the first chunk to be measured
waits for the helper, then loads the measure from the cache (a shorter cold start:
results/bench.md).

Only the measure, and only while this process waits for it: numba's cache index is not safe
against two processes adding different versions of one function at the same moment, and the
two processes never compile the same function this way (the kernel calls no metric code, and
this process compiles nothing of the measure before the helper has finished). Nothing is
started when the measure is in the cache already, when numba's JIT is off, or when no process
can be started: the helper only saves time, and no result depends on it (the same function,
compiled for the same argument types, whichever process compiles it).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path

import numba

WAIT_S = 300  # the longest a run waits for the helper (then it compiles the measure itself)

_started: dict[str, Helper] = {}  # one helper per measure per process
_lock = threading.Lock()


class Helper:
    """A helper process compiling one measure; `wait()` (thread-safe, from any chunk) returns
    once it has finished, at once after the first time."""

    def __init__(self, proc: subprocess.Popen | None):
        self._proc = proc
        self._lock = threading.Lock()

    def wait(self) -> None:
        if self._proc is None:
            return
        with self._lock:
            if self._proc is not None:
                try:
                    self._proc.wait(timeout=WAIT_S)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
                self._proc = None


READY = Helper(None)


def module_of(measure) -> str:
    """The generated module of a `Measure`'s compiled function (its name carries a digest
    of the metric list)."""
    return measure.fn.py_func.__module__


def is_cached(module: str) -> bool:
    """Whether numba's disk cache holds a compiled `measure` of this generated module."""
    base = os.environ.get("NUMBA_CACHE_DIR")
    return base is None or any(Path(base).glob(f"**/{module}.measure-*.nbi"))


def start(measure, rules, lineup, bots: tuple[str, ...]) -> Helper:
    """The helper compiling `measure` (a `fbsim.experiments.metrics.measure.Measure` of
    these rules, lineup and per-bot rows), started if its measure is not cached yet."""
    if numba.config.DISABLE_JIT:
        return READY
    module = module_of(measure)
    with _lock:
        helper = _started.get(module)
        if helper is not None:
            return helper
        helper = READY
        if not is_cached(module):
            try:
                proc = subprocess.Popen([sys.executable, "-P", "-m", __name__],
                                        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
                with proc.stdin:
                    proc.stdin.write(pickle.dumps((rules, lineup, bots, measure.metrics)))
                helper = Helper(proc)
            except OSError:  # no process could be started (or it died at once): no helper
                helper = READY
        _started[module] = helper
        return helper


def compile_measure(rules, lineup, bots: tuple[str, ...], metric_list: list) -> None:
    """Compile (or load) the block measure of this setting, as the runner calls it (on a
    block of two empty records)."""
    from fbsim.experiments.metrics.measure import Measure
    from fbsim.kernel import Records

    m = Measure(rules, lineup, bots, metric_list)
    rec = Records(2)
    G, SE, _, DR = rec.arrays(2)
    for a in (G, SE, DR):
        a[:] = 0
    m.start(2)
    m.chunk((G, SE, DR), 0, 2)


def main() -> None:
    compile_measure(*pickle.load(sys.stdin.buffer))


if __name__ == "__main__":
    main()
