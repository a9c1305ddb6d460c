"""Each thing declared once: the record's fields (fbsim.game.record) against every form of the
record, the rules vector against the rules' fields, and the round's steps in both engines."""

from __future__ import annotations

import dataclasses
import inspect
import json

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fbsim.experiments.run.simulate import RecordsWriter, records_table
from fbsim.game import layout as L
from fbsim.game import record as GR
from fbsim.kernel import engine as K
from fbsim.kernel import layout as KL
from fbsim.kernel import simulate
from fbsim.lineup import Lineup, parse_lineup
from fbsim.reference import engine as E
from fbsim.reference.engine import play_game
from fbsim.reference.record import GameRecord, SeatRecord
from fbsim.rules import VECTOR_SPECIAL, Asset, Rules, load_rules, rules_vector
from tests.strategies import rules_st

# ------------------------------------------------------------------------ the record


def test_reference_records_follow_the_schema_in_order():
    game = [f.name for f in dataclasses.fields(GameRecord)
            if f.name not in ("seed", GR.INDEX.name, "seats", "events")]
    assert game == [f.name for f in GR.FIELDS if f.shape in (GR.GAME, GR.ROUND)]
    seat = [f.name for f in dataclasses.fields(SeatRecord) if f.name != "seat"]
    assert seat == [f.name for f in GR.FIELDS if f.shape in (GR.SEAT, GR.SEAT_KIND)]
    assert GR.INDEX.name in {f.name for f in dataclasses.fields(GameRecord)}


def test_index_constants_name_their_fields_positions():
    """Each index constant of the record's arrays (`G_*`, `SE_*`, ...) is its field's position
    among the fields of its shape. The kernel writes every game field either by its constant
    or from the state field `kernel.layout.GAME_SOURCE` names for it (never both), and copies
    every seat field from the state field `kernel.layout.SEAT_SOURCE` names for it."""
    prefixes = {GR.GAME: "G_", GR.SEAT: "SE_", GR.SEAT_KIND: "SK_", GR.ROUND: "RD_"}
    for shape, prefix in prefixes.items():
        got = {k: v for k, v in vars(GR).items() if k.startswith(prefix) and isinstance(v, int)}
        want = {prefix + name.upper(): i for i, name in enumerate(GR.names(shape))}
        assert got and got.items() <= want.items(), shape
    written = {name for name in GR.GAME_FIELDS
               if f"G_{name.upper()}]" in inspect.getsource(K.write_record)}
    assert written.isdisjoint(KL.GAME_SOURCE)
    assert written | set(KL.GAME_SOURCE) == set(GR.GAME_FIELDS)
    assert KL.GAME_SOURCES == (*((GR.GAME_FIELDS.index(f), w) for f, w in KL.GAME_SOURCE.items()),
                               (KL.G_ERROR, KL.S_ERROR))
    assert set(KL.SEAT_SOURCE) == set(GR.SEAT_FIELDS)
    assert KL.SEAT_SOURCES == tuple(KL.SEAT_SOURCE[f] for f in GR.SEAT_FIELDS)


def test_fields_are_unique_and_typed():
    names = [f.name for f in GR.FIELDS] + [GR.INDEX.name]
    assert len(names) == len(set(names))
    for f in (GR.INDEX, *GR.FIELDS):
        assert f.shape in GR.SHAPES and np.issubdtype(np.dtype(f.dtype), np.integer), f.name


@pytest.fixture(scope="module")
def run():
    rules = load_rules(sets=["players=4", "rounds=6"])
    lineup = parse_lineup("random", [], 4)
    return rules, lineup, simulate(rules, lineup, seed=2, n_games=40)


def test_kernel_columns_are_the_schema(run):
    rules, _, cols = run
    assert list(cols) == [GR.INDEX.name, *GR.GAME_FIELDS, *GR.SEAT_FIELDS,
                          *GR.SEAT_KIND_FIELDS, *GR.ROUND_FIELDS]
    shape = {GR.GAME: (40,), GR.SEAT: (40, 4), GR.SEAT_KIND: (40, 4, len(rules.assets)),
             GR.ROUND: (40, 6)}
    for f in GR.FIELDS:
        assert cols[f.name].shape == shape[f.shape], f.name


