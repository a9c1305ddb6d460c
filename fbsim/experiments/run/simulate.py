"""One table of games: `fbsim simulate` and `fbsim.simulate(...)`.

A simulation is a sweep of one point: the same counting (`Tally`) and the same tables, plus a
readable report and, on request, the per-game records as Parquet.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from fbsim.experiments.metrics.tables import sweep_tables
from fbsim.experiments.metrics.tally import Tally
from fbsim.experiments.run.provenance import (
    META_KEY,
    base_provenance,
    now_iso,
    write_error,
    write_table,
)
from fbsim.experiments.run.runner import Arm, NoProgress, run_blocks
from fbsim.experiments.run.spec import SpecError, SweepSpec, build_points, resolve_players
from fbsim.game import layout as L
from fbsim.game import record as GR
from fbsim.lineup import Lineup, lineup_hash
from fbsim.rules import rules_hash, rules_to_toml


@dataclass
class SimulationResult:
    """The tables of one simulated table of games, as pandas DataFrames."""

    win_rates: pd.DataFrame
    outcomes: pd.DataFrame
    seats: pd.DataFrame
    provenance: dict = field(default_factory=dict)

    @property
    def games(self) -> int:
        return int(self.outcomes["games"].iloc[0])

    def metrics(self) -> pd.DataFrame:
        """Every number of the report in one tidy long table (what --out writes)."""
        rows = []
        for r in self.win_rates.itertuples(index=False):
            rows.append({"metric": "win_rate", "group": r.kind, "name": r.name,
                         "value": r.rate, "ci_low": r.ci_low, "ci_high": r.ci_high,
                         "count": r.wins, "games": r.games})
            rows.append({"metric": "seat_win_rate", "group": r.kind, "name": r.name,
                         "value": r.seat_rate, "ci_low": math.nan, "ci_high": math.nan,
                         "count": r.wins, "games": r.games})
        for r in self.seats.itertuples(index=False):
            rows.append({"metric": "win_rate", "group": "seat", "name": str(r.seat),
                         "value": r.rate, "ci_low": r.ci_low, "ci_high": r.ci_high,
                         "count": r.wins, "games": r.games})
        o = self.outcomes.iloc[0]
        n = int(o["games"])
        for label, count in (("collapse", "collapses"), ("everyone_loses",
                                                          "everyone_loses_games")):
            rows.append({"metric": f"{label}_rate", "group": "outcome", "name": label,
                         "value": o[f"{label}_rate"], "ci_low": o[f"{label}_ci_low"],
                         "ci_high": o[f"{label}_ci_high"], "count": int(o[count]), "games": n})
        skip = {"point", "baseline_point", "games", "collapses", "everyone_loses_games",
                "paired_games", "rules_hash", "players"}
        for col in self.outcomes.columns:
            if col in skip or col.startswith(("collapse_rate", "collapse_ci", "collapse_diff",
                                              "everyone_loses_")):
                continue
            rows.append({"metric": col, "group": "outcome", "name": col, "value": float(o[col]),
                         "ci_low": math.nan, "ci_high": math.nan, "count": -1, "games": n})
        return pd.DataFrame(rows)


def simulate(players: int | None = None, games: int = 100_000, rules: str | Path | None = None,
             sets: list[str] | tuple[str, ...] = (), lineup: str | None = None,
             seats: list[str] | tuple[str, ...] = (), seed: int = 0, progress=None,
             records: str | Path | None = None, checked: bool | None = None,
             before_writing=None) -> SimulationResult:
    """Play `games` games and return the win-rate, outcome and seat tables.

    `players`: the table size (default: the rules file's or `sets`' players, else 4; when
    both name one they must agree). `sets` are rules overrides (`["masks=3"]`), `lineup` and
    `seats` as on the command line.
    `records=PATH` also writes the per-game table to PATH (Parquet). `checked=True` plays the
    kernel's checked build (every bot decision checked against the rules; the same games).
    `before_writing()`, if given, runs once the inputs are checked, before any game (the
    command line takes its output locks there: a refused input leaves nothing behind).
    """
    from fbsim.rules import parse_set

    spec = SweepSpec(games=games, seed=seed, players=[4 if players is None else players],
                     rules=None if rules is None else str(rules), lineup=lineup,
                     seats=list(seats), set=dict(parse_set(s) for s in sets))
    resolve_players(spec, None if players is None else str(players))
    players = spec.players[0]
    if games < 1:
        raise SpecError("--games: must be >= 1")
    _, (point,) = build_points(spec)
    if before_writing is not None:
        before_writing()
    progress = progress or NoProgress()
    started = now_iso()
    tally = Tally.for_rules(point.rules, point.lineup)
    writer = None
    progress.start(games, f"{players} players")

    def consume(first: int, recs: list[dict], blocks: list) -> None:
        nonlocal writer
        (rec,), (block,) = recs, blocks
        tally.add(block)
        if records is not None:
            table = records_table(rec, point.rules)
            if writer is None:
                writer = RecordsWriter(Path(records), table.schema, point.lineup, {
                    **base_provenance(started), "kind": "game records", "seed": seed,
                    "games": games, "lineup": point.lineup.describe(),
                    "lineup_hash": lineup_hash(point.lineup),
                    # what each value of the `bot_<seat>` columns stands for, readable:
                    # the lineup entry (its bot and parameters), by id
                    "bot_entries": {str(i): e.text(",") for i, e in
                                    enumerate(point.lineup.entries()) if e is not None},
                    "rules_hash": rules_hash(point.rules),
                    "rules_toml": rules_to_toml(point.rules, comments=False)})
            writer.write(table)

    try:
        run_blocks([Arm(point.rules, point.lineup, checked)], seed, 0, games, consume, progress,
                   tallies=[tally])
        if writer is not None:
            writer.close()
            writer = None
    finally:
        progress.close()
        if writer is not None:
            writer.abort()
    win, out, st = sweep_tables(tally, point.rules, {"players": players})
    prov = {**base_provenance(started), "kind": "simulation", "seed": seed, "games": games,
            "lineup": point.lineup.describe(), "lineup_hash": lineup_hash(point.lineup),
            "rules_hash": rules_hash(point.rules),
            "rules_toml": rules_to_toml(point.rules, comments=False)}
    drop = ["point", "baseline_point", "diff", "diff_ci_low", "diff_ci_high", "diff_p_value",
            "changed_games", "paired_games"]
    win = win.drop(columns=drop)
    out = out.drop(columns=[c for c in out.columns
                            if "_diff" in c or "_changed" in c or c in drop])
    st = st.drop(columns=["point", "baseline_point"])
    return SimulationResult(win, out, st, prov)


def write_metrics(result: SimulationResult, path: str | Path) -> None:
    write_table(result.metrics(), Path(path), {**result.provenance, "table": "metrics"})


# ------------------------------------------------------------------------ per-game records


def records_table(rec: dict, rules) -> pa.Table:
    """One row per game (fields and types from `fbsim.game.record`): the game index, the game
    fields, the Dial at the end of each round as `dial_round_<r>`, then each seat field as
    `<field>_<seat>` columns, then `assets_<seat>_<kind>`."""
    cols: dict[str, np.ndarray] = {GR.INDEX.stem: rec[GR.INDEX.name].astype(GR.INDEX.dtype)}
    for f in GR.of_shape(GR.GAME):
        cols[f.stem] = rec[f.name].astype(f.dtype)
    for f in GR.of_shape(GR.ROUND):
        for r in range(rec[f.name].shape[1]):
            cols[f"{f.stem}_{r + 1}"] = rec[f.name][:, r].astype(f.dtype)
    for f in GR.of_shape(GR.SEAT):
        for s in range(rules.players):
            cols[f"{f.stem}_{s}"] = rec[f.name][:, s].astype(f.dtype)
    for f in GR.of_shape(GR.SEAT_KIND):
        for s in range(rules.players):
            for k, kind in enumerate(rules.asset_names):
                cols[f"{f.stem}_{s}_{kind}"] = rec[f.name][:, s, k].astype(f.dtype)
    return pa.table(cols)


class RecordsWriter:
    """Streams blocks to a temporary Parquet file, renamed into place when complete."""

    def __init__(self, path: Path, schema: pa.Schema, lineup: Lineup, provenance: dict):
        import json
        import os

        from fbsim.experiments.run.lock import remove_stale_temporaries

        self.path = path
        remove_stale_temporaries(path.parent, f".{path.name}.tmp")  # a killed run's
        self.tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
        meta = {META_KEY: json.dumps(provenance, sort_keys=True).encode(),
                # `bot_<seat>` is the seat's lineup entry: its name is codes["bot"][entry]
                b"fbsim.codes": json.dumps({**GR.codes(), "bot": lineup.labels()}).encode()}
        self.schema = schema.with_metadata(meta)
        self.w = None
        with self._named():
            self.w = pq.ParquetWriter(self.tmp, self.schema, compression="zstd")

    @contextmanager
    def _named(self):
        """A failed write (a full disk) raised as an OSError naming the records file, its
        temporary removed."""
        try:
            yield
        except OSError as e:
            self.abort()
            raise write_error(e, self.path) from None

    def write(self, table: pa.Table) -> None:
        with self._named():
            self.w.write_table(table.replace_schema_metadata(self.schema.metadata))

    def close(self) -> None:
        from fbsim.experiments.run.lock import move_into_place

        with self._named():
            self.w.close()
        move_into_place(self.tmp, self.path)

    def abort(self) -> None:
        try:
            if self.w is not None:
                self.w.close()
        except OSError:
            pass  # (the file it was writing is removed anyway)
        self.tmp.unlink(missing_ok=True)


def format_report(res: SimulationResult) -> str:
    """The readable table `fbsim simulate` prints."""
    o = res.outcomes.iloc[0]
    n = int(o["games"])
    p = res.provenance
    players = int(o["players"])
    lines = [f"{n:,} games, {players} players, seed {p.get('seed')}, rules "
             f"{p.get('rules_hash')}, lineup {p.get('lineup')}", ""]

    def pct(x):
        return f"{100 * x:6.2f}%"

    def ci(lo, hi):
        return f"[{100 * lo:6.2f}, {100 * hi:6.2f}]"

    lines.append("Win rate (share of all games; 95% Wilson interval; fair share = seats / "
                 "(games x players))")
    lines.append(f"  {'':8} {'':16} {'rate':>7}  {'95% interval':16}  {'fair':>7}  "
                 f"{'per seat':>8}  {'legacy':>6}")
    for r in res.win_rates.itertuples(index=False):
        leg = o.get(f"legacy_mean_{r.name}", math.nan) if r.kind == "agenda" else math.nan
        lines.append(f"  {r.kind:8} {r.name:16} {pct(r.rate)}  {ci(r.ci_low, r.ci_high)}  "
                     f"{pct(r.fair_share)}  {pct(r.seat_rate):>8}  "
                     f"{'' if math.isnan(leg) else f'{leg:6.1f}'}")
    lines.append(f"  {'':8} {'everyone loses':16} {pct(o['everyone_loses_rate'])}  "
                 f"{ci(o['everyone_loses_ci_low'], o['everyone_loses_ci_high'])}")
    lines += ["", "Win rate by seat (place from the round-1 first player; fair share "
              f"{pct(1 / players).strip()})"]
    for r in res.seats.itertuples(index=False):
        lines.append(f"  seat {r.seat} (place {r.place})  {pct(r.rate)}  "
                     f"{ci(r.ci_low, r.ci_high)}")
    lines += ["", "Outcomes",
              f"  collapse           {pct(o['collapse_rate'])}  "
              f"{ci(o['collapse_ci_low'], o['collapse_ci_high'])}   at a world turn "
              f"{pct(o['collapse_world_rate']).strip()}, at a reveal "
              f"{pct(o['collapse_reveal_rate']).strip()}",
              "  final band         " + ", ".join(
                  f"{b} {pct(o[f'band_{b}']).strip()}" for b in L.BAND_NAMES),
              f"  final Dial         mean {o['dial_mean']:.1f} (sd {o['dial_sd']:.1f}); "
              f"quantiles 5/25/50/75/95%: {o['dial_q05']:.0f} / {o['dial_q25']:.0f} / "
              f"{o['dial_q50']:.0f} / {o['dial_q75']:.0f} / {o['dial_q95']:.0f} ppm",
              f"  rounds played      {o['rounds_mean']:.2f} on average",
              "", "Fog (per game unless stated)",
              f"  masks used per seat {o['masks_used_per_seat']:.2f}; pot paid in "
              f"{o['fog_in_per_game']:.2f}, requested {o['fog_requested_per_game']:.2f}, "
              f"received {o['fog_received_per_game']:.2f} Capital",
              f"  over-claims: {o['overclaim_per_game']:.2f} Capital received beyond own "
              f"payments; {pct(o['overclaimer_share']).strip()} of seats over-claimed"]
    return "\n".join(lines) + "\n"
