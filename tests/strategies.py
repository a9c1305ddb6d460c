"""Shared hypothesis strategies: random valid rules, lineups and seeds.

`overrides_st()` draws a nested override table (what a partial TOML file holds) over a wide
space of the rules configuration, valid by construction; `rules_st()` loads it through
`fbsim.rules.load_rules(overrides=...)`, so every drawn rules object also went through the
validation a user's file goes through.
"""

from __future__ import annotations

from hypothesis import assume
from hypothesis import strategies as st

from fbsim.game import layout as L
from fbsim.lineup import Entry, Lineup
from fbsim.policies import bot_names, registry
from fbsim.rules import Rules, load_rules

_DEFAULT = Rules()
COMPILED_BOTS = tuple(bot_names(compiled_only=True))  # every bot play_game may seat
NEW_ASSET_NAMES = ("solar-farm", "coal_plant", "think-tank", "Lobby 2")


def _optional(mapping: dict) -> st.SearchStrategy[dict]:
    """A table naming any subset of these keys (the rest keep their defaults)."""
    return st.fixed_dictionaries({}, optional=mapping)


def _sometimes(mapping: dict) -> st.SearchStrategy[dict]:
    """Either no change at all or every key of the table (fewer draws than `_optional`)."""
    return st.one_of(st.just({}), st.fixed_dictionaries(mapping))


def _asset_fields(count: st.SearchStrategy[int]) -> dict:
    return {
        "count": count,
        "price": st.integers(0, 12),
        "income": st.integers(0, 6),
        "ppm": st.integers(-4, 4),
        "legacy_warming": st.integers(-3, 8),
        "legacy_severe": st.integers(-3, 8),
        "legacy_extreme": st.integers(-3, 8),
        "accusation_weight": st.integers(0, 4),
        "collapse_tiebreak": st.booleans(),
    }


_PRINTED_ASSET = _sometimes(_asset_fields(st.integers(0, 6)))
_NEW_ASSET = st.fixed_dictionaries(_asset_fields(st.integers(0, 4)))


@st.composite
def _deck(draw, players: int) -> dict:
    """An agenda deck with more cards than players (R-S4)."""
    s, o, a = (draw(_CARDS) for _ in range(3))
    if s + o + a <= players:
        s += players + 1 - (s + o + a)
    return {"steward": s, "opportunist": o, "accelerationist": a}


_CARDS = st.integers(0, 5)


def _param_st(p) -> st.SearchStrategy[float]:
    lo = p.lo if p.lo is not None else p.default - 100
    hi = p.hi if p.hi is not None else p.default + 100
    if p.choices:
        return st.sampled_from([float(c) for c in p.choices])
    drawn = st.floats(lo, hi, allow_nan=False, allow_infinity=False)
    if p.quiet:  # (the planner's table: mostly its plan, so that the plan is played too)
        return st.one_of(st.just(p.default), st.just(p.default), drawn)
    return drawn


_TOP = _optional({
    "baseline_offset": st.integers(-10, 10),
    "agents": st.integers(1, 8),
    "capital": st.integers(0, 30),
    "stagger": st.integers(0, 5),
    "masks": st.integers(0, 4),
    "income_before_collapse": st.booleans(),
})
_JOBS = _optional({
    "cool_ppm": st.integers(0, 6),
    "burn_ppm": st.integers(0, 6),
    "cool_cost": st.integers(0, 3),
    "burn_pay": st.integers(0, 6),
    "burn_pay_revealed": st.integers(0, 8),
    "fog_per_masked_burn": st.integers(0, 6),
})
_FOG = _optional({"partial_fill": st.booleans(), "carry_over": st.booleans()})
_MARKET = _optional({"purchase_labour": st.integers(1, 6), "wage": st.integers(0, 4)})
_ACCUSATION = _optional({"point_weight": st.integers(0, 3),
                         "pay_per_accuser": st.integers(0, 5),
                         "media_stacks": st.booleans(),
                         "revealed_accusable": st.booleans()})  # R-A1/R-A5
_SCORING = _optional({
    "capital_per_legacy": st.integers(1, 5),
    "collapse_min_capital": st.integers(0, 30),
    "tiebreak_first_player": st.sampled_from(L.TIEBREAK_NAMES),  # D8
})
_AGENDAS = _sometimes({
    "steward_base": st.integers(-5, 12),
    "steward_per_step": st.integers(-3, 6),
    "steward_step": st.integers(1, 25),
    "opportunist_severe": st.integers(-5, 15),
    "accelerationist_extreme": st.integers(-5, 12),
    "accelerationist_per_heat_asset": st.integers(-2, 4),
    "accelerationist_other": st.integers(-6, 4),
})
_AGENDA_READINGS = _optional({"accelerationist_heat_own_only": st.booleans()})  # R-X1
_BASE = st.integers(-4, 20)


