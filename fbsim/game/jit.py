"""The one place that decides how shared code is compiled.

Code that runs in both engines (the RNG, the bots) is decorated with `shared`: numba compiles
it (cached on disk), and the reference engine calls the same compiled functions. Setting
`NUMBA_DISABLE_JIT=1` runs every such function as plain Python with identical results (the
test suite checks this), which is also the way to step through a bot in a debugger.
"""

from __future__ import annotations

import hashlib

import numba
import numpy as np
from numba import njit, types
from numba.core.datamodel import register_default
from numba.core.datamodel.models import OpaqueModel
from numba.extending import NativeValue, unbox

from fbsim.kernel import llvm  # noqa: F401  (how LLVM optimises fbsim's code, before any compile)

# _nrt=False: shared functions never allocate, so numba need not count references to the
# arrays they are passed.
shared = njit(cache=True, nogil=True, _nrt=False)
# A call that only chooses another call (a bot dispatch, a step), and code called from one or
# two places, is inlined into its caller: a call between compiled functions passes each array
# as seven words, and each function compiled on its own adds to the cold start.
shared_inline = njit(cache=True, nogil=True, _nrt=False, inline="always")

if numba.config.DISABLE_JIT:
    # Plain-Python mode: the RNG's uint64 arithmetic wraps on purpose, as it does compiled;
    # numpy would warn about each wrap.
    np.seterr(over="ignore")


class StaticType(types.Type):
    """numba's type of a `Static`: a value that compiled code reads at compile time, holding no
    data at run time. numba compiles each function passed a Static once per value, and caches
    it on disk under that value, with no source generated: the kernel's builds are specialised
    this way (`fbsim.kernel.buildtype`). Register a subclass with `static_type`."""

    def __init__(self, value, name: str):
        self.value = value
        super().__init__(name=name)

    @property
    def key(self):
        return type(self).__name__, self.value

    @property
    def mangling_args(self):  # each value's functions have names of their own
        return type(self).__name__, [hashlib.sha256(repr(self.value).encode()).hexdigest()[:16]]


class Static:
    """A compile-time value passed to compiled code as an argument, of numba type `numba_type`
    (a `StaticType`); `value` is the same value, for plain Python (`NUMBA_DISABLE_JIT=1`)."""

    __slots__ = ("value", "_numba_type_")

    def __init__(self, numba_type: StaticType):
        self.value = numba_type.value
        self._numba_type_ = numba_type


def _unbox_nothing(typ, obj, c):
    return NativeValue(c.context.get_dummy_value())  # only the type is read


def static_type(cls):
    """Register a StaticType subclass with numba: no data, unboxed as nothing."""
    register_default(cls)(OpaqueModel)
    unbox(cls)(_unbox_nothing)
    return cls


static_type(StaticType)
