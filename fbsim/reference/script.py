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

from fbsim.errors import ScriptError, did_you_mean
from fbsim.game import layout as L
from fbsim.game.rng import shuffle_in_place
from fbsim.policies.scripted import ScriptedPolicy
from fbsim.reference.engine import bind_policy, run, setup
from fbsim.reference.record import GameRecord, make_record
from fbsim.rules import Rules, load_rules, rules_vector
from fbsim.tomlfile import read_toml

TOP_KEYS = {"players", "agendas", "deck", "seed", "fallback", "rules", "rounds", "title"}
SEAT_KEYS = {"works", "cool", "burn", "masked_cool", "masked_burn", "request", "buy", "point",
             "cornered"}
INT_KEYS = {"works", "cool", "burn", "masked_cool", "masked_burn", "request", "point"}


def load_script(path: str | Path, base: Rules | None = None) -> dict[str, Any]:
    p = Path(path)

    def fail(message: str):
        raise ScriptError(f"{p}: {message}")

    return read_toml(p, fail)


def _suggest(key, options):
    return did_you_mean(key, sorted(options))


def prepare(doc: dict[str, Any], base: Rules | None = None):
    """Validate a script; returns (rules, agendas, asset deck, plans, fallback bot name)."""
    for k in doc:
        if k not in TOP_KEYS:
            raise ScriptError(f"unknown key '{k}'" + _suggest(k, TOP_KEYS))
    overrides = dict(doc.get("rules", {}))
    if "players" in doc:
        overrides["players"] = doc["players"]
    rules = load_rules(base=base, overrides=overrides)
    n = rules.players
    R = rules_vector(rules, n)
    names = list(rules.asset_names)
    # agendas (R-S4): must be drawable from this table size's deck
    agendas_raw = doc.get("agendas")
    if not isinstance(agendas_raw, list) or len(agendas_raw) != n:
        raise ScriptError(f"agendas must list {n} Agendas, one per seat")
    agendas = []
    for s, a in enumerate(agendas_raw):
        if a not in L.AGENDA_NAMES:
            raise ScriptError(f"agendas[{s}]: unknown Agenda '{a}'" + _suggest(str(a),
                                                                                  L.AGENDA_NAMES))
        agendas.append(L.AGENDA_NAMES.index(a))
    for a in range(L.N_AGENDAS):
        if agendas.count(a) > R[L.R_DECK + a]:
            raise ScriptError(f"deals {agendas.count(a)} {L.AGENDA_NAMES[a]} cards but the "
                              f"deck at {n} players holds {R[L.R_DECK + a]}", rule="R-S4")
    # the asset deck (R-S5): the given top, then the rest shuffled with the script's seed
    remaining = [int(R[L.R_ASSET + k * L.ASSET_STRIDE + L.A_COUNT]) for k in range(len(names))]
    top = []
    for i, name in enumerate(doc.get("deck", [])):
        if name not in names:
            raise ScriptError(f"deck[{i}]: unknown asset '{name}'" + _suggest(str(name), names))
        k = names.index(name)
        if remaining[k] == 0:
            raise ScriptError(f"deck[{i}]: more {name} cards than the deck holds",
                              rule="R-S5")
        remaining[k] -= 1
        top.append(k)
    rest = np.repeat(np.arange(len(names), dtype=np.int64), remaining)
    shuffle_in_place(rest, int(doc.get("seed", 0)), 0, L.PURPOSE_ASSET_SHUFFLE)
    deck = top + [int(k) for k in rest]
    # decisions
    rounds = doc.get("rounds", [])
    if not isinstance(rounds, list):
        raise ScriptError("rounds must be an array of tables ([[rounds]])")
    if len(rounds) > rules.rounds:
        raise ScriptError(f"gives {len(rounds)} rounds but the game has {rules.rounds}")
    plans: list[dict[int, dict[str, Any]]] = [{} for _ in range(n)]
    for r, rnd in enumerate(rounds, start=1):
        seats = rnd.get("seats", [])
        for k in rnd:
            if k != "seats":
                raise ScriptError(f"unknown key '{k}' (a round holds 'seats')", r)
        if len(seats) != n:
            raise ScriptError(f"lists {len(seats)} seats; the table has {n}", r)
        for s, entry in enumerate(seats):
            for k, v in entry.items():
                if k not in SEAT_KEYS:
                    raise ScriptError(f"unknown key '{k}'" + _suggest(k, SEAT_KEYS), r, s)
                if k in INT_KEYS and (isinstance(v, bool) or not isinstance(v, int)):
                    raise ScriptError(f"{k} must be an integer, got {v!r}", r, s)
            for name in entry.get("buy", []):
                if name not in names:
                    raise ScriptError(f"buy: unknown asset '{name}'" + _suggest(str(name),
                                                                                 names), r, s)
            if entry.get("cornered", "reveal") not in ("reveal", "pay"):
                raise ScriptError("cornered must be \"reveal\" or \"pay\"", r, s)
            if entry:
                plans[s][r] = entry
    fallback = doc.get("fallback")
    if fallback is not None:
        from fbsim.game.lineup import parse_lineup

        parse_lineup(fallback)  # checks the name (and parameters: tunable:aim=520;greed=0)
    return rules, agendas, deck, plans, fallback


def play_script(doc: dict[str, Any], base: Rules | None = None,
                events: bool = True) -> GameRecord:
    """Play a scripted game in the reference engine."""
    rules, agendas, deck, plans, fallback = prepare(doc, base)
    n = rules.players
    if fallback:
        from fbsim.game.lineup import parse_lineup

        entry = parse_lineup(fallback).by_agenda["steward"]
    fb = [bind_policy(entry) if fallback else None for _ in range(n)]
    policies = [ScriptedPolicy(s, plans[s], rules.asset_names, fb[s]) for s in range(n)]
    bots = ["scripted"] * n
    seed = int(doc.get("seed", 0))
    g = setup(rules, agendas, deck, bots, seed, 0, events)
    return make_record(run(g, policies))
