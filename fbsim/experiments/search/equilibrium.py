"""`fbsim equilibrium`: balance measured at an equilibrium of strong strategies.

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
   planner that wins most often against the field, all seats of that Agenda playing it.
4. **Confirmation, on a fresh seed.** The field and each best response against it are played
   on the same fresh games: the field's win rates and each Agenda's *deviation gain* (the best
   response's win rate minus the Agenda's in the field, paired game by game) with 95%
   intervals.
5. Add the best responses that gain more than `tolerance` (the upper end of the gain's
   interval) to the populations and iterate. Converged: no Agenda gains more than
   `tolerance`, and the field's win rates moved at most `stability` over the last three
   iterations (so at least two fresh searches after the last change found no gain).

Every sweep is a dataset under OUT/pN/ (resumed if killed, played on Dask with a client), and
the search's state (populations, payoff table, iterations) is saved to OUT/pN/state.json
after every step, so an interrupted search resumes where it stopped. Results: the field file
OUT/pN.toml (a lineup file: `simulate`, `sweep`, `exploit --field`, `report` and `tune` take
it) and OUT/summary.json.
"""

from __future__ import annotations

import itertools
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from fbsim.errors import UsageError
from fbsim.experiments.metrics.definitions import deck_share, fair_win_rate
from fbsim.experiments.metrics.stats import discordant_from_normal, paired_proportions
from fbsim.experiments.run.spec import SweepSpec
from fbsim.experiments.run.sweep import run_sweep
from fbsim.experiments.search.cem import Dim, cem
from fbsim.experiments.search.meta import payoffs, solve
from fbsim.game import layout as L
from fbsim.game.lineup import Entry, Lineup, lineup_to_toml
from fbsim.policies.field import COMPONENTS, field_params

STATE_VERSION = 1
AGENDAS = L.AGENDA_NAMES  # steward, opportunist, accelerationist: the roles, in order
CELL_SEED_OFFSET = 0  # the payoff table's games
SEARCH_SEED_OFFSET = 10_000  # best-response searches: + 100 * iteration + 10 * agenda + gen
CONFIRM_SEED_OFFSET = 500_000  # confirmations: + iteration (fresh games every time)
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

# the starting populations: planners close to the default bots, and the strategies that
# reverse the default bots' findings (a Steward that keeps its Capital, a Collapse-seeking
# Accelerationist)
SEEDS = {
    "steward": [
        {"aim": 504, "tolerance": 0, "chips": 6, "futile": 0, "buy": 1, "accuse": 1},
        {"aim": 504, "tolerance": 0, "chips": 6, "futile": 1, "buy": 0, "accuse": 4,
         "accuse_min": 3},
    ],
    "opportunist": [
        {"aim": 529.5, "tolerance": 4, "chips": 3, "buy": 4, "accuse": 3},
    ],
    "accelerationist": [
        {"aim": 700, "burn_floor": 3, "mask_burns": 1, "greed": 1, "buy": 3, "reserve": 10,
         "accuse": 2, "cornered": 2},
        {"aim": 700, "burn_floor": 3, "collapse": 1, "mask_burns": 1, "greed": 1, "buy": 3,
         "reserve": 10, "accuse": 2, "cornered": 2},
    ],
}


@dataclass(frozen=True)
class Budget:
    cell_games: int = 20_000  # games per cell of the payoff table
    generations: int = 8  # of each best-response search
    population: int = 12  # candidates per generation
    search_games: int = 5_000  # games per candidate and generation
    confirm_games: int = 100_000  # games of each confirmation (field and deviations)
    iterations: int = 12  # at most
    tolerance: float = 0.03  # deviation gain (upper end of its 95% interval) that stops
    stability: float = 0.03  # ... once the win rates moved no more over three iterations


def planner(params: dict) -> Entry:
    return Entry.make("planner", params)


def field_entry(strategies: list[dict], weights: np.ndarray) -> Entry:
    """A field entry mixing the strategies of positive weight (at most COMPONENTS, the
    heaviest, renormalised)."""
    order = [i for i in np.argsort(-weights, kind="stable") if weights[i] > 0][:COMPONENTS]
    total = float(sum(weights[i] for i in order))
    comps = [(round(float(weights[i]) / total, 6), planner(strategies[i]).as_dict())
             for i in order]
    return Entry.make("field", field_params(comps))


