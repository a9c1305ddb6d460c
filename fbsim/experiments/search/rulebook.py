"""`fbsim tune --equilibrium`: which rules make Firebreak fair under strong play.

`fbsim tune` judges candidate rules by what fixed fields do under them; strong players would
adapt to new rules. Here every candidate rule set is judged at **its own single-seat
equilibrium** (`fbsim.experiments.search.equilibrium`, the game as played), re-solved for it
at every table size from a solved field (a warm start, `--from`): the candidate's loss is the
largest distance of any Agenda's `player_win_rate` (a player's chance to win, given the
Agenda dealt) from the fair share 1/players, at any table size, plus the distance of the
Collapse and everyone-loses rates from the bands the spec allows.

The objective is noisy and each evaluation is an equilibrium search per table size (its
cost: results/bench.md), so the candidates are proposed by Optuna's TPE sampler (Bergstra
et al. 2011), a sequential model-based optimiser made for expensive, noisy black boxes with
integer, continuous and categorical dimensions. The first trial plays the rules unchanged (the
reference every candidate is compared with), then the spec's `start` hunches, then `startup`
random trials, then TPE.

The best distinct trials (`finalists`) are then **re-solved from scratch** with the full
budget (no warm start, a fresh seed), audited with single-seat best responses on fresh seeds
(the equilibrium's own audit), and **confirmed on fresh games**: the field and each Agenda's
audited best response, paired game by game (`deviation.evaluate`). A finalist meets the
target at a table size when every Agenda's `player_win_rate` interval lies within
`fair_band` of 1/players, no single-seat deviation gains more than `gain` (upper end of its
interval), the search converged, and the Collapse and everyone-loses rates lie in their bands.
`found` is true when one finalist meets it at every table size; otherwise the closest
finalist is the answer, with why it falls short. Deviation gains found by a search are lower
bounds of what exists.

The spec (TOML; `fbsim tune --equilibrium` alone uses `DEFAULT_SPEC`):

    players = [3, 4, 5, 6]
    trials = 30                 # candidates, each solved at every table size
    startup = 10                # random trials before TPE models the loss
    finalists = 2               # re-solved from scratch, audited, confirmed
    seed = 0
    from = "../equilibrium"     # the solved fields trials start from (relative to the spec)
    confirm_games = 100000      # per seat range, per finalist and table size
    rules = "base.toml"         # optional

    [params]                    # [lo, hi] (integers when both are), or a list of choices
    "dial.collapse" = [560, 760]
    "accusation.rounds" = { choices = [[3, 6], [2, 4, 6]] }

    [[start]]                   # optional hunches tried first (other keys: the rules' own)
    "dial.collapse" = 700

    [target]
    fair_band = 0.05            # every Agenda's player_win_rate within 1/players +- this
    gain = 0.03                 # no single-seat deviation gains more (upper end of its CI)
    collapse = [0.0, 0.5]       # optional band
    everyone_loses = [0.0, 0.2] # optional band

    [budget.trial]              # the warm-started searches (`Budget` fields)
    iterations = 3
    [budget.final]              # the finalists' searches from scratch
    iterations = 30

Every range must hold the rules' own value (the first trial plays them). Everything is saved
as it is played: OUT/trials.json after every trial, each trial's and finalist's search in its
own folder (resumed where it stopped), so an interrupted search resumes and gives the same
bytes; the sampler's seed for trial k is derived from the seed and k, and its history is
rebuilt from trials.json, so a resumed search proposes what the uninterrupted one would.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import tomllib
import warnings
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from fbsim import jsonfile
from fbsim.errors import FbsimError, UsageError, cut, shown
from fbsim.experiments.run.spec import (
    BAND,
    PLAYERS,
    RULES_PATH,
    SEED,
    TABLE,
    SpecError,
    flatten,
    players_list,
    read_spec_file,
)
from fbsim.experiments.search.deviation import SEAT, Deviant, evaluate
from fbsim.experiments.search.equilibrium import run_equilibrium
from fbsim.experiments.search.equilibrium.fields import check_dealt
from fbsim.experiments.search.equilibrium.seeds import seed_of
from fbsim.experiments.search.equilibrium.state import clear_temporaries, write_json
from fbsim.experiments.search.equilibrium.trainer import AGENDAS, Budget, warm_start
from fbsim.game.layout import MAX_PLAYERS
from fbsim.inputs import Key, check, failing, interval, within
from fbsim.limits import MAX_GAMES
from fbsim.lineup import Entry, parse_lineup
from fbsim.rules import load_rules, nest

STATE_VERSION = 1
INVALID_LOSS = 1.0  # a candidate whose rules cannot be played at some table size
DEFAULT_FROM = "results/equilibrium"
# a trial: a short warm-started search, not audited (the finalists are)
TRIAL_BUDGET = Budget(iterations=3, audits=0, meta_steps=8, meta_games=500, generations=4,
                      population=8, screen_games=500, search_games=1_000, select_games=4_000,
                      confirm_games=10_000)

# The levers a designer reaches for, each range holding the rules' own value.
DEFAULT_SPEC = """\
players = [3, 4, 5, 6]
trials = 30
startup = 10
finalists = 2
seed = 0
confirm_games = 100000

[params]
"dial.collapse" = [560, 760]                 # the Collapse threshold (R-W4)
"jobs.burn_ppm" = [1, 4]                     # what each BURN adds (R-V2)
"scoring.collapse_min_capital" = [6, 40]     # the Capital a Collapse win needs (R-E3)
baseline_offset = [-4, 4]                    # every round's baseline (D1)
"decks.p3.steward" = [2, 3]                  # the Agenda decks per table size (D2)
"decks.p3.accelerationist" = [1, 2]
"decks.p4.steward" = [2, 4]
"decks.p4.accelerationist" = [1, 2]
"decks.p5.steward" = [3, 5]
"decks.p5.accelerationist" = [1, 2]
"decks.p6.steward" = [3, 5]
"decks.p6.accelerationist" = [1, 2]
"agendas.steward_base" = [2, 8]              # the Agenda bonuses (R-X1)
"agendas.opportunist_severe" = [5, 12]
"agendas.accelerationist_extreme" = [0, 6]
"agendas.accelerationist_other" = [-4, 0]
"assets.refinery.ppm" = [0, 2]               # the asset table (D3)
"assets.refinery.income" = [1, 4]
"assets.carbon-sink.ppm" = [-4, -1]
"accusation.pay_per_accuser" = [1, 6]        # Accusation pay (R-A4)
"accusation.rounds" = { choices = [[3, 6], [2, 4, 6], [2, 5, 7], [4, 7], [3, 5, 7]] }

