"""`scripted`: plays the decisions written in a scripted game (worked examples, tests).

It is not compiled and plays only in the reference engine (`fbsim replay --script`); the
script format is read by `fbsim.reference.script`. For a round or seat the script leaves
out, the script's fallback bot decides.
"""

from __future__ import annotations

from typing import Any

from fbsim.errors import ScriptError, UsageError
from fbsim.game import layout as L
from fbsim.game import shape
from fbsim.game.public import mine
from fbsim.policies import BotSpec


def _needs_script(*args):
    raise UsageError("the scripted bot plays only from a script (fbsim replay --script)")


class ScriptedPolicy:
    """One seat's scripted decisions: `plan[round]` is that round's table (or None)."""

    name = "scripted"

    def __init__(self, seat: int, plan: dict[int, dict[str, Any]], asset_names, fallback):
        self.seat = seat
        self.plan = plan
        self.asset_names = list(asset_names)
        self.fallback = fallback

    def _entry(self, V, what: str):
        entry = self.plan.get(int(V[L.V_ROUND]))
        if entry is None:
            if self.fallback is None:
                raise ScriptError(f"the script gives no {what} (add it, or name a fallback "
                                  "bot)", int(V[L.V_ROUND]), self.seat)
        return entry

    def commit(self, R, V, seed, game):
        e = self._entry(V, "commitment")
        if e is None:
            return self.fallback.commit(R, V, seed, game)
        return (e.get("works", 0), e.get("cool", 0), e.get("burn", 0),
                e.get("masked_cool", 0), e.get("masked_burn", 0))

    def fog_request(self, R, V, seed, game):
        e = self._entry(V, "Fog request")
        if e is None:
            return self.fallback.fog_request(R, V, seed, game)
        return e.get("request", 0)

    def market(self, R, V, seed, game):
        e = self._entry(V, "market turn")
        if e is None:
            return self.fallback.market(R, V, seed, game)
        buys = e.get("buy", [])
        i = int(mine(V, L.V_MY_BOUGHT))
        if i >= len(buys):
            return -1
        kind = self.asset_names.index(buys[i])
        for m in range(shape.market_size(R)):
            if V[L.V_MARKET + m] == kind:
                return m
        market = [self.asset_names[k] for k in V[L.V_MARKET:L.V_MARKET + shape.market_size(R)]
                  if k >= 0]
        raise ScriptError(f"buys a {buys[i]}, which is not in the market "
                          f"({', '.join(market) or 'empty'})", int(V[L.V_ROUND]), self.seat,
                          "R-V6")

    def accuse(self, R, V, seed, game):
        e = self._entry(V, "Accusation point")
        if e is None:
            return self.fallback.accuse(R, V, seed, game)
        return e.get("point", -1)

    def cornered(self, R, V, seed, game):
        e = self._entry(V, "cornered choice")
        if e is None:
            return self.fallback.cornered(R, V, seed, game)
        return 1 if e.get("cornered", "reveal") == "reveal" else 0

    def illegal(self, message: str, round_no: int, seat: int, rule: str) -> Exception:
        return ScriptError(message, round_no, seat, rule)


BOT = BotSpec(
    name="scripted",
    summary="plays the decisions of a scripted game",
    params=(),
    commit=_needs_script,
    fog_request=_needs_script,
    market=_needs_script,
    accuse=_needs_script,
    cornered=_needs_script,
    compiled=False,
)