def test_replay_json_holds_every_field_with_names_for_codes(run):
    rules, lineup, cols = run
    d = json.loads(json.dumps(play_game(rules, lineup, 2, 5).as_dict()))
    for f in GR.FIELDS:
        game_level = f.shape in (GR.GAME, GR.ROUND)
        value = d[f.name] if game_level else d["seats"][1][f.name]
        if f.codes:
            want = cols[f.name][5] if game_level else cols[f.name][5, 1]
            assert value in f.codes and GR.encode(f, value) == want, f.name


def _old_records_table(rec: dict, rules) -> pa.Table:
    """records_table as it was written by hand before the schema (the reference)."""
    game_fields = ("players", "rounds_played", "end", "final_dial", "band", "winner",
                   "first_player_last", "tokens_flipped", "pot_left")
    seat_fields = ("agenda", "bot", "capital", "legacy", "works", "cool_open", "cool_masked",
                   "burn_open", "burn_masked", "masks_left", "fog_in", "fog_requested",
                   "fog_received", "pointed_at", "cornered", "revealed", "paid")
    cols: dict[str, np.ndarray] = {"game": rec["game"]}
    for f in game_fields:
        cols[f] = rec[f].astype(np.int16 if f != "pot_left" else np.int32)
    for r in range(rec["dial_by_round"].shape[1]):
        cols[f"dial_round_{r + 1}"] = rec["dial_by_round"][:, r].astype(np.int16)
    for f in seat_fields:
        for s in range(rules.players):
            cols[f"{f}_{s}"] = rec[f][:, s].astype(np.int32 if f in (
                "capital", "legacy", "fog_in", "fog_requested", "fog_received") else np.int16)
    for s in range(rules.players):
        for k, kind in enumerate(rules.asset_names):
            cols[f"assets_{s}_{kind}"] = rec["assets"][:, s, k].astype(np.int8)
    return pa.table(cols)


def test_records_table_is_the_old_table(run):
    rules, _, cols = run
    new, old = records_table(cols, rules), _old_records_table(cols, rules)
    assert new.schema.equals(old.schema) and new.equals(old)


def test_records_file_codes(tmp_path, run):
    rules, _, cols = run
    table = records_table(cols, rules)
    w = RecordsWriter(tmp_path / "r.parquet", table.schema, Lineup(), {})
    w.write(table)
    w.close()
    import pyarrow.parquet as pq

    meta = pq.read_schema(tmp_path / "r.parquet").metadata[b"fbsim.codes"]
    assert json.loads(meta) == {"agenda": list(L.AGENDA_NAMES), "band": list(L.BAND_NAMES),
                                "end": list(L.END_NAMES), "bot": Lineup().labels()}


# ------------------------------------------------------------------------ the rules vector


