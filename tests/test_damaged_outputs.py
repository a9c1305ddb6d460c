"""Outputs read back damaged or hand-edited: a resumed ladder, sweep or tune, the report's
exploit results and kept table sizes, the cache folder's setting. Each is one line on stderr
naming the file (or the variable), the key and the way out, exit 2, before any game is played
and before anything is written (no lock, no kept part, no temporary); and a second Ctrl-C
does not turn the interrupted command's one line into a traceback."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fbsim.cli import main
from tests.test_cli_robust import run

ROOT = Path(__file__).resolve().parents[1]
EXPLOIT = ROOT / "results" / "exploit"


def _tree(folder: Path) -> dict[str, bytes | None]:
    """Every path under `folder` (hidden ones included) and each file's bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None
            for p in sorted(folder.rglob("*"))}


def _refused(code: int, err: str, *says: str) -> str:
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("fbsim: error: "), err
    for s in says:
        assert s in lines[0], (s, err)
    return lines[0]


def _no_games(monkeypatch) -> None:
    """Any game played from here on fails the test."""
    from fbsim.experiments.run import runner

    def played(*args, **kwargs):
        raise AssertionError("a game was played")

    monkeypatch.setattr(runner, "start", played)


# ------------------------------------------------------------------------------ the ladder

LADDER = ["ladder", "--players", "3", "--field", "steward=steward", "--games", "200",
          "--seat-games", "10", "--rollouts", "1", "-q"]


@pytest.fixture(scope="module")
def ladder_dir(tmp_path_factory) -> Path:
    """A ladder folder as `fbsim ladder` writes it: the committed one (read back whole by
    `test_the_committed_ladder_reads_back`; its damaged copies are refused before the
    ladder's inputs are compared or a game is played, so none needs playing here, and the
    searcher's build is compiled once in the suite, by tests/test_ladder.py)."""
    out = tmp_path_factory.mktemp("ladder") / "ladder"
    shutil.copytree(ROOT / "results" / "ladder", out)
    return out


def _set(doc: dict, path: str, value) -> None:
    *head, last = path.split(".")
    for k in head:
        doc = doc[int(k)] if isinstance(doc, list) else doc[k]
    if value is KeyError:
        del doc[last]
    else:
        doc[int(last) if isinstance(doc, list) else last] = value


@pytest.mark.parametrize("key, value, says", [
    ("players.3.rungs.0.rate", "x", "players.3.rungs[0].rate: expected a number from 0 to 1"),
    ("players.3.rungs", [], "players.3.rungs: expected a list of rungs"),
    ("players.3.rungs.0.players", 4, "players.3.rungs[0].players: expected 3"),
    ("players.3.rungs.0.rung", "genius", "players.3.rungs[0].rung: expected one of"),
    ("players.3.rungs.2", KeyError, None),  # (set below: a rung twice)
    ("players.3.inputs.knobs.rollouts", KeyError, "players.3.inputs.knobs.rollouts: missing"),
    ("players.3.inputs.games", "many", "players.3.inputs.games: expected a whole number"),
    ("players.3.fair", 3, "players.3.fair: expected a number between 0 and 1"),
    ("players.9", {}, "players.9: unknown table size"),
    ("players.3.rungs.0.gain_ci", [0.5, -0.5], "players.3.rungs[0].gain_ci: expected an "
     "interval [low, high] of numbers from -1 to 1, in order"),
    ("players.3.rungs.0.rate", 1.0,
     "players.3.rungs[0].rate: expected a value within its interval"),
    # (probe, round 3)
    ("players.3.fair", 0.9, "players.3.fair: expected 1/3 (a player's fair share)"),
    ("players.3.rungs.0.bot", " ", "players.3.rungs[0].bot: expected the rung's bot"),
    ("players.3.rungs.0.n", 10**30, "players.3.rungs[0].n: expected a whole number from 0"),
    ("players.3.inputs.knobs.step", 99, "players.3.inputs.knobs.step: expected an integer "
     "from 1 to 6"),
])
def test_a_damaged_ladder_is_refused_before_anything_is_played_or_written(
        capsys, tmp_path, monkeypatch, ladder_dir, key, value, says):
    out = tmp_path / "ladder"
    shutil.copytree(ladder_dir, out)
    doc = json.loads((out / "ladder.json").read_text())
    if key == "players.3.rungs.2":  # the field rung of the first Agenda twice
        rungs = doc["players"]["3"]["rungs"]
        rungs[0] = dict(rungs[2])
        says = "the steward rung \"field\" again"
    else:
        _set(doc, key, value)
    (out / "ladder.json").write_text(json.dumps(doc))
    before = _tree(out)
    _no_games(monkeypatch)
    from fbsim.experiments.search import ladder

    monkeypatch.setattr(ladder, "ladder", lambda *a, **k: pytest.fail("the ladder was played"))
    code, _, err = run(capsys, *LADDER, "--out", out)
    _refused(code, err, f"{out / 'ladder.json'}: not a ladder fbsim wrote", says,
             "restore the file, or remove it to start afresh")
    assert _tree(out) == before


