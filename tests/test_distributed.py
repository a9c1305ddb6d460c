"""Sweeps on a Dask cluster (a local one of 2 worker processes): the same tables as a local
run, also when a worker dies mid-sweep, and exact merging of tasks split across a point."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from fbsim.experiments.metrics.tables import sweep_tables
from fbsim.experiments.metrics.tally import Tally
from fbsim.experiments.run.cluster import open_client
from fbsim.experiments.run.runner import Task, count_task
from fbsim.experiments.run.spec import SweepSpec, build_points
from fbsim.experiments.run.sweep import TABLES, run_sweep, same_tables


@pytest.fixture(autouse=True)
def _fixed_time(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")


@pytest.fixture(scope="module")
def cluster():
    with open_client(workers=2) as (client, threads):
        yield client, threads


def _bytes(out):
    return {t: (out / f"{t}.parquet").read_bytes() for t in TABLES}


def _spec(**kw):
    base = {"games": 9000, "seed": 21, "players": [3, 4], "vary": {"masks": [1, 2, 3]}}
    base.update(kw)
    return SweepSpec(**base)


def test_tasks_split_across_a_point_merge_exactly():
    spec = SweepSpec(games=5000, seed=8, players=[4], vary={"masks": [2, 3]})
    _, (b, p) = build_points(spec)
    whole = count_task(Task(8, 0, 5000, b, (b, p)))
    parts = [count_task(Task(8, a, n, b, (b, p))) for a, n in ((0, 1234), (1234, 3000),
                                                               (4234, 766))]
    for idx in (0, 1):
        merged = Tally.for_rules(b.rules, paired=True)
        for part in reversed(parts):  # in any order
            merged.merge(part[idx])
        w, o, s = sweep_tables(whole[idx], p.rules if idx else b.rules, {}, idx, 0)
        w2, o2, s2 = sweep_tables(merged, p.rules if idx else b.rules, {}, idx, 0)
        assert w.equals(w2) and o.equals(o2) and s.equals(s2)


def test_cluster_gives_the_bytes_of_a_local_run(tmp_path, cluster):
    client, threads = cluster
    spec = _spec()
    run_sweep(spec, tmp_path / "local")
    res = run_sweep(spec, tmp_path / "dask", client=client, threads=threads, task_games=2000)
    assert res.points_run == 6 and res.games_played == 6 * 9000
    # every worker got the plugin that warms its kernel when it joins
    plugins = client.run(lambda dask_worker: sorted(dask_worker.plugins))
    assert len(plugins) == 2 and all("fbsim-warm-kernel" in p for p in plugins.values())
    assert _bytes(tmp_path / "local") == _bytes(tmp_path / "dask")
    # one point split into many small tasks (not aligned to the kernel's blocks)
    one = SweepSpec(games=7000, seed=3, players=[5])
    run_sweep(one, tmp_path / "one-local")
    run_sweep(one, tmp_path / "one-dask", client=client, threads=threads, task_games=611)
    assert _bytes(tmp_path / "one-local") == _bytes(tmp_path / "one-dask")


def test_ci_width_on_the_cluster_stops_where_a_local_run_does(tmp_path, cluster):
    client, threads = cluster
    spec = SweepSpec(players=[3], vary={"masks": [1, 3]}, ci_width=0.03, min_games=400,
                     max_games=100_000, seed=2)
    run_sweep(spec, tmp_path / "local")
    run_sweep(spec, tmp_path / "dask", client=client, threads=threads, task_games=500)
    assert _bytes(tmp_path / "local") == _bytes(tmp_path / "dask")


def test_resume_on_the_cluster_skips_finished_points(tmp_path, cluster):
    client, threads = cluster
    spec = _spec(games=3000)
    run_sweep(spec, tmp_path / "s")
    want = _bytes(tmp_path / "s")
    import shutil

    shutil.rmtree(tmp_path / "s" / "points" / "0004")
    for t in TABLES:
        (tmp_path / "s" / f"{t}.parquet").unlink()
    res = run_sweep(spec, tmp_path / "s", client=client, threads=threads)
    assert (res.points_run, res.points_skipped) == (1, 5)
    assert _bytes(tmp_path / "s") == want


@pytest.mark.slow
def test_a_worker_killed_mid_sweep_changes_nothing(tmp_path, cluster):
    client, threads = cluster
    spec = _spec(games=40_000)
    run_sweep(spec, tmp_path / "local")
    pids = client.run(os.getpid)
    victim = sorted(pids.values())[0]
    finished = threading.Event()
    killed = {}

    def kill_soon():
        # once the first points are written (the 3-player ones), mid-way through the rest
        deadline = time.time() + 300
        while time.time() < deadline and not (tmp_path / "dask" / "points" / "0000").exists():
            time.sleep(0.01)
        killed["during"] = not finished.is_set() and not (
            tmp_path / "dask" / "points" / "0005").exists()
        os.kill(victim, signal.SIGKILL)

    t = threading.Thread(target=kill_soon)
    t.start()
    res = run_sweep(spec, tmp_path / "dask", client=client, threads=threads, task_games=4000)
    finished.set()
    t.join()
    assert killed["during"], "the sweep ended before the worker was killed"
    assert res.games_played == 6 * 40_000  # each task counted once
    assert _bytes(tmp_path / "local") == _bytes(tmp_path / "dask")
    # the nanny restarted the worker: a new process took its place
    client.wait_for_workers(2, timeout=60)
    assert victim not in client.run(os.getpid).values()


def test_same_tables_ignores_only_the_time(tmp_path, monkeypatch):
    spec = _spec(games=500, players=[3])
    run_sweep(spec, tmp_path / "a")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1800000000")
    run_sweep(spec, tmp_path / "b")
    assert _bytes(tmp_path / "a") != _bytes(tmp_path / "b")
    assert same_tables(tmp_path / "a", tmp_path / "b")
    run_sweep(_spec(games=501, players=[3]), tmp_path / "c")
    assert not same_tables(tmp_path / "a", tmp_path / "c")


def test_single_seat_deviations_on_the_cluster_equal_a_local_run(cluster):
    """The single-seat searches' evaluations (the field, seat and team deviants, every seat's
    range) give the same counts on the cluster, split into small tasks, as in this process."""
    from fbsim.experiments.search.deviation import TEAM, Deviant, evaluate
    from fbsim.lineup import Entry, Lineup
    from fbsim.rules import load_rules

    client, _ = cluster
    rules = load_rules(players=4)
    field = Lineup()
    devs = [Deviant("steward", Entry.make("planner", {"aim": 470, "chips": 6})),
            Deviant("opportunist", Entry.make("planner", {"aim": 600}), TEAM)]
    local = evaluate(rules, field, devs, 5, 700)
    remote = evaluate(rules, field, devs, 5, 700, client, task_games=300)
    assert remote.field == local.field
    assert remote.gains == local.gains
    assert remote.games == local.games


def test_a_rules_search_trial_on_the_cluster_equals_a_local_run(cluster, tmp_path):
    """`fbsim tune --equilibrium`: a candidate's warm-started equilibrium, solved through the
    cluster, scores as the same trial solved in this process."""
    import tomllib

    from fbsim.experiments.search.rulebook import play_trial, rulebook_spec_from_dict
    from tests.test_rulebook import spec_text

    client, _ = cluster
    spec = rulebook_spec_from_dict(tomllib.loads(spec_text()), "spec")
    params = {"dial.collapse": 700, "accusation.rounds": (2, 5, 7)}
    local = play_trial(spec, tmp_path / "local", 1, params)
    remote = play_trial(spec, tmp_path / "remote", 1, params, client)
    assert remote == local and local["games"] > 0
    assert (tmp_path / "remote" / "trials" / "0001" / "p3.toml").read_bytes() == (
        tmp_path / "local" / "trials" / "0001" / "p3.toml").read_bytes()


def test_the_local_cluster_accepts_only_its_own_client(cluster):
    """--workers: the local cluster speaks TLS with a certificate of its own, so another
    local client (plain tcp, or TLS without the certificate) cannot run code through it."""
    from distributed import Client

    client, _ = cluster
    address = client.scheduler.address
    assert address.startswith("tls://127.0.0.1:")
    for other in (address.replace("tls://", "tcp://"), address):
        with pytest.raises((OSError, TypeError, TimeoutError, ValueError)):
            Client(other, timeout=3)