def _old_rules_vector(rules: Rules, players: int | None = None) -> np.ndarray:
    """rules_vector as it was written by hand, field by field (the reference)."""
    n = rules.players if players is None else players
    v = np.zeros(L.R_SIZE, dtype=np.int64)
    v[L.R_PLAYERS] = n
    v[L.R_ROUNDS] = rules.rounds
    v[L.R_AGENTS] = rules.agents
    v[L.R_CAPITAL] = rules.capital
    v[L.R_STAGGER] = rules.stagger
    v[L.R_MASKS] = rules.masks
    v[L.R_FIRST_PLAYER] = rules.first_player % n
    v[L.R_BASELINE_OFFSET] = rules.baseline_offset
    for r, b in enumerate(rules.baseline.for_players(n)):
        v[L.R_BASELINE + r] = b
    d = rules.dial
    v[L.R_DIAL_START] = d.start
    v[L.R_COLLAPSE] = d.collapse
    v[L.R_SEVERE] = d.severe
    v[L.R_EXTREME] = d.extreme
    v[L.R_FLOOR_ENABLED] = int(d.floor_enabled)
    v[L.R_FLOOR] = d.floor
    v[L.R_INCOME_BEFORE_COLLAPSE] = int(rules.income_before_collapse)
    t = rules.tipping
    v[L.R_N_TOKENS] = t.start_flipped + len(t.thresholds)
    for i in range(t.start_flipped):
        v[L.R_TOKEN_THRESHOLD + i] = d.start
        v[L.R_TOKEN_START_FLIPPED + i] = 1
    for j, th in enumerate(t.thresholds):
        v[L.R_TOKEN_THRESHOLD + t.start_flipped + j] = th
    v[L.R_TOKEN_PENALTY] = t.penalty
    v[L.R_FLIP_WHEN] = {"reaching": L.FLIP_REACHING, "crossing": L.FLIP_CROSSING}[t.flip_when]
    j = rules.jobs
    v[L.R_COOL_PPM] = j.cool_ppm
    v[L.R_BURN_PPM] = j.burn_ppm
    v[L.R_COOL_COST] = j.cool_cost
    v[L.R_BURN_PAY] = j.burn_pay
    v[L.R_BURN_PAY_REVEALED] = j.burn_pay_revealed
    v[L.R_FOG_PER_MASKED_BURN] = j.fog_per_masked_burn
    v[L.R_FOG_PARTIAL_FILL] = int(rules.fog.partial_fill)
    v[L.R_FOG_CARRY_OVER] = int(rules.fog.carry_over)
    v[L.R_MARKET_SIZE] = rules.market.size
    v[L.R_PURCHASE_LABOUR] = rules.market.purchase_labour
    v[L.R_WAGE] = rules.market.wage
    for a in rules.accusation.rounds:
        v[L.R_ACCUSE_AFTER + a - 1] = 1
    v[L.R_POINT_WEIGHT] = rules.accusation.point_weight
    v[L.R_PAY_PER_ACCUSER] = rules.accusation.pay_per_accuser
    v[L.R_MEDIA_STACKS] = int(rules.accusation.media_stacks)
    v[L.R_REVEALED_ACCUSABLE] = int(rules.accusation.revealed_accusable)
    s = rules.scoring
    v[L.R_CAPITAL_PER_LEGACY] = s.capital_per_legacy
    v[L.R_COLLAPSE_MIN_CAPITAL] = s.collapse_min_capital
    v[L.R_TIEBREAK_FIRST_PLAYER] = {"last-round": L.TIEBREAK_LAST_ROUND,
                                     "round-1": L.TIEBREAK_ROUND_1,
                                     "after-rotation": L.TIEBREAK_AFTER_ROTATION,
                                     }[s.tiebreak_first_player]
    g = rules.agendas
    v[L.R_STEWARD_BASE] = g.steward_base
    v[L.R_STEWARD_PER_STEP] = g.steward_per_step
    v[L.R_STEWARD_STEP] = g.steward_step
    v[L.R_OPPORTUNIST_SEVERE] = g.opportunist_severe
    v[L.R_ACCEL_EXTREME] = g.accelerationist_extreme
    v[L.R_ACCEL_PER_HEAT_ASSET] = g.accelerationist_per_heat_asset
    v[L.R_ACCEL_HEAT_OWN_ONLY] = int(g.accelerationist_heat_own_only)
    v[L.R_ACCEL_OTHER] = g.accelerationist_other
    for a, c in enumerate(rules.decks.for_players(n).counts()):
        v[L.R_DECK + a] = c
    v[L.R_N_KINDS] = len(rules.assets)
    for k, a in enumerate(rules.assets.values()):
        base = L.R_ASSET + k * L.ASSET_STRIDE
        v[base + L.A_COUNT] = a.count
        v[base + L.A_PRICE] = a.price
        v[base + L.A_INCOME] = a.income
        v[base + L.A_PPM] = a.ppm
        v[base + L.A_LEGACY_WARMING] = a.legacy_warming
        v[base + L.A_LEGACY_SEVERE] = a.legacy_severe
        v[base + L.A_LEGACY_EXTREME] = a.legacy_extreme
        v[base + L.A_ACCUSATION_WEIGHT] = a.accusation_weight
        v[base + L.A_COLLAPSE_TIEBREAK] = int(a.collapse_tiebreak)
    return v


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(rules=rules_st(), players=st.sampled_from([None, 3, 4, 5, 6]))
def test_rules_vector_equals_the_hand_written_packing(rules, players):
    assert np.array_equal(rules_vector(rules, players), _old_rules_vector(rules, players))


def _leaf_paths(obj, prefix: str = ""):
    """Dotted paths of the leaves of a rules dataclass (tuples and dicts are leaves)."""
    for f in dataclasses.fields(obj):
        path = f"{prefix}{f.name}"
        v = getattr(obj, f.name)
        if dataclasses.is_dataclass(v):
            yield from _leaf_paths(v, path + ".")
        else:
            yield path