@st.composite
def overrides_st(draw, players: int | None = None) -> dict:
    """A valid override table for `load_rules(overrides=...)`."""
    o: dict = {}
    n = players if players is not None else draw(st.integers(3, 6))
    o["players"] = n
    rounds = draw(st.integers(1, 10))
    o["rounds"] = rounds
    o["first_player"] = draw(st.integers(0, n - 1))
    # D1: one baseline per round for every table size (drawn for this one, the others
    # follow D1's +2 per player)
    base = draw(st.lists(_BASE, min_size=rounds, max_size=rounds))
    o["baseline"] = {f"p{m}": [b + 2 * (m - n) for b in base] for m in range(3, 7)}
    o.update(draw(_TOP))
    # the Dial and its bands (R-S1, R-E2, D4): severe < extreme < collapse, start < collapse
    start = draw(st.integers(350, 520))
    severe = start + draw(st.integers(-40, 100))
    extreme = severe + draw(st.integers(1, 60))
    collapse = max(extreme, start) + draw(st.integers(1, 120))
    o["dial"] = {"start": start, "severe": severe, "extreme": extreme, "collapse": collapse}
    if draw(st.booleans()):
        o["dial"]["floor_enabled"] = draw(st.booleans())
        o["dial"]["floor"] = draw(st.integers(start - 150, start))
    # tipping tokens (R-S1, R-W3): at most MAX_TOKENS in all
    start_flipped = draw(st.integers(0, 3))
    o["tipping"] = {
        "start_flipped": start_flipped,
        "thresholds": sorted(draw(st.lists(st.integers(start - 30, collapse + 30), min_size=0,
                                           max_size=L.MAX_TOKENS - start_flipped))),
        "penalty": draw(st.integers(0, 5)),
        **draw(_optional({"flip_when": st.sampled_from(L.FLIP_NAMES)})),  # R-W3
    }
    o["jobs"] = draw(_JOBS)
    o["fog"] = draw(_FOG)
    # the asset deck (D3): change the printed kinds, maybe add new kinds
    assets: dict = {}
    for name in _DEFAULT.assets:
        table = draw(_PRINTED_ASSET)
        if table:
            assets[name] = table
    new = draw(st.lists(st.sampled_from(NEW_ASSET_NAMES), unique=True,
                        max_size=L.MAX_KINDS - len(_DEFAULT.assets)))
    for name in new:
        assets[name] = draw(_NEW_ASSET)
    total = sum(assets.get(k, {}).get("count", a.count) for k, a in _DEFAULT.assets.items())
    total += sum(assets[k]["count"] for k in new)
    if total == 0:
        assets.setdefault("refinery", {})["count"] = 1
        total = 1
    o["assets"] = assets
    o["market"] = {"size": draw(st.integers(1, min(L.MAX_MARKET, total))), **draw(_MARKET)}
    # R-A1: Accusations only after a round that another round follows
    o["accusation"] = {
        "rounds": draw(st.lists(st.integers(1, rounds - 1), unique=True))
        if rounds > 1 else [],
        **draw(_ACCUSATION),
    }
    o["scoring"] = draw(_SCORING)
    o["agendas"] = {**draw(_AGENDAS), **draw(_AGENDA_READINGS)}
    # D2: this table's deck (the other sizes keep theirs, each larger than its table)
    o["decks"] = {f"p{n}": draw(_deck(n))}
    return o


def rules_st(players: int | None = None) -> st.SearchStrategy[Rules]:
    """Random valid rules, loaded (and validated) like a user's partial rules file."""
    return overrides_st(players).map(lambda o: load_rules(overrides=o))


@st.composite
def entry_st(draw, bot: str | None = None) -> Entry:
    """A compiled bot with its parameters: its defaults, or every one drawn in its range."""
    name = bot or draw(st.sampled_from(COMPILED_BOTS))
    spec = registry()[name]
    if not spec.params or draw(st.booleans()):
        return Entry.make(name)
    params = {p.name: draw(_param_st(p)) for p in spec.params}
    # (parameters the bot cannot play together, a field's weights all 0, are refused)
    assume(spec.check is None or spec.check(params) is None)
    return Entry.make(name, params)


def lineup_st(players: int, bot: str | None = None) -> st.SearchStrategy[Lineup]:
    """An Agenda -> entry map and seat overrides, over every compiled bot (or `bot` only),
    each with its default parameters or parameters drawn in their ranges."""
    return st.builds(
        Lineup,
        by_agenda=st.fixed_dictionaries({a: entry_st(bot) for a in L.AGENDA_NAMES}),
        seats=st.dictionaries(st.integers(0, players - 1), entry_st(bot)),
    )


def seed_st() -> st.SearchStrategy[int]:
    """Run seeds (non-negative int64, as the RNG takes them)."""
    return st.integers(0, 2**63 - 1)


def game_index_st() -> st.SearchStrategy[int]:
    return st.integers(0, 2**40)
