"""`fbsim equilibrium --draw agenda`: the team game, every seat of an Agenda one player.

In this game each game draws one strategy per Agenda, shared by every seat holding it, and an
Agenda's win is what counts: the players of an Agenda cooperate. It answers a designer who
asks what happens when they do; the game as played, won by one player, is solved by
`fbsim.experiments.search.equilibrium.trainer`.

A population-based search in the manner of PSRO / double oracle (Lanctot et al. 2017), over
the `planner` bot's strategy space, one population per Agenda:

1. **The meta-game.** Each Agenda picks one strategy of its population; every combination
   (a *cell*: a lineup of three planners) is played on the same games (common random
   numbers) and its three win rates fill the payoff table `W[agenda, i, j, k]`. Only the new
   cells of an iteration are played.
2. **The mixture.** `fbsim.experiments.search.meta.solve` finds a mixed equilibrium of the
   table: the *field*, one mixture per Agenda (each game draws one strategy per Agenda,
   shared by every seat of that Agenda: `fbsim.policies.field`).
3. **Best responses.** For each Agenda, the cross-entropy search (`cem`) looks for the
   planner that wins most often against the field, all seats of that Agenda playing it,
   from several starts (`Budget.starts`, the first of `START_ORDER`): the population's
   strongest strategy against the field; `fbsim exploit`'s own search (the `tunable` bot's
   smaller space, which the planner's contains, from exploit's preset for the Agenda); the
   Agenda's previous best response; exploit's preset as a planner, searched in the planner's
   whole space. The best and the final mean of every start are compared on a seed none of
   the searches played, and the winner goes on.
4. **Confirmation, on a fresh seed.** The field and each best response against it are played
   on the same fresh games: the field's win rates and each Agenda's *deviation gain* (the best
   response's win rate minus the Agenda's in the field, paired game by game) with 95%
   intervals.
5. Add the best responses that gain more than `tolerance` (the upper end of the gain's
   interval) to the populations and iterate. Converged: no Agenda gains more than
   `tolerance`, and the field's win rates moved at most `stability` over the last three
   iterations (so at least two fresh searches after the last change found no gain).
6. **Audits.** A search that stops answers with its least exploitable field, which the
   choice itself flatters: the field whose search happened to find nothing looks best. A
   field's exploitability is the larger of the largest deviation gain that any search or
   audit confirmed against it and the largest gain that a strategy of the population (found
   later, perhaps) shows against it in the payoff table. The chosen field is audited
   (`Budget.audits` times at most): new best responses against it, from other starts (the
   population's strongest strategy against it among them, every start kept among the
   finalists) and on fresh seeds, confirmed on fresh games; an audit that finds more moves
   the choice to the next least exploitable field, which is audited in turn.

Every sweep is a dataset under OUT/pN/ (resumed if killed, played on Dask with a client), and
the search's state (populations, payoff table, iterations) is saved to OUT/pN/state.json
after every step, so an interrupted search resumes where it stopped. Results: the field file
OUT/pN.toml (a lineup file: `simulate`, `sweep`, `exploit --field`, `report` and `tune` take
it) and OUT/summary.json.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from fbsim import jsonfile
from fbsim.errors import UsageError
from fbsim.experiments.metrics.definitions import deck_share, fair_win_rate
from fbsim.experiments.metrics.stats import discordant_from_normal, paired_proportions
from fbsim.experiments.run.spec import SweepSpec
from fbsim.experiments.run.sweep import run_sweep
from fbsim.experiments.search.cem import Dim, cem
from fbsim.experiments.search.deviation import finite
from fbsim.experiments.search.equilibrium import fields
from fbsim.experiments.search.equilibrium.fields import STARTING_POPULATIONS, planner
from fbsim.experiments.search.equilibrium.state import (
    clear_temporaries,
    publish,
    write_json,
    write_text,
)
from fbsim.experiments.search.equilibrium.summary import pc
from fbsim.experiments.search.meta import payoffs, solve
from fbsim.game import layout as L
from fbsim.lineup import Lineup, lineup_to_toml

STATE_VERSION = 2  # 2: best responses from several starts, audits of the chosen field
AGENDAS = L.AGENDA_NAMES  # steward, opportunist, accelerationist: the roles, in order
MAX_ITERATIONS = 99  # the seeds below leave room for this many iterations ...
MAX_GENERATIONS = 99  # ... and this many generations per start (Budget checks both)
CELL_SEED_OFFSET = 0  # the payoff table's games
# best responses of iteration `it` (`search_seed`): + 10_000 * it + 1_000 * agenda
# + 100 * start + generation (starts 0..3); the comparison of the starts' finalists: + 900
SEARCH_SEED_OFFSET = 10_000
SELECT_SEED_OFFSET = 900
CONFIRM_SEED_OFFSET = 2_000_000  # confirmations: + iteration (fresh games every time)
AUDIT_SEED_OFFSET = 3_000_000  # audits of iteration c's field: + 10_000 * c, as above
AUDIT_CONFIRM_SEED_OFFSET = 4_000_000  # their confirmation: + c
SELECT_GAMES_FACTOR = 4  # the finalists' comparison plays this many x search_games
RESUMABLE = ("iterations", "audits", "starts")  # budget a saved search may be resumed with
LEGACY_TIEBREAK = 1e-7  # x mean Legacy (< 100): below one game in 10^5 of win rate
LEAKAGE_GAMES = 2_000  # reference-engine games replayed to measure Agenda leakage

# the planner's search box (fbsim.policies.planner); integer dimensions are rounded
DIMS = (
    Dim("aim", 420, 700), Dim("tolerance", 0, 30), Dim("chips", 0, 6, True),
    Dim("chips_change", -6, 6, True), Dim("burn_floor", 0, 6, True),
    Dim("futile", 0, 1, True), Dim("collapse", 0, 1, True), Dim("mask_burns", 0, 2, True),
    Dim("mask_cools", 0, 2, True), Dim("disguise", 0, 3, True), Dim("greed", 0, 1),
    Dim("buy", 0, 5, True), Dim("buy_until", 0, 7, True), Dim("payback", 0, 9, True),
    Dim("reserve", 0, 20, True), Dim("accuse", 0, 4, True), Dim("accuse_min", -5, 15),
    Dim("cornered", 0, 2, True),
)

@dataclass(frozen=True)
class Budget:
    cell_games: int = 20_000  # games per cell of the payoff table
    generations: int = 8  # of each best-response search
    population: int = 12  # candidates per generation
    search_games: int = 5_000  # games per candidate and generation
    confirm_games: int = 100_000  # games of each confirmation (field and deviations)
    iterations: int = 40  # at most (the searches of results/ converged within 17 to 33)
    starts: int = 3  # of each best-response search (the first `starts` of those listed)
    audits: int = 2  # at most, of the chosen field, once the iterations end
    tolerance: float = 0.03  # deviation gain (upper end of its 95% interval) that stops
    stability: float = 0.03  # ... once the win rates moved no more over three iterations

    def __post_init__(self):
        # the seeds of the searches leave room for this much (SEARCH_SEED_OFFSET)
        for flag, v, hi in (("--iterations", self.iterations, MAX_ITERATIONS),
                            ("--generations", self.generations, MAX_GENERATIONS),
                            ("--starts", self.starts, len(START_ORDER))):
            if not 1 <= v <= hi:
                raise UsageError(f"{flag}: 1 to {hi}, got {v}")


def field_lineup(pops: dict[str, list[dict]], mix: dict[str, list[float]]) -> Lineup:
    """The team game's field: one draw per Agenda, shared by its seats."""
    return fields.field_lineup(pops, mix, "agenda")


