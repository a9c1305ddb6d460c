"""The rules configuration: every number and table of RULES.md as frozen dataclasses.

`Rules()` is the rulebook as written (with the D1-D9 defaults). `load_rules(file, sets)` reads
a partial TOML file and `--set path=value` overrides on top of the defaults and validates
everything before anything runs; `rules_to_toml` prints the effective rules with a comment
per key; `rules_hash` identifies them in every output; `rules_vector` packs them for one table
size into the int64 vector that the bots and the kernel read (layout in `fbsim.game.layout`).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, get_origin, get_type_hints

import numpy as np

from fbsim.errors import ConfigError
from fbsim.game import layout as L

RULES_VERSION = 2  # 2: bot parameters left the rules (they belong to the lineup)


def F(default: Any, help: str, lo: float | None = None, hi: float | None = None,
      choices: tuple[str, ...] | None = None):
    """A rules field: default, one-line help (printed by `fbsim rules`) and its valid range."""
    meta = {"help": help, "lo": lo, "hi": hi, "choices": choices}
    if isinstance(default, (dict, list)) or is_dataclass(default):
        return field(default_factory=lambda d=default: _copy(d), metadata=meta)
    return field(default=default, metadata=meta)


def _copy(x):
    if isinstance(x, dict):
        return {k: _copy(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_copy(v) for v in x]
    return x  # frozen dataclasses are safe to share


def _d1(players: int) -> tuple[int, ...]:
    # D1: at 3 players 7, 7, 8, 9, 10, 10, 12, 12; each player above 3 adds 2 per round.
    return tuple(b + 2 * (players - 3) for b in (7, 7, 8, 9, 10, 10, 12, 12))


@dataclass(frozen=True)
class Dial:
    start: int = F(450, "R-S1: the Dial's reading at setup (ppm)")
    collapse: int = F(600, "R-W4/R-V2/R-E2: the game ends in Collapse at this reading or above")
    severe: int = F(510, "R-E2: first reading of the Severe band (Warming is below it)")
    extreme: int = F(550, "R-E2: first reading of the Extreme band")
    floor_enabled: bool = F(False, "D4: the Dial has no floor unless this is true")
    floor: int = F(0, "D4: the lowest reading when floor_enabled is true")


@dataclass(frozen=True)
class Tipping:
    start_flipped: int = F(1, "R-S1: tokens flipped at setup (Ice Loss), with no threshold",
                           0, None)
    thresholds: tuple[int, ...] = F((500, 550, 575),
                                    "R-W3: readings (>=) that flip the other tokens, once")
    penalty: int = F(2, "R-W2: ppm each flipped token adds at every world turn")


@dataclass(frozen=True)
class Baseline:
    p3: tuple[int, ...] = F(_d1(3), "D1: baseline ppm per round at 3 players")
    p4: tuple[int, ...] = F(_d1(4), "D1: baseline ppm per round at 4 players")
    p5: tuple[int, ...] = F(_d1(5), "D1: baseline ppm per round at 5 players")
    p6: tuple[int, ...] = F(_d1(6), "D1: baseline ppm per round at 6 players")

    def for_players(self, n: int) -> tuple[int, ...]:
        return getattr(self, f"p{n}")


@dataclass(frozen=True)
class Jobs:
    cool_ppm: int = F(3, "R-V2: ppm each COOL Agent removes", 0, None)
    burn_ppm: int = F(3, "R-V2: ppm each BURN Agent adds", 0, None)
    cool_cost: int = F(1, "R-V4/R-C3: Capital each COOL costs its owner", 0, None)
    burn_pay: int = F(3, "R-V3: Capital each open BURN pays its owner", 0, None)
    burn_pay_revealed: int = F(4, "R-A5: open BURN pay of a revealed Accelerationist", 0, None)
    fog_per_masked_burn: int = F(3, "R-V3: Capital each masked BURN puts in the Fog pot",
                                 0, None)


@dataclass(frozen=True)
class Fog:
    partial_fill: bool = F(True, "D5: a claim over what is left gets what is left "
                                 "(false: it gets nothing)")
    carry_over: bool = F(True, "D6: the pot carries over between rounds (false: emptied "
                               "after the claims)")


@dataclass(frozen=True)
class Market:
    size: int = F(4, "R-S5/R-V6: face-up market cards, refilled after each purchase", 1,
                  L.MAX_MARKET)
    purchase_labour: int = F(3, "R-V6: WORKS Agents each purchase uses", 1, None)
    wage: int = F(2, "R-V6: Capital each WORKS Agent not used for a purchase earns", 0, None)


@dataclass(frozen=True)
class Accusation:
    rounds: tuple[int, ...] = F((3, 6), "R-A1: an Accusation follows these rounds")
    point_weight: int = F(1, "R-A2: weight of a point", 0, None)
    pay_per_accuser: int = F(2, "R-A4: what the cornered player pays each accuser to stay "
                                "hidden", 0, None)
    media_stacks: bool = F(False, "D7: false: several Media Houses still weigh 2 (the largest "
                                  "weight counts); true: their weights add up")


@dataclass(frozen=True)
class Scoring:
    capital_per_legacy: int = F(2, "R-E4: Capital per Legacy point (rounded down)", 1, None)
    collapse_min_capital: int = F(10, "R-E3: Capital an Accelerationist needs to win a "
                                      "Collapse", 0, None)
    tiebreak_first_player: str = F("last-round", "D8: whose order breaks end-of-game ties: "
                                                 "the first player of the last round "
                                                 "played, or of round 1",
                                   choices=("last-round", "round-1"))


@dataclass(frozen=True)
class Agendas:
    steward_base: int = F(4, "R-X1: Steward bonus in Warming")
    steward_per_step: int = F(3, "R-X1: Steward bonus per full step below Severe")
    steward_step: int = F(10, "R-X1: the Steward's step in ppm", 1, None)
    opportunist_severe: int = F(9, "R-X1: Opportunist bonus in Severe")
    accelerationist_extreme: int = F(4, "R-X1: Accelerationist bonus in Extreme")
    accelerationist_per_heat_asset: int = F(1, "R-X1: Accelerationist bonus per owned asset "
                                               "with positive ppm, in Extreme")
    accelerationist_other: int = F(-2, "R-X1: Accelerationist bonus in any other survival "
                                       "band")


@dataclass(frozen=True)
class Deck:
    steward: int = F(2, "Steward cards", 0, None)
    opportunist: int = F(1, "Opportunist cards", 0, None)
    accelerationist: int = F(1, "Accelerationist cards", 0, None)

    def counts(self) -> tuple[int, int, int]:
        return (self.steward, self.opportunist, self.accelerationist)


@dataclass(frozen=True)
class Decks:
    p3: Deck = F(Deck(2, 1, 1), "D2: agenda deck at 3 players")
    p4: Deck = F(Deck(2, 2, 2), "D2: agenda deck at 4 players")
    p5: Deck = F(Deck(3, 2, 2), "D2: agenda deck at 5 players")
    p6: Deck = F(Deck(3, 3, 2), "D2: agenda deck at 6 players")

    def for_players(self, n: int) -> Deck:
        return getattr(self, f"p{n}")


@dataclass(frozen=True)
class Asset:
    count: int = F(0, "cards of this kind in the asset deck", 0, None)
    price: int = F(0, "printed price in Capital (plus the purchase labour)", 0, None)
    income: int = F(0, "Capital paid to the owner at every world turn", 0, None)
    ppm: int = F(0, "ppm added to the Dial at every world turn")
    legacy_warming: int = F(0, "Legacy if the game ends in Warming")
    legacy_severe: int = F(0, "Legacy if the game ends in Severe")
    legacy_extreme: int = F(0, "Legacy if the game ends in Extreme")
    accusation_weight: int = F(0, "ability: the owner's point weighs this much (0: none)",
                               0, None)
    collapse_tiebreak: bool = F(False, "ability: counts in the Collapse tie-break (R-E3)")


def _d3() -> dict[str, Asset]:
    # D3: count, price, income, ppm, Legacy by band, ability
    return {
        "refinery": Asset(count=5, price=4, income=3, ppm=1),
        "carbon-sink": Asset(count=4, price=5, income=0, ppm=-2, legacy_warming=3),
        "media-house": Asset(count=2, price=4, income=1, ppm=0, accusation_weight=2),
        "grey-bank": Asset(count=2, price=3, income=2, ppm=0),
        "bunker": Asset(count=2, price=4, income=0, ppm=0, legacy_extreme=3,
                        collapse_tiebreak=True),
    }


@dataclass(frozen=True, eq=False)
class Rules:
    players: int = F(4, "R-S6: players at the table", 3, 6)
    rounds: int = F(8, "R-S6: rounds at most", 1, L.MAX_ROUNDS)
    baseline_offset: int = F(0, "added to every round's baseline (D1), for sweeps")
    agents: int = F(6, "R-S2: Agents per player", 1, None)
    capital: int = F(8, "R-S2: starting Capital per player", 0, None)
    stagger: int = F(1, "R-S3: extra starting Capital per place after the first player",
                     0, None)
    masks: int = F(2, "R-S2: Masks per player for the whole game", 0, None)
    first_player: int = F(0, "D9: seat of the round-1 first player", 0, 5)
    income_before_collapse: bool = F(True, "R-W1 before R-W4: assets pay their income "
                                           "even at a world turn that ends in Collapse")
    dial: Dial = F(Dial(), "")
    tipping: Tipping = F(Tipping(), "")
    baseline: Baseline = F(Baseline(), "")
    jobs: Jobs = F(Jobs(), "")
    fog: Fog = F(Fog(), "")
    market: Market = F(Market(), "")
    accusation: Accusation = F(Accusation(), "")
    scoring: Scoring = F(Scoring(), "")
    agendas: Agendas = F(Agendas(), "")
    decks: Decks = F(Decks(), "")
    assets: dict[str, Asset] = F(_d3(), "D3: the asset deck, one table per kind")

    def __eq__(self, other):
        # the order of the asset kinds matters (it is their index in the deck), which a
        # plain dict comparison would ignore
        if not isinstance(other, Rules):
            return NotImplemented
        return _canonical(self) == _canonical(other)

    def __hash__(self):
        return hash(_canonical(self))

    # convenience views
    @property
    def asset_names(self) -> tuple[str, ...]:
        return tuple(self.assets)



# --------------------------------------------------------------------------- dict form


def to_dict(obj: Any) -> Any:
    """Plain nested dict/list/scalar form (what TOML holds)."""
    if is_dataclass(obj):
        return {f.name: to_dict(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, Mapping):
        return {k: to_dict(v) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return [to_dict(v) for v in obj]
    return obj


def _canonical(rules: Rules) -> str:
    """The rules as canonical JSON: keys sorted, except the asset kinds, kept in order."""
    d = to_dict(rules)
    d["assets"] = [[name, fields] for name, fields in d["assets"].items()]
    return json.dumps(d, sort_keys=True, separators=(",", ":"))


def rules_hash(rules: Rules) -> str:
    """A stable 16-hex-digit hash of the effective rules (identifies them in every output)."""
    return hashlib.sha256(_canonical(rules).encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- loading


def _suggest(key: str, options) -> str:
    close = difflib.get_close_matches(key, list(options), n=1, cutoff=0.5)
    return f"; did you mean '{close[0]}'?" if close else ""


def _merge(base: dict, over: Mapping, path: str, schema: Any, source: str) -> dict:
    """Deep-merge `over` onto `base`, rejecting keys the schema does not know."""
    out = dict(base)
    if not isinstance(over, Mapping):
        raise ConfigError(path or "(top)", f"expected a table, got {_show(over)}", source)
    for key, value in over.items():
        kpath = f"{path}.{key}" if path else key
        sub = _schema_of(schema, key, path, source, base, value)
        if sub is not None and isinstance(value, Mapping):
            out[key] = _merge(base.get(key, {}), value, kpath, sub, source)
        elif sub is not None:
            raise ConfigError(kpath, f"expected a table, got {_show(value)}", source)
        else:
            out[key] = value
            if _ORIGINS is not None:
                _ORIGINS[kpath] = source
    return out


_ORIGINS: dict[str, str] | None = None


def _origin(key: str) -> str:
    """Which input (file or --set) gave the value at `key` (or below it), for messages."""
    if not _ORIGINS:
        return "rules"
    key = key.split("[", 1)[0]
    for k in reversed(list(_ORIGINS)):
        if k == key or k.startswith(key + ".") or key.startswith(k + "."):
            return _ORIGINS[k]
    return "rules"


def _schema_of(schema, key, path, source, base, value):
    """The schema of `schema[key]`: a dataclass type, 'assets', or None (leaf)."""
    kpath = f"{path}.{key}" if path else key
    if schema == "assets":
        if key not in base:
            if not (isinstance(value, Mapping) and "count" in value):
                raise ConfigError(kpath, "unknown asset kind" + _suggest(key, base)
                                  + " (a new kind must give its count)", source)
        return Asset
    hints = get_type_hints(schema)
    names = [f.name for f in fields(schema)]
    if key not in names:
        raise ConfigError(kpath, "unknown key" + _suggest(key, names), source)
    if key == "assets" and schema is Rules:
        return "assets"
    t = hints[key]
    return t if is_dataclass(t) else None


def _show(v: Any) -> str:
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v) if not isinstance(v, Mapping) else "a table"


def _check_scalar(value, tp, meta, path, source):
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(path, f"expected true or false, got {_show(value)}", source)
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(path, f"expected an integer, got {_show(value)}", source)
    elif tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(path, f"expected a number, got {_show(value)}", source)
        value = float(value)
    elif tp is str:
        if not isinstance(value, str):
            raise ConfigError(path, f"expected a string, got {_show(value)}", source)
        choices = meta.get("choices")
        if choices and value not in choices:
            raise ConfigError(path, f"expected one of {', '.join(choices)}, got {_show(value)}"
                              + _suggest(value, choices), source)
        return value
    lo, hi = meta.get("lo"), meta.get("hi")
    if lo is not None and value < lo:
        raise ConfigError(path, f"must be >= {lo:g}, got {value}", source)
    if hi is not None and value > hi:
        raise ConfigError(path, f"must be <= {hi:g}, got {value}", source)
    return value


def _build(cls, data: Mapping, path: str, source: str):
    hints = get_type_hints(cls)
    kwargs = {}
    for f in fields(cls):
        fpath = f"{path}.{f.name}" if path else f.name
        value = data[f.name]
        tp = hints[f.name]
        if is_dataclass(tp):
            kwargs[f.name] = _build(tp, value, fpath, source)
        elif get_origin(tp) is tuple:
            if not isinstance(value, (list, tuple)):
                raise ConfigError(fpath, f"expected a list of integers, got {_show(value)}",
                                  source)
            kwargs[f.name] = tuple(_check_scalar(v, int, {}, f"{fpath}[{i}]", source)
                                   for i, v in enumerate(value))
        elif f.name == "assets":
            # a new kind's missing fields take Asset's defaults (keys were checked on merge)
            kwargs[f.name] = {k: _build(Asset, {**to_dict(Asset()), **v}, f"assets.{k}",
                                        source) for k, v in value.items()}
        else:
            kwargs[f.name] = _check_scalar(value, tp, dict(f.metadata), fpath, source)
    return cls(**kwargs)


def _cross_check(r: Rules, source: str) -> None:
    """Checks that span several keys (each error still names one key)."""
    for n in range(3, 7):
        b = r.baseline.for_players(n)
        if len(b) != r.rounds:
            raise ConfigError(f"baseline.p{n}", f"has {len(b)} entries but rounds is "
                              f"{r.rounds}", source)
        deck = r.decks.for_players(n)
        if sum(deck.counts()) <= n:
            raise ConfigError(f"decks.p{n}", f"holds {sum(deck.counts())} cards; R-S4 needs "
                              f"more than the {n} players", source)
    if r.first_player >= r.players:
        raise ConfigError("first_player", f"must be a seat below players={r.players}, got "
                          f"{r.first_player}", source)
    n_tokens = r.tipping.start_flipped + len(r.tipping.thresholds)
    if n_tokens > L.MAX_TOKENS:
        raise ConfigError("tipping.thresholds", f"at most {L.MAX_TOKENS} tokens in all, got "
                          f"{n_tokens}", source)
    if not r.dial.severe < r.dial.extreme < r.dial.collapse:
        raise ConfigError("dial.extreme", "bands must rise: severe < extreme < collapse",
                          source)
    if r.dial.start >= r.dial.collapse:
        raise ConfigError("dial.start", "must be below dial.collapse", source)
    for i, a in enumerate(r.accusation.rounds):
        if not 1 <= a < r.rounds:
            raise ConfigError(f"accusation.rounds[{i}]", f"must be a round from 1 to "
                              f"{r.rounds - 1} (none follows the last round, R-E1), got {a}",
                              source)
    if len(set(r.accusation.rounds)) != len(r.accusation.rounds):
        raise ConfigError("accusation.rounds", "lists a round twice", source)
    if not 1 <= len(r.assets) <= L.MAX_KINDS:
        raise ConfigError("assets", f"needs 1 to {L.MAX_KINDS} kinds, got {len(r.assets)}",
                          source)
    total = sum(a.count for a in r.assets.values())
    if r.market.size > total:
        raise ConfigError("market.size", f"is {r.market.size} but the asset deck holds only "
                          f"{total} cards", source)


def load_rules(path: str | Path | None = None, sets: list[str] | tuple[str, ...] = (),
               base: Rules | None = None, overrides: Mapping | None = None,
               overrides_source: str = "rules", bots: dict | None = None) -> Rules:
    """Effective rules: defaults (or `base`) <- TOML file <- `overrides` <- `--set` items.

    `overrides` is a nested table (`nest({"assets.bunker.price": 5})`); errors in it name
    `overrides_source` (e.g. "--set").

    Bot parameters are not rules: `bots.BOT.PARAM` keys (a `[bots.BOT]` table in the file,
    in `overrides` or in `--set`) are checked and added to the dict `bots` ({bot: {param:
    value}}), the shorthand that sets PARAM at every lineup entry playing BOT
    (`fbsim.game.lineup.Lineup.with_bot_params`); without `bots` they are an error."""
    global _ORIGINS
    _ORIGINS = {}
    try:
        return _load(path, sets, base, overrides, overrides_source, bots)
    except ConfigError as e:
        if e.source == "rules":
            raise ConfigError(e.key, e.message, _origin(e.key)) from None
        raise
    finally:
        _ORIGINS = None


def _take_bots(doc: Mapping, source: str, found: dict, strict: bool = True) -> Mapping:
    """`doc` without its `bots` table; the table's values go to `found` (checked)."""
    from fbsim.game.lineup import bot_param_sets, merge_bot_params

    if not isinstance(doc, Mapping) or "bots" not in doc:
        return doc
    table = doc["bots"]
    if not isinstance(table, Mapping):
        raise ConfigError("bots", f"expected a table, got {_show(table)}", source)
    items = {}
    for bot, params in table.items():
        if not isinstance(params, Mapping):
            raise ConfigError(f"bots.{bot}", f"expected a table, got {_show(params)}", source)
        items.update({f"bots.{bot}.{k}": v for k, v in params.items()})
    if strict:
        got = bot_param_sets(items, source)
    else:  # old provenance: what the current bots no longer know is left out
        got = {}
        for k, v in items.items():
            try:
                got = merge_bot_params(got, bot_param_sets({k: v}, source))
            except ConfigError:
                pass
    found.update(merge_bot_params(found, got))
    return {k: v for k, v in doc.items() if k != "bots"}


