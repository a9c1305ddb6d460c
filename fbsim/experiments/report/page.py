"""The balance report as one self-contained HTML page: figures embedded as PNG data, no
script, no server, no file beside it; `write_html(report, path)`.

The page reads top to bottom: the verdict in words and numbers, then one section per
question (who wins, how the world ends, the Dial round by round, seat advantage, the Fog pot,
Accusations, exploitability), each a figure and a table. With old rules (`--against`) every
cell shows old -> new and the paired difference with its 95% interval; differences that are
not significant after Holm's correction over the whole page are greyed and marked "no difference
detected"; a rate's cell also counts the games whose outcome changed.
"""

from __future__ import annotations

import base64
import html
import io
import math
import os
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from fbsim.errors import UsageError  # noqa: E402
from fbsim.experiments.metrics.definitions import DIAL_HIST_LO, SECTIONS  # noqa: E402
from fbsim.experiments.metrics.stats import hist_quantile  # noqa: E402
from fbsim.experiments.report.model import BalanceReport  # noqa: E402
from fbsim.experiments.report.plots import COLOURS  # noqa: E402
from fbsim.experiments.run.lock import move_into_place  # noqa: E402
from fbsim.game import layout as L  # noqa: E402

BAND_COLOURS = {"warming": "#8ecae6", "severe": "#ffb703", "extreme": "#fb8500",
                "collapse": "#6a040f"}
FAN = (0.05, 0.25, 0.5, 0.75, 0.95)
OLD = "#8d99ae"  # the old rules, in every figure


# ------------------------------------------------------------------------------ figures


def _data_uri(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=96, bbox_inches="tight",
                metadata={"Software": None})  # no version string: the same bytes each run
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _rows(rep: BalanceReport, n: int):
    return rep.metrics[rep.metrics["players"] == n].set_index("metric")


def _err(r, old: bool = False) -> tuple[float, list[list[float]]]:
    p = "old_" if old else ""
    v = r[f"{p}value"]
    return v, [[max(0.0, v - r[f"{p}ci_low"])], [max(0.0, r[f"{p}ci_high"] - v)]]


def _bars(ax, rep: BalanceReport, keys: list[str], colours: list[str], labels: list[str],
          scale: float = 100.0, fair: bool = False):
    """Grouped bars: a group per table size, a bar per key (old rules hatched beside)."""
    sizes = [t.players for t in rep.tables]
    per = len(keys) * (2 if rep.paired else 1)
    width = 0.8 / per
    for i, n in enumerate(sizes):
        rows = _rows(rep, n)
        j = 0
        for key, colour, lab in zip(keys, colours, labels, strict=True):
            r = rows.loc[key]
            for old in ((True, False) if rep.paired else (False,)):
                x = i - 0.4 + width * (j + 0.5)
                v, e = _err(r, old)
                ax.bar(x, v * scale, width * 0.92, yerr=np.array(e) * scale, capsize=2,
                       color=colour, alpha=0.45 if old else 1.0, hatch="//" if old else None,
                       edgecolor="white" if not old else colour,
                       label=(f"{lab} (old)" if old else lab) if i == 0 else None)
                fs = r["old_fair_share" if old else "fair_share"] if fair else math.nan
                if not math.isnan(fs):
                    ax.plot([x - width / 2, x + width / 2], [fs * scale] * 2, color="black",
                            lw=1.6, label="fair share" if (i == 0 and j == 0) else None)
                j += 1
    ax.set_xticks(range(len(sizes)), [f"{n} players" for n in sizes])
    ax.grid(axis="y", alpha=0.3)


def fig_wins(rep: BalanceReport) -> str:
    fig, ax = plt.subplots(figsize=(9, 3.8))
    _bars(ax, rep, [f"win_{a}" for a in L.AGENDA_NAMES], [COLOURS[a] for a in L.AGENDA_NAMES],
          [a.capitalize() for a in L.AGENDA_NAMES], fair=True)
    ax.set_ylabel("share of games won (%)")
    ax.set_ylim(0, min(100, _top(rep, [f"win_{a}" for a in L.AGENDA_NAMES]) * 108 + 2))
    ax.set_title("Win rate per Agenda, 95% intervals; black ticks: fair share")
    _legend_below(ax)
    return _data_uri(fig)


def _top(rep: BalanceReport, keys: list[str]) -> float:
    df = rep.metrics[rep.metrics["metric"].isin(keys)]
    cols = ["ci_high", "fair_share"] + (["old_ci_high", "old_fair_share"] if rep.paired
                                        else [])
    return float(np.nanmax(df[cols].to_numpy(dtype=float)))


def _legend_below(ax, ncol: int = 4) -> None:
    ax.legend(fontsize=8, ncol=ncol, loc="upper center", bbox_to_anchor=(0.5, -0.12),
              frameon=False)


