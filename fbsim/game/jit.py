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
# the bots' shared helpers measured slower (LLVM already inlines those; numba's inlining
# makes worse code of them) and so did inlining the round into the game loop.
shared_inline = njit(cache=True, nogil=True, _nrt=False, inline="always")

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