def field_lineup(pops: dict[str, list[dict]], mix: dict[str, list[float]]) -> Lineup:
    return Lineup({a: field_entry(pops[a], np.asarray(mix[a])) for a in AGENDAS})


class Search:
    """One table size's search; its state lives in OUT/pN/state.json."""

    def __init__(self, players: int, out: Path, seed: int, budget: Budget,
                 rules: str | None, sets: dict, client=None, progress=None, echo=None,
                 force: bool = False):
        self.players, self.seed, self.budget = players, seed, budget
        self.dir = Path(out) / f"p{players}"
        self.base = {"rules": rules, "set": dict(sets), "players": [players]}
        self.client, self.progress, self.echo, self.force = client, progress, echo, force
        # what the saved state must share to be resumed (more iterations may be asked)
        kept = {k: v for k, v in asdict(budget).items() if k != "iterations"}
        self.config = {"version": STATE_VERSION, "players": players, "seed": seed,
                       "budget": kept, "rules": rules, "set": dict(sets)}
        self.state = self._load()

    # ------------------------------------------------------------------ state

    def _load(self) -> dict:
        path = self.dir / "state.json"
        if path.exists() and not self.force:
            try:
                state = json.loads(path.read_text())
            except (OSError, ValueError) as e:
                raise UsageError(f"{path}: cannot resume the search ({e}); run again with "
                                 "--force to start it over") from None
            if state.get("config") != self.config:
                raise UsageError(f"{path}: a search with other settings is in this folder; "
                                 "give another --out, or --force to start it over")
            return state
        return {"config": self.config, "populations": {a: [planner(x).as_dict() for x in SEEDS[a]]
                                for a in AGENDAS},
                "cells": {}, "iterations": [], "games": 0, "extended": -1}

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

    def converged(self) -> bool:
        """No Agenda gains more than the tolerance by deviating (upper end of the interval),
        and the field's win rates moved at most `stability` over the last three iterations
        (so at least two fresh searches after the last change found no gain)."""
        its = self.state["iterations"]
        if len(its) < 3:
            return False
        gains = all(r["gain_ci"][1] <= self.budget.tolerance
                    for r in its[-1]["agendas"].values())
        return gains and max(self.moves().values()) <= self.budget.stability

    def finished(self) -> bool:
        return self.converged() or len(self.state["iterations"]) >= self.budget.iterations

    def _save(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        path = self.dir / "state.json"
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.state, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, path)

    def say(self, text: str) -> None:
        if self.echo:
            self.echo(f"  {self.players} players: {text}")

    # ------------------------------------------------------------------ sweeps

    def _sweep(self, name: str, seed: int, games: int, lineups: list[Lineup],
               outcomes: bool = False):
        points = [{"players": self.players, "lineup": lu.describe()} for lu in lineups]
        spec = SweepSpec(games=games, seed=seed, points=points, **self.base)
        res = run_sweep(spec, self.dir / name, client=self.client, progress=self.progress,
                        force=self.force)
        self.state["games"] += res.games_played
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
        W = np.zeros((3, *sizes))
        for k in keys:
            W[(slice(None), *map(int, k.split(",")))] = self.state["cells"][k]
        return W

    def best_response(self, it: int, agenda: str, field: Lineup, start: dict) -> dict:
        b = self.budget
        start = planner(start).as_dict()  # every parameter (the defaults where not given)
        dims = [Dim(d.name, d.lo, d.hi, d.integer, min(max(start[d.name], d.lo), d.hi))
                for d in DIMS]
        base = SEARCH_SEED_OFFSET + 100 * it + 10 * AGENDAS.index(agenda)

        def score(cands, gen):
            lineups = [Lineup({**field.by_agenda, agenda: planner(c)}) for c in cands]
            rates, outcomes = self._sweep(f"search-{it:02d}-{agenda}/gen-{gen:02d}",
                                          self.seed + base + gen, b.search_games, lineups,
                                          outcomes=True)
            legacy = outcomes.set_index("point")[f"legacy_mean_{agenda}"].fillna(0.0)
            # the win rate; the Agenda's mean Legacy only breaks ties (below one game's
            # worth), so a search whose candidates all win nothing still finds a slope
            return [float(self._rate(rates, j, agenda)["rate"])
                    + LEGACY_TIEBREAK * float(legacy.get(j, 0.0)) for j in range(len(cands))]

        found = cem(score, dims, generations=b.generations, population=b.population,
                    seed=self.seed * 7919 + self.players * 31 + base)
        return planner(found.best).as_dict()

    def iterate(self, it: int) -> dict:
        pops = self.state["populations"]
        W = self.fill_cells(it)
        its = self.state["iterations"]
        start = [np.asarray(its[-1]["mixture"][a]) for a in AGENDAS] if its else None
        weights, meta_regret = solve(W, start=start)
        mix = {a: [float(x) for x in w] for a, w in zip(AGENDAS, weights, strict=True)}
        field = field_lineup(pops, mix)
        # each Agenda's search starts from its strongest pure strategy against the mixture
        us = payoffs(W, weights)
        responses = {}
        for a, u in zip(AGENDAS, us, strict=True):
            self.say(f"iteration {it}: best response of the {a}")
            responses[a] = self.best_response(it, a, field, pops[a][int(np.argmax(u))])
        self.say(f"iteration {it}: confirming on a fresh seed "
                 f"({self.budget.confirm_games:,} games)")
        lineups = [field] + [Lineup({**field.by_agenda, a: planner(responses[a])})
                             for a in AGENDAS]
        rates = self._sweep(f"confirm-{it:02d}", self.seed + CONFIRM_SEED_OFFSET + it,
                            self.budget.confirm_games, lineups)
        rules = self._rules()
        agendas = {}
        for i, a in enumerate(AGENDAS):
            f, d = self._rate(rates, 0, a), self._rate(rates, i + 1, a)
            agendas[a] = {
                "win_rate": float(f["rate"]), "ci": [float(f["ci_low"]), float(f["ci_high"])],
                "fair": deck_share(rules, a), "deviation_gain": float(d["diff"]),
                "gain_ci": [float(d["diff_ci_low"]), float(d["diff_ci_high"])],
                "changed_games": int(d["changed_games"]),
                "best_response": responses[a]}
        record = {"iteration": it, "mixture": mix, "meta_regret": [float(x) for x in meta_regret],
                  "population": [len(pops[a]) for a in AGENDAS], "agendas": agendas,
                  "field": field.describe()}
        return record

    def _rules(self):
        from fbsim.rules import load_rules, nest

        return load_rules(self.base["rules"], overrides=nest(self.base["set"]),
                          overrides_source="--set", bots={}, players=self.players)

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
                + "; deviation gains " + ", ".join(
                f"{a} {100 * r['deviation_gain']:+.1f} (<= {100 * r['gain_ci'][1]:+.1f})"
                for a, r in record["agendas"].items()))
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
        else the least exploitable one found (lowest largest deviation gain, upper ends of
        the intervals; ties: the later)."""
        its = self.state["iterations"]
        if self.converged():
            return len(its) - 1
        worst = [max(r["gain_ci"][1] for r in i["agendas"].values()) for i in its]
        return min(range(len(its)), key=lambda k: (worst[k], -k))

    def summary(self) -> dict:
        its = self.state["iterations"]
        pick = its[self.chosen()]
        agendas = {a: {k: v for k, v in pick["agendas"][a].items() if k != "best_response"}
                   for a in AGENDAS}  # in the Agendas' order (a resumed state is sorted)
        measures = self.measures()
        for r in agendas.values():
            if "changed_games" not in r:  # a state recorded with normal intervals
                b, c = discordant_from_normal(r["deviation_gain"], *r["gain_ci"],
                                              self.budget.confirm_games)
                _, lo, hi, _ = paired_proportions(b, c, self.budget.confirm_games)
                r["gain_ci"], r["changed_games"] = [lo, hi], b + c
        for r in agendas.values():  # the seats' share, over the games somebody wins
            r["seat_share"] = r["fair"]
            r["fair"] = fair_win_rate(r["seat_share"], measures["everyone_loses"]["rate"])
        return {"agendas": agendas, "iterations": len(its), "field_iteration": self.chosen(),
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


def finite(x: float) -> float | None:
    return None if x != x else float(x)


def pc(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def rate_text(r: dict, key: str = "win_rate", ci: str = "ci") -> str:
    return f"{pc(r[key])} [{pc(r[ci][0])}, {pc(r[ci][1])}]"


def gain_text(r: dict) -> str:
    """The gain, its interval (three decimals where one would show +-0.0) and, where known, the
    games whose winner changed."""
    lo, hi = (100 * x for x in r["gain_ci"])
    digits = 3 if max(abs(lo), abs(hi)) < 0.1 else 1
    changed = (f"; {r['changed_games']:,} games changed" if r.get("changed_games") is not None
               else "")
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
    path = out / "summary.json"
    doc = {"players": {}}
    if path.exists():
        try:
            doc = json.loads(path.read_text())
        except ValueError:
            doc = {"players": {}}
    for n in players:
        if not 3 <= n <= 6:
            raise UsageError(f"--players: table sizes are 3 to 6, got {n}")
        s = Search(n, out, seed, budget, rules, sets or {}, client, progress, echo, force)
        summary = s.run()
        (out / f"p{n}.toml").write_text(field_file_text(s, summary))
        doc["players"][str(n)] = summary
        doc["players"] = dict(sorted(doc["players"].items()))
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, path)
        write_summary_md(out, doc)
    return doc


def write_summary_md(out: Path, doc: dict) -> Path:
    """OUT/summary.md: the summary in words and numbers, per table size."""
    lines = ["# Balance at an equilibrium of strong strategies", "",
             "Found by `fbsim equilibrium` (see the README: a PSRO-style search over the "
             "`planner` bot's strategies, one population per Agenda). Win rates are those of "
             "the field (the mixture) on a fresh seed; the deviation gain is the best response "
             "found against the field minus the Agenda's win rate in it (paired, same games); "
             "95% intervals in brackets. An Agenda's fair share is its share of the seats "
             "(`seat_share`) times the share of games that somebody wins (a game that "
             "everyone loses has no winner to share). The fields are `pN.toml`; every number "
             "is in `summary.json`.", "",
             "| players | Agenda | wins | fair share | deviation gain | strategies mixed |",
             "|---|---|---|---|---|---|"]
    for n, s in doc["players"].items():
        for a, r in s["agendas"].items():
            lines.append(f"| {n} | {a} | {rate_text(r)} | {pc(r['fair'])} | {gain_text(r)} "
                         f"| {sum(1 for w in s['mixture'][a] if w > 0)} |")
    if not all(s["converged"] for s in doc["players"].values()):
        lines += ["", "Where the search did not converge, the field is the least exploitable "
                  "one it found (its iteration in the table below), an approximate equilibrium "
                  "whose deviation gains are the ones shown."]
    lines += ["", "| players | iterations | field of iteration | games | converged | win rates "
              "moved (last three iterations) | collapse | everyone loses | accusation "
              "accuracy |", "|---|---|---|---|---|---|---|---|---|"]
    for n, s in doc["players"].items():
        acc = s["accusation_accuracy"]
        lines.append(f"| {n} | {s['iterations']} | {s['field_iteration']} | {s['games']:,} | "
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
    path = out / "summary.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def format_summary(players: int, s: dict) -> str:
    moved = max(s["last_three_move"].values())
    lines = [f"{players} players: {s['iterations']} iterations, {s['games']:,} games; "
             f"converged: {'yes' if s['converged'] else 'no'} (tolerance "
             f"{100 * s['tolerance']:.0f} points; win rates moved {100 * moved:.1f} points "
             "over the last three iterations)" + ("" if s["converged"] else
                                                  f"; the least exploitable field found: "
                                                  f"iteration {s['field_iteration']}")]
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
