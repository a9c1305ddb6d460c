"""The numba kernel: many full games at once, each identical to the reference engine's.

    simulate(rules, lineup, seed, n_games, first_game=0) -> dict of numpy arrays

Game `first_game + j` of a run is the game `fbsim replay --seed S --game G` narrates.
"""

from __future__ import annotations

import numpy as np

from fbsim.errors import FbsimError, UsageError
from fbsim.game import layout as L
from fbsim.game.lineup import Lineup
from fbsim.kernel import layout as KL
from fbsim.kernel.layout import ERR_RULES, GAME_FIELDS, KERNEL_VERSION, SEAT_FIELDS
from fbsim.rules import Rules, rules_vector

__all__ = ["simulate", "aggregate_records", "aggregate_names", "KERNEL_VERSION", "GAME_FIELDS",
           "SEAT_FIELDS"]


def bot_arrays(rules: Rules, lineup: Lineup):
    """P: one parameter row per lineup entry (`Lineup.entries()`: the Agendas', then one per
    seat override); the bots (dispatch ids) of the Agendas and of the seat overrides."""
    from fbsim.kernel.dispatch import compiled_bots

    names = compiled_bots()
    P = lineup.param_matrix()

    def bid(name: str) -> int:
        if name not in names:
            raise UsageError(f"bot '{name}' cannot play in the kernel (bots: "
                             f"{', '.join(names)})")
        return names.index(name)

    by_agenda = np.array([bid(lineup.by_agenda[a].bot) for a in L.AGENDA_NAMES],
                         dtype=np.int64)
    seat_bot = np.full(L.MAX_PLAYERS, -1, dtype=np.int64)
    for s, e in lineup.seats.items():
        if s >= rules.players:
            raise UsageError(f"--seat {s}: the table has {rules.players} seats")
        seat_bot[s] = bid(e.bot)
    return P, by_agenda, seat_bot


def simulate(rules: Rules, lineup: Lineup | None = None, seed: int = 0, n_games: int = 1000,
             first_game: int = 0, records: bool = True, chunk: int = 256,
             progress=None) -> dict:
    """Play games first_game .. first_game + n_games - 1.

    records=True: one array per record field (game fields 1-D over games; seat fields
    [games, players], `bot` being the seat's lineup entry, `Lineup.entries()`; `assets`
    [games, players, kinds] in the order of `rules.asset_names`; `dial_by_round`
    [games, rounds]: the Dial as each round ended, a finished game's final Dial after its
    end).
    records=False: only aggregate counts (see `aggregate_names`), streamed in blocks so that
    memory does not grow with n_games; `progress(done)` is called after each block.
    The result of every game depends only on (rules, lineup, seed, game index).
    """
    lineup = lineup or Lineup()
    if n_games < 0 or first_game < 0 or seed < 0:
        raise UsageError("n_games, first_game and seed must be >= 0")
    R = rules_vector(rules)
    P, by_agenda, seat_bot = bot_arrays(rules, lineup)
    chunk = max(1, int(chunk))
    if records:
        return _records(rules, R, P, by_agenda, seat_bot, seed, first_game, n_games, chunk)
    return _aggregate(rules, R, P, by_agenda, seat_bot, seed, first_game, n_games, chunk,
                      progress)


def _illegal(first_game: int, j: int, e: int) -> FbsimError:
    code, r, s = e // 1000, (e % 1000) // 10, e % 10
    return FbsimError(f"game {first_game + j}: an illegal bot decision at round {r}, seat {s} "
                      f"({ERR_RULES[code]}); replay it: fbsim replay --game {first_game + j}")


