"""Rules search: `fbsim tune --target spec.toml`. Which rule values make every Agenda
competitive, the world collapse about as often as intended and the seats fair?

The spec names the rules searched, with ranges, and the balance loss:

    players = [3, 4, 5, 6]      # the loss is averaged over these table sizes
    games = 20000               # per candidate, table size and generation
    generations = 8
    population = 12
    confirm_games = 200000      # per confirmed candidate and table size, on a fresh seed
    top = 4                     # candidates confirmed
    seed = 0
    rules = "base.toml"         # optional, relative to the spec
    lineup = "..."              # optional
    fields = ["default", "equilibrium/p{players}.toml"]   # optional: robust tuning

    [params]                    # [lo, hi]; integers when both bounds are integers
    baseline_offset = [-4, 8]
    masks = [0, 3]

    [target]
    win_rate = "fair"           # or a table: steward = 0.4, opportunist = 0.3, ...
    collapse = [0.05, 0.15]     # optional: the band the collapse rate should lie in
    seat_spread = 0.05          # optional: bound on (best - worst seat win rate)

    [weights]                   # optional (default 1 each)
    win_rate = 1.0
    collapse = 1.0
    seat_spread = 1.0

loss = mean over table sizes of  w_win * sum_a (rate_a - target_a)^2
                               + w_collapse * (distance of the collapse rate from its band)^2
                               + w_seat * max(0, seat spread - bound)^2

**Robust tuning** (`fields`, or `fbsim tune --robust`): the candidates are played against
every field (a lineup or field file; `{players}` in a path stands for the table size, and
"default" is the default lineup) and a candidate's loss is its *worst* field's loss: rules
that balance the default bots but not the equilibrium score as badly as the equilibrium says.
The ranked table then has each field's loss (`loss_f0`, `loss_f1`, ...) and metrics
(`f1_p4_steward`, ...).

Each generation's candidates x table sizes (x fields) are the points of one sweep (common random
numbers; progress, resuming and Dask come with it); generation g plays seed `seed + g`. The
best candidates are then confirmed on a fresh seed, ranked by their confirmed loss, written as
a Parquet table, and the best rules as a ready TOML file. Picking the smallest of several
confirmed losses favours the candidate whose confirmation games were lucky, so the chosen
rules are played once more, on another fresh seed (`fresh_loss`, `fresh_seed`): that is the
loss to quote.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from fbsim.errors import UsageError, cut, shown
from fbsim.experiments.run.spec import (
    BAND,
    GAMES,
    LINEUP_TEXT,
    PLAYERS,
    RULES_PATH,
    SEED,
    TEXT,
    SpecError,
    SweepSpec,
    build_points,
    flatten,
    read_spec_file,
    read_table_fields,
)
from fbsim.experiments.run.sweep import run_sweep
from fbsim.experiments.search.cem import Dim, cem
from fbsim.game import layout as L
from fbsim.inputs import Key, check, failing, value
from fbsim.limits import MAX_GAMES

CONFIRM_SEED_OFFSET = 90_000  # the finalists are ranked on this seed's games
FRESH_SEED_OFFSET = 95_000  # the chosen rules' loss is measured again on these games
KEYS = ("players", "games", "generations", "population", "confirm_games", "top", "seed",
        "rules", "lineup", "fields", "params", "target", "weights")
TARGET_KEYS = ("win_rate", "collapse", "seat_spread")  # also the keys of [weights]
DEFAULT_FIELD = "default"  # in `fields`: the spec's lineup (or the default lineup)
ROBUST_FIELDS = (DEFAULT_FIELD, "results/equilibrium/p{players}.toml")  # fbsim tune --robust


@dataclass
class TuneSpec:
    params: dict[str, tuple[float, float]]
    players: list[int] = field(default_factory=lambda: [4])
    games: int = 20_000
    generations: int = 8
    population: int = 12
    confirm_games: int = 200_000
    top: int = 4
    seed: int = 0
    rules: str | None = None
    lineup: str | None = None
    fields: list[str] | None = None  # robust tuning: the worst of these fields' losses
    win_rate: Any = "fair"
    collapse: tuple[float, float] | None = None
    seat_spread: float | None = None
    weights: dict[str, float] = field(default_factory=dict)


WEIGHT = Key("number", lo=0)
# A tune spec file's keys (`fbsim.inputs`).
TUNE_FILE = {
    "players": PLAYERS, "games": GAMES, "generations": GAMES,
    # (as the command line's --population: the cross-entropy spread is the elite's variance)
    "population": Key("count", lo=2, hi=MAX_GAMES),
    "confirm_games": GAMES, "top": GAMES, "seed": SEED, "rules": RULES_PATH,
    "lineup": LINEUP_TEXT,
    "fields": Key("list", "a list of lineups or field files", size=(1, 100), item=TEXT),
    "params": Key("table", "a table of rules keys and their [lo, hi] ranges"),
    "target": Key("table", keys={
        "win_rate": Key(("text", "table"), "\"fair\" or a table of win rates by Agenda",
                        choices=("fair",), keys={a: Key("number", "a win rate from 0 to 1",
                                                        lo=0, hi=1) for a in L.AGENDA_NAMES}),
        "collapse": BAND,
        "seat_spread": Key("number", lo=0, hi=1)}),
    "weights": Key("table", keys={k: WEIGHT for k in TARGET_KEYS}),
}
RANGE = Key("list", "[lo, hi] (two numbers)", size=(2, 2), item=Key(("int", "number"), "a number"))


def load_tune_spec(path: str | Path) -> TuneSpec:
    doc, where = read_spec_file(path, "tune spec")
    return tune_spec_from_dict(doc, where, Path(path).parent)


def tune_spec_from_dict(doc: dict, where: str = "tune spec", base_dir: Path | None = None
                        ) -> TuneSpec:
    fail = failing(SpecError, where)
    doc = check(doc, TUNE_FILE, fail)
    params = {}
    for k, v in flatten(doc.get("params", {}), where=f"{where}: params.").items():
        if k in ("players", "lineup", "seat_bot"):  # (the table sizes are the spec's own)
            fail(f"params.{cut(k)}", "not a rule to search: give the table sizes as players "
                 "= ... and the field with lineup or fields")
        lo, hi = value(v, RANGE, fail, f"params.{cut(k)}")
        if lo > hi:
            fail(f"params.{cut(k)}", f"the range {shown(v)} is empty")
        params[k] = (lo, hi)
    if not params:
        fail("params", "name at least one rule to search")
    s = TuneSpec(params=params)
    for k in ("games", "generations", "population", "confirm_games", "top", "seed"):
        if k in doc:
            setattr(s, k, doc[k])
    read_table_fields(doc, s, base_dir, where)
    if "fields" in doc:
        s.fields = [x if x == DEFAULT_FIELD or Path(x).is_absolute() or base_dir is None
                    or not x.endswith(".toml") else str(base_dir / x) for x in doc["fields"]]
    target = doc.get("target", {})
    s.win_rate = target.get("win_rate", s.win_rate)
    if "collapse" in target:
        lo, hi = target["collapse"]
        if lo > hi:
            fail("target.collapse", f"expected {BAND.wanted}, got {shown([lo, hi])}")
        s.collapse = (lo, hi)
    s.seat_spread = target.get("seat_spread", s.seat_spread)
    s.weights = doc.get("weights", {})
    return s


def _dims(spec: TuneSpec) -> list[Dim]:
    return [Dim(k, lo, hi, isinstance(lo, int) and isinstance(hi, int))
            for k, (lo, hi) in spec.params.items()]


def fields(spec: TuneSpec) -> list[str]:
    return spec.fields or [DEFAULT_FIELD]


def field_lineup(spec: TuneSpec, name: str, players: int) -> str | None:
    """A field's lineup at a table size (None: the default lineup)."""
    if name == DEFAULT_FIELD:
        return spec.lineup
    return name.replace("{players}", str(players))