[target]
fair_band = 0.05
gain = 0.03
everyone_loses = [0.0, 0.2]
"""


@dataclass(frozen=True)
class Lever:
    """One rules key searched: a range [lo, hi] (integers when both bounds are) or choices."""

    name: str
    lo: Any = None
    hi: Any = None
    choices: tuple = ()

    @property
    def integer(self) -> bool:
        return isinstance(self.lo, int) and isinstance(self.hi, int)

    def distribution(self):
        from optuna.distributions import (
            CategoricalDistribution,
            FloatDistribution,
            IntDistribution,
        )

        if self.choices:  # the sampler sees a choice by its index
            return CategoricalDistribution(list(range(len(self.choices))))
        if self.integer:
            return IntDistribution(self.lo, self.hi)
        return FloatDistribution(float(self.lo), float(self.hi))

    def value(self, raw):
        """The rules value of the sampler's `raw` value."""
        if self.choices:
            return self.choices[raw]
        return int(raw) if self.integer else float(raw)

    def raw(self, value):
        """The sampler's value of a rules value (None: outside the lever's range, or not a
        number for a range)."""
        if self.choices:
            return self.choices.index(value) if value in self.choices else None
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        if self.integer and not float(value).is_integer():  # (the sampler's are integers)
            return None
        return value if self.lo <= value <= self.hi else None

    def values(self) -> list:
        return list(self.choices) if self.choices else [self.lo, self.hi]


@dataclass
class RulebookSpec:
    levers: list[Lever]
    players: list[int] = field(default_factory=lambda: [3, 4, 5, 6])
    trials: int = 30
    startup: int = 10
    finalists: int = 2
    seed: int = 0
    rules: str | None = None
    start_from: str = DEFAULT_FROM
    confirm_games: int = 100_000
    starts: list[dict] = field(default_factory=list)
    fair_band: float = 0.05
    gain: float = 0.03
    collapse: tuple[float, float] | None = None
    everyone_loses: tuple[float, float] | None = None
    trial_budget: Budget = TRIAL_BUDGET
    final_budget: Budget = field(default_factory=Budget)

    def digest(self) -> str:
        """What the trials depend on (not the finalists' count or budget, nor the
        confirmation: those may change between runs of one search)."""
        kept = {k: v for k, v in asdict(self).items()
                if k not in ("finalists", "final_budget", "confirm_games", "trials")}
        return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()
                              ).hexdigest()[:16]


def load_rulebook_spec(path: str | Path | None) -> RulebookSpec:
    """The spec in `path`, or the default levers (`DEFAULT_SPEC`) when None."""
    if path is None:
        return rulebook_spec_from_dict(tomllib.loads(DEFAULT_SPEC), "the default levers")
    doc, where = read_spec_file(path, "tune spec")
    return rulebook_spec_from_dict(doc, where, Path(path).parent)


def _lever(name: str, v, where: str) -> Lever:
    if len(name) > 100 or not name.isprintable():
        raise SpecError(f"{where}: params.{cut(name)}: not a rules key (see `fbsim rules`)")
    if name.startswith("bots."):
        raise SpecError(f"{where}: params.{cut(name)}: a bot parameter is not a rule; the "
                        "equilibrium chooses the strategies")
    if isinstance(v, dict):
        ch = v.get("choices")
        if set(v) != {"choices"} or not isinstance(ch, list) or len(ch) < 2:
            raise SpecError(f"{where}: params.{name}: expected {{ choices = [a, b, ...] }} "
                            f"with at least two choices, got {shown(v)}")
        return Lever(name, choices=tuple(tuple(x) if isinstance(x, list) else x for x in ch))
    if (not isinstance(v, list) or len(v) != 2 or not all(
            isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
            for x in v)):
        raise SpecError(f"{where}: params.{name}: expected [lo, hi] or {{ choices = [...] }}, "
                        f"got {shown(v)}")
    if v[0] > v[1]:
        raise SpecError(f"{where}: params.{name}: the range {v} is empty")
    return Lever(name, v[0], v[1])


def _params(doc, where: str, prefix: str = "") -> list[Lever]:
    """[params], nested tables flattened to dotted keys; a { choices = [...] } table is one
    lever's value."""
    if not isinstance(doc, dict):
        raise SpecError(f"{where}: params: expected a table of rules keys, got {shown(doc)}")
    out = []
    for k, v in doc.items():
        if isinstance(v, dict) and "choices" not in v:
            out += _params(v, where, f"{prefix}{k}.")
        else:
            out.append(_lever(prefix + k, v, where))
    return out


def _budget_keys() -> dict[str, Key]:
    return {f.name: Key("count", lo=0, hi=MAX_GAMES) if f.type in (int, "int")
            else Key("number", lo=0) for f in fields(Budget)}


FRACTION = Key("number", lo=0, hi=1, open=True)
# A rules-search spec file's keys (`fbsim.inputs`).
RULEBOOK_FILE = {
    "players": PLAYERS, "trials": Key("count", lo=1, hi=10_000),
    "startup": Key("count", lo=0, hi=10_000), "finalists": Key("count", lo=1, hi=20),
    "seed": SEED, "rules": RULES_PATH, "from": Key("text", "the path of a folder of fields"),
    "confirm_games": Key("count", lo=100, hi=MAX_GAMES),
    "params": Key("table", "a table of rules keys and their ranges or choices"),
    "start": Key("list", "[[start]] tables of rules values", item=TABLE),
    "target": Key("table", keys={"fair_band": FRACTION, "gain": FRACTION, "collapse": BAND,
                                 "everyone_loses": BAND}),
    "budget": Key("table", keys={part: Key("table", keys=_budget_keys())
                                 for part in ("trial", "final")}),
}
KEYS = tuple(RULEBOOK_FILE)


def rulebook_spec_from_dict(doc: dict, where: str = "tune spec",
                            base_dir: Path | None = None) -> RulebookSpec:
    fail = failing(SpecError, where)
    doc = check(doc, RULEBOOK_FILE, fail)
    levers = _params(doc.get("params", {}), where)
    names = [lv.name for lv in levers]
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:  # ("dial.collapse" and [params.dial] collapse: one key)
        raise SpecError(f"{where}: params.{cut(twice)}: given twice (as a dotted key and in a "
                        "table, say); give each rules key once")
    if not levers:
        fail("params", "name at least one rule to search")
    s = RulebookSpec(levers=levers)
    if "players" in doc:
        try:
            s.players = players_list(doc["players"])
        except SpecError as e:
            raise SpecError(f"{where}: {e}") from None
    for k in ("trials", "startup", "finalists", "seed", "confirm_games"):
        if k in doc:
            setattr(s, k, doc[k])
    for k, attr in (("rules", "rules"), ("from", "start_from")):
        if k in doc:
            p = Path(doc[k])
            setattr(s, attr, str(p if p.is_absolute() or base_dir is None else base_dir / p))
    names = {lv.name: lv for lv in levers}
    for i, st in enumerate(doc.get("start", [])):
        flat = flatten(st)
        for k, v in flat.items():
            lv = names.get(k)
            if lv is None:
                fail(f"start[{i}].{cut(k)}", "not one of the params searched")
            v = tuple(v) if isinstance(v, list) else v
            if isinstance(v, bool) or lv.raw(v) is None:
                fail(f"start[{i}].{k}", f"{shown(v)} is outside its params range")
            flat[k] = v
        s.starts.append(flat)
    target = doc.get("target", {})
    for k in ("fair_band", "gain"):
        if k in target:
            setattr(s, k, target[k])
    for k in ("collapse", "everyone_loses"):
        if k in target:
            lo, hi = target[k]
            if lo > hi:
                fail(f"target.{k}", f"expected {BAND.wanted}, got {shown([lo, hi])}")
            setattr(s, k, (lo, hi))
    for k in ("finalists", "startup"):  # (more than there are trials would do nothing)
        if getattr(s, k) > s.trials:
            fail(k, f"expected at most trials ({s.trials}), got {getattr(s, k)}")
    for part, attr in (("trial", "trial_budget"), ("final", "final_budget")):
        try:
            setattr(s, attr, replace(getattr(s, attr), **doc.get("budget", {}).get(part, {})))
        except FbsimError as e:
            raise SpecError(f"{where}: budget.{part}: {e}") from None
        if getattr(s, attr).distill:  # (`run_equilibrium` refuses it: no searcher's audit)
            fail(f"budget.{part}.distill", "expected 0: the rules search runs no searcher's "
                 "audit, whose departures a distillation distils")
    return s


