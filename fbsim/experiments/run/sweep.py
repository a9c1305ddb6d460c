"""Running a sweep: every point's games in blocks, paired against its baseline, each point
written atomically, resumable.

Dataset layout (`OUT/`):

    sweep.json                  the spec, its digest and the start time (for resuming)
    points/0007/{win_rates,outcomes,seats}.parquet
                                one finished point (a folder renamed into place when done)
    win_rates.parquet, outcomes.parquet, seats.parquet
                                all points, written once every point is done

Game i of every point uses the same random draws (same seed, same game index), so a point
and its baseline are compared game by game. The games are played in tasks of (up to 8
points sharing a baseline, a range of games), in this process or on a Dask cluster
(`fbsim.experiments.run.cluster`); each task plays its baseline's games once. A killed
sweep leaves only whole points behind; rerunning it skips them and writes byte-identical
tables.

Without per-point checkpoints (`run_sweep(checkpoints=False)`: the searches' many short
sweeps, a CEM generation of a dozen points of a few thousand games, whose three files per
point cost more than the point's games) no `points/` folder is written: the tables are
written once every point is played, a finished dataset is read back as it is, and a killed
one is played again from its first point.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from fbsim import jsonfile
from fbsim.errors import UsageError, cut, shown
from fbsim.experiments.metrics.tables import (
    adjust_comparisons,
    sweep_tables,
    upgrade_point_tables,
)
from fbsim.experiments.run.lock import LOCK_NAME, move_into_place, output_lock
from fbsim.experiments.run.provenance import base_provenance, now_iso, read_table, write_table
from fbsim.experiments.run.runner import NoProgress, Progress
from fbsim.experiments.run.spec import Point, SweepSpec, build_points, describe, field_of
from fbsim.lineup import lineup_hash
from fbsim.rules import rules_hash, rules_to_toml

TABLES = ("win_rates", "outcomes", "seats")


def _point_provenance(spec: SweepSpec, point: Point, started: str, games: int) -> dict:
    return {**base_provenance(started), "kind": "sweep point", "point": point.index,
            "coordinates": point.values, "baseline_point": point.baseline,
            "lineup": point.lineup.describe(), "lineup_hash": lineup_hash(point.lineup),
            "seed": spec.seed, "games": games,
            "rules_hash": rules_hash(point.rules),
            "rules_toml": rules_to_toml(point.rules, comments=False),
            "sweep_spec": spec.to_dict()}


@dataclass
class SweepResult:
    out: Path
    win_rates: pd.DataFrame
    outcomes: pd.DataFrame
    seats: pd.DataFrame
    points_run: int
    points_skipped: int
    games_played: int
    field: str = ""  # who played the games, in words (`spec.field_of`)

    def summary(self) -> dict:
        return {"out": str(self.out), "points": len(self.outcomes),
                "points_run": self.points_run, "points_skipped": self.points_skipped,
                "games_played": self.games_played,
                "tables": {t: str(self.out / f"{t}.parquet") for t in TABLES}}


def _point_dir(out: Path, i: int) -> Path:
    return out / "points" / f"{i:04d}"


def _same_points(out: Path, spec: SweepSpec, doc: dict, points: list[Point]) -> bool:
    """Whether a dataset whose sweep.json has another digest (one written by an older version,
    which digested the rules' printed TOML) holds this same sweep: the same spec, and every
    finished point played with the same rules and lineup (by their hashes)."""
    from fbsim.experiments.run.provenance import read_provenance

    if doc.get("spec") != json.loads(json.dumps(spec.to_dict(), default=str)):
        return False
    for p in points:
        if _finished(out, p.index):
            try:
                prov = read_provenance(_point_dir(out, p.index) / "win_rates.parquet")
            except Exception:  # an unreadable point: not this sweep's
                return False
            if (prov.get("rules_hash"), prov.get("lineup_hash")) != (
                    rules_hash(p.rules), lineup_hash(p.lineup)):
                return False
    return True


def _is_time(text) -> bool:
    """Whether `text` is a time as `provenance.now_iso` writes it (ISO 8601, offset given)."""
    import datetime as dt

    try:
        return isinstance(text, str) and dt.datetime.fromisoformat(text).tzinfo is not None
    except ValueError:
        return False


def _write_meta(meta: Path, doc: dict) -> None:
    tmp = meta.with_name(".sweep.json.tmp")
    try:
        tmp.write_text(json.dumps(doc, indent=1, sort_keys=True, default=str) + "\n")
        move_into_place(tmp, meta)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _only_leftovers(out: Path) -> bool:
    """Whether OUT holds nothing but what a sweep that failed before its first write leaves
    (its lock file, an empty points/ folder, temporary files): the same sweep starts there
    as in a new folder."""
    for p in out.iterdir():
        if p.name == LOCK_NAME or (p.name.startswith(".") and ".tmp" in p.name):
            continue
        if p.name == "points" and p.is_dir() and not any(p.iterdir()):
            continue
        return False
    return True


def _digest(spec: SweepSpec, base, points: list[Point]) -> str:
    return spec.digest(rules_hash(base), [lineup_hash(p.lineup) for p in points])


def _check_dataset(out: Path, spec: SweepSpec, digest: str, points: list[Point],
                   force: bool, checkpoints: bool = True) -> dict | None:
    """The sweep.json of this same sweep in OUT, None for a new dataset; UsageError when OUT
    holds something else (read only: nothing is written before this passes). A dataset of an
    older version (another digest of the same sweep, `_same_points`) is this sweep. What a
    resumed sweep reads back is checked here too: each finished point's files
    (`_check_points`) and, for a sweep without checkpoints, its finished tables
    (`_check_tables`)."""
    meta = out / "sweep.json"
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a folder")
    if meta.exists() and not force:
        try:
            doc = jsonfile.read(meta)
        except (OSError, ValueError):
            raise UsageError(f"{meta}: unreadable; remove {out} or pass --force") from None
        if not isinstance(doc, dict) or (doc.get("digest") != digest
                                         and not _same_points(out, spec, doc, points)):
            raise UsageError(f"--out {out}: holds a different sweep (another spec, seed or "
                             "rules); use another --out, or --force to start it afresh")
        if not _is_time(doc.get("started")):
            raise UsageError(f"{meta}: started: expected the sweep's start time (an ISO 8601 "
                             "time with its offset, as 2024-01-01T00:00:00+00:00), got "
                             f"{shown(doc.get('started'))}; restore the file, or pass --force "
                             "to start the sweep afresh")
        _check_points(out, spec, points)
        if (not checkpoints and not _any_point(out)
                and all((out / f"{t}.parquet").exists() for t in TABLES)):
            _check_tables(out, spec, points)
        return doc
    if not force and out.exists() and not meta.exists() and not _only_leftovers(out):
        raise UsageError(f"--out {out}: exists and is not a sweep dataset")
    return None


def _provenance_of(path: Path, way_out: str) -> dict:
    """The provenance of a table of the dataset, from its footer, once its contents are
    checked against the checksum it was written with (`check_content`); UsageError naming
    the file and `way_out` when it is not one fbsim wrote (truncated, say), DamagedFile when
    its contents were changed since."""
    import pyarrow as pa

    from fbsim.experiments.run.provenance import check_content, read_provenance

    try:
        prov = read_provenance(path)
        check_content(path, way_out)
    except (OSError, ValueError, pa.ArrowException) as e:
        raise UsageError(f"{path}: damaged, or not a table fbsim wrote ({type(e).__name__}: "
                         f"{cut(str(e))}); {way_out}") from None
    if not isinstance(prov, dict):
        raise UsageError(f"{path}: damaged, or not a table fbsim wrote (its provenance is "
                         f"{shown(prov)}); {way_out}")
    return prov


def _check_points(out: Path, spec: SweepSpec, points: list[Point]) -> None:
    """Each finished point's files belong to that point: tables fbsim wrote (their footers
    read back), whose provenance names the point's index, its table, the sweep's seed and the
    point's rules and lineup (by hash); and points/ and each point are folders. A point
    folder copied over another, or a file in a point's place, is a UsageError naming it and
    the way out, before anything is written (a point read back as another would enter the
    tables as that point; a file there would stop the sweep when the point is saved)."""
    folder = out / "points"
    if (folder.exists() or folder.is_symlink()) and not folder.is_dir():
        raise UsageError(f"{folder}: not a folder (the sweep keeps its finished points in "
                         "it); remove it and run the sweep again: it plays every point anew")
    for p in points:
        d = _point_dir(out, p.index)
        way_out = f"remove {d} and run the sweep again: it plays that point anew"
        if (d.exists() or d.is_symlink()) and not d.is_dir():
            raise UsageError(f"{d}: not a point's folder (a file); {way_out}")
        if not _finished(out, p.index):
            continue  # (played again, in full)
        want = {"kind": "sweep point", "point": p.index, "seed": spec.seed,
                "rules_hash": rules_hash(p.rules), "lineup_hash": lineup_hash(p.lineup)}
        for t in TABLES:
            path = d / f"{t}.parquet"
            prov = _provenance_of(path, way_out)
            for k, v in {**want, "table": t}.items():
                if prov.get(k) != v:
                    raise UsageError(f"{path}: not point {p.index}'s {t} table (its {k} is "
                                     f"{shown(prov.get(k))}, expected {shown(v)}); {way_out}")


def _check_tables(out: Path, spec: SweepSpec, points: list[Point]) -> None:
    """The tables of a finished sweep without checkpoints (read back as they are, not
    written again from its points) are this sweep's: provenance naming its spec, seed and
    points (each point's rules and lineup by hash). UsageError naming the file and the way
    out, before anything is written."""
    way_out = "remove it and run the same command again: the sweep is played anew"
    spec_doc = json.loads(json.dumps(spec.to_dict(), default=str))
    want = [[p.index, rules_hash(p.rules), lineup_hash(p.lineup)] for p in points]
    for t in TABLES:
        path = out / f"{t}.parquet"
        prov = _provenance_of(path, way_out)
        found = prov.get("points")
        got = ([[e.get(k) for k in ("point", "rules_hash", "lineup_hash")]
                if isinstance(e, dict) else e for e in found]
               if isinstance(found, list) else found)
        for k, ok in (("kind", prov.get("kind") == "sweep"), ("table", prov.get("table") == t),
                      ("seed", prov.get("seed") == spec.seed),
                      ("sweep_spec", prov.get("sweep_spec") == spec_doc),
                      ("points", got == want)):
            if not ok:
                raise UsageError(f"{path}: not this sweep's {t} table (its {k} is another: "
                                 f"{shown(prov.get(k))}); {way_out}")


def _open_dataset(out: Path, spec: SweepSpec, digest: str, points: list[Point],
                  force: bool, checkpoints: bool = True) -> str:
    """Create OUT (or check that it holds this same sweep); returns the start time."""
    meta = out / "sweep.json"
    doc = _check_dataset(out, spec, digest, points, force, checkpoints)
    if doc is not None:
        if doc.get("digest") != digest:  # an older version's digest of this same sweep
            _write_meta(meta, {**doc, "digest": digest})
        _clean_temporaries(out)
        return doc["started"]
    if out.exists() and force:
        for t in TABLES:
            (out / f"{t}.parquet").unlink(missing_ok=True)
        shutil.rmtree(out / "points", ignore_errors=True)
    (out / "points").mkdir(parents=True, exist_ok=True)
    _clean_temporaries(out)
    started = now_iso()
    _write_meta(meta, {"digest": digest, "started": started, "spec": spec.to_dict()})
    return started


def _clean_temporaries(out: Path) -> None:
    """Remove what a killed run left half-written (never a finished point or table)."""
    for p in list(out.glob(".*.tmp*")) + list((out / "points").glob(".*.tmp*")):
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)


def _write_point(out: Path, point: Point, spec: SweepSpec, tables: list[pd.DataFrame],
                 started: str, games: int) -> None:
    prov = _point_provenance(spec, point, started, games)
    final = _point_dir(out, point.index)
    tmp = final.with_name(f".{final.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir(parents=True)
        for name, df in zip(TABLES, tables, strict=True):
            write_table(df, tmp / f"{name}.parquet", {**prov, "table": name})
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:  # (a failed write, Ctrl-C: no half-written point left behind)
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _any_point(out: Path) -> bool:
    d = out / "points"
    return d.is_dir() and any(d.iterdir())


def _finished(out: Path, i: int) -> bool:
    d = _point_dir(out, i)
    return all((d / f"{t}.parquet").exists() for t in TABLES)


def run_sweep(spec: SweepSpec, out: str | Path, progress: Progress | None = None,
              force: bool = False, echo=None, client=None, task_games: int | None = None,
              threads: int | None = None, checkpoints: bool = True) -> SweepResult:
    """Run (or resume) a sweep into the dataset folder `out`.

    With a dask.distributed `client`, the points are played on its workers in tasks of
    `task_games` games (default: a few tasks per worker and point), each with `threads` kernel
    threads (default: the worker's own setting); the tables are the same bytes.
    `checkpoints=False`: no per-point files (the module's docstring); the same tables."""
    out = Path(out)
    base, points = build_points(spec)  # every point validated before any game runs
    progress = progress or NoProgress()
    digest = _digest(spec, base, points)
    _check_dataset(out, spec, digest, points, force, checkpoints)
    with output_lock(out):  # (checked again under the lock, which creates OUT)
        return _run_locked(spec, out, points, progress, force, echo, client, task_games,
                           threads, digest, checkpoints)


def _run_locked(spec, out, points, progress, force, echo, client, task_games, threads,
                digest, checkpoints) -> SweepResult:
    started = _open_dataset(out, spec, digest, points, force, checkpoints)
    if (not checkpoints and not _any_point(out)
            and all((out / f"{t}.parquet").exists() for t in TABLES)):
        # finished without checkpoints (its tables are written only once every point is;
        # `_check_tables` found them this sweep's)
        got = load(out)
        want = sorted(p.index for p in points)
        for t in TABLES:
            if "point" not in got[t] or sorted(set(got[t]["point"])) != want:
                raise UsageError(f"{out / f'{t}.parquet'}: its rows are not this sweep's "
                                 "points; remove it and run the same command again: the "
                                 "sweep is played anew")
        return SweepResult(out, *(got[t] for t in TABLES), 0, len(points), 0,
                           field_of(spec, points))
    todo = [p for p in points if not _finished(out, p.index)]
    if echo:
        echo(describe(spec, points))
        if len(todo) < len(points):
            echo(f"resuming: {len(points) - len(todo)} of {len(points)} points already done")
    per_point = spec.min_games if spec.ci_width is not None else spec.games
    progress.start(per_point * len(todo), f"{len(todo)} points")
    from fbsim.experiments.run.cluster import run_tasks

    fresh: dict[int, list[pd.DataFrame]] = {}  # the points played now, not read back

    def on_point(point, tally):
        tables = sweep_tables(tally, point.rules, point.values, point.index, point.baseline)
        if checkpoints:
            _write_point(out, point, spec, tables, started, tally.games)
        fresh[point.index] = tables

    try:
        played = run_tasks(client, spec, todo, {p.index: p for p in points}, task_games,
                           threads, progress, on_point)
    finally:
        progress.close()
    frames = combine(out, spec, points, started, fresh)
    return SweepResult(out, *frames, len(todo), len(points) - len(todo), played,
                       field_of(spec, points))


def combine(out: Path, spec: SweepSpec, points: list[Point], started: str,
            fresh: dict[int, list[pd.DataFrame]] | None = None):
    """The dataset's three tables from its finished points: `fresh[i]`, point i's tables as
    this run computed them, else point i's files (the same values either way: a test checks
    that both give the same bytes)."""
    prov = {**base_provenance(started), "kind": "sweep", "seed": spec.seed,
            "field": field_of(spec, points),
            "games": spec.games if spec.ci_width is None else None,
            "sweep_spec": spec.to_dict(),
            "points": [{"point": p.index, "coordinates": p.values,
                        "baseline_point": p.baseline, "lineup": p.lineup.describe(),
                        "lineup_hash": lineup_hash(p.lineup),
                        "rules_hash": rules_hash(p.rules)} for p in points],
            "rules_toml": {str(p.index): rules_to_toml(p.rules, comments=False) for p in points}}
    parts: dict[str, list[pd.DataFrame]] = {t: [] for t in TABLES}
    upgraded = []
    fresh = fresh or {}
    for p in points:
        if p.index in fresh:
            got = dict(zip(TABLES, fresh[p.index], strict=True))
        else:
            folder = _point_dir(out, p.index)
            got = {t: read_table(folder / f"{t}.parquet", way_out=(
                f"remove {folder} and run the sweep again: it plays that point anew"),
                table=t) for t in TABLES}
            for df in got.values():  # (the point's own provenance is not the dataset's)
                df.attrs.clear()
        # a point finished by an older version (a resumed dataset) gets today's columns
        if upgrade_point_tables(got["win_rates"], got["outcomes"]):
            upgraded.append(p.index)
        for t in TABLES:
            parts[t].append(got[t])
    frames = [pd.concat(parts[t], ignore_index=True) for t in TABLES]
    tables = dict(zip(TABLES, frames, strict=True))
    if upgraded:
        prov["upgraded_points"] = {
            "points": upgraded, "how": "written before stats version 2: Tango's intervals, "
            "McNemar's p-values and the changed games recomputed from their recorded normal "
            "intervals (exact: b and c follow from the mean and the half-width)"}
    # the comparisons of every point with its baseline, corrected for their number
    prov["multiple_comparisons"] = adjust_comparisons(tables["win_rates"], tables["outcomes"])
    for t, df in tables.items():
        write_table(df, out / f"{t}.parquet", {**prov, "table": t})
    return frames


def load(out: str | Path) -> dict[str, pd.DataFrame]:
    """The tables of a finished sweep dataset, each with `attrs['provenance']`."""
    out = Path(out)
    missing = [t for t in TABLES if not (out / f"{t}.parquet").exists()]
    if missing:
        raise UsageError(f"{out}: not a finished sweep dataset (no {missing[0]}.parquet)")
    return {t: read_table(out / f"{t}.parquet", way_out=(
        "run the sweep again with --force (or into another --out) to write it anew"), table=t)
        for t in TABLES}


def same_tables(a: str | Path, b: str | Path, ignore=("time",)) -> bool:
    """Whether two datasets hold the same tables: the same data and the same provenance apart
    from the keys in `ignore` (the start time)."""
    import pyarrow.parquet as pq

    from fbsim.experiments.run.provenance import META_KEY

    for t in TABLES:
        ta, tb = pq.read_table(Path(a) / f"{t}.parquet"), pq.read_table(Path(b) / f"{t}.parquet")
        if not ta.equals(tb):
            return False
        ma, mb = (jsonfile.loads(x.schema.metadata[META_KEY]) for x in (ta, tb))
        if {k: v for k, v in ma.items() if k not in ignore} != {
                k: v for k, v in mb.items() if k not in ignore}:
            return False
    return True


def point_setup(out: str | Path, point: int):
    """(rules, lineup, seed) of one point of a sweep dataset, from its provenance: enough to
    play or replay any of its games (`fbsim.reference.engine.play_game`)."""
    from fbsim.experiments.run.provenance import read_provenance
    from fbsim.lineup import lineup_from_description
    from fbsim.rules import rules_from_toml

    prov = read_provenance(Path(out) / "outcomes.parquet")
    entry = next((e for e in prov["points"] if e["point"] == point), None)
    if entry is None:
        raise UsageError(f"{out}: no point {point}")
    # datasets written while bot parameters were rules keep them in `[bots.BOT]` tables of
    # their rules_toml: they go back to every lineup entry playing that bot
    bots: dict = {}
    rules = rules_from_toml(prov["rules_toml"][str(point)], f"{out} point {point}", bots)
    lineup = lineup_from_description(entry["lineup"]).with_bot_params(bots)
    return rules, lineup, int(prov["seed"])


def coordinate_columns(df: pd.DataFrame) -> list[str]:
    """The varied parameters of a sweep table (the columns between point and baseline)."""
    cols = list(df.columns)
    return cols[cols.index("point") + 1:cols.index("baseline_point")]




def sweep(spec: SweepSpec | dict | str | Path | None = None, out: str | Path = "out/sweep", *,
          progress: Progress | None = None, force: bool = False, client=None,
          task_games: int | None = None, **fields: Any) -> SweepResult:
    """Run (or resume) a sweep: `spec` is a SweepSpec, a dict in the spec file's form, or a
    path to a spec file; keyword arguments set spec fields, e.g.
    `fbsim.sweep(vary={"masks": [1, 2, 3]}, players=[4], games=100_000, out="masks")`.
    `client`: a dask.distributed Client to play the games on its workers."""
    from fbsim.experiments.run.spec import load_spec, spec_from_dict

    if spec is None:
        s = SweepSpec()
    elif isinstance(spec, SweepSpec):
        s = spec
    elif isinstance(spec, dict):
        s = spec_from_dict(spec)
    else:
        s = load_spec(spec)
    for k, v in fields.items():
        if not hasattr(s, k):
            raise UsageError(f"sweep: unknown spec field '{k}'")
        setattr(s, k, v)
    return run_sweep(s, out, progress=progress, force=force, client=client,
                     task_games=task_games)
