"""The trainer: a symmetric equilibrium of the game as played, one seat at a time.

Firebreak is won by one player (R-E3, R-E4). A strategy maps the Agenda a player is dealt to a
planner; in the game as played every seat draws its own planner from its Agenda's mixture,
independently of the other seats (the field's `draw = "seat"`). The search is population
based, in the manner of PSRO (Lanctot et al. 2017), with its three parts apart as there:

- the **meta-solver** (`metasolver`): each iteration moves the mixture over the populations
  by `meta_steps` steps of smooth fictitious play, each on freshly simulated single-seat
  payoffs of every strategy of the populations against the current mixture;
- the **oracle** (`oracle`): for each Agenda, the planner that wins most often for one seat
  deviating from that field (rotated over the seats), searched in the planner's whole space
  from several starts;
- the **confirmation**: the field and the three best responses on fresh games, each gain
  paired game by game with the field (`fbsim.experiments.search.deviation`).

A best response whose gain (upper end of its 95% interval) exceeds `tolerance` joins its
population (the meta-solver's next steps give it its share). Once an iteration confirms no
gain above the tolerance, its field is **audited**: new best responses on fresh seeds from
more starts, one seat and every seat of the Agenda (the team deviation, reported beside
it), confirmed on fresh games (`audit_games`). A field whose audit also finds no single-seat
gain above the tolerance is the answer (converged); an audit that finds one adds it to
the population and the search goes on. A search that runs out of iterations answers with
its least exploitable field (the lowest largest confirmed gain), audited, and says that it
did not converge.

Out of the family, the searcher audits the answer (`fbsim.experiments.search.searcher`); where
it gains, its departures are **distilled** into the field's tables (`distill`, expert
iteration) and the search goes on from the distilled field: a new phase, whose own iterations
and audits alone can answer (`State.phase_start`).

Every seed comes from `seeds.seed_of`; the state (`state.State`) is saved after every step.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from fbsim import jsonfile
from fbsim.errors import UsageError, cut
from fbsim.experiments.search import deviation
from fbsim.experiments.search.deviation import Deviant, evaluate
from fbsim.experiments.search.equilibrium import metasolver
from fbsim.experiments.search.equilibrium.fields import (
    STARTING_POPULATIONS,
    check_dealt,
    field_lineup,
    planner_params,
)
from fbsim.experiments.search.equilibrium.oracle import (
    Effort,
    Found,
    best_response,
    start_candidates,
)
from fbsim.experiments.search.equilibrium.seeds import seed_of
from fbsim.experiments.search.equilibrium.state import (
    RESUME_WAY_OUT,
    STATE_VERSION,
    Audit,
    Iteration,
    Response,
    State,
    check_state,
    clear_temporaries,
)
from fbsim.game import layout as L
from fbsim.lineup import Entry, Lineup
from fbsim.policies.field import COMPONENTS, component_params

AGENDAS = L.AGENDA_NAMES
DRAW = "seat"
# budget a saved search may be resumed with, changed
RESUMABLE = ("iterations", "audits", "starts", "audit_starts", "distill")

@dataclass(frozen=True)
class Budget:
    """Games are per seat range (`fbsim.experiments.search.deviation.evaluate`): a single
    seat's deviant plays `players` ranges of them."""

    meta_games: int = 1_000  # each strategy of the populations, each meta step
    meta_steps: int = 16  # smooth fictitious play's steps per iteration
    beta: float = 100.0  # its softmax's sharpness, per unit of win rate
    memory: int = 4  # the previous field counts as memory + 1 of an iteration's steps
    generations: int = 8  # of each best-response search
    population: int = 12  # candidates per generation
    screen_games: int = 1_000  # each start candidate, once
    search_games: int = 1_500  # each candidate of a generation
    select_games: int = 6_000  # each finalist
    confirm_games: int = 20_000  # the field and each best response, every iteration
    audit_games: int = 40_000  # the field and each audit's deviants
    iterations: int = 30  # at most
    starts: int = 3  # searched from, of the screened candidates (the best ones)
    audit_starts: int = 4  # the same in an audit
    audits: int = 3  # at most
    tolerance: float = 0.03  # single-seat gain (upper end of its 95% interval) that stops
    distill: int = 0  # distillations of the searcher's departures, at most (`distill`)
    # the share of a component's weight its distilled copy takes: a conservative step of
    # policy iteration (Kakade and Langford 2002), the rest of the table answering the old
    distill_share: float = 0.5

    def __post_init__(self):
        for name in ("meta_games", "screen_games", "search_games", "select_games",
                     "confirm_games", "audit_games"):
            if getattr(self, name) < 100:
                raise UsageError(f"--{name.replace('_', '-')}: at least 100 games, got "
                                 f"{getattr(self, name)}")
        for name, hi in (("iterations", 99), ("meta_steps", 50), ("generations", 99),
                         ("starts", 8), ("audit_starts", 8)):
            if not 1 <= getattr(self, name) <= hi:
                raise UsageError(f"--{name.replace('_', '-')}: 1 to {hi}, got "
                                 f"{getattr(self, name)}")
        # (the bounds the command line puts on these, for a rules-search spec's budget too)
        if self.population < 2:
            raise UsageError(f"--population: at least 2 candidates, got {self.population}")
        if not 0 <= self.audits <= 10:
            raise UsageError(f"--audits: 0 to 10, got {self.audits}")
        if not 0 <= self.tolerance <= 1:
            raise UsageError(f"--tolerance: 0 to 100 points, got {100 * self.tolerance:g}")
        if not 0 <= self.distill <= 20:
            raise UsageError(f"--distill: 0 to 20, got {self.distill}")
        if not 0 < self.distill_share <= 1:
            raise UsageError(f"--distill-share: above 0 and at most 1, got "
                             f"{self.distill_share}")

    def effort(self, audit: bool) -> Effort:
        return Effort(starts=self.audit_starts if audit else self.starts,
                      generations=self.generations, population=self.population,
                      screen_games=self.screen_games, search_games=self.search_games,
                      select_games=self.select_games)