def fig_outcomes(rep: BalanceReport) -> str:
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.55 * len(rep.tables) * (2 if rep.paired
                                                                            else 1)))
    labels, y = [], 0
    for t in rep.tables:
        rows = _rows(rep, t.players)
        for old in ((True, False) if rep.paired else (False,)):
            left = 0.0
            for b in L.BAND_NAMES:
                v = rows.loc[f"band_{b}"]["old_value" if old else "value"] * 100
                ax.barh(y, v, left=left, color=BAND_COLOURS[b], alpha=0.5 if old else 1,
                        hatch="//" if old else None,
                        label=b.capitalize() if y == 0 else None)
                if v >= 6:
                    ax.text(left + v / 2, y, f"{v:.0f}%", ha="center", va="center",
                            fontsize=8)
                left += v
            labels.append(f"{t.players}p" + (" old" if old else (" new" if rep.paired
                                                                   else "")))
            y += 1
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of games by band of the final Dial (%)")
    ax.set_title(textwrap.fill("Final bands (R-E2): " + per_rules(rep, band_ranges), 110))
    ax.legend(fontsize=8, ncol=4, loc="lower center", bbox_to_anchor=(0.5, -0.62 if len(
        labels) < 3 else -0.4))
    return _data_uri(fig)


def band_ranges(rules) -> str:
    """R-E2: the readings of each band under `rules`, e.g. "Warming < 510, Severe 510-549,
    Extreme 550-599, Collapse >= 600"."""
    d = rules.dial
    warming, severe, extreme, collapse = (b.capitalize() for b in L.BAND_NAMES)
    return (f"{warming} < {d.severe}, {severe} {d.severe}-{d.extreme - 1}, "
            f"{extreme} {d.extreme}-{d.collapse - 1}, {collapse} >= {d.collapse}")


def band_edges(rules) -> str:
    """R-E2: the first reading of each band above Warming under `rules`."""
    return f"{rules.dial.severe}, {rules.dial.extreme}, {rules.dial.collapse}"


def per_rules(rep: BalanceReport, text) -> str:
    """`text(rules)` of the rules of the tables shown (the old rules too, when comparing):
    once when they all agree, else each with the tables it describes."""
    labels: dict[str, list[str]] = {}
    for t in rep.tables:
        labels.setdefault(text(t.rules), []).append(f"{t.players}p")
        if rep.paired:
            labels.setdefault(text(t.old_rules), []).append(f"{t.players}p old")
    if len(labels) == 1:
        return next(iter(labels))
    return "; ".join(f"{', '.join(who)}: {what}" for what, who in labels.items())


def _panels(k: int, height: float = 3.0):
    cols = min(k, 2)
    rows = -(-k // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.8 * cols, height * rows), squeeze=False)
    for ax in axes.flat[k:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:k])


def _band_lines(ax, rules, vertical: bool) -> None:
    for v in (rules.dial.severe, rules.dial.extreme, rules.dial.collapse):
        (ax.axvline if vertical else ax.axhline)(v, color="black", lw=0.6, ls=":", alpha=0.7)


def fig_final_dial(rep: BalanceReport) -> str:
    fig, axes = _panels(len(rep.tables))
    for ax, t in zip(axes, rep.tables, strict=True):
        for counts, old in ((t.old_counts, True), (t.counts, False)) if rep.paired else (
                (t.counts, False),):
            h = counts["dial_hist"]
            nz = np.flatnonzero(h)
            lo, hi = max(0, nz.min() - 3), min(len(h), nz.max() + 4)
            x = np.arange(lo, hi) + DIAL_HIST_LO
            share = h[lo:hi] / h.sum() * 100
            ax.step(x, share, where="mid", color=OLD if old else "#264653",
                    ls="--" if old else "-", lw=1.2, label="old" if old else (
                        "new" if rep.paired else None))
            if not old:
                ax.fill_between(x, share, step="mid", alpha=0.25, color="#264653")
        _band_lines(ax, t.rules, vertical=True)
        ax.set_title(f"{t.players} players", fontsize=10)
        ax.set_xlabel("final Dial (ppm)")
        ax.set_ylabel("% of games per ppm")
        if rep.paired:
            ax.legend(fontsize=8)
    fig.suptitle(textwrap.fill("Distribution of the final Dial (dotted: band edges "
                               + per_rules(rep, band_edges) + ")", 110))
    fig.tight_layout()
    return _data_uri(fig)


def trajectory(counts: dict, rules) -> np.ndarray:
    """[len(FAN), rounds + 1]: the Dial's quantiles at the start and as each round ended."""
    hists = counts["dial_round_hist"]
    out = np.empty((len(FAN), hists.shape[0] + 1))
    out[:, 0] = rules.dial.start
    for r in range(hists.shape[0]):
        out[:, r + 1] = [hist_quantile(hists[r], q, DIAL_HIST_LO) for q in FAN]
    return out