def search_seed(base: int, it: int, agenda: str) -> int:
    """The first seed of one best response (`base`: SEARCH_ or AUDIT_SEED_OFFSET): its start
    k plays generation g on this + 100 * k + g, its finalists this + SELECT_SEED_OFFSET."""
    return base + 10_000 * it + 1_000 * AGENDAS.index(agenda)


def exploit_start(agenda: str) -> dict:
    """`fbsim exploit`'s start for this Agenda (its `tunable` preset), as a planner."""
    from fbsim.experiments.search.presets import PRESETS
    from fbsim.policies.planner import from_tunable

    return from_tunable(PRESETS[agenda])


# A best response's starts, in the order `Budget.starts` takes them (the audits take
# "heaviest", "exploit-search" and "defaults"). Each but "exploit-search" is a planner strategy
# from which the search explores the planner's whole space (DIMS); "exploit-search" is
# `fbsim exploit`'s own search: the tunable bot's space (`exploit.DIMS`, which the planner's
# contains: `fbsim.policies.planner.from_tunable`) from its preset for the Agenda.
START_ORDER = ("population", "exploit-search", "previous", "exploit-start")
EXPLOIT_SEARCH = "exploit-search"


def start_space(agenda: str, start: dict | None) -> tuple[list[Dim], Callable]:
    """The search box of one start (`start` None: exploit's search) and the map from its
    candidates to full planner strategies."""
    if start is None:
        from fbsim.experiments.search.exploit import DIMS as TUNABLE_DIMS
        from fbsim.experiments.search.presets import PRESETS
        from fbsim.policies.planner import from_tunable

        dims = [Dim(d.name, d.lo, d.hi, d.integer, PRESETS[agenda][d.name])
                for d in TUNABLE_DIMS]
        return dims, lambda c: planner(from_tunable(c)).as_dict()
    start = planner(start).as_dict()  # every parameter (the defaults where not given)
    dims = [Dim(d.name, d.lo, d.hi, d.integer, min(max(start[d.name], d.lo), d.hi))
            for d in DIMS]
    return dims, lambda c: planner(c).as_dict()


