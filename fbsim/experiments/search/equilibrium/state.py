"""The single-seat search's state: typed records, saved as JSON after every step.

`State` holds the populations (planner strategies per Agenda), the current mixture, one
`Iteration` per finished iteration, the `Audit`s of chosen fields, the games played, and the
finished parts of the iteration under way (`pending`), so that a search killed at any point
resumes where it stopped and plays, and counts, every game once.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import NoReturn

from fbsim import jsonfile
from fbsim.errors import UsageError, cut, shown
from fbsim.experiments.search.deviation import SEAT, TEAM
from fbsim.game import layout as L
from fbsim.inputs import Key, interval
from fbsim.policies.field import COMPONENTS
from fbsim.policies.planner import CAPITAL_BANDS, TABLE_BANDS

STATE_VERSION = 1
AGENDAS = L.AGENDA_NAMES


@dataclass
class Response:
    """A best response of one Agenda and its confirmed gain (`deviation.Gain.as_dict`)."""

    strategy: dict
    start: str
    gain: dict


@dataclass
class Iteration:
    iteration: int
    population: dict[str, int]  # the populations' sizes when it was played
    mixture: dict[str, list[float]]  # over each population (the field: `trainer.played`)
    payoffs: dict[str, list[float]]  # the last meta step's, per strategy of the population
    meta_regret: dict[str, float]
    field: dict  # the field's numbers on the confirmation games (`deviation.FieldStats`)
    responses: dict[str, Response]

    def worst(self) -> float:
        """The largest seat deviation gain confirmed against this field (upper ends)."""
        return max(r.gain["ci"][1] for r in self.responses.values())


@dataclass
class Audit:
    """New best responses against one iteration's field, on fresh seeds, confirmed on fresh
    games: one seat (`seat`) and every seat of the Agenda (`team`)."""

    iteration: int
    field: dict
    seat: dict[str, Response]
    team: dict[str, Response]

    def worst(self) -> float:
        return max(r.gain["ci"][1] for r in self.seat.values())


@dataclass
class State:
    config: dict
    populations: dict[str, list[dict]]
    mixture: dict[str, list[float]]
    iterations: list[Iteration] = field(default_factory=list)
    audits: list[Audit] = field(default_factory=list)
    games: int = 0
    pending: dict = field(default_factory=dict)
    # the searcher's departures distilled into the field (`trainer.SeatSearch.distill`), in
    # order: each a `Distillation.as_dict()`; the search goes on from each
    distillations: list[dict] = field(default_factory=list)
    # the searcher's audits of answers (phase, field iteration, seed, budgets, gains): read
    # back when a finished search runs again, and the answer is the one it gains least against
    searched: list[dict] = field(default_factory=list)

    def phase_start(self) -> int:
        """The first iteration after the last distillation (0: none): the search's current
        phase, whose iterations alone can answer."""
        return self.distillations[-1]["after"] if self.distillations else 0

    def audit_of(self, k: int) -> Audit | None:
        return next((a for a in self.audits if a.iteration == k), None)

    def exploitability(self, k: int) -> float:
        """The largest seat deviation gain confirmed against iteration k's field, by its own
        search or an audit (upper ends of the intervals)."""
        a = self.audit_of(k)
        return max(self.iterations[k].worst(), a.worst() if a else -1.0)

    # ------------------------------------------------------------------ JSON

    def save(self, path: Path) -> None:
        write_json(path, asdict(self))

    @classmethod
    def load(cls, path: Path, config: dict) -> State:
        """The saved state, if its config is `config`; UsageError where it cannot be read, is
        damaged (`check_state`: one line naming the key) or is another search's."""
        try:
            doc = jsonfile.read(path)
            check_state(doc, path)
            saved = doc["config"]
            if saved != config:
                raise UsageError(f"{path}: a search with other settings is in this folder; "
                                 "give another --out, or --force to start it over")
            return cls(config=saved, populations=doc["populations"], mixture=doc["mixture"],
                       iterations=[_iteration(x) for x in doc["iterations"]],
                       audits=[_audit(x) for x in doc["audits"]], games=int(doc["games"]),
                       pending=doc.get("pending") or {},
                       distillations=list(doc.get("distillations") or []),
                       searched=list(doc.get("searched") or []))
        except UsageError:
            raise
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            raise UsageError(f"{path}: cannot resume the search ({type(e).__name__}: "
                             f"{cut(str(e))}); "
                             "run again with --force to start it over") from None


