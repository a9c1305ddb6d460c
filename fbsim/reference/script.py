"""Scripted games: a TOML file that fixes one game completely.

    players = 3
    agendas = ["steward", "opportunist", "accelerationist"]   # seat 0, 1, 2 (R-S4)
    deck = ["refinery", "carbon-sink", "media-house", "grey-bank", "refinery"]
    #   the top of the asset deck: the first market.size cards are the market (R-S5); the
    #   rest of the deck follows, shuffled with `seed`
    seed = 0
    fallback = "hoarder"   # decides what the script leaves out (omit: nothing may be left out)

    [rules]                # optional: overrides, as in a rules file
    baseline_offset = 0

    [[rounds]]             # round 1, then round 2, ...
    seats = [
      { works = 4, cool = 1, burn = 1, masked_burn = 1, request = 3, buy = ["refinery"] },
      { works = 3, cool = 3 },
      { works = 3, cool = 3, buy = ["refinery"] },
    ]

Per seat and round: works, cool, burn, masked_cool, masked_burn (missing: 0), request
(Fog claim, 0), buy (asset kinds in order, none), point (a seat, or -1 to abstain; used
after Accusation rounds) and cornered ("reveal" or "pay"). An empty table `{}` leaves that
seat's round to the fallback bot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from fbsim.errors import ConfigError, FbsimError, ScriptError, cut, did_you_mean
from fbsim.game import layout as L
from fbsim.game.rng import shuffle_in_place
from fbsim.inputs import Key, check, failing
from fbsim.limits import MAX_SEED
from fbsim.policies.scripted import ScriptedPolicy
from fbsim.reference.engine import bind_policy, run, setup
from fbsim.reference.record import GameRecord, make_record
from fbsim.rules import Rules, load_rules, rules_vector
from fbsim.tomlfile import read_toml

COUNT = Key("int", "an integer")
# A script's seat entry, round and file (`fbsim.inputs`); the rules are checked by their own
# schema when the script is prepared.
SEAT_KEYS = {**{k: COUNT for k in ("works", "cool", "burn", "masked_cool", "masked_burn",
                                   "request", "point")},
             "buy": Key("list", "a list of asset names", item=Key("text")),
             "cornered": Key("text", choices=("reveal", "pay"))}
ROUND_KEYS = {"seats": Key("list", "a list of tables, one per seat",
                           item=Key("table", keys=SEAT_KEYS))}
SCRIPT_FILE = {
    "players": Key("int", "a table size (an integer)"),
    "agendas": Key("list", "a list of Agendas, one per seat", item=Key("text")),
    "deck": Key("list", "a list of asset names", item=Key("text")),
    "seed": Key("int", lo=0, hi=MAX_SEED),
    "fallback": Key("text", "a bot, e.g. \"hoarder\""),
    "rules": Key("table", "a table of rules ([rules])"),
    "rounds": Key("list", "an array of tables ([[rounds]])",
                  item=Key("table", keys=ROUND_KEYS)),
    "title": Key("text"),
}


def load_script(path: str | Path, base: Rules | None = None) -> dict[str, Any]:
    """A script file's document, its keys and their types checked (errors name the file)."""
    p = Path(path)

    def fail(message: str):
        raise ScriptError(f"{p}: {message}")

    doc = read_toml(p, fail)
    check_script(doc, str(p))
    return doc


def _suggest(key, options):
    return did_you_mean(key, sorted(options))


def check_script(doc: dict[str, Any], where: str = "") -> None:
    """The keys of a script and the types and ranges of their values, which need no rules;
    `where` (the file) starts every message."""
    check(doc, SCRIPT_FILE, failing(ScriptError, where))
    if "fallback" in doc:
        from fbsim.lineup import parse_lineup

        try:
            parse_lineup(doc["fallback"])  # the name (and parameters: tunable:aim=520;greed=0)
        except FbsimError as e:
            raise ScriptError(f"{where + ': ' if where else ''}fallback: {e}") from None


