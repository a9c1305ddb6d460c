"""The numba kernel: many full games at once, each identical to the reference engine's.

    simulate(rules, lineup, seed, n_games, first_game=0) -> dict of numpy arrays

Game `first_game + j` of a run is the game `fbsim replay --seed S --game G` narrates.
"""

from __future__ import annotations

import numpy as np

from fbsim.errors import FbsimError, UsageError
from fbsim.game import layout as L
from fbsim.game import record as GR
from fbsim.game.lineup import Lineup
from fbsim.kernel.layout import ERR_RULES, G_COLUMNS, G_ERROR, KERNEL_VERSION
from fbsim.rules import Rules, rules_vector

__all__ = ["simulate", "KERNEL_VERSION"]


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
             first_game: int = 0, records: bool = True, chunk: int = 256) -> dict:
    """Play games first_game .. first_game + n_games - 1; their records.

    One int64 array per record field (`fbsim.game.record`), after `game` (the game indices):
    game fields 1-D over games; seat fields [games, players], `bot` being the seat's lineup
    entry (`Lineup.entries()`); `assets` [games, players, kinds] in the order of
    `rules.asset_names`; `dial_by_round` [games, rounds]: the Dial as each round ended, a
    finished game's final Dial after its end. The kernel only plays: counting is the metrics'
    (`fbsim.experiments.metrics`), and long runs go block by block through the runner
    (`fbsim.experiments.run.runner.run_blocks`), so `records=False` is refused. The result
    of every game depends only on (rules, lineup, seed, game index).
    """
    lineup = lineup or Lineup()
    if not records:
        raise UsageError("the kernel returns records only; count them with the metrics "
                         "(fbsim.experiments.metrics.tally.Tally), block by block through "
                         "fbsim.experiments.run.runner.run_blocks")
    if n_games < 0 or first_game < 0 or seed < 0:
        raise UsageError("n_games, first_game and seed must be >= 0")
    R = rules_vector(rules)
    P, by_agenda, seat_bot = bot_arrays(rules, lineup)
    return _records(rules, R, P, by_agenda, seat_bot, seed, first_game, n_games,
                    max(1, int(chunk)))


def _illegal(first_game: int, j: int, e: int) -> FbsimError:
    code, r, s = e // 1000, (e % 1000) // 10, e % 10
    return FbsimError(f"game {first_game + j}: an illegal bot decision at round {r}, seat {s} "
                      f"({ERR_RULES[code]}); replay it: fbsim replay --game {first_game + j}")


def _records(rules, R, P, by_agenda, seat_bot, seed, first_game, n_games, chunk):
    from fbsim.kernel.engine import run_games

    G = np.zeros((n_games, G_COLUMNS), dtype=np.int64)
    SE = np.zeros((n_games, len(GR.SEAT_FIELDS), L.MAX_PLAYERS), dtype=np.int64)
    AS = np.zeros((n_games, len(GR.SEAT_KIND_FIELDS), L.MAX_PLAYERS, L.MAX_KINDS),
                  dtype=np.int64)
    DR = np.zeros((n_games, len(GR.ROUND_FIELDS), L.MAX_ROUNDS), dtype=np.int64)
    run_games(R, P, by_agenda, seat_bot, np.int64(seed), np.int64(first_game),
              np.int64(n_games), np.int64(chunk), G, SE, AS, DR)
    errors = G[:, G_ERROR]
    bad = np.flatnonzero(errors)
    if bad.size:
        raise _illegal(first_game, int(bad[0]), int(errors[bad[0]]))
    n, kinds, rounds = rules.players, len(rules.assets), rules.rounds
    out: dict[str, np.ndarray] = {GR.INDEX.name: np.arange(first_game, first_game + n_games,
                                                           dtype=np.int64)}
    for i, f in enumerate(GR.GAME_FIELDS):
        out[f] = G[:, i]
    for i, f in enumerate(GR.SEAT_FIELDS):
        out[f] = SE[:, i, :n]
    for i, f in enumerate(GR.SEAT_KIND_FIELDS):
        out[f] = AS[:, i, :n, :kinds]
    for i, f in enumerate(GR.ROUND_FIELDS):
        out[f] = DR[:, i, :rounds]
    return out