def _points(spec: TuneSpec, cands: list[dict]) -> list[dict]:
    return [{"players": n, "lineup": field_lineup(spec, f, n), **c}
            for c in cands for n in spec.players for f in fields(spec)]


def _sweep_spec(spec: TuneSpec, cands: list[dict], games: int, seed: int) -> SweepSpec:
    return SweepSpec(games=games, seed=seed, players=list(spec.players), rules=spec.rules,
                     lineup=spec.lineup, points=_points(spec, cands))


def losses(spec: TuneSpec, res, n_cands: int) -> list[dict]:
    """The loss and its parts for each candidate, from a sweep of candidates x sizes x
    fields: with several fields, the worst field's loss (and every field's)."""
    from fbsim.experiments.metrics.definitions import deck_share
    from fbsim.rules import load_rules

    w = {"win_rate": 1.0, "collapse": 1.0, "seat_spread": 1.0, **spec.weights}
    win, out, seats = res.win_rates, res.outcomes, res.seats
    k, names = len(spec.players), fields(spec)
    _check_rows(res, n_cands * k * len(names))
    rows = []
    for c in range(n_cands):
        per_field = []
        metrics: dict[str, float] = {}
        for fi in range(len(names)):
            parts = {"win_rate": 0.0, "collapse": 0.0, "seat_spread": 0.0}
            prefix = f"f{fi}_" if len(names) > 1 else ""
            for j, n in enumerate(spec.players):
                point = (c * k + j) * len(names) + fi
                ag = win[(win["point"] == point) & (win["kind"] == "agenda")].set_index("name")
                if spec.win_rate == "fair":
                    rules = load_rules(spec.rules, bots={}, players=n)
                    target = {a: deck_share(rules, a) for a in L.AGENDA_NAMES}
                else:
                    target = spec.win_rate
                parts["win_rate"] += sum((ag.loc[a, "rate"] - t) ** 2
                                         for a, t in target.items())
                o = out[out["point"] == point].iloc[0]
                cr = float(o["collapse_rate"])
                if spec.collapse is not None:
                    lo, hi = spec.collapse
                    parts["collapse"] += (lo - cr if cr < lo else max(0.0, cr - hi)) ** 2
                st = seats[seats["point"] == point]["rate"]
                spread = float(st.max() - st.min())
                if spec.seat_spread is not None:
                    parts["seat_spread"] += max(0.0, spread - spec.seat_spread) ** 2
                for a in L.AGENDA_NAMES:
                    metrics[f"{prefix}p{n}_{a}"] = float(ag.loc[a, "rate"])
                metrics[f"{prefix}p{n}_collapse"] = cr
                metrics[f"{prefix}p{n}_seat_spread"] = spread
            per_field.append((sum(w[key] * v for key, v in parts.items()) / k, parts))
        worst = max(range(len(names)), key=lambda i: per_field[i][0])
        loss, parts = per_field[worst]
        row = {"loss": loss, **{f"loss_{key}": v / k for key, v in parts.items()}}
        if len(names) > 1:
            row["worst_field"] = names[worst]
            row.update({f"loss_f{i}": per_field[i][0] for i in range(len(names))})
        rows.append({**row, **metrics})
    return rows


