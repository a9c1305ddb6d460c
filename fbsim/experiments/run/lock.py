"""One writer per output folder: a lock file inside it, taken without waiting.

Two runs writing into one folder (two sweeps into one --out, say) would interleave their
points; the second one fails at once instead. The lock is the operating system's (flock),
so a killed run leaves no stale lock behind, and its file is removed as the lock is let go
(the run finished, failed or was refused), while still held: a run that opened the file
before it was removed finds, once it has the lock, that the file it locked is no longer the
one at the path, and opens it again. It is re-entrant within a process: an experiment holds
its folder while its sweep and its figures take it again.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fbsim.errors import UsageError

LOCK_NAME = ".fbsim.lock"
_LOCKS: dict[str, _Held] = {}  # one per lock file, so that taking it again nests
_GUARD = threading.Lock()


class _Busy(Exception):
    """Another process holds the lock."""


class _Held:
    """One lock file held by this process: its descriptor and how many times it is taken."""

    def __init__(self, path: Path):
        self.path, self.fd, self.count = path, None, 0

    def acquire(self) -> None:
        if self.count:
            self.count += 1
            return
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise _Busy from None
            try:  # the file locked is still the one at the path (not removed meanwhile)
                here = os.stat(self.path)
                mine = os.fstat(fd)
                if (here.st_dev, here.st_ino) == (mine.st_dev, mine.st_ino):
                    self.fd, self.count = fd, 1
                    return
            except FileNotFoundError:
                pass
            os.close(fd)

    def release(self) -> None:
        self.count -= 1
        if self.count == 0:
            try:
                self.path.unlink(missing_ok=True)  # (while held: see the module's docstring)
            finally:
                os.close(self.fd)  # (closing lets the lock go)
                self.fd = None


@contextmanager
def output_lock(folder: str | Path, name: str = LOCK_NAME) -> Iterator[Path]:
    """Hold the lock file `name` in `folder` (created if missing) while writing there;
    `UsageError` at once when another run holds it. The lock file is removed as the lock is
    let go."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if (folder / name).is_symlink() or ((folder / name).exists()
                                        and not (folder / name).is_file()):
        raise UsageError(f"{folder / name}: not fbsim's lock file (a link or a folder: the "
                         "lock is never followed elsewhere); remove it and run again")
    path = (folder / name).resolve()
    with _GUARD:
        lock = _LOCKS.setdefault(str(path), _Held(path))
        try:
            lock.acquire()
        except _Busy:
            raise UsageError(f"{folder}: another fbsim run is writing into this folder (it "
                             f"holds {name}); wait for it to finish, or write elsewhere"
                             ) from None
    try:
        yield folder
    finally:
        with _GUARD:
            lock.release()


def remove_stale_temporaries(folder: str | Path, prefix: str = ".") -> list[Path]:
    """Remove the temporary files `PREFIX....tmp<pid>...` in `folder` whose writer is gone
    (a run killed before it could rename or remove them: fbsim names every temporary file
    after the process writing it); a live process's are left alone. Returns those removed."""
    import glob
    import re

    removed = []
    for p in Path(folder).glob(glob.escape(prefix) + "*"):
        m = re.search(r"\.tmp(\d+)", p.name)
        if m and p.is_file() and not _alive(int(m.group(1))):
            p.unlink(missing_ok=True)
            removed.append(p)
    return removed


def _alive(pid: int) -> bool:
    import os

    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # (another user's process, or not a pid we can ask about: keep it)
    try:  # (a killed writer not yet reaped by its parent is a zombie: gone, all the same)
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return True


def move_into_place(tmp: Path, path: Path) -> None:
    """Rename the finished temporary `tmp` onto `path` (atomic: the same folder). If that
    fails (a folder in the file's place, a full disk) the temporary is removed and the
    OSError names `path`, not the temporary."""
    import os

    try:
        os.replace(tmp, path)
    except OSError as e:
        if Path(tmp).is_file() or Path(tmp).is_symlink():
            Path(tmp).unlink(missing_ok=True)
        raise OSError(e.errno, e.strerror or str(e), str(path)) from None