def _mixture_key() -> Key:
    weights = Key("list", "a list of weights (numbers >= 0)", item=Key("number", lo=0))
    return Key("table", keys={a: weights for a in AGENDAS}, known="agenda")


MAX_COUNT = 2**62  # games, iterations: what an int64 holds, with room (written back)

STATE_KEYS = {
    "config": Key("table", required=True),
    "populations": Key("table", required=True, known="agenda", keys={
        a: Key("list", "a list of planner strategies", size=(1, 10**6),
               item=Key("table")) for a in AGENDAS}),
    "mixture": Key("table", required=True, keys=_mixture_key().keys, known="agenda"),
    "iterations": Key("list", required=True, item=Key("table")),
    "audits": Key("list", required=True, item=Key("table")),
    "games": Key("count", required=True, lo=0, hi=MAX_COUNT),
    "pending": Key("table"),
    "distillations": Key("list", item=Key("table")),
    "searched": Key("list", item=Key("table")),
}


# The records inside a state, as the search writes them (integers as JSON writes them: an
# index of a list must be one, not 1.0).
def _needed(keys: dict[str, Key]) -> dict[str, Key]:
    return {k: replace(v, required=True) for k, v in keys.items()}


def _by_agenda(key: Key, every: bool = True) -> Key:
    """A table by Agenda of `key`s: every Agenda's where `every`."""
    return Key("table", keys={a: replace(key, required=every) for a in AGENDAS},
               known="agenda")


def _pair(item: Key) -> Key:
    return Key("list", "a pair [low, high]", size=(2, 2), item=item)


INDEX = Key("int", lo=0, hi=MAX_COUNT)
RATE = Key("number", lo=0, hi=1)  # a share of games
DIFF = Key("number", lo=-1, hi=1)  # a difference of two shares
TEXT = Key("text")
PLANNER = Key("table", "a planner strategy (its parameters)")
# a deviant's gain (`deviation.Gain.as_dict`)
GAIN_KEYS = _needed({"mode": Key("text", choices=(SEAT, TEAM)),
                     "agenda": Key("text", choices=AGENDAS), "rate": RATE, "base": RATE,
                     "gain": DIFF, "ci": _pair(DIFF), "changed": INDEX, "n": INDEX})
CHOSEN_KEYS = _needed({"strategy": PLANNER, "start": TEXT})  # a best response, unconfirmed
RESPONSE_KEYS = {**CHOSEN_KEYS, "gain": Key("table", required=True, keys=GAIN_KEYS)}
SHARE = Key("table", keys=_needed({"rate": RATE, "ci": _pair(RATE)}))
# the field's numbers (`deviation.FieldStats.as_dict`); a player's chance is null where the
# Agenda was never dealt, and its delta-method interval is not clipped to [0, 1]; searches
# before the summaries derived it kept the Agenda's win rate by the deal too (`win_rate`)
DEAL = Key("table", keys={**_needed({"games": INDEX, "player_win_rate": RATE}),
                          "win_rate": RATE})
FIELD_KEYS = _needed({
    "games": INDEX, "collapse": SHARE, "everyone_loses": SHARE,
    "agendas": _by_agenda(Key("table", keys=_needed({
        "win_rate": RATE, "ci": _pair(RATE), "player_win_rate": Key("any"),
        "player_win_ci": _pair(Key("any")),
        "by_deal": Key("table", "a table by the number of seats dealt", known="number of seats",
                       keys={str(k): DEAL for k in range(1, 7)}),
    })))})
ITERATION_KEYS = _needed({
    "iteration": INDEX, "population": _by_agenda(Key("int", lo=1)),
    "mixture": Key("table"),  # (checked as a mixture over the population then)
    "payoffs": _by_agenda(Key("list", "a list of win rates", item=RATE)),
    "meta_regret": _by_agenda(DIFF), "field": Key("table", keys=FIELD_KEYS),
    "responses": _by_agenda(Key("table", keys=RESPONSE_KEYS))})
AUDIT_KEYS = _needed({"iteration": INDEX, "field": Key("table", keys=FIELD_KEYS),
                      "seat": _by_agenda(Key("table", keys=RESPONSE_KEYS)),
                      "team": _by_agenda(Key("table", keys=RESPONSE_KEYS))})
# the iteration or audit under way (`trainer.SeatSearch.iterate`, `audit`): its finished parts
PENDING_ITERATION_KEYS = _needed({
    "iteration": INDEX, "mixture": Key("table"), "step": INDEX, "payoffs": Key("any"),
    "regret": Key("any"), "games": INDEX,
    "responses": _by_agenda(Key("table", keys=CHOSEN_KEYS), every=False)})
