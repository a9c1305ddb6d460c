"""Lineups: which bot, with which parameters, plays each seat.

A lineup maps each Agenda to an *entry*, a bot with every one of its parameters (default:
Steward -> steward, Opportunist -> opportunist, Accelerationist -> fog-grabber, all at their
default parameters), and can override single seats (`--seat 2=hoarder`). The seat's entry is
known only after the Agenda deal (R-S4), so a seat override wins over the Agenda map.

Text forms (`describe()` writes the same form that `--lineup` reads):

    --lineup steward=steward,accelerationist=tunable:aim=520;greed=0.3
    --lineup random                       (one bot at every seat)
    --seat 1=tunable:aim=520,greed=0.3    (one seat; params after ':', ',' or ';' between)
    --lineup my-field.toml                (a lineup file, see `lineup_from_toml`)

In `--lineup` the commas separate Agendas, so a bot's parameters are separated by ';'.
Entries are numbered for the kernel and the game records: entry a (0..2) is Agenda a's,
entry 3 + s is seat s's override (`entry_index`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fbsim.errors import UsageError, cut, did_you_mean, file_named
from fbsim.game import layout as L
from fbsim.inputs import Key, check, failing
from fbsim.inputs import value as value_of
from fbsim.tomlfile import read_toml

DEFAULT_BY_AGENDA = {"steward": "steward", "opportunist": "opportunist",
                     "accelerationist": "fog-grabber"}
N_ENTRIES = L.N_AGENDAS + L.MAX_PLAYERS  # the Agendas' entries, then one per seat
LINEUP_VERSION = 1


class ParamError(ValueError):
    """A bad bot parameter; the message names no place (callers add theirs)."""


def _suggest(name: str, options) -> str:
    return did_you_mean(name, options, otherwise=f" (one of: {', '.join(options)})")


def check_bot(name: str) -> str:
    """The bot's name, or ParamError naming the nearest registered bot."""
    from fbsim.policies import registry

    if name not in registry():
        raise ParamError(f"unknown bot '{cut(name)}'" + _suggest(name, registry()))
    return name


NUMBER_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def toml_param(bot: str, name: str, value: Any, where: str) -> float:
    """A parameter value of `bot` written in a lineup file: a number, not text (a file
    types its values; "500" in quotes is a slip), checked as `check_param` does."""
    if isinstance(value, str):
        raise UsageError(f"{where}: expected a number, got {cut(repr(value))} (text: write "
                         "it without quotes)")
    try:
        return check_param(bot, name, value)
    except ParamError as e:
        raise UsageError(f"{where}: {e}") from None


def check_param(bot: str, name: str, value: Any) -> float:
    """A parameter value of `bot` as a float, checked against the parameter's range."""
    from fbsim.policies import registry

    spec = registry()[bot]
    params = {p.name: p for p in spec.params}
    if name not in params:
        # (a bot of many alike parameters names its `listed` ones, and how many more)
        shown = [n for n in (spec.listed or params) if n in params]
        more = (f", and {len(params) - len(shown)} more: fbsim bots"
                if len(shown) < len(params) else "")
        hint = (did_you_mean(name, params, otherwise=f" (one of: {', '.join(shown)}{more})")
                if params else " (it has no parameters)")
        raise ParamError(f"unknown parameter '{cut(name)}' of bot '{bot}'" + hint)
    p = params[name]
    if isinstance(value, str):  # (text from a command line: a number in ASCII digits, as
        # written in a file; float() would also read "1_0" and other scripts' digits)
        if not NUMBER_TEXT.fullmatch(value.strip()):
            raise ParamError(f"{bot}.{name}: expected a number (like 500 or 0.3), got "
                             f"'{cut(value)}'")
        value = float(value.strip())

    def fail(path: str, message: str):
        raise ParamError(f"{path}: {message}")

    v = value_of(value, Key("number", lo=p.lo, hi=p.hi), fail, f"{bot}.{name}")
    if p.choices and v not in p.choices:
        fail(f"{bot}.{name}", f"expected one of {', '.join(fmt(c) for c in p.choices)}, "
             f"got {fmt(v)}")
    return v


def fmt(v: float) -> str:
    """A parameter value as text that reads back exactly (520, 0.3)."""
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else repr(float(v))