class SeatSearch:
    """One table size's search; its state lives in OUT/pN/state.json."""

    def __init__(self, players: int, out: Path, seed: int, budget: Budget,
                 rules: str | None, sets: dict, client=None, echo=None, force: bool = False,
                 start_from: str | Path | None = None):
        """`start_from`: a finished search's folder (OUT of an earlier `fbsim equilibrium`):
        a warm start from the field it answered with at this table size and its populations
        (`warm_start`), e.g. to solve the game again under rules a little changed."""
        self.players, self.seed, self.budget = players, seed, budget
        self.client, self.echo = client, echo
        self.dir = Path(out) / f"p{players}"
        self.rules_file, self.sets = rules, dict(sets)
        kept = {k: v for k, v in asdict(budget).items() if k not in RESUMABLE}
        self.config = {"version": STATE_VERSION, "draw": DRAW, "players": players,
                       "seed": seed, "budget": kept, "rules": rules, "set": dict(sets)}
        warm = None
        if start_from is not None:
            warm = warm_start(Path(start_from), players)
            self.config["from"] = {"folder": str(start_from), "digest": warm[2]}
        path = self.dir / "state.json"
        if path.is_symlink() and not path.exists() and not force:
            raise UsageError(f"{path}: a link to nothing in the state's place; restore the "
                             "state it named, or run again with --force to start the search "
                             "over")
        if path.exists() and not force:  # (a damaged state refused before any change)
            self.state = State.load(path, self.config)
            self._check_pending_audit(path)
        elif warm is not None:
            self.state = State(self.config, warm[0], warm[1])
        else:
            pops = {a: [planner_params(x) for x in STARTING_POPULATIONS[a]] for a in AGENDAS}
            self.state = State(self.config, pops,
                               {a: [1.0 / len(p)] * len(p) for a, p in pops.items()})
        clear_temporaries(self.dir)  # (a killed run's, a full disk's)
        self.rules = self._rules()

    def _check_pending_audit(self, path: Path) -> None:
        """An audit under way (a killed run's) is finished on resume only where it is one
        the search would start: of an iteration not yet audited, within --audits."""
        st, k = self.state, self.state.pending.get("audit")
        if k is None:
            return
        done = sum(1 for a in st.audits if a.iteration >= st.phase_start())
        why = (f"iteration {k} is audited already" if st.audit_of(k) is not None else
               f"the phase has {done} audits and --audits allows {self.budget.audits}: give "
               f"--audits {done + 1} or more to finish it" if done >= self.budget.audits
               else None)
        if why is not None:
            raise UsageError(f"{path}: pending.audit: an audit under way that this search "
                             f"would not play ({why}); {RESUME_WAY_OUT}")

    def _rules(self):
        from fbsim.rules import load_rules, nest

        rules = load_rules(self.rules_file, overrides=nest(self.sets),
                           overrides_source="--set", bots={}, players=self.players)
        check_dealt(rules)
        return rules

    def save(self) -> None:
        self.state.save(self.dir / "state.json")

    def say(self, text: str) -> None:
        if self.echo:
            self.echo(f"  {self.players} players: {text}")

    def seed_of(self, stream: str, iteration: int = 0, agenda: str | None = None,
                start: int = 0, step: int = 0) -> int:
        a = 0 if agenda is None else AGENDAS.index(agenda) + 1
        return seed_of(self.seed, self.players, stream, iteration, a, start, step)

    def field(self, mix: dict[str, list[float]]) -> Lineup:
        """The field a mixture plays (`metasolver.prune`)."""
        return field_lineup(self.state.populations, played(mix), DRAW)

    # ------------------------------------------------------------------ steps

    def meta_step(self, it: int, k: int, mix: dict) -> tuple[dict, dict, dict, int]:
        """One step of smooth fictitious play: every strategy of the populations against the
        field of `mix`: (the new mixture, each strategy's payoff, each Agenda's meta regret,
        the games played)."""
        pops, b = self.state.populations, self.budget
        devs = [Deviant(a, Entry.make("planner", s)) for a in AGENDAS for s in pops[a]]
        ev = evaluate(self.rules, self.field(mix), devs, self.seed_of("meta", it, step=k),
                      b.meta_games, self.client)
        rates = iter(g.rate for g in ev.gains)
        u = {a: np.array([next(rates) for _ in pops[a]]) for a in AGENDAS}
        new, regret = {}, {}
        for a in AGENDAS:
            x = metasolver.grow(mix[a], len(pops[a]))
            regret[a] = metasolver.regret(metasolver.prune(x), u[a])
            new[a] = [float(v) for v in metasolver.step(x, u[a], b.beta, k, b.memory)]
        return new, {a: [float(v) for v in u[a]] for a in AGENDAS}, regret, ev.games

    def search(self, stream: str, it: int, agenda: str, field: Lineup, payoffs: dict | None,
               previous: dict | None, mode: str, audit: bool) -> Found:
        """A best response of `agenda` against `field` (`oracle.best_response`): one seat or
        the team (`mode`), its seeds in the streams `stream` + "search" / "select", its
        screen's candidates the population's strongest by `payoffs`, the field's components
        and their moves, the `previous` best response and the oracle's own starts."""
        pops = self.state.populations
        strongest = None
        if payoffs is not None:
            strongest = pops[agenda][int(np.argmax(payoffs[agenda]))]
        comps = component_params(field.by_agenda[agenda].as_dict())
        cands = start_candidates(agenda, comps, strongest, previous)
        stage_streams = {"screen": stream + "search", "search": stream + "search",
                         "select": stream + "select"}
        stage_step = {"screen": 500, "search": 0, "select": 0}

        def seeds(stage: str, start: int, step: int) -> int:
            return self.seed_of(stage_streams[stage], it, agenda, start + (
                100 if mode == deviation.TEAM else 0), step + stage_step[stage])

        self.say(f"{'audit of' if audit else 'iteration'} {it}: "
                 f"{'team' if mode == deviation.TEAM else 'single-seat'} best response of the "
                 f"{agenda}")
        return best_response(self.rules, field, agenda, cands, self.budget.effort(audit),
                             seeds, mode, self.client, self.say)

    def confirm(self, stream: str, it: int, field: Lineup, found: dict[str, dict],
                games: int) -> tuple[dict, dict[str, Response], int]:
        """The field and every best response in `found` ("seat" or "team" by Agenda) on
        fresh games: (the field's numbers, the responses with their gains, games)."""
        devs, keys = [], []
        for mode in (deviation.SEAT, deviation.TEAM):
            for a, r in found.get(mode, {}).items():
                devs.append(Deviant(a, Entry.make("planner", r["strategy"]), mode))
                keys.append((mode, a, r))
        self.say(f"{stream} {it}: confirming on fresh games ({games:,} per seat range)")
        ev = evaluate(self.rules, field, devs, self.seed_of(stream, it), games, self.client)
        out: dict = {deviation.SEAT: {}, deviation.TEAM: {}}
        for (mode, a, r), g in zip(keys, ev.gains, strict=True):
            out[mode][a] = Response(r["strategy"], r["start"], g.as_dict())
        return ev.field.as_dict(), out, ev.games

    def grow(self, found: dict[str, Response]) -> None:
        """Add the responses that gain more than the tolerance to the populations."""
        for a, r in found.items():
            if r.gain["ci"][1] > self.budget.tolerance and r.strategy not in \
                    self.state.populations[a]:
                self.state.populations[a].append(r.strategy)

    def iterate(self) -> Iteration:
        """One iteration (resumed from `pending` where it stopped)."""
        st, b = self.state, self.budget
        it = len(st.iterations)
        p = st.pending
        if p.get("iteration") != it:
            p.clear()
            p.update({"iteration": it, "mixture": st.mixture, "step": 0, "payoffs": None,
                      "regret": None, "responses": {}, "games": 0})
        while p["step"] < b.meta_steps:
            self.say(f"iteration {it}: meta-solver step {p['step'] + 1} of {b.meta_steps}")
            mix, payoffs, regret, games = self.meta_step(it, p["step"], p["mixture"])
            p.update({"mixture": mix, "payoffs": payoffs, "regret": regret,
                      "step": p["step"] + 1})
            st.games += games
            self.save()
        field = self.field(p["mixture"])
        previous = st.iterations[-1].responses if st.iterations else {}
        for a in AGENDAS:
            if a in p["responses"]:
                continue
            prev = previous[a].strategy if a in previous else None
            f = self.search("", it, a, field, p["payoffs"], prev, deviation.SEAT, audit=False)
            p["responses"][a] = {"strategy": f.strategy, "start": f.start}
            st.games += f.games
            self.save()
        stats, out, games = self.confirm("confirm", it, field,
                                         {deviation.SEAT: p["responses"]}, b.confirm_games)
        record = Iteration(it, {a: len(st.populations[a]) for a in AGENDAS}, p["mixture"],
                           p["payoffs"], p["regret"], stats, out[deviation.SEAT])
        st.games += games
        st.iterations.append(record)
        st.mixture = p["mixture"]
        st.pending = {}
        self.grow(record.responses)
        self.save()
        self.say(f"iteration {it}: " + gains_line(record.responses))
        return record

    def audit(self, k: int) -> Audit:
        """New best responses against iteration k's field on fresh seeds (single seat and
        team), confirmed on fresh games."""
        st = self.state
        rec = st.iterations[k]
        field = self.field(rec.mixture)
        p = st.pending
        if p.get("audit") != k:
            p.clear()
            p.update({"audit": k, "seat": {}, "team": {}})
        for mode in (deviation.SEAT, deviation.TEAM):
            for a in AGENDAS:
                if a in p[mode]:
                    continue
                f = self.search("audit-", k, a, field, rec.payoffs, rec.responses[a].strategy,
                                mode, audit=True)
                p[mode][a] = {"strategy": f.strategy, "start": f.start}
                st.games += f.games
                self.save()
        stats, out, games = self.confirm("audit-confirm", k, field,
                                         {deviation.SEAT: p["seat"], deviation.TEAM: p["team"]},
                                         self.budget.audit_games)
        audit = Audit(k, stats, out[deviation.SEAT], out[deviation.TEAM])
        st.games += games
        st.audits.append(audit)
        st.pending = {}
        self.save()
        self.say(f"audit of iteration {k}: single seat " + gains_line(audit.seat) + "; team "
                 + gains_line(audit.team))
        return audit

    def distill(self, seat_games: int, knobs, audit: dict | None = None, progress=None
                ) -> dict:
        """Expert iteration: the searcher's departures against the answer's field, each
        Agenda's in turn (`fbsim.experiments.search.distill`, on seeds of the stream
        "distill"), become a copy of each field component with its table changed; the copy
        joins the population and takes `distill_share` of its parent's weight (a
        conservative step: the whole table moving at once opens new gains to the searcher),
        and the search goes on from that
        mixture (a new phase: `State.phase_start`). `audit`: the searcher's gains that asked
        for it, kept in the record. Returns the record (`State.distillations`), kept only
        where a cell changed (`changed`)."""
        from fbsim.experiments.search.distill import components, distill

        st = self.state
        k = self.chosen()
        mix = played(st.iterations[k].mixture)
        field = self.field(st.iterations[k].mixture)
        phase = len(st.distillations)
        record = {"after": len(st.iterations), "field_iteration": k, "seat_games": seat_games,
                  "knobs": knobs.as_dict(), "searcher_before": audit or {}, "agendas": {}}
        new_mix = {}
        for a in AGENDAS:
            self.say(f"distillation {phase + 1}: the searcher's departures of the {a}")
            d = distill(self.rules, field, a, self.seed_of("distill", phase, a), seat_games,
                        knobs, belief_seed=self.seed_of("searcher-beliefs"), progress=progress)
            w = np.asarray(mix[a], dtype=float)
            order = [i for i in np.argsort(-w, kind="stable") if w[i] > 0][:COMPONENTS]
            weights = [0.0] * len(st.populations[a])
            for i in order:
                weights[i] = float(w[i])
            pop = st.populations[a]
            for j, (_, params) in enumerate(components(d.lineup.by_agenda[a])):
                i = order[j]
                new = planner_params(params)
                if new == pop[i]:
                    continue
                if new not in pop:
                    pop.append(new)
                    weights.append(0.0)
                idx = pop.index(new)
                moved = self.budget.distill_share * weights[i]
                weights[idx] += moved
                weights[i] -= moved
            total = sum(weights)
            new_mix[a] = [x / total for x in weights]
            record["agendas"][a] = {
                "changes": [c.as_dict() for c in d.changes], "seat_games": d.seat_games,
                "decisions": d.decisions, "departures": d.departures,
                "estimated_gain": d.gain()}
            self.say(f"distillation {phase + 1}: the {a}: {len(d.changes)} table cells "
                     f"changed (the searcher departed in {d.departures:,} of {d.decisions:,} "
                     f"commitments; estimated {100 * d.gain():+.1f} points)")
        record["changed"] = sum(len(x["changes"]) for x in record["agendas"].values())
        if record["changed"]:  # (else nothing to go on from: no new phase)
            st.mixture = new_mix
            st.pending = {}
            st.distillations.append(record)
            self.save()
        return record

    # ------------------------------------------------------------------ the loop

    def converged(self) -> int | None:
        """The last iteration of the current phase whose own search and audit found no
        single-seat gain above the tolerance, or None."""
        tol = self.budget.tolerance
        ok = [a.iteration for a in self.state.audits
              if a.iteration >= self.state.phase_start() and a.worst() <= tol
              and self.state.iterations[a.iteration].worst() <= tol]
        return max(ok) if ok else None

    answer: int | None = None  # set by the caller: the answer's iteration, whatever `chosen`

    def chosen(self) -> int:
        """The answer's iteration: `answer` where set, the converged field, else the current
        phase's least exploitable one (ties: the later)."""
        if self.answer is not None:
            return self.answer
        c = self.converged()
        if c is not None:
            return c
        its = range(self.state.phase_start(), len(self.state.iterations))
        return min(its, key=lambda k: (self.state.exploitability(k), -k))

    def run(self) -> None:
        """Iterate and audit until the current phase converges, or its iterations (and
        audits) run out."""
        st, b = self.state, self.budget
        start = st.phase_start()

        def audits() -> int:
            return sum(1 for a in st.audits if a.iteration >= start)

        if st.pending.get("audit") is not None:
            self.audit(st.pending["audit"])
        done = len(st.iterations) - start
        if done > b.iterations:  # (--iterations is not part of the search's settings)
            self.say(f"the search here already ran {done} iterations, more than --iterations "
                     f"{b.iterations}: its answer stands (--force starts it over)")
        while self.converged() is None and len(st.iterations) - start < b.iterations:
            rec = self.iterate()
            if rec.worst() <= b.tolerance and audits() < b.audits:
                audit = self.audit(rec.iteration)
                self.grow(audit.seat)
        while self.converged() is None and audits() < b.audits and \
                st.audit_of(self.chosen()) is None:
            self.audit(self.chosen())