def test_a_ladder_without_an_agendas_field_rung_is_refused(capsys, tmp_path, ladder_dir):
    out = tmp_path / "ladder"
    shutil.copytree(ladder_dir, out)
    doc = json.loads((out / "ladder.json").read_text())
    doc["players"]["3"]["rungs"] = [r for r in doc["players"]["3"]["rungs"]
                                    if (r["agenda"], r["rung"]) != ("steward", "field")]
    (out / "ladder.json").write_text(json.dumps(doc))
    before = _tree(out)
    code, _, err = run(capsys, *LADDER, "--out", out)
    _refused(code, err, "players.3.rungs: no field rung of steward")
    assert _tree(out) == before


def test_the_ladder_schema_names_every_field_of_a_rung_and_of_the_knobs():
    from dataclasses import fields

    from fbsim.experiments.search.equilibrium.state import KNOB_KEYS
    from fbsim.experiments.search.ladder import RUNG_KEYS, Rung
    from fbsim.experiments.search.searcher import GAIN_ROW_KEYS, Knobs, SearchGain

    assert set(RUNG_KEYS) == {f.name for f in fields(Rung)}
    assert set(KNOB_KEYS) == {f.name for f in fields(Knobs)}
    assert set(GAIN_ROW_KEYS) == {f.name for f in fields(SearchGain)}


def test_the_committed_ladder_reads_back(tmp_path):
    from fbsim.experiments.search.ladder import read_ladder

    doc = read_ladder(ROOT / "results" / "ladder" / "ladder.json")
    assert set(doc["players"]) == {"3", "4", "5", "6"}


# ---------------------------------------------------------------- the report's read-back


def _exploit_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "exploit"
    shutil.copytree(EXPLOIT / "steward-p3", folder / "steward-p3")
    return folder


def _report(capsys, tmp_path: Path, exploit: Path):
    page = tmp_path / "page" / "R.html"
    page.parent.mkdir(exist_ok=True)
    code, _, err = run(capsys, "report", "--players", "3", "--games", "200", "-q",
                       "--out", page, "--exploit", exploit, "--rulebook", "none",
                       "--ladder", "none")
    return code, err, page


