"""Readable text of a sweep's tables (what `fbsim sweep` prints)."""

from __future__ import annotations

import math

from fbsim.game import layout as L


def _pct(x: float) -> str:
    return "   -  " if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:5.1f}"


def _diff(d: float, significant) -> str:
    if math.isnan(d):
        return ""
    mark = "*" if bool(significant) else " "
    return f"{100 * d:+5.1f}{mark}"


def format_sweep(res) -> str:
    from fbsim.experiments.run.sweep import coordinate_columns

    win, out = res.win_rates, res.outcomes
    coords = [c for c in coordinate_columns(out)]
    lines = [f"{len(out)} points, {res.games_played:,} games played now "
             f"({res.points_skipped} points were already done); tables in {res.out}/", "",
             *([f"Field: {res.field}.", ""] if res.field else []),
             "Win rate per Agenda in % (Wilson 95% interval half-width), paired difference "
             "vs the baseline point in points (* = significant after Holm's correction over "
             "the sweep's comparisons), collapse rate %"]
    head = "  ".join(f"{c[-18:]:>10}" for c in coords)
    lines.append(f"  {head}  {'games':>9}  " + "  ".join(
        f"{a:>20}" for a in L.AGENDA_NAMES) + f"  {'collapse':>14}")
    ag = win[win["kind"] == "agenda"]
    for od in out.to_dict("records"):
        cells = []
        rows = ag[ag["point"] == od["point"]].set_index("name")
        for a in L.AGENDA_NAMES:
            r = rows.loc[a]
            hw = (r["ci_high"] - r["ci_low"]) / 2
            base = " base " if od["point"] == od["baseline_point"] else _diff(
                r["diff"], r["significant"])
            cells.append(f"{_pct(r['rate'])} ±{100 * hw:3.1f} {base:>6}")
        col = (" base " if od["point"] == od["baseline_point"] else
               _diff(od["collapse_diff"], od["collapse_significant"]))
        vals = "  ".join(f"{str(od[c])[:10]:>10}" for c in coords)
        lines.append(f"  {vals}  {od['games']:>9,}  " + "  ".join(f"{c:>20}" for c in cells)
                     + f"  {_pct(od['collapse_rate'])} {col:>6}")
    return "\n".join(lines) + "\n"
