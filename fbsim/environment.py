"""The environment variables fbsim and numba read, checked before any command runs: a bad
value is a usage error naming the variable, not a traceback in the middle of a run."""

from __future__ import annotations

import os
import re
from pathlib import Path

from fbsim.errors import UsageError, file_named, shown
from fbsim.kernel.settings import (
    checked_default,
    llvm_tuning_setting,
    shapes_setting,
    specialise_setting,
)

MAX_EPOCH = 253_402_300_799  # 9999-12-31T23:59:59Z, the last second a timestamp can name
MAX_THREADS = 4096
# variables a blank value of which means unset, to fbsim and to the libraries that read them
# after fbsim has started (numba's thread count when it is imported, numpy's f2py the epoch)
BLANK_IS_UNSET = ("NUMBA_NUM_THREADS", "SOURCE_DATE_EPOCH", "NUMBA_DISABLE_JIT",
                  "NUMBA_THREADING_LAYER", "NUMBA_OPT", "NUMBA_BOUNDSCHECK", "MPLBACKEND")
# numba's switches that it reads with int() (and warns with a traceback if that fails): what
# each may be
NUMBA_SWITCHES = {"NUMBA_DISABLE_JIT": "0 (compiled, the default) or 1 (run as plain Python)",
                  "NUMBA_BOUNDSCHECK": "0 (no bounds checks) or 1 (check every index)"}
NUMBA_OPT_LEVELS = ("0", "1", "2", "3", "max")
# the threading layers numba knows (`numba.np.ufunc.parallel._launch_threads`, any case): a
# library, or the behaviour wanted of one, or `default` (the first of tbb, omp, workqueue)
THREADING_LAYERS = ("default", "safe", "forksafe", "threadsafe", "tbb", "omp", "workqueue")


def check_environment() -> None:
    """`FBSIM_CHECKED`, `FBSIM_SHAPES`, `FBSIM_SPECIALISE`, `FBSIM_LLVM_TUNING` (the
    kernel's settings), `NUMBA_NUM_THREADS`, `NUMBA_DISABLE_JIT`, `NUMBA_BOUNDSCHECK`,
    `NUMBA_OPT`, `NUMBA_THREADING_LAYER`, `MPLBACKEND`,
    `SOURCE_DATE_EPOCH` (the time outputs' provenance records) and the cache folder."""
    checked_default()
    shapes_setting()
    specialise_setting()
    llvm_tuning_setting()
    for name in BLANK_IS_UNSET:  # (numba and numpy read them too, and choke on blank)
        if name in os.environ and not os.environ[name].strip():
            del os.environ[name]
    threads = os.environ.get("NUMBA_NUM_THREADS")
    if threads is not None and threads.strip():
        t = threads.strip()
        if not (t.isascii() and t.isdigit() and 1 <= int(t) <= MAX_THREADS):
            raise UsageError(f"NUMBA_NUM_THREADS={shown(threads)}: expected a whole number of "
                             f"threads from 1 to {MAX_THREADS}")
    for name, what in NUMBA_SWITCHES.items():
        given = os.environ.get(name)
        if given is not None and not re.fullmatch(r"[01]", given.strip()):
            raise UsageError(f"{name}={shown(given)}: expected {what}")
    opt = os.environ.get("NUMBA_OPT")
    if opt is not None and opt not in NUMBA_OPT_LEVELS:  # (exactly as numba reads it)
        raise UsageError(f"NUMBA_OPT={shown(opt)}: expected an optimisation level: "
                         f"{', '.join(NUMBA_OPT_LEVELS)}")
    backend = os.environ.get("MPLBACKEND")
    if backend is not None:  # (the figures are drawn with Agg; a name matplotlib does not
        try:  # know stops it at its first import, which reads the variable)
            from matplotlib import rcsetup

            rcsetup.validate_backend(backend)
        except ValueError:
            raise UsageError(f"MPLBACKEND={shown(backend)}: not a matplotlib backend (e.g. "
                             "agg); leave it unset") from None
    layer = os.environ.get("NUMBA_THREADING_LAYER")
    if layer is not None and layer.lower() not in THREADING_LAYERS:
        # (numba would fail at the first parallel run, after an output's lock was taken)
        raise UsageError(f"NUMBA_THREADING_LAYER={shown(layer)}: expected one of "
                         f"{', '.join(THREADING_LAYERS)}")
    if layer is not None and not threading_layer_loads(layer.lower()):
        raise UsageError(f"NUMBA_THREADING_LAYER={shown(layer)}: no such threading layer "
                         "can be loaded here (its library is not installed); name another "
                         "(workqueue always loads) or leave it unset")
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is not None and epoch.strip():
        e = epoch.strip()
        if not (e.isascii() and e.isdigit() and int(e) <= MAX_EPOCH):
            raise UsageError(f"SOURCE_DATE_EPOCH={shown(epoch)}: expected whole seconds since "
                             f"1970 from 0 to {MAX_EPOCH} (the year 9999)")
    cache = os.environ.get("NUMBA_CACHE_DIR")
    if cache:
        check_cache_folder(cache, cache_variable(cache))