def _check_rows(res, n_points: int) -> None:
    """The sweep's tables hold one row of each Agenda's win rate, one of outcomes and some
    seats for each of its `n_points` points (a table read back from another sweep, or edited,
    does not): else a UsageError naming the table and the way out, before its losses are
    read from it. (`run_sweep` reads a finished sweep back only once its tables' provenance
    names its points.)"""
    win, out, seats = res.win_rates, res.outcomes, res.seats
    way_out = "remove it and run the same command again: that sweep is played anew"
    for name, df, cols in (("win_rates", win, ("point", "kind", "name", "rate")),
                           ("outcomes", out, ("point", "collapse_rate")),
                           ("seats", seats, ("point", "rate"))):
        missing = [c for c in cols if c not in df.columns]
        if missing:
            raise UsageError(f"{res.out / f'{name}.parquet'}: no column {missing[0]}; "
                             f"{way_out}")
    agendas = win[win["kind"] == "agenda"].groupby("point")["name"].apply(sorted)
    for point in range(n_points):
        for name, ok in (
                ("win_rates", agendas.get(point) == sorted(L.AGENDA_NAMES)),
                ("outcomes", int((out["point"] == point).sum()) == 1),
                ("seats", bool((seats["point"] == point).any()))):
            if not ok:
                raise UsageError(f"{res.out / f'{name}.parquet'}: not the rows of point "
                                 f"{point} this search reads; {way_out}")


