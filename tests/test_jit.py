"""How shared code is compiled (`fbsim.game.jit`): the code a compiled function links in is
made private to it before LLVM optimises it, so that LLVM may inline it and drop unread
arguments; the library's own functions and declarations are left as they were."""

from __future__ import annotations

import numpy as np
from llvmlite import binding as llvm
from numba import njit
from numba.core.codegen import CPUCodeLibrary

from fbsim.game.jit import INTERNAL_LINKAGE, internalise_linked_code

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
    wraps (which records the linkage each function had when it ran)."""

    def __init__(self):
        llvm.initialize_native_target()
        self._final_module = llvm.parse_assembly(IR)
        self.seen = None

    def _optimize_final_module(self):
        self.seen = {fn.name: fn.linkage for fn in self._final_module.functions}


def test_the_hook_is_installed_on_numbas_libraries():
    assert INTERNAL_LINKAGE
    assert getattr(CPUCodeLibrary._optimize_final_module, "internalises_linked_code", False)


def test_linked_code_is_internal_when_optimised_and_nothing_else_changes():
    assert internalise_linked_code(FakeLibrary)
    assert internalise_linked_code(FakeLibrary)  # installed once: a second call wraps nothing
    lib = FakeLibrary()
    lib._optimize_final_module()
    assert lib.seen == {"linked": llvm.Linkage.internal, "own": llvm.Linkage.external,
                        "elsewhere": llvm.Linkage.external}


def test_a_function_calling_another_compiles_and_agrees_with_python():
    @njit(cache=False)
    def inner(a, i):
        return a[i] * 2 + 1

    @njit(cache=False)
    def outer(a):
        t = 0
        for i in range(a.shape[0]):
            t += inner(a, i) - inner(a, a.shape[0] - 1 - i)
        return t + inner(a, 0)

    a = np.arange(1, 12, dtype=np.int64) ** 2
    assert outer(a) == outer.py_func(a) == 3
    linkages = {fn.linkage for fn in outer.overloads[outer.signatures[0]].library
                ._final_module.functions if not fn.is_declaration}
    assert llvm.Linkage.linkonce_odr not in linkages