def _edit_result(path: Path, how: str) -> None:
    text = path.read_text()
    if how == "half":
        path.write_text(text[:len(text) // 2])
        return
    doc = json.loads(text)
    if how == "best_rate":
        doc["best_rate"] = "x"
    elif how == "no diff":
        del doc["diff"]
    elif how == "list":
        doc = []
    elif how == "params":
        doc["params"] = "{not json"
    elif how == "players":
        doc["players"] = 4
    elif how == "outside":
        doc["best_rate"] = doc["best_ci_high"] + 0.1
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize("how, says", [
    ("best_rate", "best_rate: expected a win rate from 0 to 1, got 'x'"),
    ("no diff", "diff: missing"),
    ("list", "(top): expected a table, got []"),
    ("half", "(file): cannot be read"),
    ("params", "params: expected a table of numbers as JSON text"),
    ("players", "players: expected 3 (the table size of its search.parquet)"),
    ("outside", "best_rate: expected within its interval"),
])
def test_a_damaged_exploit_result_stops_the_report_before_any_game(
        capsys, tmp_path, monkeypatch, how, says):
    folder = _exploit_folder(tmp_path)
    result = folder / "steward-p3" / "result.json"
    _edit_result(result, how)
    _no_games(monkeypatch)
    code, err, page = _report(capsys, tmp_path, folder)
    _refused(code, err, f"--exploit {folder}: {result}: {says}", "restore the file")
    left = [p.name for p in page.parent.iterdir()]
    assert left == [], left  # (no page, no parts, no lock)


def test_a_damaged_exploit_result_leaves_no_lock_beside_the_page(capsys, tmp_path):
    folder = _exploit_folder(tmp_path)
    _edit_result(folder / "steward-p3" / "result.json", "best_rate")
    code, err, page = _report(capsys, tmp_path, folder)
    _refused(code, err, "best_rate")
    assert list(page.parent.iterdir()) == []


def test_a_damaged_search_table_of_an_exploit_result_is_named(capsys, tmp_path, monkeypatch):
    folder = _exploit_folder(tmp_path)
    search = folder / "steward-p3" / "search.parquet"
    search.write_bytes(search.read_bytes()[:100])
    _no_games(monkeypatch)
    code, err, _ = _report(capsys, tmp_path, folder)
    _refused(code, err, f"{search}: (file): damaged, or not a table fbsim wrote")


def test_every_committed_exploit_result_reads_back():
    from fbsim.experiments.report.model import read_exploit_folder

    for folder in ("exploit", "equilibrium/exploit", "equilibrium-team/exploit",
                   "equilibrium-team/exploit-seat"):
        assert len(read_exploit_folder(ROOT / "results" / folder)) == 12, folder


def test_the_exploit_writer_checks_its_row_against_the_schema_it_is_read_with(tmp_path):
    import math
    from dataclasses import replace

    from fbsim.experiments.search.exploit import (
        RESULT_KEYS,
        ExploitResult,
        check_result,
        write_result,
    )
    from fbsim.inputs import failing

    res = ExploitResult("steward", 3, 0.1, (0.05, 0.15), 0.3, (0.25, 0.35), 0.2, (0.1, 0.3),
                        {"aim": 500.0}, None, None, 1000, 2000,
                        {"search": [1, 2], "select": 3, "confirm": 4}, mode="seat",
                        bot="planner")
    row = res.row()
    assert set(row) == set(RESULT_KEYS)
    got = check_result(row, failing(ValueError, "row"))
    assert got["players"] == 3 and math.isnan(got["fair_share"])
    with pytest.raises(ValueError, match="search_seeds"):
        check_result({**row, "search_seeds": "[1, -2]"}, failing(ValueError, "row"))
    # a row the report would refuse is not written (nor anything beside it)
    with pytest.raises(ValueError, match="best_rate: expected a win rate from 0 to 1"):
        write_result(replace(res, best_rate=1.5), tmp_path, "2024-01-01T00:00:00+00:00",
                     "", None)
    assert list(tmp_path.iterdir()) == []
    # result.json is strict JSON: the fair share where known, absent (read as NaN) where not
    import pandas as pd

    tables = replace(res, curve=pd.DataFrame({"generation": [0]}),
                     candidates=pd.DataFrame({"rank": [0]}))
    for fair in (0.25, None):
        d = write_result(tables, tmp_path / str(fair), "2024-01-01T00:00:00+00:00", "", None,
                         fair)
        text = (d / "result.json").read_text()
        doc = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in result.json"))
        assert doc.get("fair_share") == fair
        back = check_result(doc, failing(ValueError, "result.json"))
        assert back["fair_share"] == fair if fair else math.isnan(back.get("fair_share", math.nan))


@pytest.mark.parametrize("args", [
    ["equilibrium", "--players", "3"],
    ["equilibrium", "--players", "3", "--draw", "agenda"],
    ["exploit", "--players", "3", "--agenda", "opportunist"],
    ["exploit", "--players", "3", "--all"],
    ["exploit", "--oracle", "search", "--players", "3", "--seat-games", "20"],
])
def test_R_S4_a_search_of_an_agenda_never_dealt_is_refused_naming_its_deck(
        capsys, tmp_path, monkeypatch, args):
    """D2 decks may leave an Agenda out (R-S4 deals from the deck); an equilibrium solves
    every Agenda's strategy and exploit searches the named one's, so a deck without it is
    one line naming the key, before any game and any file (rather than a NaN mixture saved
    and a traceback)."""
    _no_games(monkeypatch)
    out = tmp_path / "out"
    code = main([*args, "--set", "decks.p3.opportunist=0", "--set", "decks.p3.steward=3",
                 "--out", str(out), "--quiet"] if args[0] == "equilibrium" else
                [*args, "--set", "decks.p3.opportunist=0", "--set", "decks.p3.steward=3",
                 "--out", str(out)])
    _refused(code, capsys.readouterr().err, "decks.p3.opportunist: is 0",
             "no seat is dealt the opportunist")
    assert not out.exists()


def test_R_S4_a_rules_candidate_without_an_agenda_is_invalid_not_a_crash():
    """tune --equilibrium: a candidate whose deck leaves an Agenda out cannot be solved at
    its equilibrium: it is an invalid candidate (scored INVALID_LOSS), named by its key."""
    from fbsim.errors import ConfigError
    from fbsim.experiments.search.rulebook import load_rulebook_spec, rules_for

    spec = load_rulebook_spec(None)
    with pytest.raises(ConfigError, match="decks.p4.accelerationist: is 0"):
        rules_for(spec, {"decks.p4.accelerationist": 0, "decks.p4.steward": 4}, 4)
    rules_for(spec, {"decks.p4.accelerationist": 0, "decks.p4.steward": 4}, None)  # (no size)


def test_a_damaged_kept_table_size_stops_the_report_before_any_game(tmp_path, monkeypatch):
    """A table size kept by an interrupted report (`.PAGE.parts/`) that is damaged is named,
    with the way out, before any table size is played."""
    from fbsim.errors import UsageError
    from fbsim.experiments.report import model as BR

    keep = tmp_path / "parts"
    (n, new, old, lu), = BR.check_inputs(games=300, players=[3])
    part = BR._part_path(keep, new, old, lu, 300, 0)
    keep.mkdir()
    _no_games(monkeypatch)
    import numpy as np

    for damage in ("truncated", "other arrays"):
        if damage == "truncated":
            part.write_bytes(b"PK\x03\x04 not a whole zip")
        else:
            np.savez(part, games=np.int64(300), s1=np.zeros((1, 1), dtype=np.int64))
        with pytest.raises(UsageError, match="a kept table size of the report, damaged") as e:
            BR.report(games=300, players=[3], exploit_dir=None, resume=keep)
        assert str(part) in str(e.value) and "remove it" in str(e.value)


def test_a_kept_table_size_whose_numbers_were_changed_is_refused_before_any_game(
        tmp_path, monkeypatch):
    """A kept part carries a checksum of its arrays: counts edited after it was saved (here
    made negative) are named, not read into the page."""
    import numpy as np

    from fbsim.errors import UsageError
    from fbsim.experiments.report import model as BR

    keep = tmp_path / "parts"
    BR.report(games=300, players=[3], exploit_dir=None, resume=keep)
    (part,) = keep.glob("p3-*.npz")
    z = dict(np.load(part))
    z["s1"] = z["s1"] * 0 - 3
    with open(part, "wb") as f:
        np.savez(f, **z)
    _no_games(monkeypatch)
    with pytest.raises(UsageError, match="do not match its checksum") as e:
        BR.report(games=300, players=[3], exploit_dir=None, resume=keep)
    assert str(part) in str(e.value)


@pytest.mark.parametrize("where", ["folder", "part"])
def test_a_kept_place_of_the_wrong_kind_is_refused_before_any_game(tmp_path, monkeypatch,
                                                                   where):
    """The folder of kept table sizes a file, or a part's place a folder: one line naming
    it, before any game and with no temporary left."""
    from fbsim.errors import UsageError
    from fbsim.experiments.report import model as BR

    keep = tmp_path / "parts"
    (n, new, old, lu), = BR.check_inputs(games=300, players=[3])
    if where == "folder":
        keep.write_text("x")
        named = keep
    else:
        named = BR._part_path(keep, new, old, lu, 300, 0)
        named.mkdir(parents=True)
    before = _tree(tmp_path)
    _no_games(monkeypatch)
    with pytest.raises(UsageError, match="is in the place of a") as e:
        BR.report(games=300, players=[3], exploit_dir=None, resume=keep)
    assert str(e.value).startswith(f"{named}: a ")
    assert _tree(tmp_path) == before


# ------------------------------------------------------------------------------ the sweep

SWEEP = ["sweep", "--vary", "masks=1,2", "--players", "3", "--games", "200", "-q"]


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sweep") / "s"
    assert main([*SWEEP, "--out", str(out)]) == 0
    return out


def _resumed(capsys, tmp_path, sweep_dir, damage, monkeypatch=None):
    out = tmp_path / "s"
    shutil.copytree(sweep_dir, out)
    damage(out)
    before = _tree(out)
    if monkeypatch is not None:
        _no_games(monkeypatch)
    code, _, err = run(capsys, *SWEEP, "--out", out)
    return out, before, code, err


def test_a_point_copied_over_another_is_refused_before_anything_is_written(
        capsys, tmp_path, monkeypatch, sweep_dir):
    def copy(out):
        shutil.copy(out / "points" / "0000" / "win_rates.parquet",
                    out / "points" / "0001" / "win_rates.parquet")

    out, before, code, err = _resumed(capsys, tmp_path, sweep_dir, copy, monkeypatch)
    point = out / "points" / "0001"
    _refused(code, err, f"{point / 'win_rates.parquet'}: not point 1's win_rates table",
             f"remove {point} and run the sweep again")
    assert _tree(out) == before  # (the dataset's tables too: not written again)


def test_a_file_in_a_points_place_is_refused_and_leaves_no_temporary(
        capsys, tmp_path, monkeypatch, sweep_dir):
    def replace(out):
        shutil.rmtree(out / "points" / "0001")
        (out / "points" / "0001").write_text("not a point")

    out, before, code, err = _resumed(capsys, tmp_path, sweep_dir, replace, monkeypatch)
    _refused(code, err, f"{out / 'points' / '0001'}: not a point's folder",
             "run the sweep again")
    assert _tree(out) == before


@pytest.mark.parametrize("started", [KeyError, "yesterday", "2024-01-01T00:00:00", 7])
def test_a_sweep_json_without_its_start_is_refused(capsys, tmp_path, sweep_dir, started):
    """sweep.json's start time is what every table's provenance records: missing, not a
    time, a time without its offset or not text, it is refused (not written into the
    tables)."""
    def edit(out):
        doc = json.loads((out / "sweep.json").read_text())
        if started is KeyError:
            del doc["started"]
        else:
            doc["started"] = started
        (out / "sweep.json").write_text(json.dumps(doc))

    out, before, code, err = _resumed(capsys, tmp_path, sweep_dir, edit)
    _refused(code, err, f"{out / 'sweep.json'}: started:", "--force")
    assert _tree(out) == before


def test_a_point_that_fails_to_be_written_leaves_no_temporary_folder(
        capsys, tmp_path, monkeypatch, sweep_dir):
    from fbsim.experiments.run import sweep

    out = tmp_path / "s"
    shutil.copytree(sweep_dir, out)
    shutil.rmtree(out / "points" / "0001")  # (played again, then saved: the save fails)

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device", str(args[1]))

    monkeypatch.setattr(sweep, "write_table", full_disk)
    code, _, err = run(capsys, *SWEEP, "--out", out)
    assert code == 2 and "No space left on device" in err
    assert sorted(p.name for p in (out / "points").iterdir()) == ["0000"]


# ------------------------------------------------------------------------------- the tune

TUNE_SPEC = """players = [3]
games = 200
generations = 1
population = 2
confirm_games = 200
top = 1
[params]
masks = [1, 2]
"""


def _edit_table(path: Path, how: str) -> None:
    """Rewrite an fbsim table with its contents damaged and its metadata (the provenance)
    kept, as a hand edit with pyarrow would."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    meta = t.schema.metadata
    i = t.column_names.index("games")
    if how == "strings":
        t = t.set_column(i, "games", pa.array([str(v) for v in t.column(i).to_pylist()]))
    elif how == "dropped":
        t = t.remove_column(i)
    elif how == "nan":
        t = t.set_column(t.column_names.index("rate"), "rate",
                         pa.array([float("nan")] * t.num_rows))
    elif how == "negative":
        t = t.set_column(i, "games", pa.array([-v for v in t.column(i).to_pylist()]))
    elif how == "empty":
        t = t.slice(0, 0)
    elif how == "doubled":
        t = pa.concat_tables([t, t])
    pq.write_table(t.replace_schema_metadata(meta), path)


@pytest.mark.parametrize("how", ["strings", "dropped", "nan", "negative", "empty", "doubled"])
def test_a_point_table_edited_after_it_was_written_is_refused_and_nothing_is_rewritten(
        capsys, tmp_path, monkeypatch, sweep_dir, how):
    def damage(out):
        _edit_table(out / "points" / "0001" / "win_rates.parquet", how)

    out, before, code, err = _resumed(capsys, tmp_path, sweep_dir, damage, monkeypatch)
    point = out / "points" / "0001"
    _refused(code, err, f"{point / 'win_rates.parquet'}: its contents were changed after "
             "fbsim wrote it", f"remove {point} and run the sweep again")
    assert _tree(out) == before  # (the dataset's tables too: not written again)


def test_a_table_without_a_checksum_is_read_as_it_is(tmp_path):
    """Tables written before the checksum (committed results) read back unchanged."""
    import pandas as pd
    import pyarrow.parquet as pq

    from fbsim.experiments.run.provenance import DIGEST_KEY, read_table, write_table

    path = tmp_path / "t.parquet"
    write_table(pd.DataFrame({"games": [3, 4]}), path, {"table": "t"})
    t = pq.read_table(path)
    meta = {k: v for k, v in t.schema.metadata.items() if k != DIGEST_KEY}
    pq.write_table(t.replace_schema_metadata(meta), path)
    assert read_table(path, table="t")["games"].tolist() == [3, 4]


@pytest.fixture(scope="module")
def tune_dir(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("tune")
    (base / "spec.toml").write_text(TUNE_SPEC)
    assert main(["tune", "--target", str(base / "spec.toml"), "--out", str(base / "t"),
                 "-q", "--json"]) == 0
    return base


def test_a_generation_holding_another_sweeps_table_is_refused(capsys, tmp_path, monkeypatch,
                                                              tune_dir):
    base = tmp_path / "tune"
    shutil.copytree(tune_dir, base)
    out = base / "t"
    shutil.copy(out / "confirm" / "win_rates.parquet", out / "gen-00" / "win_rates.parquet")
    before = _tree(out)
    _no_games(monkeypatch)
    code, _, err = run(capsys, "tune", "--target", base / "spec.toml", "--out", out, "-q",
                       "--json")
    _refused(code, err, f"{out / 'gen-00' / 'win_rates.parquet'}: not this sweep's win_rates "
             "table", "run the same command again")
    assert _tree(out) == before


def test_a_generation_table_edited_after_it_was_written_is_refused(capsys, tmp_path,
                                                                  monkeypatch, tune_dir):
    base = tmp_path / "tune"
    shutil.copytree(tune_dir, base)
    out = base / "t"
    _edit_table(out / "gen-00" / "win_rates.parquet", "nan")
    before = _tree(out)
    _no_games(monkeypatch)
    code, _, err = run(capsys, "tune", "--target", base / "spec.toml", "--out", out, "-q",
                       "--json")
    _refused(code, err, f"{out / 'gen-00' / 'win_rates.parquet'}: its contents were changed")
    assert _tree(out) == before


def test_a_folder_in_the_place_of_the_tunes_answer_is_refused_before_anything_is_written(
        capsys, tmp_path, monkeypatch, tune_dir):
    base = tmp_path / "tune"
    shutil.copytree(tune_dir, base)
    out = base / "t"
    (out / "best_rules.toml").unlink()
    (out / "best_rules.toml").mkdir()
    before = _tree(out)
    _no_games(monkeypatch)
    code, _, err = run(capsys, "tune", "--target", base / "spec.toml", "--out", out, "-q",
                       "--json")
    _refused(code, err, f"{out / 'best_rules.toml'}: a folder is in the place of a file")
    assert _tree(out) == before


def test_the_tune_reads_its_losses_only_from_the_rows_of_its_points(tune_dir):
    from fbsim.errors import UsageError
    from fbsim.experiments.run.sweep import SweepResult, load
    from fbsim.experiments.search.tune import load_tune_spec, losses

    gen = tune_dir / "t" / "gen-00"
    t = load(gen)
    spec = load_tune_spec(tune_dir / "spec.toml")
    whole = SweepResult(gen, t["win_rates"], t["outcomes"], t["seats"], 0, 2, 0)
    assert len(losses(spec, whole, 2)) == 2
    w = t["win_rates"]
    short = SweepResult(gen, w[~((w["point"] == 1) & (w["name"] == "steward"))],
                        t["outcomes"], t["seats"], 0, 2, 0)
    with pytest.raises(UsageError, match="win_rates.parquet: not the rows of point 1"):
        losses(spec, short, 2)


# ------------------------------------------------------------------------ the environment


@pytest.mark.parametrize("under", ["sub", "a/b/c"])
def test_a_cache_folder_under_a_file_is_refused_before_any_lock(capsys, tmp_path, monkeypatch,
                                                                under):
    (tmp_path / "afile").write_text("not a folder")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "afile" / under))
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "simulate", "--games", "100", "--players", "3", "-q", "--out",
                       "s.parquet")
    _refused(code, err, "NUMBA_CACHE_DIR=", f"under a file ({tmp_path / 'afile'})",
             "give a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize("variable", ["XDG_CACHE_HOME", "HOME"])
def test_a_cache_folder_made_of_a_variable_names_that_variable(tmp_path, variable):
    """Where NUMBA_CACHE_DIR is not set, the cache folder is made of XDG_CACHE_HOME (or
    HOME): a file there is refused in one line naming the variable the user set, not
    NUMBA_CACHE_DIR, before any table or lock is written."""
    (tmp_path / "afile").write_text("not a folder")
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env[variable] = str(tmp_path / "afile")
    out = tmp_path / "out"
    out.mkdir()
    p = subprocess.run([sys.executable, "-P", "-m", "fbsim.cli", "simulate", "--games", "10",
                        "--players", "3", "-q", "--out", "s.parquet"], env=env, cwd=out,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 2, p.stderr[-3000:]
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"fbsim: error: {variable}="), p.stderr
    assert f"under a file ({tmp_path / 'afile'})" in lines[0], p.stderr
    assert "NUMBA_CACHE_DIR" not in lines[0] and "compiled code" in lines[0]
    assert list(out.iterdir()) == []


def test_a_cache_folder_that_can_be_made_is_accepted(tmp_path, monkeypatch):
    from fbsim.environment import check_environment

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "new" / "cache"))
    check_environment()
    assert not (tmp_path / "new").exists()  # (tried, and removed again)


@pytest.mark.parametrize("cache, says", [("/proc/fbsim-cache", "cannot be made"),
                                         ("a" * 300, "not a usable folder name")])
def test_a_cache_folder_that_cannot_be_made_is_refused_before_any_lock(
        capsys, tmp_path, monkeypatch, cache, says):
    monkeypatch.setenv("NUMBA_CACHE_DIR", cache if cache.startswith("/") else
                       str(tmp_path / cache))
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "simulate", "--games", "100", "--players", "3", "-q", "--out",
                       "s.parquet")
    _refused(code, err, "NUMBA_CACHE_DIR=", says)
    assert list(tmp_path.iterdir()) == []  # no table, no lock


# ------------------------------------------------------------------------------ Ctrl-C


def test_the_first_interrupt_raises_and_ignores_the_next(monkeypatch):
    from fbsim import cli

    calls: list = []
    monkeypatch.setattr(signal, "signal", lambda *a: calls.append(a))
    with pytest.raises(KeyboardInterrupt):
        cli._interrupt_once(signal.SIGINT, None)
    assert calls == [(signal.SIGINT, signal.SIG_IGN)]


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_interrupts_in_quick_succession_give_the_one_line_and_status_130(tmp_path):
    """SIGINT after SIGINT (Ctrl-C twice, or `timeout` signalling the process and then its
    group): the one promised line and exit 130, whenever the later ones land."""
    out = tmp_path / "s"
    cmd = [sys.executable, "-m", "fbsim.cli", "sweep", "--vary", "masks=0..3", "--players",
           "3..4", "--games", "2000000", "--out", str(out), "-q", "--json"]
    # the default disposition of SIGINT, as in a terminal (a job started in the background
    # inherits it ignored); one thread, so that it is still playing when the signals come
    proc = subprocess.Popen(cmd, env={**os.environ, "NUMBA_NUM_THREADS": "1"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_sigint)
    deadline = time.time() + 120
    while not (out / "sweep.json").exists():  # (the command is running: past its imports)
        assert proc.poll() is None and time.time() < deadline, proc.communicate()
        time.sleep(0.02)
    while proc.poll() is None and time.time() < deadline:
        proc.send_signal(signal.SIGINT)
        time.sleep(0.005)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert stderr.splitlines() == ["fbsim: interrupted; run the same command again to resume"]
    assert stdout == ""


# ------------------------------------------------------------------ the searcher's summary

SEARCH = ["exploit", "--oracle", "search", "--agenda", "steward", "--players", "4",
          "--seat-games", "10", "--rollouts", "1", "-q"]


@pytest.mark.parametrize("text, says", [("{", "not readable JSON"),
                                        ('{"players": {"3": NaN}}', "NaN is not a number"),
                                        ('{"players": {}, "bogus": 1}', "bogus: unknown key")])
def test_a_damaged_searcher_summary_is_refused_and_keeps_the_sizes_it_holds(
        capsys, tmp_path, monkeypatch, text, says):
    """OUT/search/summary.json, which each table size's gains are merged into, damaged: one
    line naming it before any game, and nothing rewritten (no size lost to a fresh file)."""
    out = tmp_path / "x"
    (out / "search").mkdir(parents=True)
    path = out / "search" / "summary.json"
    path.write_text(text)
    before = _tree(out)
    _no_games(monkeypatch)
    code, _, err = run(capsys, *SEARCH, "--out", out)
    _refused(code, err, f"{path}: ", says, "run each table size it held again")
    assert _tree(out) == before


COMMITTED_SEARCH = ROOT / "results" / "equilibrium-searcher" / "search" / "summary.json"


def _steward_3(doc):
    return doc["players"]["3"]["agendas"]["steward"]


@pytest.mark.parametrize("edit, says", [
    (lambda d: _steward_3(d).update(extra_key=1), "agendas.steward.extra_key: unknown key"),
    (lambda d: d["players"]["3"].pop("budgets"), "players.3.budgets: missing"),
    (lambda d: _steward_3(d)["by_rollouts"]["64"].update(gain=0.9),
     "by_rollouts.64.gain: expected a value within its interval"),
    (lambda d: _steward_3(d)["by_rollouts"].pop("64"),
     "agendas.steward.by_rollouts: expected one row per budget"),
    (lambda d: _steward_3(d)["by_rollouts"]["64"].update(n=-3),
     "by_rollouts.64.n: expected an integer from 0 to"),
    (lambda d: _steward_3(d)["by_rollouts"]["64"].update(agenda="opportunist"),
     "by_rollouts.64: expected the row of steward at 64 rollouts"),
    (lambda d: d["players"]["3"]["knobs"].update(rollouts=0), "knobs.rollouts"),
    # (probe, round 3) what spans keys, and the file's own keys
    (lambda d: _steward_3(d).update(search_gain=_steward_3(d)["search_gain"] + 0.001),
     "agendas.steward.search_gain: expected the first budget's gain"),
    (lambda d: _steward_3(d).update(held=not _steward_3(d)["held"]), "agendas.steward.held"),
    (lambda d: d["players"]["3"].update(held=not d["players"]["3"]["held"]),
     "players.3.held: expected"),
    (lambda d: d["players"]["3"].update(rules_toml="masks = ["), "players.3.rules_toml: not "
                                                                  "TOML"),
    (lambda d: d["players"]["3"].update(provenance={}), "players.3.provenance.fbsim_version: "
                                                         "missing"),
    (lambda d: d["players"]["3"]["knobs"].update(rollouts=65), "knobs.rollouts: expected the "
                                                               "first budget 64"),
    (lambda d: _steward_3(d)["by_rollouts"]["64"].update(changed=10**6),
     "by_rollouts.64.changed: expected at most n"),
    (lambda d: _steward_3(d)["by_rollouts"]["64"].update(departures=10**6),
     "by_rollouts.64.departures: expected at most decisions"),
    (lambda d: _steward_3(d).update(seat_games=10**30), "agendas.steward.seat_games"),
    (lambda d: d["players"]["3"].update(budgets=[256, 64]), "players.3.budgets"),
    (lambda d: d["players"]["3"]["knobs"].update(margin=1e308), "knobs.margin"),
    (lambda d: _steward_3(d).update(field_rate=0.9), "agendas.steward.field_rate"),
    (lambda d: d["players"]["3"].update(field=" "), "players.3.field: expected the field's"),
])
def test_a_searcher_summary_with_a_damaged_entry_is_refused(capsys, tmp_path, monkeypatch,
                                                             edit, says):
    """(C08) every table size's entry is checked by its schema (`GAINS_KEYS`), not only the
    file's outline: an unknown key is refused, not copied into the next summary."""
    out = tmp_path / "x"
    (out / "search").mkdir(parents=True)
    doc = json.loads(COMMITTED_SEARCH.read_text())
    edit(doc)
    path = out / "search" / "summary.json"
    path.write_text(json.dumps(doc))
    before = _tree(out)
    _no_games(monkeypatch)
    code, _, err = run(capsys, *SEARCH, "--out", out)
    _refused(code, err, f"{path}: not a searcher audit fbsim wrote", says,
             "audit each table size it held again")
    assert _tree(out) == before


def test_the_provenance_keys_are_those_every_output_records():
    from fbsim.experiments.run.provenance import PROVENANCE_KEYS, base_provenance

    assert tuple(base_provenance("t")) == PROVENANCE_KEYS


def test_every_committed_searcher_summary_reads_back():
    from fbsim.experiments.search.equilibrium.state import read_published
    from fbsim.experiments.search.searcher import check_gains

    found = sorted((ROOT / "results").glob("**/search/summary.json"))
    assert len(found) >= 5
    for path in found:
        doc = check_gains(read_published(path.parent), path)
        assert doc["players"]


# -------------------------------------------------------------- what a command writes over

def test_a_folder_in_a_tables_place_is_refused_before_any_table_is_rewritten(
        capsys, tmp_path, monkeypatch, sweep_dir):
    out = tmp_path / "s"
    shutil.copytree(sweep_dir, out)
    (out / "win_rates.parquet").unlink()
    (out / "win_rates.parquet").mkdir()
    shutil.rmtree(out / "points" / "0001")  # (a point to play again: the tables are written)
    before = _tree(out)
    _no_games(monkeypatch)
    code, _, err = run(capsys, *SWEEP, "--out", out)
    _refused(code, err, f"{out / 'win_rates.parquet'}: a folder is in the place of a file")
    assert _tree(out) == before


def test_a_failed_rename_names_the_file_and_leaves_no_temporary(tmp_path):
    """(what stops a write the checks could not foresee: the message names the file written,
    not its temporary, which is removed)"""
    import pandas as pd

    from fbsim.experiments.run.provenance import write_table

    (tmp_path / "t.parquet").mkdir()
    with pytest.raises(IsADirectoryError) as e:
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "t.parquet", {"table": "t"})
    assert e.value.filename == str(tmp_path / "t.parquet")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]


