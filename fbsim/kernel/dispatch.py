"""From a bot id to that bot's decision, as the build of the tape says.

Every decision is `f(bot, R, V, P, seed, game, T)`. T is the game's tape, whose type carries
the build (`fbsim.kernel.buildtype.TapeType`): its bots (a seat's bot id is its position among
them; records name a seat's lineup entry instead, `fbsim.lineup`) and how they are asked:

- `play`: ask the seat's bot (T is never read);
- `record`: ask it and append its answer to the tape (`T[0]` is the cursor);
- `replay`: read the answer from the tape, asking no bot (the engine-only floor of
  `fbsim bench`);
- `probe`: replay, and also ask the bots the one decision the tape's word `PROBE_WORDS` from
  its end names (its index in DECISIONS; -1, none), adding each answer to the tape's last
  word and counting the questions in the word before it (the cost of one decision on the
  floor's own games, `fbsim bench --decisions`; one build probes every decision).

Compiled, a decision is a branch over the build's bots, each bot's decision inlined
(`implementation`); a tape of no build (a plain array) plays every compiled bot. With the JIT
off the same functions run as Python.
"""

from __future__ import annotations

from functools import cache

import numba
from numba.extending import overload

from fbsim.game.jit import shared_inline
from fbsim.kernel.buildtype import MODES, TapeType
from fbsim.policies import registry

DECISIONS = ("commit", "fog_request", "market", "accuse", "cornered")
ANSWERS = {"commit": 5, "fog_request": 1, "market": 1, "accuse": 1, "cornered": 1}
PROBE_WORDS = 3  # a probing tape's last words: the decision probed, questions, answers' sum

inline = numba.njit(inline="always", nogil=True, _nrt=False)


def probe(tapes, decision: str | None) -> None:
    """Make a probing build ask `decision` (None: no decision) as it replays these tapes (one
    per game, PROBE_WORDS longer than the answers), its counts set to 0."""
    if decision is not None and decision not in DECISIONS:
        raise ValueError(f"unknown decision {decision!r}")
    tapes[:, -PROBE_WORDS:] = 0
    tapes[:, -PROBE_WORDS] = -1 if decision is None else DECISIONS.index(decision)


@cache
def compiled_bots() -> tuple[str, ...]:
    """Names of the bots the kernel can play, in registry order (the generic build's ids)."""
    return tuple(n for n, s in registry().items() if s.compiled)


def _branch(i: int, decide, rest):
    def ask(bot, R, V, P, seed, game):
        if bot == i:
            return decide(R, V, P, seed, game)
        return rest(bot, R, V, P, seed, game)

    return ask


def _last(decide):
    def ask(bot, R, V, P, seed, game):  # any other id (ids are checked before a run)
        return decide(R, V, P, seed, game)

    return ask


def _ask(d: str, bots: tuple[str, ...]):
    """`ask(bot, R, V, P, seed, game)`: the branch over the bots' ids, each bot's decision
    inlined (its helpers stay calls)."""
    fns = [getattr(registry()[b], d) for b in bots]
    fns = [shared_inline(getattr(f, "py_func", f)) for f in fns]
    ask = _last(fns[-1])
    for i in reversed(range(len(fns) - 1)):
        ask = _branch(i, fns[i], inline(ask))
    return ask


def _record(ask, k: int):
    if k == 1:
        def decide(bot, R, V, P, seed, game, T):
            a = ask(bot, R, V, P, seed, game)
            c = T[0]
            T[c + 1] = a
            T[0] = c + 1
            return a
    else:
        def decide(bot, R, V, P, seed, game, T):
            a0, a1, a2, a3, a4 = ask(bot, R, V, P, seed, game)
            c = T[0]
            T[c + 1], T[c + 2], T[c + 3], T[c + 4], T[c + 5] = a0, a1, a2, a3, a4
            T[0] = c + 5
            return a0, a1, a2, a3, a4
    return decide


def _replay(probe, k: int):
    """The tape's answer; `probe(bot, R, V, P, seed, game, T)` runs first (asks on the side)."""
    if k == 1:
        def decide(bot, R, V, P, seed, game, T):
            probe(bot, R, V, P, seed, game, T)
            c = T[0]
            T[0] = c + 1
            return T[c + 1]
    else:
        def decide(bot, R, V, P, seed, game, T):
            probe(bot, R, V, P, seed, game, T)
            c = T[0]
            T[0] = c + 5
            return T[c + 1], T[c + 2], T[c + 3], T[c + 4], T[c + 5]
    return decide


def _no_probe(bot, R, V, P, seed, game, T):
    pass


def _probe(ask, k: int, which: int):
    if k == 1:
        def probe(bot, R, V, P, seed, game, T):
            n = T.shape[0]
            if T[n - PROBE_WORDS] == which:
                a = ask(bot, R, V, P, seed, game)
                T[n - 2] += 1
                T[n - 1] += a
    else:
        def probe(bot, R, V, P, seed, game, T):
            n = T.shape[0]
            if T[n - PROBE_WORDS] == which:
                a0, a1, a2, a3, a4 = ask(bot, R, V, P, seed, game)
                T[n - 2] += 1
                T[n - 1] += a0 + a1 + a2 + a3 + a4
    return probe


@cache
def implementation(d: str, bots: tuple[str, ...], mode: str):
    """Decision `d` of a build of these bots in this mode (see the module's docstring)."""
    if mode not in MODES:
        raise ValueError(f"unknown dispatch mode {mode!r}")
    k = ANSWERS[d]
    if mode == "play":
        ask = inline(_ask(d, bots))

        def decide(bot, R, V, P, seed, game, T):
            return ask(bot, R, V, P, seed, game)

        return decide
    if mode == "record":
        return _record(inline(_ask(d, bots)), k)
    probe = (_probe(inline(_ask(d, bots)), k, DECISIONS.index(d)) if mode == "probe"
             else _no_probe)
    return _replay(inline(probe), k)


def _decision(d: str):
    def decide(bot, R, V, P, seed, game, T):
        build = getattr(T, "bots", None) or compiled_bots(), getattr(T, "mode", "play")
        return implementation(d, *build)(bot, R, V, P, seed, game, T)

    decide.__name__ = decide.__qualname__ = d
    decide.__doc__ = f"The seat's bot's `{d}`, asked as tape T's build says."

    # inlined by numba: the market and the Fog and cornered answers (cheap to type twice);
    # called, for LLVM to inline: the commitment and the Accusation, whose bots' code is the
    # largest to type (a shorter cold start)
    how = {"jit_options": {"nogil": True, "_nrt": False}} if d in ("commit", "accuse") else {
        "inline": "always"}

    @overload(decide, **how)
    def _specialised(bot, R, V, P, seed, game, T):
        if isinstance(T, TapeType):
            return implementation(d, T.bots, T.mode)
        return implementation(d, compiled_bots(), "play")

    return decide


commit = _decision("commit")
fog_request = _decision("fog_request")
market = _decision("market")
accuse = _decision("accuse")
cornered = _decision("cornered")
