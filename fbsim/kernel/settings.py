"""The kernel's settings from the environment (read without importing numba, so that the
command line checks them before any command runs)."""

from __future__ import annotations

import os

from fbsim.errors import UsageError, shown

CHECKED_ENV = "FBSIM_CHECKED"  # "1": every run uses checked builds
SHAPES_ENV = "FBSIM_SHAPES"  # which tables' shapes get fast builds of their own
SHAPES_SETTINGS = ("standard", "all", "none")
LLVM_TUNING_ENV = "FBSIM_LLVM_TUNING"  # "0": no LLVM tuning of fbsim's code (`kernel.llvm`)


def checked_default() -> bool:
    """FBSIM_CHECKED: whether runs use the checked build unless told."""
    return os.environ.get(CHECKED_ENV, "") not in ("", "0")


def shapes_setting() -> str:
    """FBSIM_SHAPES: which tables' shapes get fast builds of their own (SHAPES_SETTINGS,
    `fbsim.kernel.build.shaped`); a bad value is a usage error."""
    value = os.environ.get(SHAPES_ENV, "").strip().lower() or "standard"
    if value not in SHAPES_SETTINGS:
        raise UsageError(f"{SHAPES_ENV}={value!r}: expected one of "
                         f"{', '.join(SHAPES_SETTINGS)}")
    return value


def llvm_tuning_setting() -> bool:
    """FBSIM_LLVM_TUNING: whether fbsim's compiled code is tuned (`fbsim.kernel.llvm`); a bad
    value is a usage error."""
    tuning = os.environ.get(LLVM_TUNING_ENV, "1").strip() or "1"
    if tuning not in ("0", "1"):
        raise UsageError(f"{LLVM_TUNING_ENV}={shown(tuning)}: expected 1 (fbsim's compiled code "
                         "tuned, the default) or 0 (compiled as numba does by default)")
    return tuning == "1"
