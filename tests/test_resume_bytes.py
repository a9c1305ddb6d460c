"""An interrupted and resumed run writes the same bytes as an uninterrupted one: fbsim tune,
fbsim exploit (team and seat deviations) and fbsim experiment. (fbsim sweep's and fbsim
equilibrium's are in test_sweep.py and test_equilibrium.py.)

Each test runs a command once whole in folder a/, once in folder b/ with a Ctrl-C
(KeyboardInterrupt) injected mid-run by a patched internal function, then again in b/
without the patch; every file under a/ and b/ must be the same bytes, and so must what the
command printed. Both runs use the same relative paths (the working folder is a/ or b/), so
no path in a file or in the output differs between them; SOURCE_DATE_EPOCH fixes the time in
the provenance. No folder is documented as scratch (the sweeps' temporaries are removed when
they resume), so only the lock files are left out of the comparison.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest

from fbsim.cli import main
from fbsim.experiments.run import sweep

EPOCH = "1700000000"
RESUMABLE_MESSAGE = "interrupted; run the same command again to resume"


# ------------------------------------------------------------------ helpers


def _is_lock(name: str) -> bool:
    return name == ".fbsim.lock" or (name.startswith(".") and name.endswith(".lock"))


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under `root` by relative path, lock files
    left out."""
    return {p.relative_to(root).as_posix(): (None if p.is_dir() else p.read_bytes())
            for p in sorted(root.rglob("*")) if not _is_lock(p.name)}


def _parquet_difference(a: Path, b: Path) -> list[str]:
    import pyarrow.parquet as pq

    from fbsim.experiments.run.provenance import META_KEY

    ta, tb = pq.read_table(a), pq.read_table(b)
    out = []
    ma, mb = (json.loads((t.schema.metadata or {}).get(META_KEY, b"{}")) for t in (ta, tb))
    for k in sorted(set(ma) | set(mb)):
        if ma.get(k) != mb.get(k):
            out.append(f"provenance[{k!r}]: {ma.get(k)!r} != {mb.get(k)!r}"[:600])
    if ta.schema.remove_metadata() != tb.schema.remove_metadata():
        out.append(f"schema: {ta.schema.names} != {tb.schema.names}")
    else:
        for name in ta.schema.names:
            ca, cb = ta.column(name).to_pylist(), tb.column(name).to_pylist()
            if ca != cb:
                rows = [i for i, (x, y) in enumerate(zip(ca, cb, strict=False)) if x != y]
                out.append(f"column {name!r}: rows {rows[:5]} e.g. "
                           f"{ca[rows[0]] if rows else ca!r} != {cb[rows[0]] if rows else cb!r}"
                           [:600])
    return out or ["(same table and provenance; other bytes differ)"]


def _text_difference(a: bytes, b: bytes) -> list[str]:
    lines = difflib.unified_diff(a.decode(errors="replace").splitlines(),
                                 b.decode(errors="replace").splitlines(), "a", "b", n=0,
                                 lineterm="")
    return [x[:300] for x in list(lines)[2:22]]


def _differences(a: Path, b: Path) -> list[str]:
    """What differs between the trees `a` and `b`, in words (empty: the same bytes)."""
    ta, tb = _tree(a), _tree(b)
    out = [f"only in {a.parent.name}/: {k}" for k in sorted(set(ta) - set(tb))]
    out += [f"only in {b.parent.name}/: {k}" for k in sorted(set(tb) - set(ta))]
    for k in sorted(set(ta) & set(tb)):
        if ta[k] == tb[k]:
            continue
        if ta[k] is None or tb[k] is None:
            out.append(f"{k}: a folder in one tree, a file in the other")
        elif k.endswith(".parquet"):
            out += [f"{k}: {d}" for d in _parquet_difference(a / k, b / k)]
        elif k.endswith((".json", ".md", ".toml", ".txt")):
            out += [f"{k}: {d}" for d in _text_difference(ta[k], tb[k])]
        else:
            out.append(f"{k}: {len(ta[k])} bytes != {len(tb[k])} bytes (binary)")
    return out


def _dies(monkeypatch, owner, name: str, when):
    """Patch `owner.name` to raise KeyboardInterrupt on the first call for which
    `when(*args)` holds; returns (the real function, the calls seen)."""
    real = getattr(owner, name)
    calls = {"n": 0, "died_at": None}

    def dies(*a, **k):
        calls["n"] += 1
        if calls["died_at"] is None and when(*a, **k):
            calls["died_at"] = calls["n"]
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(owner, name, dies)
    return real, calls