PENDING_AUDIT_KEYS = _needed({
    "audit": INDEX, "seat": _by_agenda(Key("table", keys=CHOSEN_KEYS), every=False),
    "team": _by_agenda(Key("table", keys=CHOSEN_KEYS), every=False)})
# the searcher's knobs (`searcher.Knobs.as_dict`, in the command line's ranges) and gains
# (`searcher.SearchGain.as_dict`), wherever they are kept (states, summaries, the ladder)
ROLLOUTS = Key("int", lo=1, hi=100_000)
KNOB_KEYS = _needed({"rollouts": ROLLOUTS, "step": Key("int", lo=1, hi=6),
                     "masked": Key("bool"), "margin": Key("number", lo=0, hi=1000),
                     "beliefs": Key("bool")})
KNOBS = Key("table", keys=KNOB_KEYS)
SEARCH_GAIN_KEYS = _needed({
    "agenda": Key("text", choices=AGENDAS), "rollouts": ROLLOUTS, "rate": RATE,
    "base": RATE, "gain": DIFF, "ci": interval(-1, 1), "n": INDEX, "changed": INDEX,
    "decisions": INDEX, "departures": INDEX})
SEARCHED_KEYS = _needed({
    "phase": INDEX, "field_iteration": INDEX, "seed": INDEX, "seat_games": INDEX,
    "knobs": KNOBS, "held": Key("bool"), "budgets": Key("list", item=Key("int", lo=1)),
    "worst": DIFF,
    "agendas": _by_agenda(Key("table", keys=_needed({
        "search_gain": DIFF, "search_gain_ci": _pair(DIFF), "search_held": Key("bool"),
        "search_gain_by_rollouts": Key("table", "a table by rollouts", known="budget"),
    })), every=False)})
CHANGE_KEYS = _needed({  # a table cell a distillation changed (`distill.Change.as_dict`)
    "component": Key("int", lo=0, hi=COMPONENTS - 1), "round": Key("int", lo=1),
    "band": Key("text", choices=TABLE_BANDS + CAPITAL_BANDS), "before": Key("int", lo=-1),
    "code": Key("int", lo=0), "decisions": INDEX, "gain": Key("number"),
    "z": Key("number")})
DISTILLATION_KEYS = _needed({
    "after": Key("int", lo=1), "field_iteration": INDEX, "seat_games": INDEX, "knobs": KNOBS,
    "changed": Key("int", lo=1),
    "searcher_before": _by_agenda(Key("table", keys=_needed({
        "search_gain": DIFF, "search_gain_ci": _pair(DIFF)})), every=False),
    "agendas": _by_agenda(Key("table", keys=_needed({
        "changes": Key("list", item=Key("table", keys=CHANGE_KEYS)), "seat_games": INDEX,
        "decisions": INDEX, "departures": INDEX, "estimated_gain": Key("number")})))})


RESUME_WAY_OUT = "restore the file, or run again with --force to start the search over"


MIXTURE_SUM = 1e-6  # how far a saved mixture's weights may sum from 1 (rounding)


def check_state_file(path: Path) -> None:
    """A saved state.json read and checked (`check_state`) as `State.load` reads it, without
    a config to compare: what a map checks of every start it will resume before any start
    runs. UsageError naming the file."""
    try:
        doc = jsonfile.read(path)
    except (OSError, ValueError) as e:
        raise UsageError(f"{path}: cannot resume the search ({type(e).__name__}: "
                         f"{cut(str(e))}); {RESUME_WAY_OUT}") from None
    check_state(doc, path)