def _no_bots(found: dict, bots: dict | None) -> None:
    if bots is not None:
        bots.update(found)
        return
    if found:
        bot = next(iter(found))
        key = f"bots.{bot}.{next(iter(found[bot]))}"
        raise ConfigError(key, "a bot parameter, not a rule: give it with the lineup "
                          "(e.g. --seat 1=tunable:aim=520, or --set on simulate, sweep, "
                          "replay and report)", "--set")


def _load(path, sets, base, overrides, overrides_source, bots) -> Rules:
    data = to_dict(base if base is not None else Rules())
    found: dict = {}
    if path is not None:
        p = Path(path)
        source = f"rules file {p}"
        try:
            text = p.read_text()
        except OSError as e:
            raise ConfigError("(file)", f"cannot read: {e.strerror}", source) from None
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError("(file)", f"not valid TOML: {e}", source) from None
        data = _merge(data, _take_bots(doc, source, found), "", Rules, source)
    if overrides:
        data = _merge(data, _take_bots(overrides, overrides_source, found), "", Rules,
                      overrides_source)
    for item in sets:
        key, value = parse_set(item)
        data = _merge(data, _take_bots(_nest(key, value), "--set", found), "", Rules, "--set")
    _fit_to_rounds(data)
    rules = validate_dict(data)
    _no_bots(found, bots)
    return rules


