"""Lineups: which bot plays each seat.

A lineup maps each Agenda to a bot (default: Steward -> steward, Opportunist -> opportunist,
Accelerationist -> fog-grabber) and can override single seats (`--seat 2=hoarder`). The seat's
bot is known only after the Agenda deal (R-S4), so a seat override wins over the Agenda map.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fbsim.errors import UsageError
from fbsim.game import layout as L

DEFAULT_BY_AGENDA = {"steward": "steward", "opportunist": "opportunist",
                     "accelerationist": "fog-grabber"}


@dataclass(frozen=True)
class Lineup:
    by_agenda: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_BY_AGENDA))
    seats: dict[int, str] = field(default_factory=dict)

    def bot_for(self, seat: int, agenda: int) -> str:
        if seat in self.seats:
            return self.seats[seat]
        return self.by_agenda[L.AGENDA_NAMES[agenda]]

    def describe(self) -> str:
        parts = [f"{a}={b}" for a, b in self.by_agenda.items()]
        parts += [f"seat{s}={b}" for s, b in sorted(self.seats.items())]
        return ",".join(parts)


def _check_bot(name: str, where: str) -> str:
    from fbsim.policies import registry

    bots = registry()
    if name not in bots:
        import difflib

        close = difflib.get_close_matches(name, list(bots), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else f" (bots: {', '.join(bots)})"
        raise UsageError(f"{where}: unknown bot '{name}'{hint}")
    return name


def parse_lineup(lineup: str | None = None, seats: list[str] | tuple[str, ...] = (),
                 players: int | None = None) -> Lineup:
    """`--lineup steward=steward,accelerationist=hoarder` and `--seat 2=random` items.

    `--lineup` may also name a single bot for every seat (`--lineup random`).
    """
    by_agenda = dict(DEFAULT_BY_AGENDA)
    if lineup:
        items = [x.strip() for x in lineup.split(",") if x.strip()]
        if len(items) == 1 and "=" not in items[0]:
            bot = _check_bot(items[0], "--lineup")
            by_agenda = {a: bot for a in by_agenda}
        else:
            for item in items:
                if "=" not in item:
                    raise UsageError(f"--lineup: expected agenda=bot, got '{item}'")
                agenda, bot = (x.strip() for x in item.split("=", 1))
                if agenda not in by_agenda:
                    raise UsageError(f"--lineup: unknown agenda '{agenda}' (agendas: "
                                     f"{', '.join(L.AGENDA_NAMES)})")
                by_agenda[agenda] = _check_bot(bot, f"--lineup {agenda}")
    seat_map: dict[int, str] = {}
    for item in seats:
        if "=" not in item:
            raise UsageError(f"--seat: expected SEAT=BOT, got '{item}'")
        k, bot = (x.strip() for x in item.split("=", 1))
        try:
            seat = int(k)
        except ValueError:
            raise UsageError(f"--seat: seat must be an integer, got '{k}'") from None
        hi = (players - 1) if players else L.MAX_PLAYERS - 1
        if not 0 <= seat <= hi:
            raise UsageError(f"--seat: seat must be 0 to {hi}, got {seat}")
        seat_map[seat] = _check_bot(bot, f"--seat {seat}")
    for name in list(by_agenda.values()) + list(seat_map.values()):
        if name == "scripted":
            raise UsageError("the scripted bot plays only from a script (fbsim replay "
                             "--script FILE.toml)")
    return Lineup(by_agenda, seat_map)


def lineup_from_description(text: str) -> Lineup:
    """The inverse of `Lineup.describe()` (as stored in tables' provenance)."""
    by_agenda = dict(DEFAULT_BY_AGENDA)
    seats: dict[int, str] = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        key, _, bot = item.partition("=")
        if key.startswith("seat"):
            seats[int(key[4:])] = _check_bot(bot, "lineup")
        elif key in by_agenda:
            by_agenda[key] = _check_bot(bot, "lineup")
        else:
            raise UsageError(f"lineup: cannot read '{item}'")
    return Lineup(by_agenda, seats)
