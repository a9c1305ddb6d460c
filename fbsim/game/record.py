"""The game record's schema: every field of what one game produced, declared once.

Both engines produce the same record (RULES.md section E), in two forms:

- the reference engine's `fbsim.reference.record.GameRecord` (with one `SeatRecord` per seat),
  whose dataclass fields follow `FIELDS` in order (a test checks it), and whose `as_dict()`
  is the replay JSON;
- the kernel's columns (`fbsim.kernel.simulate`): one int64 numpy array per field over games.

Each entry of `FIELDS` is a `Field`: its name, its shape, the integer type that stores it in
tables (the Parquet columns of `fbsim simulate --records`), a one-line description, the
names of its codes where the kernel stores a name as a number, and the stem of its table
columns (`stem`: its name unless given). The shapes:

====================  =====================  =========================  =====================
shape                 reference record       kernel column              Parquet columns
====================  =====================  =========================  =====================
`GAME`                `GameRecord.<name>`    `[games]`                  `<stem>`
`SEAT`                `SeatRecord.<name>`    `[games, players]`         `<stem>_<seat>`
`SEAT_KIND`           `SeatRecord.<name>`,   `[games, players, kinds]`  `<stem>_<seat>_<kind>`
                      a dict kind -> count
`ROUND`               `GameRecord.<name>`,   `[games, rounds]`          `<stem>_<r>` (r from 1)
                      a tuple over rounds
====================  =====================  =========================  =====================

`INDEX` (the game's index in its run) leads every table; the reference record also carries
`seed` (GameRecord) and `seat` (SeatRecord), which the kernel's columns hold by position.
The kernel writes each shape into one array (`fbsim.kernel.engine.write_record`) at the
index constants below: `G_*` for game fields, `SE_*` for seat fields, `SK_*` for
per-seat-per-kind fields and `RD_*` for per-round fields (each the field's position among the
fields of its shape).
"""

from __future__ import annotations

from dataclasses import dataclass

from fbsim.game import layout as L

GAME = "game"
SEAT = "seat"
SEAT_KIND = "seat-kind"
ROUND = "round"
SHAPES = (GAME, SEAT, SEAT_KIND, ROUND)


@dataclass(frozen=True)
class Field:
    name: str
    shape: str  # one of SHAPES
    dtype: str  # the numpy integer type of its table columns
    help: str
    codes: tuple[str, ...] | None = None  # the reference record's names for codes 0, 1, ...
    column: str = ""  # the stem of its table columns, when not its name

    @property
    def stem(self) -> str:
        return self.column or self.name


INDEX = Field("game", GAME, "int64", "the game's index: `fbsim replay --seed S --game G`")

