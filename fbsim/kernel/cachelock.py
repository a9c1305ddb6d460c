"""numba's disk cache, safe when several processes compile into it at once.

numba keeps every compiled version of a function in one index file per function (a map from
signature to a numbered data file) and adds a version by reading the index, taking the first
free number, writing the data file and the index back. Two processes adding different
versions of one function at once (two builds of the engine, `fbsim.kernel.build`) can take
the same number: one index entry is lost and the other may name the wrong data, a wrong
build loaded later. Here every read and write of an index, with its data file, holds a lock
file beside the index (`fbsim-index.lock` in the cache folder), so that the compiles
themselves run in parallel (two test workers, two sweeps) and only the index updates, which
take milliseconds, wait for each other. `fbsim.kernel.build.compiled_once` keeps two
processes from compiling the same build twice.
"""

from __future__ import annotations

import functools
import os
import threading

from filelock import FileLock
from numba.core import caching

LOCK_NAME = "fbsim-index.lock"

_guard = threading.Lock()  # a FileLock shared by threads does not exclude them: this does


def _locked(method):
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        os.makedirs(self._cache_path, exist_ok=True)
        with _guard, FileLock(os.path.join(self._cache_path, LOCK_NAME), thread_local=False):
            return method(self, *args, **kwargs)

    wrapper.fbsim_locked = True
    return wrapper


def install(cache_file=caching.IndexDataCacheFile) -> bool:
    """Wrap the index's `save` and `load` (numba's `IndexDataCacheFile`) in the lock, once;
    returns whether they are wrapped (False on a numba without them)."""
    for name in ("save", "load"):
        method = getattr(cache_file, name, None)
        if method is None:
            return False
        if not getattr(method, "fbsim_locked", False):
            setattr(cache_file, name, _locked(method))
    return True


INSTALLED = install()
