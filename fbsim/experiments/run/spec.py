"""Sweep specifications: which sweep points to play, and how many games each.

A spec is a grid over any rules or bot parameters (`vary`), optionally crossed with the table
sizes (`players`), or an explicit list of points. It comes from `fbsim sweep` flags or from a
TOML file:

    games = 1000000          # games per point (or ci_width = 0.005 for adaptive runs)
    seed = 1
    players = "3..6"         # or [3, 4]
    rules = "my-rules.toml"  # optional, relative to this file
    lineup = "accelerationist=hoarder"   # optional (default lineup otherwise; a bot's
                             # parameters: "accelerationist=tunable:aim=560;greed=0.5", or
                             # a lineup file "my-field.toml", relative to this file)
    seats = ["2=random"]     # optional seat overrides for every point ("1=tunable:aim=520")

    [set]                    # fixed overrides for every point
    masks = 3

    [vary]                   # the grid: every combination of these values
    baseline_offset = "-2..2"
    "bots.fog-grabber.greed" = "0..1:0.25"

    [baseline]               # the point the paired differences are taken against
    baseline_offset = 0      # (default: each varied parameter's default value)

    [[points]]               # or explicit points instead of a grid
    players = 4
    seat_bot = "0=hoarder"

Besides rules keys, a point may set `players`, `lineup` (as --lineup) and `seat_bot` (as
--seat, several separated by commas; "" for none). A `bots.BOT.PARAM` key (in `set`, `vary`,
`baseline` or a point) is not a rule: it sets PARAM at every lineup entry that plays BOT.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from fbsim.errors import ConfigError, FbsimError, UsageError, cut, file_named, shown
from fbsim.experiments.run.options import (
    checked_sizes,
    games_count,
    players_source,
    table_sizes,
)
from fbsim.inputs import Key, check, failing
from fbsim.limits import MAX_GAMES, MAX_SEED
from fbsim.lineup import Lineup, merge_bot_params, parse_lineup, split_seat_items
from fbsim.rules import Rules, load_rules, nest, parse_set, rules_hash
from fbsim.tomlfile import read_toml

SPECIAL = ("players", "lineup", "seat_bot")
RULES_PATH = Key("text", "the path of a rules file")
LINEUP_TEXT = Key("text", "a lineup (text) or a lineup file")
PLAYERS = Key(("count", "text", "list"), "table sizes (3 to 6): 4, \"3..6\" or [3, 4]")
GAMES = Key("count", lo=1, hi=MAX_GAMES)
SEED = Key("count", lo=0, hi=MAX_SEED)
TEXT = Key("text")
TABLE = Key("table")  # rules keys, flattened and checked by the rules' own schema
BAND = Key("list", "[lo, hi] with 0 <= lo <= hi <= 1", size=(2, 2),
           item=Key("number", "a rate from 0 to 1", lo=0, hi=1))
# A sweep spec file's keys (`fbsim.inputs`).
SPEC_FILE = {
    "games": GAMES, "seed": SEED, "players": PLAYERS, "rules": RULES_PATH,
    "lineup": LINEUP_TEXT,
    "seats": Key(("text", "list"), "a seat override like \"2=random\" or a list of them",
                 item=TEXT),
    "set": TABLE, "vary": TABLE, "baseline": TABLE,
    "points": Key("list", "an array of tables ([[points]])", item=TABLE),
    "ci_width": Key("number", lo=0, hi=0.5, open=True),
    "min_games": GAMES, "max_games": GAMES, "title": TEXT,
}
SPEC_KEYS = tuple(SPEC_FILE)
MAX_POINTS = 100_000


class SpecError(FbsimError):
    """A sweep spec that cannot run: names the parameter and what is wrong."""

    exit_code = 2


@dataclass
class SweepSpec:
    games: int = 100_000
    seed: int = 0
    players: list[int] = field(default_factory=lambda: [4])
    rules: str | None = None  # base rules file
    lineup: str | None = None
    seats: list[str] = field(default_factory=list)
    set: dict[str, Any] = field(default_factory=dict)
    vary: dict[str, list[Any]] = field(default_factory=dict)
    baseline: dict[str, Any] = field(default_factory=dict)
    points: list[dict[str, Any]] = field(default_factory=list)
    ci_width: float | None = None
    min_games: int = 20_000
    max_games: int = 100_000_000
    title: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    def digest(self, base_rules_hash: str, lineup_hashes: list[str] | None = None) -> str:
        """Identifies the sweep: the spec, the base rules (their hash: what the rules are, not
        how `fbsim rules` words them) and the points' lineups (their hashes: a lineup file's
        content or a bot's defaults may change under the spec)."""
        doc = json.dumps({"spec": self.to_dict(), "rules": base_rules_hash,
                          "lineups": lineup_hashes or []}, sort_keys=True, default=str)
        return hashlib.sha256(doc.encode()).hexdigest()[:16]