def fig_trajectory(rep: BalanceReport) -> str:
    fig, axes = _panels(len(rep.tables), 3.2)
    for ax, t in zip(axes, rep.tables, strict=True):
        q = trajectory(t.counts, t.rules)
        x = np.arange(q.shape[1])
        ax.fill_between(x, q[0], q[4], color="#e76f51", alpha=0.18, label="5-95%")
        ax.fill_between(x, q[1], q[3], color="#e76f51", alpha=0.35, label="25-75%")
        ax.plot(x, q[2], color="#9d0208", lw=1.8, label="median")
        if rep.paired:
            o = trajectory(t.old_counts, t.old_rules)
            xo = np.arange(o.shape[1])
            ax.plot(xo, o[2], color=OLD, ls="--", lw=1.5, label="old median")
            ax.plot(xo, o[0], color=OLD, ls=":", lw=1)
            ax.plot(xo, o[4], color=OLD, ls=":", lw=1, label="old 5% / 95%")
        _band_lines(ax, t.rules, vertical=False)
        ax.set_xticks(x)
        ax.set_xlabel("round (0: setup; r: as round r ended)")
        ax.set_ylabel("Dial (ppm)")
        ax.set_title(f"{t.players} players", fontsize=10)
        ax.grid(alpha=0.2)
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle("The Dial round by round: quantiles over games (a game that collapsed "
                 "stays at its final Dial)")
    fig.tight_layout()
    return _data_uri(fig)


def fig_seats(rep: BalanceReport) -> str:
    fig, axes = _panels(len(rep.tables), 2.6)
    for ax, t in zip(axes, rep.tables, strict=True):
        rows = _rows(rep, t.players)
        for old in ((True, False) if rep.paired else (False,)):
            xs = np.arange(t.players) + (-0.18 if old else (0.18 if rep.paired else 0))
            vals, errs = [], [[], []]
            for p in range(t.players):
                v, e = _err(rows.loc[f"win_place_{p}"], old)
                vals.append(v * 100)
                errs[0].append(e[0][0] * 100)
                errs[1].append(e[1][0] * 100)
            ax.bar(xs, vals, 0.34 if rep.paired else 0.6, yerr=errs, capsize=2,
                   color=OLD if old else "#457b9d", hatch="//" if old else None,
                   alpha=0.6 if old else 1, label="old" if old else (
                       "new" if rep.paired else None))
        ax.axhline(100 / t.players, color="black", lw=1.2, ls="--", label="fair share")
        ax.set_xticks(range(t.players), [f"place {p}" for p in range(t.players)])
        ax.set_ylabel("games won (%)")
        ax.set_title(f"{t.players} players", fontsize=10)
        ax.legend(fontsize=7)
    fig.suptitle("Win rate by place in turn order (place 0: the round-1 first player)")
    fig.tight_layout()
    return _data_uri(fig)


def fig_fog(rep: BalanceReport) -> str:
    fig, ax = plt.subplots(figsize=(9, 3.4))
    keys = ["fog_in", "fog_requested", "fog_received", "overclaim"]
    _bars(ax, rep, keys, ["#264653", "#2a9d8f", "#e9c46a", "#e76f51"],
          ["paid into the pot", "requested", "received", "over-claimed"], scale=1.0)
    ax.set_ylabel("Capital per game")
    ax.set_title("The Fog pot: what masked BURNs put in, what claims asked and got")
    _legend_below(ax)
    return _data_uri(fig)


def fig_accusation(rep: BalanceReport) -> str:
    fig, ax = plt.subplots(figsize=(9, 3.4))
    _bars(ax, rep, ["accuracy", "points_at_accelerationists", "reveal_share"],
          ["#e76f51", "#f4a261", "#6d597a"],
          ["cornered was an Accelerationist", "points aimed at Accelerationists",
           "cornered players who revealed"])
    sizes = [t.players for t in rep.tables]
    for i, t in enumerate(rep.tables):
        dealt = t.counts["dealt"]
        chance = dealt[L.ACCELERATIONIST] / dealt.sum() * 100
        ax.plot([i - 0.4, i + 0.4], [chance] * 2, color="black", ls="--", lw=1,
                label="Accelerationists' share of seats" if i == 0 else None)
    ax.set_xticks(range(len(sizes)), [f"{n} players" for n in sizes])
    ax.set_ylabel("%")
    ax.set_ylim(0, 105)
    ax.set_title("Accusations (R-A1..R-A5): how often the crowd finds the Accelerationist")
    _legend_below(ax, ncol=2 if not rep.paired else 3)
    return _data_uri(fig)


def fig_exploit(df) -> str:
    fig, ax = plt.subplots(figsize=(9, 3.4))
    labels = []
    for i, r in enumerate(df.itertuples()):
        c = COLOURS[r.agenda]
        ax.bar(i - 0.18, r.field_rate * 100, 0.36, color=c, alpha=0.45, hatch="//",
               yerr=[[100 * (r.field_rate - r.field_ci_low)],
                     [100 * (r.field_ci_high - r.field_rate)]], capsize=2)
        ax.bar(i + 0.18, r.best_rate * 100, 0.36, color=c,
               yerr=[[100 * (r.best_rate - r.best_ci_low)],
                     [100 * (r.best_ci_high - r.best_rate)]], capsize=2)
        labels.append(f"{r.agenda[:5].capitalize()}.\n{r.players}p")
    ax.set_xticks(range(len(labels)), labels, fontsize=7)
    ax.set_ylabel("share of games won (%)")
    ax.set_title("Exploitability: the field (hatched) vs a searched best response")
    return _data_uri(fig)


FOREST = [f"win_{a}" for a in L.AGENDA_NAMES] + ["everyone_loses", "collapse"]