FIELDS: tuple[Field, ...] = (
    # per game
    Field("players", GAME, "int16", "players at the table (R-S6)"),
    Field("rounds_played", GAME, "int16", "the last round played (R-E1; earlier on Collapse)"),
    Field("end", GAME, "int16", "how the game ended (R-E1, R-W4, R-V2)", L.END_NAMES),
    Field("final_dial", GAME, "int16", "the Dial when the game ended (ppm)"),
    Field("band", GAME, "int16", "the band of the final Dial (R-E2)", L.BAND_NAMES),
    Field("winner", GAME, "int16", "the winning seat, or -1: everyone loses (R-E3, R-E4)"),
    Field("first_player_last", GAME, "int16", "first player of the last round played (D8)"),
    Field("tokens_flipped", GAME, "int16", "tipping tokens flipped at the end (R-W3)"),
    Field("pot_left", GAME, "int32", "Capital left in the Fog pot, lost at the end (D6)"),
    # per seat
    Field("agenda", SEAT, "int16", "the seat's Agenda (R-S4)", L.AGENDA_NAMES),
    Field("bot", SEAT, "int16", "the bot that played the seat (kernel: its index in "
                                "fbsim.kernel.dispatch.compiled_bots())"),
    Field("capital", SEAT, "int32", "Capital at the end"),
    Field("legacy", SEAT, "int32", "Legacy (R-E4); 0 unless the world survived"),
    Field("works", SEAT, "int16", "WORKS Agents committed over the game (R-C1)"),
    Field("cool_open", SEAT, "int16", "open COOL committed (R-C1)"),
    Field("cool_masked", SEAT, "int16", "masked COOL committed (R-C2)"),
    Field("burn_open", SEAT, "int16", "open BURN committed (R-C1)"),
    Field("burn_masked", SEAT, "int16", "masked BURN committed (R-C2)"),
    Field("masks_left", SEAT, "int16", "Masks left at the end (R-C2)"),
    Field("fog_in", SEAT, "int32", "Capital its masked BURN put in the Fog pot (R-V3)"),
    Field("fog_requested", SEAT, "int32", "Capital requested from the Fog pot (R-V5)"),
    Field("fog_received", SEAT, "int32", "Capital received from the Fog pot (R-V5, D5)"),
    Field("assets", SEAT_KIND, "int8", "assets owned at the end, by kind (R-V6)"),
    Field("pointed_at", SEAT, "int16", "points received in Accusations (R-A1)"),
    Field("cornered", SEAT, "int16", "times cornered (R-A3)"),
    Field("revealed", SEAT, "int16", "1 if the Agenda is face up at the end (R-A4)"),
    Field("paid", SEAT, "int16", "times it paid its accusers to stay hidden (R-A4)"),
    # per round
    Field("dial_by_round", ROUND, "int16", "the Dial as each round ended (after its reveal); "
                                           "a game that ended early keeps its final Dial "
                                           "for the rounds it did not play",
          column="dial_round"),
)


def of_shape(shape: str) -> tuple[Field, ...]:
    """The fields of one shape, in record order."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}")
    return tuple(f for f in FIELDS if f.shape == shape)


def names(shape: str) -> tuple[str, ...]:
    return tuple(f.name for f in of_shape(shape))


GAME_FIELDS = names(GAME)
SEAT_FIELDS = names(SEAT)
SEAT_KIND_FIELDS = names(SEAT_KIND)
ROUND_FIELDS = names(ROUND)

# the kernel's arrays, one per shape: the position of each field among those of its shape
G_PLAYERS = GAME_FIELDS.index("players")
G_ROUNDS_PLAYED = GAME_FIELDS.index("rounds_played")
G_END = GAME_FIELDS.index("end")
G_FINAL_DIAL = GAME_FIELDS.index("final_dial")
G_BAND = GAME_FIELDS.index("band")
G_WINNER = GAME_FIELDS.index("winner")
G_TOKENS_FLIPPED = GAME_FIELDS.index("tokens_flipped")
G_POT_LEFT = GAME_FIELDS.index("pot_left")

SE_AGENDA = SEAT_FIELDS.index("agenda")
SE_BOT = SEAT_FIELDS.index("bot")
SE_LEGACY = SEAT_FIELDS.index("legacy")
SE_MASKS_LEFT = SEAT_FIELDS.index("masks_left")
SE_FOG_IN = SEAT_FIELDS.index("fog_in")
SE_FOG_REQUESTED = SEAT_FIELDS.index("fog_requested")
SE_FOG_RECEIVED = SEAT_FIELDS.index("fog_received")
SE_POINTED_AT = SEAT_FIELDS.index("pointed_at")
SE_CORNERED = SEAT_FIELDS.index("cornered")
SE_REVEALED = SEAT_FIELDS.index("revealed")
SE_PAID = SEAT_FIELDS.index("paid")

SK_ASSETS = SEAT_KIND_FIELDS.index("assets")

RD_DIAL_BY_ROUND = ROUND_FIELDS.index("dial_by_round")


def codes() -> dict[str, tuple[str, ...]]:
    """Field name -> the names of its codes, for the fields stored as codes (sorted by name)."""
    return {f.name: f.codes for f in sorted(FIELDS, key=lambda f: f.name) if f.codes}


def encode(field: Field, value):
    """The kernel's number for a reference record's value of `field` (names become codes;
    the `bot` field is the seat's lineup entry, `fbsim.lineup.Lineup.entry_index`)."""
    return field.codes.index(value) if field.codes else value
