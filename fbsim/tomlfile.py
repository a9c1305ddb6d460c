"""Reading a TOML file (rules, lineups, scripts, specs) with one-line errors.

`read_toml(path, fail)` returns the document, or calls `fail(message)`, which raises the
caller's error type, with "cannot read: ...", "not UTF-8 text ..." or "not valid TOML: ...".
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn


def read_toml(path: str | Path, fail: Callable[[str], NoReturn]) -> dict[str, Any]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except IsADirectoryError:
        fail("cannot read: it is a folder")
    except OSError as e:
        fail(f"cannot read: {e.strerror or e}")
    except UnicodeDecodeError as e:
        fail(f"not UTF-8 text (byte {e.start})")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        fail(f"not valid TOML: {e}")
