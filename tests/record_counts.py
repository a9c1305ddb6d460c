"""A plain recount of a block of kernel records, written apart from the package's metrics
(`fbsim.experiments.metrics.definitions`), as an independent oracle for the tests.

    aggregate_records(rec, rules) -> {name: int or int64 array}

Names, arrays indexed as in `fbsim.game.layout`: games, nobody (everyone loses), rounds_sum,
dial_sum, dial_sq_sum, masks_used, fog_in, fog_requested, fog_received, overclaim,
overclaimers: ints; ends [3], bands [4], wins_agenda [3], wins_seat [MAX_PLAYERS], wins_bot
and seats_bot [MAX_BOTS] (by the records' `bot` code, the lineup entry), dealt [3],
games_with_agenda [3], legacy_sum [3] and legacy_n [3] (survival games only, R-E4),
capital_sum [3]; dial_hist [DIAL_BINS] and dial_round_hist [rounds, DIAL_BINS].
"""

from __future__ import annotations

import numpy as np

from fbsim.game import layout as L
from fbsim.rules import Rules

MAX_BOTS = 16
DIAL_HIST_LO = 0  # the Dial histograms have one bin per ppm from here (clipped at both ends)
DIAL_BINS = 1024

COUNT_NAMES = ("games", "ends", "bands", "wins_agenda", "nobody", "wins_seat", "wins_bot",
               "seats_bot", "dealt", "games_with_agenda", "legacy_sum", "legacy_n",
               "capital_sum", "rounds_sum", "dial_sum", "dial_sq_sum", "masks_used", "fog_in",
               "fog_requested", "fog_received", "overclaim", "overclaimers", "dial_hist",
               "dial_round_hist")


def dial_bins(dial: np.ndarray) -> np.ndarray:
    """The histogram bin of each Dial reading."""
    return np.clip(dial - DIAL_HIST_LO, 0, DIAL_BINS - 1)


def aggregate_records(rec: dict, rules: Rules) -> dict:
    """The counts of the games of `rec` (the kernel's record columns) under `rules`."""
    n_games = len(rec["game"])
    w = rec["winner"]
    idx = np.arange(n_games)
    won = w >= 0
    agenda, bot = rec["agenda"], rec["bot"]

    def by(values, n: int) -> np.ndarray:
        return np.array([int((values == i).sum()) for i in range(n)], dtype=np.int64)

    out: dict = {"games": n_games, "ends": by(rec["end"], len(L.END_NAMES)),
                 "bands": by(rec["band"], len(L.BAND_NAMES)),
                 "wins_agenda": by(agenda[idx[won], w[won]], L.N_AGENDAS),
                 "nobody": int((~won).sum()), "wins_seat": by(w, L.MAX_PLAYERS),
                 "wins_bot": by(bot[idx[won], w[won]], MAX_BOTS),
                 "seats_bot": by(bot, MAX_BOTS), "dealt": by(agenda, L.N_AGENDAS)}
    survived = (rec["band"] != L.COLLAPSE)[:, None]
    per_agenda = {k: np.zeros(L.N_AGENDAS, dtype=np.int64)
                  for k in ("games_with_agenda", "legacy_sum", "legacy_n", "capital_sum")}
    for a in range(L.N_AGENDAS):
        mine = agenda == a
        per_agenda["games_with_agenda"][a] = int(mine.any(axis=1).sum())
        per_agenda["legacy_sum"][a] = int(rec["legacy"][survived & mine].sum())
        per_agenda["legacy_n"][a] = int((survived & mine).sum())
        per_agenda["capital_sum"][a] = int(rec["capital"][mine].sum())
    out.update(per_agenda)
    dial = rec["final_dial"]
    over = rec["fog_received"] - rec["fog_in"]
    out.update({
        "rounds_sum": int(rec["rounds_played"].sum()), "dial_sum": int(dial.sum()),
        "dial_sq_sum": int((dial * dial).sum()),
        "masks_used": int((rules.masks - rec["masks_left"]).sum()),
        "fog_in": int(rec["fog_in"].sum()), "fog_requested": int(rec["fog_requested"].sum()),
        "fog_received": int(rec["fog_received"].sum()),
        "overclaim": int(over[over > 0].sum()), "overclaimers": int((over > 0).sum()),
        "dial_hist": np.bincount(dial_bins(dial), minlength=DIAL_BINS).astype(np.int64),
    })
    by_round = dial_bins(rec["dial_by_round"])
    hist = np.zeros((rules.rounds, DIAL_BINS), dtype=np.int64)
    for r in range(by_round.shape[1]):
        hist[r] = np.bincount(by_round[:, r], minlength=DIAL_BINS)
    out["dial_round_hist"] = hist
    return {k: out[k] for k in COUNT_NAMES}
