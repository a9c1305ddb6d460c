"""The single-seat search's state: typed records, saved as JSON after every step.

`State` holds the populations (planner strategies per Agenda), the current mixture, one
`Iteration` per finished iteration, the `Audit`s of chosen fields, the games played, and the
finished parts of the iteration under way (`pending`), so that a search killed at any point
resumes where it stopped and plays, and counts, every game once.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fbsim.errors import UsageError, cut
from fbsim.game import layout as L
from fbsim.inputs import Key

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
            doc = json.loads(path.read_text())
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


STATE_KEYS = {
    "config": Key("table", required=True),
    "populations": Key("table", required=True, known="agenda", keys={
        a: Key("list", "a list of planner strategies", size=(1, 10**6),
               item=Key("table")) for a in AGENDAS}),
    "mixture": Key("table", required=True, keys=_mixture_key().keys, known="agenda"),
    "iterations": Key("list", required=True, item=Key("table")),
    "audits": Key("list", required=True, item=Key("table")),
    "games": Key("count", required=True, lo=0),
    "pending": Key("table"),
    "distillations": Key("list", item=Key("table")),
    "searched": Key("list", item=Key("table")),
}


RESUME_WAY_OUT = "restore the file, or run again with --force to start the search over"


def check_state(doc, path: Path, way_out: str = RESUME_WAY_OUT) -> None:
    """A saved state's shape and values (`fbsim.inputs`): every key and type, every planner
    strategy's parameters within their ranges, every mixture (the current one, each
    iteration's and the pending one) of weights >= 0 with a positive sum and no longer than
    its population. UsageError naming the file and the key, and the way out."""
    from fbsim.inputs import check, value
    from fbsim.lineup import Entry, ParamError

    def fail(key: str, message: str):
        raise UsageError(f"{path}: {key}: {message}; {way_out}")

    doc = check(doc, STATE_KEYS, fail)
    for a in AGENDAS:
        if a not in doc["populations"]:
            fail(f"populations.{a}", "missing: expected a list of planner strategies")
        for i, x in enumerate(doc["populations"][a]):
            try:
                Entry.make("planner", x)
            except ParamError as e:
                fail(f"populations.{a}[{i}]", str(e))
    sizes = {a: len(doc["populations"][a]) for a in AGENDAS}

    def mixture(where: str, mix) -> None:
        mix = value(mix, _mixture_key(), fail, where)
        for a in AGENDAS:
            w = mix.get(a)
            if w is None:
                fail(f"{where}.{a}", "missing: expected a list of weights")
            if not w or len(w) > sizes[a] or sum(w) <= 0:
                fail(f"{where}.{a}", f"expected 1 to {sizes[a]} weights (the population's "
                     f"size) with a positive sum, got {len(w)} summing to {sum(w):g}")

    mixture("mixture", doc["mixture"])
    for k, it in enumerate(doc["iterations"]):
        if "mixture" not in it:
            fail(f"iterations[{k}].mixture", "missing")
        mixture(f"iterations[{k}].mixture", it["mixture"])
    if (doc.get("pending") or {}).get("mixture") is not None:
        mixture("pending.mixture", doc["pending"]["mixture"])


def responses(d: dict) -> dict[str, Response]:
    return {a: Response(**r) for a, r in d.items()}


def _iteration(d: dict) -> Iteration:
    return Iteration(**{**d, "responses": responses(d["responses"])})


def _audit(d: dict) -> Audit:
    return Audit(**{**d, "seat": responses(d["seat"]), "team": responses(d["team"])})


def publish(out: Path, players: int, summary: dict) -> dict:
    """OUT/summary.json with this table size's summary, merged with the sizes already there
    (written whole, then moved into place); returns the document."""
    path = Path(out) / "summary.json"
    doc = {"players": {}}
    if path.exists():
        try:
            doc = json.loads(path.read_text())
        except ValueError:
            doc = {"players": {}}
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
