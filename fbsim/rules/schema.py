"""The rules' schema: every number and table of RULES.md as frozen dataclasses, each field
with its default, its one-line help (printed by `fbsim rules`) and its valid range, and the
rules' hash (`rules_hash`, identifying them in every output)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from fbsim.game import layout as L

RULES_VERSION = 2  # 2: bot parameters left the rules (they belong to the lineup)
MAX_CARDS = 100  # the most cards of one Agenda in a deck, or of one asset kind


def F(default: Any, help: str, lo: float | None = None, hi: float | None = None,
      choices: tuple[str, ...] | None = None, omit_default: bool = False):
    """A rules field: default, one-line help (printed by `fbsim rules`) and its valid range.

    `omit_default`: a field added after rule sets were hashed into published results; the
    canonical form (and so `rules_hash`) leaves it out while it holds its default, so that
    every rule set that does not change it keeps the hash it had before the field existed."""
    meta = {"help": help, "lo": lo, "hi": hi, "choices": choices, "omit_default": omit_default}
    if isinstance(default, (dict, list)) or is_dataclass(default):
        return field(default_factory=lambda d=default: _copy(d), metadata=meta)
    return field(default=default, metadata=meta)


def _copy(x):
    if isinstance(x, dict):
        return {k: _copy(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_copy(v) for v in x]
    return x  # frozen dataclasses are safe to share


def _d1(players: int) -> tuple[int, ...]:
    # D1: at 3 players 7, 7, 8, 9, 10, 10, 12, 12; each player above 3 adds 2 per round.
    return tuple(b + 2 * (players - 3) for b in (7, 7, 8, 9, 10, 10, 12, 12))


@dataclass(frozen=True)
class Dial:
    start: int = F(450, "R-S1: the Dial's reading at setup (ppm)")
    collapse: int = F(600, "R-W4/R-V2/R-E2: the game ends in Collapse at this reading or above")
    severe: int = F(510, "R-E2: first reading of the Severe band (Warming is below it)")
    extreme: int = F(550, "R-E2: first reading of the Extreme band")
    floor_enabled: bool = F(False, "D4: the Dial has no floor unless this is true")
    floor: int = F(0, "D4: the lowest reading when floor_enabled is true")


@dataclass(frozen=True)
class Tipping:
    start_flipped: int = F(1, "R-S1: tokens flipped at setup (Ice Loss), with no threshold",
                           0, None)
    thresholds: tuple[int, ...] = F((500, 550, 575),
                                    "R-W3: readings that flip the other tokens, once")
    penalty: int = F(2, "R-W2: ppm each flipped token adds at every world turn")
    flip_when: str = F("reaching", "R-W3: a token flips when the Dial reaches its threshold "
                                   "('reaching', >=) or only once the Dial is above it "
                                   "('crossing', >); Collapse (R-W4) and the bands (R-E2) "
                                   "stay >=", choices=L.FLIP_NAMES, omit_default=True)


@dataclass(frozen=True)
class Baseline:
    p3: tuple[int, ...] = F(_d1(3), "D1: baseline ppm per round at 3 players")
    p4: tuple[int, ...] = F(_d1(4), "D1: baseline ppm per round at 4 players")
    p5: tuple[int, ...] = F(_d1(5), "D1: baseline ppm per round at 5 players")
    p6: tuple[int, ...] = F(_d1(6), "D1: baseline ppm per round at 6 players")

    def for_players(self, n: int) -> tuple[int, ...]:
        return getattr(self, f"p{n}")


@dataclass(frozen=True)
class Jobs:
    cool_ppm: int = F(3, "R-V2: ppm each COOL Agent removes", 0, None)
    burn_ppm: int = F(3, "R-V2: ppm each BURN Agent adds", 0, None)
    cool_cost: int = F(1, "R-V4/R-C3: Capital each COOL costs its owner", 0, None)
    burn_pay: int = F(3, "R-V3: Capital each open BURN pays its owner", 0, None)
    burn_pay_revealed: int = F(4, "R-A5: open BURN pay of a revealed Accelerationist", 0, None)
    fog_per_masked_burn: int = F(3, "R-V3: Capital each masked BURN puts in the Fog pot",
                                 0, None)


@dataclass(frozen=True)
class Fog:
    partial_fill: bool = F(True, "D5: a claim over what is left gets what is left "
                                 "(false: it gets nothing)")
    carry_over: bool = F(True, "D6: the pot carries over between rounds (false: emptied "
                               "after the claims)")


@dataclass(frozen=True)
class Market:
    size: int = F(4, "R-S5/R-V6: face-up market cards, refilled after each purchase", 1,
                  L.MAX_MARKET)
    purchase_labour: int = F(3, "R-V6: WORKS Agents each purchase uses", 1, None)
    wage: int = F(2, "R-V6: Capital each WORKS Agent not used for a purchase earns", 0, None)


@dataclass(frozen=True)
class Accusation:
    rounds: tuple[int, ...] = F((3, 6), "R-A1: an Accusation follows these rounds")
    point_weight: int = F(1, "R-A2: weight of a point", 0, None)
    pay_per_accuser: int = F(2, "R-A4: what the cornered player pays each accuser to stay "
                                "hidden", 0, None)
    media_stacks: bool = F(False, "D7: false: several Media Houses still weigh 2 (the largest "
                                  "weight counts); true: their weights add up")
    revealed_accusable: bool = F(True, "R-A1/R-A5: true: a revealed Steward or Opportunist "
                                       "may still be pointed at (only a revealed "
                                       "Accelerationist may not); false: no revealed player "
                                       "may be", omit_default=True)


@dataclass(frozen=True)
class Scoring:
    capital_per_legacy: int = F(2, "R-E4: Capital per Legacy point (rounded down)", 1, None)
    collapse_min_capital: int = F(10, "R-E3: Capital an Accelerationist needs to win a "
                                      "Collapse", 0, None)
    tiebreak_first_player: str = F("last-round", "D8: whose order breaks end-of-game ties: "
                                                 "the first player of the last round played "
                                                 "('last-round'), of round 1 ('round-1'), or "
                                                 "the seat after the last round's first "
                                                 "player, the marker passed on once more at "
                                                 "the end ('after-rotation')",
                                   choices=L.TIEBREAK_NAMES)


@dataclass(frozen=True)
class Agendas:
    steward_base: int = F(4, "R-X1: Steward bonus in Warming")
    steward_per_step: int = F(3, "R-X1: Steward bonus per full step below Severe")
    steward_step: int = F(10, "R-X1: the Steward's step in ppm", 1, None)
    opportunist_severe: int = F(9, "R-X1: Opportunist bonus in Severe")
    accelerationist_extreme: int = F(4, "R-X1: Accelerationist bonus in Extreme")
    accelerationist_per_heat_asset: int = F(1, "R-X1: Accelerationist bonus per owned asset "
                                               "with positive ppm, in Extreme")
    accelerationist_heat_own_only: bool = F(True, "R-X1: true: the Extreme bonus counts the "
                                                  "assets with positive ppm that the "
                                                  "Accelerationist owns; false: every one "
                                                  "owned by anyone at the table",
                                            omit_default=True)
    accelerationist_other: int = F(-2, "R-X1: Accelerationist bonus in any other survival "
                                       "band")


@dataclass(frozen=True)
class Deck:
    steward: int = F(2, "Steward cards", 0, MAX_CARDS)
    opportunist: int = F(1, "Opportunist cards", 0, MAX_CARDS)
    accelerationist: int = F(1, "Accelerationist cards", 0, MAX_CARDS)

    def counts(self) -> tuple[int, int, int]:
        return (self.steward, self.opportunist, self.accelerationist)


@dataclass(frozen=True)
class Decks:
    p3: Deck = F(Deck(2, 1, 1), "D2: agenda deck at 3 players")
    p4: Deck = F(Deck(2, 2, 2), "D2: agenda deck at 4 players")
    p5: Deck = F(Deck(3, 2, 2), "D2: agenda deck at 5 players")
    p6: Deck = F(Deck(3, 3, 2), "D2: agenda deck at 6 players")

    def for_players(self, n: int) -> Deck:
        return getattr(self, f"p{n}")


@dataclass(frozen=True)
class Asset:
    count: int = F(0, "cards of this kind in the asset deck", 0, MAX_CARDS)
    price: int = F(0, "printed price in Capital (plus the purchase labour)", 0, None)
    income: int = F(0, "Capital paid to the owner at every world turn", 0, None)
    ppm: int = F(0, "ppm added to the Dial at every world turn")
    legacy_warming: int = F(0, "Legacy if the game ends in Warming")
    legacy_severe: int = F(0, "Legacy if the game ends in Severe")
    legacy_extreme: int = F(0, "Legacy if the game ends in Extreme")
    accusation_weight: int = F(0, "ability: the owner's point weighs this much (0: none)",
                               0, None)
    collapse_tiebreak: bool = F(False, "ability: counts in the Collapse tie-break (R-E3)")


def _d3() -> dict[str, Asset]:
    # D3: count, price, income, ppm, Legacy by band, ability
    return {
        "refinery": Asset(count=5, price=4, income=3, ppm=1),
        "carbon-sink": Asset(count=4, price=5, income=0, ppm=-2, legacy_warming=3),
        "media-house": Asset(count=2, price=4, income=1, ppm=0, accusation_weight=2),
        "grey-bank": Asset(count=2, price=3, income=2, ppm=0),
        "bunker": Asset(count=2, price=4, income=0, ppm=0, legacy_extreme=3,
                        collapse_tiebreak=True),
    }


@dataclass(frozen=True, eq=False)
class Rules:
    players: int = F(4, "R-S6: players at the table", 3, 6)
    rounds: int = F(8, "R-S6: rounds at most", 1, L.MAX_ROUNDS)
    baseline_offset: int = F(0, "added to every round's baseline (D1), for sweeps")
    agents: int = F(6, "R-S2: Agents per player", 1, None)
    capital: int = F(8, "R-S2: starting Capital per player", 0, None)
    stagger: int = F(1, "R-S3: extra starting Capital per place after the first player",
                     0, None)
    masks: int = F(2, "R-S2: Masks per player for the whole game", 0, None)
    first_player: int = F(0, "D9: seat of the round-1 first player", 0, 5)
    income_before_collapse: bool = F(True, "R-W1 before R-W4: assets pay their income "
                                           "even at a world turn that ends in Collapse")
    dial: Dial = F(Dial(), "")
    tipping: Tipping = F(Tipping(), "")
    baseline: Baseline = F(Baseline(), "")
    jobs: Jobs = F(Jobs(), "")
    fog: Fog = F(Fog(), "")
    market: Market = F(Market(), "")
    accusation: Accusation = F(Accusation(), "")
    scoring: Scoring = F(Scoring(), "")
    agendas: Agendas = F(Agendas(), "")
    decks: Decks = F(Decks(), "")
    assets: dict[str, Asset] = F(_d3(), "D3: the asset deck, one table per kind")

    def __eq__(self, other):
        # the order of the asset kinds matters (it is their index in the deck), which a
        # plain dict comparison would ignore
        if not isinstance(other, Rules):
            return NotImplemented
        return _canonical(self) == _canonical(other)

    def __hash__(self):
        return hash(_canonical(self))

    # convenience views
    @property
    def asset_names(self) -> tuple[str, ...]:
        return tuple(self.assets)



# --------------------------------------------------------------------------- dict form


def to_dict(obj: Any) -> Any:
    """Plain nested dict/list/scalar form (what TOML holds)."""
    if is_dataclass(obj):
        return {f.name: to_dict(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, Mapping):
        return {k: to_dict(v) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return [to_dict(v) for v in obj]
    return obj


def _omit_defaults(obj: Any, d: dict) -> None:
    """Drop from `d` (the dict form of dataclass `obj`) every `omit_default` field that holds
    its default, at any depth."""
    for f in fields(obj):
        v = getattr(obj, f.name)
        if f.metadata.get("omit_default") and v == f.default:
            del d[f.name]
        elif is_dataclass(v):
            _omit_defaults(v, d[f.name])


def _canonical(rules: Rules) -> str:
    """The rules as canonical JSON: keys sorted, except the asset kinds, kept in order.

    Fields marked `omit_default` (readings added later: `tipping.flip_when`,
    `accusation.revealed_accusable`, `agendas.accelerationist_heat_own_only`) are left out
    while they hold their defaults, so that adding them changed the hash of no rule set."""
    d = to_dict(rules)
    _omit_defaults(rules, d)
    d["assets"] = [[name, fields] for name, fields in d["assets"].items()]
    return json.dumps(d, sort_keys=True, separators=(",", ":"))


def rules_hash(rules: Rules) -> str:
    """A stable 16-hex-digit hash of the effective rules (identifies them in every output).

    Fields added after results were published (`omit_default`, see `_canonical`) count only
    when they differ from their defaults: rules that leave them alone hash as before."""
    return hashlib.sha256(_canonical(rules).encode()).hexdigest()[:16]
