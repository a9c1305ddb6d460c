"""The command line under stress: Ctrl-C, concurrent runs into one folder, failed writes,
players from the rules, and nonsense that used to pass silently."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fbsim.cli import main
from fbsim.experiments.run.sweep import TABLES

SPEC = 'games = 150000\nseed = 9\nplayers = [3, 4]\n[vary]\nmasks = "0..3"\n'
ENV = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *args):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _sweep_cmd(out: Path, spec: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "fbsim.cli", "sweep", str(spec), "--out", str(out), "-q",
            *extra]


def _bytes(out: Path) -> dict[str, bytes]:
    return {t: (out / f"{t}.parquet").read_bytes() for t in TABLES}


def _wait_for(cond, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    while not cond():
        if time.time() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.02)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _finished_points(out: Path) -> list[str]:
    d = out / "points"
    return sorted(p.name for p in d.iterdir() if not p.name.startswith(".")) if d.exists() \
        else []


@pytest.mark.slow
def test_ctrl_c_exits_130_with_one_line_and_the_sweep_resumes_to_identical_bytes(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    clean = tmp_path / "clean"
    subprocess.run(_sweep_cmd(clean, spec), env=ENV, check=True, capture_output=True)

    out = tmp_path / "interrupted"
    # the default disposition of SIGINT in the sweep, as in a terminal (a job started in the
    # background, as CI may run the suite, inherits SIGINT ignored, and Python keeps it so)
    # on one thread, so that the points after the first task's are still being played when
    # the signal comes (on more, both table sizes' tasks may finish together)
    proc = subprocess.Popen(_sweep_cmd(out, spec, "--json"),
                            env={**ENV, "NUMBA_NUM_THREADS": "1"}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint)
    _wait_for(lambda: _finished_points(out))  # the first task's points are on disk
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert stderr.splitlines() == ["fbsim: interrupted; run the same command again to resume"]
    assert stdout == ""
    finished = _finished_points(out)
    assert 1 <= len(finished) < 8
    assert not (out / "win_rates.parquet").exists()

    r = subprocess.run(_sweep_cmd(out, spec, "--json"), env=ENV, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["points_skipped"] == len(finished)
    assert _bytes(out) == _bytes(clean)
    assert not [p for p in (out / "points").iterdir() if p.name.startswith(".")]


def test_ctrl_c_in_process_is_130_and_one_line(capsys, monkeypatch):
    import fbsim.experiments.run.simulate as sim

    def interrupted(**kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(sim, "simulate", interrupted)
    code, out, err = run(capsys, "simulate", "--games", "10", "-q")
    assert code == 130 and out == ""
    assert err.splitlines() == ["fbsim: interrupted"]


# ------------------------------------------------------------- players from the rules


def _players_of_simulation(capsys, *args) -> int:
    code, out, err = run(capsys, "simulate", "--games", "200", "-q", "--json", *args)
    assert code == 0, err
    return json.loads(out)["outcomes"][0]["players"]


def test_simulate_plays_the_players_of_the_rules_file_and_of_set(capsys, tmp_path):
    f = tmp_path / "r.toml"
    f.write_text("players = 3\n")
    assert _players_of_simulation(capsys) == 4
    assert _players_of_simulation(capsys, "--rules", f) == 3
    assert _players_of_simulation(capsys, "--set", "players=5") == 5
    assert _players_of_simulation(capsys, "--rules", f, "--players", "3") == 3


def test_sweep_plays_the_players_of_set(capsys, tmp_path):
    code, out, err = run(capsys, "sweep", "--vary", "masks=1,2", "--games", "200", "-q",
                         "--json", "--set", "players=5", "--out", tmp_path / "s")
    assert code == 0, err
    import pandas as pd

    assert set(pd.read_parquet(tmp_path / "s" / "outcomes.parquet")["players"]) == {5}


@pytest.mark.parametrize("cmd", [
    ["simulate", "--games", "100", "--players", "4"],
    ["sweep", "--vary", "masks=1,2", "--games", "100", "--players", "3..4"],
    ["report", "--games", "100", "--players", "3..4"],
    ["exploit", "--agenda", "steward", "--budget", "2000", "--players", "4"],
    ["equilibrium", "--players", "3..6"],
])
def test_players_conflicting_with_the_rules_names_both(capsys, tmp_path, cmd):
    f = tmp_path / "r.toml"
    f.write_text("players = 5\n")
    for extra in (["--rules", f], ["--set", "players=5"]):
        code, out, err = run(capsys, *cmd, *extra, "--out", tmp_path / "o")
        assert code == 2 and out == ""
        (line,) = err.splitlines()
        assert "--players" in line and "players = 5" in line
        assert str(f) in line or "--set players=5" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.toml"]


def test_report_plays_the_players_of_the_rules_file(capsys, tmp_path):
    f = tmp_path / "r.toml"
    f.write_text("players = 5\n")
    code, out, err = run(capsys, "report", "--rules", f, "--games", "200", "-q", "--exploit",
                         "none", "--out", tmp_path / "r.html")
    assert code == 0, err
    import pandas as pd

    assert set(pd.read_parquet(tmp_path / "r.parquet")["players"]) == {5}
    assert any(line.startswith("5 players:") for line in out.splitlines())
    assert not any(line.startswith(("3 players:", "4 players:")) for line in out.splitlines())


def test_a_sweep_spec_whose_players_conflict_with_its_rules(capsys, tmp_path):
    (tmp_path / "r.toml").write_text("players = 5\n")
    spec = tmp_path / "spec.toml"
    spec.write_text('rules = "r.toml"\nplayers = [3, 4]\ngames = 100\n[vary]\nmasks = [1, 2]\n')
    code, _, err = run(capsys, "sweep", spec, "--out", tmp_path / "o")
    assert code == 2 and len(err.splitlines()) == 1 and "players = 5" in err


# ------------------------------------------------------------------ one writer per folder


def _holds_lock(path: Path) -> bool:
    from filelock import FileLock, Timeout

    if not path.exists():
        return False
    probe = FileLock(str(path), timeout=0)
    try:
        probe.acquire()
    except Timeout:
        return True
    probe.release()
    return False


@pytest.mark.slow
def test_a_second_sweep_into_a_busy_folder_fails_at_once(tmp_path):
    from fbsim.experiments.run.lock import LOCK_NAME
    from fbsim.experiments.run.sweep import load

    # long enough (8 points of 600,000 games) to outlive both refused runs' start-up
    long_spec = SPEC.replace("games = 150000", "games = 600000")
    spec = tmp_path / "spec.toml"
    spec.write_text(long_spec)
    other = tmp_path / "other.toml"
    other.write_text(long_spec.replace("seed = 9", "seed = 10"))
    out = tmp_path / "out"
    first = subprocess.Popen(_sweep_cmd(out, spec), env=ENV, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    _wait_for(lambda: _holds_lock(out / LOCK_NAME))
    # another sweep with --force (which would wipe the first one's points), and the same
    # sweep again (which would write the same points twice)
    for cmd in (_sweep_cmd(out, other, "--force"), _sweep_cmd(out, spec)):
        t0 = time.time()
        second = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=120)
        assert second.returncode == 2
        (line,) = second.stderr.splitlines()
        assert line.startswith(f"fbsim: error: {out}: another fbsim run is writing")
        assert time.time() - t0 < 60  # it did not wait for the first one
        assert first.poll() is None  # (the first was still running all along)
    assert first.wait(timeout=300) == 0, first.stderr.read()
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["spec"]["seed"] == 9
    tables = load(out)
    assert tables["outcomes"].attrs["provenance"]["seed"] == 9
    assert len(tables["outcomes"]) == 8 == len(_finished_points(out))


def test_the_lock_nests_in_a_process_and_excludes_another(tmp_path):
    from fbsim.errors import UsageError
    from fbsim.experiments.run import lock

    with lock.output_lock(tmp_path / "d"), lock.output_lock(tmp_path / "d"):
        code = subprocess.run(
            [sys.executable, "-c", "from fbsim.experiments.run.lock import output_lock\n"
             f"with output_lock({str(tmp_path / 'd')!r}): pass"],
            capture_output=True, text=True).returncode
        assert code != 0
    with lock.output_lock(tmp_path / "d"):  # free again
        pass
    assert UsageError  # (the error type the command line turns into exit 2)


# ------------------------------------------------------------ the report's page and table


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"<dir>"
            for p in sorted(folder.rglob("*"))}


@pytest.mark.slow
@pytest.mark.parametrize("failing", ["table", "page"])
def test_a_failed_write_leaves_the_old_page_and_table_and_no_temporary(tmp_path, monkeypatch,
                                                                       failing):
    import errno

    from fbsim.experiments.report import model as BR
    from fbsim.experiments.report import page
    from fbsim.experiments.run import provenance

    old = BR.report(games=300, players=[4], exploit_dir=None)
    new = BR.report(games=400, players=[4], exploit_dir=None)
    html = tmp_path / "report.html"
    assert page.write_report(old, html) == [html, tmp_path / "report.parquet"]
    before = _snapshot(tmp_path)

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(args[1]))

    if failing == "table":  # the second file: the page's temporary is already written
        monkeypatch.setattr(provenance.pq, "write_table", full_disk)
    else:
        monkeypatch.setattr(Path, "write_text", lambda self, *a, **k: full_disk(None, self))
    with pytest.raises(OSError):
        page.write_report(new, html)
    assert _snapshot(tmp_path) == before

    monkeypatch.undo()
    page.write_report(new, html)  # and a good write replaces both
    assert provenance.read_provenance(tmp_path / "report.parquet")["games"] == 400
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "report.parquet"]


# ------------------------------------------------------- nonsense that used to pass silently


@pytest.mark.parametrize("args,flag", [
    (["exploit", "--agenda", "steward", "--field", "bogus"], "--field:"),
    (["experiment", "masks", "--field", "steward=bogus", "--results", "{tmp}/r"],
     "--field steward:"),
    (["report", "--against-set", "masks=-1", "--out", "{tmp}/r.html"], "--against-set:"),
    (["sweep", "--players", "9", "--out", "{tmp}/s"], "--players:"),
    (["sweep", "--vary", "masks=1,2", "--baseline", "masks=5", "--out", "{tmp}/s"],
     "baseline: masks=5: not among the values swept (1, 2)"),
    (["simulate", "--seat", "1=hoarder", "--seat", "1=steward"], "--seat 1: given twice"),
    (["simulate", "--out", "{tmp}/a.parquet", "--records", "{tmp}/a.parquet"],
     "the same file as --out"),
])
def test_errors_name_the_flag_typed(capsys, tmp_path, args, flag):
    code, out, err = run(capsys, *[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert code == 2 and len(err.splitlines()) == 1 and flag in err, err
    assert list(tmp_path.iterdir()) == []


def test_the_baseline_may_be_given_as_an_int_for_a_float_value(tmp_path):
    from fbsim.experiments.run.spec import SweepSpec, build_points

    spec = SweepSpec(vary={"bots.fog-grabber.greed": [0.0, 0.5, 1.0]},
                     baseline={"bots.fog-grabber.greed": 1})
    _, points = build_points(spec)
    assert {p.baseline for p in points} == {2}


def test_records_name_the_lineup_entry_of_each_bot_id(capsys, tmp_path):
    import pandas as pd

    from fbsim.experiments.run.provenance import read_provenance

    rec = tmp_path / "r.parquet"
    code, _, err = run(capsys, "simulate", "--games", "300", "-q", "--records", rec,
                       "--seat", "1=tunable:aim=520,greed=0.3")
    assert code == 0, err
    entries = read_provenance(rec)["bot_entries"]
    ids = pd.read_parquet(rec)["bot_1"].unique()
    assert [entries[str(i)] for i in ids] == ["tunable:aim=520,greed=0.3"]
    assert set(entries.values()) >= {"steward", "opportunist", "fog-grabber"}


@pytest.mark.parametrize("cmd", ["sweep", "simulate", "report", "replay", "bench", "rules"])
def test_help_shows_flags_without_a_type(capsys, cmd):
    code, out, _ = run(capsys, cmd, "--help")
    assert code == 0 and out.startswith("Usage: ") and "--help" in out
    assert "<bool>" not in out


def test_a_scheduler_elsewhere_is_warned_about_in_one_line(monkeypatch, capsys):
    import distributed

    from fbsim.experiments.run.cluster import open_client

    class FakeClient:
        def __init__(self, address, timeout):
            self.address = address

        def close(self):
            pass

    monkeypatch.setattr(distributed, "Client", FakeClient)
    for address, warned in (("tcp://127.0.0.1:8786", False), ("localhost:8786", False),
                            ("tcp://10.0.0.5:8786", True)):
        with open_client(address) as (client, _):
            assert client.address == address
        err = capsys.readouterr().err
        assert len(err.splitlines()) == int(warned)
        assert not warned or err.startswith("fbsim: warning: --scheduler tcp://10.0.0.5:8786")


@pytest.mark.parametrize("error", [PermissionError(13, "Permission denied"),
                                   OSError(28, "No space left on device")])
def test_a_failed_write_is_one_line_naming_the_file(capsys, tmp_path, monkeypatch, error):
    import fbsim.experiments.run.simulate as sim

    target = tmp_path / "m.parquet"

    def failing(df, path, provenance):
        raise type(error)(error.errno, error.strerror, str(path))

    monkeypatch.setattr(sim, "write_table", failing)
    code, _, err = run(capsys, "simulate", "--games", "200", "-q", "--out", target)
    assert code == 2
    assert err.splitlines() == [f"fbsim: error: {target}: {error.strerror}"]


def test_a_bad_fbsim_shapes_stops_every_command_before_it_writes(tmp_path, capsys,
                                                                  monkeypatch):
    """FBSIM_SHAPES (which tables get a build for their shape): a bad value is one line on
    stderr and exit 2 before a command starts, so a sweep leaves no folder behind."""
    monkeypatch.setenv("FBSIM_SHAPES", "sometimes")
    out = tmp_path / "out"
    code, _, err = run(capsys, "sweep", "--games", 100, "--out", out, "-q")
    assert code == 2 and not out.exists()
    assert err.strip().splitlines() == [
        "fbsim: error: FBSIM_SHAPES='sometimes': expected one of standard, all, none"]
    monkeypatch.setenv("FBSIM_SHAPES", "None")  # any case, as the other values
    code, _, err = run(capsys, "rules", "--hash")
    assert code == 0, err


@pytest.mark.parametrize("name, value, expected", [
    ("NUMBA_NUM_THREADS", "0", "expected a whole number of threads from 1 to 4096"),
    ("FBSIM_LLVM_TUNING", "yes", "expected 1 (fbsim's compiled code tuned"),
    ("FBSIM_SPECIALISE", "all", "expected one of lineups, default, none"),
    ("NUMBA_NUM_THREADS", "\u0663", "expected a whole number of threads"),
    ("NUMBA_NUM_THREADS", "two", "expected a whole number of threads"),
    ("SOURCE_DATE_EPOCH", "99999999999999999999", "expected whole seconds since 1970"),
    ("SOURCE_DATE_EPOCH", "-5", "expected whole seconds since 1970"),
    ("SOURCE_DATE_EPOCH", "x" * 500, "..."),
])
def test_a_bad_environment_setting_stops_every_command_before_it_writes(
        tmp_path, capsys, monkeypatch, name, value, expected):
    """The environment numba and fbsim read is checked at start: one line naming the variable
    (a long value cut) and exit 2, before a sweep writes its folder."""
    monkeypatch.setenv(name, value)
    out = tmp_path / "out"
    code, _, err = run(capsys, "sweep", "--games", 100, "--out", out, "-q")
    assert code == 2 and not out.exists()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"fbsim: error: {name}=")
    assert expected in lines[0] and len(lines[0]) < 200


def test_a_cache_folder_that_is_a_file_is_refused(tmp_path, capsys, monkeypatch):
    f = tmp_path / "cache"
    f.write_text("not a folder")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(f))
    code, _, err = run(capsys, "rules", "--hash")
    assert code == 2 and "the cache folder is a file" in err


def test_helper_processes_do_not_run_code_from_the_working_folder(tmp_path, monkeypatch):
    """The helpers fbsim starts (the measure's prewarm, the bench's start-up and memory
    probes) run with `python -P`: a numba.py in the folder where fbsim runs is not imported."""
    import subprocess
    import sys

    (tmp_path / "numba.py").write_text("raise SystemExit('the working folder was imported')")
    for path in ("fbsim/bench.py", "fbsim/experiments/run/prewarm.py"):
        text = (Path(__file__).resolve().parents[1] / path).read_text()
        assert "[sys.executable, \"-P\"" in text and "[sys.executable, \"-c\"" not in text \
            and "[sys.executable, \"-m\"" not in text
    r = subprocess.run([sys.executable, "-P", "-c", "import numba"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-c", "import numba"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert "the working folder was imported" in r.stderr  # what -P prevents


def test_a_sweep_whose_first_write_failed_starts_again_in_its_folder(tmp_path, capsys,
                                                                     monkeypatch):
    """A full disk at the sweep's first write leaves no temporary file, and the same command
    then runs in that folder (its lock file and empty points/ are not another dataset)."""
    import errno

    from fbsim.experiments.run import sweep

    def full_disk(self, *a, **k):
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_text", full_disk)
    out = tmp_path / "s"
    code, _, err = run(capsys, "sweep", "--games", 200, "--players", 3, "--out", out, "-q")
    assert code != 0 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not list(out.glob(".*.tmp*"))
    monkeypatch.undo()
    code, _, err = run(capsys, "sweep", "--games", 200, "--players", 3, "--out", out, "-q")
    assert code == 0, err
    assert all((out / f"{t}.parquet").exists() for t in sweep.TABLES)


def test_a_report_may_not_land_in_another_commands_dataset(tmp_path, capsys):
    out = tmp_path / "s"
    code, _, err = run(capsys, "sweep", "--games", 200, "--players", 3, "--out", out, "-q")
    assert code == 0, err
    before = (out / "outcomes.parquet").read_bytes()
    code, _, err = run(capsys, "report", "--games", 10, "--players", 3, "--out",
                       out / "outcomes.html", "-q")
    assert code == 2 and "is another command's dataset (a sweep)" in err
    assert (out / "outcomes.parquet").read_bytes() == before
    (tmp_path / "x.parquet").write_bytes(before)  # a table another command wrote
    code, _, err = run(capsys, "report", "--games", 10, "--players", 3, "--out",
                       tmp_path / "x.html", "-q")
    assert code == 2 and "is not a balance report table" in err


def test_simulate_may_not_write_into_a_dataset_nor_over_another_kind_of_table(tmp_path,
                                                                              capsys):
    out = tmp_path / "s"
    assert run(capsys, "sweep", "--games", 200, "--players", 3, "--out", out, "-q")[0] == 0
    before = _bytes(out)
    for flag in ("--out", "--records"):
        code, _, err = run(capsys, "simulate", "--games", 100, flag, out / "win_rates.parquet",
                           "-q")
        assert code == 2 and f"{flag} " in err and "another command's dataset" in err, err
    assert _bytes(out) == before
    metrics = tmp_path / "m.parquet"
    assert run(capsys, "simulate", "--games", 100, "--out", metrics, "-q")[0] == 0
    kept = metrics.read_bytes()
    code, _, err = run(capsys, "simulate", "--games", 100, "--records", metrics, "-q")
    assert code == 2 and "is not a game records table" in err
    assert metrics.read_bytes() == kept
    assert run(capsys, "simulate", "--games", 100, "--out", metrics, "--seed", 1, "-q")[0] == 0


def test_two_simulations_may_not_write_one_file_at_once(tmp_path, capsys):
    from filelock import FileLock

    records = tmp_path / "r.parquet"
    other = FileLock(str(tmp_path / ".r.parquet.lock"))  # another run holding the file
    with other:
        code, _, err = run(capsys, "simulate", "--games", 100, "--records", records, "-q")
    assert code == 2 and "another fbsim run is writing" in err and not records.exists()
    assert run(capsys, "simulate", "--games", 100, "--records", records, "-q")[0] == 0


def test_a_dataset_table_replaced_by_another_commands_is_named_with_the_way_out(tmp_path,
                                                                                capsys):
    out = tmp_path / "s"
    assert run(capsys, "sweep", "--games", 200, "--players", 3, "--out", out, "-q")[0] == 0
    metrics = tmp_path / "m.parquet"
    assert run(capsys, "simulate", "--games", 100, "--out", metrics, "-q")[0] == 0
    (out / "win_rates.parquet").write_bytes(metrics.read_bytes())
    code, _, err = run(capsys, "plot", out, "--out", tmp_path / "figs")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "win_rates.parquet: not this dataset's win_rates table" in err and "--force" in err


def test_a_damaged_table_names_the_file_and_the_way_out(tmp_path, capsys):
    """A sweep resumed over a damaged point, and `fbsim plot` of a damaged table: one line
    naming the file and what to do, exit 2, nothing else changed."""
    out = tmp_path / "s"
    args = ["sweep", "--games", 200, "--players", "3..4", "--out", out, "-q"]
    assert run(capsys, *args)[0] == 0
    point = next(p for p in sorted((out / "points").iterdir()) if p.is_dir())
    (point / "win_rates.parquet").write_bytes(b"PAR1 not a table")
    (out / "outcomes.parquet").unlink()  # so that the resumed sweep reads its points again
    code, _, err = run(capsys, *args)
    lines = [x for x in err.splitlines() if x.startswith("fbsim: error:")]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err
    assert err.strip().splitlines()[-1] == lines[0]
    assert str(point / "win_rates.parquet") in lines[0] and f"remove {point}" in lines[0]
    import shutil

    shutil.rmtree(point)  # the way out it names: the sweep plays that point anew
    assert run(capsys, *args)[0] == 0
    (out / "seats.parquet").write_bytes(b"garbage")
    code, _, err = run(capsys, "plot", out)
    assert code == 2 and "seats.parquet: damaged" in err and "--force" in err
    assert len(err.strip().splitlines()) == 1


def test_temporary_files_of_killed_runs_are_removed_by_the_next_run(tmp_path, capsys):
    """A killed writer's temporary files (named after its process id) beside the records,
    the report page and in the report's kept table sizes are removed by the next run; a
    live process's are kept."""
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    alive = str(os.getppid())  # (a live process that is not this one)
    rec = tmp_path / "r.parquet"
    stale = [tmp_path / f".r.parquet.tmp{dead}", tmp_path / f".page.html.tmp{dead}",
             tmp_path / f".page.parquet.tmp{dead}", tmp_path / ".page.parts"
             / f".p3-0123.tmp{dead}.npz"]
    live = tmp_path / f".r.parquet.tmp{alive}"
    (tmp_path / ".page.parts").mkdir()
    for p in [*stale, live]:
        p.write_bytes(b"x" * 100)
    code, _, err = run(capsys, "simulate", "--games", 50, "--players", 3, "--records", rec,
                       "-q")
    assert code == 0, err
    code, _, err = run(capsys, "report", "--games", 20, "--players", 3, "--out",
                       tmp_path / "page.html", "-q", "--exploit", "none")
    assert code == 0, err
    assert not any(p.exists() for p in stale) and live.exists()


