"""Reading back the JSON files fbsim writes (search states, summaries, ladders, provenance),
with the damage a hand edit can do turned into the `ValueError` their readers already
refuse in one line naming the file: Python's parser meets a document nested deeper than
its recursion limit with a RecursionError, which no reader expects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def loads(text: str | bytes, **kwargs) -> Any:
    """`json.loads`, a document nested too deeply for it a ValueError."""
    try:
        return json.loads(text, **kwargs)
    except RecursionError:
        raise ValueError("nested too deeply to be a file fbsim wrote") from None


def read(path: str | Path, **kwargs) -> Any:
    """The JSON document of the file `path` (`loads`; OSError where it cannot be read)."""
    return loads(Path(path).read_text(), **kwargs)
