"""Each thing declared once: the record's fields (fbsim.game.record) against every form of the
record; the round's steps in both engines."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pyarrow as pa
import pytest

from fbsim.experiments.run.simulate import RecordsWriter, records_table
from fbsim.game import layout as L
from fbsim.game import record as GR
from fbsim.game.lineup import parse_lineup
from fbsim.kernel import engine as K
from fbsim.kernel import simulate
from fbsim.reference import engine as E
from fbsim.reference.engine import play_game
from fbsim.reference.record import GameRecord, SeatRecord
from fbsim.rules import load_rules

# ------------------------------------------------------------------------ the record


def test_reference_records_follow_the_schema_in_order():
    game = [f.name for f in dataclasses.fields(GameRecord)
            if f.name not in ("seed", GR.INDEX.name, "seats", "events")]
    assert game == [f.name for f in GR.FIELDS if f.shape in (GR.GAME, GR.ROUND)]
    seat = [f.name for f in dataclasses.fields(SeatRecord) if f.name != "seat"]
    assert seat == [f.name for f in GR.FIELDS if f.shape in (GR.SEAT, GR.SEAT_KIND)]
    assert GR.INDEX.name in {f.name for f in dataclasses.fields(GameRecord)}


def test_index_constants_name_every_position_once():
    prefixes = {GR.GAME: "G_", GR.SEAT: "SE_", GR.SEAT_KIND: "SK_", GR.ROUND: "RD_"}
    for shape, prefix in prefixes.items():
        got = {k: v for k, v in vars(GR).items() if k.startswith(prefix) and isinstance(v, int)}
        want = {prefix + name.upper(): i for i, name in enumerate(GR.names(shape))}
        assert got == want, shape


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
    w = RecordsWriter(tmp_path / "r.parquet", table.schema, {})
    w.write(table)
    w.close()
    import pyarrow.parquet as pq

    meta = pq.read_schema(tmp_path / "r.parquet").metadata[b"fbsim.codes"]
    assert json.loads(meta) == {"agenda": list(L.AGENDA_NAMES), "band": list(L.BAND_NAMES),
                                "end": list(L.END_NAMES)}


# ------------------------------------------------------------------------ the round


def test_both_engines_play_the_same_steps_in_the_same_order():
    assert tuple(name for name, _ in E.ROUND_STEPS) == K.ROUND_STEPS
    assert [getattr(K, f"STEP_{name.upper()}") for name in K.ROUND_STEPS] == list(
        range(K.N_ROUND_STEPS))
