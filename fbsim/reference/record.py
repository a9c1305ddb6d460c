"""The game record of the reference engine: the fields of `fbsim.game.record`, in its order.

`GameRecord` holds the seed, the game index, the game fields, one `SeatRecord` per seat (the
seat fields, and the assets owned as a dict kind -> count) and the Dial by round; names where
the kernel holds codes (`Field.codes`). `as_dict()` is the replay JSON.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from fbsim.game import layout as L
from fbsim.game.public import band_of
from fbsim.reference.state import Game


@dataclass(frozen=True)
class SeatRecord:
    seat: int
    agenda: str
    bot: str
    capital: int
    legacy: int
    works: int
    cool_open: int
    cool_masked: int
    burn_open: int
    burn_masked: int
    masks_left: int
    fog_in: int
    fog_requested: int
    fog_received: int
    assets: dict[str, int]
    pointed_at: int
    cornered: int
    revealed: int
    paid: int


@dataclass(frozen=True)
class GameRecord:
    seed: int
    game: int
    players: int
    rounds_played: int
    end: str  # survived, collapse-world, collapse-reveal
    final_dial: int
    band: str
    winner: int  # seat, or -1: everyone loses
    first_player_last: int  # first player of the last round played (D8)
    tokens_flipped: int
    pot_left: int
    seats: tuple[SeatRecord, ...]
    # the Dial as each round 1..rounds ended (after its reveal); a game that ended early
    # (Collapse) keeps its final Dial for the rounds it did not play
    dial_by_round: tuple[int, ...] = ()
    events: tuple | None = None

    @property
    def winner_agenda(self) -> str | None:
        return self.seats[self.winner].agenda if self.winner >= 0 else None

    def as_dict(self, events: bool = False) -> dict[str, Any]:
        d = asdict(self)
        d["seats"] = [asdict(s) for s in self.seats]
        d.pop("events")
        if events and self.events is not None:
            d["events"] = [e.as_dict() for e in self.events]
        return d


def make_record(g: Game) -> GameRecord:
    names = g.rules.asset_names
    seats = tuple(
        SeatRecord(
            seat=s.index, agenda=L.AGENDA_NAMES[s.agenda], bot=s.bot, capital=s.capital,
            legacy=g.legacy[s.index] if g.legacy else 0, works=s.works_total,
            cool_open=s.cool_open, cool_masked=s.cool_masked, burn_open=s.burn_open,
            burn_masked=s.burn_masked, masks_left=s.masks, fog_in=s.fog_in,
            fog_requested=s.fog_requested, fog_received=s.fog_received,
            assets={names[k]: c for k, c in enumerate(s.owned)}, pointed_at=s.pointed_at,
            cornered=s.cornered, revealed=int(s.revealed), paid=s.paid)
        for s in g.seats)
    return GameRecord(
        seed=g.seed, game=g.game_index, players=g.n, rounds_played=g.round,
        end=L.END_NAMES[g.end], final_dial=g.dial, band=L.BAND_NAMES[band_of(g.R, g.dial)],
        winner=g.winner, first_player_last=g.first_player, tokens_flipped=sum(g.flipped),
        pot_left=g.pot_lost, seats=seats, dial_by_round=tuple(g.dial_by_round),
        events=tuple(g.events) if g.events is not None else None)