@dataclass(frozen=True)
class Entry:
    """A bot with every one of its parameters, in the bot's order (defaults filled in)."""

    bot: str
    params: tuple[tuple[str, float], ...] = ()

    @classmethod
    def make(cls, bot: str, given: Mapping[str, Any] | None = None) -> Entry:
        """Checks the bot and each given parameter (ParamError); fills in the defaults."""
        from fbsim.policies import registry

        spec = registry()[check_bot(bot)]
        values = {k: check_param(bot, k, v) for k, v in dict(given or {}).items()}
        params = {**spec.defaults(), **values}
        problem = spec.check(params) if spec.check is not None else None
        if problem:
            raise ParamError(f"{bot}: {problem}")
        return cls(bot, tuple(params.items()))

    def changed(self) -> dict[str, float]:
        """The parameters that differ from the bot's defaults."""
        from fbsim.policies import registry

        defaults = registry()[self.bot].defaults()
        return {k: v for k, v in self.params if v != defaults.get(k)}

    def text(self, sep: str = ";") -> str:
        """`bot` or `bot:param=value;...` (the parameters that differ from the defaults)."""
        changed = self.changed()
        if not changed:
            return self.bot
        return self.bot + ":" + sep.join(f"{k}={fmt(v)}" for k, v in changed.items())

    def with_params(self, values: Mapping[str, float]) -> Entry:
        return Entry(self.bot, tuple((k, float(values.get(k, v))) for k, v in self.params))

    def as_dict(self) -> dict[str, float]:
        return dict(self.params)

    def vector(self) -> np.ndarray:
        from fbsim.policies import registry

        return registry()[self.bot].param_vector(dict(self.params))


def _entry(x: Entry | str) -> Entry:
    if isinstance(x, Entry):
        return x
    try:
        return parse_entry(x)
    except ParamError as e:
        raise UsageError(f"lineup: {e}") from None


@dataclass(frozen=True)
class Lineup:
    by_agenda: dict[str, Entry] = field(default_factory=lambda: dict(DEFAULT_BY_AGENDA))
    seats: dict[int, Entry] = field(default_factory=dict)

    def __post_init__(self):
        # bot names (`Lineup({"steward": "hoarder"})`) are entries at default parameters
        by = {a: _entry(self.by_agenda.get(a, DEFAULT_BY_AGENDA[a])) for a in L.AGENDA_NAMES}
        for a in self.by_agenda:
            if a not in by:
                raise UsageError(f"lineup: unknown agenda '{cut(a)}'"
                                 + _suggest(a, L.AGENDA_NAMES))
        object.__setattr__(self, "by_agenda", by)
        object.__setattr__(self, "seats", {int(s): _entry(e)
                                           for s, e in sorted(self.seats.items())})

    # ------------------------------------------------------------------ seats and entries

    def entry_index(self, seat: int, agenda: int) -> int:
        return L.N_AGENDAS + seat if seat in self.seats else agenda

    def entries(self) -> list[Entry | None]:
        """Entry i of the kernel and of the records' `bot` field (None: no such override)."""
        out: list[Entry | None] = [self.by_agenda[a] for a in L.AGENDA_NAMES]
        out += [self.seats.get(s) for s in range(L.MAX_PLAYERS)]
        return out

    def entry_for(self, seat: int, agenda: int) -> Entry:
        return self.entries()[self.entry_index(seat, agenda)]

    def bot_for(self, seat: int, agenda: int) -> str:
        return self.entry_for(seat, agenda).bot

    def labels(self) -> list[str | None]:
        """Each entry's name in tables and records: its bot's name, or, where this lineup
        seats one bot with different parameters, `bot:param=value` (non-default ones)."""
        entries = self.entries()
        variants: dict[str, set] = {}
        for e in entries:
            if e is not None:
                variants.setdefault(e.bot, set()).add(e.params)
        return [None if e is None else (e.bot if len(variants[e.bot]) == 1 else e.text())
                for e in entries]

    def label_for(self, seat: int, agenda: int) -> str:
        return self.labels()[self.entry_index(seat, agenda)]

    def param_matrix(self) -> np.ndarray:
        """The parameter vector of every entry, one row each (zeros where there is none)."""
        P = np.zeros((N_ENTRIES, L.MAX_BOT_PARAMS), dtype=np.float64)
        for i, e in enumerate(self.entries()):
            if e is not None:
                P[i] = e.vector()
        return P

    def with_bot_params(self, bots: Mapping[str, Mapping[str, float]],
                        strict: bool = False) -> Lineup:
        """The `bots.BOT.PARAM` shorthand: those parameters at every entry playing BOT.
        `strict` (what a user gives): a BOT no entry plays is a UsageError, as its values
        would change nothing (a sweep varying it would play one game many times)."""
        if not bots:
            return self
        playing = {e.bot for e in self.entries() if e is not None}
        missing = [b for b in bots if b not in playing]
        if strict and missing:
            b = missing[0]
            raise UsageError(f"bots.{b}.{next(iter(bots[b]))}: no entry of the lineup plays "
                             f"{b}, so it would change nothing; give a lineup with it (e.g. "
                             f"--seat 1={b})")

        def up(e: Entry) -> Entry:
            return e.with_params(bots[e.bot]) if e.bot in bots else e

        return Lineup({a: up(e) for a, e in self.by_agenda.items()},
                      {s: up(e) for s, e in self.seats.items()})

    # ------------------------------------------------------------------ text and hash

    def describe(self) -> str:
        parts = [f"{a}={e.text()}" for a, e in self.by_agenda.items()]
        parts += [f"seat{s}={e.text()}" for s, e in sorted(self.seats.items())]
        return ",".join(parts)

    def canonical(self) -> str:
        """Every entry's bot and parameters, but a `quiet` parameter at its default
        (`fbsim.policies.Param`): one declared later changes no earlier lineup's hash."""

        def params(e: Entry) -> list[list]:
            return [[k, v] for k, v in heard(e.bot, dict(e.params)).items()]

        doc = {"version": LINEUP_VERSION,
               "agendas": {a: [e.bot, params(e)] for a, e in self.by_agenda.items()},
               "seats": {str(s): [e.bot, params(e)] for s, e in sorted(self.seats.items())}}
        return json.dumps(doc, sort_keys=True, separators=(",", ":"))


