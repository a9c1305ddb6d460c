"""What a kernel build is, as a numba type: the one way the kernel is specialised.

A build (`fbsim.kernel.build.Build`) is the engine (`fbsim/kernel/engine.py`, the code that
runs) compiled for: the bots that answer the decisions, whether their decisions are checked
against the rules, how they are asked (`MODES`: play, or record to / replay (and probe) from
a tape for `fbsim bench`), and the table's shape or any. Its entry points take a `token`, an object
whose numba type, `BuildType`, carries those four things. numba compiles each
entry point once per type and caches it on disk under that type, so each build is compiled
and cached on its own, and nothing is generated or spliced:

- `rules_of(rules, token)`: the rules vector, typed with the shape in a build for one shape
  (`fbsim.game.shape.Shaped`: its five numbers become constants);
- `tape_of(tape, token)`: the game's tape, typed `TapeType` with the bots, the checks and the
  mode. The engine passes it to every step that asks a bot; `checked(T)` and the dispatch
  (`fbsim.kernel.dispatch`) read the build from its type, so they compile to the build's own
  code (a constant, a branch over its bots).

With `NUMBA_DISABLE_JIT=1` the same functions run as Python on array views that carry the
build as attributes: a fast build's game can be stepped through in a debugger.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.core.datamodel import register_default
from numba.core.datamodel.models import ArrayModel, OpaqueModel
from numba.extending import NativeValue, intrinsic, overload, unbox

from fbsim.game.shape import Shaped

MODES = ("play", "record", "replay", "probe")  # how a build asks its bots (`kernel.dispatch`)


class _Build:
    """What a token and the numba types hold: the bots, the checks, the mode, the shape."""

    def _hold(self, bots, checked: bool, mode: str, dims) -> None:
        self.bots, self.checked, self.mode = tuple(bots), bool(checked), mode
        self.dims = None if dims is None else tuple(int(d) for d in dims)

    def build(self) -> tuple:
        return self.bots, self.checked, self.mode, self.dims

    def _name(self, kind: str) -> str:
        shape = "any" if self.dims is None else "x".join(map(str, self.dims))
        return (f"{kind}({'+'.join(self.bots)}; {'checked' if self.checked else 'fast'}; "
                f"{self.mode}; {shape})")

    @property
    def mangling_args(self):  # each build's functions have names of their own
        return type(self).__name__, [*self.bots, int(self.checked), self.mode,
                                     *(self.dims or ())]


class Built(_Build, np.ndarray):
    """With the JIT off: a game's tape as a view that carries its build (`bots`, `checked`,
    `mode`, `dims`), which the dispatch and `checked` read."""

    bots: tuple[str, ...] = ()
    checked: bool = True
    mode: str = "play"
    dims: tuple[int, ...] | None = None

    def __array_finalize__(self, obj):
        for name in ("bots", "checked", "mode", "dims"):
            setattr(self, name, getattr(obj, name, getattr(Built, name)))


class Token(_Build):
    """A build's token: what its entry points take (see the module's docstring). numba types
    it `BuildType` (it holds no data: only its type is read, at compile time)."""

    __slots__ = ("bots", "checked", "mode", "dims", "_numba_type_")

    def __init__(self, bots: tuple[str, ...], checked: bool, mode: str,
                 dims: tuple[int, ...] | None):
        self._hold(bots, checked, mode, dims)
        self._numba_type_ = BuildType(*self.build())


class BuildType(_Build, types.Type):
    """numba's type of a build's token (no data)."""

    def __init__(self, bots, checked: bool, mode: str, dims):
        self._hold(bots, checked, mode, dims)
        super().__init__(name=self._name("build"))

    @property
    def key(self):
        return self.build()


class TapeType(_Build, types.Array):
    """numba's type of a game's tape in a build: an int64 vector whose type holds the build,
    what the steps that ask a bot read."""

    def __init__(self, bots, checked: bool, mode: str, dims):
        self._hold(bots, checked, mode, dims)
        super().__init__(types.int64, 1, "C", name=self._name("tape"))

    @property
    def key(self):
        return types.Array.key.fget(self) + self.build()


register_default(BuildType)(OpaqueModel)
register_default(TapeType)(ArrayModel)


@unbox(BuildType)
def _unbox_token(typ, obj, c):
    return NativeValue(c.context.get_dummy_value())  # only the type is read


def _same_vector(context, builder, sig, args):
    return args[0]  # the same array, typed anew (shared code counts no references)


if numba.config.DISABLE_JIT:
    def rules_of(rules, token):
        return rules

    def tape_of(tape, token):
        t = tape.view(Built)
        t._hold(*token.build())
        return t
else:
    @intrinsic
    def rules_of(typingctx, rules, token):
        """The rules vector as the build reads it: typed with its shape (`Shaped`), or as
        it is in a build for any shape."""
        if not isinstance(token, BuildType):
            return None
        if token.dims is None:
            return rules(rules, token), _same_vector
        return Shaped(token.dims)(rules, token), _same_vector

    @intrinsic
    def tape_of(typingctx, tape, token):
        """A game's tape (int64 vector) typed with the build (`TapeType`)."""
        if not (isinstance(token, BuildType) and isinstance(tape, types.Array)
                and tape.ndim == 1 and tape.dtype == types.int64):
            return None
        return TapeType(*token.build())(tape, token), _same_vector


def checked(T) -> bool:
    """Whether the build of tape T checks every bot decision against the rules."""
    return getattr(T, "checked", True)


@overload(checked, inline="always")
def _checked(T):
    value = T.checked if isinstance(T, TapeType) else True
    return lambda T: value
