"""fbsim: Monte Carlo balance simulation for the board game Firebreak."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from fbsim.version import __version__

__all__ = ["__version__", "simulate", "sweep", "report"]


# the modules numba compiles, and those whose constants compiled code reads
_COMPILED = ("game", "policies", "kernel", "experiments/metrics/per_game.py", "lineup.py")


def _source_digest() -> str:
    # numba's on-disk cache tracks only the file of each jitted function, not the constants
    # it imports from other modules (fbsim.game.layout); keying the cache directory on a digest
    # of the compiled sources keeps a stale compiled bot or kernel from ever being loaded.
    h = hashlib.sha256()
    root = Path(__file__).parent
    files = [p for name in _COMPILED for p in ([root / name] if name.endswith(".py")
                                               else (root / name).rglob("*.py"))]
    for p in sorted(files):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


# the variable the numba cache folder comes from, and the folder fbsim made of it (where
# NUMBA_CACHE_DIR is not set): an error about the folder names the variable the user set
CACHE_FOLDER_FROM: tuple[str, str] | None = None
if not os.environ.get("NUMBA_CACHE_DIR"):
    # (the XDG base directory spec: a blank or relative XDG_CACHE_HOME is invalid, ignored)
    _xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    _base = Path(_xdg) if _xdg and Path(_xdg).is_absolute() else Path.home() / ".cache"
    # code compiled without the LLVM tuning (FBSIM_LLVM_TUNING=0, `fbsim.kernel.llvm`) is
    # cached apart: numba's cache does not know how its code was optimised
    _untuned = "-untuned" if os.environ.get("FBSIM_LLVM_TUNING", "").strip() == "0" else ""
    os.environ["NUMBA_CACHE_DIR"] = str(_base / "fbsim" / "numba" / (_source_digest() + _untuned))
    CACHE_FOLDER_FROM = ("XDG_CACHE_HOME" if _base != Path.home() / ".cache" else "HOME",
                         os.environ["NUMBA_CACHE_DIR"])
    if "numba" in sys.modules:  # numba read its settings before fbsim was imported
        sys.modules["numba"].config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]


def __getattr__(name: str):
    # the Python API, imported on first use (importing fbsim stays cheap)
    if name == "simulate":
        from fbsim.experiments.run.simulate import simulate

        return simulate
    if name == "sweep":
        from fbsim.experiments.run.sweep import sweep

        return sweep
    if name == "report":
        from fbsim.experiments.report.model import report

        return report
    raise AttributeError(f"module 'fbsim' has no attribute {name!r}")