@dataclass
class Point:
    index: int
    values: dict[str, Any]  # the point's coordinates (players and every varied key)
    rules: Rules
    lineup: Lineup
    baseline: int = -1  # index of the point its paired differences are taken against

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def label(self) -> str:
        return coords_label(self.values)


def coords_label(coords: dict[str, Any]) -> str:
    """A point's coordinates as text: `players=4, masks=2`."""
    return ", ".join(f"{k}={v}" for k, v in coords.items())


# ----------------------------------------------------------------------------- values


def _number(text: str, key: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise SpecError(f"{cut(key)}: '{cut(text)}' is not a number") from None


def parse_values(key: str, raw: Any) -> list[Any]:
    """`LO..HI` (integers), `LO..HI:STEP`, `a,b,c` (TOML values) or a TOML list."""
    if isinstance(raw, list):
        values = list(raw)
    elif isinstance(raw, str) and ".." in raw and key not in ("lineup", "seat_bot"):
        body, _, step_text = raw.partition(":")
        lo_text, _, hi_text = body.partition("..")
        lo, hi = _number(lo_text.strip(), key), _number(hi_text.strip(), key)
        step = _number(step_text.strip(), key) if step_text else 1
        if not all(abs(x) < 1e15 for x in (lo, hi, step)):  # (inf and nan fail too)
            raise SpecError(f"{cut(key)}: the range '{cut(raw)}' needs ends and a step of at most "
                            "1e15 in size")
        if step <= 0:
            raise SpecError(f"{cut(key)}: the step of '{cut(raw)}' must be > 0")
        if hi < lo:
            raise SpecError(f"{cut(key)}: the range '{cut(raw)}' is empty (its end is below "
                            "its start)")
        span = (hi - lo) / step
        count = int(math.floor(span + 1e-9)) + 1 if span < MAX_POINTS else MAX_POINTS + 1
        if count > MAX_POINTS:
            raise SpecError(f"{cut(key)}: the range '{cut(raw)}' has {count} values (at most "
                            f"{MAX_POINTS})")
        integer = all(isinstance(x, int) for x in (lo, hi, step))
        values = [lo + i * step if integer else round(lo + i * step, 12) for i in range(count)]
    elif isinstance(raw, str):
        values = []
        for item in raw.split(","):
            item = item.strip()
            if key in ("lineup", "seat_bot"):
                values.append(item)
                continue
            if not item and raw.strip():  # (all blank: no values, said below)
                raise SpecError(f"{cut(key)}: an empty value in '{cut(raw)}' (two commas, or "
                                "one at an end)")
            if item:
                values.append(parse_set(f"v={item}")[1])
    else:
        values = [raw]
    if not values:
        raise SpecError(f"{cut(key)}: no values to sweep")
    if len({json.dumps(v, sort_keys=True) for v in values}) != len(values):
        raise SpecError(f"{cut(key)}: a value is repeated in {shown(values)}")
    return values


def parse_vary(items: list[str]) -> dict[str, list[Any]]:
    """`--vary key=values` items."""
    out: dict[str, list[Any]] = {}
    for item in items:
        if "=" not in item:
            raise SpecError(f"--vary: expected key=values, got '{item}'")
        key, raw = (x.strip() for x in item.split("=", 1))
        if not key:
            raise SpecError(f"--vary: expected key=values, got '{item}'")
        if key in out:
            raise SpecError(f"--vary {key}: given twice")
        out[key] = parse_values(key, raw)
    return out


def players_list(raw: Any) -> list[int]:
    """A spec's `players`: 4, "3..6", "3,5" or [3, 4] (`options.table_sizes`)."""
    try:
        if isinstance(raw, str):
            return table_sizes(raw, "players")
        return checked_sizes(raw if isinstance(raw, list) else [raw], "players")
    except UsageError as e:
        raise SpecError(str(e)) from None


def named_players(spec: SweepSpec) -> tuple[int, str] | None:
    """The table size the spec's rules file or `set` names, and where (None when neither
    names one: the table sizes are then the spec's own)."""
    n = base_rules(spec).players  # (a bad rules file fails here, with its own message)

    def fail(message: str):
        raise SpecError(f"rules file {file_named(spec.rules)}: {message}")

    source = players_source(spec.rules, spec.set, fail)
    return None if source is None else (n, source)


def resolve_players(spec: SweepSpec, flag: str | None, spec_named: bool = False) -> None:
    """Set `spec.players` to the table size the rules name, unless `--players` (its text:
    `flag`) or the spec file (`spec_named`) gives others: then the two must agree."""
    named = named_players(spec)
    if named is None:
        return
    n, source = named
    if spec.players == [n]:
        return
    if flag is not None:
        raise UsageError(f"--players {flag}: conflicts with players = {n} from {source}")
    if spec_named:
        raise SpecError(f"players: the spec's {spec.players} conflict with players = {n} "
                        f"from {source}")
    spec.players = [n]


# ------------------------------------------------------------------------------ files


DEFAULT_SWEEP = {"baseline_offset": [-2, -1, 0, 1, 2]}  # at 3 to 6 players (`fbsim sweep`)


def sweep_from_command_line(spec_file: Path | None, *, vary: list[str], players: str | None,
                            games: str | None, seed: int | None, lineup: str | None,
                            seats: list[str], rules: Path | None, sets: list[str],
                            baseline: list[str], ci_width: float | None,
                            min_games: str | None, max_games: str | None) -> SweepSpec:
    """The sweep `fbsim sweep` runs: the spec file, or the default sweep (`DEFAULT_SWEEP`;
    with --vary, those keys at 4 players), with each flag given over it; the table sizes the
    rules name unless --players or the spec file gives others (then they must agree)."""
    doc: dict = {}
    if spec_file is not None:
        doc, where = read_spec_file(spec_file, "sweep spec")
        spec = spec_from_dict(doc, where, base_dir=Path(spec_file).parent)
    else:
        spec = SweepSpec(players=[4] if vary else [3, 4, 5, 6],
                         vary={} if vary else dict(DEFAULT_SWEEP))
    def read(value, how):
        return None if value is None else how(value)

    given = {"players": read(players, table_sizes), "games": read(games, games_count),
             "seed": seed, "lineup": lineup, "seats": list(seats) or None,
             "rules": read(rules, str), "ci_width": ci_width,
             "min_games": read(min_games, lambda x: games_count(x, "--min-games")),
             "max_games": read(max_games, lambda x: games_count(x, "--max-games"))}
    spec = replace(spec, **{k: v for k, v in given.items() if v is not None},
                   vary={**spec.vary, **parse_vary(vary)},
                   set={**spec.set, **dict(parse_set(x) for x in sets)},
                   baseline={**spec.baseline, **dict(parse_set(x) for x in baseline)})
    bounds = [k for k in ("min_games", "max_games") if k in doc]
    if bounds and spec.ci_width is None:  # (as --min-games without --ci-width is refused)
        raise SpecError(f"{where}: {bounds[0]}: only with ci_width (a point plays until its "
                        "intervals are that narrow, between min_games and max_games)")
    resolve_players(spec, players, "players" in doc)
    return spec


def read_spec_file(path: str | Path, what: str) -> tuple[dict, str]:
    """A spec file's TOML, and how errors name it ("sweep spec FILE")."""
    where = f"{what} {Path(path)}"

    def fail(message: str):
        raise SpecError(f"{where}: {message}")

    return read_toml(path, fail), where


def load_spec(path: str | Path) -> SweepSpec:
    doc, where = read_spec_file(path, "sweep spec")
    return spec_from_dict(doc, where, base_dir=Path(path).parent)


def read_table_fields(doc: dict, s: Any, base_dir: Path | None, where: str = "spec") -> None:
    """`players`, `rules` (relative to the spec file) and `lineup` of a checked document
    (`fbsim.inputs.check`), shared by every spec."""
    if "players" in doc:
        try:
            s.players = players_list(doc["players"])
        except SpecError as e:
            raise SpecError(f"{where}: {e}") from None
    if "rules" in doc:
        rp = Path(doc["rules"])
        s.rules = str(rp if rp.is_absolute() or base_dir is None else base_dir / rp)
    if "lineup" in doc:
        s.lineup = str(doc["lineup"])
        lp = Path(s.lineup)
        if s.lineup.strip().endswith(".toml") and not lp.is_absolute() and base_dir is not None:
            s.lineup = str(base_dir / lp)  # a lineup file, relative to the spec file


def spec_from_dict(doc: dict, where: str = "sweep spec", base_dir: Path | None = None
                   ) -> SweepSpec:
    doc = check(doc, SPEC_FILE, failing(SpecError, where))
    s = SweepSpec()
    for key in ("games", "seed", "min_games", "max_games", "title", "ci_width"):
        if key in doc:
            setattr(s, key, doc[key])
    read_table_fields(doc, s, base_dir, where)
    if "seats" in doc:
        s.seats = [doc["seats"]] if isinstance(doc["seats"], str) else doc["seats"]
    s.set = flatten(doc.get("set", {}), where=f"{where}: set.")
    for k, v in flatten(doc.get("vary", {}), where=f"{where}: vary.").items():
        try:
            s.vary[k] = parse_values(k, v)
        except SpecError as e:
            raise SpecError(f"{where}: vary.{e}") from None
    s.baseline = flatten(doc.get("baseline", {}), where=f"{where}: baseline.")
    both = [k for k in s.set if k in s.vary]
    if both:  # (every point would play the swept values: the set one would do nothing)
        raise SpecError(f"{where}: set.{cut(both[0])}: also swept under [vary]; give it in "
                        "one of them")
    s.points = [flatten(x, where=f"{where}: points[{i}].")
                for i, x in enumerate(doc.get("points", []))]
    seen: list[str] = []  # (the searches build their points apart, and may repeat one)
    for i, pt in enumerate(s.points):
        here = json.dumps(pt, sort_keys=True, default=str)
        if here in seen:  # as a value repeated under [vary] is refused
            raise SpecError(f"{where}: points[{i}]: the same point as points"
                            f"[{seen.index(here)}] ({shown(pt)})")
        seen.append(here)
    for key in ("lineup", "seat_bot"):
        found = [(f"vary.{key}", v) for v in s.vary.get(key, [])] + [
            (f"points[{i}].{key}", pt[key]) for i, pt in enumerate(s.points) if key in pt]
        for name, v in found:
            if not isinstance(v, str):
                raise SpecError(f"{where}: {name}: expected text, got {shown(v)}")
    return s


def flatten(d: dict, prefix: str = "", where: str = "") -> dict:
    """Nested TOML tables to dotted keys (bots.fog-grabber.greed), keeping lists as values;
    a key given both ways ("a.b" = 1 beside [a] b = 2) is an error, which `where` starts."""
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        items = flatten(v, key + ".", where) if isinstance(v, dict) else {key: v}
        for name, value in items.items():
            if name in out:
                raise SpecError(f"{where}{cut(name)}: given twice (as a dotted key and in a "
                                "table)")
            out[name] = value
    return out


# ----------------------------------------------------------------------------- points


def _coordinates(spec: SweepSpec) -> list[dict[str, Any]]:
    if spec.points and spec.vary:
        raise SpecError("a spec has either [vary] or [[points]], not both")
    if spec.points:
        coords = []
        for pt in spec.points:
            c = dict(pt)
            c.setdefault("players", spec.players[0] if len(spec.players) == 1 else None)
            if c["players"] is None:
                raise SpecError(f"points: the point {pt} sets no players")
            coords.append(c)
        return coords
    keys = list(spec.vary)
    if "players" in keys:
        raise SpecError("vary: players: give table sizes as players = ..., not under [vary]")
    coords = []
    for n in spec.players:
        for combo in itertools.product(*(spec.vary[k] for k in keys)):
            coords.append({"players": n, **dict(zip(keys, combo, strict=True))})
    if len(coords) > MAX_POINTS:
        raise SpecError(f"vary: the grid has {len(coords)} points (at most {MAX_POINTS})")
    return coords


def base_rules(spec: SweepSpec, bots: dict | None = None) -> Rules:
    """The rules every point starts from; `bots`: receives the `bots.BOT.PARAM` values of
    the spec's `set` (and of an old rules file's `[bots.BOT]` tables)."""
    return load_rules(spec.rules, overrides=nest(spec.set), overrides_source="--set",
                      bots={} if bots is None else bots)


def _point(spec: SweepSpec, index: int, coords: dict[str, Any], base: Rules,
           base_bots: dict | None = None) -> Point:
    rules_items = {k: v for k, v in coords.items() if k not in ("lineup", "seat_bot")}
    label = coords_label(coords)
    bots: dict = {}
    try:
        rules = load_rules(None, base=base, overrides=nest(rules_items),
                           overrides_source="--set", bots=bots)
    except ConfigError as e:
        varied = e.key if e.key in coords else next(
            (k for k in coords if e.key.startswith(k) or k.startswith(e.key)), e.key)
        raise SpecError(f"{cut(varied)}: at the point ({cut(label)}): {cut(e.key)}: "
                        f"{e.message}") from None
    seats = list(spec.seats)
    if "seat_bot" in coords:
        seats += split_seat_items(str(coords["seat_bot"]))
    try:
        lineup = parse_lineup(coords.get("lineup", spec.lineup), seats, rules.players)
    except UsageError as e:
        raise SpecError(f"{e} (at the point {cut(label)})") from None
    # `bots.BOT.PARAM` (from `set` or a coordinate): PARAM at every entry playing BOT
    lineup = lineup.with_bot_params(merge_bot_params(base_bots or {}, bots))
    return Point(index, dict(coords), rules, lineup)


def _same_value(a: Any, b: Any) -> bool:
    """Equal as the spec means it: 1 and 1.0 alike, true and 1 not."""
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(
            a, bool) and not isinstance(b, bool):
        return a == b
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _matches_baseline(coords: dict, wanted: dict) -> bool:
    return all(_same_value(coords.get(k), v) for k, v in wanted.items())


def build_points(spec: SweepSpec) -> tuple[Rules, list[Point]]:
    """Every point's effective rules and lineup, validated before any game runs."""
    if spec.ci_width is None and spec.games < 1:
        raise SpecError("games: must be >= 1")
    if spec.ci_width is not None and spec.min_games > spec.max_games:
        raise SpecError("min_games: must not exceed max_games")
    both = [k for k in spec.vary if k in spec.set]
    if both:  # (the varied values replace the set one at every point: it would do nothing)
        raise SpecError(f"set: {cut(both[0])}: also varied (vary: {cut(both[0])}); the varied "
                        "values replace it at every point: give it one way")
    every = [k for k in spec.set if spec.points and all(k in p for p in spec.points)]
    if every:  # (the same with explicit points that each give it)
        raise SpecError(f"set: {cut(every[0])}: every point gives its own value (points); the "
                        "set one would change nothing: give it one way")
    base_bots: dict = {}
    try:
        base = base_rules(spec, base_bots)
    except ConfigError as e:
        raise SpecError(str(e)) from None
    coords = _coordinates(spec)
    points = [_point(spec, i, c, base, base_bots) for i, c in enumerate(coords)]
    _check_bots_played(points, [*base_bots, *(k.split(".")[1] for c in coords for k in c
                                              if k.startswith("bots.") and k.count(".") == 2)])
    # the baseline of each table size: the spec's [baseline] values, else each varied key
    # at its default value (when it is among the values swept), else the first point
    varied = [k for k in coords[0] if k != "players"] if coords else []
    for key in spec.baseline:
        if key not in varied:
            raise SpecError(f"baseline: {cut(key)}: not a varied parameter (varied: "
                            f"{cut(', '.join(varied)) or 'none'})")
        values = list(dict.fromkeys(json.dumps(c.get(key)) for c in coords))
        if not any(_same_value(c.get(key), spec.baseline[key]) for c in coords):
            raise SpecError(f"baseline: {cut(key)}={cut(json.dumps(spec.baseline[key]))}: "
                            f"not among the values swept ({cut(', '.join(values))})")
    wanted = dict(spec.baseline)
    for key in varied:
        if key in wanted or key in ("lineup", "seat_bot"):
            continue
        default = _default_value(base, key, base_bots)
        if default is not None and any(_same_value(c.get(key), default) for c in coords):
            wanted[key] = default
    for pt in points:
        group = [q for q in points if q.players == pt.players]
        exact = [q for q in group if _matches_baseline(q.values, wanted)]
        pt.baseline = (exact or group)[0].index
    return base, points


def _check_bots_played(points: list[Point], bots: list[str]) -> None:
    """A `bots.BOT.PARAM` value where no point's lineup plays BOT changes nothing (a sweep
    varying it plays the same games at every point): SpecError naming the bot."""
    played = {e.bot for p in points for e in p.lineup.entries() if e is not None}
    for bot in dict.fromkeys(bots):
        if bot not in played:
            raise SpecError(f"bots.{bot}: no entry of any point's lineup plays {bot}, so its "
                            f"parameters would change nothing; give a lineup with it (e.g. "
                            f"--seat 1={bot})")


def _default_value(base: Rules, key: str, base_bots: dict | None = None) -> Any:
    from fbsim.rules import to_dict

    parts = key.split(".")
    if parts[0] == "bots" and len(parts) == 3:  # the spec's own value, else the bot's default
        from fbsim.policies import registry

        given = (base_bots or {}).get(parts[1], {})
        spec = registry().get(parts[1])
        defaults = spec.defaults() if spec else {}
        return given.get(parts[2], defaults.get(parts[2]))
    cur: Any = to_dict(base)
    for part in key.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


DEFAULT_FIELD = ("the default bots (Steward steward, Opportunist opportunist, Accelerationist "
                 "fog-grabber): what these bots do, not what the game does under strong play")


def field_of(spec: SweepSpec, points: list[Point]) -> str:
    """What the sweep's games were played by, in words: the default bots, the spec's lineup
    (a field file, say), or each point's own."""
    if all(p.lineup == Lineup() for p in points):
        return DEFAULT_FIELD
    if spec.lineup and not any(k in ("lineup", "seat_bot") for k in spec.vary) and not any(
            k in ("lineup", "seat_bot") for pt in spec.points for k in pt):
        return f"the lineup {spec.lineup}"
    return "each point's own lineup (in the tables' provenance)"


def describe(spec: SweepSpec, points: list[Point]) -> str:
    sizes = sorted({p.players for p in points})
    games = (f"{spec.games:,} games" if spec.ci_width is None else
             f"until every half-width <= {spec.ci_width:g} ({spec.min_games:,}.."
             f"{spec.max_games:,} games)")
    varied = ", ".join(f"{k} ({len(v)})" for k, v in spec.vary.items()) or ", ".join(
        k for k in (points[0].values if points else {}) if k != "players") or "nothing"
    return (f"{len(points)} points (players {', '.join(map(str, sizes))}; varying "
            f"{varied}), {games} per point, seed {spec.seed}; rules "
            f"{rules_hash(points[0].rules) if points else '-'} at the first point; field: "
            f"{field_of(spec, points)}")
