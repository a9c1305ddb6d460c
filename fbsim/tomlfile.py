"""Reading a TOML file (rules, lineups, scripts, specs) with one-line errors.

`read_toml(path, fail)` returns the document, or calls `fail(message)`, which raises the
caller's error type, with "cannot read: ...", "not a regular file (...)", "too large ...",
"not UTF-8 text ..." or "not valid TOML: ...". The path is checked by name before it is
opened: a FIFO or a device is refused, never read (a FIFO would block for ever)."""

from __future__ import annotations

import os
import stat
import sys
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

from fbsim.errors import cut

MAX_TOML_BYTES = 16 * 2**20  # no rules, lineup, script or spec file comes near it
MAX_DEPTH = 32  # tables and arrays within each other (the files fbsim reads use 4 or 5)

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a file or a folder")


def read_toml(path: str | Path, fail: Callable[[str], NoReturn]) -> dict[str, Any]:
    p = Path(path)
    try:
        st = p.stat()
    except OSError as e:
        fail(f"cannot read: {e.strerror or e}")
    except ValueError:  # a NUL character in the path
        fail("cannot read: the path holds a NUL character")
    if stat.S_ISDIR(st.st_mode):
        fail("cannot read: it is a folder")
    if not stat.S_ISREG(st.st_mode):
        fail(f"not a regular file ({_kind(st.st_mode)})")
    if st.st_size > MAX_TOML_BYTES:
        fail(f"too large: {st.st_size} bytes (at most {MAX_TOML_BYTES // 2**20} MiB)")
    try:
        # O_NONBLOCK: were it swapped for a FIFO since the check, opening still returns
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if not stat.S_ISREG(mode):
                fail(f"not a regular file ({_kind(mode)})")
            data = f.read(MAX_TOML_BYTES + 1)
    except OSError as e:
        fail(f"cannot read: {e.strerror or e}")
    if len(data) > MAX_TOML_BYTES:
        fail(f"too large: more than {MAX_TOML_BYTES // 2**20} MiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        fail(f"not UTF-8 text (byte {e.start})")
    return parse_toml(text.replace("\r\n", "\n").replace("\r", "\n"), fail)


def parse_toml(text: str, fail: Callable[[str], NoReturn]) -> dict[str, Any]:
    """`tomllib.loads`, every way it fails (and a document nested more than MAX_DEPTH
    levels deep) passed to `fail` as one line "not valid TOML: ..."."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        fail(f"not valid TOML: {e}")
    except RecursionError:
        fail(f"not valid TOML: nested too deep (at most {MAX_DEPTH} levels)")
    except ValueError:  # an integer literal over Python's limit on digits
        fail(f"not valid TOML: a number of more than {sys.get_int_max_str_digits()} digits")
    if too_deep(doc):
        fail(f"not valid TOML: nested too deep (at most {MAX_DEPTH} levels)")
    where = date_value(doc)
    if where is not None:
        fail(f"{where}: a date or time, which no fbsim file holds (numbers, text, lists and "
             "tables only)")
    return doc


def date_value(value: Any, path: str = "") -> str | None:
    """The key of the first date or time value in a document (TOML has them; no fbsim file
    uses one), or None."""
    import datetime as dt

    if isinstance(value, dt.date | dt.time):
        return cut(path or "(the value)")
    items = value.items() if isinstance(value, Mapping) else (
        ((f"[{i}]", x) for i, x in enumerate(value)) if isinstance(value, list) else ())
    for k, x in items:
        found = date_value(x, f"{path}{k}" if str(k).startswith("[") or not path
                           else f"{path}.{k}")
        if found is not None:
            return found
    return None


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether tables and arrays nest more than `limit` levels within `value`."""
    stack = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, Mapping):
            items = v.values()
        elif isinstance(v, list):
            items = v
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((x, depth + 1) for x in items)
    return False
