"""The map of a table size's single-seat equilibria: many cold starts, their answers told
apart, each one's basin (`fbsim equilibrium --map N`).

One search from scratch answers with the equilibrium its seed happens to reach; a game may
have several, and "is it fair under strong play?" depends on which one is read. The map runs
the same search from the same starting populations on seeds `seed`, `seed + 1`, ... (each
start an ordinary search folder, OUT/starts/pN/s<seed>/, resumed where it stopped), and:

1. **tells the answers apart** by their outcomes: two converged starts reach the same
   equilibrium when every Agenda's chance to win as a player and the Collapse rate are
   within `distance` (points of probability) of the first start that reached it (its
   representative; starts are taken in seed order, so the grouping is the same on every
   run). The largest distance between the strategies within a group (each Agenda's
   mixture-weighted mean of the planner's parameters, scaled to their ranges) is reported
   beside it: equilibria that play alike and equilibria that only score alike read apart;
2. **measures each one's basin**: the share of all starts that reached it, with a Wilson
   95% interval (starts that did not converge count in the denominator, as "unsettled");
3. **stops** once it has at least `starts` starts and none of the last `new_within` found
   an equilibrium the earlier ones had not, or at `max_starts`: the summary says which.

The table size's answer (OUT/pN.toml and its summary) is the representative of the largest
basin (ties: the one found first); its summary holds the map (`equilibria`, `map`).
Balance is then read over the map: a table size is fair only where every equilibrium with
a basin share of at least `FAIR_BASIN` is (`fair`: every Agenda's chance, its whole 95%
interval, within `FAIR_BAND` of 1/players). Every equilibrium here is one of the planner
family; where the searcher's audit runs (`searcher_games`), each says whether it held.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

from fbsim.errors import UsageError
from fbsim.experiments.metrics.stats import wilson
from fbsim.game.layout import AGENDA_NAMES
from fbsim.inputs import Key, interval
from fbsim.policies import field as F
from fbsim.policies.planner import PARAMS as PLANNER_PARAMS
from fbsim.policies.planner import TABLE_NAMES

DISTANCE = 0.03  # two answers' outcomes within this (every Agenda's chance, Collapse): one
NEW_WITHIN = 8  # stop once this many starts in a row found no new equilibrium
FAIR_BAND = 0.05  # a fair Agenda: its player's chance within this of 1/players (whole CI)
FAIR_BASIN = 0.05  # a table size is fair when every equilibrium of this share or more is
# the parameters a strategy's distance reads: the planner's own, not its tables' cells
STRATEGY_PARAMS = tuple(p for p in PLANNER_PARAMS if p.name not in TABLE_NAMES)


@dataclass(frozen=True)
class Start:
    """One cold start's answer: `converged` by the planner family's own search and audit;
    `held`: the searcher's audit held (None: not run); `chances[a]`: a player's chance to
    win given Agenda a (with its 95% interval); `strategy[a]`: the Agenda's mixture-weighted
    mean parameters, scaled to [0, 1] by their ranges."""

    seed: int
    converged: bool
    held: bool | None
    chances: dict
    intervals: dict
    collapse: float
    fair_share: float
    strategy: dict

    def outcome(self) -> dict:
        return {**self.chances, "collapse": self.collapse}

    def as_dict(self) -> dict:
        return {"seed": self.seed, "converged": self.converged, "searcher_held": self.held,
                "agendas": {a: {"player_win_rate": self.chances[a],
                                "player_win_ci": list(self.intervals[a])}
                            for a in self.chances},
                "collapse": self.collapse}


def start_of(seed: int, search, result: dict) -> Start:
    """A start's answer from its finished search (`SeatSearch`) and summary."""
    ag = result["agendas"]
    held = result.get("searcher_audit", {}).get("held")
    lineup = search.field(search.state.iterations[result["field_iteration"]].mixture)
    return Start(seed, search.converged() is not None, held,
                 {a: ag[a]["player_win_rate"] for a in AGENDA_NAMES if a in ag},
                 {a: tuple(ag[a]["player_win_ci"]) for a in AGENDA_NAMES if a in ag},
                 float(result["collapse"]["rate"]),
                 next(iter(ag.values()))["player_fair"],
                 {a: mean_strategy(e.as_dict()) for a, e in lineup.by_agenda.items()})


