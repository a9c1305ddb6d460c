"""Command-line values every command shares, read and checked in one place: numbers of games
(`1e6`), table sizes (`4`, `3..6`, `3,5`; R-S6: 3 to 6) and the table sizes a rules file
names, output paths. Each bad value is a `UsageError` naming its flag."""

from __future__ import annotations

import os
from pathlib import Path

from fbsim.errors import UsageError, cut, file_named
from fbsim.limits import MAX_GAMES
from fbsim.tomlfile import read_toml

MIN_PLAYERS, MAX_PLAYERS = 3, 6  # R-S6


def command_line(ctx) -> str:
    """The command as it was given (for a report to name what made it): its name, then each
    option given on the command line or by the environment with the value it was read as, in
    the command's order of options, quoted for a shell. `ctx`: the command's context."""
    import shlex

    words = ctx.command_path.split()
    for p in ctx.command.params:
        source = ctx.get_parameter_source(p.name)
        if source is None or source.name not in ("COMMANDLINE", "ENVIRONMENT"):
            continue
        value = ctx.params[p.name]
        if isinstance(value, bool):
            words.append(p.opts[0] if value or not p.secondary_opts else p.secondary_opts[0])
        else:
            for v in value if isinstance(value, (list, tuple)) else [value]:
                words += [p.opts[0], str(v)]
    return shlex.join(words)


def games_count(text: str, flag: str = "--games") -> int:
    """`1000000`, `1e6` or `1_000_000` (underscores between digits only, as Python writes
    them)."""
    import re

    try:
        if not re.fullmatch(r"\s*[0-9]+(_[0-9]+)*(\.[0-9]+)?([eE][+-]?[0-9]+)?\s*", text):
            raise ValueError
        v = float(text.replace("_", "")) if any(c in text for c in ".eE") else int(
            text.replace("_", ""))
    except ValueError:
        raise UsageError(f"{flag}: expected a number of games, got '{cut(text)}'") from None
    if not 1 <= v <= MAX_GAMES:
        raise UsageError(f"{flag}: expected 1 to {MAX_GAMES:.0e} games, got '{cut(text)}'")
    if v != int(v):
        raise UsageError(f"{flag}: expected a whole number >= 1, got '{cut(text)}'")
    return int(v)


def table_sizes(text: str, flag: str = "--players") -> list[int]:
    """`4`, `3..6` or `3,5`: distinct table sizes, each from 3 to 6."""
    try:
        if not text.isascii():  # (int() would read "٣" as 3)
            raise ValueError
        if ".." in text:
            lo, hi = (int(x) for x in text.split("..", 1))
            if lo > hi:
                raise ValueError
            sizes = [lo, hi] if lo < MIN_PLAYERS or hi > MAX_PLAYERS else list(
                range(lo, hi + 1))  # (no list of a huge number of sizes)
        else:
            sizes = [int(x) for x in text.split(",")]
    except ValueError:
        raise UsageError(f"{flag}: expected N, LO..HI or N,M,..., got '{cut(text)}'") from None
    return checked_sizes(sizes, flag, text)


def checked_sizes(sizes: list, flag: str, text: str | None = None) -> list[int]:
    """`sizes` when there is at least one, each is a table size (3 to 6) and none is
    repeated."""
    if not sizes:
        raise UsageError(f"{flag}: at least one table size ({MIN_PLAYERS} to {MAX_PLAYERS}), "
                         f"got none")
    for n in sizes:
        if isinstance(n, bool) or not isinstance(n, int) or not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise UsageError(f"{flag}: table sizes are {MIN_PLAYERS} to {MAX_PLAYERS}, got "
                             f"{cut(repr(n))}")
    if len(set(sizes)) != len(sizes):
        raise UsageError(f"{flag}: a table size is repeated in "
                         f"'{cut(text if text is not None else repr(sizes))}'")
    return list(sizes)


def named_players(rules_file: Path | None, sets: list[str] | None) -> tuple[int, str] | None:
    """The table size a rules file or --set names, and where; None when neither does."""
    from fbsim.rules import load_rules, parse_set

    n = load_rules(rules_file, list(sets or []), bots={}).players  # (bad rules fail here)

    def fail(message: str):
        raise UsageError(f"--rules {rules_file}: {message}")

    source = players_source(rules_file, dict(parse_set(x) for x in sets or []), fail)
    return None if source is None else (n, source)


def players_source(rules: str | Path | None, sets: dict, fail) -> str | None:
    """Where the rules name a table size (`--set players=N`, else the rules file), or None;
    `fail(message)` reports an unreadable rules file."""
    if "players" in sets:
        return f"--set players={sets['players']}"
    if rules is not None and "players" in read_toml(rules, fail):
        return f"the rules file {file_named(rules)}"
    return None


def sizes_for(players: str | None, default: str, rules_file: Path | None,
              sets: list[str] | None) -> list[int]:
    """Table sizes: --players; without it, the size the rules file or --set names, else
    `default`. A --players that disagrees with the rules' size fails naming both."""
    named = named_players(rules_file, sets)
    if players is None:
        return [named[0]] if named is not None else table_sizes(default)
    sizes = table_sizes(players)
    if named is not None and sizes != [named[0]]:
        raise UsageError(f"--players {players}: conflicts with players = {named[0]} from "
                         f"{named[1]}")
    return sizes


def parent_exists(*paths: tuple[Path | None, str]) -> None:
    """Output files must go into an existing folder (checked before any game is played)."""
    for path, flag in paths:
        if path is not None and not path.parent.is_dir():
            raise UsageError(f"{flag} {path}: folder {path.parent} does not exist" if not
                             path.parent.exists() else f"{flag} {path}: {path.parent} is not "
                             "a folder")


def check_writable(path: Path, flag: str) -> None:
    """The output file `path` can be written (checked before any game: a file written last,
    like a screenshot, would fail only after the rest): not a link to nothing, its folder
    one a file can be made in (tried, and removed again), an existing file one that opens
    for writing. UsageError naming it and why."""
    import tempfile

    path = Path(path)
    if path.is_symlink() and not path.exists():
        raise UsageError(f"{flag} {path}: a link to nothing ({os.readlink(path)}); remove it, "
                         "or write elsewhere")
    try:
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.probe"):
            pass
        if path.is_file():
            with open(path, "ab"):
                pass
    except OSError as e:
        raise UsageError(f"{flag} {path}: cannot be written ({e.strerror or e}); write "
                         "elsewhere") from None


def folder_ok(path: Path, flag: str) -> None:
    """An output folder must not be an existing file, nor lie below one (checked before
    anything is written)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {path}: exists and is not a folder")
    for above in path.parents:
        if above.exists():
            if not above.is_dir():
                raise UsageError(f"{flag} {path}: {above} is a file, not a folder")
            break