# ----------------------------------------------------------------------------- checks


def rule_value(rules, key: str):
    """The value of a dotted rules key (`decks.p4.steward`) in `rules`."""
    cur = rules
    for part in key.split("."):
        cur = cur[part] if isinstance(cur, dict) else getattr(cur, part.replace("-", "_"))
    return cur


def rules_for(spec: RulebookSpec, params: dict, players: int | None):
    """A candidate's rules (at one table size: every Agenda dealt, as its equilibrium
    needs)."""
    rules = load_rules(spec.rules, overrides=nest(_as_toml(params)),
                       overrides_source="tune spec params", bots={}, players=players)
    if players is not None:
        check_dealt(rules, "tune spec params")
    return rules


def _as_toml(params: dict) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}


def unchanged(spec: RulebookSpec) -> dict:
    """Every lever at the rules' own value (the first trial)."""
    rules = rules_for(spec, {}, None)
    out = {}
    for lv in spec.levers:
        try:
            v = rule_value(rules, lv.name)
        except (AttributeError, KeyError, TypeError):
            raise SpecError(f"tune spec: params.{lv.name}: not a rules key (see `fbsim rules`)"
                            ) from None
        v = tuple(v) if isinstance(v, list | tuple) else v
        if lv.raw(v) is None:
            raise SpecError(f"tune spec: params.{lv.name}: the rules' own value {shown(v)} is "
                            f"outside {shown(lv.values())} (the first trial plays the rules "
                            "unchanged)")
        out[lv.name] = v
    return out


def check_rulebook_spec(spec: RulebookSpec) -> None:
    """Before any game runs or any file is written: every lever's values are playable rules
    at every table size (each alone), the rules' own values lie in the ranges, and the
    solved fields to start from are there."""
    base = unchanged(spec)
    for lv in spec.levers:
        for v in lv.values():
            for n in spec.players:
                try:
                    rules_for(spec, {**base, lv.name: v}, n)
                except FbsimError as e:
                    raise SpecError(f"tune spec: params.{lv.name} = {shown(v)} at {n} "
                                    f"players: {e}") from None
    for n in spec.players:
        warm_start(Path(spec.start_from), n)


# ----------------------------------------------------------------------------- the loss


def _outside(rate: float, band: tuple[float, float] | None) -> float:
    if band is None:
        return 0.0
    return max(0.0, band[0] - rate, rate - band[1])


def measure(spec: RulebookSpec, players: int, s: dict) -> dict:
    """One table size's numbers from an equilibrium's summary, and its loss: the largest
    distance of an Agenda's player_win_rate from 1/players plus the distances of the Collapse
    and everyone-loses rates from their bands."""
    rates = {a: s["agendas"][a]["player_win_rate"] for a in AGENDAS}
    col, lose = s["collapse"]["rate"], s["everyone_loses"]["rate"]
    worst, loss = distance(spec, players, rates, col, lose)
    gains = [s["agendas"][a]["seat_gain_ci"][1] for a in AGENDAS]
    return {"loss": loss, "worst": worst, "player_win_rate": rates, "collapse": col,
            "everyone_loses": lose, "seat_gain_max": max(gains), "converged": s["converged"]}


def distance(spec: RulebookSpec, players: int, rates: dict, collapse: float,
             loses: float) -> tuple[float, float]:
    """(the largest distance of a player's chance from 1/players, an Agenda never dealt
    counting 1; the loss: that plus the Collapse and everyone-loses rates' distances from
    their bands)."""
    worst = max(1.0 if r is None else abs(r - 1 / players) for r in rates.values())
    return worst, worst + _outside(collapse, spec.collapse) + _outside(loses,
                                                                       spec.everyone_loses)


# ----------------------------------------------------------------------------- trials


def propose(spec: RulebookSpec, history: list[dict], number: int) -> dict:
    """Trial `number`'s rules values: the rules unchanged, then the spec's starts, then the
    sampler (random for `startup` trials, then TPE) given every earlier trial's loss."""
    base = unchanged(spec)
    if number == 0:
        return base
    if number <= len(spec.starts):
        return {**base, **spec.starts[number - 1]}
    import optuna
    from optuna.trial import create_trial

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    dists = {lv.name: lv.distribution() for lv in spec.levers}
    seed = seed_of(spec.seed, 0, "rulebook-sampler", number) % 2**32
    with warnings.catch_warnings():  # (multivariate TPE is marked experimental)
        warnings.simplefilter("ignore")
        sampler = optuna.samplers.TPESampler(
            seed=seed, n_startup_trials=len(spec.starts) + 1 + spec.startup,
            multivariate=True, group=False)
        study = optuna.create_study(direction="minimize", sampler=sampler)
        for rec in history:
            params = {lv.name: lv.raw(_value(rec["params"][lv.name])) for lv in spec.levers}
            study.add_trial(create_trial(params=params, distributions=dists,
                                         value=rec["loss"]))
        trial = study.ask(dists)
    return {lv.name: lv.value(trial.params[lv.name]) for lv in spec.levers}


def _value(v):
    return tuple(v) if isinstance(v, list) else v


def _why_invalid(spec: RulebookSpec, params: dict) -> str | None:
    for n in spec.players:
        try:
            rules_for(spec, params, n)
        except FbsimError as e:
            return f"{n} players: {e}"
    return None


def play_trial(spec: RulebookSpec, out: Path, number: int, params: dict, client=None,
               echo=None, force: bool = False) -> dict:
    """Solve the candidate's single-seat equilibrium at every table size (warm-started) and
    score it."""
    rec = {"number": number, "params": _as_toml(params), "folder": f"trials/{number:04d}"}
    why = _why_invalid(spec, params)
    if why is not None:
        return {**rec, "loss": INVALID_LOSS, "invalid": why, "games": 0, "sizes": {}}
    doc = run_equilibrium(spec.players, out / rec["folder"], seed=spec.seed,
                          budget=spec.trial_budget, rules=spec.rules, sets=_as_toml(params),
                          client=client, echo=echo, force=force, start_from=spec.start_from)
    sizes = {str(n): measure(spec, n, doc["players"][str(n)]) for n in spec.players}
    return {**rec, "loss": max(s["loss"] for s in sizes.values()), "invalid": None,
            "games": sum(doc["players"][str(n)]["games"] for n in spec.players),
            "sizes": sizes}