def _run(capsys, monkeypatch, folder: Path, args: list[str]) -> tuple[int, str, str]:
    folder.mkdir(exist_ok=True)
    monkeypatch.chdir(folder)
    code = main([str(x) for x in args])
    got = capsys.readouterr()
    return code, got.out, got.err


def _whole_interrupted_resumed(capsys, monkeypatch, tmp_path, args, owner, name, when,
                               check_interrupted):
    """The run in a/, the interrupted and the resumed run in b/; returns (a's output, b's
    resumed output, the calls seen by the patched function)."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    code, whole, err = _run(capsys, monkeypatch, tmp_path / "a", args)
    assert code == 0, err
    real, calls = _dies(monkeypatch, owner, name, when)
    code, _, err = _run(capsys, monkeypatch, tmp_path / "b", args)
    assert code == 130 and calls["died_at"] is not None, (code, calls, err)
    assert RESUMABLE_MESSAGE in err
    check_interrupted(tmp_path / "b")
    monkeypatch.setattr(owner, name, real)
    code, resumed, err = _run(capsys, monkeypatch, tmp_path / "b", args)
    assert code == 0, err
    return whole, resumed, calls


def _same_bytes(tmp_path: Path, folder: str) -> None:
    a, b = tmp_path / "a" / folder, tmp_path / "b" / folder
    assert a.is_dir() and len(_tree(a)) > 1
    diff = _differences(a, b)
    assert not diff, "\n".join(diff)


def _named(out_name: str):
    """`when` for sweep.combine(out, ...): the sweep into a folder of this name."""
    return lambda out, *a, **k: Path(out).name == out_name


def _point_of(out_name: str, index: int):
    """`when` for sweep._write_point(out, point, ...): this point of that sweep."""
    return lambda out, point, *a, **k: Path(out).name == out_name and point.index == index


def _done(folder: Path) -> bool:
    return all((folder / f"{t}.parquet").exists() for t in sweep.TABLES)


def _points(folder: Path) -> list[str]:
    return sorted(p.name for p in (folder / "points").iterdir())


# ------------------------------------------------------------------ fbsim tune

TUNE_SPEC = ("players = [3]\ngames = 100\ngenerations = 2\npopulation = 3\n"
             "confirm_games = 100\ntop = 3\nseed = 1\n"
             "[params]\nmasks = [0, 3]\nbaseline_offset = [-4, 6]\n")


def _tune_mid_search(b: Path) -> None:
    # generation 1 finished, generation 2 played but its tables not written
    assert _done(b / "out" / "gen-00") and not _done(b / "out" / "gen-01")
    assert not (b / "out" / "confirm").exists() and not (b / "out" / "candidates.parquet").exists()


def _tune_mid_confirm(b: Path) -> None:
    # the search done, the confirmation's point 0 written, point 1 not
    assert _done(b / "out" / "gen-01")
    assert _points(b / "out" / "confirm") == ["0000"] and not _done(b / "out" / "confirm")
    assert not (b / "out" / "fresh").exists() and not (b / "out" / "candidates.parquet").exists()


@pytest.mark.parametrize(("name", "when", "check"), [
    ("combine", _named("gen-01"), _tune_mid_search),
    ("_write_point", _point_of("confirm", 1), _tune_mid_confirm),
], ids=["mid-search", "mid-confirm"])
def test_tune_interrupted_and_resumed_writes_the_same_bytes(capsys, monkeypatch, tmp_path,
                                                            name, when, check):
    spec = tmp_path / "spec.toml"
    spec.write_text(TUNE_SPEC)
    args = ["tune", "--target", spec, "--out", "out", "--json", "-q"]
    whole, resumed, _ = _whole_interrupted_resumed(capsys, monkeypatch, tmp_path, args,
                                                   sweep, name, when, check)
    assert resumed == whole
    assert json.loads(resumed) == json.loads(whole) and len(json.loads(whole)) >= 2
    _same_bytes(tmp_path, "out")


# ------------------------------------------------------------------ fbsim exploit

EXPLOIT = ["exploit", "--agenda", "accelerationist", "--players", "3", "--confirm-games", "100",
           "--generations", "2", "--population", "3", "--out", "out", "--json", "-q"]


def _exploit_mid_search(b: Path) -> None:
    d = b / "out" / "accelerationist-p3"
    assert _done(d / "gen-00") and not _done(d / "gen-01")
    assert not (d / "select").exists() and not (d / "result.json").exists()


def _exploit_mid_confirm(b: Path) -> None:
    # the selection done, the confirmation's point 0 (the field) written, point 1 not
    d = b / "out" / "accelerationist-p3"
    assert _done(d / "select")
    assert _points(d / "confirm") == ["0000"] and not _done(d / "confirm")
    assert not (d / "result.json").exists()


@pytest.mark.parametrize(("name", "when", "check"), [
    ("combine", _named("gen-01"), _exploit_mid_search),
    ("_write_point", _point_of("confirm", 1), _exploit_mid_confirm),
], ids=["mid-search", "mid-confirm"])
def test_team_exploit_interrupted_and_resumed_writes_the_same_bytes(capsys, monkeypatch,
                                                                    tmp_path, name, when,
                                                                    check):
    args = [*EXPLOIT, "--deviate", "team", "--budget", "600"]
    whole, resumed, _ = _whole_interrupted_resumed(capsys, monkeypatch, tmp_path, args,
                                                   sweep, name, when, check)
    assert resumed == whole and json.loads(resumed)["mode"] == "team"
    _same_bytes(tmp_path, "out")


def test_seat_exploit_interrupted_and_rerun_writes_the_same_bytes(capsys, monkeypatch,
                                                                  tmp_path):
    """The seat deviation keeps nothing of an unfinished search (its evaluations write no
    files): interrupted at its third evaluation, OUT holds no result, and the rerun is the
    uninterrupted run's bytes."""
    from fbsim.experiments.search.equilibrium import oracle

    def nothing_written(b: Path) -> None:
        assert not [p for p in (b / "out").rglob("*") if not _is_lock(p.name)]

    seen = {"n": 0}

    def third(*a, **k):
        seen["n"] += 1
        return seen["n"] == 3

    args = [*EXPLOIT, "--deviate", "seat", "--budget", "1800"]
    whole, resumed, calls = _whole_interrupted_resumed(capsys, monkeypatch, tmp_path, args,
                                                       oracle, "evaluate", third,
                                                       nothing_written)
    assert calls["died_at"] == 3
    assert resumed == whole and json.loads(resumed)["mode"] == "seat"
    _same_bytes(tmp_path, "out")