def mean_strategy(values: dict) -> list[float]:
    """A field entry's mixture-weighted mean of the planner's parameters, each scaled to
    [0, 1] by its range."""
    comps = F.component_params(values)
    total = sum(w for w, _ in comps) or 1.0
    out = []
    for p in STRATEGY_PARAMS:
        v = sum(w * c[p.name] for w, c in comps) / total
        out.append((v - p.lo) / (p.hi - p.lo) if p.hi > p.lo else 0.0)
    return out


def outcome_distance(a: Start, b: Start) -> float:
    """The largest difference between two answers' outcomes (each Agenda's chance to win as
    a player, the Collapse rate), in probability."""
    x, y = a.outcome(), b.outcome()
    return max(abs(x[k] - y[k]) for k in x)


def strategy_distance(a: Start, b: Start) -> float:
    """The largest difference between two answers' mean strategies, over Agendas and the
    planner's parameters, each scaled to its range (0: alike, 1: opposite ends)."""
    return max((abs(u - v) for k in a.strategy for u, v in zip(a.strategy[k], b.strategy[k],
                                                                strict=True)), default=0.0)


@dataclass
class Group:
    """One equilibrium of the map: the starts that reached it, the first its
    representative."""

    members: list[Start] = field(default_factory=list)

    @property
    def representative(self) -> Start:
        return self.members[0]


def group(starts: list[Start], distance: float = DISTANCE) -> list[Group]:
    """The converged starts grouped by outcome (`outcome_distance` to a group's
    representative at most `distance`; the first group that takes it), in seed order."""
    groups: list[Group] = []
    for s in sorted(starts, key=lambda s: s.seed):
        if not s.converged:
            continue
        g = next((g for g in groups if outcome_distance(g.representative, s) <= distance),
                 None)
        if g is None:
            groups.append(Group([s]))
        else:
            g.members.append(s)
    return groups


def new_found_at(starts: list[Start], distance: float = DISTANCE) -> list[int]:
    """The seeds at which a start found an equilibrium the earlier starts had not."""
    return [g.representative.seed for g in group(starts, distance)]


def stop_reason(starts: list[Start], least: int, most: int, new_within: int = NEW_WITHIN,
                distance: float = DISTANCE) -> str | None:
    """Why the map stops after these starts (None: it goes on): `least` starts done and no
    new equilibrium in the last `new_within`, or `most` starts done."""
    n = len(starts)
    if n >= least:
        seeds = sorted(s.seed for s in starts)
        recent = set(seeds[-new_within:]) if n >= new_within else set(seeds)
        if n >= new_within and not recent & set(new_found_at(starts, distance)):
            return (f"no new equilibrium in the last {new_within} of {n} starts (at least "
                    f"{least} asked)")
    if n >= most:
        return f"the most starts asked ({most}) reached; the last {new_within} still found one"
    return None


def is_fair(s: Start, band: float = FAIR_BAND) -> bool:
    """Every Agenda's chance to win as a player, its whole 95% interval, within `band` of
    the fair share (1/players of the games somebody wins)."""
    return all(s.fair_share - band <= lo and hi <= s.fair_share + band
               for lo, hi in s.intervals.values())