def changes(spec: RulebookSpec, params: dict) -> dict:
    """The levers a candidate moves from the rules' own values."""
    base = unchanged(spec)
    return {k: v for k, v in params.items() if _value(v) != base[k]}


def describe(params: dict) -> str:
    return ", ".join(f"{k} = {_toml_value(v)}" for k, v in params.items()) or "the rules unchanged"


def _toml_value(v) -> str:
    if isinstance(v, list | tuple):
        return "[" + ", ".join(map(str, v)) + "]"
    return f"{v:g}" if isinstance(v, float) else str(v)


# ----------------------------------------------------------------------------- finalists


def confirm_finalist(spec: RulebookSpec, folder: Path, index: int, doc: dict, client=None,
                     echo=None) -> dict:
    """Each table size's field and its Agendas' audited best responses on fresh games:
    what the finalist answers, whether it meets the target, and why not."""
    params = jsonfile.read(folder / "params.json")
    sizes, total = {}, 0
    for n in spec.players:
        s = doc["players"][str(n)]
        rules = rules_for(spec, params, n)
        field_lineup = parse_lineup(str(folder / f"p{n}.toml"), players=n, flag="field")
        devs = [Deviant(a, Entry.make("planner", s["agendas"][a]["seat_best_response"]), SEAT)
                for a in AGENDAS]
        if echo:
            echo(f"  finalist {index + 1}, {n} players: confirming on fresh games "
                 f"({spec.confirm_games:,} per seat range)")
        ev = evaluate(rules, field_lineup, devs, seed_of(spec.seed, n, "rulebook-confirm",
                                                         index), spec.confirm_games, client)
        total += ev.games
        stats = ev.field.as_dict()
        fair = 1 / n
        agendas, why = {}, []
        for a, g in zip(AGENDAS, ev.gains, strict=True):
            r = stats["agendas"][a]
            searched = s["agendas"][a]["seat_gain_ci"][1]
            gain = {"seat_deviation_gain": g.gain, "seat_gain_ci": g.ci,
                    "search_seat_gain_ci": s["agendas"][a]["seat_gain_ci"]}
            agendas[a] = {"player_win_rate": r["player_win_rate"],
                          "player_win_ci": r["player_win_ci"], **gain}
            lo, hi = r["player_win_ci"]
            if lo is None or lo < fair - spec.fair_band or hi > fair + spec.fair_band:
                why.append(f"{a} wins {_pc(r['player_win_rate'])} as a player, outside "
                           f"{_pc(fair)} +- {_pc(spec.fair_band)}")
            if max(g.ci[1], searched) > spec.gain:
                why.append(f"one {a} seat gains up to {100 * max(g.ci[1], searched):+.1f} "
                           "points by switching strategy")
        for key, band in (("collapse", spec.collapse), ("everyone_loses", spec.everyone_loses)):
            rate = stats[key]["rate"]
            if _outside(rate, band) > 0:
                why.append(f"{key.replace('_', ' ')} {_pc(rate)} outside {_pc(band[0])}-"
                           f"{_pc(band[1])}")
        if not s["converged"]:
            why.append("the equilibrium search did not converge")
        worst, loss = distance(spec, n, {a: r["player_win_rate"] for a, r in agendas.items()},
                               stats["collapse"]["rate"], stats["everyone_loses"]["rate"])
        sizes[str(n)] = {"agendas": agendas, "collapse": stats["collapse"],
                         "everyone_loses": stats["everyone_loses"], "fair": fair,
                         "converged": s["converged"], "games": stats["games"],
                         "worst": worst, "loss": loss,
                         "meets": not why, "why": why, "field": f"p{n}.toml"}
    return {"sizes": sizes, "meets": all(x["meets"] for x in sizes.values()),
            "loss": max(x["loss"] for x in sizes.values()), "confirm_games": total}


RATE = Key("number", lo=0, hi=1)
# an Agenda's numbers at a confirmed finalist, as confirmed.json and summary.json keep them
# (`confirm_finalist`, `rulebook_summary`; the report reads the summary's back)
AGENDA_RESULT = Key("table", keys={k: replace(v, required=True) for k, v in {
    "player_win_rate": RATE, "player_win_ci": interval(0, 1),
    "seat_deviation_gain": Key("number", lo=-1, hi=1), "seat_gain_ci": interval(-1, 1),
    "search_seat_gain_ci": interval(-1, 1)}.items()})
CONFIRMED_WAY_OUT = "restore the file, or delete it to confirm that finalist again " \
                    "(--force starts the search over)"


def _required(keys: dict[str, Key]) -> dict[str, Key]:
    return {k: replace(v, required=True) for k, v in keys.items()}


RATE_CI = Key("table", keys=_required({"rate": RATE, "ci": interval(0, 1)}))
# a table size's confirmed result, as confirmed.json and summary.json keep it
SIZE_RESULT = {
    "agendas": Key("table", known="agenda", keys=_required({a: AGENDA_RESULT
                                                            for a in AGENDAS})),
    "collapse": RATE_CI, "everyone_loses": RATE_CI, "fair": RATE, "converged": Key("bool"),
    "games": Key("count", lo=0), "meets": Key("bool"),
    "why": Key("list", "a list of reasons", item=Key("text")), "field": Key("text")}


def _confirmed_keys(spec: RulebookSpec) -> dict[str, Key]:
    """A finalist's confirmed.json as `_finalist` writes it (`confirm_finalist`, and the
    games per seat range it was confirmed on)."""
    top = 1.0 + sum(band is not None for band in (spec.collapse, spec.everyone_loses))
    size = Key("table", keys=_required({**SIZE_RESULT, "worst": RATE,
                                        "loss": Key("number", lo=0, hi=top)}))
    return _required({"sizes": Key("table", known="table size", keys=_required({
                          str(n): size for n in spec.players})),
                      "meets": Key("bool"), "loss": Key("number", lo=0, hi=top),
                      "confirm_games": Key("count", lo=0),
                      "confirm_games_per_range": Key("count", lo=1)})