def fig_forest(rep: BalanceReport) -> str:
    df = rep.metrics[rep.metrics["metric"].isin(FOREST)]
    fig, ax = plt.subplots(figsize=(9, 0.6 + 0.26 * len(df)))
    labels = []
    for y, r in enumerate(df.itertuples()):
        colour = "#d62828" if r.significant else "#adb5bd"
        ax.errorbar(r.diff * 100, y, xerr=[[100 * (r.diff - r.diff_ci_low)],
                                           [100 * (r.diff_ci_high - r.diff)]],
                    fmt="o", color=colour, capsize=2, ms=4)
        labels.append(f"{r.players}p {r.label}")
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("new - old (percentage points), paired 95% interval")
    ax.set_title("What changed: red = significant after Holm's correction, grey = noise")
    ax.grid(axis="x", alpha=0.3)
    return _data_uri(fig)


# ------------------------------------------------------------------------------- tables


def _fmt(v: float, kind: str, signed: bool = False) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if kind == "mean":
        return f"{v:+.2f}" if signed else f"{v:.2f}"
    return f"{100 * v:+.1f}" if signed else f"{100 * v:.1f}%"


def _interval(lo: float, hi: float, kind: str, signed: bool = False) -> str:
    if math.isnan(lo) or math.isnan(hi):
        return ""
    return f"[{_fmt(lo, kind, signed)}, {_fmt(hi, kind, signed)}]"


def _cell(r, paired: bool) -> str:
    kind = "mean" if r["kind"] == "mean" else "pct"
    fair = r["fair_share"]
    fair_txt = (f'<div class="fair">fair {_fmt(fair, kind)}</div>'
                if not math.isnan(fair) else "")
    if not paired:
        return (f'<td>{_fmt(r["value"], kind)} <span class="ci">'
                f'{_interval(r["ci_low"], r["ci_high"], kind)}</span>{fair_txt}</td>')
    unit = " pts" if kind == "pct" else ""
    changed = r.get("changed_games", math.nan)
    if r["identical"]:
        bound = ("" if math.isnan(r["diff_ci_high"]) else
                 f' (difference within {_interval(r["diff_ci_low"], r["diff_ci_high"], kind, True)}'
                 f'{unit})')
        return (f'<td class="ns">{_fmt(r["value"], kind)}<div class="diff">identical in '
                f'every game{bound}</div></td>')
    sig = bool(r["significant"])
    mark = ('<span class="sig">significant</span>' if sig else
            '<span class="nsmark">no difference detected</span>')
    moved = "" if math.isnan(changed) else f" &middot; {int(changed):,} games changed"
    return (f'<td class="{"" if sig else "ns"}">{_fmt(r["old_value"], kind)} &rarr; '
            f'<b>{_fmt(r["value"], kind)}</b><div class="diff">'
            f'{_fmt(r["diff"], kind, True)}{unit} '
            f'{_interval(r["diff_ci_low"], r["diff_ci_high"], kind, True)} {mark}{moved}</div>'
            f'{fair_txt}</td>')


def section_table(rep: BalanceReport, section: str) -> str:
    df = rep.metrics[rep.metrics["section"] == section]
    sizes = [t.players for t in rep.tables]
    head = "".join(f"<th>{n} players</th>" for n in sizes)
    body = []
    # rows in the order of the table size that has the most (a metric another size lacks,
    # e.g. three Stewards dealt, keeps its place among its own)
    order: dict[str, None] = {}
    for n in sorted(sizes, key=lambda n: -int((df["players"] == n).sum())):
        order.update(dict.fromkeys(df.loc[df["players"] == n, "metric"]))
    for key in order:
        rows = df[df["metric"] == key].set_index("players")
        first = rows.iloc[0]
        unit = f' <span class="unit">({html.escape(first["unit"])})</span>' if first[
            "unit"] else ""
        cells = "".join(_cell(rows.loc[n], rep.paired) if n in rows.index else
                        "<td>&ndash;</td>" for n in sizes)
        body.append(f"<tr><th class=\"metric\">{html.escape(first['label'])}{unit}</th>"
                    f"{cells}</tr>")
    return (f'<table><thead><tr><th></th>{head}</tr></thead><tbody>{"".join(body)}'
            f"</tbody></table>")


def exploit_table(df) -> str:
    rows = []
    for r in df.itertuples():
        rows.append(f"<tr><td>{r.players}</td><td>{r.agenda.capitalize()}</td>"
                    f"<td>{_fmt(r.field_rate, 'pct')}</td><td>{_fmt(r.best_rate, 'pct')}</td>"
                    f"<td>{_fmt(r.diff, 'pct', True)} pts "
                    f"{_interval(r.diff_ci_low, r.diff_ci_high, 'pct', True)}</td>"
                    f"<td>{html.escape(r.folder)}</td></tr>")
    return ("<table><thead><tr><th>players</th><th>Agenda</th><th>the field wins</th>"
            "<th>best response wins</th><th>gain (paired 95%)</th><th>result</th></tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table>")


# --------------------------------------------------------------------------------- page

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0;
       color: #1d1d1f; background: #fafafa; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 60px; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { margin-top: 1.8em; border-bottom: 2px solid #e76f51; padding-bottom: 4px; }