class Search:
    """One table size's search; its state lives in OUT/pN/state.json."""

    def __init__(self, players: int, out: Path, seed: int, budget: Budget,
                 rules: str | None, sets: dict, client=None, progress=None, echo=None,
                 force: bool = False):
        self.players, self.seed, self.budget = players, seed, budget
        self.dir = Path(out) / f"p{players}"
        self.base = {"rules": rules, "set": dict(sets), "players": [players]}
        self.client, self.progress, self.echo, self.force = client, progress, echo, force
        # what the saved state must share to be resumed (more iterations or audits may be
        # asked, and other starts: each iteration records the starts it searched from)
        kept = {k: v for k, v in asdict(budget).items() if k not in RESUMABLE}
        self.config = {"version": STATE_VERSION, "players": players, "seed": seed,
                       "budget": kept, "rules": rules, "set": dict(sets)}
        self.state = self._load()

    # ------------------------------------------------------------------ state

    def _load(self) -> dict:
        path = self.dir / "state.json"
        clear_temporaries(self.dir)  # (a killed run's, a full disk's)
        if path.exists() and not self.force:
            try:
                state = jsonfile.read(path)
            except (OSError, ValueError) as e:
                raise UsageError(f"{path}: cannot resume the search ({e}); run again with "
                                 "--force to start it over") from None
            saved = dict(state.get("config") or {})
            saved["budget"] = {k: v for k, v in saved.get("budget", {}).items()
                               if k not in RESUMABLE}
            if saved != self.config:
                raise UsageError(f"{path}: a search with other settings is in this folder; "
                                 "give another --out, or --force to start it over")
            state["config"] = self.config
            return state
        start = STARTING_POPULATIONS
        return {"config": self.config,
                "populations": {a: [planner(x).as_dict() for x in start[a]] for a in AGENDAS},
                "cells": {}, "iterations": [], "games": 0, "extended": -1, "audits": {}}

    def _extend(self) -> None:
        """Add the last iteration's gaining best responses to the populations (once)."""
        its = self.state["iterations"]
        if self.state["extended"] >= len(its) - 1:
            return
        for a in AGENDAS:
            if its[-1]["agendas"][a]["gain_ci"][1] > self.budget.tolerance:
                self.state["populations"][a].append(its[-1]["agendas"][a]["best_response"])
        self.state["extended"] = len(its) - 1
        self._save()

    def moves(self) -> dict[str, float]:
        """Per Agenda: how far the field's win rate moved over the last three iterations."""
        its = self.state["iterations"][-3:]
        return {a: max(r["agendas"][a]["win_rate"] for r in its)
                - min(r["agendas"][a]["win_rate"] for r in its) for a in AGENDAS}

    def gains(self, k: int) -> dict[str, dict]:
        """Per Agenda, the largest deviation gain confirmed against iteration k's field (upper
        end of the interval): the iteration's own best response's, or an audit's where that
        found more; each with `found_by` ("search" or "audit")."""
        own = self.state["iterations"][k]["agendas"]
        audit = self.state.get("audits", {}).get(str(k), {})
        out = {}
        for a in AGENDAS:
            r = {**own[a], "found_by": "search"}
            if a in audit and audit[a]["gain_ci"][1] > r["gain_ci"][1]:
                r.update({key: audit[a][key] for key in
                          ("deviation_gain", "gain_ci", "changed_games", "best_response")})
                r["found_by"] = "audit"
            out[a] = r
        return out

    def worst_gain(self, k: int) -> float:
        return max(r["gain_ci"][1] for r in self.gains(k).values())

    def table(self) -> np.ndarray | None:
        """The payoff table over the population of the last iteration (every cell played;
        strategies added after it are played in the next one), or None before any."""
        its = self.state["iterations"]
        if not its or "population" not in its[-1]:
            return None
        try:
            return self._cells_table(its[-1]["population"])
        except KeyError:
            return None

    def _cells_table(self, sizes) -> np.ndarray:
        """The payoff table W[agenda, i, j, k] of populations of these sizes from the played
        cells (KeyError if one is missing)."""
        W = np.zeros((3, *sizes))
        for c in itertools.product(*map(range, sizes)):
            W[(slice(None), *c)] = self.state["cells"][",".join(map(str, c))]
        return W

    def population_gains(self, k: int, W: np.ndarray | None = None) -> dict[str, dict]:
        """Per Agenda, the population's strongest strategy against iteration k's field, by
        the payoff table: its index and how much more it wins than the Agenda's mixture there
        (`gain`, on the table's games, not confirmed). A strategy found after iteration k
        may beat its field by more than any search against that field found; the choice of
        field (`chosen`) and the audits (`audit`) take it into account. W: `table()`, when
        the caller has it already."""
        W = self.table() if W is None else W
        if W is None:
            return {a: {"index": None, "gain": 0.0} for a in AGENDAS}
        mix = self.state["iterations"][k]["mixture"]
        weights = [np.pad(np.asarray(mix[a], dtype=float), (0, n - len(mix[a])))
                   for a, n in zip(AGENDAS, W.shape[1:], strict=True)]
        us = payoffs(W, weights)
        return {a: {"index": int(np.argmax(u)), "gain": float(u.max() - u @ x)}
                for a, u, x in zip(AGENDAS, us, weights, strict=True)}

    def exploitability(self, k: int, W: np.ndarray | None = None) -> float:
        """What the choice of field minimises: the largest deviation gain confirmed against
        iteration k's field (`worst_gain`) or shown against it by a strategy of the
        population in the payoff table (`population_gains`), whichever is larger."""
        table = max(g["gain"] for g in self.population_gains(k, W).values())
        return max(self.worst_gain(k), table)

    def converged(self) -> bool:
        """No Agenda gains more than the tolerance by deviating (upper end of the interval,
        audits of the last field included), and the field's win rates moved at most
        `stability` over the last three iterations (so at least two fresh searches after the
        last change found no gain)."""
        its = self.state["iterations"]
        if len(its) < 3:
            return False
        return (self.worst_gain(len(its) - 1) <= self.budget.tolerance
                and max(self.moves().values()) <= self.budget.stability)

    def finished(self) -> bool:
        return self.converged() or len(self.state["iterations"]) >= self.budget.iterations

    def audited(self) -> bool:
        """Whether the audits are done: the chosen field audited, or `audits` spent."""
        done = self.state.get("audits", {})
        return str(self.chosen()) in done or len(done) >= self.budget.audits

    def _save(self) -> None:
        write_json(self.dir / "state.json", self.state)

    def say(self, text: str) -> None:
        if self.echo:
            self.echo(f"  {self.players} players: {text}")

    # ------------------------------------------------------------------ sweeps

    def _sweep(self, name: str, seed: int, games: int, lineups: list[Lineup],
               outcomes: bool = False, checkpoints: bool = True):
        """The sweep of these lineups under OUT/pN/name; `checkpoints=False` for the short
        ones (a generation of a best-response search: its point files would cost more than
        its games, and a killed one is played again whole, `fbsim.experiments.run.sweep`)."""
        points = [{"players": self.players, "lineup": lu.describe()} for lu in lineups]
        spec = SweepSpec(games=games, seed=seed, points=points, **self.base)
        res = run_sweep(spec, self.dir / name, client=self.client, progress=self.progress,
                        force=self.force, checkpoints=checkpoints)
        # every game of the sweep, played now or by an interrupted run it resumed (a resumed
        # search counts each game once, as an uninterrupted one does)
        self.state["games"] += int(res.outcomes["games"].sum())
        rates = res.win_rates[res.win_rates["kind"] == "agenda"]
        return (rates, res.outcomes) if outcomes else rates

    @staticmethod
    def _rate(rates, point: int, agenda: str):
        return rates[(rates["point"] == point) & (rates["name"] == agenda)].iloc[0]

    # ------------------------------------------------------------------ steps

    def fill_cells(self, it: int) -> np.ndarray:
        pops = self.state["populations"]
        sizes = [len(pops[a]) for a in AGENDAS]
        keys = [",".join(map(str, c)) for c in itertools.product(*map(range, sizes))]
        todo = [k for k in keys if k not in self.state["cells"]]
        if todo:
            self.say(f"iteration {it}: {len(todo)} new cells of the payoff table "
                     f"({self.budget.cell_games:,} games each)")
            lineups = [Lineup({a: planner(pops[a][int(i)])
                               for a, i in zip(AGENDAS, k.split(","), strict=True)})
                       for k in todo]
            rates = self._sweep(f"cells-{it:02d}", self.seed + CELL_SEED_OFFSET,
                                self.budget.cell_games, lineups)
            for j, k in enumerate(todo):
                self.state["cells"][k] = [float(self._rate(rates, j, a)["rate"])
                                          for a in AGENDAS]
            self._save()
        return self._cells_table(sizes)

    def best_response(self, name: str, seed: int, agenda: str, field: Lineup,
                      starts: dict[str, dict | None], keep_starts: bool = False
                      ) -> tuple[dict, str]:
        """The planner that wins most often in `field` for `agenda`: a cross-entropy search
        from each start (by label: a planner strategy, or None for exploit's search; first
        seed `seed + 100 * k` for the k-th, sweeps under `name`/start-k; a start equal to an
        earlier one is skipped), then the best and the final mean of every start compared on
        a seed no search played (with `keep_starts`, every planner start itself as well: the
        answer is then never worse than a start on that seed). Returns (the strategy, the
        label of its start)."""
        b = self.budget
        pool, where, seen = [], [], []
        for k, (label, start) in enumerate(starts.items()):
            key = None if start is None else planner(start).as_dict()
            if key in seen:
                continue
            seen.append(key)
            dims, full = start_space(agenda, start)

            def score(cands, gen, k=k, full=full):
                return self._scores(f"{name}/start-{k}/gen-{gen:02d}", seed + 100 * k + gen,
                                    b.search_games, agenda, field, [full(c) for c in cands])

            found = cem(score, dims, generations=b.generations, population=b.population,
                        seed=self.seed * 7919 + self.players * 31 + seed + 100 * k)
            finalists = [full(found.best), full(found.best_mean)]
            if keep_starts and start is not None:
                finalists.append(planner(start).as_dict())
            for x in finalists:
                if x not in pool:  # each strategy once, with the first start that found it
                    pool.append(x)
                    where.append(label)
        if len(pool) == 1:
            return pool[0], where[0]
        scores = self._scores(f"{name}/select", seed + SELECT_SEED_OFFSET,
                              SELECT_GAMES_FACTOR * b.search_games, agenda, field, pool)
        j = int(np.argmax(scores))  # ties: the first (the earlier start)
        return pool[j], where[j]

    def _scores(self, name: str, seed: int, games: int, agenda: str, field: Lineup,
                cands: list[dict]) -> list[float]:
        """Each candidate's win rate for `agenda` in `field` (its mean Legacy only breaking
        ties, below one game's worth: a search whose candidates all win nothing still finds
        a slope)."""
        lineups = [Lineup({**field.by_agenda, agenda: planner(c)}) for c in cands]
        rates, outcomes = self._sweep(name, seed, games, lineups, outcomes=True,
                                      checkpoints=False)
        legacy = outcomes.set_index("point")[f"legacy_mean_{agenda}"].fillna(0.0)
        return [float(self._rate(rates, j, agenda)["rate"])
                + LEGACY_TIEBREAK * float(legacy.get(j, 0.0)) for j in range(len(cands))]

    def deviations(self, name: str, seed: int, field: Lineup, responses: dict) -> dict:
        """The field and each Agenda's best response in it, played on the same fresh games:
        per Agenda, the field's win rate and the response's gain (paired)."""
        lineups = [field] + [Lineup({**field.by_agenda, a: planner(responses[a])})
                             for a in AGENDAS]
        rates = self._sweep(name, seed, self.budget.confirm_games, lineups)
        out = {}
        for i, a in enumerate(AGENDAS):
            f, d = self._rate(rates, 0, a), self._rate(rates, i + 1, a)
            out[a] = {"win_rate": float(f["rate"]),
                      "ci": [float(f["ci_low"]), float(f["ci_high"])],
                      "deviation_gain": float(d["diff"]),
                      "gain_ci": [float(d["diff_ci_low"]), float(d["diff_ci_high"])],
                      "changed_games": int(d["changed_games"]),
                      "best_response": responses[a]}
        return out

    def iterate(self, it: int) -> dict:
        pops = self.state["populations"]
        W = self.fill_cells(it)
        its = self.state["iterations"]
        start = [np.asarray(its[-1]["mixture"][a]) for a in AGENDAS] if its else None
        weights, meta_regret = solve(W, start=start)
        mix = {a: [float(x) for x in w] for a, w in zip(AGENDAS, weights, strict=True)}
        field = field_lineup(pops, mix)
        us = payoffs(W, weights)
        responses, origins = {}, {}
        for a, u in zip(AGENDAS, us, strict=True):
            self.say(f"iteration {it}: best response of the {a}")
            every = {"population": pops[a][int(np.argmax(u))], EXPLOIT_SEARCH: None,
                     "previous": its[-1]["agendas"][a]["best_response"] if its else None,
                     "exploit-start": exploit_start(a)}
            starts = {k: every[k] for k in START_ORDER[:self.budget.starts]
                      if k != "previous" or its}
            responses[a], origins[a] = self.best_response(
                f"search-{it:02d}-{a}", self.seed + search_seed(SEARCH_SEED_OFFSET, it, a),
                a, field, starts)
        self.say(f"iteration {it}: confirming on a fresh seed "
                 f"({self.budget.confirm_games:,} games)")
        agendas = self.deviations(f"confirm-{it:02d}", self.seed + CONFIRM_SEED_OFFSET + it,
                                  field, responses)
        rules = self._rules()
        for a in AGENDAS:
            agendas[a]["fair"] = deck_share(rules, a)
            agendas[a]["start"] = origins[a]
        return {"iteration": it, "mixture": mix, "meta_regret": [float(x) for x in meta_regret],
                "population": [len(pops[a]) for a in AGENDAS], "agendas": agendas,
                "field": field.describe()}

    def audit(self, c: int) -> dict:
        """New best responses against iteration c's field, from other starts than its own
        search's (the population's strongest strategy against the field by the payoff table,
        the field's heaviest strategy, exploit's search, the planner's defaults) on fresh
        seeds, each start itself among the finalists, confirmed on fresh games: per Agenda,
        as `deviations`."""
        pops, mix = self.state["populations"], self.state["iterations"][c]["mixture"]
        field = field_lineup(pops, mix)
        strongest = self.population_gains(c)
        responses = {}
        for a in AGENDAS:
            self.say(f"audit of the field of iteration {c}: best response of the {a}")
            starts = {"heaviest": pops[a][int(np.argmax(mix[a]))], EXPLOIT_SEARCH: None,
                      "defaults": {}}
            if strongest[a]["index"] is not None:  # (a start the first audits did not have)
                starts = {"population": pops[a][strongest[a]["index"]], **starts}
            responses[a], _ = self.best_response(
                f"audit-{c:02d}-{a}", self.seed + search_seed(AUDIT_SEED_OFFSET, c, a),
                a, field, starts, keep_starts=True)
        self.say(f"audit of the field of iteration {c}: confirming on a fresh seed")
        return self.deviations(f"audit-{c:02d}-confirm",
                               self.seed + AUDIT_CONFIRM_SEED_OFFSET + c, field, responses)

    def _rules(self):
        from fbsim.rules import load_rules, nest

        rules = load_rules(self.base["rules"], overrides=nest(self.base["set"]),
                           overrides_source="--set", bots={}, players=self.players)
        fields.check_dealt(rules)
        return rules

    def run(self) -> dict:
        while not self.finished():
            if self.state["iterations"]:
                self._extend()
            it = len(self.state["iterations"])
            record = self.iterate(it)
            self.state["iterations"].append(record)
            self._save()
            self.say(f"iteration {it}: field " + ", ".join(
                f"{a} {100 * r['win_rate']:.1f}%" for a, r in record["agendas"].items())
                + "; " + gains_line(record["agendas"]))
        while not self.audited():
            c = self.chosen()
            found = self.audit(c)
            self.state.setdefault("audits", {})[str(c)] = found
            self._save()
            self.say(f"audit of the field of iteration {c}: " + gains_line(found))
        return self.summary()

    def measures(self) -> dict:
        """Accusation accuracy (R-A3: cornered players who were Accelerationists), the
        collapse and everyone-loses rates over the last confirmation's games, and Agenda
        leakage by round
        (`fbsim.experiments.metrics.leakage`) over LEAKAGE_GAMES reference games, of the
        final field (kept in the state once measured)."""
        it = self.chosen()
        kept = self.state.get("measures")
        if kept is not None and kept.get("iteration") == it:  # of this field, not an older
            out = {k: v for k, v in kept.items() if k != "iteration"}
            out["leakage"] = {a: out["leakage"][a] for a in AGENDAS}  # the Agendas' order
            return out
        from fbsim.experiments.metrics.leakage import leakage
        from fbsim.experiments.run.runner import Arm, count_paired

        rules, field = self._rules(), self.field()
        seed = self.seed + CONFIRM_SEED_OFFSET + it  # the chosen field's confirmation games
        self.say("measuring accusation accuracy and Agenda leakage of the field")
        tally = count_paired(Arm(rules, field), None, seed, self.budget.confirm_games)
        rate, lo, hi = tally.estimate(tally.index["accuracy"])

        def share(key):  # a share of games, with its Wilson interval
            r, low, high = tally.rate(tally.index[key])
            return {"rate": r, "ci": [low, high]}

        leak = leakage(rules, field, seed, LEAKAGE_GAMES)
        self.state["measures"] = {
            "iteration": it,
            # no cornering at all: no accuracy (null in JSON, not NaN)
            "accusation_accuracy": {"rate": finite(rate), "ci": [finite(lo), finite(hi)],
                                    "cornered": tally.total("corners"),
                                    "games": self.budget.confirm_games},
            "collapse": share("collapse"), "everyone_loses": share("everyone_loses"),
            "leakage": {a: {"chance": float(g["chance"].iloc[0]),
                            "by_round": [[float(x) for x in row] for row in
                                         g[["rate", "ci_low", "ci_high", "chance"]].to_numpy()],
                            "games": [int(x) for x in g["games"]]}
                        for a, g in leak.groupby("agenda", sort=False)}}
        self._save()
        return self.measures()

    def chosen(self) -> int:
        """The iteration whose field is the answer: the last one of a converged search,
        else the least exploitable one found (`exploitability`: the lowest largest deviation
        gain that any search or audit confirmed against it, upper ends of the intervals, or
        that a strategy of the population shows against it in the payoff table; ties: the
        later)."""
        its = self.state["iterations"]
        if self.converged():
            return len(its) - 1
        W = self.table()  # built once for every iteration's field
        return min(range(len(its)), key=lambda k: (self.exploitability(k, W), -k))

    def summary(self) -> dict:
        its = self.state["iterations"]
        chosen = self.chosen()  # (each call builds the payoff table: once here)
        pick = its[chosen]
        gains = self.gains(chosen)  # in the Agendas' order (a resumed state is sorted)
        agendas = {a: {k: v for k, v in gains[a].items() if k not in ("best_response", "start")}
                   for a in AGENDAS}
        measures = self.measures()
        for r in agendas.values():
            if "changed_games" not in r:  # a state recorded with normal intervals
                b, c = discordant_from_normal(r["deviation_gain"], *r["gain_ci"],
                                              self.budget.confirm_games)
                _, lo, hi, _ = paired_proportions(b, c, self.budget.confirm_games)
                r["gain_ci"], r["changed_games"] = [lo, hi], b + c
        table = self.population_gains(chosen)
        for a, r in agendas.items():  # what a strategy of the population gains, by the table
            r["population_gain"] = table[a]["gain"]
        for r in agendas.values():  # the seats' share, over the games somebody wins
            r["seat_share"] = r["fair"]
            r["fair"] = fair_win_rate(r["seat_share"], measures["everyone_loses"]["rate"])
        return {"draw": "agenda", "agendas": agendas, "iterations": len(its),
                "field_iteration": chosen,
                "audited": sorted(int(k) for k in self.state.get("audits", {})),
                "games": self.state["games"], "converged": self.converged(),
                "tolerance": self.budget.tolerance, "stability": self.budget.stability,
                "last_three_move": self.moves(), "meta_regret": pick["meta_regret"],
                "mixture": {a: pick["mixture"][a] for a in AGENDAS},
                "populations": {a: len(p) for a, p in self.state["populations"].items()},
                **measures}

    def field(self) -> Lineup:
        """The chosen iteration's field (populations only grow, so its mixture's weights
        name the first strategies of each population)."""
        pick = self.state["iterations"][self.chosen()]
        return field_lineup(self.state["populations"], pick["mixture"])