@pytest.mark.parametrize("args", [
    ["equilibrium", "--players", "3", "--iterations", "1"],
    ["exploit", "--agenda", "steward", "--players", "3", "--budget", "100000"],
    ["tune", "--target", "SPEC"],
], ids=lambda a: a[0])
def test_a_search_may_not_write_into_another_commands_dataset(args, tmp_path, capsys):
    """Refused before anything is played or written: the sweep's files are unchanged."""
    spec = tmp_path / "spec.toml"
    spec.write_text('players = 3\ngames = 200\n[params]\nmasks = [0, 2]\n')
    out = tmp_path / "s"
    assert run(capsys, "sweep", "--games", 200, "--players", 3, "--out", out, "-q")[0] == 0
    before, names = _bytes(out), sorted(p.name for p in out.iterdir())
    code, _, err = run(capsys, *[spec if a == "SPEC" else a for a in args], "--out", out, "-q")
    assert code == 2 and "holds another command's dataset (a sweep)" in err, err
    assert _bytes(out) == before and sorted(p.name for p in out.iterdir()) == names


def test_a_sweep_may_not_write_into_an_equilibrium(tmp_path, capsys):
    out = tmp_path / "eq"
    (out / "p3").mkdir(parents=True)
    (out / "p3" / "state.json").write_text("{}")
    code, _, err = run(capsys, "sweep", "--games", 200, "--players", 3, "--out", out, "-q")
    assert code == 2 and f"--out {out}" in err
    assert sorted(p.name for p in out.iterdir()) == ["p3"]


