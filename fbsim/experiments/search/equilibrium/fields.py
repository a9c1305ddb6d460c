"""A field from a search's populations and mixture: the `field` bot's entry and lineup."""

from __future__ import annotations

import numpy as np

from fbsim.game import layout as L
from fbsim.game.lineup import Entry, Lineup
from fbsim.policies.field import COMPONENTS, field_params


def planner(params: dict) -> Entry:
    return Entry.make("planner", params)


def field_entry(strategies: list[dict], weights, draw: str) -> Entry:
    """A field entry mixing the strategies of positive weight (at most COMPONENTS, the
    heaviest, renormalised), drawn per seat or per Agenda (`draw`)."""
    weights = np.asarray(weights, dtype=float)
    order = [i for i in np.argsort(-weights, kind="stable") if weights[i] > 0][:COMPONENTS]
    total = float(sum(weights[i] for i in order))
    comps = [(round(float(weights[i]) / total, 6), planner(strategies[i]).as_dict())
             for i in order]
    return Entry.make("field", field_params(comps, draw))


def field_lineup(pops: dict[str, list[dict]], mix: dict[str, list[float]], draw: str
                 ) -> Lineup:
    return Lineup({a: field_entry(pops[a], mix[a], draw) for a in L.AGENDA_NAMES})
