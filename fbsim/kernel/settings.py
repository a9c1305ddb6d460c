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


MAX_EPOCH = 253_402_300_799  # 9999-12-31T23:59:59Z, the last second a timestamp can name
MAX_THREADS = 4096


def environment_settings() -> None:
    """The environment variables fbsim and numba read, checked before any command runs: a bad
    value is a usage error naming the variable, not a traceback in the middle of a run
    (`FBSIM_SHAPES`, `FBSIM_LLVM_TUNING`, `NUMBA_NUM_THREADS`, `SOURCE_DATE_EPOCH`, the
    cache folder)."""
    shapes_setting()
    tuning = os.environ.get(LLVM_TUNING_ENV)
    if tuning is not None and tuning.strip() not in ("", "0", "1"):
        raise UsageError(f"{LLVM_TUNING_ENV}={shown(tuning)}: expected 1 (fbsim's compiled code "
                         "tuned, the default) or 0 (compiled as numba does by default)")
    threads = os.environ.get("NUMBA_NUM_THREADS")
    if threads is not None and threads.strip():
        t = threads.strip()
        if not (t.isascii() and t.isdigit() and 1 <= int(t) <= MAX_THREADS):
            raise UsageError(f"NUMBA_NUM_THREADS={shown(threads)}: expected a whole number of "
                             f"threads from 1 to {MAX_THREADS}")
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is not None and epoch.strip():
        e = epoch.strip()
        if not (e.isascii() and e.isdigit() and int(e) <= MAX_EPOCH):
            raise UsageError(f"SOURCE_DATE_EPOCH={shown(epoch)}: expected whole seconds since "
                             f"1970 from 0 to {MAX_EPOCH} (the year 9999)")
    cache = os.environ.get("NUMBA_CACHE_DIR")
    if cache:
        from pathlib import Path

        p = Path(cache)
        if p.exists() and not p.is_dir():
            raise UsageError(f"NUMBA_CACHE_DIR={shown(cache)}: the cache folder is a file")