@pytest.mark.parametrize("value", [" 1700000000", "1700000000 ", "\t1700000000\n"])
def test_source_date_epoch_with_spaces_around_is_the_time_the_provenance_records(monkeypatch,
                                                                                  value):
    """SOURCE_DATE_EPOCH is checked with the spaces around its digits stripped, and read so:
    the provenance's time is the epoch's, not the clock's."""
    from fbsim.environment import check_environment
    from fbsim.experiments.run.provenance import now_iso

    monkeypatch.setenv("SOURCE_DATE_EPOCH", value)
    check_environment()
    assert now_iso() == "2023-11-14T22:13:20+00:00"


def _edit(path: str, value):
    """An edit of the committed rules search's summary: `value` at the dotted `path` (the
    key removed where `value` is DROP)."""

    def edit(doc: dict) -> None:
        *up, last = path.split(".")
        for k in up:
            doc = doc[k]
        if value is DROP:
            del doc[last]
        else:
            doc[last] = value

    return edit


DROP = object()


@pytest.mark.parametrize("summary,key", [
    ('{"players": {"3": {"draw": "seat"}}}', "rules: missing"),  # an equilibrium's
    ("[1, 2]", "(top): expected a table"),
    ('{"rules_hash": "abc", "base_rules_hash": {}, "changes": {}, "players": {}, '
     '"found": false, "trials": 3, "target": {"fair_band": 0.05}}', "rules: missing"),
    ("not json", "cannot be read"),
    (_edit("players.4.agendas.steward.player_win_rate", 2.0),
     "players.4.agendas.steward.player_win_rate: expected a number from 0 to 1"),
    (lambda d: d["players"]["4"]["agendas"]["steward"]["player_win_ci"].reverse(),
     "players.4.agendas.steward.player_win_ci: expected an interval"),
    (_edit("bogus", 1), "bogus: unknown key"),
    (_edit("unchanged", DROP), "unchanged: missing"),
    (_edit("players.4.collapse", DROP), "players.4.collapse: missing"),
    (_edit("players.4.meets", "yes"), "players.4.meets: expected true or false"),
    (_edit("target.gain", "x"), "target.gain: expected a number"),
    (_edit("levers", 5), "levers: expected a list"),
    (_edit("players.4.why", 3), "players.4.why: expected a list of reasons"),
    (_edit("unchanged.sizes", "x"), "unchanged.sizes: expected a table by table size"),
    (_edit("unchanged.sizes.4.player_win_rate.steward", "x"),
     "unchanged.sizes.4.player_win_rate.steward: expected a player's chance"),
    (_edit("players.abc", {}), "players.abc: unknown table size"),
    (_edit("rules_hash.4", DROP), "rules_hash: expected the table sizes of players"),
    (_edit("rules_hash.4", 7), "rules_hash.4: expected a rules hash (text)"),
    (_edit("players.4.collapse.rate", 0.5), "players.4.collapse.rate: expected a value "
     "within its interval"),
])
def test_report_refuses_a_rulebook_summary_of_another_kind_before_any_game(
        capsys, tmp_path, summary, key):
    """`report --rulebook FOLDER` whose summary.json is not a rules search's (another
    command's summary, a damaged one: every key the page reads, of the type it reads) is
    refused in one line naming the file and the key, before any game is played: no page,
    no lock, no kept table sizes."""
    folder = tmp_path / "rb"
    folder.mkdir()
    if callable(summary):  # (the committed search's, edited)
        doc = json.loads((ROOT / "results" / "tune-equilibrium" / "summary.json").read_text())
        summary(doc)
        summary = json.dumps(doc)
    (folder / "summary.json").write_text(summary)
    out = tmp_path / "page" / "r.html"
    out.parent.mkdir()
    code, _, err = run(capsys, "report", "--players", "3", "--games", "100", "--rulebook",
                       folder, "--out", out, "-q")
    assert code == 2 and err.count("\n") == 1, err
    assert f"{folder / 'summary.json'}: {key}" in err, err
    assert list(out.parent.iterdir()) == []


