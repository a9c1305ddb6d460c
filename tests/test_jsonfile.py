"""Every JSON file fbsim reads back (search states, summaries, ladders, the sweep's record,
provenance) refused in one line naming it when a hand edit nests it deeper than Python's
parser can go (a RecursionError, which no reader expected), as any other damage is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fbsim import jsonfile
from fbsim.cli import main
from fbsim.errors import UsageError

DEEP = '{"players": ' + "[" * 200_000 + "]" * 200_000 + "}"


def test_a_document_nested_too_deeply_is_a_value_error_and_a_shallow_one_reads(tmp_path):
    with pytest.raises(ValueError, match="nested too deeply"):
        jsonfile.loads(DEEP)
    f = tmp_path / "x.json"
    f.write_text(json.dumps({"a": [[1, 2], {"b": None}]}))
    assert jsonfile.read(f) == {"a": [[1, 2], {"b": None}]}


def _state(folder: Path) -> None:
    from fbsim.experiments.search.equilibrium.state import State

    (folder / "state.json").write_text(DEEP)
    State.load(folder / "state.json", {})


def _published(folder: Path) -> None:
    from fbsim.experiments.search.equilibrium.state import read_published

    (folder / "summary.json").write_text(DEEP)
    read_published(folder)


def _ladder(folder: Path) -> None:
    from fbsim.experiments.search.ladder import read_ladder

    (folder / "ladder.json").write_text(DEEP)
    read_ladder(folder / "ladder.json")


def _map(folder: Path) -> None:
    from fbsim.experiments.report.model import read_map_folder

    (folder / "summary.json").write_text(DEEP)
    read_map_folder(folder)


def _rulebook(folder: Path) -> None:
    from fbsim.experiments.report.model import read_rulebook_folder

    (folder / "summary.json").write_text(DEEP)
    read_rulebook_folder(folder)


@pytest.mark.parametrize("read, file", [(_state, "state.json"), (_published, "summary.json"),
                                        (_ladder, "ladder.json"), (_map, "summary.json"),
                                        (_rulebook, "summary.json")])
def test_each_reader_refuses_a_file_nested_too_deeply_naming_it(tmp_path, read, file):
    with pytest.raises(UsageError) as e:
        read(tmp_path)
    assert str(tmp_path / file) in str(e.value) and "\n" not in str(e.value)


def test_a_sweep_record_nested_too_deeply_is_one_line_and_nothing_is_written(capsys,
                                                                             tmp_path):
    out = tmp_path / "sw"
    out.mkdir()
    (out / "sweep.json").write_text(DEEP)
    code = main(["sweep", "--players", "3", "--games", "100", "--out", str(out), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and f"{out / 'sweep.json'}" in err, err
    assert sorted(p.name for p in out.iterdir()) == ["sweep.json"]


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_fifo_or_a_device_in_a_json_files_place_is_refused_not_read(tmp_path, kind):
    """A FIFO would block the reader for ever and a device never end (it read /dev/urandom
    until memory ran out): refused as not a regular file, naming it."""
    import os

    path = tmp_path / "state.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    with pytest.raises(ValueError, match="not a regular file"):
        jsonfile.read(path)
    (tmp_path / "p3").mkdir()
    (tmp_path / "p3" / "summary.json").symlink_to(path)  # (a reader names it in one line)
    from fbsim.experiments.search.equilibrium.state import read_published

    with pytest.raises(UsageError, match=r"summary\.json: not readable JSON .*not a regular"):
        read_published(tmp_path / "p3")
