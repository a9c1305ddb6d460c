"""Input files' shapes, declared once and checked one way.

Each kind of input file (rules, lineup, sweep spec, tune spec, rules-search spec, script)
declares its keys as `Key`s: the type, the range or choices, a table's own keys, a list's
items. `check(doc, keys, fail)` walks a document against them before anything is played or
written: an unknown key, a wrong type, a value out of range or a missing key ends in one
`fail(path, message)` naming the key, what was expected and what was found (long values
cut). What spans several keys (a range that must not be empty, a seat that must exist at the
table size) stays with the code that reads the file, after this check."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from fbsim.errors import cut, did_you_mean, shown

Fail = Callable[[str, str], NoReturn]  # fail(path of the key, message): raises

# What each type accepts, and how an error words it when a Key gives no `expected`.
TYPES = {
    "int": "an integer",  # an integer, not a boolean
    "count": "a whole number",  # an integer, or a float with no fraction (1e6)
    "number": "a number",  # a finite integer or float, read as a float
    "bool": "true or false",
    "text": "text",
    "list": "a list",  # its items: `item`
    "table": "a table",  # its keys: `keys` (None: any key, checked by its reader)
    "null": "null",  # (JSON's null: files fbsim writes back, where a value may be absent)
    "any": "a value",  # checked by its reader
}


@dataclass(frozen=True)
class Key:
    """One key of an input file: its type (or a tuple of alternatives, tried in order), what
    an error says was expected, its range (`lo`..`hi`, inclusive unless `open`), its
    `choices`, a table's `keys`, a list's `item` and number of items (`size`)."""

    type: str | tuple[str, ...]
    expected: str = ""
    lo: float | None = None
    hi: float | None = None
    open: bool = False
    choices: tuple = ()
    keys: Mapping[str, Key] | None = None
    item: Key | None = None
    size: tuple[int, int] | None = None
    required: bool = False
    known: str = "key"  # what an unknown key of this table is called ("unknown agenda")
    ordered: bool = False  # a list's items in order, each at least the one before

    def __post_init__(self):
        for t in (self.type,) if isinstance(self.type, str) else self.type:
            if t not in TYPES:
                raise ValueError(f"Key: unknown type {t!r} (types: {', '.join(TYPES)})")

    @property
    def wanted(self) -> str:
        """What a good value is, as an error says it."""
        if self.expected:
            return self.expected
        types = (self.type,) if isinstance(self.type, str) else self.type
        what = " or ".join(TYPES[t] for t in types)
        if self.choices:
            return "one of " + ", ".join(_word(c) for c in self.choices)
        lo, hi = _bound(self.lo), _bound(self.hi)
        if self.lo is not None and self.hi is not None:
            return f"{what} {'between' if self.open else 'from'} {lo} " \
                   f"{'and' if self.open else 'to'} {hi}"
        if self.lo is not None:
            return f"{what} {'>' if self.open else '>='} {lo}"
        if self.hi is not None:
            return f"{what} {'<' if self.open else '<='} {hi}"
        return what


def _bound(x: float | None) -> str:
    return str(x) if isinstance(x, int) else f"{x:g}" if x is not None else ""


def _word(choice: Any) -> str:
    return f'"{choice}"' if isinstance(choice, str) else shown(choice)


def _join(path: str, key: str) -> str:
    return f"{path}.{cut(key)}" if path else cut(key)


_PYTHON = {"bool": bool, "text": str, "list": list, "table": Mapping}


def _is_type(value: Any, t: str) -> bool:
    if t == "any":
        return True
    if t == "null":
        return value is None
    if t in ("int", "count", "number"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        return isinstance(value, int) or t == "number" or (
            t == "count" and math.isfinite(value) and value.is_integer())
    return isinstance(value, _PYTHON[t])


def check(doc: Mapping, keys: Mapping[str, Key], fail: Fail, path: str = "",
          known: str = "key") -> dict:
    """`doc` checked against `keys` (see the module's docstring); returns a copy with counts
    as integers and numbers as floats, every other value as given."""
    if not isinstance(doc, Mapping):
        fail(path or "(top)", f"expected a table, got {shown(doc)}")
    out = {}
    for k, v in doc.items():
        key = keys.get(k) if isinstance(k, str) else None
        if key is None:
            names = list(keys)
            fail(_join(path, str(k)), f"unknown {known}" + did_you_mean(
                str(k), names, otherwise=f" (keys: {', '.join(names)})"
                if len(names) <= 12 else ""))
        out[k] = value(v, key, fail, _join(path, k))
    for k, key in keys.items():
        if key.required and k not in doc:
            fail(_join(path, k), f"missing: expected {key.wanted}")
    return out


def value(v: Any, key: Key, fail: Fail, path: str) -> Any:
    """One value checked against its `Key` (see `check`)."""
    types = (key.type,) if isinstance(key.type, str) else key.type
    t = next((t for t in types if _is_type(v, t)), None)
    if t is None:
        fail(path, f"expected {key.wanted}, got {shown(v)}")
    if t in ("int", "count", "number"):
        return _number(v, t, key, fail, path)
    if t == "text" and key.choices and v not in key.choices:
        fail(path, f"expected {key.wanted}, got {shown(v)}"
             + did_you_mean(v, [c for c in key.choices if isinstance(c, str)]))
    if t == "list":
        if key.size is not None and not key.size[0] <= len(v) <= key.size[1]:
            lo, hi = key.size
            n = f"{lo}" if lo == hi else f"{lo} to {hi}"
            fail(path, f"expected {key.wanted} ({n} items), got {len(v)} items: {shown(v)}")
        if key.item is not None:
            v = [value(x, key.item, fail, f"{path}[{i}]") for i, x in enumerate(v)]
        if key.ordered and any(b < a for a, b in zip(v, v[1:], strict=False)):
            fail(path, f"expected {key.wanted}, in order (low to high), got {shown(v)}")
        return v
    if t == "table" and key.keys is not None:
        return check(v, key.keys, fail, path, key.known)
    return v


def _number(v: Any, t: str, key: Key, fail: Fail, path: str) -> int | float:
    try:
        finite = math.isfinite(v)
    except OverflowError:  # an integer beyond any float
        finite = False
    if t == "number" and not finite:
        fail(path, f"expected a finite number, got {shown(v)}")
    given, v = v, int(v) if t == "count" else float(v) if t == "number" else v
    lo, hi = key.lo, key.hi
    if (lo is not None and (v <= lo if key.open else v < lo)) or (
            hi is not None and (v >= hi if key.open else v > hi)):
        fail(path, f"expected {key.wanted}, got {shown(given)}")
    return v


def interval(lo: float, hi: float, required: bool = False) -> Key:
    """An interval [low, high] of numbers from `lo` to `hi`, low <= high."""
    return Key("list", f"an interval [low, high] of numbers from {_bound(lo)} to {_bound(hi)}",
               size=(2, 2), item=Key("number", lo=lo, hi=hi), ordered=True, required=required)


def within(x: float, ci: list[float], fail: Fail, path: str) -> None:
    """`x` (at `path`) within its interval `ci`, as every estimate fbsim writes is."""
    if not ci[0] <= x <= ci[1]:
        fail(path, f"expected a value within its interval {shown(ci)}, got {shown(x)}")


def failing(error: Callable[[str], Exception], where: str) -> Fail:
    """A `fail` that raises `error("WHERE: KEY: MESSAGE")`."""

    def fail(path: str, message: str) -> NoReturn:
        raise error(f"{where}: {path}: {message}" if where else f"{path}: {message}")

    return fail
