"""Flags and environment variables that used to be ignored or to end in a traceback: a
malformed --scheduler, bad NUMBA_THREADING_LAYER, NUMBA_DISABLE_JIT and FBSIM_CHECKED values,
and flags given without the flag they only work with. Each is one line naming the flag or
variable, exit 2, and nothing written; a flag left at its default is never refused."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest

from fbsim.cli import main
from fbsim.errors import UsageError


class Ran(Exception):
    """Raised by a stand-in for the work a command would do: the flags were accepted."""


def run(capsys, *args):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def one_error(err: str, start: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"fbsim: error: {start}"), err
    assert "Traceback" not in err
    return lines[0]


# --- --scheduler (SC01, BE04): every command that takes it --------------------------------

SCHEDULER_COMMANDS = {
    "sweep": ["sweep", "--vary", "masks=1,2", "--players", "4", "--games", "200", "-q",
              "--out", "o"],
    "bench": ["bench", "--players", "4", "--ref-games", "1", "--repeats", "1", "--no-compile",
              "--openspiel-games", "1", "--games", "100"],
    "experiment": ["experiment", "masks", "--games", "200", "--results", "r", "-q"],
    "exploit": ["exploit", "--agenda", "steward", "--players", "4", "--budget", "800",
                "--generations", "1", "--population", "2", "--confirm-games", "200",
                "--out", "o", "-q"],
    "equilibrium": ["equilibrium", "--players", "3", "--iterations", "1", "--out", "o", "-q"],
    "tune": ["tune", "--out", "o", "-q"],
    "tune --equilibrium": ["tune", "--equilibrium", "--out", "o", "-q"],
}


@pytest.mark.parametrize("cmd", list(SCHEDULER_COMMANDS))
def test_a_malformed_scheduler_is_refused_before_anything_is_written(cmd, capsys, tmp_path,
                                                                   monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *SCHEDULER_COMMANDS[cmd], "--scheduler", "notaurl")
    assert code == 2 and out == ""
    line = one_error(err, "--scheduler notaurl: not a scheduler's address")
    assert "missing port number" in line and "tcp://HOST:PORT" in line
    assert list(tmp_path.iterdir()) == []  # no folder, no lock


@pytest.mark.parametrize("address", ["notaurl", "tcp://host", "tcp://host:port",
                                     "foo://host:8786", "tcp://::1:8786", "tcp://host:0",
                                     "tcp://host:65536", "tcp://host:8786/path", "",
                                     "inproc://x"])
def test_check_scheduler_refuses_what_dask_cannot_connect_to(address):
    from fbsim.experiments.run.cluster import check_scheduler

    with pytest.raises(UsageError) as e:
        check_scheduler(address)
    message = str(e.value)
    assert message.startswith("--scheduler ") and "\n" not in message


@pytest.mark.parametrize("address", ["tcp://10.0.0.5:8786", "localhost:8786",
                                     "tcp://[::1]:8786", "tls://host:8786", "ws://host:1"])
def test_check_scheduler_accepts_well_formed_addresses(address):
    from fbsim.experiments.run.cluster import check_scheduler

    assert check_scheduler(address) == address


def test_open_client_refuses_a_malformed_scheduler_before_connecting(monkeypatch):
    import distributed

    from fbsim.experiments.run.cluster import open_client

    def never(*args, **kwargs):
        raise AssertionError("connected")

    monkeypatch.setattr(distributed, "Client", never)
    with pytest.raises(UsageError, match="^--scheduler notaurl: not a scheduler's address"):
        with open_client("notaurl"):
            pass


# --- the environment (E23, E15, E14) -------------------------------------------------------

def _simulate(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    """`fbsim simulate --out s.parquet` in a fresh process (numba reads its variables when it
    is imported, and starts its threading layer once per process)."""
    return subprocess.run([sys.executable, "-P", "-m", "fbsim.cli", "simulate", "--games",
                           "200", "--players", "3", "-q", "--out", "s.parquet"],
                          env={**os.environ, **env}, cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.parametrize("name, value, expected", [
    ("NUMBA_THREADING_LAYER", "nosuch", "expected one of default, safe, forksafe, threadsafe, "
                                        "tbb, omp, workqueue"),
    ("NUMBA_DISABLE_JIT", "xyz", "expected 0 (compiled, the default) or 1"),
    ("NUMBA_OPT", "high", "expected an optimisation level: 0, 1, 2, 3, max"),
    ("NUMBA_BOUNDSCHECK", "maybe", "expected 0 (no bounds checks) or 1"),
    ("NUMBA_OPT", "MAX", "expected an optimisation level"),  # (numba reads it as given)
    ("NUMBA_OPT", " max ", "expected an optimisation level"),
    ("NUMBA_DISABLE_JIT", "2", "expected 0 (compiled, the default) or 1"),
    ("MPLBACKEND", "nosuch", "not a matplotlib backend"),
])
def test_a_bad_numba_variable_is_one_line_and_leaves_no_lock(tmp_path, name, value, expected):
    p = _simulate(tmp_path, **{name: value})
    assert p.returncode == 2, p.stderr[-3000:]
    line = one_error(p.stderr, f"{name}={value!r}: ")
    assert expected in line and "Warning" not in p.stderr
    assert list(tmp_path.iterdir()) == []  # no table, no .s.parquet.lock


def _checked(env: dict[str, str]) -> None:
    from fbsim.environment import check_environment

    with mock.patch.dict("os.environ", env):
        check_environment()


@pytest.mark.parametrize("value", ["default", "safe", "forksafe", "threadsafe", "tbb", "omp",
                                   "workqueue", "OMP", "WorkQueue"])
def test_every_threading_layer_numba_knows_is_accepted_where_it_loads(value):
    from fbsim.environment import threading_layer_loads

    if threading_layer_loads(value.lower()):
        _checked({"NUMBA_THREADING_LAYER": value})
    else:
        with pytest.raises(UsageError, match="^NUMBA_THREADING_LAYER=.*can be loaded here"):
            _checked({"NUMBA_THREADING_LAYER": value})


@pytest.mark.parametrize("layer", ["tbb", "omp", "safe", "threadsafe", "forksafe"])
def test_whether_a_threading_layer_loads_is_what_numba_finds(layer):
    """The check's answer is numba's own: a parallel function run under the layer either
    runs or fails to find a layer."""
    from fbsim.environment import threading_layer_loads

    code = ("import numba\n@numba.njit(parallel=True)\ndef f(n):\n    s = 0\n"
            "    for i in numba.prange(n):\n        s += i\n    return s\n"
            "try:\n    f(4)\n    print('ran')\nexcept ValueError:\n    print('no layer')\n")
    env = {**os.environ, "NUMBA_THREADING_LAYER": layer}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert p.stdout.strip() == ("ran" if threading_layer_loads(layer) else "no layer"), p.stderr


def test_a_threading_layer_whose_library_is_missing_is_refused_before_any_effect(tmp_path):
    """NUMBA_THREADING_LAYER=tbb where TBB is not installed (made so here by hiding numba's
    tbb module): refused in one line before any table or lock is written."""
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(
        "import sys\nsys.modules['numba.np.ufunc.tbbpool'] = None\n")
    out = tmp_path / "out"
    out.mkdir()
    p = _simulate(out, NUMBA_THREADING_LAYER="tbb", PYTHONPATH=str(hide))
    assert p.returncode == 2, p.stderr[-3000:]
    line = one_error(p.stderr, "NUMBA_THREADING_LAYER='tbb': ")
    assert "can be loaded here" in line and "Traceback" not in p.stderr
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("value", ["nosuch", " omp", "omp,tbb", "1", "none"])
def test_other_threading_layers_are_refused(value):
    with pytest.raises(UsageError, match="^NUMBA_THREADING_LAYER="):
        _checked({"NUMBA_THREADING_LAYER": value})


@pytest.mark.parametrize("value", ["0", "1", " 1 ", " 0"])
def test_numba_disable_jit_takes_0_or_1(value):
    _checked({"NUMBA_DISABLE_JIT": value})


@pytest.mark.parametrize("value", ["xyz", "1.0", "true", "1e3", "\u0661", "--1", "1 0", "-1",
                                   "+2", "10"])
def test_numba_disable_jit_refuses_anything_else(value):
    with pytest.raises(UsageError, match="^NUMBA_DISABLE_JIT="):
        _checked({"NUMBA_DISABLE_JIT": value})


@pytest.mark.parametrize("name, value", [("NUMBA_OPT", "3"), ("NUMBA_OPT", "max"),
                                         ("NUMBA_BOUNDSCHECK", "1"), ("MPLBACKEND", "agg"),
                                         ("MPLBACKEND", "Agg")])
def test_the_values_numba_and_matplotlib_know_are_accepted(name, value):
    _checked({name: value})


@pytest.mark.parametrize("value", ["", "rel/dir"])
def test_a_blank_or_relative_xdg_cache_home_is_ignored_as_the_spec_says(tmp_path, value):
    """(the XDG base directory spec: such a value is invalid; the cache goes to ~/.cache, and
    nothing is made in the folder the command runs in)"""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    p = subprocess.run([sys.executable, "-P", "-c", "import fbsim, os; "
                        "print(os.environ['NUMBA_CACHE_DIR'])"],
                       env={**env, "XDG_CACHE_HOME": value}, cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(str(Path.home() / ".cache" / "fbsim")), p.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["NUMBA_DISABLE_JIT", "NUMBA_THREADING_LAYER", "NUMBA_OPT",
                                  "NUMBA_BOUNDSCHECK", "MPLBACKEND"])
@pytest.mark.parametrize("blank", ["", "  "])
def test_a_blank_numba_variable_is_unset(name, blank):
    """(numba would warn with a traceback on a blank NUMBA_DISABLE_JIT, and fail on a blank
    threading layer: blank means unset, as for NUMBA_NUM_THREADS)"""
    from fbsim.environment import check_environment

    with mock.patch.dict("os.environ", {name: blank}):
        check_environment()
        assert name not in os.environ


def test_a_bad_fbsim_checked_is_refused_before_anything_is_written(capsys, tmp_path,
                                                                   monkeypatch):
    monkeypatch.setenv("FBSIM_CHECKED", "banana")
    out = tmp_path / "s.parquet"
    code, stdout, err = run(capsys, "simulate", "--games", "200", "-q", "--out", out)
    assert code == 2 and stdout == ""
    one_error(err, "FBSIM_CHECKED='banana': expected 1 (every run plays the checked build) "
                   "or 0")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value, checked", [("", False), ("  ", False), ("0", False),
                                            ("1", True), (" 1 ", True)])
def test_fbsim_checked_takes_0_or_1_and_blank_is_unset(value, checked, monkeypatch):
    from fbsim.kernel.settings import checked_default

    monkeypatch.setenv("FBSIM_CHECKED", value)
    assert checked_default() is checked
    monkeypatch.delenv("FBSIM_CHECKED")
    assert checked_default() is False


@pytest.mark.parametrize("value", ["banana", "yes", "2", "true", "00"])
def test_fbsim_checked_refuses_other_values(value):
    with pytest.raises(UsageError, match="^FBSIM_CHECKED="):
        _checked({"FBSIM_CHECKED": value})


# --- flags that only work with another (RY09, CB01, CB02, CB03, BE05) ----------------------

def test_replay_events_only_with_json(capsys):
    code, out, err = run(capsys, "replay", "--events")
    assert code == 2 and out == ""
    one_error(err, "--events: only with --json")
    code, out, err = run(capsys, "replay", "--json", "--events")
    assert code == 0 and '"events"' in out, err


def test_replay_rollouts_only_with_searcher(capsys, monkeypatch):
    code, out, err = run(capsys, "replay", "--rollouts", "8")
    assert code == 2 and out == ""
    one_error(err, "--rollouts: only with --searcher")
    code, out, err = run(capsys, "replay")  # (the default is no refusal)
    assert code == 0 and out, err

    import fbsim.experiments.search.searcher as searcher

    def fake(rules, lineup, knobs, seed, game, seat):
        raise Ran(knobs.rollouts)

    monkeypatch.setattr(searcher, "replay_searched", fake)
    for extra, rollouts in (([], searcher.ROLLOUTS), (["--rollouts", "8"], 8)):
        with pytest.raises(Ran) as ran:
            main(["replay", "--searcher", "0", *extra])
        assert ran.value.args == (rollouts,)


def _fake_sweep(monkeypatch):
    import fbsim.experiments.run.sweep as sweep

    def fake(spec, out, **kwargs):
        raise Ran(spec)

    monkeypatch.setattr(sweep, "run_sweep", fake)


def test_sweep_max_games_only_with_ci_width(capsys, tmp_path, monkeypatch):
    _fake_sweep(monkeypatch)
    out = tmp_path / "o"
    base = ["sweep", "--vary", "masks=1,2", "--players", "4", "-q", "--out", str(out)]
    code, stdout, err = run(capsys, *base, "--games", "200", "--max-games", "1000")
    assert code == 2 and stdout == ""
    one_error(err, "--max-games: only with --ci-width")
    assert not out.exists()
    with pytest.raises(Ran) as ran:
        main([*base, "--ci-width", "0.1", "--max-games", "1000"])
    assert ran.value.args[0].max_games == 1000


def test_sweep_min_games_only_with_ci_width(capsys, tmp_path, monkeypatch):
    _fake_sweep(monkeypatch)
    out = tmp_path / "o"
    base = ["sweep", "--vary", "masks=1,2", "--players", "4", "-q", "--out", str(out)]
    code, stdout, err = run(capsys, *base, "--games", "200", "--min-games", "100")
    assert code == 2 and stdout == ""
    one_error(err, "--min-games: only with --ci-width")
    assert not out.exists()
    with pytest.raises(Ran) as ran:  # with --ci-width, or a spec file's ci_width
        main([*base, "--ci-width", "0.1", "--min-games", "100"])
    assert ran.value.args[0].min_games == 100
    spec = tmp_path / "spec.toml"
    spec.write_text('players = 4\nci_width = 0.1\n[vary]\nmasks = "1..2"\n')
    with pytest.raises(Ran) as ran:
        main(["sweep", str(spec), "-q", "--out", str(out), "--min-games", "300"])
    assert (ran.value.args[0].ci_width, ran.value.args[0].min_games) == (0.1, 300)
    with pytest.raises(Ran) as ran:  # (left out: no refusal, the default count)
        main([*base, "--games", "200"])
    assert ran.value.args[0].ci_width is None


EXPLOIT = ["exploit", "--agenda", "steward", "--players", "4", "--budget", "800",
           "--generations", "1", "--population", "2", "--confirm-games", "200", "-q"]
SEARCH = ["exploit", "--agenda", "steward", "--players", "4", "-q", "--oracle", "search"]


def test_exploit_rollouts_only_with_the_search_oracle(capsys, tmp_path, monkeypatch):
    out = tmp_path / "o"
    for oracle in ([], ["--oracle", "planner"]):
        code, stdout, err = run(capsys, *EXPLOIT, *oracle, "--rollouts", "8", "--out", out)
        assert code == 2 and stdout == ""
        one_error(err, "--rollouts: only with --oracle search")
        assert not out.exists()

    import fbsim.cli as cli
    import fbsim.experiments.search.exploit as exploit
    from fbsim.experiments.search.searcher import ROLLOUTS

    def fake_exploit(agenda, players, **kwargs):
        raise Ran(agenda)

    monkeypatch.setattr(exploit, "exploit", fake_exploit)
    with pytest.raises(Ran):  # the planner oracle, --rollouts left out
        main([*EXPLOIT, "--out", str(out)])

    def fake_search(*args):
        raise Ran(args[9].rollouts)

    monkeypatch.setattr(cli, "_exploit_search", fake_search)
    for extra, rollouts in (([], ROLLOUTS), (["--rollouts", "8"], 8)):
        with pytest.raises(Ran) as ran:
            main([*SEARCH, "--out", str(out), *extra])
        assert ran.value.args == (rollouts,)


@pytest.mark.parametrize("given, named", [
    (["--seat-games", "10"], "--seat-games"), (["--margin", "1"], "--margin"),
    (["--step", "1"], "--step"), (["--masked"], "--masked"),
    (["--no-beliefs"], "--beliefs/--no-beliefs"), (["--beliefs"], "--beliefs/--no-beliefs")])
def test_exploit_searcher_knobs_only_with_the_search_oracle(capsys, tmp_path, monkeypatch,
                                                            given, named):
    """Every knob of the searcher (its help says "search:") given to the planner oracle is
    refused, not silently dropped; with --oracle search it reaches the searcher."""
    out = tmp_path / "o"
    code, stdout, err = run(capsys, *EXPLOIT, *given, "--out", out)
    assert code == 2 and stdout == ""
    one_error(err, f"{named}: only with --oracle search")
    assert not out.exists()

    import fbsim.cli as cli

    def fake_search(*args):
        raise Ran(args[9], args[10])

    monkeypatch.setattr(cli, "_exploit_search", fake_search)
    with pytest.raises(Ran):
        main([*SEARCH, "--out", str(out), *given])


def test_bench_json_and_markdown_are_one_or_the_other(capsys, monkeypatch):
    import fbsim.bench as bench

    def fake(*args, **kwargs):
        raise Ran()

    monkeypatch.setattr(bench, "run_bench", fake)
    args = ["bench", "--players", "4", "--games", "100", "--no-compile", "--repeats", "1"]
    code, out, err = run(capsys, *args, "--json", "--markdown")
    assert code == 2 and out == ""
    one_error(err, "--json and --markdown: give one")
    for one in (["--json"], ["--markdown"], []):
        with pytest.raises(Ran):
            main([*args, *one])


@pytest.mark.parametrize("cmd, text", [("replay", "(default 64)"), ("exploit", "default 64")])
def test_the_rollouts_default_is_still_documented(capsys, cmd, text):
    code, out, _ = run(capsys, cmd, "--help")
    assert code == 0 and text in " ".join(out.split())


@pytest.mark.parametrize("args, says", [
    (["equilibrium", "--players", "3", "--distill-share", "0.5"],
     "--distill-share: only with --distill"),
    (["equilibrium", "--players", "3", "--searcher-games", "0", "--searcher-rollouts", "4"],
     "--searcher-rollouts: only with the searcher's audit"),
    (["equilibrium", "--players", "3", "--stability", "2"], "--stability: only with --draw agenda"),
    (["exploit", "--oracle", "search", "--agenda", "steward", "--players", "3", "--budget",
      "800"], "--budget: only with --oracle planner"),
    (["exploit", "--oracle", "search", "--agenda", "steward", "--generations", "3"],
     "--generations: only with --oracle planner"),
    (["exploit", "--oracle", "search", "--agenda", "steward", "--players", "3", "--force"],
     "--force: only with --oracle planner"),
    (["exploit", "--all", "--agenda", "steward"], "--agenda: not with --all"),
    (["sweep", "--vary", "masks=1,2", "--players", "4", "--games", "200", "--ci-width", "0.4"],
     "--games: not with --ci-width"),
    (["sweep", "--vary", "masks=1,2", "--players", "4", "--task-games", "10"],
     "--task-games: only on a cluster"),
    (["bench", "--decisions", "--workers", "1"], "--workers: not with --decisions"),
])
def test_a_flag_that_would_do_nothing_in_its_combination_is_refused(capsys, tmp_path, args,
                                                                    says):
    out = tmp_path / "o"
    extra = [] if args[0] == "bench" else ["--out", str(out)]
    code, stdout, err = run(capsys, *args, *extra)
    assert code == 2 and stdout == ""
    one_error(err, says)
    assert not out.exists()


@pytest.mark.parametrize("flag", ["--list", "--all"])
def test_experiment_names_with_list_or_all_are_refused(capsys, tmp_path, flag):
    code, stdout, err = run(capsys, "experiment", flag, "masks", "--results", tmp_path / "r")
    assert code == 2 and stdout == ""
    one_error(err, f"{flag}: give it or experiment names, not both")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("text", ["1_000_", "_1000", "1__000", "1e", "1,000", "0x10"])
def test_a_games_count_with_stray_separators_is_refused(text):
    from fbsim.experiments.run.options import games_count

    with pytest.raises(UsageError, match="^--games: expected a number of games"):
        games_count(text)


@pytest.mark.parametrize("text, games", [("1_000_000", 1_000_000), ("1e6", 1_000_000),
                                         ("2.5e5", 250_000), (" 200 ", 200)])
def test_a_games_count_as_python_writes_numbers_is_read(text, games):
    from fbsim.experiments.run.options import games_count

    assert games_count(text) == games


@pytest.mark.parametrize("vary", ["masks=1,,2", "masks=1,2,", "masks=,1"])
def test_an_empty_item_in_a_swept_list_is_refused(capsys, tmp_path, vary):
    out = tmp_path / "o"
    code, stdout, err = run(capsys, "sweep", "--vary", vary, "--players", "4", "--games", "200",
                            "--out", out)
    assert code == 2 and stdout == ""
    one_error(err, "masks: an empty value in")
    assert not out.exists()


def test_a_spec_with_the_same_point_twice_is_refused(capsys, tmp_path):
    """(as a value repeated under [vary] is: the two would play the same games twice; the
    searches' own points, built apart, may repeat a candidate)"""
    spec = tmp_path / "sp.toml"
    spec.write_text("games = 200\nplayers = [4]\n[[points]]\nmasks = 1\n[[points]]\nmasks = 2\n"
                    "[[points]]\nmasks = 1\n")
    out = tmp_path / "o"
    code, stdout, err = run(capsys, "sweep", spec, "-q", "--out", out)
    assert code == 2 and stdout == ""
    one_error(err, f"sweep spec {spec}: points[2]: the same point as points[0]")
    assert not out.exists()


@pytest.mark.parametrize("text, says", [
    ("games = 200\nplayers = [4]\n[set]\nmasks = 2\n[vary]\nmasks = [1, 2]\n",
     "set.masks: also swept under [vary]"),
    ("players = [4]\nmin_games = 100\n[vary]\nmasks = [1, 2]\n",
     "min_games: only with ci_width"),
    ("players = [4]\nmax_games = 100000\n[vary]\nmasks = [1, 2]\n",
     "max_games: only with ci_width"),
])
def test_a_spec_key_that_would_do_nothing_is_refused(capsys, tmp_path, text, says):
    """(as the flags that would do nothing are)"""
    spec = tmp_path / "sp.toml"
    spec.write_text(text)
    out = tmp_path / "o"
    code, stdout, err = run(capsys, "sweep", spec, "-q", "--out", out)
    assert code == 2 and stdout == ""
    one_error(err, f"sweep spec {spec}: {says}")
    assert not out.exists()
