"""PNG figures of a sweep dataset (`fbsim plot RESULTS`).

- `win_rates.png`: win rate per Agenda against the varied parameter, 95% bands, one panel per
  table size, with each Agenda's fair share dashed;
- `collapse.png`: collapse and everyone-loses rates against the parameter;
- `heatmap_<agenda>.png`: for two-parameter sweeps, each Agenda's win rate over the grid.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from fbsim.errors import UsageError  # noqa: E402
from fbsim.game import layout as L  # noqa: E402

COLOURS = {"steward": "#2a9d8f", "opportunist": "#e9c46a", "accelerationist": "#e76f51"}
LABELS = {"baseline_offset": "baseline offset (ppm per round)", "masks": "Masks per player",
          "bots.fog-grabber.greed": "Fog-grabber greed (share of the rest of the pot)",
          "stagger": "staggered Capital per place",
          "seat_bot": "seat played by another bot (SEAT=BOT)"}


def label(key: str) -> str:
    return LABELS.get(key, key)


def _x_positions(values: pd.Series) -> tuple[np.ndarray, list[str] | None]:
    """Numeric values as they are; anything else as evenly spaced categories."""
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return values.to_numpy(dtype=float), None
    cats = list(dict.fromkeys(values.astype(str)))
    return np.array([cats.index(v) for v in values.astype(str)], dtype=float), cats


def _panels(n: int):
    cols = min(n, 2)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6.4 * cols, 4.2 * rows), squeeze=False,
                             sharey=True)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def _setup_x(ax, cats, xlab, xs=None):
    ax.set_xlabel(xlab)
    if cats is None and xs is not None and np.all(np.equal(np.mod(xs, 1), 0)):
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if cats is not None:
        ax.set_xticks(range(len(cats)))
        ax.set_xticklabels([c if c else "(none)" for c in cats], rotation=30, ha="right")
    ax.grid(alpha=0.3)


def _fixed_other(df: pd.DataFrame, x: str, coords: list[str]) -> pd.DataFrame:
    """For a grid over several keys, keep the other keys at their baseline values."""
    others = [c for c in coords if c not in (x, "players")]
    if not others:
        return df
    keep = np.ones(len(df), dtype=bool)
    for size, grp in df.groupby("players"):
        base = grp[grp["point"] == grp["baseline_point"]]
        if base.empty:
            continue
        b = base.iloc[0]
        for c in others:
            keep &= ~((df["players"] == size) & (df[c].astype(str) != str(b[c])))
    return df[keep]


def plot_win_rates(win: pd.DataFrame, x: str, coords: list[str], path: Path) -> Path:
    ag = _fixed_other(win[win["kind"] == "agenda"], x, coords)
    sizes = sorted(ag["players"].unique())
    fig, axes = _panels(len(sizes))
    for ax, n in zip(axes, sizes, strict=True):
        sub = ag[ag["players"] == n]
        for a in L.AGENDA_NAMES:
            s = sub[sub["name"] == a]
            if s.empty:
                continue
            xs, cats = _x_positions(s[x])
            order = np.argsort(xs, kind="stable")
            xs = xs[order]
            c = COLOURS[a]
            ax.plot(xs, 100 * s["rate"].to_numpy()[order], marker="o", ms=3.5, color=c,
                    label=a)
            ax.fill_between(xs, 100 * s["ci_low"].to_numpy()[order],
                            100 * s["ci_high"].to_numpy()[order], color=c, alpha=0.25,
                            lw=0)
            ax.plot(xs, 100 * s["fair_share"].to_numpy()[order], ls="--", lw=1, color=c,
                    alpha=0.7)
        _setup_x(ax, cats, label(x), xs)
        ax.set_title(f"{n} players")
        ax.set_ylabel("games won (%)")
        ax.set_ylim(-2, 102)
    axes[0].legend(loc="upper left", fontsize=8, title="Agenda (dashed: fair share)",
                   title_fontsize=8)
    fig.suptitle(textwrap.fill(f"Win rate per Agenda against {label(x)} (95% Wilson bands)",
                               60 * min(len(sizes), 2)))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_collapse(out: pd.DataFrame, x: str, coords: list[str], path: Path) -> Path:
    out = _fixed_other(out, x, coords)
    fig, ax = plt.subplots(figsize=(7.5, 4.4))
    cmap = plt.get_cmap("viridis")
    sizes = sorted(out["players"].unique())
    cats = None
    for i, n in enumerate(sizes):
        s = out[out["players"] == n]
        xs, cats = _x_positions(s[x])
        order = np.argsort(xs, kind="stable")
        xs = xs[order]
        c = cmap(i / max(1, len(sizes) - 1) * 0.85)
        ax.plot(xs, 100 * s["collapse_rate"].to_numpy()[order], marker="o", ms=3.5, color=c,
                label=f"{n} players: collapse")
        ax.fill_between(xs, 100 * s["collapse_ci_low"].to_numpy()[order],
                        100 * s["collapse_ci_high"].to_numpy()[order], color=c, alpha=0.25,
                        lw=0)
        ax.plot(xs, 100 * s["everyone_loses_rate"].to_numpy()[order], ls=":", color=c,
                label=f"{n} players: everyone loses")
    _setup_x(ax, cats, label(x), xs)
    ax.set_ylabel("games (%)")
    ax.set_title(f"Collapse rate against {label(x)}\n(95% bands; dotted: everyone loses)",
                 fontsize=10)
    ax.legend(fontsize=7, ncol=2, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_heatmaps(win: pd.DataFrame, x: str, y: str, folder: Path) -> list[Path]:
    paths = []
    ag = win[win["kind"] == "agenda"]
    sizes = sorted(ag["players"].unique())
    for a in L.AGENDA_NAMES:
        sub = ag[ag["name"] == a]
        fig, axes = _panels(len(sizes))
        for ax, n in zip(axes, sizes, strict=True):
            grid = sub[sub["players"] == n].pivot_table(index=y, columns=x, values="rate")
            im = ax.imshow(100 * grid.to_numpy(), origin="lower", aspect="auto",
                           cmap="magma", vmin=0, vmax=100)
            ax.set_xticks(range(len(grid.columns)))
            ax.set_xticklabels([f"{v:g}" if isinstance(v, float) else str(v)
                                for v in grid.columns], rotation=30, ha="right")
            ax.set_yticks(range(len(grid.index)))
            ax.set_yticklabels([f"{v:g}" if isinstance(v, float) else str(v)
                                for v in grid.index])
            ax.set_xlabel(label(x))
            ax.set_ylabel(label(y))
            ax.set_title(f"{n} players")
            if grid.size <= 64:
                for (i, j), v in np.ndenumerate(100 * grid.to_numpy()):
                    ax.text(j, i, f"{v:.0f}", ha="center", va="center", fontsize=7,
                            color="white" if v < 60 else "black")
            fig.colorbar(im, ax=ax, label="games won (%)")
        fig.suptitle(f"{a.capitalize()} win rate")
        fig.tight_layout()
        path = folder / f"heatmap_{a}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def plot_dataset(results: str | Path, out: str | Path | None = None, x: str | None = None
                 ) -> list[Path]:
    from fbsim.experiments.run.lock import output_lock
    from fbsim.experiments.run.sweep import coordinate_columns, load

    results = Path(results)
    tables = load(results)
    win, outc = tables["win_rates"], tables["outcomes"]
    coords = coordinate_columns(outc)
    varied = [c for c in coords if c != "players" and outc[c].astype(str).nunique() > 1]
    if x is None:
        x = varied[0] if varied else "players"
    elif x not in coords:
        raise UsageError(f"--x: '{x}' is not a column of this sweep (columns: "
                         f"{', '.join(coords)})")
    folder = Path(out) if out is not None else results / "plots"
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--out {folder}: exists and is not a folder")
    from fbsim.experiments.run.provenance import check_places
    from fbsim.game import layout as L

    check_places(files=[folder / name for name in ("win_rates.png", "collapse.png", *(
        f"heatmap_{a}.png" for a in L.AGENDA_NAMES))])  # (before the lock and any figure)
    with output_lock(folder):
        paths = [plot_win_rates(win, x, coords, folder / "win_rates.png"),
                 plot_collapse(outc, x, coords, folder / "collapse.png")]
        others = [c for c in varied if c != x]
        if len(others) == 1:
            paths += plot_heatmaps(win, x, others[0], folder)
    return paths