def warm_start(folder: Path, players: int) -> tuple[dict, dict, str]:
    """(populations, mixture, digest) of the field that the single-seat search in `folder`
    answered with at this table size (its summary's `field_iteration`): the search goes on
    from there, every strategy it had found kept. UsageError, naming the file, when there is
    none to start from."""
    import hashlib
    import json

    where = folder / "summary.json"
    try:
        summary = jsonfile.read(where)["players"][str(players)]
        if summary.get("draw") != DRAW:
            raise UsageError(f"--from {folder}: its {players}-player field was not solved "
                             "one seat at a time (draw = seat); start from a single-seat "
                             "search")
        where = folder / f"p{players}" / "state.json"
        doc = jsonfile.read(where)
        check_state(doc, where, "restore the file, or start from another folder")
        pops = {a: [planner_params(x) for x in doc["populations"][a]] for a in AGENDAS}
        k = summary["field_iteration"]
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(doc["iterations"]):
            raise UsageError(f"--from {folder}: summary.json: players.{players}.field_iteration: "
                             f"expected an iteration of its search (0 to "
                             f"{len(doc['iterations']) - 1}), got {k!r}")
        mix = doc["iterations"][k]["mixture"]
        mix = {a: [float(v) for v in metasolver.grow(mix[a], len(pops[a]))] for a in AGENDAS}
    except UsageError:
        raise
    except (OSError, ValueError, KeyError, IndexError, TypeError, AttributeError) as e:
        raise UsageError(f"--from {folder}: no finished {players}-player search to start "
                         f"from ({where}: {type(e).__name__}: {cut(str(e))})") from None
    digest = hashlib.sha256(json.dumps([pops, mix], sort_keys=True).encode()).hexdigest()
    return pops, mix, digest[:16]


def played(mix: dict[str, list[float]]) -> dict[str, list[float]]:
    """The mixtures as the field plays them (`metasolver.prune`)."""
    return {a: [float(v) for v in metasolver.prune(x)] for a, x in mix.items()}


def gains_line(found: dict[str, Response]) -> str:
    """Each Agenda's deviation gain and the upper end of its interval, in points."""
    return "deviation gains " + ", ".join(
        f"{a} {100 * r.gain['gain']:+.1f} (<= {100 * r.gain['ci'][1]:+.1f})"
        for a, r in found.items())

