"""`field`: a mixed strategy, up to `COMPONENTS` planners with weights.

At the start of each game, a field draws one of its components with probability proportional
to `w0` .. `w5`, from the game's own random numbers, in one of two ways (`draw`):

- `draw = 1` ("seat", the default): every seat draws its own component, from (seed, game,
  its seat, its Agenda), independently of the other seats. This is the game as it is played:
  each player chooses alone, and players of one Agenda are rivals for one win (R-E3, R-E4).
- `draw = 0` ("agenda"): one draw per Agenda and game, from (seed, game, the Agenda), shared
  by every seat holding that Agenda: the players of an Agenda act as one team. The fields of
  the team equilibrium are played this way.

Either way the draw is the same in both engines. The component's parameters are the `planner`
bot's, prefixed `c<k>_` (`c0_aim`, `c1_greed`, ...). This is how an equilibrium found by
`fbsim equilibrium` is played: a field file (`results/equilibrium/p4.toml`) is a lineup whose
Agendas play this bot, written in a readable form (`fbsim.lineup`: `mixture`).

The draw uses only the player's own seat and Agenda and the game's coordinates, so the bot
still decides from its own view (R-I3).
"""

from __future__ import annotations

from fbsim.game import layout as L
from fbsim.game.jit import shared
from fbsim.game.public import keep_memo, memo, mine
from fbsim.game.rng import draw
from fbsim.policies import BotSpec, Param
from fbsim.policies.common import greedy_claim
from fbsim.policies.planner import (
    P_GREED,
    PARAMS,
    plan_accuse,
    plan_commit,
    plan_cornered,
    plan_market,
)

COMPONENTS = 6
WIDTH = len(PARAMS)  # parameters per component
P_DRAW = COMPONENTS + COMPONENTS * WIDTH  # after the weights and the components (`_params`)
DRAW_AGENDA, DRAW_SEAT = 0, 1
DRAWS = {"agenda": DRAW_AGENDA, "seat": DRAW_SEAT}  # the lineup files' `draw` key


@shared
def component(P, seed, game, agenda, seat):
    """The offset in P of the component that this seat, holding this Agenda, plays in this
    game (drawn afresh: see `chosen`). Drawn per seat (`P[P_DRAW]` = DRAW_SEAT, 1) or once per
    Agenda (DRAW_AGENDA, 0: the seat is left out of the draw's coordinates)."""
    total = 0.0
    for k in range(COMPONENTS):
        if P[k] > 0.0:
            total += P[k]
    if total <= 0.0:
        return COMPONENTS
    who = seat + 1 if P[P_DRAW] >= 0.5 else 0  # 0: the Agenda's one draw
    u = draw(seed, game, who, agenda, L.PURPOSE_FIELD, 0) * (total / 4294967296.0)
    acc = 0.0
    last = 0
    for k in range(COMPONENTS):
        if P[k] > 0.0:
            acc += P[k]
            last = k
            if u < acc:
                return COMPONENTS + k * WIDTH
    return COMPONENTS + last * WIDTH


@shared
def chosen(V, P, seed, game):
    """`component` of the deciding player's Agenda, drawn once a game and kept as the
    player's memo (`fbsim.game.public.memo`: the draw is the same at every decision of a
    game, and is made once)."""
    o = memo(V)
    if o == L.NO_MEMO:
        o = component(P, seed, game, mine(V, L.V_MY_AGENDA), V[L.V_SEAT])
        keep_memo(V, o)
    return o


@shared
def commit(R, V, P, seed, game):
    return plan_commit(R, V, P, chosen(V, P, seed, game))


@shared
def fog_request(R, V, P, seed, game):
    return greedy_claim(V, P[chosen(V, P, seed, game) + P_GREED])


@shared
def market(R, V, P, seed, game):
    return plan_market(R, V, P, chosen(V, P, seed, game))


@shared
def accuse(R, V, P, seed, game):
    return plan_accuse(R, V, P, chosen(V, P, seed, game))


@shared
def cornered(R, V, P, seed, game):
    return plan_cornered(R, V, P, chosen(V, P, seed, game))


def _params() -> tuple[Param, ...]:
    weights = tuple(Param(f"w{k}", 1.0 if k == 0 else 0.0, f"weight of component {k}", 0, 1)
                    for k in range(COMPONENTS))
    comps = tuple(Param(f"c{k}_{p.name}", p.default, f"component {k}: {p.help}", p.lo, p.hi,
                        p.quiet) for k in range(COMPONENTS) for p in PARAMS)
    how = Param("draw", DRAW_SEAT, "1: every seat draws its own component (the game as "
                "played); 0: one draw per Agenda, shared by its seats (a team)", 0, 1,
                choices=(DRAW_AGENDA, DRAW_SEAT))
    return weights + comps + (how,)


def component_params(values: dict[str, float]) -> list[tuple[float, dict[str, float]]]:
    """A field entry's parameters as (weight, planner parameters) per component of positive
    weight."""
    out = []
    for k in range(COMPONENTS):
        w = float(values.get(f"w{k}", 0.0))
        if w > 0:
            out.append((w, {p.name: float(values.get(f"c{k}_{p.name}", p.default))
                            for p in PARAMS}))
    return out


def field_params(components: list[tuple[float, dict[str, float]]], draw: str = "seat"
                 ) -> dict[str, float]:
    """The inverse of `component_params`: a field entry's parameters (`draw`: "seat" or
    "agenda", `DRAWS`)."""
    if not 1 <= len(components) <= COMPONENTS:
        raise ValueError(f"a field mixes 1 to {COMPONENTS} strategies, got {len(components)}")
    out: dict[str, float] = {}
    for k, (w, params) in enumerate(components):
        out[f"w{k}"] = float(w)
        out.update({f"c{k}_{name}": float(v) for name, v in params.items()})
    for k in range(len(components), COMPONENTS):
        out[f"w{k}"] = 0.0
    out["draw"] = float(DRAWS[draw])
    return out


def draw_name(values: dict[str, float]) -> str:
    """A field entry's draw as the lineup files name it ("seat" or "agenda")."""
    code = int(values.get("draw", DRAW_SEAT))
    return next(k for k, v in DRAWS.items() if v == code)


def _playable(values: dict[str, float]) -> str | None:
    if not component_params(values):
        return (f"the weights w0..w{COMPONENTS - 1} are all 0; give one component a "
                "positive weight")
    return None


BOT = BotSpec(
    name="field",
    summary="field: a mixture of planners, one drawn per Agenda and game (equilibria)",
    params=_params(),
    commit=commit,
    fog_request=fog_request,
    market=market,
    accuse=accuse,
    cornered=cornered,
    listed=tuple(f"w{k}" for k in range(COMPONENTS)) + ("draw",),
    note=f"c<k>_<param> (k = 0..{COMPONENTS - 1}): component k's `planner` parameter <param>, "
         "with the planner's range and default (`planner` above)",
    check=_playable,
)