def check_confirmed(doc, path: Path, spec: RulebookSpec) -> dict:
    """A finalist's confirmed.json read back, checked whole: its shape, and what ties its
    numbers (each size's worst and loss what its rates give, `distance`; it meets the target
    where nothing falls short; the finalist's loss the largest, and it meets the target only
    where every size does). UsageError naming the file, the key and the way out."""

    def fail(key: str, message: str):
        raise UsageError(f"{path}: {key}: {message}; {CONFIRMED_WAY_OUT}")

    doc = check(doc, _confirmed_keys(spec), fail)
    for n, x in doc["sizes"].items():
        for a, r in x["agendas"].items():
            w = f"sizes.{n}.agendas.{a}"
            within(r["player_win_rate"], r["player_win_ci"], fail, f"{w}.player_win_rate")
            within(r["seat_deviation_gain"], r["seat_gain_ci"], fail,
                   f"{w}.seat_deviation_gain")
        for k in ("collapse", "everyone_loses"):
            within(x[k]["rate"], x[k]["ci"], fail, f"sizes.{n}.{k}.rate")
        rates = {a: r["player_win_rate"] for a, r in x["agendas"].items()}
        worst, loss = distance(spec, int(n), rates, x["collapse"]["rate"],
                               x["everyone_loses"]["rate"])
        for k, want in (("worst", worst), ("loss", loss), ("meets", not x["why"]),
                        ("fair", 1 / int(n)), ("field", f"p{n}.toml")):
            if x[k] != want:
                fail(f"sizes.{n}.{k}", f"expected {want!r} (as the confirmation gives it), "
                     f"got {shown(x[k])}")
    for k, want in (("loss", max(x["loss"] for x in doc["sizes"].values())),
                    ("meets", all(x["meets"] for x in doc["sizes"].values()))):
        if doc[k] != want:
            fail(k, f"expected {want!r} (as its table sizes give it), got {shown(doc[k])}")
    return doc


def read_confirmed(path: Path, spec: RulebookSpec) -> dict:
    try:
        doc = jsonfile.read(path)
    except (OSError, ValueError) as e:
        raise UsageError(f"{path}: cannot be read ({type(e).__name__}: {cut(str(e))}); "
                         f"{CONFIRMED_WAY_OUT}") from None
    return check_confirmed(doc, path, spec)


