"""Error types of fbsim. The command line turns each into one line and an exit code."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUT_WIDTH = 60  # the most characters of a value an error message quotes
PATH_WIDTH = 200  # the most characters of a file's path an error message names


def cut(text: str, width: int = CUT_WIDTH) -> str:
    """`text` as an error message quotes it: control characters (a newline, say) escaped so
    that the message stays one line, its first `width` characters, then "..."."""
    text = str(text)
    text = text[:width + 1] if len(text) > 4 * width else text
    if not text.isprintable():
        text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                       for c in text)
    return text if len(text) <= width else text[:width] + "..."



def file_named(path) -> str:
    """A file's path as an error message names it: whole unless longer than PATH_WIDTH (then
    cut, `cut`)."""
    return cut(str(path), PATH_WIDTH)


def shown(value) -> str:
    """A found value as an error quotes it: its repr, cut (`cut`)."""
    return cut(repr(value))


def did_you_mean(name: str, options: Iterable[str], cutoff: float = 0.6,
                 otherwise: str = "") -> str:
    """"; did you mean 'x'?" for the option closest to a mistyped name, else `otherwise`."""
    options = list(options)
    longest = max((len(x) for x in options), default=0)
    if cutoff > 0 and len(name) * cutoff > longest * (2 - cutoff):
        return otherwise  # (too long to come near `cutoff`: no need to compare)
    close = difflib.get_close_matches(name, options, n=1, cutoff=cutoff)
    return f"; did you mean '{close[0]}'?" if close else otherwise


class FbsimError(Exception):
    """Base class: a user-facing error with a one-line message."""

    exit_code = 1


class DamagedFile(FbsimError):
    """A file of a dataset that cannot be read back (truncated, overwritten, not fbsim's): the
    message names it and the way out."""

    exit_code = 2


class ConfigError(FbsimError):
    """Invalid rules: an unknown key, a wrong type or an out-of-range value."""

    exit_code = 2

    def __init__(self, key: str, message: str, source: str = "rules"):
        self.key = key
        self.message = message
        self.source = source
        super().__init__(f"{source}: {cut(key)}: {message}")


class ScriptError(FbsimError):
    """A scripted game that breaks a rule or is malformed."""

    exit_code = 2

    def __init__(self, message: str, round_no: int | None = None, seat: int | None = None,
                 rule: str | None = None):
        self.round_no = round_no
        self.seat = seat
        self.rule = rule
        where = []
        if round_no is not None:
            where.append(f"round {round_no}")
        if seat is not None:
            where.append(f"seat {seat}")
        prefix = "script" + (" " + ", ".join(where) if where else "")
        suffix = f" ({rule})" if rule else ""
        super().__init__(f"{prefix}: {message}{suffix}")


class IllegalDecision(FbsimError):
    """A bot returned a decision that breaks a rule (a bug in that bot)."""

    exit_code = 3

    def __init__(self, message: str, round_no: int, seat: int, rule: str, bot: str = "?"):
        self.round_no = round_no
        self.seat = seat
        self.rule = rule
        self.bot = bot
        super().__init__(f"bot '{bot}' at round {round_no}, seat {seat}: {message} ({rule})")


class UsageError(FbsimError):
    """Bad command-line input outside the rules (lineup, seat, ranges)."""

    exit_code = 2


class Interrupted(FbsimError):
    """Ctrl-C (SIGINT): the command stopped; a resumable one keeps what it finished."""

    exit_code = 130

    def __init__(self, resumable: bool = False):
        self.resumable = resumable
        super().__init__("interrupted; run the same command again to resume" if resumable
                         else "interrupted")
