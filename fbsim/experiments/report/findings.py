"""Sentences with the key numbers of a sweep, for the experiments' summary.md files."""

from __future__ import annotations

import pandas as pd

from fbsim.game import layout as L


def pct(x: float, digits: int = 2) -> str:
    return f"{100 * x:.{digits}f}%"


def ci(lo: float, hi: float) -> str:
    return f"[{100 * lo:.2f}, {100 * hi:.2f}]"


def _fmt(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def agenda_line(t: dict, point: int) -> str:
    win = t["win_rates"]
    rows = win[(win["point"] == point) & (win["kind"] == "agenda")]
    parts = [f"{r['name']} {pct(r['rate'])} {ci(r['ci_low'], r['ci_high'])} (fair "
             f"{pct(r['fair_share'], 1)})" for r in rows.to_dict("records")]
    return "; ".join(parts)


def collapse_line(t: dict, point: int) -> str:
    o = t["outcomes"].set_index("point").loc[point]
    return (f"collapse {pct(o['collapse_rate'], 2)} "
            f"{ci(o['collapse_ci_low'], o['collapse_ci_high'])}"
            f", everyone loses {pct(o['everyone_loses_rate'], 2)}, final Dial median "
            f"{o['dial_q50']:.0f} (90% within {o['dial_q05']:.0f}..{o['dial_q95']:.0f})")


def _best_balanced(group: pd.DataFrame) -> pd.Series:
    """The point whose Agenda win rates lie closest to their fair shares (largest gap
    smallest)."""
    gap = (group["rate"] - group["fair_share"]).abs().groupby(group["point"]).max()
    return gap.sort_values(kind="stable")


def by_size_sweep(t: dict, x: str) -> list[str]:
    """Per table size: the two ends of the sweep, the paired change between them, the most
    balanced point and where collapse starts."""
    win, out = t["win_rates"], t["outcomes"]
    lines = []
    for n in sorted(out["players"].unique()):
        o = out[out["players"] == n]
        ag = win[(win["players"] == n) & (win["kind"] == "agenda")]
        first, last = o.iloc[0], o.iloc[-1]
        base = o[o["point"] == o["baseline_point"]].iloc[0]
        acc = ag[ag["name"] == "accelerationist"].set_index("point")
        stw = ag[ag["name"] == "steward"].set_index("point")
        lines.append(
            f"{n} players, {x} = {_fmt(first[x])} .. {_fmt(last[x])} (baseline "
            f"{_fmt(base[x])}): Accelerationist {pct(acc.loc[first['point'], 'rate'])} .. "
            f"{pct(acc.loc[last['point'], 'rate'])}, Steward "
            f"{pct(stw.loc[first['point'], 'rate'])} .. {pct(stw.loc[last['point'], 'rate'])}, "
            f"collapse {pct(first['collapse_rate'], 2)} .. {pct(last['collapse_rate'], 2)}.")
        gap = _best_balanced(ag)
        best = int(gap.index[0])
        bo = o.set_index("point").loc[best]
        lines.append(f"  most balanced at {x} = {_fmt(bo[x])}: largest gap to a fair share "
                     f"{pct(gap.iloc[0])}; {agenda_line(t, best)}.")
        for p in o["point"]:
            if p == base["point"]:
                continue
            r = acc.loc[p]
            if r["significant"]:
                continue
            v = _fmt(o.set_index("point").loc[p, x])
            lines.append(f"  {x} = {v}: no difference detected in the Accelerationist's win "
                         f"rate from the baseline's (paired difference {100 * r['diff']:+.2f} "
                         f"points, {ci(r['diff_ci_low'], r['diff_ci_high'])}, "
                         f"{int(r['changed_games']):,} games changed; Holm-corrected over "
                         f"the sweep).")
        coll = o[o["collapse_rate"] >= 0.05]
        if not coll.empty:
            c = coll.iloc[0]
            lines.append(f"  collapse reaches 5% of games at {x} = {_fmt(c[x])} "
                         f"({pct(c['collapse_rate'], 1)}).")
    return lines


def seat_lines(t: dict, x: str) -> list[str]:
    seats = t["seats"]
    lines = []
    for n in sorted(seats["players"].unique()):
        for v, grp in seats[seats["players"] == n].groupby(x, sort=True):
            rates = ", ".join(f"{pct(r['rate'])}" for r in grp.sort_values("place")
                              .to_dict("records"))
            spread = grp["rate"].max() - grp["rate"].min()
            lines.append(f"{n} players, {x} = {_fmt(v)}: win rate by place from the first "
                         f"player {rates} (spread {100 * spread:.1f} points, fair "
                         f"{pct(1 / n)})")
    return lines


def hoarder_lines(t: dict) -> list[str]:
    win, seats = t["win_rates"], t["seats"]
    lines = []
    for n in sorted(win["players"].unique()):
        base = seats[(seats["players"] == n) & (seats["seat_bot"].astype(str) == "")]
        rows = win[(win["players"] == n) & (win["kind"] == "bot") & (win["name"] == "hoarder")]
        parts = []
        for r in rows.to_dict("records"):
            k = int(str(r["seat_bot"]).split("=")[0])
            b = base[base["seat"] == k]
            was = f" (default bot there {pct(b['rate'].iloc[0])})" if not b.empty else ""
            parts.append(f"seat {k} {pct(r['seat_rate'])}{was}")
        lines.append(f"{n} players: the hoarder wins " + "; ".join(parts)
                     + f" of its games; fair share {pct(1 / n)}.")
    return lines


def point_table(t: dict, x: str | None) -> list[str]:
    """A markdown table: each point's Agenda win rates and collapse rate."""
    win, out = t["win_rates"], t["outcomes"]
    cols = ["players"] + ([x] if x and x != "players" else [])
    head = ("| " + " | ".join(cols) + " | games | " + " | ".join(L.AGENDA_NAMES)
            + " | everyone loses | collapse |")
    lines = [head, "|" + "---|" * (len(cols) + 6)]
    for o in out.to_dict("records"):
        ag = win[(win["point"] == o["point"]) & (win["kind"] == "agenda")].set_index("name")
        half = (ag["ci_high"] - ag["ci_low"]) / 2
        cells = [f"{pct(ag.loc[a, 'rate'])} ±{100 * half[a]:.2f}" for a in L.AGENDA_NAMES]
        vals = [_fmt(o[c]) if str(o[c]) else "(none)" for c in cols]
        lines.append("| " + " | ".join(vals) + f" | {o['games']:,} | " + " | ".join(cells)
                     + f" | {pct(o['everyone_loses_rate'], 2)} | {pct(o['collapse_rate'], 2)} |")
    return lines
