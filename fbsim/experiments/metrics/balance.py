"""The balance metrics of `fbsim report`: per-game values, exact integer moments, intervals.

Every metric of the report is a ratio of two per-game sums, R = sum(y) / sum(x), over the
games of one table size: a win rate has y = 1 when the Agenda won and x = 1; a mean per game
has x = 1; Accusation accuracy has y = corners of an Accelerationist and x = corners. A
`BalanceTally` keeps, for every metric, the integer sums of y and x and of their products, so
that blocks of games (or threads, or machines) merge exactly and the tables do not depend on
how the games were split.

Intervals. Rates of games (x = 1, y in {0, 1}) get the Wilson interval (as everywhere in
fbsim); other metrics the normal interval of the ratio by the delta method:
se(R)^2 = sum((y - R x)^2) / (n (n - 1) xbar^2).

Paired differences (`--against`). The old and the new rules play the same games (same seed,
same game index: common random numbers). For each metric the tally also keeps the cross
products of (y_new, x_new, y_old, x_old), so the difference D = R_new - R_old gets the paired
delta-method interval: the per-game influence z = (y1 - R1 x1) / xbar1 - (y0 - R0 x0) / xbar0
has mean 0 and se(D)^2 = sum(z^2) / (n (n - 1)). With x = 1 this is the usual paired
interval of mean differences (`fbsim.experiments.metrics.stats.paired`). p-values are two-sided
normal ones; `holm` corrects them for the many comparisons on one page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fbsim.experiments.metrics.stats import Z95, wilson
from fbsim.game import layout as L
from fbsim.rules import Rules


@dataclass(frozen=True)
class Metric:
    key: str  # column-safe identifier, e.g. win_accelerationist
    section: str  # wins, world, seats, fog, accusation, legacy
    label: str  # what a designer reads
    kind: str  # "rate": share of games (Wilson); "pct": a ratio shown in %; "mean": a number
    unit: str = ""


SECTIONS = {
    "wins": "Who wins",
    "world": "How the world ends",
    "seats": "Seat advantage",
    "fog": "Fog: the shared pot",
    "accusation": "Accusations",
    "legacy": "Legacy in survival games",
}


def metrics(players: int) -> list[Metric]:
    """The report's metrics for one table size, in page order."""
    out = [Metric(f"win_{a}", "wins", f"{a.capitalize()} wins", "rate")
           for a in L.AGENDA_NAMES]
    out.append(Metric("everyone_loses", "wins", "Everyone loses", "rate"))
    out.append(Metric("collapse", "world", "Collapse", "rate"))
    out += [Metric(f"band_{b}", "world", f"Final band {b.capitalize()}", "rate")
            for b in L.BAND_NAMES]
    out.append(Metric("final_dial", "world", "Final Dial (mean)", "mean", "ppm"))
    out.append(Metric("rounds_played", "world", "Rounds played (mean)", "mean", "rounds"))
    out += [Metric(f"win_place_{p}", "seats", f"Place {p} wins" + (" (first player)" if p == 0
                                                                    else ""), "rate")
            for p in range(players)]
    out += [
        Metric("masks_per_seat", "fog", "Masks used per seat", "mean", "masks"),
        Metric("fog_in", "fog", "Pot inflow per game", "mean", "Capital"),
        Metric("fog_requested", "fog", "Claims requested per game", "mean", "Capital"),
        Metric("fog_received", "fog", "Claims received per game", "mean", "Capital"),
        Metric("overclaim", "fog", "Over-claimed per game (received beyond own payments)",
               "mean", "Capital"),
        Metric("overclaimers", "fog", "Seats that over-claimed", "pct"),
        Metric("pot_lost", "fog", "Pot left unclaimed at the end", "mean", "Capital"),
        Metric("corners", "accusation", "Players cornered per game", "mean", "players"),
        Metric("accuracy", "accusation",
               "Accuracy: cornered player was an Accelerationist", "pct"),
        Metric("points_at_accelerationists", "accusation",
               "Points aimed at Accelerationists", "pct"),
        Metric("reveal_share", "accusation", "Cornered players who revealed", "pct"),
        Metric("accelerationist_exposed", "accusation",
               "Games with an Accelerationist revealed (of games with one)", "pct"),
    ]
    out += [Metric(f"legacy_{a}", "legacy", f"{a.capitalize()} Legacy (mean per seat)",
                   "mean", "Legacy") for a in L.AGENDA_NAMES]
    return out