def rules_from_toml(text: str, source: str = "rules text", bots: dict | None = None) -> Rules:
    """Rules from TOML text, e.g. the `rules_toml` stored in a table's provenance.

    Provenance written before bot parameters left the rules holds `[bots.BOT]` tables: they
    go to the dict `bots` when given (what the bots no longer know is left out), else they
    are ignored."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError("(text)", f"not valid TOML: {e}", source) from None
    found: dict = {}
    doc = _take_bots(doc, source, found, strict=False)
    data = _merge(to_dict(Rules()), doc, "", Rules, source)
    rules = validate_dict(data, source)
    if bots is not None:
        bots.update(found)
    return rules


def _fit_to_rounds(data: dict) -> None:
    """A shorter game keeps the tables nobody set: the first `rounds` baselines (D1), and
    only the Accusations that still have a round after them (R-E1)."""
    rounds = data.get("rounds")
    if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 1:
        return
    given = _ORIGINS or {}
    for n in range(3, 7):
        table = data.get("baseline", {}).get(f"p{n}")
        if f"baseline.p{n}" not in given and isinstance(table, list) and len(table) > rounds:
            data["baseline"] = {**data["baseline"], f"p{n}": table[:rounds]}
    acc = data.get("accusation", {}).get("rounds")
    if "accusation.rounds" not in given and isinstance(acc, list):
        data["accusation"] = {**data["accusation"],
                              "rounds": [a for a in acc if isinstance(a, int) and a < rounds]}


def validate_dict(data: Mapping, source: str = "rules") -> Rules:
    rules = _build(Rules, data, "", source)
    _cross_check(rules, source)
    return rules


def parse_set(item: str) -> tuple[str, Any]:
    """`path=value`; the value is read as a TOML value (`3`, `true`, `[3, 6]`), else a string."""
    if "=" not in item:
        raise ConfigError(item, "expected path=value", "--set")
    key, raw = item.split("=", 1)
    key = key.strip()
    raw = raw.strip()
    if not key or any(not part for part in key.split(".")):
        raise ConfigError(item, "expected path=value", "--set")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return key, value


def _nest(key: str, value: Any) -> dict:
    return nest({key: value})


def nest(items: Mapping[str, Any]) -> dict:
    """Dotted keys to a nested table: {"dial.start": 440} -> {"dial": {"start": 440}}."""
    out: dict = {}
    for key, value in items.items():
        cur = out
        parts = key.split(".")
        for part in parts[:-1]:
            nxt = cur.get(part)
            if not isinstance(nxt, dict):
                nxt = cur[part] = {}
            cur = nxt
        cur[parts[-1]] = value
    return out


# --------------------------------------------------------------------------- TOML output


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(v)


def _toml_key(k: str) -> str:
    return k if all(c.isalnum() or c in "-_" for c in k) else json.dumps(k)


def rules_to_toml(rules: Rules, comments: bool = True) -> str:
    """The effective rules as TOML, with a short comment per key (round-trips exactly);
    `comments=False` gives the compact form stored in tables' provenance."""
    lines = [f"# Firebreak rules for fbsim (rules version {RULES_VERSION}, hash "
             f"{rules_hash(rules)})", "# Rule IDs refer to RULES.md.", ""]

    def scalars(obj, prefix=""):
        width = max((len(f.name) for f in fields(obj)), default=0)
        for f in fields(obj):
            v = getattr(obj, f.name)
            if is_dataclass(v) or isinstance(v, dict):
                continue
            text = f"{_toml_key(f.name)} = {_toml_value(v)}"
            lines.append(f"{text:<{max(width + 14, len(text) + 1)}} # {f.metadata['help']}")

    scalars(rules)
    for f in fields(rules):
        v = getattr(rules, f.name)
        if is_dataclass(v):
            nested = [g for g in fields(v) if is_dataclass(getattr(v, g.name))]
            if nested:
                for g in nested:
                    lines += ["", f"[{f.name}.{g.name}]  # {g.metadata['help']}"]
                    scalars(getattr(v, g.name))
            else:
                lines += ["", f"[{f.name}]"]
                scalars(v)
        elif f.name == "assets":
            for name, a in v.items():
                lines += ["", f"[assets.{_toml_key(name)}]  # D3"]
                scalars(a)
    if not comments:
        lines = [ln.split(" # ", 1)[0].rstrip() if " # " in ln else ln for ln in lines
                 if not ln.startswith("#")]
        lines = [ln.split("  # ", 1)[0] for ln in lines if ln]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- vector form


