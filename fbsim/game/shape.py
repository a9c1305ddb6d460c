"""The table's shape: how many players, rounds, market slots, tipping tokens and asset kinds.

Every loop of the engines and the bots runs over one of these five numbers of the rules
vector, which compiled code reads through the accessors below (`players(R)`, `rounds(R)`,
`market_size(R)`, `n_tokens(R)`, `n_kinds(R)`), never as `R[...]`. In a build for one shape
(`fbsim.kernel.buildtype.rules_of`) the rules vector has the type `Shaped(dims)`, which also
carries the five numbers: every accessor compiles to a constant, and numba compiles every
function passed such a vector once more for it, its loops unrolled. The values read are the
same, so are the records (the test suite plays both builds on the same games). Plain Python
(the reference engine, `NUMBA_DISABLE_JIT=1`) reads the vector.
"""

from __future__ import annotations

from numba import types
from numba.core.datamodel import register_default
from numba.core.datamodel.models import ArrayModel
from numba.extending import overload

from fbsim.game import layout as L

# the fields of the shape, in the order of `Shaped.dims` and `shape_of`
FIELDS = (L.R_PLAYERS, L.R_ROUNDS, L.R_MARKET_SIZE, L.R_N_TOKENS, L.R_N_KINDS)
NAMES = ("players", "rounds", "market_size", "n_tokens", "n_kinds")


def shape_of(R) -> tuple[int, ...]:
    """The shape of rules vector R, in the order of FIELDS."""
    return tuple(int(R[f]) for f in FIELDS)


class Shaped(types.Array):
    """numba's type of a rules vector compiled for one shape: a C-contiguous int64 vector, the
    same in memory as any other, whose type holds `dims` (its FIELDS' values)."""

    def __init__(self, dims: tuple[int, ...]):
        self.dims = tuple(int(d) for d in dims)
        super().__init__(types.int64, 1, "C",
                         name="rules(" + ", ".join(f"{n}={d}" for n, d in
                                                   zip(NAMES, self.dims, strict=True)) + ")")

    @property
    def key(self):
        return super().key + (self.dims,)

    @property
    def mangling_args(self):  # each shape's functions have names of their own
        return "ShapedRules", [*self.dims]


register_default(Shaped)(ArrayModel)


def _accessor(i: int, field: int, name: str):
    def read(R):
        return R[field]

    read.__name__ = read.__qualname__ = name
    read.__doc__ = f"The rules' {name} (R[{field}]); a constant in a build for one shape."

    @overload(read, inline="always")
    def _read(R):
        if isinstance(R, Shaped):
            value = R.dims[i]
            return lambda R: value
        return lambda R: R[field]

    return read


players = _accessor(0, L.R_PLAYERS, "players")
rounds = _accessor(1, L.R_ROUNDS, "rounds")
market_size = _accessor(2, L.R_MARKET_SIZE, "market_size")
n_tokens = _accessor(3, L.R_N_TOKENS, "n_tokens")
n_kinds = _accessor(4, L.R_N_KINDS, "n_kinds")
