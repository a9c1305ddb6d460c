"""The numba kernel: many full games at once, each identical to the reference engine's.

    simulate(rules, lineup, seed, n_games, first_game=0) -> dict of numpy arrays

Game `first_game + j` of a run is the game `fbsim replay --seed S --game G` narrates.
"""

from __future__ import annotations

import numpy as np

from fbsim import layout as L
from fbsim.errors import FbsimError, UsageError
from fbsim.kernel.layout import ERR_RULES, GAME_FIELDS, KERNEL_VERSION, SEAT_FIELDS
from fbsim.lineup import Lineup
from fbsim.rules import Rules, rules_vector

__all__ = ["simulate", "KERNEL_VERSION", "GAME_FIELDS", "SEAT_FIELDS"]


def _bot_arrays(rules: Rules, lineup: Lineup):
    from fbsim.kernel.dispatch import compiled_bots
    from fbsim.policies import registry

    names = compiled_bots()
    P = np.zeros((len(names), L.MAX_BOT_PARAMS), dtype=np.float64)
    for i, name in enumerate(names):
        P[i] = registry()[name].param_vector(rules.bots.get(name))

    def bid(name: str) -> int:
        if name not in names:
            raise UsageError(f"bot '{name}' cannot play in the kernel (bots: "
                             f"{', '.join(names)})")
        return names.index(name)

    by_agenda = np.array([bid(lineup.by_agenda[a]) for a in L.AGENDA_NAMES], dtype=np.int64)
    seat_bot = np.full(L.MAX_PLAYERS, -1, dtype=np.int64)
    for s, name in lineup.seats.items():
        if s >= rules.players:
            raise UsageError(f"--seat {s}: the table has {rules.players} seats")
        seat_bot[s] = bid(name)
    return P, by_agenda, seat_bot


def simulate(rules: Rules, lineup: Lineup | None = None, seed: int = 0, n_games: int = 1000,
             first_game: int = 0, chunk: int = 256) -> dict[str, np.ndarray]:
    """Play games first_game .. first_game + n_games - 1; one array per record field.

    Game fields are 1-D over games; seat fields are [games, players]; `assets` is
    [games, players, kinds] in the order of `rules.asset_names`.
    """
    from fbsim.kernel.engine import run_games

    lineup = lineup or Lineup()
    if n_games < 0 or first_game < 0 or seed < 0:
        raise UsageError("n_games, first_game and seed must be >= 0")
    R = rules_vector(rules)
    n = rules.players
    P, by_agenda, seat_bot = _bot_arrays(rules, lineup)
    G = np.zeros((n_games, len(GAME_FIELDS) + 1), dtype=np.int64)
    SE = np.zeros((n_games, len(SEAT_FIELDS), L.MAX_PLAYERS), dtype=np.int64)
    AS = np.zeros((n_games, L.MAX_PLAYERS, L.MAX_KINDS), dtype=np.int64)
    run_games(R, P, by_agenda, seat_bot, np.int64(seed), np.int64(first_game),
              np.int64(n_games), np.int64(max(1, chunk)), G, SE, AS)
    errors = G[:, len(GAME_FIELDS)]
    bad = np.flatnonzero(errors)
    if bad.size:
        e = int(errors[bad[0]])
        code, r, s = e // 1000, (e % 1000) // 10, e % 10
        raise FbsimError(f"game {first_game + int(bad[0])}: an illegal decision at round {r}, "
                         f"seat {s} ({ERR_RULES[code]}); replay it with fbsim replay")
    out: dict[str, np.ndarray] = {"game": np.arange(first_game, first_game + n_games,
                                                   dtype=np.int64)}
    for i, f in enumerate(GAME_FIELDS):
        out[f] = G[:, i]
    for i, f in enumerate(SEAT_FIELDS):
        out[f] = SE[:, i, :n]
    out["assets"] = AS[:, :n, :len(rules.assets)]
    return out