def _records(rules, R, P, by_agenda, seat_bot, seed, first_game, n_games, chunk):
    from fbsim.kernel.engine import run_games

    n = rules.players
    G = np.zeros((n_games, len(GAME_FIELDS) + 1), dtype=np.int64)
    SE = np.zeros((n_games, len(SEAT_FIELDS), L.MAX_PLAYERS), dtype=np.int64)
    AS = np.zeros((n_games, L.MAX_PLAYERS, L.MAX_KINDS), dtype=np.int64)
    DR = np.zeros((n_games, L.MAX_ROUNDS), dtype=np.int64)
    run_games(R, P, by_agenda, seat_bot, np.int64(seed), np.int64(first_game),
              np.int64(n_games), np.int64(chunk), True, G, SE, AS, DR,
              np.zeros((0, KL.AC_SIZE), dtype=np.int64))
    errors = G[:, len(GAME_FIELDS)]
    bad = np.flatnonzero(errors)
    if bad.size:
        raise _illegal(first_game, int(bad[0]), int(errors[bad[0]]))
    out: dict[str, np.ndarray] = {"game": np.arange(first_game, first_game + n_games,
                                                   dtype=np.int64)}
    for i, f in enumerate(GAME_FIELDS):
        out[f] = G[:, i]
    for i, f in enumerate(SEAT_FIELDS):
        out[f] = SE[:, i, :n]
    out["assets"] = AS[:, :n, :len(rules.assets)]
    out["dial_by_round"] = DR[:, :rules.rounds]
    return out


AGGREGATE_FIELDS = {
    # name: (first index, length); arrays are indexed as in fbsim.game.layout
    "games": (KL.AC_GAMES, 0), "ends": (KL.AC_END, 3), "bands": (KL.AC_BAND, 4),
    "wins_agenda": (KL.AC_WIN_AGENDA, 3), "nobody": (KL.AC_NOBODY, 0),
    "wins_seat": (KL.AC_WIN_SEAT, L.MAX_PLAYERS), "wins_bot": (KL.AC_WIN_BOT, KL.MAX_BOTS),
    "seats_bot": (KL.AC_SEATS_BOT, KL.MAX_BOTS), "dealt": (KL.AC_DEALT, 3),
    "games_with_agenda": (KL.AC_GAMES_WITH_AGENDA, 3), "legacy_sum": (KL.AC_LEGACY_SUM, 3),
    "legacy_n": (KL.AC_LEGACY_N, 3), "capital_sum": (KL.AC_CAPITAL_SUM, 3),
    "rounds_sum": (KL.AC_ROUNDS_SUM, 0), "dial_sum": (KL.AC_DIAL_SUM, 0),
    "dial_sq_sum": (KL.AC_DIAL_SQ_SUM, 0), "masks_used": (KL.AC_MASKS_USED, 0),
    "fog_in": (KL.AC_FOG_IN, 0), "fog_requested": (KL.AC_FOG_REQUESTED, 0),
    "fog_received": (KL.AC_FOG_RECEIVED, 0), "overclaim": (KL.AC_OVERCLAIM, 0),
    "overclaimers": (KL.AC_OVERCLAIMERS, 0), "dial_hist": (KL.AC_DIAL_HIST, KL.DIAL_BINS),
    "dial_round_hist": (KL.AC_DIAL_ROUND_HIST, L.MAX_ROUNDS * KL.DIAL_BINS),
}


def aggregate_names() -> list[str]:
    return list(AGGREGATE_FIELDS)


def _unpack(total: np.ndarray, rounds: int) -> dict:
    out = {}
    for name, (i, n) in AGGREGATE_FIELDS.items():
        out[name] = int(total[i]) if n == 0 else total[i:i + n].copy()
    # [rounds, DIAL_BINS]: row r-1 is the histogram of the Dial at the end of round r
    out["dial_round_hist"] = out["dial_round_hist"].reshape(L.MAX_ROUNDS, KL.DIAL_BINS)[:rounds]
    return out


def _aggregate(rules, R, P, by_agenda, seat_bot, seed, first_game, n_games, chunk, progress):
    from fbsim.kernel.engine import run_games

    empty = (np.zeros((0, len(GAME_FIELDS) + 1), dtype=np.int64),
             np.zeros((0, len(SEAT_FIELDS), L.MAX_PLAYERS), dtype=np.int64),
             np.zeros((0, L.MAX_PLAYERS, L.MAX_KINDS), dtype=np.int64),
             np.zeros((0, L.MAX_ROUNDS), dtype=np.int64))
    chunks_per_block = 64
    block = chunk * chunks_per_block
    ACC = np.zeros((chunks_per_block, KL.AC_SIZE), dtype=np.int64)
    total = np.zeros(KL.AC_SIZE, dtype=np.int64)
    done = 0
    while done < n_games:
        m = min(block, n_games - done)
        ACC[:] = 0
        run_games(R, P, by_agenda, seat_bot, np.int64(seed), np.int64(first_game + done),
                  np.int64(m), np.int64(chunk), False, *empty, ACC)
        flagged = ACC[:, KL.AC_GAMES] < 0
        if flagged.any():
            bad = int(-ACC[flagged, KL.AC_GAMES].max() - 1)
            # replaying the game alone with records raises the error naming round, seat, rule
            _records(rules, R, P, by_agenda, seat_bot, seed, bad, 1, 1)
            raise FbsimError(f"game {bad}: an illegal bot decision")
        total += ACC.sum(axis=0)
        done += m
        if progress is not None:
            progress(done)
    return _unpack(total, rules.rounds)


