"""The sweep tables of one point (win_rates, outcomes, seats), read off its `Tally`, and the
correction of a whole sweep's comparisons for their number (`adjust_comparisons`).

A paired difference against the baseline point is the difference of two rates on the same
games: from the games whose outcome changed (`Tally.discordant`), with Tango's score interval,
McNemar's exact p-value and the number of changed games
(`fbsim.experiments.metrics.stats.paired_proportions`). With `--ci-width` a point and its
baseline may have played different numbers of games: the difference then uses the games that
both played (`paired_games`), so it is not the difference of the two rates shown.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from fbsim.experiments.metrics.definitions import DIAL_HIST_LO, fair_win_rate
from fbsim.experiments.metrics.stats import (
    ADJUSTMENTS,
    discordant_from_normal,
    hist_quantile,
    paired_proportions,
    wilson,
)
from fbsim.experiments.metrics.tally import Tally
from fbsim.game import layout as L
from fbsim.rules import Rules, rules_hash

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


ALPHA = 0.05  # the error rate the sweep's corrected comparisons are held to
CORRECTION = "holm"  # the sweep tables' correction (a key of stats.ADJUSTMENTS)


def _pair(t: Tally, key: str, own: bool) -> tuple[float, float, float, float, float]:
    """(difference, low, high, p, changed games) of a rate against the baseline point; the
    baseline point against itself (`own`) is no comparison: 0 and no interval or test."""
    if not t.paired or t.games == 0:
        return math.nan, math.nan, math.nan, math.nan, math.nan
    if own:
        return 0.0, math.nan, math.nan, math.nan, 0
    k = t.index[key]
    return (*t.difference(k), t.changed(k))


def sweep_tables(t: Tally, rules: Rules, coords: dict, point: int = 0, baseline: int = 0
                 ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(win_rates, outcomes, seats) for one point; `coords` become leading columns."""
    n = t.games
    players = rules.players
    paired_games = n if t.paired else 0
    lead = {"point": point, **coords, "baseline_point": baseline}
    h = rules_hash(rules)
    rows = []
    entries = [("agenda", a, f"win_{a}", f"dealt_{a}") for a in L.AGENDA_NAMES]
    entries += [("bot", b, f"win_bot_{b}", f"seats_bot_{b}") for b in t.bots]
    for kind, name, win_key, seat_key in entries:
        wins, seats = t.total(win_key), t.total(seat_key)
        if kind == "bot" and seats == 0 and (not t.paired or t.paired_sums(win_key) == (0, 0)):
            continue  # a bot that sat at neither this point nor its baseline
        rate, lo, hi = wilson(wins, n)
        d, dlo, dhi, p, changed = _pair(t, win_key, point == baseline)
        rows.append({**lead, "kind": kind, "name": name, "games": n, "wins": wins,
                     "rate": rate, "ci_low": lo, "ci_high": hi, "seats": seats,
                     "seat_rate": wins / seats if seats else math.nan,
                     "fair_share": t.fair_share(seat_key),
                     "diff": d, "diff_ci_low": dlo, "diff_ci_high": dhi,
                     "diff_p_value": p, "changed_games": changed,
                     "paired_games": paired_games, "rules_hash": h})
    win_rates = pd.DataFrame(rows)

    out = {**lead, "games": n}
    for label, count_col in (("collapse", "collapses"), ("everyone_loses",
                                                         "everyone_loses_games")):
        k = t.total(label)
        rate, lo, hi = wilson(k, n)
        d, dlo, dhi, p, changed = _pair(t, label, point == baseline)
        out.update({count_col: k, f"{label}_rate": rate, f"{label}_ci_low": lo,
                    f"{label}_ci_high": hi, f"{label}_diff": d,
                    f"{label}_diff_ci_low": dlo, f"{label}_diff_ci_high": dhi,
                    f"{label}_diff_p_value": p, f"{label}_changed_games": changed})
    out["collapse_world_rate"] = t.total("end_collapse_world") / n
    out["collapse_reveal_rate"] = t.total("end_collapse_reveal") / n
    for name in L.BAND_NAMES:
        out[f"band_{name}"] = t.total(f"band_{name}") / n
    mean = t.total("final_dial") / n
    out["dial_mean"] = mean
    out["dial_sd"] = math.sqrt(max(0.0, t.total("final_dial_sq") / n - mean * mean))
    for q in QUANTILES:
        out[f"dial_q{int(round(q * 100)):02d}"] = hist_quantile(t.dial_hist, q, DIAL_HIST_LO)
    out["rounds_mean"] = t.total("rounds_played") / n
    for name in L.AGENDA_NAMES:
        k = t.denominator(f"legacy_{name}")
        out[f"legacy_mean_{name}"] = t.total(f"legacy_{name}") / k if k else math.nan
    seats_total = n * players
    out["masks_used_per_seat"] = t.total("masks_per_seat") / seats_total
    out["fog_in_per_game"] = t.total("fog_in") / n
    out["fog_requested_per_game"] = t.total("fog_requested") / n
    out["fog_received_per_game"] = t.total("fog_received") / n
    out["overclaim_per_game"] = t.total("overclaim") / n
    out["overclaimer_share"] = t.total("overclaimers") / seats_total
    out["paired_games"] = paired_games
    out["rules_hash"] = h
    outcomes = pd.DataFrame([out])

    seat_rows = []
    for s in range(players):
        wins = t.total(f"win_seat_{s}")
        rate, lo, hi = wilson(wins, n)
        seat_rows.append({**lead, "seat": s, "place": (s - rules.first_player) % players,
                          "games": n, "wins": wins, "rate": rate, "ci_low": lo,
                          "ci_high": hi,
                          "fair_share": fair_win_rate(1 / players, t.everyone_loses()),
                          "rules_hash": h})
    seats = pd.DataFrame(seat_rows)
    return win_rates, outcomes, seats