def per_game(rec: dict, rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """(y, x), int64 [games, metrics] in the order of `metrics(rules.players)`, from a block of
    kernel records (`fbsim.kernel.simulate(records=True)`)."""
    n = rules.players
    g = len(rec["game"])
    idx = np.arange(g)
    w = rec["winner"]
    won = w >= 0
    agenda = rec["agenda"]
    accel = agenda == L.ACCELERATIONIST
    win_agenda = np.where(won, agenda[idx, np.where(won, w, 0)], -1)
    ys: list[np.ndarray] = []
    xs: list[np.ndarray] = []
    one = np.ones(g, dtype=np.int64)

    def add(y, x=one):
        ys.append(np.asarray(y, dtype=np.int64))
        xs.append(np.asarray(x, dtype=np.int64))

    for a in range(L.N_AGENDAS):
        add(win_agenda == a)
    add(~won)
    add(rec["end"] != L.END_SURVIVED)
    for b in range(len(L.BAND_NAMES)):
        add(rec["band"] == b)
    add(rec["final_dial"])
    add(rec["rounds_played"])
    # R-S3: place p counts clockwise from the round-1 first player (D9)
    for p in range(n):
        add(w == (rules.first_player + p) % n)
    add((rules.masks - rec["masks_left"]).sum(axis=1), one * n)
    add(rec["fog_in"].sum(axis=1))
    add(rec["fog_requested"].sum(axis=1))
    add(rec["fog_received"].sum(axis=1))
    over = rec["fog_received"] - rec["fog_in"]
    add(np.where(over > 0, over, 0).sum(axis=1))
    add((over > 0).sum(axis=1), one * n)
    add(rec["pot_left"])
    cornered = rec["cornered"]
    add(cornered.sum(axis=1))
    add((cornered * accel).sum(axis=1), cornered.sum(axis=1))  # R-A3
    add((rec["pointed_at"] * accel).sum(axis=1), rec["pointed_at"].sum(axis=1))  # R-A1
    add((cornered - rec["paid"]).sum(axis=1), cornered.sum(axis=1))  # R-A4: reveal or pay
    add((accel & (rec["revealed"] == 1)).any(axis=1), accel.any(axis=1))
    survived = (rec["band"] != L.COLLAPSE)[:, None]
    for a in range(L.N_AGENDAS):
        mine = survived & (agenda == a)
        add((rec["legacy"] * mine).sum(axis=1), mine.sum(axis=1))
    return np.stack(ys, axis=1), np.stack(xs, axis=1)


class BalanceTally:
    """Integer moments of the per-game metrics of one table size: of (y, x) for one rules
    file, of (y_new, x_new, y_old, x_old) when compared against old rules on the same games."""

    def __init__(self, n_metrics: int, paired: bool):
        w = 4 if paired else 2
        self.paired = paired
        self.games = 0
        self.s1 = np.zeros((n_metrics, w), dtype=np.int64)
        self.s2 = np.zeros((n_metrics, w, w), dtype=np.int64)

    def add(self, new: tuple[np.ndarray, np.ndarray],
            old: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        parts = [new[0], new[1]] + ([old[0], old[1]] if self.paired else [])
        v = np.stack(parts, axis=2)  # [games, metrics, w]
        self.games += v.shape[0]
        self.s1 += v.sum(axis=0)
        self.s2 += np.einsum("gki,gkj->kij", v, v)

    def merge(self, other: BalanceTally) -> BalanceTally:
        self.games += other.games
        self.s1 += other.s1
        self.s2 += other.s2
        return self

    # ------------------------------------------------------------------ estimates

    def estimate(self, k: int, old: bool = False) -> tuple[float, float, float]:
        """(value, low, high) of metric k under the new (or, paired, the old) rules."""
        i = 2 if old else 0
        n = self.games
        sy, sx = int(self.s1[k, i]), int(self.s1[k, i + 1])
        if n == 0 or sx == 0:
            return math.nan, math.nan, math.nan
        r = sy / sx
        if n < 2:
            return r, math.nan, math.nan
        syy, sxx, sxy = (int(self.s2[k, i, i]), int(self.s2[k, i + 1, i + 1]),
                         int(self.s2[k, i, i + 1]))
        var = max(0.0, (syy - 2 * r * sxy + r * r * sxx) / (n - 1))
        half = Z95 * math.sqrt(var / n) / (sx / n)
        return r, r - half, r + half

    def rate(self, k: int, old: bool = False) -> tuple[float, float, float]:
        """A share of games (x = 1, y in {0, 1}) with its Wilson interval."""
        i = 2 if old else 0
        return wilson(int(self.s1[k, i]), self.games)

    def difference(self, k: int) -> tuple[float, float, float, float]:
        """(D, low, high, p) of R_new - R_old of metric k on the same games; p is NaN when the
    metric is the same in every game (or undefined under either rules)."""
        n = self.games
        s1 = self.s1[k].astype(np.float64)
        if not self.paired or n < 2 or s1[1] == 0 or s1[3] == 0:
            return math.nan, math.nan, math.nan, math.nan
        r1, r0 = s1[0] / s1[1], s1[2] / s1[3]
        xb1, xb0 = s1[1] / n, s1[3] / n
        a = np.array([1 / xb1, -r1 / xb1, -1 / xb0, r0 / xb0])
        ss = float(a @ self.s2[k].astype(np.float64) @ a)  # sum of z^2 (z has mean 0)
        d = float(r1 - r0)
        se = math.sqrt(max(0.0, ss) / (n - 1) / n)
        # no spread at all: every game moved by exactly d; d == 0 means the metric is
        # identical in every game (nothing to test: p is NaN and it leaves the family)
        if se == 0.0 or se < 1e-12 * max(1.0, abs(d)):
            return d, d, d, (math.nan if d == 0 else 0.0)
        p = math.erfc(abs(d) / se / math.sqrt(2))
        return d, d - Z95 * se, d + Z95 * se, p


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error over all of `p`; NaN ignored)."""
    p = np.asarray(p, dtype=float)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    m = len(order)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def table(tally: BalanceTally, players: int, fair: dict[str, float],
          fair_old: dict[str, float] | None = None) -> pd.DataFrame:
    """The tidy rows of one table size: one per metric, with its interval, its fair share
    where it has one, and (paired) the old value and the paired difference."""
    rows = []
    for k, m in enumerate(metrics(players)):
        est = tally.rate if m.kind == "rate" else tally.estimate
        v, lo, hi = est(k)
        row = {"players": players, "section": m.section, "metric": m.key, "label": m.label,
               "kind": m.kind, "unit": m.unit, "games": tally.games, "value": v,
               "ci_low": lo, "ci_high": hi, "fair_share": fair.get(m.key, math.nan)}
        if tally.paired:
            ov, olo, ohi = est(k, old=True)
            d, dlo, dhi, p = tally.difference(k)
            row.update({"old_value": ov, "old_ci_low": olo, "old_ci_high": ohi,
                        "old_fair_share": (fair_old or {}).get(m.key, math.nan),
                        "diff": d, "diff_ci_low": dlo, "diff_ci_high": dhi, "p_value": p})
        rows.append(row)
    return pd.DataFrame(rows)


def fair_shares(counts: dict, rules: Rules) -> dict[str, float]:
    """Fair shares: an Agenda's share of seats dealt (R-S4), 1/n for each place."""
    n = rules.players
    games = int(counts["games"])
    out = {f"win_{a}": int(counts["dealt"][i]) / (games * n) if games else math.nan
           for i, a in enumerate(L.AGENDA_NAMES)}
    out.update({f"win_place_{p}": 1 / n for p in range(n)})
    return out


def mark_significance(df: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Holm-adjust every p-value of the page together and mark the significant differences."""
    df = df.copy()
    df["identical"] = (df["diff"] == 0) & df["p_value"].isna() & df["old_value"].notna()
    df["p_holm"] = holm(df["p_value"].to_numpy())
    df["significant"] = df["p_holm"] < alpha
    return df