def _pc(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


# ----------------------------------------------------------------------------- the search


@dataclass
class RulebookResult:
    summary: dict
    trials: list[dict]
    finalists: list[dict]
    best_rules_toml: str


TRIALS_WAY_OUT = "restore the file, or run again with --force (or another --out) to start " \
                 "the search over"
# OUT/trials.json as `tune_equilibrium` writes it; each trial's record (`play_trial`) is
# checked against the spec by `check_trials`
TRIALS_FILE = {"version": Key("int", required=True), "spec": Key("text", required=True),
               "trials": Key("list", "a list of trials", required=True, item=Key("table"))}


def _trial_size(top: float) -> Key:
    """A trial's result at one table size, its loss at most `top`."""
    return Key("table", keys=_required({
        "loss": Key("number", lo=0, hi=top), "worst": RATE, "collapse": RATE,
        "everyone_loses": RATE, "seat_gain_max": Key("number", lo=-1, hi=1),
        "converged": Key("bool"),
        "player_win_rate": Key("table", known="agenda", keys={
            a: Key(("number", "null"), "a player's chance from 0 to 1, or null (never dealt)",
                   lo=0, hi=1, required=True) for a in AGENDAS})}))


def _trial_keys(spec: RulebookSpec) -> dict[str, Key]:
    """A trial's record: its loss at most the largest distance (1) plus one per band the
    target sets (`distance`), its table sizes the spec's."""
    top = 1.0 + sum(band is not None for band in (spec.collapse, spec.everyone_loses))
    loss = Key("number", lo=0, hi=top)
    size = _trial_size(top)
    return {k: replace(v, required=True) for k, v in {
        "number": Key("int", lo=0), "folder": Key("text"), "loss": loss,
        "params": Key("table", "the spec's params and their values", known="param",
                      keys={lv.name: Key("any", required=True) for lv in spec.levers}),
        "invalid": Key("any", "null, or why its rules cannot be played"),
        "games": Key("int", lo=0),
        "sizes": Key("table", "a table by table size", known="table size",
                     keys={str(n): size for n in spec.players})}.items()}


def check_trials(doc, path: Path, spec: RulebookSpec) -> list[dict]:
    """OUT/trials.json read back, checked whole before anything is played or written: its
    shape (`fbsim.inputs`), the spec and version it was searched under, and every trial as
    `play_trial` writes it: numbered 0, 1, 2... in order, in its own folder, each param one of
    the spec's levers within its range (the first trials the rules unchanged and the spec's
    starts), each number finite and in its range, every table size of the spec played (none
    where its rules cannot be), the losses what the rates give (`distance`). Returns the
    trials; UsageError naming the file and the key, and the way out."""
    from fbsim.inputs import value

    def fail(key: str, message: str):
        raise UsageError(f"{path}: {key}: {message}; {TRIALS_WAY_OUT}")

    doc = check(doc, TRIALS_FILE, fail)
    if doc["version"] != STATE_VERSION or doc["spec"] != spec.digest():
        raise UsageError(f"{path}: this folder holds a search of another spec (or version); "
                         "give another --out, or --force to start again")
    keys = Key("table", keys=_trial_keys(spec))
    levers = {lv.name: lv for lv in spec.levers}
    base = unchanged(spec)
    for i, t in enumerate(doc["trials"]):
        where = f"trials[{i}]"
        t = value(t, keys, fail, where)
        if t["number"] != i:
            fail(f"{where}.number", f"expected {i} (the trials are numbered in order from 0), "
                 f"got {t['number']}")
        if t["folder"] != f"trials/{i:04d}":
            fail(f"{where}.folder", f"expected \"trials/{i:04d}\", got {shown(t['folder'])}")
        if not (Path(path).parent / t["folder"]).is_dir():  # (written before its record)
            fail(f"{where}.folder", f"{t['folder']} is not there: a trial fbsim recorded "
                 "was played in it")
        for k, v in t["params"].items():
            if levers[k].raw(_value(v)) is None:
                fail(f"{where}.params.{k}", f"expected {_range_text(levers[k])} (its range "
                     f"in the spec), got {shown(v)}")
        if i <= len(spec.starts):
            proposed = _as_toml({**base, **(spec.starts[i - 1] if i else {})})
            for k, v in proposed.items():
                if t["params"][k] != v:
                    fail(f"{where}.params.{k}", f"expected {shown(v)} ("
                         + ("the rules' own value: the first trial plays them unchanged"
                            if i == 0 else f"the spec's start {i}") + f"), got "
                         f"{shown(t['params'][k])}")
        if t["invalid"] is not None:
            if not isinstance(t["invalid"], str):
                fail(f"{where}.invalid", f"expected null, or why its rules cannot be "
                     f"played, got {shown(t['invalid'])}")
            for k, v, want in (("loss", t["loss"], INVALID_LOSS), ("games", t["games"], 0),
                               ("sizes", t["sizes"], {})):
                if v != want:
                    fail(f"{where}.{k}", f"expected {shown(want)} (its rules cannot be "
                         f"played), got {shown(v)}")
            continue
        for n in spec.players:
            x = t["sizes"].get(str(n))
            w = f"{where}.sizes.{n}"
            if x is None:
                fail(w, "missing: expected the trial's numbers at this table size")
            rates = x["player_win_rate"]
            for a, r in rates.items():
                if r is not None:
                    value(r, Key("number", "a player's chance from 0 to 1, or null (never "
                                 "dealt)", lo=0, hi=1), fail, f"{w}.player_win_rate.{a}")
            worst, loss = distance(spec, n, rates, x["collapse"], x["everyone_loses"])
            for k, want in (("worst", worst), ("loss", loss)):
                if x[k] != want:
                    fail(f"{w}.{k}", f"expected {want!r} (what its player_win_rate, "
                         f"collapse and everyone_loses give), got {x[k]!r}")
        loss = max(x["loss"] for x in t["sizes"].values())
        if t["loss"] != loss:
            fail(f"{where}.loss", f"expected {loss!r} (the largest of its table sizes' "
                 f"losses), got {t['loss']!r}")
    return doc["trials"]


def _range_text(lv: Lever) -> str:
    if lv.choices:
        return "one of " + ", ".join(_toml_value(c) for c in lv.choices)
    return (f"{'a whole number' if lv.integer else 'a number'} from {_toml_value(lv.lo)} to "
            f"{_toml_value(lv.hi)}")


def _load_trials(path: Path, spec: RulebookSpec, force: bool) -> list[dict]:
    """The trials of OUT/trials.json (none with `force` or without the file), checked
    (`check_trials`)."""
    if force or not path.exists():
        return []
    try:
        doc = jsonfile.read(path)
    except (OSError, ValueError) as e:
        raise UsageError(f"{path}: cannot resume this search ({type(e).__name__}: "
                         f"{cut(str(e))}); {TRIALS_WAY_OUT}") from None
    return list(check_trials(doc, path, spec))


def tune_equilibrium(spec: RulebookSpec, out: str | Path, client=None, echo=None,
                     force: bool = False) -> RulebookResult:
    out = Path(out)
    check_rulebook_spec(spec)
    say = echo or (lambda _m: None)
    path = out / "trials.json"
    trials = _load_trials(path, spec, force)[:spec.trials]  # (refused before any change)
    if not force:  # (and the finalists' confirmations, before any change)
        for done in sorted(out.glob("final/*/confirmed.json")):
            read_confirmed(done, spec)
    clear_temporaries(out)  # (a killed run's, a full disk's)
    if trials:
        say(f"resuming: {len(trials)} of {spec.trials} trials done")
    for number in range(len(trials), spec.trials):
        params = propose(spec, trials, number)
        kind = ("the rules unchanged" if number == 0 else "a start" if number <= len(
            spec.starts) else "random" if number <= len(spec.starts) + spec.startup else "TPE")
        say(f"trial {number + 1}/{spec.trials} ({kind}): {describe(changes(spec, params))}")
        rec = play_trial(spec, out, number, params, client, _indent(echo), force)
        trials.append(rec)
        write_json(path, {"version": STATE_VERSION, "spec": spec.digest(), "trials": trials})
        best = min(trials, key=lambda t: (t["loss"], t["number"]))
        say(f"trial {number + 1}/{spec.trials}: loss {rec['loss']:.3f}"
            + (f" (not playable: {rec['invalid']})" if rec["invalid"] else "")
            + f"; best {best['loss']:.3f} (trial {best['number'] + 1})")
    finalists = []
    chosen = _finalists(trials, spec.finalists)
    for i, t in enumerate(chosen):
        params = {k: _value(v) for k, v in t["params"].items()}
        say(f"finalist {i + 1}/{len(chosen)} (trial {t['number'] + 1}, loss {t['loss']:.3f}): "
            f"re-solved from scratch: {describe(changes(spec, params))}")
        finalists.append(_finalist(spec, out, i, f"{i:02d}", params, t, client, echo, force))
    # the reference: the rules unchanged at an equilibrium solved from scratch, confirmed on
    # the same terms (a candidate is recommended only if it comes closer to fair)
    say("the rules unchanged, at their equilibrium solved from scratch: confirming")
    finalists.append(_finalist(spec, out, len(chosen), UNCHANGED, {}, trials[0], client, echo,
                               force))
    best = min(finalists, key=lambda f: (not f["meets"], f["loss"], f["index"]))
    summary = rulebook_summary(spec, trials, finalists, best)
    return RulebookResult(summary, trials, finalists, best_rules_text(spec, best))


UNCHANGED = "unchanged"  # final/unchanged: the rules searched, as they are


def _finalist(spec: RulebookSpec, out: Path, i: int, name: str, params: dict, trial: dict,
              client, echo, force: bool) -> dict:
    """A finalist solved from scratch (the full budget, a fresh seed), audited, and confirmed
    on fresh games. The rules unchanged (`name` UNCHANGED) take the solved fields of
    `start_from` when those were solved from scratch under the same rules."""
    folder = out / "final" / name
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "params.json", _as_toml(params))
    doc = _solved_start(spec, folder) if name == UNCHANGED else None
    if doc is None:
        doc = run_equilibrium(spec.players, folder, seed=seed_of(spec.seed, 0, "rulebook-final",
                                                                 i),
                              budget=spec.final_budget, rules=spec.rules,
                              sets=_as_toml(params), client=client, echo=_indent(echo),
                              force=force)
    done = folder / "confirmed.json"
    conf = None
    if done.exists() and not force:
        conf = read_confirmed(done, spec)
        if conf["confirm_games_per_range"] != spec.confirm_games:
            conf = None
    if conf is None:
        conf = confirm_finalist(spec, folder, i, doc, client, echo)
        conf["confirm_games_per_range"] = spec.confirm_games
        write_json(done, conf)
    # the finalist's rules as a file, to play or report (`--rules final/NN/rules.toml`)
    (folder / "rules.toml").write_text(best_rules_text(spec, {"params": params,
                                                              "meets": conf["meets"]}))
    short = [n for n, x in conf["sizes"].items() if not x["meets"]]
    if echo:
        echo(f"finalist {i + 1}: confirmed loss {conf['loss']:.3f}; "
             + ("meets the target at every table size" if not short else
                f"falls short at {', '.join(short)} players (summary.md says why)"))
    return {"index": i, "trial": trial["number"], "params": _as_toml(params),
            "trial_loss": trial["loss"], "folder": f"final/{name}",
            "solved": doc.get("solved", "from scratch, the finalists' budget"),
            "search_games": sum(doc["players"][str(n)]["games"] for n in spec.players),
            **conf}


def _solved_start(spec: RulebookSpec, folder: Path) -> dict | None:
    """The summary of `start_from` when its fields were solved one seat at a time from scratch
    under the rules searched, unchanged, at every table size (their pN.toml copied into
    `folder`); else None."""
    from fbsim.rules import rules_hash

    start = Path(spec.start_from)
    try:
        doc = jsonfile.read(start / "summary.json")
        for n in spec.players:
            config = jsonfile.read(start / f"p{n}" / "state.json")["config"]
            if doc["players"][str(n)].get("draw") != "seat" or "from" in config:
                return None
            theirs = load_rules(config["rules"], overrides=nest(config["set"]),
                                overrides_source="--set", bots={}, players=n)
            if rules_hash(theirs) != rules_hash(rules_for(spec, {}, n)):
                return None
    except (OSError, ValueError, KeyError, TypeError, FbsimError):
        return None
    for n in spec.players:
        shutil.copyfile(start / f"p{n}.toml", folder / f"p{n}.toml")
    return {**doc, "solved": f"from scratch by the search in {start} (its own budget)"}


def _indent(echo):
    return None if echo is None else (lambda m: echo("  " + m))


