"""How LLVM optimises fbsim's own compiled code: one hook on numba's code libraries, for
fbsim's libraries only, on unless `FBSIM_LLVM_TUNING=0`.

numba compiles every function into a library of its own and links a copy of each callee's
library into its caller's, marking the copies `linkonce_odr`, which keeps LLVM from inlining
them or dropping the arguments they never read. In fbsim's libraries the copies are marked
`internal` before the library is optimised (numba calls a library only through its own entry
points), and LLVM's loop vectoriser is off: fbsim's loops run over a handful of seats, tokens
or market slots, where it makes slower code. The instructions' meaning is unchanged, so the
results are the same with the hook off (a test compares the records); the speed is in
results/bench.md. Any other numba code in the process is compiled as numba's settings say.
"""

from __future__ import annotations

import os

import numba

from fbsim.kernel.settings import LLVM_TUNING_ENV as ENV


def enabled() -> bool:
    """Whether the hook is wanted (the setting is checked at start: `kernel.settings`)."""
    return os.environ.get(ENV, "1").strip() != "0"


def owns(library, package: str = "fbsim") -> bool:
    """Whether a numba library compiles code of `package`: one of its defined functions, by
    numba's mangled name, comes from a module of the package or one it generated
    (`fbsim_measure_<digest>`, the block measure)."""
    tag = f"{len(package)}{package}"  # the length-prefixed name numba's mangling writes
    return any(not fn.is_declaration and (tag in fn.name or f"{package}_" in fn.name)
               for fn in library._final_module.functions)


def internalise_linked_code(library_class=None) -> bool:
    """Install the hook (see the module's docstring) on `library_class` (numba's
    `CPUCodeLibrary`), once; returns whether it is installed (False on a numba without the
    method it wraps)."""
    if library_class is None:
        try:
            from numba.core.codegen import CPUCodeLibrary as library_class
        except ImportError:  # pragma: no cover - a numba without this class
            return False
    optimise = getattr(library_class, "_optimize_final_module", None)
    if optimise is None:  # pragma: no cover - a numba without the method
        return False
    if getattr(optimise, "internalises_linked_code", False):
        return True
    from llvmlite import binding as llvm

    def optimise_final_module(library):
        if not owns(library):
            optimise(library)
            return
        for fn in library._final_module.functions:
            if not fn.is_declaration and fn.linkage == llvm.Linkage.linkonce_odr:
                fn.linkage = llvm.Linkage.internal
        vectorise = numba.config.LOOP_VECTORIZE  # read by numba's pass builder when it runs
        numba.config.LOOP_VECTORIZE = 0  # (compiles hold numba's compiler lock)
        try:
            optimise(library)
        finally:
            numba.config.LOOP_VECTORIZE = vectorise

    optimise_final_module.internalises_linked_code = True
    library_class._optimize_final_module = optimise_final_module
    return True


INSTALLED = enabled() and internalise_linked_code()
