"""Bots: one module per bot, discovered by name. Adding a bot means adding one module.

A bot module defines `BOT = BotSpec(...)` with its five decision functions (RULES.md
section P), each `f(R, V, P, seed, game)` over the rules vector `R`, the player's view `V`
(both int64, layouts in `fbsim.game.layout`), the bot's parameter vector `P` (float64, named by
`BotSpec.params`; each lineup entry gives its own, `fbsim.lineup`) and the game's RNG
coordinates. Compiled bots are `fbsim.game.jit.shared` functions, so the reference engine and
the kernel run the same code. The view holds only what
the player may know (section I), so a bot cannot read a rival's hidden state.

- commit(...) -> (works, cool, burn, masked_cool, masked_burn)      R-C1..R-C3
- fog_request(...) -> amount >= 0                                   R-V5
- market(...) -> a market slot to buy, or -1 to take wages          R-V6
- accuse(...) -> a seat to point at, or -1 to abstain               R-A1
- cornered(...) -> 1 to reveal, 0 to pay                            R-A4
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache

import numpy as np

from fbsim.game import layout as L


@dataclass(frozen=True)
class Param:
    name: str
    default: float
    help: str
    lo: float | None = None
    hi: float | None = None
    # True: left out of a lineup's hash while at its default (`fbsim.lineup.Lineup.canonical`),
    # so that declaring it changed the hash of no lineup written before it
    quiet: bool = False
    choices: tuple[float, ...] = ()  # the values it takes, where not every value in range


def param_index(params: tuple[Param, ...], name: str) -> int:
    """Where parameter `name` sits in a bot's declarations: the index its compiled code reads
    its parameter vector `P` at (`P_AIM = param_index(PARAMS, "aim")`), so that a parameter
    inserted in the declarations moves every later index with it."""
    for i, p in enumerate(params):
        if p.name == name:
            return i
    raise ValueError(f"no parameter {name!r} among {[p.name for p in params]}")


@dataclass(frozen=True)
class BotSpec:
    name: str
    summary: str
    params: tuple[Param, ...]
    commit: Callable
    fog_request: Callable
    market: Callable
    accuse: Callable
    cornered: Callable
    compiled: bool = True  # False: reference engine only (the scripted bot)
    # `fbsim bots`: list only these parameters, then this note (a bot of many alike)
    listed: tuple[str, ...] | None = None
    note: str = ""
    # the parameters together (each is in range): a message when they cannot be played
    check: Callable[[dict[str, float]], str | None] | None = None

    def defaults(self) -> dict[str, float]:
        """Every parameter at its default, in the bot's order."""
        return {p.name: float(p.default) for p in self.params}

    def param_vector(self, values: Mapping[str, float] | None = None) -> np.ndarray:
        """The vector `P` the bot's decisions read (defaults where `values` gives none)."""
        p = np.zeros(L.MAX_BOT_PARAMS, dtype=np.float64)
        for i, param in enumerate(self.params):
            v = param.default if values is None else values.get(param.name, param.default)
            p[i] = v
        return p


@cache
def registry() -> dict[str, BotSpec]:
    """Every bot module of this package, by its name (sorted; the index is the bot id)."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name == "common":
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        spec = getattr(mod, "BOT", None)
        if isinstance(spec, BotSpec):
            if len(spec.params) > L.MAX_BOT_PARAMS:
                raise RuntimeError(f"bot {spec.name} has more than {L.MAX_BOT_PARAMS} params")
            found[spec.name] = spec
    return dict(sorted(found.items()))


def bot_names(compiled_only: bool = False) -> list[str]:
    return [n for n, s in registry().items() if s.compiled or not compiled_only]
