"""`fbsim report --map`: every equilibrium an `fbsim equilibrium --map` found, shown at the
table sizes played under the page's rules, with the verdict over the map (a table size fair
only when every equilibrium with a basin share of at least 5% is); a damaged map refused
before any game."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fbsim.cli import main
from fbsim.experiments.report import model as M
from fbsim.experiments.report.page import render
from fbsim.experiments.search.equilibrium import basins as B
from fbsim.rules import load_rules, rules_hash

ROOT = Path(__file__).resolve().parents[3]
AGENDAS = ("steward", "opportunist", "accelerationist")
FAIR3 = (1 / 3, 1 / 3, 1 / 3)


def start(seed, chances, converged=True, held=None, half=0.005):
    return B.Start(seed, converged, held, dict(zip(AGENDAS, chances, strict=True)),
                   {a: (c - half, c + half) for a, c in zip(AGENDAS, chances, strict=True)},
                   0.4, 1 / 3, {a: [0.5] * 3 for a in AGENDAS})


def map_folder(tmp_path: Path, starts, rules: str | None = None) -> Path:
    """A map's folder as `run_map` writes its summary (the parts the report reads)."""
    h = rules_hash(load_rules(sets=[], players=3)) if rules is None else rules
    folder = tmp_path / "map"
    folder.mkdir()
    part = B.map_summary(starts, 2, 4, 1, rules_hash=h)
    (folder / "summary.json").write_text(json.dumps({"players": {"3": {
        "draw": "seat", **part}}}))
    return folder


def page(tmp_path, folder):
    rep = M.report(games=1000, players=[3], exploit_dir=None, map_dir=folder)
    return rep, render(rep)


def test_every_equilibrium_is_shown_and_one_unfair_basin_makes_the_size_unfair(tmp_path):
    starts = [start(0, FAIR3), start(1, FAIR3), start(2, (0.05, 0.30, 0.90)),
              start(3, (0.3, 0.3, 0.3), converged=False)]
    rep, html = page(tmp_path, map_folder(tmp_path, starts))
    assert "<h2>Every equilibrium found</h2>" in html
    assert "3 players</h3><p>4 cold starts, 2 distinct equilibria; <b>not fair</b>" in html
    assert "#1</td><td>50.0%" in html and "#2</td><td>25.0%" in html  # (largest basin first)
    assert "(seeds 0, 1)" in html and "(seed 2)" in html and "unsettled</td>" in html
    line = next(v for v in rep.verdict if v.startswith("At 3 players"))
    assert "2 distinct equilibria" in line and "1 more starts did not converge" in line
    assert ": not fair over the map" in line and "Steward 33.3%" in line


def test_a_size_is_fair_over_the_map_only_when_every_weighty_basin_is(tmp_path):
    starts = [start(0, FAIR3), start(1, (0.34, 0.33, 0.32))]
    rep, html = page(tmp_path, map_folder(tmp_path, starts))
    assert "<b>fair</b> over the map" in html
    assert any(": fair over the map" in v for v in rep.verdict)


def test_a_map_solved_under_other_rules_is_not_shown(tmp_path):
    rep, html = page(tmp_path, map_folder(tmp_path, [start(0, FAIR3)], rules="0" * 16))
    assert rep.maps is None and "Every equilibrium found" not in html
    assert not any(v.startswith("At 3 players") for v in rep.verdict)


def test_the_committed_map_reads_back():
    maps = M.read_map_folder(ROOT / "results" / "equilibrium-map")
    assert maps and all(m["map"]["starts"] >= 1 for m in maps.values())


def _edit(path: str, value):
    def edit(doc):
        *up, last = path.split(".")
        for k in up:
            doc = doc[int(k)] if isinstance(doc, list) else doc[k]
        doc[last] = value
    return edit


@pytest.mark.parametrize("damage, says", [
    (_edit("players.3.equilibria.0.basin_share", 2.0),
     "players.3.equilibria[0].basin_share: expected a number from 0 to 1"),
    (_edit("players.3.equilibria.0.agendas.steward.player_win_rate", 0.9),
     "players.3.equilibria[0].agendas.steward.player_win_rate: expected a value within"),
    (_edit("players.3.map.fair", "yes"), "players.3.map.fair: expected true or false"),
    (_edit("players.3.map.rules_hash", 5), "players.3.map.rules_hash: expected a rules hash"),
    (_edit("players.3.map.unsettled", {}), "players.3.map.unsettled.starts: missing"),
    (_edit("players.9", {}), "players.9: unknown table size"),
    (lambda d: d.pop("players"), "players: missing"),
    ("not json", "cannot be read"),
])
def test_a_damaged_map_is_refused_before_any_game(capsys, tmp_path, damage, says):
    folder = map_folder(tmp_path, [start(0, FAIR3), start(1, (0.1, 0.3, 0.6))])
    path = folder / "summary.json"
    if callable(damage):
        doc = json.loads(path.read_text())
        damage(doc)
        path.write_text(json.dumps(doc))
    else:
        path.write_text(damage)
    out = tmp_path / "page" / "r.html"
    out.parent.mkdir()
    code = main(["report", "--players", "3", "--games", "100", "--map", str(folder),
                 "--out", str(out), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert f"--map {folder}: {path}: {says}" in err, err
    assert list(out.parent.iterdir()) == []  # no page, no lock, no kept table sizes


def test_a_map_folder_named_must_hold_a_summary(capsys, tmp_path):
    (tmp_path / "empty").mkdir()
    code = main(["report", "--players", "3", "--games", "100", "--map",
                 str(tmp_path / "empty"), "--out", str(tmp_path / "r.html"), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and "--map " in err and "no summary.json there" in err, err