def _covered(path: str) -> bool:
    return path in L.R_FIELDS or any(path == k or path.startswith(k + ".")
                                     for k in VECTOR_SPECIAL)


def test_every_rules_field_is_placed_in_the_vector_or_documented():
    paths = list(_leaf_paths(Rules()))
    missing = [p for p in paths if not _covered(p)]
    assert not missing, f"rules fields with no place in the rules vector: {missing}"
    assert set(L.R_FIELDS) <= set(paths)
    assert not set(L.R_FIELDS) & set(VECTOR_SPECIAL)
    assert set(L.A_FIELDS) == {f.name for f in dataclasses.fields(Asset)}
    assert len(set(L.R_FIELDS.values())) == len(L.R_FIELDS)
    assert sorted(L.A_FIELDS.values()) == list(range(L.ASSET_STRIDE))


def _replace(obj, path: str, value):
    head, _, rest = path.partition(".")
    if not rest:
        return dataclasses.replace(obj, **{head: value})
    return dataclasses.replace(obj, **{head: _replace(getattr(obj, head), rest, value)})


@pytest.mark.parametrize("path", sorted(L.R_FIELDS))
def test_every_placed_field_reaches_its_slot(path):
    base = Rules()
    old = base
    for part in path.split("."):
        owner, old = old, getattr(old, part)
    if isinstance(old, str):  # a choice: the next one, packed as its index
        choices = next(f for f in dataclasses.fields(owner) if f.name == part).metadata[
            "choices"]
        new = choices[(choices.index(old) + 1) % len(choices)]
        code = choices.index(new)
    else:
        new = (not old) if isinstance(old, bool) else old + 1
        code = int(new)
    v0, v1 = rules_vector(base), rules_vector(_replace(base, path, new))
    changed = set(np.flatnonzero(v0 != v1).tolist())
    # dial.start is also the threshold of the tokens flipped at setup (R-S1)
    also = set(range(L.R_TOKEN_THRESHOLD, L.R_TOKEN_THRESHOLD + L.MAX_TOKENS))
    assert L.R_FIELDS[path] in changed and changed - {L.R_FIELDS[path]} <= (
        also if path == "dial.start" else set())
    assert v1[L.R_FIELDS[path]] == code


@pytest.mark.parametrize("field", sorted(L.A_FIELDS))
def test_every_asset_field_reaches_its_slot(field):
    base = Rules()
    k, name = 2, base.asset_names[2]
    a = base.assets[name]
    old = getattr(a, field)
    new = (not old) if isinstance(old, bool) else old + 1
    rules = dataclasses.replace(base, assets={**base.assets,
                                              name: dataclasses.replace(a, **{field: new})})
    diff = np.flatnonzero(rules_vector(base) != rules_vector(rules)).tolist()
    assert diff == [L.R_ASSET + k * L.ASSET_STRIDE + L.A_FIELDS[field]]


# ------------------------------------------------------------------------ the round


def test_both_engines_play_the_same_steps_in_the_same_order():
    assert tuple(name for name, _ in E.ROUND_STEPS) == K.ROUND_STEPS
    assert [getattr(K, f"STEP_{name.upper()}") for name in K.ROUND_STEPS] == list(
        range(K.N_ROUND_STEPS))


# ------------------------------------------------------------------------ the bands


def test_report_band_titles_read_the_rules_of_each_table():
    from types import SimpleNamespace

    from fbsim.experiments.report.page import band_edges, band_ranges, per_rules

    default, moved = load_rules(), load_rules(sets=["dial.severe=500", "dial.collapse=620"])
    assert band_ranges(default) == ("Warming < 510, Severe 510-549, Extreme 550-599, "
                                    "Collapse >= 600")
    assert band_ranges(moved) == ("Warming < 500, Severe 500-549, Extreme 550-619, "
                                  "Collapse >= 620")

    def table(n, rules, old=None):
        return SimpleNamespace(players=n, rules=rules, old_rules=old)

    same = SimpleNamespace(tables=[table(3, default), table(4, default)], paired=False)
    assert per_rules(same, band_edges) == "510, 550, 600"
    against = SimpleNamespace(tables=[table(3, moved, default), table(4, moved, default)],
                              paired=True)
    assert per_rules(against, band_edges) == "3p, 4p: 500, 550, 620; 3p old, 4p old: " \
                                             "510, 550, 600"