def check_state(doc, path: Path, way_out: str = RESUME_WAY_OUT) -> None:
    """A saved state's shape and values (`fbsim.inputs`), everything it holds, before the
    search plays a game or writes a file: every key and type, every number finite and in
    its range, every planner strategy (the populations', every best response's) within
    the planner's parameter ranges, every mixture (the current one, the pending one, each
    iteration's) of weights >= 0 with a positive sum and no longer than its population then,
    and what ties the records together as the search writes them (the iterations in order,
    populations that only grow, audits and the searcher's of iterations there are,
    distillations in order). UsageError naming the file and the key, and the way out."""
    from fbsim.inputs import check, value, within
    from fbsim.lineup import Entry, ParamError

    def fail(key: str, message: str) -> NoReturn:
        raise UsageError(f"{path}: {key}: {message}; {way_out}")

    def table(where: str, x, keys: dict[str, Key]) -> dict:
        return value(x, Key("table", keys=keys), fail, where)

    def strategy(where: str, x) -> None:
        try:
            Entry.make("planner", x)
        except ParamError as e:
            fail(where, str(e))

    doc = check(doc, STATE_KEYS, fail)
    for a in AGENDAS:
        if a not in doc["populations"]:
            fail(f"populations.{a}", "missing: expected a list of planner strategies")
        for i, x in enumerate(doc["populations"][a]):
            strategy(f"populations.{a}[{i}]", x)
    sizes = {a: len(doc["populations"][a]) for a in AGENDAS}
    played = len(doc["iterations"])

    def mixture(where: str, mix, over: dict[str, int], then: str = "") -> None:
        """A mixture over populations of the sizes `over` (`then`: when they were)."""
        mix = value(mix, _mixture_key(), fail, where)
        for a in AGENDAS:
            w = mix.get(a)
            if w is None:
                fail(f"{where}.{a}", "missing: expected a list of weights")
            if not w or len(w) > over[a] or abs(sum(w) - 1) > MIXTURE_SUM:
                fail(f"{where}.{a}", f"expected 1 to {over[a]} weights (the population's "
                     f"size{then}) summing to 1, got {len(w)} summing to {sum(w):g}")

    def iteration_of(where: str, k: int, lo: int = 0, hi: int = played,
                     what: str = "an iteration of the search") -> None:
        """`k` an iteration in lo..hi - 1."""
        if not lo <= k < hi:
            fail(where, f"expected {what} ({lo} to {hi - 1}), got {k}" if lo < hi else
                 f"expected {what}, and there is none (the search has {played} iterations), "
                 f"got {k}")

    def responses(where: str, found: dict, mode: str) -> None:
        """Confirmed best responses by Agenda (`Response`), each of `mode`."""
        for a, r in found.items():
            strategy(f"{where}.{a}.strategy", r["strategy"])
            g = r["gain"]
            if g["mode"] != mode or g["agenda"] != a:
                fail(f"{where}.{a}.gain", f"expected the {mode} gain of the {a}, got the "
                     f"{g['mode']} gain of the {g['agenda']}")
            within(g["gain"], g["ci"], fail, f"{where}.{a}.gain.gain")
            if g["changed"] > g["n"]:
                fail(f"{where}.{a}.gain.changed", f"expected at most its {g['n']} games (n), "
                     f"got {g['changed']}")

    def field_numbers(where: str, stats: dict) -> None:
        """The field's numbers: what a table of keys cannot say (a chance that may be null;
        each rate within its interval)."""
        for key in ("collapse", "everyone_loses"):
            within(stats[key]["rate"], stats[key]["ci"], fail, f"{where}.{key}.rate")
        for a, s in stats["agendas"].items():
            within(s["win_rate"], s["ci"], fail, f"{where}.agendas.{a}.win_rate")
            dealt = sum(d["games"] for d in s["by_deal"].values())
            if dealt > stats["games"]:
                fail(f"{where}.games", f"expected at least the {dealt} games the {a} was "
                     f"dealt in (by_deal), got {stats['games']}")
            for key, x, lo in ((f"{a}.player_win_rate", s["player_win_rate"], 0),
                               (f"{a}.player_win_ci[0]", s["player_win_ci"][0], None),
                               (f"{a}.player_win_ci[1]", s["player_win_ci"][1], None)):
                if x is not None:
                    value(x, Key("number", "a number or null (never dealt)", lo=lo,
                                 hi=None if lo is None else 1), fail, f"{where}.agendas.{key}")

    def by_agenda_numbers(where: str, x, key: Key, length: dict[str, int] | None) -> None:
        """The pending step's payoffs (`length`: one per strategy) or regrets: null before
        the first step."""
        if x is None:
            return
        x = value(x, _by_agenda(key), fail, where)
        for a in AGENDAS:
            if length is not None and len(x[a]) != length[a]:
                fail(f"{where}.{a}", f"expected {length[a]} (one per strategy of the "
                     f"population), got {len(x[a])}: {shown(x[a])}")

    mixture("mixture", doc["mixture"], sizes)
    grown = {a: 1 for a in AGENDAS}  # (a population only grows)
    for k, x in enumerate(doc["iterations"]):
        where = f"iterations[{k}]"
        it = table(where, x, ITERATION_KEYS)
        if it["iteration"] != k:
            fail(f"{where}.iteration", f"expected {k} (its place in the list), got "
                 f"{it['iteration']}")
        pop = it["population"]
        for a in AGENDAS:
            if not grown[a] <= pop[a] <= sizes[a]:
                fail(f"{where}.population.{a}", f"expected {grown[a]} to {sizes[a]} (a "
                     "population only grows: from its size at the iteration before to its "
                     f"size now), got {pop[a]}")
            if len(it["payoffs"][a]) != pop[a]:
                fail(f"{where}.payoffs.{a}", f"expected {pop[a]} payoffs (one per strategy "
                     f"of the population then), got {len(it['payoffs'][a])}")
        grown = pop
        mixture(f"{where}.mixture", it["mixture"], pop, " when it was played")
        field_numbers(f"{where}.field", it["field"])
        responses(f"{where}.responses", it["responses"], SEAT)
    audited = set()
    for j, x in enumerate(doc["audits"]):
        where = f"audits[{j}]"
        au = table(where, x, AUDIT_KEYS)
        iteration_of(f"{where}.iteration", au["iteration"])
        if au["iteration"] in audited:
            fail(f"{where}.iteration", f"iteration {au['iteration']} is audited twice")
        audited.add(au["iteration"])
        field_numbers(f"{where}.field", au["field"])
        responses(f"{where}.seat", au["seat"], SEAT)
        responses(f"{where}.team", au["team"], TEAM)
    after = 0  # (the first iteration of the phase: `State.phase_start`)
    phases = [0]
    for j, x in enumerate(doc.get("distillations") or []):
        where = f"distillations[{j}]"
        d = table(where, x, DISTILLATION_KEYS)
        if not after < d["after"] <= played:
            fail(f"{where}.after", f"expected {after + 1} to {played} (the iterations before "
                 f"it: more than the distillation before it had), got {d['after']}"
                 if after < played else f"expected at most {played} (the iterations played) "
                 f"and more than {after} (the distillation before it), got {d['after']}")
        iteration_of(f"{where}.field_iteration", d["field_iteration"], after, d["after"],
                     "an iteration of the phase it distilled")
        changed = sum(len(g["changes"]) for g in d["agendas"].values())
        if d["changed"] != changed:
            fail(f"{where}.changed", f"expected {changed} (the changes it lists), got "
                 f"{d['changed']}")
        after = d["after"]
        phases.append(after)
    phases.append(played)
    for j, x in enumerate(doc.get("searched") or []):
        where = f"searched[{j}]"
        s = table(where, x, SEARCHED_KEYS)
        if s["phase"] > len(phases) - 2:
            fail(f"{where}.phase", f"expected 0 to {len(phases) - 2} (the distillations "
                 f"made), got {s['phase']}")
        iteration_of(f"{where}.field_iteration", s["field_iteration"], phases[s["phase"]],
                     phases[s["phase"] + 1], "an iteration of its phase")
        worst = None
        for a, g in s["agendas"].items():
            within(g["search_gain"], g["search_gain_ci"], fail, f"{where}.agendas.{a}.search_gain")
            for r, row in g["search_gain_by_rollouts"].items():
                w = f"{where}.agendas.{a}.search_gain_by_rollouts.{r}"
                row = table(w, row, SEARCH_GAIN_KEYS)
                if str(row["rollouts"]) != r or row["agenda"] != a:
                    fail(w, f"expected the gain of the {a} at {r} rollouts, got the "
                         f"{row['agenda']}'s at {row['rollouts']}")
                within(row["gain"], row["ci"], fail, f"{w}.gain")
                worst = row["ci"][1] if worst is None else max(worst, row["ci"][1])
        if worst is None:
            fail(f"{where}.agendas", "expected the searcher's gains of the Agendas, got none")
        if s["worst"] != worst:
            fail(f"{where}.worst", f"expected {worst!r} (the largest upper end of its "
                 f"gains), got {s['worst']!r}")
        held = all(g["search_held"] for g in s["agendas"].values())
        if s["held"] != held:
            fail(f"{where}.held", f"expected {str(held).lower()} (whether every Agenda's "
                 f"gains held), got {str(s['held']).lower()}")
    p = doc.get("pending") or {}
    if "audit" in p:
        p = table("pending", p, PENDING_AUDIT_KEYS)
        iteration_of("pending.audit", p["audit"])
        for mode in (SEAT, TEAM):
            for a, r in p[mode].items():
                strategy(f"pending.{mode}.{a}.strategy", r["strategy"])
    elif p:
        p = table("pending", p, PENDING_ITERATION_KEYS)
        if p["iteration"] != played:
            fail("pending.iteration", f"expected {played} (the iteration after the {played} "
                 f"finished), got {p['iteration']}")
        mixture("pending.mixture", p["mixture"], sizes)
        if p["step"] > 0 and (p["payoffs"] is None or p["regret"] is None):
            fail("pending", f"step {p['step']} is done, but its payoffs and regrets are "
                 "missing")
        by_agenda_numbers("pending.payoffs", p["payoffs"], Key("list", "a list of win rates",
                                                               item=RATE), sizes)
        by_agenda_numbers("pending.regret", p["regret"], DIFF, None)
        for a, r in p["responses"].items():
            strategy(f"pending.responses.{a}.strategy", r["strategy"])
    last = doc["iterations"][-1] if doc["iterations"] else None
    distilled = doc.get("distillations") or []
    if last is not None and not (distilled and distilled[-1]["after"] >= played):
        if doc["mixture"] != last["mixture"]:  # (what the search goes on from)
            fail("mixture", f"expected the mixture of the last iteration ({played - 1}), "
                 "which the search goes on from, got another one")