def test_a_full_disk_while_a_table_is_written_names_the_table_and_leaves_no_temporary(
        tmp_path, monkeypatch):
    """(pyarrow's own error names no file: the OSError names the table, with the reason)"""
    import errno

    import pandas as pd
    import pyarrow.parquet as pq

    from fbsim.experiments.run.provenance import write_table

    def full(table, where, **kw):
        open(where, "wb").write(b"PAR1")  # (a partial file, as a full disk leaves one)
        raise OSError("Error writing bytes to file. Detail: [errno 28] No space left on device")

    monkeypatch.setattr(pq, "write_table", full)
    with pytest.raises(OSError) as e:
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "t.parquet", {"table": "t"})
    assert (e.value.errno, e.value.strerror, e.value.filename) == (
        errno.ENOSPC, "No space left on device", str(tmp_path / "t.parquet"))
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_while_the_records_are_written_names_them_and_leaves_no_temporary(
        capsys, tmp_path, monkeypatch):
    """(the records stream through a writer of their own: its failure names the records
    file too, the reason read from pyarrow's text)"""
    import pyarrow.parquet as pq

    class Full(pq.ParquetWriter):
        def write_table(self, table, *a, **k):
            raise OSError("Error writing bytes to file. Detail: [errno 28] No space left on "
                          "device")

    monkeypatch.setattr(pq, "ParquetWriter", Full)
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "simulate", "--games", "100", "--players", "3", "-q",
                       "--records", "r.parquet")
    _refused(code, err, "r.parquet: No space left on device")
    assert not [p for p in tmp_path.iterdir() if ".tmp" in p.name or p.suffix == ".parquet"]


