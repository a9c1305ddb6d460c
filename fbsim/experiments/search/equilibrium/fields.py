"""A field from a search's populations and mixture: the `field` bot's entry and lineup."""

from __future__ import annotations

import numpy as np

from fbsim.errors import ConfigError
from fbsim.game import layout as L
from fbsim.lineup import Entry, Lineup
from fbsim.policies.field import COMPONENTS, field_params


def planner(params: dict) -> Entry:
    return Entry.make("planner", params)


def planner_params(params: dict) -> dict:
    """Every planner parameter (the defaults where not given), checked."""
    return planner(params).as_dict()


def field_entry(strategies: list[dict], weights, draw: str) -> Entry:
    """A field entry mixing the strategies of positive weight (at most COMPONENTS, the
    heaviest, renormalised), drawn per seat or per Agenda (`draw`)."""
    weights = np.asarray(weights, dtype=float)
    order = [i for i in np.argsort(-weights, kind="stable") if weights[i] > 0][:COMPONENTS]
    total = float(sum(weights[i] for i in order))
    comps = [(round(float(weights[i]) / total, 6), planner(strategies[i]).as_dict())
             for i in order]
    return Entry.make("field", field_params(comps, draw))


def check_dealt(rules, source: str = "rules", agendas: tuple[str, ...] = L.AGENDA_NAMES,
                why: str = "an equilibrium solves every Agenda's strategy") -> None:
    """A search for the strategies of `agendas` needs each of them dealt (R-S4 deals from the
    deck of the table size, D2): a deck without one is refused (ConfigError naming the key)
    before any game is played."""
    deck = dict(zip(L.AGENDA_NAMES, rules.decks.for_players(rules.players).counts(),
                    strict=True))
    for agenda in agendas:
        if deck[agenda] == 0:
            raise ConfigError(f"decks.p{rules.players}.{agenda}",
                              f"is 0, so no seat is dealt the {agenda}, but {why}: give it "
                              "at least one card", source)


def field_lineup(pops: dict[str, list[dict]], mix: dict[str, list[float]], draw: str
                 ) -> Lineup:
    return Lineup({a: field_entry(pops[a], mix[a], draw) for a in L.AGENDA_NAMES})


# the starting populations: planners close to the default bots, and the strategies that
# reverse the default bots' findings (a Steward that keeps its Capital, a Collapse-seeking
# Accelerationist)
STARTING_POPULATIONS = {
    "steward": [
        {"aim": 504, "tolerance": 0, "chips": 6, "futile": 0, "buy": 1, "accuse": 1},
        {"aim": 504, "tolerance": 0, "chips": 6, "futile": 1, "buy": 0, "accuse": 4,
         "accuse_min": 3},
    ],
    "opportunist": [
        {"aim": 529.5, "tolerance": 4, "chips": 3, "buy": 4, "accuse": 3},
    ],
    "accelerationist": [
        {"aim": 700, "burn_floor": 3, "mask_burns": 1, "greed": 1, "buy": 3, "reserve": 10,
         "accuse": 2, "cornered": 2},
        {"aim": 700, "burn_floor": 3, "collapse": 1, "mask_burns": 1, "greed": 1, "buy": 3,
         "reserve": 10, "accuse": 2, "cornered": 2},
    ],
}
