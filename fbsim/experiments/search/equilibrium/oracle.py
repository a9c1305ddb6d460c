"""The oracle: a best response of one Agenda against a field, one seat (or a team) deviating.

A best response is searched in the `planner` bot's whole space (every parameter within its
declared range, `fbsim.policies.planner.PARAMS`), in three stages:

1. **Screen.** Every start candidate is played once against the field (`screen_games` per
   seat range): the population's strongest strategy against the field, each of the field's
   own components for the Agenda, large one-parameter moves of the field's heaviest strategy
   (each parameter at the bottom and at the top of its range) and its quiet openings
   (`quiet_openings`), the previous best response,
   `fbsim exploit`'s preset for the Agenda and the planner's defaults.
2. **Search.** The cross-entropy method (`fbsim.experiments.search.cem`) from each of the
   `starts` best screened candidates, each candidate scored by the deviant's win rate (one
   seat rotated over the seats: `fbsim.experiments.search.deviation`; a team: the Agenda's
   win rate), every candidate of a generation on the same games.
3. **Selection**, on a seed none of the searches played: the best and the final mean of
   every start and the best screened candidate; the winner is the answer.

The answer is then confirmed on fresh games by the caller (a search's own score is biased up:
the winner's curse). Whatever it finds is a lower bound of what a deviation can gain.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from fbsim.experiments.search.cem import Dim, cem
from fbsim.experiments.search.deviation import Deviant, evaluate
from fbsim.experiments.search.equilibrium.fields import planner_params
from fbsim.lineup import Entry, Lineup
from fbsim.rules import Rules

# the planner's parameters taking whole values (the others are real)
INTEGER = frozenset({"chips", "chips_change", "burn_floor", "futile", "collapse", "mask_burns",
                     "mask_cools", "disguise", "buy", "buy_until", "payback", "reserve",
                     "accuse", "cornered", "steer_from"})
SPREAD = 0.15  # a search's first spread, a share of each parameter's range


def box(start: dict) -> list[Dim]:
    """The planner's whole space but its table (`fbsim.policies.planner.TABLE`, set by the
    searcher's distillation and kept as the start has it: `with_table`), the search starting
    at `start`."""
    from fbsim.policies.planner import PARAMS, TABLE_NAMES

    return [Dim(p.name, p.lo, p.hi, p.name in INTEGER, min(max(start[p.name], p.lo), p.hi))
            for p in PARAMS if p.name not in TABLE_NAMES]


def with_table(candidate: dict, start: dict) -> dict:
    """A searched candidate (`box`'s parameters) with the start's table."""
    from fbsim.policies.planner import TABLE_NAMES

    return planner_params({**{k: v for k, v in start.items() if k in TABLE_NAMES},
                           **candidate})


def moves(strategy: dict) -> list[dict]:
    """Large one-parameter moves of a strategy: each parameter but the table's at the bottom
    and at the top of its range (where that changes it)."""
    from fbsim.policies.planner import PARAMS, TABLE_NAMES

    out = []
    for p in PARAMS:
        if p.name in TABLE_NAMES:
            continue
        for v in (p.lo, p.hi):
            if strategy[p.name] != v:
                out.append({**strategy, p.name: float(v)})
    return out


QUIET_ROUNDS = (2, 3)  # the quiet openings screened: steering from these rounds
QUIET_DISGUISE = 2  # ... with this many open COOL Agents before


def quiet_openings(strategy: dict) -> list[dict]:
    """A strategy with a quiet opening (`steer_from` in QUIET_ROUNDS, QUIET_DISGUISE open COOL
    Agents before it): what the searcher plays where the family burned from round 1 (four
    WORKS and two COOL in round 1 at 3 players, docs/strong-play.md), a joint move of two
    parameters that one-parameter moves miss."""
    return [{**strategy, "steer_from": float(r), "disguise": float(QUIET_DISGUISE)}
            for r in QUIET_ROUNDS if strategy.get("steer_from", 1.0) != r]


def exploit_start(agenda: str) -> dict:
    """`fbsim exploit`'s start for this Agenda (its `tunable` preset), as a planner."""
    from fbsim.experiments.search.presets import PRESETS
    from fbsim.policies.planner import from_tunable

    return planner_params(from_tunable(PRESETS[agenda]))


@dataclass(frozen=True)
class Effort:
    """How hard one best response searches (games are per seat range: a seat deviant plays
    `players` times as many)."""

    starts: int = 2
    generations: int = 6
    population: int = 10
    screen_games: int = 1_000
    search_games: int = 1_000
    select_games: int = 4_000


@dataclass
class Found:
    strategy: dict  # the planner's parameters
    start: str  # where the search that found it started
    score: float  # its win rate on the selection games (biased up: confirm it)
    games: int  # games played to find it
    curve: list[dict] = field(default_factory=list)  # per start and generation
    screened: list[dict] = field(default_factory=list)  # each start candidate's score


def best_response(rules: Rules, field_lineup: Lineup, agenda: str, candidates: dict[str, dict],
                  effort: Effort, seed_of: Callable[[str, int, int], int], mode: str = "seat",
                  client=None, say=None) -> Found:
    """The best planner for `agenda` against `field` (`mode` "seat": one seat deviating;
    "team": every seat of the Agenda). `candidates`: the screen's start candidates by label
    (a label ending in a number groups several, e.g. "move-3"); `seed_of(stage, start, step)`
    the seed of each stage ("screen", "search", "select")."""
    played = 0

    def score(strategies: list[dict], seed: int, games: int) -> list[float]:
        nonlocal played
        ev = evaluate(rules, field_lineup, [Deviant(agenda, Entry.make("planner", s), mode)
                                     for s in strategies], seed, games, client)
        played += ev.games
        return [g.rate for g in ev.gains]

    labels, pool = [], []
    for label, c in candidates.items():
        c = planner_params(c)
        if c not in pool:
            labels.append(label)
            pool.append(c)
    screened = score(pool, seed_of("screen", 0, 0), effort.screen_games)
    order = np.argsort(-np.asarray(screened), kind="stable")
    if say:
        say(f"{agenda}: screened {len(pool)} starts, the best {labels[order[0]]} "
            f"({100 * screened[order[0]]:.1f}%)")
    finalists, where = [pool[order[0]]], [labels[order[0]]]
    curve = []
    screen_rows = [{"start": lab, "score": float(x), **c}
                   for lab, x, c in zip(labels, screened, pool, strict=True)]
    for k, i in enumerate(order[:effort.starts]):
        start = pool[i]

        def gen_score(cands, gen, k=k, start=start):
            return score([with_table(c, start) for c in cands], seed_of("search", k, gen),
                         effort.search_games)

        res = cem(gen_score, box(start), generations=effort.generations,
                  population=effort.population, seed=seed_of("search", k, 999) % 2**32,
                  spread=SPREAD)
        curve += [{"start": labels[i], **row} for row in res.curve]
        for x in (with_table(res.best, start), with_table(res.best_mean, start)):
            if x not in finalists:
                finalists.append(x)
                where.append(labels[i])
    if len(finalists) == 1:
        return Found(finalists[0], where[0], float(screened[order[0]]), played, curve,
                     screen_rows)
    final = score(finalists, seed_of("select", 0, 0), effort.select_games)
    j = int(np.argmax(final))  # ties: the first
    if say:
        say(f"{agenda}: best response from the start '{where[j]}' "
            f"({100 * final[j]:.1f}% on the selection games)")
    return Found(finalists[j], where[j], float(final[j]), played, curve, screen_rows)


def start_candidates(agenda: str, field_components: list[tuple[float, dict]],
                     strongest: dict | None, previous: dict | None) -> dict[str, dict]:
    """The screen's candidates for one Agenda (`best_response`), by label."""
    out: dict[str, dict] = {}
    if strongest is not None:
        out["population"] = strongest
    comps = sorted(field_components, key=lambda wc: -wc[0])
    for k, (_, c) in enumerate(comps):
        out[f"component-{k}"] = c
    if comps:
        heaviest = planner_params(comps[0][1])
        for k, m in enumerate(moves(heaviest)):
            out[f"move-{k}"] = m
        for k, m in enumerate(quiet_openings(heaviest)):
            out[f"quiet-{k}"] = m
    if previous is not None:
        out["previous"] = previous
    out["exploit-start"] = exploit_start(agenda)
    out["defaults"] = {}
    return out