# the outcomes table's compared rates (each has <label>_diff_p_value)
OUTCOME_COMPARISONS = ("collapse", "everyone_loses")


def _from_normal(df: pd.DataFrame, prefix: str) -> None:
    """Tango's interval, McNemar's p and the changed games of every compared rate of a point
    table written with the normal interval (an older dataset being resumed): b and c follow
    exactly from its difference and half-width (`stats.discordant_from_normal`)."""
    cols = {k: [] for k in ("lo", "hi", "p", "changed")}
    for r in df.to_dict("records"):
        n, d = int(r["paired_games"]), r[f"{prefix}diff"]
        if n == 0 or math.isnan(d) or r["point"] == r["baseline_point"]:
            lo = hi = p = math.nan
            changed = 0 if n and not math.isnan(d) else math.nan
        else:
            b, c = discordant_from_normal(d, r[f"{prefix}diff_ci_low"],
                                          r[f"{prefix}diff_ci_high"], n)
            _, lo, hi, p = paired_proportions(b, c, n)
            changed = b + c
        for k, v in zip(cols, (lo, hi, p, changed), strict=True):
            cols[k].append(v)
    df[f"{prefix}diff_ci_low"], df[f"{prefix}diff_ci_high"] = cols["lo"], cols["hi"]
    df[f"{prefix}diff_p_value"], df[f"{prefix}changed_games"] = cols["p"], cols["changed"]


def upgrade_point_tables(win_rates: pd.DataFrame, outcomes: pd.DataFrame) -> bool:
    """Give the tables of points written before stats version 2 (normal intervals) the
    columns of today's, in place; True when they needed it."""
    if "diff_p_value" in win_rates.columns:
        return False
    _from_normal(win_rates, "")
    for c in OUTCOME_COMPARISONS:
        _from_normal(outcomes, f"{c}_")
    return True


def adjust_comparisons(win_rates: pd.DataFrame, outcomes: pd.DataFrame,
                       method: str = CORRECTION, alpha: float = ALPHA) -> dict:
    """Correct every paired comparison of a sweep for their number, in place: the win rate of
    every Agenda and bot row and the collapse and everyone-loses rates of every point against
    its baseline are one family (a point compared with itself is not a comparison). Adds
    `diff_p_adjusted` and `significant` (win_rates) and `<rate>_diff_p_adjusted`,
    `<rate>_significant` (outcomes); returns the description written in the tables'
    metadata."""
    adjust = ADJUSTMENTS[method]
    parts = [win_rates["diff_p_value"].to_numpy(dtype=float)]
    parts += [outcomes[f"{c}_diff_p_value"].to_numpy(dtype=float)
              for c in OUTCOME_COMPARISONS]
    # a point's comparison with itself (the baseline) is no test
    own = [(win_rates["point"] == win_rates["baseline_point"]).to_numpy()]
    own += [(outcomes["point"] == outcomes["baseline_point"]).to_numpy()] * len(
        OUTCOME_COMPARISONS)
    flat = np.concatenate([np.where(o, np.nan, p) for p, o in zip(parts, own, strict=True)])
    adj = adjust(flat)
    sizes = np.cumsum([0] + [len(p) for p in parts])
    win_rates["diff_p_adjusted"] = adj[sizes[0]:sizes[1]]
    win_rates["significant"] = win_rates["diff_p_adjusted"] < alpha
    for i, c in enumerate(OUTCOME_COMPARISONS, start=1):
        outcomes[f"{c}_diff_p_adjusted"] = adj[sizes[i]:sizes[i + 1]]
        outcomes[f"{c}_significant"] = outcomes[f"{c}_diff_p_adjusted"] < alpha
    return {"method": method, "alpha": alpha, "comparisons": int(np.isfinite(flat).sum()),
            "family": "every paired difference of the dataset: each point's Agenda and bot "
                      "win rates, collapse and everyone-loses rates against its baseline "
                      "point (McNemar's exact p-values)"}