def map_summary(starts: list[Start], least: int, most: int, new_within: int = NEW_WITHIN,
                distance: float = DISTANCE, rules_hash: str | None = None) -> dict:
    """The map's part of a table size's summary: each equilibrium (largest basin first;
    ties: found first) with its basin share and interval, balance and strategies' spread;
    every start; how and why it stopped; the hash of the rules it was solved under (what
    `fbsim report` matches its own rules against)."""
    n = len(starts)
    groups = sorted(group(starts, distance),
                    key=lambda g: (-len(g.members), g.representative.seed))
    eqs = []
    for g in groups:
        share, lo, hi = wilson(len(g.members), n)
        rep = g.representative
        held = [m.held for m in g.members]
        eqs.append({
            "basin_share": share, "basin_ci": [lo, hi], "starts": len(g.members),
            "seeds": [m.seed for m in g.members], "representative": rep.seed,
            "agendas": rep.as_dict()["agendas"], "collapse": rep.collapse,
            "fair": is_fair(rep),
            "searcher_held": None if None in held else all(held),
            "outcome_spread": max(outcome_distance(rep, m) for m in g.members),
            "strategy_spread": max(strategy_distance(rep, m) for m in g.members)})
    unsettled = sum(1 for s in starts if not s.converged)
    share, lo, hi = wilson(unsettled, n)
    weighty = [e for e in eqs if e["basin_share"] >= FAIR_BASIN]
    return {
        "equilibria": eqs,
        "map": {"rules_hash": rules_hash, "starts": n, "least": least, "most": most,
                "new_within": new_within,
                "distance": distance, "stopped": stop_reason(starts, least, most,
                                                             new_within, distance),
                "new_at": new_found_at(starts, distance),
                "unsettled": {"starts": unsettled, "share": share, "ci": [lo, hi]},
                "fair": bool(weighty) and all(e["fair"] for e in weighty),
                "fair_band": FAIR_BAND, "fair_basin": FAIR_BASIN,
                "starts_played": [s.as_dict() for s in sorted(starts, key=lambda s: s.seed)]}}


_RATE = Key("number", lo=0, hi=1)
_CHANCE = Key("table", keys={"player_win_rate": replace(_RATE, required=True),
                             "player_win_ci": interval(0, 1, required=True)})
_AGENDAS = Key("table", known="agenda", keys={a: replace(_CHANCE, required=True)
                                              for a in AGENDA_NAMES})
# the map's parts of a table size's summary.json as `map_summary` writes them: what
# `fbsim report --map` reads back, checked whole before any game is played
MAP_PARTS = {k: replace(v, required=True) for k, v in {
    "equilibria": Key("list", "a list of equilibria", item=Key("table", keys={
        k: replace(v, required=True) for k, v in {
            "basin_share": _RATE, "basin_ci": interval(0, 1), "starts": Key("count", lo=1),
            "seeds": Key("list", "a list of seeds", item=Key("count", lo=0)),
            "representative": Key("count", lo=0), "agendas": _AGENDAS, "collapse": _RATE,
            "fair": Key("bool"), "searcher_held": Key(("bool", "null")),
            "outcome_spread": Key("number", lo=0), "strategy_spread": Key("number", lo=0),
        }.items()})),
    "map": Key("table", keys={k: replace(v, required=True) for k, v in {
        "rules_hash": Key(("text", "null"), "a rules hash (text), or null"),
        "starts": Key("count", lo=1), "least": Key("count", lo=2), "most": Key("count", lo=2),
        "new_within": Key("count", lo=1), "distance": Key("number", lo=0, hi=1, open=True),
        "stopped": Key(("text", "null")),
        "new_at": Key("list", "a list of seeds", item=Key("count", lo=0)),
        "unsettled": Key("table", keys={"starts": Key("count", lo=0, required=True),
                                        "share": replace(_RATE, required=True),
                                        "ci": interval(0, 1, required=True)}),
        "fair": Key("bool"), "fair_band": _RATE, "fair_basin": _RATE,
        "starts_played": Key("list", "a list of starts", item=Key("table")),
    }.items()}),
}.items()}


def check_map(least: int, most: int, new_within: int = NEW_WITHIN,
              distance: float = DISTANCE) -> None:
    """The map's options, refused (UsageError) before any game."""
    if least < 2:
        raise UsageError(f"--map: at least 2 starts (a map of one start is one search), got "
                         f"{least}")
    if most < least:
        raise UsageError(f"--map-most: at least --map ({least}), got {most}")
    if new_within < 1 or new_within >= least:
        raise UsageError(f"--map-new-within: 1 to --map less one ({least - 1}: the first "
                         f"start always finds a new one), got {new_within}")
    if not 0 < distance <= 1 or math.isnan(distance):
        raise UsageError(f"--map-distance: above 0 and at most 100 points, got "
                         f"{100 * distance:g}")


def start_folder(out: Path, players: int, seed: int) -> Path:
    return Path(out) / "starts" / f"p{players}" / f"s{seed}"

