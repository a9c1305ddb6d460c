"""Kernel builds: the engine (`fbsim/kernel/engine.py`) compiled, and cached, once per build;
a build is a numba type (`fbsim.kernel.buildtype`). What a build fixes:

- **checked or fast**: a checked build checks every bot decision against the rules (an
  illegal one stops the game with its rule, `fbsim.kernel.layout.ERR_RULES`); a fast build
  checks none and does not ask a seat that can buy nothing at the market. Every record is the
  same for legal bots (the test suite plays the same games through both).
- **its bots**: in a fast build, the default lineup's and the lineup's own when that makes at
  most `SPECIALISE_MAX` bots (`build_for`; FBSIM_SPECIALISE), else every compiled bot (the
  generic build); a checked build has every compiled bot (one build checks every lineup).
- **the table's shape** (`fbsim.game.shape`), for fast specialised builds of the shapes
  `shaped` names (FBSIM_SHAPES): the five numbers become constants and their loops unroll.
- **the mode** (`fbsim.kernel.dispatch`): play, or record every answer to a tape, replay it
  (the engine-only floor of `fbsim bench`) or replay it and probe one decision (which one,
  the tape says).

`Build.run` plays a range of games in chunks on a pool of threads (the chunk function never
takes the GIL); every game's record depends only on (rules, lineup, seed, game index).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

import numba
import numpy as np
from filelock import FileLock

from fbsim.game.shape import shape_of
from fbsim.kernel import dispatch, engine
from fbsim.kernel.buildtype import Token
from fbsim.kernel.settings import checked_default, shapes_setting, specialise_setting
from fbsim.lineup import Lineup

SPECIALISE_MAX = 4  # builds of at most this many bots are specialised (`build_for`)


@dataclass(frozen=True)
class Build:
    bots: tuple[str, ...]  # the bots compiled in; a seat's bot id is its position here
    checked: bool
    mode: str  # "play", "record", "replay" or "probe" (fbsim.kernel.buildtype.MODES)
    shape: tuple[int, ...] | None = None  # the table's shape it is compiled for (None: any)
    module = engine  # the code that runs; its entry points take `token`

    @cached_property
    def token(self) -> Token:
        """What the engine's entry points take: the build, as their arguments' type."""
        return Token(self.bots, self.checked, self.mode, self.shape)

    @property
    def label(self) -> str:
        which = "generic" if self.bots == dispatch.compiled_bots() else "+".join(self.bots)
        return f"{'checked' if self.checked else 'fast'} {which}" + (
            "" if self.shape is None else " for " + "x".join(map(str, self.shape))) + (
            "" if self.mode == "play" else f" ({self.mode})")

    def bot_id(self, name: str) -> int:
        return self.bots.index(name)

    def run(self, R, P, by_agenda, seat_bot, seed: int, first_game: int, n_games: int,
            chunk: int, out: tuple, tapes: np.ndarray | None = None,
            threads: int | None = None, after=None) -> None:
        """Play games first_game .. first_game + n_games - 1 into `out` = (G, SE, AS, DR),
        in chunks of `chunk` games on `threads` threads (default: numba's thread count).
        `after(lo, hi)`, if given, runs on the same thread once rows lo..hi - 1 are written
        (the runner counts each chunk's games there, in parallel)."""
        self.start(R, P, by_agenda, seat_bot, seed, first_game, n_games, chunk, out, tapes,
                   threads, after)()

    def start(self, R, P, by_agenda, seat_bot, seed: int, first_game: int, n_games: int,
              chunk: int, out: tuple, tapes: np.ndarray | None = None,
              threads: int | None = None, after=None) -> Callable[[], None]:
        """`run`, returning at once when the chunks go to the pool of threads: the returned
        function waits for every chunk (and raises what a chunk raised). On one thread the
        games are played before it returns. The runner keeps a second block of games in the
        pool while it counts the first, so that the threads never wait for it."""
        if self.shape is not None and shape_of(R) != self.shape:
            raise ValueError(f"a build for shape {self.shape} given rules of shape "
                             f"{shape_of(R)}")
        tapes = np.zeros((1, 1), dtype=np.int64) if tapes is None else tapes
        go, build = engine.run_chunk, self.token
        seed, first_game = np.int64(seed), np.int64(first_game)

        def play(lo: int, hi: int) -> None:
            go(R, P, by_agenda, seat_bot, seed, first_game, lo, hi, *out, tapes,
               *engine.scratch(R), build)

        compiled_once(self, lambda: play(0, 0))  # (no game: compiled or loaded only)

        def one(lo: int, hi: int) -> None:
            play(lo, hi)
            if after is not None:
                after(lo, hi)

        return in_spans(one, n_games, chunk, threads)


def in_spans(play: Callable[[int, int], None], n_games: int, chunk: int,
             threads: int | None = None) -> Callable[[], None]:
    """`play(lo, hi)` for the spans [lo, hi) of `chunk` games that cover 0 .. n_games - 1,
    on a pool of `threads` threads (default: numba's thread count); returns the function that
    waits for every span (and raises what a span raised). On one thread the spans are played
    before it returns. Every game loop of the kernel goes through here (`Build.start`, the
    searcher's `fbsim.experiments.search.searcher`)."""
    threads = numba.get_num_threads() if threads is None else threads
    spans = [(lo, min(lo + chunk, n_games)) for lo in range(0, n_games, chunk)]
    if threads <= 1 or len(spans) <= 1:
        for lo, hi in spans:
            play(lo, hi)
        return _done
    pool = _pool(min(threads, numba.config.NUMBA_NUM_THREADS))
    futures = [pool.submit(play, lo, hi) for lo, hi in spans]

    def wait() -> None:
        for f in futures:
            f.result()

    return wait


def _done() -> None:
    pass


_ready: set = set()  # the builds (and entries) this process has compiled or loaded
_ready_lock = threading.Lock()


def compiled_once(build, compile_it: Callable[[], None]) -> None:
    """Run `compile_it` (which compiles `build`, or loads it from numba's disk cache) the first
    time this process plays `build` (a `Build`, or a key naming one of its entry points),
    holding the build's own lock file in the cache folder: another process about to compile
    the same build waits and then loads it (no build is compiled twice), while different
    builds compile in parallel (numba's index files are updated under a lock of their own,
    `fbsim.kernel.cachelock`)."""
    if build in _ready or numba.config.DISABLE_JIT:
        return
    with _ready_lock:
        if build in _ready:
            return
        lock = compile_lock_path(build)
        lock.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(lock), thread_local=False):
            compile_it()
        _ready.add(build)


def compile_lock_path(build) -> Path:
    """The lock file `compiled_once` holds while it compiles or loads `build`: one per build,
    named by a digest of what the build is."""
    digest = hashlib.sha256(repr(build).encode()).hexdigest()[:16]
    return Path(os.environ.get("NUMBA_CACHE_DIR") or ".") / f"fbsim-compile-{digest}.lock"


@cache
def _pool(threads: int) -> ThreadPoolExecutor:
    """The pool of `threads` threads (one per thread count asked for, so that a run asked to
    use k threads never plays on more)."""
    return ThreadPoolExecutor(max_workers=threads, thread_name_prefix=f"fbsim-kernel-{threads}")


@cache
def kernel_build(bots: tuple[str, ...] | None = None, checked: bool = False,
                 mode: str = "play", shape: tuple[int, ...] | None = None) -> Build:
    """The build of these bots (default: every compiled bot), for tables of one shape
    (`fbsim.game.shape.shape_of`) or of any (None); compiled on first use."""
    bots = dispatch.compiled_bots() if bots is None else tuple(bots)
    shape = None if shape is None else tuple(int(d) for d in shape)
    return Build(bots, checked, mode, shape)


def build_for(lineup: Lineup, checked: bool | None = None, mode: str = "play",
              shape: tuple[int, ...] | None = None) -> Build:
    """The build a lineup plays. Fast: the default lineup's bots plus the lineup's own when
    that makes at most SPECIALISE_MAX bots (the default lineup, a seat or an Agenda changed to
    one other bot: a handful of builds in all) and FBSIM_SPECIALISE allows it (`specialised`),
    else the generic build of every compiled bot. Checked (when asked, or when FBSIM_CHECKED=1):
    the generic build, whose every decision is checked (speed is not its point: one build
    checks every lineup). `shape`: the table's shape (`fbsim.game.shape.shape_of` of the rules
    vector to be played); a fast specialised build is compiled for it when `shaped(shape)`
    says so."""
    checked = checked_default() if checked is None else checked
    order = dispatch.compiled_bots()
    bots = order if checked else specialised(lineup)
    one_shape = shape is not None and not checked and bots != order and shaped(shape)
    return kernel_build(bots, checked, mode, tuple(shape) if one_shape else None)


def specialised(lineup: Lineup) -> tuple[str, ...]:
    """The bots of the lineup's fast build: the default lineup's plus its own, in registry
    order, when that makes at most SPECIALISE_MAX bots and FBSIM_SPECIALISE allows it
    (`lineups`: any such lineup; `default`: the default lineup's bots only; `none`: never),
    else every compiled bot. Every build plays the same games (tests/test_fast_build.py)."""
    order = dispatch.compiled_bots()
    setting = specialise_setting()
    default = {e.bot for e in Lineup().entries() if e is not None}
    used = default | {e.bot for e in lineup.entries() if e is not None}
    if setting == "none" or (setting == "default" and used != default):
        return order
    if len(used) <= SPECIALISE_MAX and used <= set(order):
        return tuple(b for b in order if b in used)
    return order


@cache
def standard_shapes() -> frozenset[tuple[int, ...]]:
    """The shapes of the default rules at every table size (3-6 players)."""
    from fbsim.rules import load_rules, rules_vector

    return frozenset(shape_of(rules_vector(load_rules(players=n))) for n in range(3, 7))


def shaped(shape: tuple[int, ...]) -> bool:
    """Whether a fast build is compiled for tables of this shape (FBSIM_SHAPES: `standard`,
    the default rules' shapes at 3-6 players, which sweeps of any other rule keep; `all`,
    every shape; `none`). A build for one shape compiles once per shape (cached like any
    build) and plays the same games, faster (results/bench.md); rule sets of other shapes
    play the build for any shape."""
    setting = shapes_setting()
    if setting == "all":
        return True
    return setting == "standard" and tuple(shape) in standard_shapes()
