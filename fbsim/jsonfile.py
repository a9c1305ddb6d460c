"""Reading back the JSON files fbsim writes (search states, summaries, ladders, provenance),
with the damage a hand edit can do turned into the `ValueError` their readers already
refuse in one line naming the file: Python's parser meets a document nested deeper than
its recursion limit with a RecursionError, which no reader expects."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any


def loads(text: str | bytes, **kwargs) -> Any:
    """`json.loads`, a document nested too deeply for it a ValueError."""
    try:
        return json.loads(text, **kwargs)
    except RecursionError:
        raise ValueError("nested too deeply to be a file fbsim wrote") from None


MAX_JSON_BYTES = 1 << 30  # far above any state or summary fbsim writes


def read(path: str | Path, **kwargs) -> Any:
    """The JSON document of the file `path` (`loads`; OSError where it cannot be read). Only
    a regular file is read: a FIFO would block for ever and a device never end, so either is
    a ValueError, as is a file too large to be one fbsim wrote."""
    p = Path(path)
    fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # (a FIFO: opens, not waits)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file (a FIFO, a device or a socket)")
        data = f.read(MAX_JSON_BYTES + 1)
    if len(data) > MAX_JSON_BYTES:
        raise ValueError(f"larger than {MAX_JSON_BYTES >> 20} MiB: not a file fbsim wrote")
    return loads(data.decode("utf-8"), **kwargs)
