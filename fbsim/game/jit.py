"""The one place that decides how shared code is compiled.

Code that runs in both engines (the RNG, the bots) is decorated with `shared`: numba compiles
it (cached on disk), and the reference engine calls the same compiled functions. Setting
`NUMBA_DISABLE_JIT=1` runs every such function as plain Python with identical results (the
test suite checks this), which is also the way to step through a bot in a debugger.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numba
import numpy as np
from numba import njit

# _nrt=False: shared functions never allocate, so numba need not reference-count the arrays
# they are passed; that bookkeeping (atomic increments at every call) was a third of the
# kernel's time.
shared = njit(cache=True, nogil=True, _nrt=False)
# A switch between calls (the kernel's dispatch to a bot, its step dispatch) is inlined into
# its caller by numba: each call between compiled functions passes every array as its seven
# words (about 45 words for a step), so a call that only chooses another call costs as much
# as the work. Also inlined: what is compiled only to be called from one or two places, where
# a function of its own costs compile time and no run time (the engine's small helpers, the
# game's loop around its rounds, the one-line per-game metric terms that the block measure
# calls once each): numba compiles every function with a fixed cost of about 0.1-0.2 s of a
# cold start, and every function's library optimises again the code it links in. Inlining
# the bots' shared helpers measured slower (LLVM inlines those itself:
# `internalise_linked_code`; numba's inlining makes worse code of them), and inlining the
# steps compiled slower. The round is inlined into the chunk's game loop, which allocates
# nothing and so counts no references (it had counted every array slice of the inlined round).
shared_inline = njit(cache=True, nogil=True, _nrt=False, inline="always")


def owns(library, package: str = "fbsim") -> bool:
    """Whether a numba library compiles code of `package` (one of its functions, by numba's
    mangled name, comes from a module of the package or from a module it generated, such as
    `fbsim_kernel_<digest>`)."""
    tag = f"{len(package)}{package}"  # the length-prefixed name numba's mangling writes
    for fn in library._final_module.functions:
        if not fn.is_declaration and (tag in fn.name or f"{package}_" in fn.name):
            return True
    return False


def internalise_linked_code(library_class=None) -> bool:
    """Let LLVM treat the code a compiled function links in as its own private code, and
    compile the package's loops without LLVM's loop vectoriser.

    numba compiles every function into a library of its own and links a copy of each callee's
    library into its caller's, marking the copied functions `linkonce_odr` (a definition that
    another module might replace). LLVM may not change the signature of such a function nor
    count its callers, so every call between two compiled functions kept its full calling
    convention (each array as seven words) and nothing called from one place was inlined. The
    copies are private to the library they are linked into (numba only ever calls a library
    through its own entry points), so this marks them `internal` before the library is
    optimised: LLVM then inlines a function called from one place, drops the arguments a
    callee never reads and propagates constants across calls (the 4-player kernel about 20%
    faster in results/bench.md's measurements; the same instructions otherwise, so the same
    results: the engines' game-for-game tests run on code compiled this way).

    The package's loops run over seats, tokens, market slots or asset kinds: a handful of
    iterations, each reading the rules vector at an index that depends on the data. LLVM's
    loop vectoriser turns such loops into gathers (slow on the processors measured) and
    vector reductions behind run-time checks of the trip count; the package's libraries are
    therefore optimised with it off (`owns`: the kernel 2-5% faster at 4 players in
    results/bench.md; integer code, so the same results). Other
    numba code in the process compiles as numba's settings say.

    Installed once, for the process, when this module is imported; a numba without the hook
    compiles as before. Returns whether the hook is installed."""
    if library_class is None:
        try:
            from numba.core.codegen import CPUCodeLibrary as library_class
        except ImportError:  # pragma: no cover - a numba without this class
            return False
    optimise = getattr(library_class, "_optimize_final_module", None)
    if optimise is None:  # pragma: no cover - a numba without the hook
        return False
    if getattr(optimise, "internalises_linked_code", False):
        return True
    from llvmlite import binding as llvm

    def optimise_final_module(library):
        for fn in library._final_module.functions:
            if not fn.is_declaration and fn.linkage == llvm.Linkage.linkonce_odr:
                fn.linkage = llvm.Linkage.internal
        if not owns(library):
            optimise(library)
            return
        vectorise = numba.config.LOOP_VECTORIZE  # read by numba's pass builder when it runs
        numba.config.LOOP_VECTORIZE = 0  # (compiles hold numba's compiler lock)
        try:
            optimise(library)
        finally:
            numba.config.LOOP_VECTORIZE = vectorise

    optimise_final_module.internalises_linked_code = True
    library_class._optimize_final_module = optimise_final_module
    return True


INTERNAL_LINKAGE = internalise_linked_code()

if numba.config.DISABLE_JIT:
    # Plain-Python mode: the RNG's uint64 arithmetic wraps on purpose, as it does compiled;
    # numpy would warn about each wrap.
    np.seterr(over="ignore")


def generated_module(name: str, source: str):
    """Import `source` as module `name`, written as a real file beside numba's cache (numba
    caches compiled functions per source file, and re-imports their module by name when it
    loads them). The file is rewritten only when its text changes, so the cache stays valid;
    `name` should carry a digest of `source`."""
    mod = sys.modules.get(name)
    if mod is not None:
        return mod
    base = Path(os.environ["NUMBA_CACHE_DIR"])
    base.mkdir(parents=True, exist_ok=True)
    path = base / f"{name}.py"
    if not path.exists() or path.read_text() != source:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(source)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
