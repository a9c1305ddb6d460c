"""Counting one sweep point's games, and the tidy tables derived from the counts.

A `Tally` holds only integers: the counts of `counts.aggregate_records`, summed over blocks
of games, and for the paired differences against the baseline point the sums of d and d^2, where
d = x(point) - x(baseline) is computed game by game on the same games (common random
numbers). Rates and intervals are derived from these integers at the end, so the tables do not
depend on how the games were split into blocks or threads.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from fbsim.experiments.metrics.counts import DIAL_HIST_LO, aggregate_records
from fbsim.experiments.metrics.stats import hist_quantile, paired, wilson
from fbsim.game import layout as L
from fbsim.rules import Rules, rules_hash

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def bot_names() -> tuple[str, ...]:
    from fbsim.kernel.dispatch import compiled_bots

    return compiled_bots()


def pair_keys() -> list[tuple[str, str]]:
    """The indicators whose paired differences are kept: (kind, name)."""
    return ([("agenda", a) for a in L.AGENDA_NAMES] + [("bot", b) for b in bot_names()]
            + [("outcome", "everyone_loses"), ("outcome", "collapse")])


def compact(rec: dict) -> np.ndarray:
    """Per game: the winner's Agenda (-1: nobody), the winner's bot id, the end code (int8)."""
    w = rec["winner"]
    won = w >= 0
    idx = np.arange(len(w))
    ws = np.where(won, w, 0)
    out = np.empty((len(w), 3), dtype=np.int8)
    out[:, 0] = np.where(won, rec["agenda"][idx, ws], -1)
    out[:, 1] = np.where(won, rec["bot"][idx, ws], -1)
    out[:, 2] = rec["end"]
    return out


def indicators(c: np.ndarray) -> np.ndarray:
    """The 0/1 indicators of `pair_keys()` for each game of a compact block."""
    nb = len(bot_names())
    x = np.zeros((len(c), 3 + nb + 2), dtype=np.int8)
    for a in range(3):
        x[:, a] = c[:, 0] == a
    for b in range(nb):
        x[:, 3 + b] = c[:, 1] == b
    x[:, 3 + nb] = c[:, 0] < 0
    x[:, 4 + nb] = c[:, 2] != L.END_SURVIVED
    return x


class Tally:
    def __init__(self):
        self.counts: dict | None = None
        k = len(pair_keys())
        self.pair_sum = np.zeros(k, dtype=np.int64)
        self.pair_sq = np.zeros(k, dtype=np.int64)
        self.paired_games = 0

    @property
    def games(self) -> int:
        return 0 if self.counts is None else int(self.counts["games"])

    def add(self, rec: dict, rules: Rules, mine: np.ndarray, base: np.ndarray | None) -> None:
        c = aggregate_records(rec, rules)
        if self.counts is None:
            self.counts = c
        else:
            for k, v in c.items():
                self.counts[k] = self.counts[k] + v
        if base is not None:
            d = indicators(mine).astype(np.int64) - indicators(base)
            self.pair_sum += d.sum(axis=0)
            self.pair_sq += (d * d).sum(axis=0)
            self.paired_games += len(d)

    def merge(self, other: Tally) -> Tally:
        """Add another tally of the same point over other games (exact: integers only)."""
        if other.counts is not None:
            if self.counts is None:
                self.counts = {k: (v.copy() if isinstance(v, np.ndarray) else v)
                               for k, v in other.counts.items()}
            else:
                for k, v in other.counts.items():
                    self.counts[k] = self.counts[k] + v
        self.pair_sum += other.pair_sum
        self.pair_sq += other.pair_sq
        self.paired_games += other.paired_games
        return self

    def half_widths(self) -> list[float]:
        """The Wilson half-width of each Agenda's win rate (for --ci-width)."""
        n = self.games
        out = []
        for a in range(3):
            _, lo, hi = wilson(int(self.counts["wins_agenda"][a]), n)
            out.append((hi - lo) / 2)
        return out

    def needed_games(self, width: float) -> int:
        """Games that would bring every Agenda's half-width to `width`, from the rates so far
        (normal approximation)."""
        n = max(1, self.games)
        worst = 0.0
        for a in range(3):
            p = (int(self.counts["wins_agenda"][a]) + 0.5) / (n + 1)
            worst = max(worst, p * (1 - p))
        return int(math.ceil(1.959963984540054 ** 2 * worst / (width * width)))

    # ------------------------------------------------------------------ tables

    def _pair(self, i: int) -> tuple[float, float, float]:
        if self.paired_games == 0:
            return math.nan, math.nan, math.nan
        return paired(int(self.pair_sum[i]), int(self.pair_sq[i]), self.paired_games)

    def tables(self, rules: Rules, coords: dict, point: int = 0, baseline: int = 0
               ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        """(win_rates, outcomes, seats) for this point; `coords` become leading columns."""
        c = self.counts
        n = self.games
        players = rules.players
        keys = pair_keys()
        lead = {"point": point, **coords, "baseline_point": baseline}
        h = rules_hash(rules)
        names = bot_names()
        rows = []
        for i, (kind, name) in enumerate(keys):
            if kind == "agenda":
                a = L.AGENDA_NAMES.index(name)
                wins, seats = int(c["wins_agenda"][a]), int(c["dealt"][a])
            elif kind == "bot":
                b = names.index(name)
                wins, seats = int(c["wins_bot"][b]), int(c["seats_bot"][b])
                if seats == 0 and self.pair_sum[i] == 0 and self.pair_sq[i] == 0:
                    continue  # a bot that sat at neither this point nor its baseline
            else:
                continue
            rate, lo, hi = wilson(wins, n)
            d, dlo, dhi = self._pair(i)
            rows.append({**lead, "kind": kind, "name": name, "games": n, "wins": wins,
                         "rate": rate, "ci_low": lo, "ci_high": hi, "seats": seats,
                         "seat_rate": wins / seats if seats else math.nan,
                         "fair_share": seats / (n * players) if n else math.nan,
                         "diff": d, "diff_ci_low": dlo, "diff_ci_high": dhi,
                         "paired_games": self.paired_games, "rules_hash": h})
        win_rates = pd.DataFrame(rows)

        ends, bands = c["ends"], c["bands"]
        collapses = int(ends[L.END_COLLAPSE_WORLD] + ends[L.END_COLLAPSE_REVEAL])
        nobody = int(c["nobody"])
        out = {**lead, "games": n}
        for label, k, i in (("collapse", collapses, len(keys) - 1),
                            ("everyone_loses", nobody, len(keys) - 2)):
            rate, lo, hi = wilson(k, n)
            d, dlo, dhi = self._pair(i)
            out.update({f"{label}s" if label == "collapse" else f"{label}_games": k,
                        f"{label}_rate": rate, f"{label}_ci_low": lo,
                        f"{label}_ci_high": hi, f"{label}_diff": d,
                        f"{label}_diff_ci_low": dlo, f"{label}_diff_ci_high": dhi})
        out["collapse_world_rate"] = int(ends[L.END_COLLAPSE_WORLD]) / n
        out["collapse_reveal_rate"] = int(ends[L.END_COLLAPSE_REVEAL]) / n
        for b, name in enumerate(L.BAND_NAMES):
            out[f"band_{name}"] = int(bands[b]) / n
        mean = c["dial_sum"] / n
        out["dial_mean"] = mean
        out["dial_sd"] = math.sqrt(max(0.0, c["dial_sq_sum"] / n - mean * mean))
        for q in QUANTILES:
            out[f"dial_q{int(round(q * 100)):02d}"] = hist_quantile(c["dial_hist"], q,
                                                                    DIAL_HIST_LO)
        out["rounds_mean"] = c["rounds_sum"] / n
        for a, name in enumerate(L.AGENDA_NAMES):
            k = int(c["legacy_n"][a])
            out[f"legacy_mean_{name}"] = int(c["legacy_sum"][a]) / k if k else math.nan
        seats_total = n * players
        out["masks_used_per_seat"] = c["masks_used"] / seats_total
        out["fog_in_per_game"] = c["fog_in"] / n
        out["fog_requested_per_game"] = c["fog_requested"] / n
        out["fog_received_per_game"] = c["fog_received"] / n
        out["overclaim_per_game"] = c["overclaim"] / n
        out["overclaimer_share"] = c["overclaimers"] / seats_total
        out["paired_games"] = self.paired_games
        out["rules_hash"] = h
        outcomes = pd.DataFrame([out])

        seat_rows = []
        for s in range(players):
            wins = int(c["wins_seat"][s])
            rate, lo, hi = wilson(wins, n)
            seat_rows.append({**lead, "seat": s, "place": (s - rules.first_player) % players,
                              "games": n, "wins": wins, "rate": rate, "ci_low": lo,
                              "ci_high": hi, "fair_share": 1 / players, "rules_hash": h})
        seats = pd.DataFrame(seat_rows)
        return win_rates, outcomes, seats
