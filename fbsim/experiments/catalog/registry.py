"""Finding and running the named experiments (`fbsim experiment`).

Each experiment writes `results/NAME/`: the sweep dataset (win_rates, outcomes and seats
Parquet tables, with provenance), its PNG figures and a summary.md with the key numbers.
"""

from __future__ import annotations

import importlib
import pkgutil
import shlex
from functools import cache
from pathlib import Path

from fbsim import jsonfile
from fbsim.errors import UsageError
from fbsim.experiments import catalog

DEFAULT_GAMES = 1_000_000


@cache
def experiments() -> dict:
    mods = {}
    for info in sorted(pkgutil.iter_modules(catalog.__path__), key=lambda m: m.name):
        mod = importlib.import_module(f"{catalog.__name__}.{info.name}")
        if hasattr(mod, "NAME"):  # an experiment (this module is not one)
            mods[mod.NAME] = mod
    order = ["baseline", "baseline-schedule", "masks", "fog-greed", "hoarder", "first-player"]
    return {k: mods[k] for k in sorted(mods, key=lambda k: (order.index(k) if k in order
                                                            else len(order), k))}


def run(name: str, results: str | Path = "results", games: int | None = None, progress=None,
        force: bool = False, echo=None, client=None, threads: int | None = None,
        field: str | None = None) -> Path:
    """Run experiment `name` into RESULTS/NAME; `field`: the lineup (or field file, with
    "{players}" for the table size) the experiment's points play instead of the default
    lineup."""
    from fbsim.experiments.report.plots import plot_dataset
    from fbsim.experiments.run.lock import output_lock
    from fbsim.experiments.run.provenance import check_output_folder
    from fbsim.experiments.run.spec import build_points
    from fbsim.experiments.run.sweep import load, run_sweep

    exp = experiments()[name]
    out = Path(results) / name
    n = games or DEFAULT_GAMES
    spec = exp.spec(n)
    if field is not None:
        spec.lineup = field
    if not force and _stale(out, spec):
        if echo:
            echo(f"{out}: made by another spec, other rules or another lineup (e.g. a "
                 "bot's new defaults); recomputing it")
        force = True
    build_points(spec)  # (a bad --field fails before the folder is made)
    check_output_folder(out, "--out", ("sweep",))
    with output_lock(out):  # the sweep, its figures and summary.md: one writer at a time
        res = run_sweep(spec, out, progress=progress, force=force, echo=echo, client=client,
                        threads=threads)
        figures = plot_dataset(out, out, x=getattr(exp, "X", None))
        tables = load(out)
        write_summary(exp, spec, tables, figures, out, n, res)
    return out


def _stale(out: Path, spec) -> bool:

    from fbsim.experiments.run.spec import build_points
    from fbsim.lineup import lineup_hash
    from fbsim.rules import rules_hash

    meta = out / "sweep.json"
    if not meta.exists():
        return False
    try:
        doc = jsonfile.read(meta)
    except (OSError, ValueError):  # (as `fbsim sweep` refuses it: nothing replayed)
        raise UsageError(f"{meta}: unreadable; remove {out} or pass --force") from None
    digest = doc.get("digest") if isinstance(doc, dict) else None
    base, points = build_points(spec)
    return digest != spec.digest(rules_hash(base), [lineup_hash(p.lineup) for p in points])


def write_summary(exp, spec, tables, figures, out: Path, games: int, res) -> Path:
    from fbsim.experiments.report.findings import point_table

    prov = tables["outcomes"].attrs["provenance"]
    cmd = f"fbsim experiment {exp.NAME}" + ("" if games == DEFAULT_GAMES
                                            else f" --games {games}")
    if spec.lineup:
        cmd += f" --field {spec.lineup} --results {out.parent}"
    lines = [f"# {exp.NAME}: {exp.SUMMARY}", "", (exp.__doc__ or "").strip(), "",
             f"Regenerate: `{shlex.quote(cmd) if ' ' not in cmd else cmd}` "
             f"({len(tables['outcomes'])} points, {games:,} games per point, seed {spec.seed}; "
             f"fbsim {prov['fbsim_version']}, kernel v{prov['kernel_version']}, git "
             f"{prov['git_revision'] or '-'}). Intervals are 95% (Wilson); paired differences "
             "are game by game against the baseline point on the same games (Tango's score "
             "interval from the games whose outcome changed; significance by McNemar's exact "
             "test after Holm's correction over every comparison of the sweep).", "",
             "## Findings", ""]
    lines += [f"  - {s.strip()}" if s.startswith("  ") else f"- {s}"
              for s in exp.findings(tables)]
    lines += ["", "## Win rates (share of games won, ± 95% half-width)", ""]
    lines += point_table(tables, getattr(exp, "X", None))
    lines += ["", "## Figures", ""] + [f"![{p.stem}]({p.name})" for p in figures]
    path = out / "summary.md"
    path.write_text("\n".join(lines) + "\n")
    return path