def test_the_rulebook_summary_keys_are_those_the_search_writes():
    from fbsim.experiments.search.rulebook import SUMMARY_KEYS

    doc = json.loads((ROOT / "results" / "tune-equilibrium" / "summary.json").read_text())
    assert sorted(doc) == sorted(SUMMARY_KEYS)


@pytest.mark.parametrize("name, make, says", [
    ("rulebook", lambda f: f.mkdir(), "no summary.json there"),
    ("rulebook", lambda f: None, "no summary.json there"),
    ("ladder", lambda f: f.mkdir(), "no ladder.json there"),
    ("exploit", lambda f: None, "no AGENDA-pN/result.json there"),
    ("exploit", lambda f: (f / "steward-p3").mkdir(parents=True),
     "no AGENDA-pN/result.json there"),
])
def test_a_folder_named_for_a_report_section_must_hold_it(capsys, tmp_path, name, make, says):
    """(a folder named on the command line was skipped when it held nothing of its kind, as
    the default folder is where a checkout has none; `none` turns the section off)"""
    folder = tmp_path / "sw"
    make(folder)
    out = tmp_path / "page" / "r.html"
    out.parent.mkdir()
    code, _, err = run(capsys, "report", "--players", "3", "--games", "100", f"--{name}",
                       folder, "--out", out, "-q")
    assert code == 2 and err.count("\n") == 1, err
    assert f"--{name} {folder}: {says}" in err, err
    assert list(out.parent.iterdir()) == []