.meta { color: #555; font-size: 0.85em; }
.verdict { background: #fff; border-left: 6px solid #e76f51; padding: 10px 18px;
           box-shadow: 0 1px 3px rgba(0,0,0,.08); }
.verdict li { margin: 6px 0; line-height: 1.4; }
figure { margin: 12px 0; background: #fff; padding: 8px; box-shadow: 0 1px 3px rgba(0,0,0,.08); }
figure img { max-width: 100%; height: auto; display: block; margin: 0 auto; }
table { border-collapse: collapse; background: #fff; font-size: 0.86em; margin: 8px 0;
        box-shadow: 0 1px 3px rgba(0,0,0,.08); }
th, td { border: 1px solid #e0e0e0; padding: 5px 9px; text-align: right; vertical-align: top; }
th.metric { text-align: left; font-weight: 500; }
thead th { background: #f1f1f1; }
.ci, .fair, .unit { color: #777; font-size: 0.9em; }
.diff { font-size: 0.9em; }
.sig { color: #d62828; font-weight: 600; }
td.ns { color: #999; }
.nsmark { color: #999; font-style: italic; }
.notes { font-size: 0.85em; color: #444; line-height: 1.45; }
code { background: #eee; padding: 1px 4px; border-radius: 3px; }
"""


def _esc(x) -> str:
    return html.escape(str(x))


def render(rep: BalanceReport) -> str:
    """The page's HTML text."""
    p = rep.provenance
    sizes = [t.players for t in rep.tables]
    name = p.get("rules_file") or "the default rules"
    field = p.get("field") or "the default bots"
    if rep.paired:
        old = p.get("against_file") or "the default rules"
        old = "the default rules" if old == "default" else old
        extra = f" with {', '.join(p['against_sets'])}" if p.get("against_sets") else ""
        old_field = p.get("old_field", field)
        title = (f"{TITLE}: {name} against {old}{extra}, played by {field}"
                 if old_field == field else f"{TITLE}: {name} played by "
                 f"{field}, against {old}{extra} played by {old_field}")
    else:
        title = f"{TITLE}: {name}, played by {field}"
    sets = f"; --set {' '.join(p['sets'])}" if p.get("sets") else ""
    hashes = ", ".join(f"{n}p {h}" for n, h in p["rules_hash"].items())
    meta = (f"{p['games']:,} games per table size ({', '.join(map(str, sizes))} players), "
            f"seed {p['seed']}, lineup {_esc(p['lineup'])}{_esc(sets)}. Rules hash {hashes}")
    if rep.paired:
        meta += ("; old rules hash " + ", ".join(f"{n}p {h}" for n, h in
                                                 p["old_rules_hash"].items()))
    meta += (f". fbsim {p['fbsim_version']}, kernel version {p['kernel_version']}, rules "
             f"version {p['rules_version']}, revision {p.get('git_revision') or 'unknown'}, "
             f"{p['time']}.")
    parts = [f"{PAGE_HEAD}{_esc(title)}</title><style>{CSS}</style></head><body><main>",
             f"<h1>{_esc(title)}</h1><p class=\"meta\">{meta}</p>",
             "<h2>Verdict</h2><div class=\"verdict\"><ul>"
             + "".join(f"<li>{_esc(v)}</li>" for v in rep.verdict) + "</ul></div>"]

    def fig(uri: str, alt: str) -> str:
        return f'<figure><img src="{uri}" alt="{_esc(alt)}"></figure>'

    if rep.rulebook is not None:
        parts.append(rulebook_section(rep.rulebook))
    if rep.paired:
        parts.append("<h2>What changed</h2>" + fig(fig_forest(rep), "paired differences"))
    parts.append(f"<h2>{SECTIONS['wins']}</h2>" + fig(fig_wins(rep), "win rate per Agenda")
                 + section_table(rep, "wins"))
    if (rep.metrics["section"] == "deal").any():
        parts.append(f"<h2>{SECTIONS['deal']}</h2><p>Firebreak is won by one player: a seat's "
                     "chance to win given the Agenda it was dealt (the wins of the Agenda's "
                     "holders over the seats dealt it; fair share 1/players of the games "
                     "somebody wins), then the same by how many seats hold that Agenda, deals "
                     "that no player sees.</p>" + section_table(rep, "deal"))
    parts.append(f"<h2>{SECTIONS['world']}</h2>" + fig(fig_outcomes(rep), "final bands")
                 + fig(fig_final_dial(rep), "final Dial distribution")
                 + section_table(rep, "world"))
    parts.append("<h2>The Dial round by round</h2>"
                 + fig(fig_trajectory(rep), "Dial trajectory fan chart")
                 + trajectory_table(rep))
    parts.append(f"<h2>{SECTIONS['seats']}</h2>" + fig(fig_seats(rep), "win rate by place")
                 + section_table(rep, "seats"))
    parts.append(f"<h2>{SECTIONS['fog']}</h2>" + fig(fig_fog(rep), "Fog pot flows")
                 + section_table(rep, "fog"))
    parts.append(f"<h2>{SECTIONS['accusation']}</h2>"
                 + fig(fig_accusation(rep), "Accusation accuracy")
                 + section_table(rep, "accusation"))
    parts.append(f"<h2>{SECTIONS['legacy']}</h2>" + section_table(rep, "legacy"))
    if rep.maps:
        parts.append("<h2>Every equilibrium found</h2>" + map_section(rep.maps))
    parts.append("<h2>Exploitability</h2>" + exploit_section(rep))
    if rep.ladder:
        parts.append("<h2>How much skill pays</h2>" + ladder_section(rep.ladder))
    parts.append(notes(rep))
    parts.append("</main></body></html>\n")
    return "".join(parts)


def trajectory_table(rep: BalanceReport) -> str:
    rows = []
    for t in rep.tables:
        q = trajectory(t.counts, t.rules)
        o = trajectory(t.old_counts, t.old_rules) if rep.paired else None
        cells = []
        for r in range(1, q.shape[1]):
            txt = f"{q[2, r]:.0f} <span class=\"ci\">[{q[0, r]:.0f}, {q[4, r]:.0f}]</span>"
            if o is not None and r < o.shape[1]:
                txt = f"<span class=\"ci\">{o[2, r]:.0f} &rarr;</span> " + txt
            cells.append(f"<td>{txt}</td>")
        rows.append(f"<tr><th class=\"metric\">{t.players} players</th>{''.join(cells)}</tr>")
    rounds = max(t.rules.rounds for t in rep.tables)
    head = "".join(f"<th>round {r}</th>" for r in range(1, rounds + 1))
    what = ("median [5%, 95%] of the Dial as each round ended"
            + ("; old median &rarr; new" if rep.paired else ""))
    return (f"<p class=\"notes\">{what} (ppm)</p><table><thead><tr><th></th>{head}</tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table>")


def rulebook_section(doc: dict) -> str:
    """"Rules under strong play": the rules search of `fbsim tune --equilibrium` (its
    summary.json), each candidate judged at its own single-seat equilibrium."""
    t = doc["target"]
    moved = ", ".join(f"<code>{_esc(k)} = {_esc(v)}</code>" for k, v in doc["changes"].items())
    head = (f"<p><code>fbsim tune --equilibrium</code> ({_esc(doc['folder'])}) judged "
            f"{doc['trials']} candidate rule sets, each at its own single-seat equilibrium (the "
            "game as played, every player alone seeking the win), re-solved for it at every "
            "table size; its best were solved again from scratch, audited with single-seat "
            "best responses on fresh seeds and confirmed on fresh games. The target: every "
            f"Agenda's chance to win as a player within {_fmt(t['fair_band'], 'pct')} of "
            "1/players (the whole 95% interval) and no single seat gaining more than "
            f"{100 * t['gain']:g} points by switching strategy. "
            + ("<b>Found</b>: the recommended rules meet it at every table size."
               if doc["found"] else "<b>Not found</b>: no candidate met it; below is the "
               "closest reached, and why it falls short.")
            + ("" if doc.get("beats_unchanged", True) else " No candidate, re-solved from "
               "scratch and confirmed, came closer to fair than the rules unchanged, so none "
               "is recommended.")
            + f" Recommended changes: {moved or 'none'}"
            + (" (the rules of this page)." if doc["role"] == "recommended" else
               " (from the rules of this page).")
            + " Deviation gains found by a search are lower bounds of what exists.</p>")
    rows = []
    for n, x in doc["players"].items():
        before = doc["unchanged"]["sizes"].get(n, {}).get("player_win_rate", {})
        for a, r in x["agendas"].items():
            lo, hi = r["player_win_ci"]
            glo, ghi = r["seat_gain_ci"]
            rows.append(
                f"<tr><td>{n}</td><td>{a.capitalize()}</td>"
                f"<td>{_fmt(r['player_win_rate'], 'pct')} {_interval(lo, hi, 'pct')}</td>"
                f"<td>{_fmt(x['fair'], 'pct')}</td>"
                f"<td>{_fmt(before[a], 'pct') if before.get(a) is not None else '-'}</td>"
                f"<td>{_fmt(r['seat_deviation_gain'], 'pct', True)} "
                f"{_interval(glo, ghi, 'pct', True)}</td></tr>")
        rows.append(f"<tr><td>{n}</td><td>Collapse / everyone loses</td>"
                    f"<td>{_fmt(x['collapse']['rate'], 'pct')} / "
                    f"{_fmt(x['everyone_loses']['rate'], 'pct')}</td><td colspan=\"3\">"
                    + ("meets the target" if x["meets"] else
                       "short: " + _esc("; ".join(x["why"]))) + "</td></tr>")
    table = ("<table><thead><tr><th>players</th><th>Agenda</th><th>a player's chance, "
             "recommended rules at their equilibrium</th><th>fair</th><th>the rules unchanged"
             "*</th><th>single-seat gain, pts</th></tr></thead><tbody>" + "".join(rows)
             + "</tbody></table><p class=\"notes\">*the searched rules unchanged at their "
             "own equilibrium, warm-started with the candidates' budget (the search's first "
             "trial). The levers searched: "
             + ", ".join(f"<code>{_esc(k)}</code>" for k in doc["levers"]) + ".</p>")
    return "<h2>Rules under strong play</h2>" + head + table


def map_section(maps: dict) -> str:
    """`fbsim equilibrium --map`: per table size, every distinct single-seat equilibrium its
    cold starts reached, its basin share, each Agenda's chance to win as a player, Collapse,
    and the verdict over the map."""
    out = ["<p class=\"notes\">Many searches from scratch (<code>fbsim equilibrium --map"
           "</code>), each its own seed: the equilibria they reached told apart by their "
           "outcomes, each one's basin the share of the starts that reached it (95% "
           "interval; starts that did not converge count as unsettled). A table size is "
           "called fair only when every equilibrium with a basin share of at least 5% is: "
           "which equilibrium players reach is not theirs to choose. Each is an equilibrium "
           "of the planner family; where the searcher's audit ran it says whether it "
           "held.</p>"]
    for n, part in maps.items():
        m = part["map"]
        agendas = [a for a in L.AGENDA_NAMES  # (in the game's order, as the rest of the page)
                   if part["equilibria"] and a in part["equilibria"][0]["agendas"]]
        rows = []
        for i, e in enumerate(part["equilibria"]):
            lo, hi = e["basin_ci"]
            cells = "".join(
                f"<td>{_fmt(r['player_win_rate'], 'pct')} "
                f"{_interval(*r['player_win_ci'], 'pct')}</td>"
                for r in (e["agendas"][a] for a in agendas))
            held = {None: "not run", True: "held", False: "beaten"}[e["searcher_held"]]
            rows.append(f"<tr><td>#{i + 1}</td><td>{_fmt(e['basin_share'], 'pct')} "
                        f"{_interval(lo, hi, 'pct')}</td><td>{e['starts']} "
                        f"(seed{'s' if len(e['seeds']) > 1 else ''} "
                        f"{_esc(', '.join(map(str, e['seeds'])))})</td>{cells}"
                        f"<td>{_fmt(e['collapse'], 'pct')}</td>"
                        f"<td>{'fair' if e['fair'] else 'not fair'}</td><td>{held}</td></tr>")
        u = m["unsettled"]
        if u["starts"]:
            rows.append(f"<tr><td>unsettled</td><td>{_fmt(u['share'], 'pct')} "
                        f"{_interval(*u['ci'], 'pct')}</td><td>{u['starts']}</td>"
                        f"<td colspan=\"{len(agendas) + 3}\">did not converge within the "
                        "budget</td></tr>")
        head = "".join(f"<th>{_esc(a.capitalize())}</th>" for a in agendas)
        verdict = ("<b>fair</b>" if m["fair"] else "<b>not fair</b>") + " over the map"
        stopped = (f"stopped: {_esc(m['stopped'])}" if m["stopped"] else
                   "still growing: more starts may find more")
        out.append(f"<h3>{_esc(n)} players</h3><p>{m['starts']} cold starts, "
                   f"{len(part['equilibria'])} distinct equilibria; {verdict} (fair: every "
                   f"Agenda within {_fmt(m['fair_band'], 'pct')} of {_fmt(1 / int(n), 'pct')}, "
                   f"the whole interval); {stopped}.</p>"
                   f"<table><thead><tr><th></th><th>basin share</th><th>starts</th>{head}"
                   "<th>Collapse</th><th>balance</th><th>searcher</th></tr></thead><tbody>"
                   + "".join(rows) + "</tbody></table>")
    return "".join(out)


def ladder_section(rungs: list) -> str:
    """`fbsim ladder`'s rungs: per table size and Agenda, a player's chance at each rung."""
    from fbsim.experiments.search.ladder import RUNGS, ladder_rows

    rows = [f"<tr><td>{n}</td><td>{a}</td><td>{100 / n:.1f}%</td>"
            + "".join(f"<td>{_esc(c)}</td>" for c in cells) + "</tr>"
            for n, a, cells in ladder_rows(rungs)]
    head = "".join(f"<th>{_esc(k)}</th>" for k in RUNGS)
    return ("<p class=\"notes\">One seat at each rung of skill, every other seat the field "
            "(<code>fbsim ladder</code>): a player's chance to win given the Agenda dealt, and "
            "in brackets the rung's gain over the field's own strategy on the same games (95% "
            "intervals). The searcher's gain is a lower bound of what skill reaches.</p>"
            f"<table><tr><th>players</th><th>Agenda</th><th>fair</th>{head}</tr>"
            + "".join(rows) + "</table>")


def exploit_section(rep: BalanceReport) -> str:
    out = []
    for df, label in ((rep.exploit, "these rules"),) + (
            ((rep.old_exploit, "the old rules"),) if rep.paired else ()):
        if df is None:
            out.append(f"<p class=\"notes\">No <code>fbsim exploit</code> result was found "
                       f"for {label} (results are matched by rules hash); run "
                       f"<code>fbsim exploit --all</code> with the same rules to add one.</p>")
        else:
            out.append(f"<p class=\"notes\">Best responses found by <code>fbsim exploit"
                       f"</code> under {label}.</p>" + f'<figure><img src="{fig_exploit(df)}" '
                       f'alt="exploitability"></figure>' + exploit_table(df))
            c = rep.exploit_check if label == "these rules" else None
            if c and not c.get("unchecked"):
                out.append(
                    f"<p class=\"notes\">The largest gain above is the largest of {c['of']} "
                    f"searches, which overstates it; played again on {c['games']:,} fresh "
                    f"games (seed {c['seed']}), {c['agenda'].capitalize()} at {c['players']} "
                    f"players gains <b>{_fmt(c['diff'], 'pct', True)} pts</b> "
                    f"{_interval(c['diff_ci_low'], c['diff_ci_high'], 'pct', True)} "
                    f"({c['changed_games']:,} games changed winner), against "
                    f"{_fmt(c['found_diff'], 'pct', True)} pts when found.</p>")
    return "".join(out)


def notes(rep: BalanceReport) -> str:
    p = rep.provenance
    rules = f" --rules {p['rules_file']}" if p.get("rules_file") else ""
    text = [
        "Win rates are shares of all games, with 95% Wilson intervals; an Agenda's fair "
        "share is its share of the seats dealt times the share of games that somebody wins "
        "(a game that everyone loses has no winner to share, so fair shares add up to the "
        "win rates' total). Other numbers are means or ratios per game with 95% normal "
        "intervals (delta method).",
        "The Dial round by round counts a game that collapsed at its final Dial for the "
        "rounds it did not play; the quantiles come from exact per-round histograms "
        "counted from every game's record.",
        "Accusation accuracy is the share of cornered players (R-A3) who held the "
        "Accelerationist Agenda; the dashed line is what pointing at random would give.",
    ]
    if rep.paired:
        n_tests = int(rep.metrics["p_holm"].notna().sum())
        text.append(
            "Old and new rules played the same games (same seed and game index: common "
            "random numbers), so each difference is paired game by game, which makes its "
            "interval much narrower than two independent runs would. A rate's difference "
            "comes from the games whose outcome changed (their number is shown): Tango's "
            "score interval and McNemar's exact test, which stay right when few games change; "
            "when none changed the rate is identical in every game and the interval (about "
            "+-3.84/games) bounds what the games can hide. Other metrics have delta-method "
            "intervals and normal tests. A difference is "
            f"marked significant when its p-value, corrected with Holm's method over all "
            f"{n_tests} comparisons on this page, is below 5%; otherwise no difference is "
            "detected, which is not a proof of none: its interval says how large one could "
            "be. The intervals shown are per-comparison 95% intervals.")
    text.append(f"Every game can be replayed and narrated: <code>fbsim replay{_esc(rules)} "
                f"--players N --seed {p['seed']} --game G</code>. The numbers of this page "
                "are in the Parquet table written beside it.")
    return "<h2>How to read this page</h2><div class=\"notes\">" + "".join(
        f"<p>{t}</p>" for t in text) + "</div>"


def write_html(rep: BalanceReport, path: str | Path, text: str | None = None) -> Path:
    """Write the page (`text`, else `render(rep)`) atomically: a temporary file, renamed."""
    path = Path(path)
    text = render(rep) if text is None else text
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    move_into_place(tmp, path)
    return path


# how every page `render` writes begins: a file at --out that does not is not fbsim's page
PAGE_HEAD = ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
             'content="width=device-width, initial-scale=1"><title>')
TITLE = "Firebreak balance report"  # (every page's title begins so)


def check_output_page(path: Path, flag: str = "--out") -> None:
    """A page already at `path` must be one fbsim wrote (it begins as `render`'s do): a
    user's own file there is refused (UsageError), not overwritten."""
    if not (path.exists() or path.is_symlink()) or path.is_dir():
        return  # (a folder there is the option parser's to refuse)
    try:
        with open(path, "rb") as f:
            head = f.read(len((PAGE_HEAD + TITLE).encode()))
    except OSError as e:
        raise UsageError(f"{flag} {path}: unreadable ({e.strerror or e}); remove it or write "
                         "elsewhere") from None
    if head != (PAGE_HEAD + TITLE).encode():
        raise UsageError(f"{flag} {path}: exists and is not a balance report page that fbsim "
                         "wrote; remove it or write elsewhere")


def write_report(rep: BalanceReport, path: str | Path) -> list[Path]:
    """The HTML page at `path` and every number of it as a tidy Parquet table beside it
    (same name, .parquet); returns both paths. Both are written in full to temporary files
    first and only then renamed into place, one right after the other: a failed write (a
    full disk, Ctrl-C) leaves the previous page and table as they were, never one of each.
    The page states its run's start time and rules hashes, as the table's provenance does, so
    a reader can check that the two belong together."""
    from fbsim.experiments.run.lock import remove_stale_temporaries
    from fbsim.experiments.run.provenance import write_table_beside

    path = Path(path)
    table = path.with_suffix(".parquet")
    for name in (path.name, table.name):  # what a killed run left
        remove_stale_temporaries(path.parent, f".{name}.tmp")
    text = render(rep)  # the figures first: an interruption here leaves both files as they were
    page_tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    table_tmp = None
    try:
        page_tmp.write_text(text, encoding="utf-8")
        table_tmp = write_table_beside(rep.metrics, table,
                                       {**rep.provenance, "table": "balance metrics"})
        move_into_place(table_tmp, table)
        move_into_place(page_tmp, path)
    finally:
        for tmp in (page_tmp, table_tmp):
            if tmp is not None:
                tmp.unlink(missing_ok=True)
    return [path, table]