def gains_line(agendas: dict) -> str:
    """Each Agenda's deviation gain and the upper end of its interval, in points."""
    return "deviation gains " + ", ".join(
        f"{a} {100 * r['deviation_gain']:+.1f} (<= {100 * r['gain_ci'][1]:+.1f})"
        for a, r in agendas.items())


def rate_text(r: dict, key: str = "win_rate", ci: str = "ci") -> str:
    return f"{pc(r[key])} [{pc(r[ci][0])}, {pc(r[ci][1])}]"


def gain_text(r: dict) -> str:
    """The gain, its interval (three decimals where one would show +-0.0) and, where known, the
    games whose winner changed."""
    lo, hi = (100 * x for x in r["gain_ci"])
    digits = 3 if max(abs(lo), abs(hi)) < 0.1 else 1
    changed = (f"; {r['changed_games']:,} games changed" if r.get("changed_games") is not None
               else "")
    if r.get("found_by") == "audit":
        changed += "; found by an audit"
    return (f"{100 * r['deviation_gain']:+.{digits}f} points [{lo:+.{digits}f}, "
            f"{hi:+.{digits}f}]{changed}")


def field_file_text(search: Search, summary: dict) -> str:
    lines = [f"fbsim field: the equilibrium found by `fbsim equilibrium` at {search.players} "
             "players", f"{summary['iterations']} iterations, {summary['games']:,} games; "
             f"converged (every deviation gain <= {100 * summary['tolerance']:.0f} points, "
             f"win rates within {100 * summary['stability']:.0f} points over the last three "
             f"iterations): {'yes' if summary['converged'] else 'no'}"]
    if not summary["converged"]:
        lines.append(f"not converged: this is the least exploitable field found (iteration "
                     f"{summary['field_iteration']}), an approximate equilibrium")
    if summary.get("audited"):
        lines.append("fields audited (new best responses on fresh seeds): iterations "
                     + ", ".join(map(str, summary["audited"])) + "; a gain is the largest "
                     "that any search or audit confirmed")
    lines.append("")
    for a, r in summary["agendas"].items():
        lines.append(f"{a}: wins {rate_text(r)} (fair {pc(r['fair'])}); deviation gain "
                     f"{gain_text(r)}")
    lines += ["", "Each game draws one planner per Agenda with these weights (every seat of "
              "that Agenda plays it).", "Play it: fbsim simulate --lineup THIS_FILE "
              f"--players {search.players}"]
    return lineup_to_toml(search.field(), lines)


