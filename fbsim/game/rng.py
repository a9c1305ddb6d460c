"""Counter-based random numbers: every draw is a pure function of its coordinates.

draw(seed, game, round, seat, purpose, counter) hashes the six coordinates with the
splitmix64 finaliser (Steele, Lea and Flood, 2014), so any game, round or decision can be
recomputed alone, in any order, on any thread, with no generator state anywhere. The same
functions run compiled under numba and as plain Python (numpy uint64 scalars wrap the same
way), bit for bit.
"""

from __future__ import annotations

import numpy as np

from fbsim.game.jit import shared

_U = np.uint64
_GOLDEN = _U(0x9E3779B97F4A7C15)
_M1 = _U(0xBF58476D1CE4E5B9)
_M2 = _U(0x94D049BB133111EB)
_S27 = _U(27)
_S30 = _U(30)
_S31 = _U(31)
_S32 = _U(32)


@shared
def mix64(z):
    """splitmix64: one step of the golden-ratio sequence, then the finaliser."""
    z = z + _GOLDEN
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@shared
def draw(seed, game, round_no, seat, purpose, counter):
    """A uniform 32-bit integer (as int64 in [0, 2**32)) for these coordinates.

    seed and game are any non-negative int64; round_no, seat, purpose < 256 and
    counter < 2**32 are packed into one word.
    """
    h = mix64(_U(seed))
    h = mix64(h ^ _U(game))
    packed = (round_no << 48) | (seat << 40) | (purpose << 32) | counter
    h = mix64(h ^ _U(packed))
    return np.int64(h >> _S32)


@shared
def below(n, seed, game, round_no, seat, purpose, counter):
    """A uniform integer in [0, n) for 1 <= n < 2**31 (multiply-shift, bias < n / 2**32)."""
    return (draw(seed, game, round_no, seat, purpose, counter) * n) >> 32


@shared
def shuffle_in_place(a, seed, game, purpose):
    """Fisher-Yates over a 1-D array; draw i decides position len(a) - 1 - i."""
    n = a.shape[0]
    for i in range(n - 1, 0, -1):
        j = below(i + 1, seed, game, 0, 0, purpose, n - 1 - i)
        t = a[i]
        a[i] = a[j]
        a[j] = t