def lineup_hash(lineup: Lineup) -> str:
    """A stable 16-hex-digit hash of the lineup: every entry's bot and all its parameters."""
    return hashlib.sha256(lineup.canonical().encode()).hexdigest()[:16]


# ------------------------------------------------------------------------------ parsing


def parse_entry(text: str, seps: str = ";") -> Entry:
    """`bot` or `bot:param=value<sep>param=value` (ParamError on bad input)."""
    bot, colon, rest = (x.strip() for x in text.partition(":"))
    if not bot:
        raise ParamError(f"expected a bot name, got '{cut(text)}'")
    check_bot(bot)
    given: dict[str, str] = {}
    if colon:
        items = [rest]
        for sep in seps:
            items = [y for x in items for y in x.split(sep)]
        for item in items:
            item = item.strip()
            if "=" not in item:
                raise ParamError(f"expected PARAM=VALUE after '{bot}:', got '{cut(item)}'")
            k, v = (x.strip() for x in item.split("=", 1))
            if k in given:
                raise ParamError(f"{bot}.{cut(k)}: given twice")
            given[k] = v
    return Entry.make(bot, given)


def split_seat_items(text: str) -> list[str]:
    """`0=hoarder,1=tunable:aim=520,greed=0.3` -> one item per seat (a piece that does not
    start with a seat number continues the previous seat's parameters)."""
    out: list[str] = []
    for piece in text.split(","):
        key = piece.partition("=")[0].strip()
        if out and _seat_number(key) is None:
            out[-1] += "," + piece
        elif piece.strip():
            out.append(piece.strip())
    return out


def _seat_number(text: str) -> int | None:
    """A seat number written in ASCII digits ("2", "-1"), else None (int() would also read
    "٣", "+2" or "1_0")."""
    body = text.removeprefix("-")
    return int(text) if body.isascii() and body.isdigit() else None


def _is_file(text: str) -> bool:
    return text.strip().endswith(".toml")


