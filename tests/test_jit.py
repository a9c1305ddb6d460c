"""How LLVM optimises fbsim's compiled code (`fbsim.kernel.llvm`): in fbsim's own libraries
the code a compiled function links in is made private to it before LLVM optimises it, so
that LLVM may inline it and drop unread arguments, and loops are not vectorised; the
library's own functions and declarations are left as they were, and other numba code in the
process is compiled as numba's settings say. With the hook off, the records are the same."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from llvmlite import binding as llvm
from numba.core.codegen import CPUCodeLibrary

from fbsim.kernel.llvm import INSTALLED, internalise_linked_code, owns

IR = """
define linkonce_odr i64 @linked(i64 %x) {
  ret i64 %x
}
define i64 @own(i64 %x) {
  %y = call i64 @linked(i64 %x)
  ret i64 %y
}
declare i64 @elsewhere(i64)
"""


class FakeLibrary:
    """What the hook reads of a numba library: its final module, and the optimisation it
    wraps (which records the linkage each function had when it ran, and whether loops were
    to be vectorised)."""

    def __init__(self, ir=IR):
        llvm.initialize_native_target()
        self._final_module = llvm.parse_assembly(ir)
        self.seen = None
        self.vectorise = None

    def _optimize_final_module(self):
        self.seen = {fn.name: fn.linkage for fn in self._final_module.functions}
        self.vectorise = numba.config.LOOP_VECTORIZE


def test_the_hook_is_installed_on_numbas_libraries():
    assert INSTALLED
    assert getattr(CPUCodeLibrary._optimize_final_module, "internalises_linked_code", False)


OURS = IR.replace("@own", "@_ZN5fbsim4game3own")


def test_linked_code_is_internal_when_optimised_and_nothing_else_changes():
    assert internalise_linked_code(FakeLibrary)
    assert internalise_linked_code(FakeLibrary)  # installed once: a second call wraps nothing
    lib = FakeLibrary(OURS)
    lib._optimize_final_module()
    assert lib.seen == {"linked": llvm.Linkage.internal, "_ZN5fbsim4game3own":
                        llvm.Linkage.external, "elsewhere": llvm.Linkage.external}


def test_other_numba_code_keeps_numbas_linkage():
    internalise_linked_code(FakeLibrary)
    lib = FakeLibrary()
    lib._optimize_final_module()
    assert lib.seen == {"linked": llvm.Linkage.linkonce_odr, "own": llvm.Linkage.external,
                        "elsewhere": llvm.Linkage.external}


CALLS = """
from numba import njit


@njit(cache=False)
def inner(a, i):
    return a[i] * 2 + 1


@njit(cache=False)
def outer(a):
    t = 0
    for i in range(a.shape[0]):
        t += inner(a, i) - inner(a, a.shape[0] - 1 - i)
    return t + inner(a, 0)