def _finalists(trials: list[dict], k: int) -> list[dict]:
    seen, out = set(), []
    for t in sorted((t for t in trials if not t["invalid"]),
                    key=lambda t: (t["loss"], t["number"])):
        key = json.dumps(t["params"], sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(t)
    if not out:
        raise UsageError("tune --equilibrium: no trial's rules could be played; see "
                         "trials.json for why")
    return out[:k]


def _by_size(key: Key, required: bool = True) -> Key:
    """A table of `key` by table size ("3" to "6")."""
    return Key("table", "a table by table size (3 to 6)", known="table size",
               required=required, keys={str(n): key for n in range(3, MAX_PLAYERS + 1)})


# summary.json as `rulebook_summary` writes it: what `fbsim report --rulebook` reads back,
# checked whole before any game is played (`fbsim.experiments.report.model`)
LOSS = Key("number", lo=0, hi=3)  # (the largest distance, 1, and one per band)
SUMMARY_FILE = {**_required({
    "rules": Key("text"), "found": Key("bool"), "changes": Key("table"), "loss": LOSS,
    "players": _by_size(Key("table", keys=_required(SIZE_RESULT))),
    "target": Key("table", keys=_required({
        "fair": Key("text"), "fair_band": FRACTION, "gain": FRACTION,
        "collapse": Key(("list", "null"), BAND.expected + ", or null", size=(2, 2),
                        item=BAND.item),
        "everyone_loses": Key(("list", "null"), BAND.expected + ", or null", size=(2, 2),
                              item=BAND.item)})),
    "finalist": Key("int", lo=0), "trial": Key("int", lo=0), "folder": Key("text"),
    "solved": Key("text"), "unchanged_confirmed": Key("table"),
    "finalist_losses": Key("table", "a table of losses by folder", known="folder"),
    "unchanged": Key("table", keys=_required({
        "loss": LOSS, "sizes": _by_size(_trial_size(3.0)), "note": Key("text")})),
    "levers": Key("list", "a list of rules keys", item=Key("text")),
    "trials": Key("count", lo=1), "best_by_size": _by_size(Key("table")),
    "lever_effects": Key("table"), "finalists": Key("count", lo=1),
    "games": Key("count", lo=0), "from": Key(("text", "null")), "seed": SEED,
    "rules_hash": _by_size(Key("text", "a rules hash (text)")),
    "base_rules_hash": _by_size(Key("text", "a rules hash (text)")), "note": Key("text")}),
    "beats_unchanged": Key("bool")}  # (not in the first searches' summaries)
SUMMARY_KEYS = tuple(SUMMARY_FILE)


def rulebook_summary(spec: RulebookSpec, trials: list[dict], finalists: list[dict],
                     best: dict) -> dict:
    """summary.json: the recommended rules at their own single-seat equilibrium, per table
    size, `found`, and the reference (the rules unchanged, trial 1)."""
    players = {}
    for n, x in best["sizes"].items():
        players[n] = {
            "agendas": {a: {k: r[k] for k in ("player_win_rate", "player_win_ci",
                                              "seat_deviation_gain", "seat_gain_ci",
                                              "search_seat_gain_ci")}
                        for a, r in x["agendas"].items()},
            "fair": x["fair"], "collapse": x["collapse"], "everyone_loses": x["everyone_loses"],
            "converged": x["converged"], "meets": x["meets"], "why": x["why"],
            "field": x["field"], "games": x["games"]}
    from fbsim.rules import rules_hash

    ref = trials[0]
    params = {k: _value(v) for k, v in best["params"].items()}
    return {
        "rules": "best_rules.toml", "found": bool(best["meets"]),
        "changes": _as_toml(changes(spec, params)),
        "loss": best["loss"], "players": players,
        "target": {"fair": "1/players", "fair_band": spec.fair_band, "gain": spec.gain,
                   "collapse": spec.collapse, "everyone_loses": spec.everyone_loses},
        "finalist": best["index"], "trial": best["trial"], "folder": best["folder"],
        "solved": best["solved"],
        # whether a candidate came closer to fair than the rules unchanged (the last finalist)
        "beats_unchanged": best is not finalists[-1],
        "unchanged_confirmed": {"loss": finalists[-1]["loss"],
                                "worst": {n: x["worst"]
                                          for n, x in finalists[-1]["sizes"].items()}},
        "finalist_losses": {f["folder"]: f["loss"] for f in finalists},
        "unchanged": {"loss": ref["loss"], "sizes": ref["sizes"],
                      "note": "trial 1: the rules unchanged at their own warm-started "
                              "equilibrium, the trial budget"},
        "levers": [lv.name for lv in spec.levers], "trials": len(trials),
        "best_by_size": best_by_size(spec, trials),
        "lever_effects": lever_effects(spec, trials),
        "finalists": len(finalists),
        "games": sum(t["games"] for t in trials) + sum(
            f["search_games"] + f["confirm_games"] for f in finalists),
        "from": spec.start_from, "seed": spec.seed,
        "rules_hash": {str(n): rules_hash(rules_for(spec, params, n)) for n in spec.players},
        "base_rules_hash": {str(n): rules_hash(rules_for(spec, {}, n)) for n in spec.players},
        "note": "Deviation gains found by a search are lower bounds of what exists.",
    }


def best_by_size(spec: RulebookSpec, trials: list[dict]) -> dict:
    """For each table size, the trial that came closest to fair there (its worst distance
    from 1/players, warm-started with the trials' budget, not confirmed) and what it
    changed: what each table size alone could reach, where one rulebook for all must
    compromise."""
    out = {}
    for n in map(str, spec.players):
        ok = [t for t in trials if not t["invalid"]]
        t = min(ok, key=lambda t: (t["sizes"][n]["loss"], t["number"]))
        out[n] = {"trial": t["number"], "worst": t["sizes"][n]["worst"],
                  "loss": t["sizes"][n]["loss"],
                  "player_win_rate": t["sizes"][n]["player_win_rate"],
                  "collapse": t["sizes"][n]["collapse"],
                  "changes": _as_toml(changes(spec, {k: _value(v)
                                                     for k, v in t["params"].items()}))}
    return out


def lever_effects(spec: RulebookSpec, trials: list[dict]) -> dict:
    """Per lever and table size, Spearman's rank correlation of the lever's value with the
    worst distance from 1/players over the trials (a choice lever: by its index), with its
    p-value: a lever with no detectable effect in these trials is one whose correlation is
    small everywhere. Rough: the trials move every lever at once, and TPE's trials are not a
    random sample; None where a lever never moved."""
    from scipy.stats import spearmanr

    ok = [t for t in trials if not t["invalid"]]
    out = {}
    for lv in spec.levers:
        xs = [lv.raw(_value(t["params"][lv.name])) for t in ok]
        out[lv.name] = {}
        for n in map(str, spec.players):
            ys = [t["sizes"][n]["worst"] for t in ok]
            if len(set(xs)) < 2 or len(set(ys)) < 2 or len(xs) < 4:
                out[lv.name][n] = None
                continue
            r = spearmanr(xs, ys)
            out[lv.name][n] = {"rho": float(r.statistic), "p": float(r.pvalue)}
    return out


def best_rules_text(spec: RulebookSpec, best: dict) -> str:
    from fbsim.rules import rules_to_toml

    params = {k: _value(v) for k, v in best["params"].items()}
    moved = changes(spec, params)
    verdict = ("meets the target at every table size" if best["meets"] else
               "it does not meet the target (summary.json says why)")
    head = ["# Rules of fbsim tune --equilibrium, judged at their own single-seat "
            "equilibrium at 3-6 players: " + verdict + ".",
            "# Changed from the rules searched: " + describe(moved) + "."]
    # one rulebook for every table size: no `players` key (a rules file that names a size
    # plays only that size)
    text = "".join(line for line in rules_to_toml(rules_for(spec, params, None)).splitlines(
        keepends=True) if not line.startswith("players = "))
    return "\n".join(head) + "\n" + text


def write_rulebook(result: RulebookResult, spec: RulebookSpec, out: str | Path,
                   started: str) -> list[Path]:
    """OUT/best_rules.toml, OUT/pN.toml (the fields solved under it), OUT/summary.json,
    OUT/summary.md and the tables trials.parquet and finalists.parquet."""
    import pandas as pd

    from fbsim.experiments.run.provenance import base_provenance, write_table

    out = Path(out)
    paths = [out / "best_rules.toml"]
    paths[0].write_text(result.best_rules_toml)
    best = out / result.summary["folder"]
    for n in spec.players:
        shutil.copyfile(best / f"p{n}.toml", out / f"p{n}.toml")
        paths.append(out / f"p{n}.toml")
    write_json(out / "summary.json", result.summary)
    (out / "summary.md").write_text(summary_markdown(result.summary, spec))
    paths += [out / "summary.json", out / "summary.md"]
    prov = {**base_provenance(started), "kind": "tune-equilibrium",
            "spec": json.loads(json.dumps(asdict(spec), default=str)),
            "spec_digest": spec.digest()}
    rows = [_row(t, t["sizes"], spec) for t in result.trials]
    write_table(pd.DataFrame(rows), out / "trials.parquet", {**prov, "table": "trials"})
    rows = [_row(f, f["sizes"], spec) for f in result.finalists]
    write_table(pd.DataFrame(rows), out / "finalists.parquet", {**prov, "table": "finalists"})
    return paths + [out / "trials.parquet", out / "finalists.parquet"]


def _row(t: dict, sizes: dict, spec: RulebookSpec) -> dict:
    """One trial's or finalist's row: its levers and table sizes in the spec's order (a
    record read back from JSON comes with its keys sorted: a resumed search writes the same
    table)."""
    row = {"trial": t.get("trial", t.get("number")), "loss": t["loss"]}
    for lv in spec.levers:
        if lv.name in t["params"]:
            v = t["params"][lv.name]
            row[lv.name] = _toml_value(v) if isinstance(v, list | tuple) else v
    for n in [str(n) for n in spec.players if str(n) in sizes]:
        x = sizes[n]
        for a in AGENDAS:
            r = x["player_win_rate"][a] if "player_win_rate" in x else \
                x["agendas"][a]["player_win_rate"]
            row[f"p{n}_{a}"] = math.nan if r is None else r
        c = x["collapse"]
        row[f"p{n}_collapse"] = c["rate"] if isinstance(c, dict) else c
    return row


def in_declared(by_agenda: dict) -> list[str]:
    """The Agendas of `by_agenda` in the rules' order (a dict read back from JSON comes
    sorted: summary.md must not depend on whether a run resumed)."""
    return [a for a in AGENDAS if a in by_agenda]


def summary_markdown(s: dict, spec: RulebookSpec) -> str:
    lines = ["# Rules under strong play", "",
             "Each candidate was judged at its own single-seat equilibrium (the game as "
             "played), re-solved for it at every table size. "
             + ("The recommended rules meet the target at every table size"
                if s["found"] else "No candidate met the target; these are the closest "
                "reached") + f": every Agenda's chance to win as a player within "
             f"{_pc(spec.fair_band)} of 1/players (its 95% interval) and no single-seat "
             f"deviation gaining more than {100 * spec.gain:.0f} points. Deviation gains "
             "found by a search are lower bounds of what exists.", "",
             f"Changes: {describe(s['changes'])}."
             + ("" if s["beats_unchanged"] else " No candidate, re-solved from scratch and "
                "confirmed, came closer to fair than the rules unchanged: these are the rules "
                "unchanged."), "",
             "| players | Agenda | a player's chance [95% CI] | fair | unchanged rules* | "
             "single-seat gain |", "|---|---|---|---|---|---|"]
    for n, x in s["players"].items():
        ref = s["unchanged"]["sizes"].get(n, {}).get("player_win_rate", {})
        for a in in_declared(x["agendas"]):
            r = x["agendas"][a]
            lo, hi = r["player_win_ci"]
            lines.append(f"| {n} | {a} | {_pc(r['player_win_rate'])} [{_pc(lo)}, {_pc(hi)}] | "
                         f"{_pc(x['fair'])} | {_pc(ref.get(a))} | "
                         f"{100 * r['seat_deviation_gain']:+.1f} "
                         f"[{100 * r['seat_gain_ci'][0]:+.1f}, "
                         f"{100 * r['seat_gain_ci'][1]:+.1f}] |")
    lines += ["", "| players | Collapse | everyone loses | converged | meets the target | "
              "why not |", "|---|---|---|---|---|---|"]
    for n, x in s["players"].items():
        lines.append(f"| {n} | {_pc(x['collapse']['rate'])} | "
                     f"{_pc(x['everyone_loses']['rate'])} | {'yes' if x['converged'] else 'no'}"
                     f" | {'yes' if x['meets'] else 'no'} | {'; '.join(x['why']) or '-'} |")
    lines += ["", "What each table size alone came closest to (the trial best there, "
              "warm-started, not confirmed):", "",
              "| players | trial | worst distance from fair | a player's chance | Collapse | "
              "changes |", "|---|---|---|---|---|---|"]
    for n, b in s["best_by_size"].items():
        chances = ", ".join(f"{a} {_pc(b['player_win_rate'][a])}"
                            for a in in_declared(b["player_win_rate"]))
        lines.append(f"| {n} | {b['trial'] + 1} | {_pc(b['worst'])} | {chances} | "
                     f"{_pc(b['collapse'])} | {describe(b['changes'])} |")
    quiet = [k for k, e in s["lever_effects"].items()
             if all(x is None or (abs(x["rho"]) < 0.2 or x["p"] > 0.05) for x in e.values())]
    lines += ["", "Levers with no detectable effect on the worst distance at any table size "
              "over these trials (|Spearman rho| < 0.2 or p > 5% at every size; rough, every "
              f"lever moved at once): {', '.join(quiet) or 'none'}."]
    lines += ["", "*the rules unchanged at their own equilibrium, solved with the trials' "
              f"budget (trial 1). {s['trials']} trials, {s['finalists']} finalists, "
              f"{s['games']:,} games."]
    return "\n".join(lines) + "\n"