def parse_lineup(lineup: str | None = None, seats: list[str] | tuple[str, ...] = (),
                 players: int | None = None, flag: str = "--lineup") -> Lineup:
    """`--lineup` (Agenda items, one bot for all, or a lineup file) and `--seat` items.
    With `players`, "{players}" in the text stands for the table size
    (`results/equilibrium/p{players}.toml`). Errors name `flag` (`--field`, say)."""
    by_agenda: dict[str, Entry] = {a: Entry.make(b) for a, b in DEFAULT_BY_AGENDA.items()}
    seat_map: dict[int, Entry] = {}
    hi = (players - 1) if players else L.MAX_PLAYERS - 1
    if lineup and players and "{players}" in lineup:  # a field file per table size
        lineup = lineup.replace("{players}", str(players))
    if lineup and _is_file(lineup):
        lu = lineup_from_file(lineup, players)
        by_agenda, seat_map = dict(lu.by_agenda), dict(lu.seats)
    elif lineup:
        items = [x.strip() for x in lineup.split(",")]
        if not all(items):
            raise UsageError(f"{flag}: an empty item in '{cut(lineup)}' (items are separated "
                             "by ',')")
        if len(items) == 1 and "=" not in items[0].partition(":")[0]:
            e = _parse(items[0], flag)
            by_agenda = {a: e for a in by_agenda}
        else:
            seen = set()
            for item in items:
                agenda, eq, text = (x.strip() for x in item.partition("="))
                if not eq:
                    raise UsageError(f"{flag}: expected AGENDA=BOT, got '{cut(item)}'")
                if agenda not in by_agenda:
                    hint = (f" (in {flag}, separate a bot's parameters with ';': "
                            "accelerationist=tunable:aim=520;greed=0.3)"
                            if seen and ":" in items[items.index(item) - 1] else
                            f" (agendas: {', '.join(L.AGENDA_NAMES)})")
                    raise UsageError(f"{flag}: unknown agenda '{cut(agenda)}'{hint}")
                if agenda in seen:
                    raise UsageError(f"{flag} {agenda}: given twice")
                seen.add(agenda)
                by_agenda[agenda] = _parse(text, f"{flag} {agenda}")
    given_here: set[int] = set()
    for item in seats:
        k, eq, text = (x.strip() for x in item.partition("="))
        if not eq:
            raise UsageError(f"--seat: expected SEAT=BOT, got '{cut(item)}'")
        seat = _seat_number(k)
        if seat is None:
            raise UsageError(f"--seat: seat must be an integer, got '{cut(k)}'")
        if not 0 <= seat <= hi:
            raise UsageError(f"--seat: seat must be 0 to {hi}, got {seat}")
        if seat in given_here:
            raise UsageError(f"--seat {seat}: given twice")
        given_here.add(seat)
        seat_map[seat] = _parse(text, f"--seat {seat}", seps=",;")
    for e in list(by_agenda.values()) + list(seat_map.values()):
        if e.bot == "scripted":
            raise UsageError("the scripted bot plays only from a script (fbsim replay "
                             "--script FILE.toml)")
    return Lineup(by_agenda, seat_map)


def _parse(text: str, where: str, seps: str = ";") -> Entry:
    try:
        return parse_entry(text, seps)
    except ParamError as e:
        raise UsageError(f"{where}: {e}") from None


def lineup_from_file(path: str | Path, players: int | None = None) -> Lineup:
    source = f"lineup file {file_named(Path(path))}"

    def fail(message: str):
        raise UsageError(f"{source}: {message}")

    return lineup_from_toml(read_toml(path, fail), source, players)


def lineup_keys() -> dict[str, Key]:
    """A lineup file's keys (`fbsim.inputs`); each bot's entry is read by `_entry_from_value`."""
    from fbsim.policies.field import DRAWS

    return {"agendas": Key("table", keys={a: Key("any") for a in L.AGENDA_NAMES},
                           known="agenda"),
            "seats": Key("table", "a table of seat overrides ([seats])"),
            "draw": Key("text", choices=tuple(DRAWS))}


