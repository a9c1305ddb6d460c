"""The sweep tables of one point (win_rates, outcomes, seats), read off its `Tally`.

Paired differences against the baseline point come from the exact integer sums of
d = y(point) - y(baseline) over the same games (`Tally.paired_sums`).
"""

from __future__ import annotations

import math

import pandas as pd

from fbsim.experiments.metrics.definitions import DIAL_HIST_LO
from fbsim.experiments.metrics.stats import hist_quantile, paired, wilson
from fbsim.experiments.metrics.tally import Tally
from fbsim.game import layout as L
from fbsim.rules import Rules, rules_hash

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def _pair(t: Tally, key: str) -> tuple[float, float, float]:
    if not t.paired or t.games == 0:
        return math.nan, math.nan, math.nan
    s, ss = t.paired_sums(key)
    return paired(s, ss, t.games)


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
        d, dlo, dhi = _pair(t, win_key)
        rows.append({**lead, "kind": kind, "name": name, "games": n, "wins": wins,
                     "rate": rate, "ci_low": lo, "ci_high": hi, "seats": seats,
                     "seat_rate": wins / seats if seats else math.nan,
                     "fair_share": t.fair_share(seat_key),
                     "diff": d, "diff_ci_low": dlo, "diff_ci_high": dhi,
                     "paired_games": paired_games, "rules_hash": h})
    win_rates = pd.DataFrame(rows)

    out = {**lead, "games": n}
    for label, count_col in (("collapse", "collapses"), ("everyone_loses",
                                                         "everyone_loses_games")):
        k = t.total(label)
        rate, lo, hi = wilson(k, n)
        d, dlo, dhi = _pair(t, label)
        out.update({count_col: k, f"{label}_rate": rate, f"{label}_ci_low": lo,
                    f"{label}_ci_high": hi, f"{label}_diff": d,
                    f"{label}_diff_ci_low": dlo, f"{label}_diff_ci_high": dhi})
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
                          "ci_high": hi, "fair_share": 1 / players, "rules_hash": h})
    seats = pd.DataFrame(seat_rows)
    return win_rates, outcomes, seats
