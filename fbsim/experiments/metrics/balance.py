"""The balance report's table: one row per metric of the page, its interval, its fair share,
and, against old rules, the paired difference and Holm-corrected significance.

The metrics themselves (what each counts, its interval) are declared in
`fbsim.experiments.metrics.definitions` and counted by `fbsim.experiments.metrics.tally.Tally`;
a rate's difference has Tango's interval, McNemar's exact p-value and the number of games whose
outcome changed; any other metric's a delta-method interval and a two-sided normal p-value;
`holm` corrects them for the many comparisons on a page.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from fbsim.experiments.metrics.definitions import fair_win_rate, report_metrics
from fbsim.experiments.metrics.stats import holm
from fbsim.experiments.metrics.tally import Tally
from fbsim.game import layout as L
from fbsim.rules import Rules

__all__ = ["holm", "table", "fair_shares", "mark_significance"]


def table(tally: Tally, players: int, fair: dict[str, float],
          fair_old: dict[str, float] | None = None) -> pd.DataFrame:
    """The tidy rows of one table size: one per metric of the page, with its interval, its
    fair share where it has one, and (paired) the old value and the paired difference."""
    rows = []
    for m in report_metrics(tally.metrics):
        k = tally.index[m.key]
        est = tally.rate if m.kind == "rate" else tally.estimate
        v, lo, hi = est(k)
        row = {"players": players, "section": m.section, "metric": m.key, "label": m.label,
               "kind": m.kind, "unit": m.unit, "games": tally.games, "value": v,
               "ci_low": lo, "ci_high": hi, "fair_share": fair.get(m.key, math.nan)}
        if tally.paired:
            ov, olo, ohi = est(k, old=True)
            d, dlo, dhi, p = tally.difference(k)
            changed = tally.changed(k)
            row.update({"old_value": ov, "old_ci_low": olo, "old_ci_high": ohi,
                        "old_fair_share": (fair_old or {}).get(m.key, math.nan),
                        "diff": d, "diff_ci_low": dlo, "diff_ci_high": dhi, "p_value": p,
                        "changed_games": math.nan if changed is None else changed})
        rows.append(row)
    return pd.DataFrame(rows)


def fair_shares(tally: Tally, rules: Rules, old: bool = False) -> dict[str, float]:
    """Fair shares: an Agenda's share of seats dealt (R-S4), 1/n for each place, each over the
    games that somebody wins (`fbsim.experiments.metrics.definitions.fair_win_rate`)."""
    n = rules.players
    out = {f"win_{a}": tally.fair_share(f"dealt_{a}", old) for a in L.AGENDA_NAMES}
    out.update({f"win_place_{p}": fair_win_rate(1 / n, tally.everyone_loses(old))
                for p in range(n)})
    # a player's chance, whatever the Agenda dealt and however many hold it: 1/n of the wins
    out.update({m.key: fair_win_rate(1 / n, tally.everyone_loses(old))
                for m in tally.metrics if m.section == "deal"})
    return out


def mark_significance(df: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Holm-adjust every p-value of the page together and mark the significant differences.
    A metric identical in every game (no game changed, or no spread at all) is not tested."""
    df = df.copy()
    changed = df["changed_games"] if "changed_games" in df else pd.Series(np.nan, df.index)
    df["identical"] = df["old_value"].notna() & (
        (changed == 0) | ((df["diff"] == 0) & df["p_value"].isna()))
    df["p_holm"] = holm(df["p_value"].where(~df["identical"]).to_numpy())
    df["significant"] = df["p_holm"] < alpha
    return df
