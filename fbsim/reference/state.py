"""The reference engine's game state and event log: plain, mutable Python records.

Capital only ever changes through `transfer` and the Dial only through `move_dial`, so the
event log accounts for every coin and every ppm (the money-conservation and Dial-causes
properties of the test suite read it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fbsim.game import layout as L
from fbsim.rules import Rules

BANK = "bank"
POT = "pot"


@dataclass
class Event:
    round: int
    step: str  # setup, world, commit, reveal, fog, market, accusation, end
    kind: str
    data: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"round": self.round, "step": self.step, "kind": self.kind, **self.data}


@dataclass
class Commitment:
    works: int
    cool: int
    burn: int
    masked_cool: int
    masked_burn: int

    @property
    def open_cool(self) -> int:
        return self.cool - self.masked_cool

    @property
    def open_burn(self) -> int:
        return self.burn - self.masked_burn


@dataclass
class Seat:
    index: int
    agenda: int
    bot: str
    capital: int = 0
    masks: int = 0
    revealed: bool = False  # R-A4: Agenda face up
    owned: list[int] = field(default_factory=list)  # per asset kind
    # over the game (masked totals are private, R-I2)
    works_total: int = 0
    cool_open: int = 0
    cool_masked: int = 0
    burn_open: int = 0
    burn_masked: int = 0
    fog_in: int = 0
    fog_requested: int = 0
    fog_received: int = 0
    pointed_at: int = 0
    cornered: int = 0
    paid: int = 0
    # this round
    commitment: Commitment | None = None
    free_works: int = 0
    bought: int = 0
    fog_in_round: int = 0

    @property
    def cool_total(self) -> int:
        return self.cool_open + self.cool_masked

    @property
    def burn_total(self) -> int:
        return self.burn_open + self.burn_masked

    def is_revealed_accelerationist(self) -> bool:
        return self.revealed and self.agenda == L.ACCELERATIONIST

    def public_agenda(self) -> int:
        """The Agenda as the table knows it: face up once revealed (R-A4), else -1."""
        return self.agenda if self.revealed else -1


@dataclass
class Game:
    rules: Rules
    R: np.ndarray  # the rules vector for this table size
    seed: int
    game_index: int
    seats: list[Seat]
    dial: int
    flipped: list[bool]
    market: list[int]  # asset kind per slot, -1 when empty
    deck: list[int]  # asset kinds, top first
    first_player: int
    round: int = 0
    pot: int = 0
    bank_out: int = 0  # net Capital the bank has paid out (money conservation)
    # public history (R-I1)
    last_open: list[tuple[int, int, int]] = field(default_factory=list)  # works, cool, burn
    open_totals: list[list[int]] = field(default_factory=list)  # per seat [works, cool, burn]
    fog_cool_total: int = 0
    fog_burn_total: int = 0
    last_fog: tuple[int, int] = (0, 0)
    reveals: int = 0
    points: list[list[int]] = field(default_factory=list)  # [pointer][target] counts
    # outcome
    end: int = L.END_SURVIVED
    over: bool = False
    winner: int = -1
    pot_lost: int = 0  # what was left in the Fog pot at the end (D6)
    legacy: list[int] = field(default_factory=list)
    dial_by_round: list[int] = field(default_factory=list)  # the Dial as each round ended
    events: list[Event] | None = None

    @property
    def n(self) -> int:
        return len(self.seats)

    def order(self, start: int | None = None) -> list[int]:
        """Seats in order from the first player (or `start`), clockwise."""
        s = self.first_player if start is None else start
        return [(s + i) % self.n for i in range(self.n)]

    def log(self, step: str, kind: str, **data: Any) -> None:
        if self.events is not None:
            self.events.append(Event(self.round, step, kind, data))


def transfer(g: Game, src: str | int, dst: str | int, amount: int, why: str,
             step: str) -> None:
    """Move Capital between the bank, the Fog pot and players (the only way it moves)."""
    if amount < 0:
        raise ValueError("negative transfer")
    if amount == 0:
        return
    for end, sign in ((src, -1), (dst, 1)):
        if end == BANK:
            g.bank_out -= sign * amount
        elif end == POT:
            g.pot += sign * amount
        else:
            g.seats[end].capital += sign * amount
    g.log(step, "transfer", src=src, dst=dst, amount=amount, why=why)


def move_dial(g: Game, delta: int, cause: str, step: str) -> None:
    """Move the Dial (the only way it moves), recording the cause."""
    if delta == 0:
        return
    g.dial += delta
    g.log(step, "dial", delta=delta, cause=cause, dial=g.dial)
