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

# _nrt=False: shared functions never allocate, so numba need not reference-count the arrays
# they are passed; that bookkeeping (atomic increments at every call) was a third of the
# kernel's time.
shared = njit(cache=True, nogil=True, _nrt=False)

if numba.config.DISABLE_JIT:
    # Plain-Python mode: the RNG's uint64 arithmetic wraps on purpose, as it does compiled;
    # numpy would warn about each wrap.
    np.seterr(over="ignore")