def responses(d: dict) -> dict[str, Response]:
    return {a: Response(**r) for a, r in d.items()}


def _iteration(d: dict) -> Iteration:
    return Iteration(**{**d, "responses": responses(d["responses"])})


def _audit(d: dict) -> Audit:
    return Audit(**{**d, "seat": responses(d["seat"]), "team": responses(d["team"])})


PUBLISHED_WAY_OUT = ("restore it, or remove it and run each table size it held again (a "
                     "finished search is read back from its state, not played again)")


def read_published(out: str | Path) -> dict:
    """OUT/summary.json as `publish` merges into it ({"players": {}} when there is none):
    strict JSON (no NaN), a table of table sizes "3" to "6", each a table. A damaged one is a
    UsageError naming it and the way out, read before any game (`check_published`) so that
    the sizes it holds are never lost to a silent rewrite."""
    path = Path(out) / "summary.json"
    if not path.exists() and not path.is_symlink():
        return {"players": {}}

    def refuse(message: str) -> NoReturn:
        raise UsageError(f"{path}: {message}; {PUBLISHED_WAY_OUT}")

    def constant(name: str):
        refuse(f"{name} is not a number JSON allows")

    try:
        doc = jsonfile.read(path, parse_constant=constant)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        refuse(f"not readable JSON ({type(e).__name__}: {cut(str(e))})")
    if not isinstance(doc, dict) or not isinstance(doc.get("players"), dict):
        refuse(f"expected a table with a table of table sizes under \"players\", got "
               f"{shown(doc)}")
    other = [k for k in doc if k != "players"]
    if other:
        refuse(f"{other[0]}: unknown key (a summary holds its table sizes under \"players\" "
               "only)")
    for n, x in doc["players"].items():
        if n not in {str(k) for k in range(3, 7)} or not isinstance(x, dict):
            refuse(f"players.{n}: expected a table size 3 to 6 holding a table, got "
                   f"{shown(x)}")
    return doc


def publish(out: Path, players: int, summary: dict) -> dict:
    """OUT/summary.json with this table size's summary, merged with the sizes already there
    (written whole, then moved into place); returns the document."""
    doc = read_published(out)
    path = Path(out) / "summary.json"
    doc["players"][str(players)] = summary
    doc["players"] = dict(sorted(doc["players"].items()))
    write_json(path, doc)
    return doc


def write_json(path: Path, doc) -> None:
    """`doc` as JSON at `path`: written whole beside it, then moved into place."""
    write_text(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")


def write_text(path: Path, text: str) -> None:
    """`text` at `path`: written whole beside it (`.NAME.tmp<pid>`, named after the writing
    process: `remove_stale_temporaries` clears a killed run's), then moved into place. A
    write that fails (a full disk) removes its temporary and raises OSError naming `path`;
    the file there is left as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.tmp{os.getpid()}"
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise OSError(e.errno, e.strerror or str(e), str(path)) from None


def clear_temporaries(folder: Path) -> None:
    """The temporaries that killed runs of `write_text` left in `folder` (their writer
    gone), removed."""
    from fbsim.experiments.run.lock import remove_stale_temporaries

    if Path(folder).is_dir():
        remove_stale_temporaries(folder)
