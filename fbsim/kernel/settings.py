"""The kernel's settings from the environment (read without importing numba, so that the
command line checks them before any command runs)."""

from __future__ import annotations

import os

from fbsim.errors import UsageError, shown

CHECKED_ENV = "FBSIM_CHECKED"  # "1": every run uses checked builds
SHAPES_ENV = "FBSIM_SHAPES"  # which tables' shapes get fast builds of their own
SHAPES_SETTINGS = ("standard", "all", "none")
SPECIALISE_ENV = "FBSIM_SPECIALISE"  # which lineups get fast builds of their own bots
SPECIALISE_SETTINGS = ("lineups", "default", "none")
LLVM_TUNING_ENV = "FBSIM_LLVM_TUNING"  # "0": no LLVM tuning of fbsim's code (`kernel.llvm`)


def checked_default() -> bool:
    """FBSIM_CHECKED: whether runs use the checked build unless told (1), or not (0, the
    default; blank is unset); any other value is a usage error."""
    checked = os.environ.get(CHECKED_ENV, "0").strip() or "0"
    if checked not in ("0", "1"):
        raise UsageError(f"{CHECKED_ENV}={shown(checked)}: expected 1 (every run plays the "
                         "checked build) or 0 (the fast build unless --checked, the default)")
    return checked == "1"


def shapes_setting() -> str:
    """FBSIM_SHAPES: which tables' shapes get fast builds of their own (SHAPES_SETTINGS,
    `fbsim.kernel.build.shaped`); a bad value is a usage error."""
    value = os.environ.get(SHAPES_ENV, "").strip().lower() or "standard"
    if value not in SHAPES_SETTINGS:
        raise UsageError(f"{SHAPES_ENV}={value!r}: expected one of "
                         f"{', '.join(SHAPES_SETTINGS)}")
    return value


def specialise_setting() -> str:
    """FBSIM_SPECIALISE: which lineups get a fast build of their own bots
    (SPECIALISE_SETTINGS, `fbsim.kernel.build.build_for`): `lineups` (the default), every
    lineup of at most SPECIALISE_MAX bots; `default`, the default lineup only (any other plays
    the generic build: fewer builds to compile, the same games); `none`, no lineup. A bad
    value is a usage error."""
    value = os.environ.get(SPECIALISE_ENV, "").strip().lower() or "lineups"
    if value not in SPECIALISE_SETTINGS:
        raise UsageError(f"{SPECIALISE_ENV}={shown(value)}: expected one of "
                         f"{', '.join(SPECIALISE_SETTINGS)}")
    return value


def llvm_tuning_setting() -> bool:
    """FBSIM_LLVM_TUNING: whether fbsim's compiled code is tuned (`fbsim.kernel.llvm`); a bad
    value is a usage error."""
    tuning = os.environ.get(LLVM_TUNING_ENV, "1").strip() or "1"
    if tuning not in ("0", "1"):
        raise UsageError(f"{LLVM_TUNING_ENV}={shown(tuning)}: expected 1 (fbsim's compiled code "
                         "tuned, the default) or 0 (compiled as numba does by default)")
    return tuning == "1"
