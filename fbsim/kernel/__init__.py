"""The numba kernel: many full games at once, each identical to the reference engine's.

    simulate(rules, lineup, seed, n_games, first_game=0) -> dict of numpy arrays

Game `first_game + j` of a run is the game `fbsim replay --seed S --game G` narrates.
"""

from __future__ import annotations

import numpy as np

from fbsim.errors import FbsimError, UsageError
from fbsim.game import layout as L
from fbsim.game import record as GR
from fbsim.kernel.layout import ERR_RULES, G_COLUMNS, G_ERROR, KERNEL_VERSION
from fbsim.lineup import Lineup
from fbsim.rules import Rules, rules_vector

__all__ = ["simulate", "Prepared", "Records", "KERNEL_VERSION"]


def bot_arrays(rules: Rules, lineup: Lineup, build=None):
    """P: one parameter row per lineup entry (`Lineup.entries()`: the Agendas', then one per
    seat override); the bots (ids in `build`, default the generic build) of the Agendas and
    of the seat overrides."""
    from fbsim.kernel.build import kernel_build

    names = (build or kernel_build(checked=True)).bots
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
             first_game: int = 0, records: bool = True, chunk: int | None = None,
             checked: bool | None = None, out: Records | None = None,
             threads: int | None = None, after=None) -> dict:
    """Play games first_game .. first_game + n_games - 1; their records.

    One int64 array per record field (`fbsim.game.record`), after `game` (the game indices):
    game fields 1-D over games; seat fields [games, players], `bot` being the seat's lineup
    entry (`Lineup.entries()`); `assets` [games, players, kinds] in the order of
    `rules.asset_names`; `dial_by_round` [games, rounds]: the Dial as each round ended, a
    finished game's final Dial after its end. The kernel only plays: counting is the metrics'
    (`fbsim.experiments.metrics`), and long runs go block by block through the runner
    (`fbsim.experiments.run.runner.run_blocks`), so `records=False` is refused. The result
    of every game depends only on (rules, lineup, seed, game index), never on `chunk`,
    `threads` or the build.

    checked: play the checked build (every bot decision checked against the rules; default:
    the fast build, or checked when FBSIM_CHECKED=1; `fbsim.kernel.build`). out: arrays to
    reuse (`Records`, at least n_games rows); the result's arrays are then views into them.
    after: `after(arrays, lo, hi)` runs on the kernel's thread as soon as rows lo..hi - 1 of
    `arrays` (G, SE, AS, DR) are written, chunk by chunk (what the runner counts them with).
    """
    lineup = lineup or Lineup()
    if not records:
        raise UsageError("the kernel returns records only; count them with the metrics "
                         "(fbsim.experiments.metrics.tally.Tally), block by block through "
                         "fbsim.experiments.run.runner.run_blocks")
    if n_games < 0 or first_game < 0 or seed < 0:
        raise UsageError("n_games, first_game and seed must be >= 0")
    return Prepared(rules, lineup, checked).start(seed, first_game, n_games, out, chunk,
                                                  threads, after)()


class Prepared:
    """One setting (rules and lineup) made ready to play: its build (`fbsim.kernel.build`)
    and the arrays the kernel reads (the rules vector, the bots' parameters and ids), made
    once for a whole run of blocks."""

    def __init__(self, rules: Rules, lineup: Lineup | None = None,
                 checked: bool | None = None):
        from fbsim.game.shape import shape_of
        from fbsim.kernel.build import build_for

        self.rules = rules
        self.lineup = lineup or Lineup()
        self.R = rules_vector(rules)
        self.build = build_for(self.lineup, checked, shape=shape_of(self.R))
        self.P, self.by_agenda, self.seat_bot = bot_arrays(rules, self.lineup, self.build)

    def start(self, seed: int, first_game: int, n_games: int, out: Records | None = None,
              chunk: int | None = None, threads: int | None = None, after=None):
        """Start playing games first_game .. first_game + n_games - 1 (as `simulate`); the
        returned function waits for them and returns their columns. Until it has returned,
        the games are being written into `out`'s arrays."""
        if out is None or out.capacity < n_games:
            out = Records(n_games)
        arrays = out.arrays(n_games)
        wait = self.build.start(
            self.R, self.P, self.by_agenda, self.seat_bot, seed, first_game, n_games,
            chunk_size(n_games, chunk), arrays, threads=threads,
            after=None if after is None else (lambda lo, hi: after(arrays, lo, hi)))

        def result() -> dict:
            wait()
            return columns(self.rules, arrays, first_game, n_games)

        return result


def chunk_size(n_games: int, chunk: int | None) -> int:
    """Games per chunk (a thread's share at a time): given, or enough chunks to keep every
    thread busy without a per-call cost that shows."""
    if chunk is not None:
        return max(1, int(chunk))
    import numba

    return max(256, min(4096, -(-n_games // (4 * numba.get_num_threads()))))


class Records:
    """The kernel's output arrays for up to `capacity` games, reusable block after block (one
    array per shape of the record, `fbsim.kernel.layout`)."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.G = np.empty((capacity, G_COLUMNS), dtype=np.int64)
        self.SE = np.empty((capacity, len(GR.SEAT_FIELDS), L.MAX_PLAYERS), dtype=np.int64)
        self.AS = np.empty((capacity, len(GR.SEAT_KIND_FIELDS), L.MAX_PLAYERS, L.MAX_KINDS),
                           dtype=np.int64)
        self.DR = np.empty((capacity, len(GR.ROUND_FIELDS), L.MAX_ROUNDS), dtype=np.int64)

    def arrays(self, n: int) -> tuple:
        return self.G[:n], self.SE[:n], self.AS[:n], self.DR[:n]


class Columns(dict):
    """The record's columns by field name; `kernel_arrays` holds the kernel's arrays they are
    views of (G, SE, AS, DR), which the metrics read in place."""

    kernel_arrays: tuple


def _illegal(first_game: int, j: int, e: int) -> FbsimError:
    code, r, s = e // 1000, (e % 1000) // 10, e % 10
    return FbsimError(f"game {first_game + j}: an illegal bot decision at round {r}, seat {s} "
                      f"({ERR_RULES[code]}); replay it: fbsim replay --game {first_game + j}")


def columns(rules: Rules, arrays: tuple, first_game: int, n_games: int) -> dict:
    """The record's columns (views into the kernel's arrays), or the first illegal decision."""
    G, SE, AS, DR = arrays
    errors = G[:, G_ERROR]
    if errors.any():  # (a strided column: any() reads it in place, flatnonzero copies it)
        bad = int(np.flatnonzero(errors)[0])
        raise _illegal(first_game, bad, int(errors[bad]))
    n, kinds, rounds = rules.players, len(rules.assets), rules.rounds
    out = Columns({GR.INDEX.name: np.arange(first_game, first_game + n_games, dtype=np.int64)})
    out.kernel_arrays = arrays
    for i, f in enumerate(GR.GAME_FIELDS):
        out[f] = G[:, i]
    for i, f in enumerate(GR.SEAT_FIELDS):
        out[f] = SE[:, i, :n]
    for i, f in enumerate(GR.SEAT_KIND_FIELDS):
        out[f] = AS[:, i, :n, :kinds]
    for i, f in enumerate(GR.ROUND_FIELDS):
        out[f] = DR[:, i, :rounds]
    return out