# the libraries each threading layer may be (numba tries them in this order)
LAYER_LIBRARIES = {"tbb": ("tbbpool",), "omp": ("omppool",), "safe": ("tbbpool",),
                   "threadsafe": ("tbbpool", "omppool")}


def threading_layer_loads(layer: str) -> bool:
    """Whether numba can load the threading layer `layer` (one of THREADING_LAYERS) here:
    tbb and omp are libraries that may be missing (numba would fail at the first parallel
    run, after an output's lock was taken); the others fall back to workqueue, which is
    always there."""
    import importlib

    for lib in LAYER_LIBRARIES.get(layer, ("workqueue",)):
        try:
            importlib.import_module(f"numba.np.ufunc.{lib}")
            return True
        except ImportError:
            continue
    return False


def cache_variable(cache: str) -> str:
    """How an error names the cache folder `cache`: by NUMBA_CACHE_DIR where the user set
    it, else by the variable fbsim made it of (XDG_CACHE_HOME, or HOME)."""
    import fbsim

    made = fbsim.CACHE_FOLDER_FROM
    if made is None or made[1] != cache:
        return f"NUMBA_CACHE_DIR={shown(cache)}"
    name = made[0]
    return f"{name}={shown(os.environ.get(name, ''))} (fbsim keeps its compiled code there)"


def check_cache_folder(cache: str, who: str | None = None) -> None:
    """NUMBA_CACHE_DIR names a folder, or one that can be made (tried here): neither it
    nor the nearest of its parents that exists may be a file, and it must be possible to
    make (numba would fail making it in the middle of a run, after an output's lock was
    taken). `who`: how the errors name it (`cache_variable`)."""
    who = who or f"NUMBA_CACHE_DIR={shown(cache)}"
    path = Path(cache)
    for p in (path, *path.parents):
        try:
            if not p.exists():
                continue  # (a path under a file does not exist either: its parent is looked at)
            if p.is_dir():
                break
        except PermissionError:  # (a folder we may not look into: numba says so, naming it)
            return
        except OSError as e:  # (a name too long, say)
            raise UsageError(f"{who}: not a usable folder name "
                             f"({e.strerror or e}); give another") from None
        where = "the cache folder is a file" if p == path else (
            f"the cache folder is under a file ({file_named(p)}), not a folder")
        raise UsageError(f"{who}: {where}; give a folder")
    missing = [q for q in (path, *path.parents) if not q.exists()]
    try:  # made and removed again: a refused run leaves nothing
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"{who}: the cache folder cannot be made "
                         f"({e.strerror or e}); give a folder fbsim may write") from None
    finally:
        for q in missing:  # (the deepest first)
            try:
                q.rmdir()
            except OSError:
                pass
