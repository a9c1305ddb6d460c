"""The one place that decides how shared code is compiled.

Code that runs in both engines (the RNG, the bots) is decorated with `shared`: numba compiles
it (cached on disk), and the reference engine calls the same compiled functions. Setting
`NUMBA_DISABLE_JIT=1` runs every such function as plain Python with identical results (the
test suite checks this), which is also the way to step through a bot in a debugger.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit
from numba.extending import register_jitable

from fbsim.game import layout as L

# before any compile: numba's cache index written under a lock (`kernel.cachelock`), and how
# LLVM optimises fbsim's code (`kernel.llvm`)
from fbsim.kernel import cachelock, llvm  # noqa: F401

# _nrt=False: shared functions never allocate, so numba need not count references to the
# arrays they are passed.
shared = njit(cache=True, nogil=True, _nrt=False)
# A call that only chooses another call (a bot dispatch, a step), and code called from one or
# two places, is inlined into its caller: a call between compiled functions passes each array
# as seven words, and each function compiled on its own adds to the cold start.
shared_inline = njit(cache=True, nogil=True, _nrt=False, inline="always")

for _index in L.ACCESSORS:  # the layout's index functions, callable from compiled code
    register_jitable(inline="always")(_index)

if numba.config.DISABLE_JIT:
    # Plain-Python mode: the RNG's uint64 arithmetic wraps on purpose, as it does compiled;
    # numpy would warn about each wrap.
    np.seterr(over="ignore")