@dataclass
class TuneResult:
    ranked: pd.DataFrame  # confirmed candidates, best first
    curve: pd.DataFrame
    candidates: pd.DataFrame
    best: dict
    best_rules_toml: str
    fresh: dict = field(default_factory=dict)  # the chosen rules' loss and metrics, fresh seed


def check_tune_spec(spec: TuneSpec) -> list:
    """The search's dimensions, once every candidate is known to be valid rules (both corners
    of the ranges checked): before any game runs or any file is written."""
    dims = _dims(spec)
    corners = [{d.name: d.lo for d in dims}, {d.name: d.hi for d in dims}]
    build_points(_sweep_spec(spec, corners, 1, 0))
    return dims


# what the search writes into OUT when it ends (`write_tune`), in this order
OUTPUTS = ("candidates.parquet", "search.parquet", "all_candidates.parquet", "best_rules.toml")


def check_outputs(out: Path) -> None:
    """Each file the search ends by writing is a file or absent (not a folder in its place):
    UsageError naming it, before any game (and so before any of them is written)."""
    from fbsim.experiments.run.provenance import check_places

    check_places(files=[out / name for name in OUTPUTS])


def tune(spec: TuneSpec, out: str | Path = "out/tune", client=None, progress=None,
         echo=None, force: bool = False) -> TuneResult:
    out = Path(out)
    dims = check_tune_spec(spec)
    check_outputs(out)

    def score(cands, gen):
        res = run_sweep(_sweep_spec(spec, cands, spec.games, spec.seed + gen),
                        out / f"gen-{gen:02d}", client=client, progress=progress, force=force,
                        checkpoints=False)  # a generation: short, replayed whole if killed
        ls = [r["loss"] for r in losses(spec, res, len(cands))]
        if echo:
            echo(f"  generation {gen + 1}/{spec.generations}: best loss {min(ls):.5f}")
        return [-x for x in ls]

    found = cem(score, dims, generations=spec.generations, population=spec.population,
                seed=spec.seed * 7919 + 17)
    cand = pd.DataFrame(found.candidates)
    # the best distinct candidates of the search, and the final mean, confirmed afresh
    names = [d.name for d in dims]
    uniq = cand.sort_values("score", ascending=False, kind="stable").drop_duplicates(names)
    finalists = [found.best_mean] + [
        {k: r[k] for k in names} for r in uniq.head(spec.top).to_dict("records")]
    seen, distinct = set(), []
    for f in finalists:
        f = {d.name: (int(f[d.name]) if d.integer else float(f[d.name])) for d in dims}
        key = json.dumps(f, sort_keys=True)
        if key not in seen:
            seen.add(key)
            distinct.append(f)
    conf_seed = spec.seed + CONFIRM_SEED_OFFSET
    res = run_sweep(_sweep_spec(spec, distinct, spec.confirm_games, conf_seed), out / "confirm",
                    client=client, progress=progress, force=force)
    rows = [{**f, **m, "confirm_seed": conf_seed, "confirm_games": spec.confirm_games,
             "search_score": float(uniq.set_index(names).loc[tuple(f[n] for n in names),
                                                            "score"])
             if tuple(f[n] for n in names) in uniq.set_index(names).index else math.nan}
            for f, m in zip(distinct, losses(spec, res, len(distinct)), strict=True)]
    ranked = pd.DataFrame(rows).sort_values("loss", kind="stable").reset_index(drop=True)
    ranked.insert(0, "rank", range(1, len(ranked) + 1))
    best = {n: ranked.loc[0, n] for n in names}
    best = {d.name: (int(best[d.name]) if d.integer else float(best[d.name])) for d in dims}
    # the chosen rules on games that played no part in choosing them
    fresh_seed = spec.seed + FRESH_SEED_OFFSET
    res = run_sweep(_sweep_spec(spec, [best], spec.confirm_games, fresh_seed), out / "fresh",
                    client=client, progress=progress, force=force)
    fresh = losses(spec, res, 1)[0]
    ranked["fresh_loss"] = [fresh["loss"]] + [math.nan] * (len(ranked) - 1)
    ranked["fresh_seed"] = fresh_seed
    if echo:
        echo(f"  the chosen rules on a fresh seed ({fresh_seed}): loss {fresh['loss']:.5f} "
             f"(ranked on seed {conf_seed}: {ranked.loc[0, 'loss']:.5f})")
    return TuneResult(ranked, pd.DataFrame(found.curve), cand, best, _best_toml(spec, best),
                      fresh)