# ------------------------------------------------------------------ fbsim experiment

EXPERIMENT = ["experiment", "baseline", "--games", "100", "--results", "res", "-q"]


def _experiment_mid_sweep(b: Path) -> None:
    d = b / "res" / "baseline"
    assert _points(d) == ["0000", "0001"] and not _done(d)
    assert not (d / "summary.md").exists()


def _experiment_before_figures(b: Path) -> None:
    # the sweep finished and its tables written; no figure and no summary yet
    d = b / "res" / "baseline"
    assert _done(d) and len(_points(d)) == 4
    assert not list(d.glob("*.png")) and not (d / "summary.md").exists()


@pytest.mark.parametrize(("owner", "name", "when", "check"), [
    ("sweep", "_write_point", _point_of("baseline", 2), _experiment_mid_sweep),
    ("plots", "plot_dataset", lambda *a, **k: True, _experiment_before_figures),
], ids=["mid-sweep", "before-figures"])
def test_experiment_interrupted_and_resumed_writes_the_same_bytes(capsys, monkeypatch,
                                                                  tmp_path, owner, name, when,
                                                                  check):
    from fbsim.experiments.report import plots

    mod = {"sweep": sweep, "plots": plots}[owner]
    whole, resumed, _ = _whole_interrupted_resumed(capsys, monkeypatch, tmp_path,
                                                   EXPERIMENT, mod, name, when, check)
    assert resumed == whole == "res/baseline\n"  # (the command has no --json)
    _same_bytes(tmp_path, "res")
    assert (tmp_path / "a" / "res" / "baseline" / "summary.md").exists()


# ------------------------------------------------------------------ fbsim ladder

LADDER = ["ladder", "--players", "3,4", "--field", "steward=steward", "--games", "200",
          "--seat-games", "10", "--rollouts", "1", "--out", "out", "-q"]


def test_ladder_interrupted_and_resumed_writes_the_same_bytes(capsys, monkeypatch, tmp_path):
    """Interrupted while it plays its second table size, the ladder says it resumes, keeps
    the first size in ladder.json, and the resumed run writes the uninterrupted run's
    bytes."""
    from fbsim.experiments.search import ladder

    def mid_ladder(b: Path) -> None:
        doc = json.loads((b / "out" / "ladder.json").read_text())
        assert list(doc["players"]) == ["3"] and not (b / "out" / "ladder.parquet").exists()

    def second(rules, *a, **k):
        return rules.players == 4

    whole, resumed, calls = _whole_interrupted_resumed(capsys, monkeypatch, tmp_path, LADDER,
                                                       ladder, "ladder", second, mid_ladder)
    assert calls["died_at"] == 2
    assert resumed == whole
    _same_bytes(tmp_path, "out")