def test_a_link_in_the_locks_place_is_refused_and_never_followed(capsys, tmp_path):
    out = tmp_path / "s"
    out.mkdir()
    target = tmp_path / "elsewhere" / "x"
    (out / ".fbsim.lock").symlink_to(target)
    code, _, err = run(capsys, *SWEEP, "--out", out)
    _refused(code, err, f"{out / '.fbsim.lock'}: not fbsim's lock file")
    assert not (tmp_path / "elsewhere").exists()


def test_a_killed_writer_not_yet_reaped_counts_as_gone(tmp_path):
    """A temporary named after a process that was killed but is still a zombie (its parent
    has not waited for it yet) is stale: the next run removes it."""
    from fbsim.experiments.run.lock import remove_stale_temporaries

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    for _ in range(200):  # (until it has exited; it is not waited for, so it stays a zombie)
        with open(f"/proc/{child.pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        time.sleep(0.05)
    stale = tmp_path / f".r.parquet.tmp{child.pid}"
    stale.write_bytes(b"x")
    mine = tmp_path / f".r.parquet.tmp{os.getpid()}"
    mine.write_bytes(b"x")
    assert remove_stale_temporaries(tmp_path) == [stale]
    assert mine.exists()
    child.wait()


def test_a_folder_in_a_figures_place_is_refused_before_the_lock(capsys, tmp_path, sweep_dir):
    out = tmp_path / "s"
    shutil.copytree(sweep_dir, out)
    (out / "plots" / "win_rates.png").mkdir(parents=True)
    before = _tree(out)
    code, _, err = run(capsys, "plot", out)
    _refused(code, err, f"{out / 'plots' / 'win_rates.png'}: a folder is in the place of a "
             "file")
    assert _tree(out) == before  # (no lock file left in plots/)


@pytest.mark.parametrize("args, place, kind", [
    (["equilibrium", "--players", "3"], "summary.md", "folder"),
    (["exploit", "--agenda", "steward", "--players", "4"], "steward-p4/result.json", "folder"),
    (["exploit", "--agenda", "steward", "--players", "4", "--deviate", "team"],
     "steward-p4/confirm", "file"),
    (["ladder", "--players", "3", "--field", "steward=steward", "--games", "200",
      "--seat-games", "10", "--rollouts", "1"], "ladder.md", "folder"),
])
def test_an_output_place_of_the_wrong_kind_is_refused_before_anything_runs(
        capsys, tmp_path, monkeypatch, args, place, kind):
    """A folder where a command writes a file (or a file where it writes a folder) is found
    before its lock and its first game, not after it has written its other outputs."""
    out = tmp_path / "o"
    where = out / place
    if kind == "folder":
        where.mkdir(parents=True)
    else:
        where.parent.mkdir(parents=True)
        where.write_text("x")
    before = _tree(out)
    _no_games(monkeypatch)
    code, _, err = run(capsys, *args, "--out", out, "-q")
    _refused(code, err, f"{where}: a {kind} is in the place of a")
    assert _tree(out) == before


def test_an_experiments_figure_place_of_the_wrong_kind_is_refused_first(capsys, tmp_path,
                                                                        monkeypatch):
    (tmp_path / "r" / "masks" / "collapse.png").mkdir(parents=True)
    before = _tree(tmp_path)
    _no_games(monkeypatch)
    code, _, err = run(capsys, "experiment", "masks", "--results", tmp_path / "r", "--games",
                       "200", "-q")
    _refused(code, err, f"{tmp_path / 'r' / 'masks' / 'collapse.png'}: a folder is in the "
             "place of a file")
    assert _tree(tmp_path) == before