"""


def test_a_function_calling_another_compiles_and_agrees_with_python(tmp_path, monkeypatch):
    from fbsim.experiments.metrics.compiled import generated_module

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    outer = generated_module("other_test_calls", CALLS).outer  # a module not of fbsim
    a = np.arange(1, 12, dtype=np.int64) ** 2
    assert outer(a) == outer.py_func(a) == 3
    linkages = {fn.linkage for fn in outer.overloads[outer.signatures[0]].library
                ._final_module.functions if not fn.is_declaration}
    assert llvm.Linkage.linkonce_odr in linkages  # not fbsim's code: numba's own linkage


def test_fbsims_compiled_code_links_its_callees_privately(tmp_path, monkeypatch):
    from fbsim.experiments.metrics.compiled import generated_module

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    mod = generated_module("fbsim_test_private_links", CALLS)
    a = np.arange(1, 12, dtype=np.int64) ** 2
    assert mod.outer(a) == 3
    lib = mod.outer.overloads[mod.outer.signatures[0]].library
    linkages = {fn.linkage for fn in lib._final_module.functions if not fn.is_declaration}
    assert llvm.Linkage.linkonce_odr not in linkages and llvm.Linkage.internal in linkages


def test_the_package_s_libraries_are_optimised_without_the_loop_vectoriser():
    internalise_linked_code(FakeLibrary)
    before = numba.config.LOOP_VECTORIZE
    ours = FakeLibrary(OURS)
    ours._optimize_final_module()
    assert ours.vectorise == 0 and numba.config.LOOP_VECTORIZE == before  # restored after
    theirs = FakeLibrary()
    theirs._optimize_final_module()
    assert theirs.vectorise == before


def test_owns_reads_the_mangled_names_of_defined_functions_only():
    assert owns(FakeLibrary(IR.replace("@own", "@_ZN5fbsim8policies7steward6commit")))
    assert owns(FakeLibrary(IR.replace("@own", "@_ZN25fbsim_kernel_0123456789ab3run")))
    assert not owns(FakeLibrary())
    assert not owns(FakeLibrary(IR.replace("@elsewhere", "@_ZN5fbsim4game8elsewhere")))
    assert not owns(FakeLibrary(IR.replace("@own", "@_ZN9notfbsim24own")))


SUM = """
from numba import njit


@njit(cache=False)
def total(a):
    t = 0
    for i in range(a.shape[0]):
        t += a[i] * 3
    return t