def prepare(doc: dict[str, Any], base: Rules | None = None):
    """Validate a script; returns (rules, agendas, asset deck, plans, fallback bot name)."""
    check_script(doc)
    overrides = dict(doc.get("rules", {}))
    if "players" in doc:
        overrides["players"] = doc["players"]
    try:
        rules = load_rules(base=base, overrides=overrides)
    except ConfigError as e:
        key = e.key if e.key == "players" and "players" in doc else f"rules.{e.key}"
        raise ScriptError(f"{cut(key)}: {e.message}") from None
    n = rules.players
    R = rules_vector(rules, n)
    names = list(rules.asset_names)
    # agendas (R-S4): must be drawable from this table size's deck
    agendas_raw = doc.get("agendas")
    if agendas_raw is None or len(agendas_raw) != n:
        raise ScriptError(f"agendas must list {n} Agendas, one per seat")
    agendas = []
    for s, a in enumerate(agendas_raw):
        if a not in L.AGENDA_NAMES:
            raise ScriptError(f"agendas[{s}]: unknown Agenda '{cut(a)}'" + _suggest(str(a),
                                                                                  L.AGENDA_NAMES))
        agendas.append(L.AGENDA_NAMES.index(a))
    for a in range(L.N_AGENDAS):
        if agendas.count(a) > R[L.R_DECK + a]:
            raise ScriptError(f"deals {agendas.count(a)} {L.AGENDA_NAMES[a]} cards but the "
                              f"deck at {n} players holds {R[L.R_DECK + a]}", rule="R-S4")
    # the asset deck (R-S5): the given top, then the rest shuffled with the script's seed
    remaining = [int(R[L.asset_at(k, L.A_COUNT)]) for k in range(len(names))]
    top = []
    for i, name in enumerate(doc.get("deck", [])):
        if name not in names:
            raise ScriptError(f"deck[{i}]: unknown asset '{cut(name)}'"
                              + _suggest(str(name), names))
        k = names.index(name)
        if remaining[k] == 0:
            raise ScriptError(f"deck[{i}]: more {cut(name)} cards than the deck holds",
                              rule="R-S5")
        remaining[k] -= 1
        top.append(k)
    rest = np.repeat(np.arange(len(names), dtype=np.int64), remaining)
    shuffle_in_place(rest, int(doc.get("seed", 0)), 0, L.PURPOSE_ASSET_SHUFFLE)
    deck = top + [int(k) for k in rest]
    # decisions
    rounds = doc.get("rounds", [])
    if len(rounds) > rules.rounds:
        raise ScriptError(f"gives {len(rounds)} rounds but the game has {rules.rounds}")
    plans: list[dict[int, dict[str, Any]]] = [{} for _ in range(n)]
    for r, rnd in enumerate(rounds, start=1):
        seats = rnd.get("seats", [])
        if len(seats) != n:
            raise ScriptError(f"lists {len(seats)} seats; the table has {n}", r)
        for s, entry in enumerate(seats):
            for name in entry.get("buy", []):
                if name not in names:
                    raise ScriptError(f"buy: unknown asset '{cut(name)}'" + _suggest(name, names),
                                      r, s)
            if entry:
                plans[s][r] = entry
    return rules, agendas, deck, plans, doc.get("fallback")


def play_script(doc: dict[str, Any], base: Rules | None = None,
                events: bool = True) -> GameRecord:
    """Play a scripted game in the reference engine."""
    rules, agendas, deck, plans, fallback = prepare(doc, base)
    n = rules.players
    if fallback:
        from fbsim.lineup import parse_lineup

        entry = parse_lineup(fallback).by_agenda["steward"]
    fb = [bind_policy(entry) if fallback else None for _ in range(n)]
    policies = [ScriptedPolicy(s, plans[s], rules.asset_names, fb[s]) for s in range(n)]
    bots = ["scripted"] * n
    seed = int(doc.get("seed", 0))
    g = setup(rules, agendas, deck, bots, seed, 0, events)
    return make_record(run(g, policies))