@pytest.mark.parametrize("args,message", [
    (["--against-lineup", "steward=hoarder"], "--against-lineup: give it with --against"),
    (["--against", "default", "--against-lineup", "steward=nosuchbot"],
     "--against-lineup steward: unknown bot"),
])
def test_a_refused_report_leaves_no_lock_nor_any_file(capsys, tmp_path, args, message):
    """A report refused for its inputs writes nothing beside its page, its lock file
    included (the inputs are checked before the lock is taken)."""
    out = tmp_path / "page" / "r.html"
    out.parent.mkdir()
    code, _, err = run(capsys, "report", "--players", "3", "--games", "100", "--out", out,
                       *args, "-q")
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert list(out.parent.iterdir()) == []


@pytest.mark.parametrize("args", [
    ["sweep", "--games", "100"],
    ["plot", str(ROOT / "results" / "baseline")],
    ["equilibrium", "--players", "3"],
    ["exploit", "--players", "3", "--agenda", "steward"],
    ["exploit", "--oracle", "search", "--players", "3", "--field", "steward=steward"],
    ["ladder", "--players", "3", "--field", "steward=steward"],
    ["tune", "--target", str(ROOT / "results" / "tune" / "spec.toml")],
], ids=lambda a: " ".join(a[:3]) if a[0] != "plot" else "plot")
def test_an_out_folder_below_a_file_is_one_line_naming_out_and_the_file(capsys, tmp_path,
                                                                         args):
    """--out below a plain file cannot be made: one line naming --out and the file in the
    way, exit 2, before anything is played or written (the file left as it was)."""
    plain = tmp_path / "plain"
    plain.write_text("mine\n")
    code, _, err = run(capsys, *args, "--out", plain / "sub" / "deeper")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"--out {plain / 'sub' / 'deeper'}: {plain} is a file, not a folder" in err, err
    assert plain.read_text() == "mine\n" and sorted(tmp_path.iterdir()) == [plain]