# The fields of the rules that `fbsim.game.layout.R_FIELDS` does not place, each packed by
# its own rule in `rules_vector` (or, for `bots`, not at all).
VECTOR_SPECIAL = {
    "players": "R_PLAYERS: the table size asked for (default: `players`)",
    "first_player": "R_FIRST_PLAYER: the seat modulo the table size (D9)",
    "baseline": "R_BASELINE: the table for this table size (`baseline.p<n>`, D1)",
    "decks": "R_DECK: the agenda deck for this table size (`decks.p<n>`, D2)",
    "tipping.start_flipped": "R_N_TOKENS, R_TOKEN_START_FLIPPED, R_TOKEN_THRESHOLD: the "
                             "tokens flipped at setup come first, at the Dial's start (R-S1)",
    "tipping.thresholds": "R_TOKEN_THRESHOLD: after the tokens flipped at setup (R-W3)",
    "accusation.rounds": "R_ACCUSE_AFTER: 1 after each round listed (R-A1)",
    "scoring.tiebreak_first_player": "R_TIEBREAK_LAST_ROUND: 1 for 'last-round' (D8)",
    "assets": "R_N_KINDS, then per kind in order a block at R_ASSET (layout.A_FIELDS)",
    "bots": "not in the vector: each bot has its own parameter vector",
}