def lineup_from_toml(doc: Mapping, source: str = "lineup", players: int | None = None
                     ) -> Lineup:
    """A lineup file:

        [agendas]                 # any Agenda left out keeps its default bot
        steward = "steward"
        accelerationist = { bot = "tunable", aim = 560, greed = 0.5 }
        [seats]                   # optional seat overrides
        1 = { bot = "tunable", aim = 520 }
        2 = "hoarder"             # a string: as --seat (bot or bot:param=value,...)

    An Agenda (or seat) may play a mixed strategy, a *field* (`fbsim.policies.field`):
    planners with weights, one drawn per game (the files `fbsim equilibrium` writes):

        [[agendas.steward.mixture]]
        weight = 0.7              # weights are normalised to sum to 1
        aim = 505                 # planner parameters (the rest: its defaults)
        [[agendas.steward.mixture]]
        weight = 0.3
        buy = 0

    How the mixtures are drawn, one key before the tables (`fbsim.policies.field`):

        draw = "seat"     # every seat draws its own planner: the game as played
        draw = "agenda"   # one draw per Agenda, shared by its seats: a team

    A file with mixtures and no `draw` key is read as "agenda" (the files written before
    the key existed were all solved as team games).
    """
    from fbsim.policies.field import DRAWS

    doc = check(doc, lineup_keys(), failing(UsageError, source))
    how = doc.get("draw", "agenda")
    by_agenda = {a: Entry.make(b) for a, b in DEFAULT_BY_AGENDA.items()}
    seats: dict[int, Entry] = {}
    for table in ("agendas", "seats"):
        for key, value in doc.get(table, {}).items():
            where = f"{source}: {table}.{cut(key)}"
            if table == "seats":
                hi = (players - 1) if players else L.MAX_PLAYERS - 1
                seat = _seat_number(key)
                if seat is None or not 0 <= seat <= hi:
                    raise UsageError(f"{where}: a seat is a number from 0 to {hi}")
                if seat in seats:
                    raise UsageError(f"{where}: seat {seat} given twice")
            entry = _entry_from_value(value, where)
            if table == "agendas":
                by_agenda[key] = entry
            else:
                seats[int(key)] = entry
    for e in list(by_agenda.values()) + list(seats.values()):
        if e.bot == "scripted":
            raise UsageError(f"{source}: the scripted bot plays only from a script")

    def drawn(e: Entry) -> Entry:
        return e.with_params({"draw": DRAWS[how]}) if e.bot == "field" else e

    if "draw" in doc and not any(e.bot == "field" for e in [*by_agenda.values(),
                                                             *seats.values()]):
        raise UsageError(f"{source}: draw: this lineup has no mixture to draw")
    return Lineup({a: drawn(e) for a, e in by_agenda.items()},
                  {s: drawn(e) for s, e in seats.items()})


def _mixture_entry(value: Mapping, where: str) -> Entry:
    """A `mixture` of planners (a list of tables with a `weight` each) as a field entry."""
    from fbsim.policies.field import COMPONENTS, field_params

    for k in value:
        if k != "mixture":
            raise UsageError(f"{where}.{cut(k)}: a mixture takes no other key")
    mix = value["mixture"]
    if not isinstance(mix, list) or not 1 <= len(mix) <= COMPONENTS:
        raise UsageError(f"{where}.mixture: expected a list of 1 to {COMPONENTS} tables")
    comps = []
    for i, c in enumerate(mix):
        w = f"{where}.mixture[{i}]"
        if not isinstance(c, Mapping):
            raise UsageError(f"{w}: expected a table with 'weight' and planner parameters")
        weight = c.get("weight")
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not (
                math.isfinite(weight) and weight > 0):
            raise UsageError(f"{w}.weight: expected a positive number, got "
                             f"{cut(repr(weight))}")
        if c.get("bot", "planner") != "planner":
            raise UsageError(f"{w}.bot: a mixture mixes planners only, got "
                             f"{cut(repr(c['bot']))}")
        params = {}
        for k, v in c.items():
            if k in ("weight", "bot"):
                continue
            params[k] = toml_param("planner", k, v, f"{w}.{cut(k)}")
        comps.append((float(weight), params))
    total = sum(wt for wt, _ in comps)
    if not math.isfinite(total):
        raise UsageError(f"{where}.mixture: the weights' sum is not a finite number "
                         f"({total}); give smaller weights")
    full = [(wt / total, Entry.make("planner", p).as_dict()) for wt, p in comps]
    return Entry.make("field", field_params(full))  # its draw: the file's (`lineup_from_toml`)


def _entry_from_value(value: Any, where: str) -> Entry:
    if isinstance(value, Mapping) and "mixture" in value:
        return _mixture_entry(value, where)
    if isinstance(value, str):
        return _parse(value, where, seps=",;")
    if not isinstance(value, Mapping):
        raise UsageError(f"{where}: expected a bot name or a table with 'bot', got "
                         f"{cut(repr(value))}")
    if "bot" not in value or not isinstance(value["bot"], str):
        raise UsageError(f"{where}.bot: expected the bot's name (a string)")
    try:
        check_bot(value["bot"])
    except ParamError as e:
        raise UsageError(f"{where}.bot: {e}") from None
    for k, v in value.items():
        if k == "bot":
            continue
        toml_param(value["bot"], k, v, f"{where}.{cut(k)}")
    return Entry.make(value["bot"], {k: v for k, v in value.items() if k != "bot"})


