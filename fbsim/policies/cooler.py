"""`cooler`: the example of a bot in one file. Every round it puts as many Agents on open
COOL as it can pay for while keeping `reserve` Capital (R-C3), the rest on WORKS; it never
masks, claims, buys or points, and reveals when cornered."""

from __future__ import annotations

from fbsim.game import layout as L
from fbsim.game.jit import shared
from fbsim.game.public import mine
from fbsim.policies import BotSpec, Param


@shared
def commit(R, V, P, seed, game):  # R-C1..R-C3: (works, cool, burn, masked cool, masked burn)
    spare = max(0, mine(V, L.V_MY_CAPITAL) - int(P[0]))
    cool = min(R[L.R_AGENTS], spare // max(1, R[L.R_COOL_COST]))
    return R[L.R_AGENTS] - cool, cool, 0, 0, 0


@shared
def no_claim(R, V, P, seed, game):  # R-V5: claims nothing from the Fog pot
    return 0


@shared
def decline(R, V, P, seed, game):  # R-V6: wages, no purchase; R-A1: abstains
    return -1


@shared
def reveal(R, V, P, seed, game):  # R-A4: reveal rather than pay
    return 1


BOT = BotSpec(name="cooler", summary="open COOL with all the Capital above a reserve",
              params=(Param("reserve", 2.0, "Capital kept back from cooling", 0.0, 100.0),),
              commit=commit, fog_request=no_claim, market=decline, accuse=decline,
              cornered=reveal)
