"""Loading and validating rules: defaults <- a partial TOML file <- overrides <- `--set`
items, every key and value checked (one `ConfigError` naming the key) before anything runs."""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any, get_origin, get_type_hints

from fbsim.errors import ConfigError, cut, did_you_mean, file_named
from fbsim.game import layout as L
from fbsim.inputs import Key
from fbsim.inputs import value as value_of
from fbsim.rules.schema import Asset, Rules, to_dict
from fbsim.tomlfile import MAX_DEPTH, parse_toml, read_toml, too_deep

INT_LIMIT = 10**9  # the most any integer rule may be (its range in the schema may be less)


def _suggest(key: str, options) -> str:
    return did_you_mean(key, options, cutoff=0.5)


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
    """A value as an error message quotes it (long ones cut)."""
    if isinstance(v, str):
        return cut(repr(v))
    if isinstance(v, bool):
        return "true" if v else "false"
    return cut(str(v)) if not isinstance(v, Mapping) else "a table"


def rules_key(tp: type, meta: Mapping) -> Key:
    """A rules field's `Key` (`fbsim.inputs`), from its type and its `F(...)` metadata."""
    if tp is bool:
        return Key("bool")
    if tp is str:
        return Key("text", choices=tuple(meta.get("choices") or ()))
    lo, hi = meta.get("lo"), meta.get("hi")
    if tp is int:
        # (open-ended counts still have to fit the kernel's arrays)
        return Key("int", lo=lo, hi=INT_LIMIT if hi is None else hi)
    return Key("number", lo=lo, hi=hi)


def _check_scalar(value, tp, meta, path, source):
    def fail(key: str, message: str):
        raise ConfigError(key, message, source)

    return value_of(value, rules_key(tp, meta), fail, path)


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
    th = list(r.tipping.thresholds)
    if th != sorted(th):  # (which token flips first is the Dial's doing, not the list's: one
        # way to write the same game, one rules hash)
        raise ConfigError("tipping.thresholds", f"must not fall (low to high), got {th}",
                          source)
    n_tokens = r.tipping.start_flipped + len(r.tipping.thresholds)
    if n_tokens > L.MAX_TOKENS:
        raise ConfigError("tipping.thresholds", f"at most {L.MAX_TOKENS} tokens in all, got "
                          f"{n_tokens}", source)
    if not r.dial.severe < r.dial.extreme < r.dial.collapse:
        raise ConfigError("dial.extreme", "bands must rise: severe < extreme < collapse",
                          source)
    if r.dial.start >= r.dial.collapse:
        raise ConfigError("dial.start", "must be below dial.collapse", source)
    if r.dial.floor_enabled and r.dial.floor >= r.dial.collapse:  # (D4: every game would
        # end in Collapse at the first floor, R-W4)
        raise ConfigError("dial.floor", f"must be below dial.collapse={r.dial.collapse} "
                          f"when dial.floor_enabled is true, got {r.dial.floor}", source)
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
               overrides_source: str = "rules", bots: dict | None = None,
               players: int | None = None) -> Rules:
    """Effective rules: defaults (or `base`) <- TOML file <- `overrides` <- `--set` items
    <- `players` (a table size, set last: one run plays several).

    `overrides` is a nested table (`nest({"assets.bunker.price": 5})`); errors in it name
    `overrides_source` (e.g. "--set").

    Bot parameters are not rules: `bots.BOT.PARAM` keys (a `[bots.BOT]` table in the file,
    in `overrides` or in `--set`) are checked and added to the dict `bots` ({bot: {param:
    value}}), the shorthand that sets PARAM at every lineup entry playing BOT
    (`fbsim.lineup.Lineup.with_bot_params`); without `bots` they are an error."""
    global _ORIGINS
    _ORIGINS = {}
    try:
        return _load(path, sets, base, overrides, overrides_source, bots, players)
    except ConfigError as e:
        if e.source == "rules":
            raise ConfigError(e.key, e.message, _origin(e.key)) from None
        raise
    finally:
        _ORIGINS = None


def _take_bots(doc: Mapping, source: str, found: dict, strict: bool = True) -> Mapping:
    """`doc` without its `bots` table; the table's values go to `found` (checked)."""
    from fbsim.lineup import bot_param_sets, merge_bot_params

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


def _load(path, sets, base, overrides, overrides_source, bots, players) -> Rules:
    data = to_dict(base if base is not None else Rules())
    found: dict = {}
    if path is not None:
        source = f"rules file {file_named(Path(path))}"

        def fail(message: str):
            raise ConfigError("(file)", message, source)

        doc = read_toml(path, fail)
        data = _merge(data, _take_bots(doc, source, found), "", Rules, source)
    if overrides:
        data = _merge(data, _take_bots(overrides, overrides_source, found), "", Rules,
                      overrides_source)
    for item in sets:
        key, value = parse_set(item)
        data = _merge(data, _take_bots(_nest(key, value), "--set", found), "", Rules, "--set")
    if players is not None:
        data = _merge(data, {"players": players}, "", Rules, "--players")
    _fit_to_rounds(data)
    rules = validate_dict(data)
    _no_bots(found, bots)
    return rules


def rules_from_toml(text: str, source: str = "rules text", bots: dict | None = None) -> Rules:
    """Rules from TOML text, e.g. the `rules_toml` stored in a table's provenance.

    Provenance written before bot parameters left the rules holds `[bots.BOT]` tables: they
    go to the dict `bots` when given (what the bots no longer know is left out), else they
    are ignored."""
    def fail(message: str):
        raise ConfigError("(text)", message, source)

    doc = parse_toml(text, fail)
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
    deep = ConfigError(key, f"nested too deep (at most {MAX_DEPTH} levels)", "--set")
    if key.count(".") >= MAX_DEPTH:
        raise deep
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    except RecursionError:
        raise deep from None
    except ValueError:  # an integer literal over Python's limit on digits
        raise ConfigError(key, f"a number of more than {sys.get_int_max_str_digits()} "
                          "digits", "--set") from None
    if too_deep(value, MAX_DEPTH - 1 - key.count(".")):
        raise deep
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