def aggregate_records(rec: dict, rules: Rules) -> dict:
    """The records=False counters, computed from per-game records (for checks)."""
    total = np.zeros(KL.AC_SIZE, dtype=np.int64)
    n_games = len(rec["game"])
    total[KL.AC_GAMES] = n_games
    for e in range(3):
        total[KL.AC_END + e] = int((rec["end"] == e).sum())
    for b in range(4):
        total[KL.AC_BAND + b] = int((rec["band"] == b).sum())
    w = rec["winner"]
    idx = np.arange(n_games)
    won = w >= 0
    for a in range(3):
        total[KL.AC_WIN_AGENDA + a] = int((rec["agenda"][idx[won], w[won]] == a).sum())
        total[KL.AC_DEALT + a] = int((rec["agenda"] == a).sum())
        total[KL.AC_GAMES_WITH_AGENDA + a] = int((rec["agenda"] == a).any(axis=1).sum())
        total[KL.AC_CAPITAL_SUM + a] = int(rec["capital"][rec["agenda"] == a].sum())
        surv = (rec["band"] != L.COLLAPSE)[:, None] & (rec["agenda"] == a)
        total[KL.AC_LEGACY_SUM + a] = int(rec["legacy"][surv].sum())
        total[KL.AC_LEGACY_N + a] = int(surv.sum())
    total[KL.AC_NOBODY] = int((~won).sum())
    for s in range(L.MAX_PLAYERS):
        total[KL.AC_WIN_SEAT + s] = int((w == s).sum())
    for b in range(KL.MAX_BOTS):
        total[KL.AC_WIN_BOT + b] = int((rec["bot"][idx[won], w[won]] == b).sum())
        total[KL.AC_SEATS_BOT + b] = int((rec["bot"] == b).sum())
    total[KL.AC_ROUNDS_SUM] = int(rec["rounds_played"].sum())
    dial = rec["final_dial"]
    total[KL.AC_DIAL_SUM] = int(dial.sum())
    total[KL.AC_DIAL_SQ_SUM] = int((dial * dial).sum())
    total[KL.AC_MASKS_USED] = int((rules.masks - rec["masks_left"]).sum())
    total[KL.AC_FOG_IN] = int(rec["fog_in"].sum())
    total[KL.AC_FOG_REQUESTED] = int(rec["fog_requested"].sum())
    total[KL.AC_FOG_RECEIVED] = int(rec["fog_received"].sum())
    over = rec["fog_received"] - rec["fog_in"]
    total[KL.AC_OVERCLAIM] = int(over[over > 0].sum())
    total[KL.AC_OVERCLAIMERS] = int((over > 0).sum())
    bins = np.clip(dial - KL.DIAL_HIST_LO, 0, KL.DIAL_BINS - 1)
    total[KL.AC_DIAL_HIST:KL.AC_DIAL_HIST + KL.DIAL_BINS] = np.bincount(
        bins, minlength=KL.DIAL_BINS)
    by_round = np.clip(rec["dial_by_round"] - KL.DIAL_HIST_LO, 0, KL.DIAL_BINS - 1)
    for r in range(by_round.shape[1]):
        i = KL.AC_DIAL_ROUND_HIST + r * KL.DIAL_BINS
        total[i:i + KL.DIAL_BINS] = np.bincount(by_round[:, r], minlength=KL.DIAL_BINS)
    return _unpack(total, rules.rounds)