def run_equilibrium(players: list[int], out: str | Path, seed: int = 0,
                    budget: Budget | None = None, rules: str | None = None,
                    sets: dict | None = None, client=None, progress=None, echo=None,
                    force: bool = False) -> dict:
    """Search every table size; write OUT/pN.toml per size and OUT/summary.json (merged
    with the sizes already there). Returns {"players": {n: summary}}."""
    out = Path(out)
    budget = budget or Budget()
    doc = {"players": {}}
    for n in players:
        if not 3 <= n <= 6:
            raise UsageError(f"--players: table sizes are 3 to 6, got {n}")
        s = Search(n, out, seed, budget, rules, sets or {}, client, progress, echo, force)
        summary = s.run()
        write_text(out / f"p{n}.toml", field_file_text(s, summary))
        doc = publish(out, n, summary)
        write_summary_md(out, doc)
    return doc


def summary_md_text(doc: dict) -> str:
    """OUT/summary.md's text: the summary in words and numbers, per table size."""
    lines = ["# Balance at a team equilibrium (every seat of an Agenda one player)", "",
             "Found by `fbsim equilibrium` (docs/strong-play.md: a PSRO-style search over the "
             "`planner` bot's strategies, one population per Agenda). Win rates are those of "
             "the field (the mixture) on a fresh seed; the deviation gain is the best response "
             "found against the field minus the Agenda's win rate in it (paired, same games); "
             "95% intervals in brackets. An Agenda's fair share is its share of the seats "
             "(`seat_share`) times the share of games that somebody wins (a game that "
             "everyone loses has no winner to share). The fields are `pN.toml`; every number "
             "is in `summary.json`.", "",
             "| players | Agenda | wins | fair share | deviation gain | population gain "
             "(payoff table) | strategies mixed |",
             "|---|---|---|---|---|---|---|"]
    for n, s in doc["players"].items():
        for a, r in s["agendas"].items():
            pop = r.get("population_gain")
            pop = "-" if pop is None else f"{100 * pop:+.1f} points"
            lines.append(f"| {n} | {a} | {rate_text(r)} | {pc(r['fair'])} | {gain_text(r)} "
                         f"| {pop} | {sum(1 for w in s['mixture'][a] if w > 0)} |")
    if not all(s["converged"] for s in doc["players"].values()):
        lines += ["", "Where the search did not converge, the field is the least exploitable "
                  "one it found (its iteration in the table below), an approximate equilibrium "
                  "whose deviation gains are the ones shown: the largest that the search or an "
                  "audit of the field (new best responses on fresh seeds) confirmed. The "
                  "population gain is what the population's strongest strategy wins over the "
                  "Agenda's mixture against the field in the payoff table (on the table's "
                  "games, not confirmed); the least exploitable field is the one whose larger "
                  "of the two figures is smallest."]
    lines += ["", "| players | iterations | field of iteration | audited | games | converged | "
              "win rates moved (last three iterations) | collapse | everyone loses | "
              "accusation accuracy |", "|---|---|---|---|---|---|---|---|---|---|"]
    for n, s in doc["players"].items():
        acc = s["accusation_accuracy"]
        audited = ", ".join(map(str, s.get("audited", []))) or "-"
        lines.append(f"| {n} | {s['iterations']} | {s['field_iteration']} | {audited} | "
                     f"{s['games']:,} | "
                     f"{'yes' if s['converged'] else 'no'} | "
                     f"{100 * max(s['last_three_move'].values()):.1f} points | "
                     f"{pc(s['collapse']['rate'])} | {pc(s['everyone_loses']['rate'])} | "
                     f"{rate_text(acc, 'rate')} |")
    lines += ["", "Agenda leakage: how often the public-evidence observer names the holder of "
              "each Agenda correctly after rounds 1, 3, 6 and 8 (games still running with the "
              "Agenda dealt), and in brackets chance on the same games.", "",
              "| players | Agenda | round 1 | round 3 | round 6 | round 8 |",
              "|---|---|---|---|---|---|"]
    for n, s in doc["players"].items():
        for a, v in s["leakage"].items():
            by = v["by_round"]
            cells = [f"{pc(by[r][0])} ({pc(by[r][3])})" if r < len(by) else "-"
                     for r in (0, 2, 5, 7)]
            lines.append(f"| {n} | {a} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_summary_md(out: Path, doc: dict) -> Path:
    """OUT/summary.md (`summary_md_text`)."""
    path = Path(out) / "summary.md"
    path.write_text(summary_md_text(doc))
    return path


def format_summary(players: int, s: dict) -> str:
    moved = max(s["last_three_move"].values())
    lines = [f"{players} players: {s['iterations']} iterations, {s['games']:,} games; "
             f"converged: {'yes' if s['converged'] else 'no'} (tolerance "
             f"{100 * s['tolerance']:.0f} points; win rates moved {100 * moved:.1f} points "
             "over the last three iterations)" + ("" if s["converged"] else
                                                  f"; the least exploitable field found: "
                                                  f"iteration {s['field_iteration']}")
             + (f"; audited: iterations {', '.join(map(str, s['audited']))}"
                if s.get("audited") else "")]
    for a, r in s["agendas"].items():
        lines.append(f"  {a:<16} wins {rate_text(r)}, fair {pc(r['fair'])}; deviation gain "
                     f"{gain_text(r)}; mixture of {sum(1 for w in s['mixture'][a] if w > 0)}")
    lines.append(f"  collapse {rate_text(s['collapse'], 'rate')}; everyone loses "
                 f"{rate_text(s['everyone_loses'], 'rate')}; accusation accuracy "
                 f"{rate_text(s['accusation_accuracy'], 'rate')} of cornered players were "
                 "Accelerationists")
    lines.append("  Agenda leakage (the public-evidence observer names the seat correctly), "
                 "after rounds 1 / 3 / last played: " + "; ".join(
                     f"{a} " + " / ".join(pc(x[0]) for x in (v["by_round"][0],
                                                            v["by_round"][min(2, len(
                                                                v["by_round"]) - 1)],
                                                            v["by_round"][-1]))
                     + f" (chance {pc(v['chance'])})" for a, v in s["leakage"].items()))
    return "\n".join(lines)