def _field_at(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def rules_vector(rules: Rules, players: int | None = None) -> np.ndarray:
    """The int64 rules vector for one table size (indices `fbsim.game.layout.R_*`): every
    field of `layout.R_FIELDS` at its index, then the fields of `VECTOR_SPECIAL`."""
    n = rules.players if players is None else players
    v = np.zeros(L.R_SIZE, dtype=np.int64)
    for path, i in L.R_FIELDS.items():
        v[i] = int(_field_at(rules, path))
    v[L.R_PLAYERS] = n
    v[L.R_FIRST_PLAYER] = rules.first_player % n  # D9
    for r, b in enumerate(rules.baseline.for_players(n)):  # D1
        v[L.R_BASELINE + r] = b
    for a, c in enumerate(rules.decks.for_players(n).counts()):  # D2
        v[L.R_DECK + a] = c
    t = rules.tipping
    v[L.R_N_TOKENS] = t.start_flipped + len(t.thresholds)
    for i in range(t.start_flipped):  # R-S1
        v[L.R_TOKEN_THRESHOLD + i] = rules.dial.start
        v[L.R_TOKEN_START_FLIPPED + i] = 1
    for j, th in enumerate(t.thresholds):  # R-W3
        v[L.R_TOKEN_THRESHOLD + t.start_flipped + j] = th
    for a in rules.accusation.rounds:  # R-A1
        v[L.R_ACCUSE_AFTER + a - 1] = 1
    v[L.R_TIEBREAK_LAST_ROUND] = int(rules.scoring.tiebreak_first_player == "last-round")
    v[L.R_N_KINDS] = len(rules.assets)
    for k, asset in enumerate(rules.assets.values()):
        base = L.R_ASSET + k * L.ASSET_STRIDE
        for name, off in L.A_FIELDS.items():
            v[base + off] = int(getattr(asset, name))
    return v


__all__ = [
    "Rules", "Asset", "Deck", "load_rules", "rules_to_toml", "rules_hash", "rules_vector",
    "to_dict", "parse_set", "nest", "RULES_VERSION",
]