"""


def test_a_package_loop_compiles_scalar_and_another_vectorised(tmp_path, monkeypatch):
    """The same summing loop, compiled from a module of the package (a generated
    `fbsim_...` module, as the kernel's builds are) and from one outside it: the first has
    no packed vector arithmetic, the second does (numba's default)."""
    from fbsim.experiments.metrics.compiled import generated_module

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    ours = generated_module("fbsim_test_scalar_loops", SUM)
    a = np.arange(1000, dtype=np.int64)
    assert ours.total(a) == 3 * a.sum()
    ns = {}
    exec(compile(SUM, "<theirs>", "exec"), ns)
    assert ns["total"](a) == 3 * a.sum()

    def packed(fn):
        """Packed 64-bit integer arithmetic in the function's machine code (x86-64's SSE2 /
        AVX forms, or AArch64's NEON on .2d lanes)."""
        asm = next(iter(fn.inspect_asm().values()))
        return any(op in asm for op in ("paddq", "vpaddq", "vpmullq", "pmuludq", ".2d"))

    assert not packed(ours.total)
    assert packed(ns["total"])


DIGEST = """
import hashlib, sys
from fbsim.lineup import parse_lineup
from fbsim.kernel import simulate
from fbsim.kernel.llvm import INSTALLED
from fbsim.rules import load_rules

h = hashlib.sha256()
for n, lineup in ((4, None),):
    cols = simulate(load_rules(players=n), parse_lineup(lineup) if lineup else None, seed=7,
                    n_games=2000, checked=False)
    for k in sorted(cols):
        h.update(k.encode() + cols[k].tobytes())
print(INSTALLED, h.hexdigest())
"""


@pytest.mark.slow
def test_the_records_are_the_same_with_the_llvm_tuning_off(tmp_path):
    """FBSIM_LLVM_TUNING=0 compiles fbsim's code as numba does by default (into a cache of its
    own): the fast build's records at 4 players are the same bytes."""
    import os
    import subprocess
    import sys

    def digest(tuning: str, cache: str | None) -> list[str]:
        env = {**os.environ, "FBSIM_LLVM_TUNING": tuning}
        if cache is not None:
            env["NUMBA_CACHE_DIR"] = cache
        out = subprocess.run([sys.executable, "-P", "-c", DIGEST], env=env, check=True,
                             capture_output=True, text=True, timeout=600)
        return out.stdout.split()

    off = digest("0", str(tmp_path / "untuned"))
    on = digest("1", None)
    assert off[0] == "False" and on[0] == "True"
    assert off[1] == on[1]


PLAIN = """
import hashlib, json, sys
import numba
from fbsim.lineup import parse_lineup
from fbsim.kernel import Prepared, simulate
from fbsim.rules import load_rules

out = {"jit": not numba.config.DISABLE_JIT, "games": []}
for n, lineup in json.loads(sys.argv[1]):
    rules = load_rules(players=n)
    lu = parse_lineup(lineup) if lineup else None
    cols = simulate(rules, lu, seed=3, n_games=5, checked=False)
    h = hashlib.sha256()
    for k in sorted(cols):
        h.update(k.encode() + cols[k].tobytes())
    out["games"].append([Prepared(rules, lu).build.label, h.hexdigest()])
print(json.dumps(out))
"""


def test_a_fast_builds_games_step_through_as_plain_python_with_the_same_records():
    """With NUMBA_DISABLE_JIT=1 the engine (`fbsim/kernel/engine.py`, the code every build
    runs) plays a fast specialised build for one shape as plain Python, where a debugger can
    stop in it: the same records as compiled."""
    import json
    import os
    import subprocess
    import sys

    cases = [[4, None], [3, "accelerationist=hoarder"]]

    def run(disable: str) -> dict:
        env = {**os.environ, "NUMBA_DISABLE_JIT": disable, "FBSIM_SHAPES": "standard",
               "FBSIM_SPECIALISE": "lineups"}
        proc = subprocess.run([sys.executable, "-P", "-c", PLAIN, json.dumps(cases)], env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads(proc.stdout)

    plain, compiled = run("1"), run("0")
    assert plain["jit"] is False and compiled["jit"] is True
    assert plain["games"] == compiled["games"]
    assert all(label.startswith("fast ") and " for " in label for label, _ in plain["games"])


def test_a_build_is_compiled_under_its_own_lock_once_per_process(monkeypatch):
    """A process compiles (or loads) each build the first time it plays it holding that
    build's lock file, and only then: another process about to compile the same build waits,
    one compiling another build does not."""
    from fbsim.kernel import build as B
    from fbsim.kernel import simulate
    from fbsim.rules import load_rules

    taken = []

    class Recording:
        def __init__(self, path, **kwargs):
            taken.append(path)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(B, "FileLock", Recording)
    monkeypatch.setattr(B, "_ready", set())
    rules = load_rules(players=3)
    first = simulate(rules, n_games=20, seed=4)
    assert len(taken) == 1 and "fbsim-compile-" in taken[0]
    again = simulate(rules, n_games=20, seed=4)
    assert len(taken) == 1  # the same build: played at once
    simulate(rules, n_games=20, seed=4, checked=True)
    assert len(taken) == 2 and taken[1] != taken[0]  # another build: a lock of its own
    assert all(np.array_equal(first[k], again[k]) for k in first)


ADD_VERSIONS = """
import sys
from numba.core.caching import IndexDataCacheFile
import fbsim.kernel.cachelock  # noqa: F401 (the lock, as fbsim installs it)
folder, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
f = IndexDataCacheFile(folder, "entry-1.py311", "stamp")
for i in range(count):
    f.save((worker, i), ("data", worker, i))
"""


def test_two_processes_adding_versions_of_one_function_lose_none(tmp_path):
    """kernel.cachelock: numba's cache index is read, extended and written under a lock, so
    two processes adding different versions of one function at once (two builds compiled in
    parallel) keep every version, each naming its own data."""
    import subprocess
    import sys

    from numba.core.caching import IndexDataCacheFile

    count = 150
    procs = [subprocess.Popen([sys.executable, "-c", ADD_VERSIONS, str(tmp_path), str(w),
                               str(count)]) for w in (0, 1)]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    f = IndexDataCacheFile(str(tmp_path), "entry-1.py311", "stamp")
    for w in (0, 1):
        for i in range(count):
            assert f.load((w, i)) == ("data", w, i)