def _toml_number(v: float) -> str:
    return fmt(v) if float(v).is_integer() else repr(float(v))


def _entry_toml(e: Entry, key: str) -> list[str]:
    """TOML lines of one entry under `key` (`agendas.steward`): a mixture's components as an
    array of tables, any other bot as an inline table of the parameters that differ."""
    if e.bot != "field":
        items = [f'bot = "{e.bot}"'] + [f"{k} = {_toml_number(v)}"
                                        for k, v in e.changed().items()]
        return [f"{key.split('.')[-1]} = {{ {', '.join(items)} }}"]
    from fbsim.policies import registry
    from fbsim.policies.field import component_params

    defaults = registry()["planner"].defaults()
    lines = []
    for w, params in component_params(e.as_dict()):
        lines += ["", f"[[{key}.mixture]]", f"weight = {_toml_number(w)}"]
        lines += [f"{k} = {_toml_number(v)}" for k, v in params.items() if v != defaults[k]]
    return lines


def lineup_to_toml(lineup: Lineup, comments: list[str] = ()) -> str:
    """A lineup file (read back by `lineup_from_file` to the same lineup): comment lines,
    then every Agenda's entry and the seat overrides; a field's mixture in its readable
    form (an array of tables, after the table of the plain entries)."""
    from fbsim.policies.field import draw_name

    lines = [f"# {c}" if c else "#" for c in comments]
    draws = {draw_name(e.as_dict()) for e in [*lineup.by_agenda.values(),
                                              *lineup.seats.values()] if e.bot == "field"}
    if len(draws) > 1:
        raise ValueError("a lineup file draws every mixture one way: seat or agenda, not both")
    if draws:
        lines += ["", f'draw = "{draws.pop()}"']
    for table, items in (("agendas", list(lineup.by_agenda.items())),
                         ("seats", sorted(lineup.seats.items()))):
        plain = [(k, e) for k, e in items if e.bot != "field"]
        if plain:
            lines += ["", f"[{table}]"]
        for k, e in plain + [(k, e) for k, e in items if e.bot == "field"]:
            lines += _entry_toml(e, f"{table}.{k}")
    return "\n".join(lines).lstrip("\n") + "\n"


def lineup_from_description(text: str) -> Lineup:
    """The inverse of `Lineup.describe()` (as stored in tables' provenance)."""
    by_agenda: dict[str, Entry | str] = dict(DEFAULT_BY_AGENDA)
    seats: dict[int, Entry] = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        key, _, bot = item.partition("=")
        if key.startswith("seat") and key[4:].isascii() and key[4:].isdigit():
            seats[int(key[4:])] = _parse(bot, "lineup")
        elif key in by_agenda:
            by_agenda[key] = _parse(bot, "lineup")
        else:
            raise UsageError(f"lineup: cannot read '{cut(item)}'")
    return Lineup(by_agenda, seats)


# ------------------------------------------------------------------ the bots.X.Y shorthand


def bot_param_sets(items: Mapping[str, Any], source: str = "--set"
                   ) -> dict[str, dict[str, float]]:
    """Checked `bots.BOT.PARAM` values from dotted keys (others are ignored)."""
    from fbsim.errors import ConfigError

    out: dict[str, dict[str, float]] = {}
    for key, value in items.items():
        parts = key.split(".")
        if parts[0] != "bots":
            continue
        if len(parts) != 3:
            raise ConfigError(key, "expected bots.BOT.PARAM", source)
        try:
            check_bot(parts[1])
        except ParamError as e:
            raise ConfigError(".".join(parts[:2]), str(e), source) from None
        try:
            out.setdefault(parts[1], {})[parts[2]] = check_param(parts[1], parts[2], value)
        except ParamError as e:
            msg = str(e).removeprefix(f"{parts[1]}.{parts[2]}: ")
            raise ConfigError(key, msg, source) from None
    return out


def merge_bot_params(*tables: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for t in tables:
        for bot, params in t.items():
            out.setdefault(bot, {}).update(params)
    return out


def heard(bot: str, params: dict) -> dict:
    """`params` of `bot` without its `quiet` parameters at their defaults
    (`fbsim.policies.Param`: the planner's table cells that play the plan, say): what a
    lineup's hash and a summary's list of parameters show."""
    from fbsim.policies import registry

    quiet = {p.name: p.default for p in registry()[bot].params if p.quiet}
    return {k: v for k, v in params.items() if k not in quiet or v != quiet[k]}