@pytest.mark.parametrize("name,blank", [("SOURCE_DATE_EPOCH", ""), ("SOURCE_DATE_EPOCH", "  "),
                                        ("NUMBA_NUM_THREADS", " "), ("NUMBA_NUM_THREADS", "")])
def test_a_blank_variable_is_unset_for_fbsim_and_the_libraries_it_loads(name, blank):
    """A blank SOURCE_DATE_EPOCH or NUMBA_NUM_THREADS means unset to fbsim, and to numpy
    and numba, which read them after fbsim starts (numpy's f2py took an empty epoch for a
    number and crashed; numba warned with a traceback): the command runs, quietly."""
    env = {**os.environ, name: blank}
    p = subprocess.run([sys.executable, "-m", "fbsim.cli", "simulate", "--players", "3",
                        "--games", "200", "-q"], env=env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr and "Warning" not in p.stderr, p.stderr


def test_a_screenshot_that_cannot_be_written_is_refused_before_any_game(capsys, tmp_path):
    """--screenshot at a link to nothing: refused before the page, its table or any game
    (the screenshot is written last, and failed after the rest, naming no reason)."""
    (tmp_path / "dang.png").symlink_to(tmp_path / "missing" / "x.png")
    code, out, err = run(capsys, "report", "--players", "3", "--games", "100", "--out",
                         tmp_path / "r.html", "--screenshot", tmp_path / "dang.png", "-q")
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert f"--screenshot {tmp_path / 'dang.png'}: a link to nothing" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dang.png"]


def test_a_screenshot_folder_that_refuses_files_is_named_with_the_reason(tmp_path,
                                                                         monkeypatch):
    import errno
    import tempfile

    from fbsim.errors import UsageError
    from fbsim.experiments.run.options import check_writable

    def refuses(*a, **kw):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "NamedTemporaryFile", refuses)
    with pytest.raises(UsageError, match=r"^--screenshot .*s\.png: cannot be written "
                                         r"\(Read-only file system\)"):
        check_writable(tmp_path / "s.png", "--screenshot")
    monkeypatch.undo()
    check_writable(tmp_path / "s.png", "--screenshot")  # (a folder that takes files)
    assert list(tmp_path.iterdir()) == []  # (the probe removed again)