def format_tune(res: TuneResult, spec: TuneSpec) -> str:
    """The ranked candidates as a text table, the best, and its loss on a fresh seed."""
    cols = ["rank", *spec.params, "loss"] + [c for c in res.ranked.columns
                                              if c.startswith(("p", "loss_f", "worst"))
                                              and "_" in c]
    return "\n".join([
        res.ranked[cols].to_string(index=False, float_format=lambda x: f"{x:.4f}"),
        "best: " + ", ".join(f"{k} = {v}" for k, v in res.best.items()),
        f"its loss on a fresh seed ({int(res.ranked.loc[0, 'fresh_seed'])}): "
        f"{res.fresh['loss']:.4f} (the figure to quote: the ranked losses chose it)"])


def _best_toml(spec: TuneSpec, best: dict) -> str:
    from fbsim.rules import load_rules, nest, rules_to_toml

    bots: dict = {}
    rules = load_rules(spec.rules, overrides=nest(best), overrides_source="tune", bots=bots)
    head = ("# Rules found by fbsim tune: " + ", ".join(f"{k} = {v}" for k, v in best.items())
            + "\n")
    if bots:  # bot parameters are not rules: they go with the lineup
        head += ("# (bot parameters belong to the lineup, not to these rules: "
                 + ", ".join(f"bots.{b}.{k} = {v:g}" for b, ps in bots.items()
                             for k, v in ps.items()) + ")\n")
    return head + rules_to_toml(rules)


def write_tune(result: TuneResult, spec: TuneSpec, out: str | Path, started: str) -> list[Path]:
    from dataclasses import asdict

    from fbsim.experiments.run.provenance import base_provenance, write_table

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    from fbsim.lineup import lineup_hash, parse_lineup

    lineup = parse_lineup(spec.lineup)
    prov = {**base_provenance(started), "kind": "tune", "tune_spec": asdict(spec),
            "fields": fields(spec),
            "lineup": lineup.describe(), "lineup_hash": lineup_hash(lineup),
            "search_seeds": [spec.seed + g for g in range(spec.generations)],
            "confirm_seed": spec.seed + CONFIRM_SEED_OFFSET,
            "fresh_seed": spec.seed + FRESH_SEED_OFFSET}
    paths = [out / name for name in OUTPUTS]
    write_table(result.ranked, paths[0], {**prov, "table": "confirmed candidates"})
    write_table(result.curve, paths[1], {**prov, "table": "search curve"})
    write_table(result.candidates, paths[2], {**prov, "table": "every candidate"})
    paths[3].write_text(result.best_rules_toml)
    return paths
