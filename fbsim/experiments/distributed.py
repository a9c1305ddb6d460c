"""Playing a sweep's points: in-process, or on a Dask cluster with the same tables, sooner.

The work is split into tasks of (a few points sharing a baseline, a range of games). A task
plays the baseline's games of its range once and each of its points' games, and returns one
`Tally` per point: integer counts only, a few kilobytes. The client adds the tallies of each
point's ranges (exact integer sums, in any order), so the tables are byte-identical to a local
run whatever the number of workers or the task size. A task is a pure function of its
arguments: when a worker dies, Dask runs its tasks again elsewhere and each result is counted
once. Each finished point is written at once, so an interrupted sweep resumes by skipping
finished points. A local sweep runs the very same tasks in this process, one after the
other, so local and cluster runs agree by construction.

Workers need fbsim installed (the same version as the client); `WarmKernel` loads (or
compiles) the kernel when a worker joins, not in its first task. dask.distributed is imported
only when a cluster is used.
"""

from __future__ import annotations

import math
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass

from fbsim.experiments.spec import Point, SweepSpec
from fbsim.experiments.tally import Tally, compact

POINTS_PER_TASK = 8
_KERNEL_LOCK = threading.Lock()  # one kernel call at a time per worker process


def warm() -> str:
    """Load (or compile) the kernel in this process; returns the fbsim version."""
    from fbsim import __version__
    from fbsim.kernel import simulate
    from fbsim.rules import load_rules

    with _KERNEL_LOCK:
        simulate(load_rules(), n_games=1, records=True)
    return __version__


@dataclass(frozen=True)
class Task:
    seed: int
    first: int
    n: int
    baseline: Point
    points: tuple[Point, ...]  # the points (possibly including the baseline) to count
    threads: int | None = None

    @property
    def games(self) -> int:
        return self.n * len(self.points)


def tally_range(task: Task, progress=None) -> dict[int, Tally]:
    """Play games [first, first + n) of every point of the task (and of their baseline).
    `progress.advance(games)` is called after each block (in-process runs)."""
    from fbsim.experiments.sweep import BLOCK, _play

    out = {p.index: Tally() for p in task.points}
    with _KERNEL_LOCK:
        if task.threads:
            import numba

            numba.set_num_threads(max(1, min(task.threads, numba.config.NUMBA_NUM_THREADS)))
        done = task.first
        end = task.first + task.n
        while done < end:
            m = min(BLOCK, end - done)
            brec = _play(task.baseline, task.seed, done, m)
            base = compact(brec)
            for p in task.points:
                if p.index == task.baseline.index:
                    out[p.index].add(brec, p.rules, base, base)
                else:
                    rec = _play(p, task.seed, done, m)
                    out[p.index].add(rec, p.rules, compact(rec), base)
            done += m
            if progress is not None:
                progress.advance(m * len(task.points))
    return out


def default_task_games(games: int, workers: int) -> int:
    """Ranges small enough to spread one point over every worker a few times."""
    from fbsim.experiments.sweep import BLOCK

    per = math.ceil(games / max(1, 3 * workers))
    return max(BLOCK, min(2_000_000, -(-per // BLOCK) * BLOCK))


def plan(points: list[Point], by_index: dict[int, Point], seed: int, first: int, n: int,
         task_games: int, threads: int | None) -> list[Task]:
    """Tasks covering games [first, first + n) of `points` (which share nothing else)."""
    groups: dict[int, list[Point]] = {}
    for p in points:
        groups.setdefault(p.baseline, []).append(p)
    tasks = []
    for b, members in sorted(groups.items()):
        for i in range(0, len(members), POINTS_PER_TASK):
            chunk = tuple(members[i:i + POINTS_PER_TASK])
            start = first
            while start < first + n:
                m = min(task_games, first + n - start)
                tasks.append(Task(seed, start, m, by_index[b], chunk, threads))
                start += m
    return tasks


@contextmanager
def open_client(scheduler: str | None = None, workers: int | None = None):
    """(client, kernel threads per task): a client of the cluster at `scheduler`, or of a new
    local cluster of `workers` processes (each running one task at a time with its share of
    this machine's cores), or (None, None) to run in-process."""
    from distributed import Client, LocalCluster

    from fbsim.errors import UsageError

    if scheduler and workers:
        raise UsageError("--scheduler and --workers: give one (--workers starts a local "
                         "cluster)")
    if scheduler:
        try:
            client = Client(scheduler, timeout=30)
        except (OSError, TimeoutError) as e:
            raise UsageError(f"--scheduler {scheduler}: cannot connect ({e})") from None
        try:
            yield client, None
        finally:
            client.close()
        return
    if not workers:
        yield None, None
        return
    if workers < 1:
        raise UsageError(f"--workers: must be >= 1, got {workers}")
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=40)
    client = Client(cluster)
    try:
        yield client, max(1, (os.cpu_count() or 1) // workers)
    finally:
        client.close()
        cluster.close()


def prepare(client) -> int:
    """Register the warm-up plugin (it runs on every worker, also those joining later);
    returns the number of workers now."""
    from fbsim.experiments.worker_plugin import WarmKernel

    client.register_plugin(WarmKernel())
    return max(1, len(client.scheduler_info().get("workers", {})))


def _results(client, tasks: list[Task], progress):
    """(task, tallies) for every task: in this process, one after the other, or on the
    cluster as they complete."""
    if client is None:
        for t in tasks:
            yield t, tally_range(t, progress)
        return
    from distributed import as_completed

    futures = {client.submit(tally_range, t, pure=False, retries=3): t for t in tasks}
    for fut in as_completed(futures):
        t = futures.pop(fut)
        result = fut.result()
        fut.release()
        progress.advance(t.games)
        yield t, result


def run_tasks(client, spec: SweepSpec, todo: list[Point], by_index: dict[int, Point],
              task_games: int | None, threads: int | None, progress, on_point) -> int:
    """Play the unfinished points, in-process (client None) or on the cluster; calls
    `on_point(point, tally)` as each point completes. Returns the games played."""
    workers = prepare(client) if client is not None else 1
    adaptive = spec.ci_width is not None
    target = {p.index: (min(spec.min_games, spec.max_games) if adaptive else spec.games)
              for p in todo}
    done = {p.index: 0 for p in todo}
    tallies = {p.index: Tally() for p in todo}
    open_points = list(todo)
    played = 0
    while open_points:
        # one round: every open point up to its target (a fixed run has a single round)
        rounds: dict[tuple[int, int], list[Point]] = {}
        for p in open_points:
            rounds.setdefault((done[p.index], target[p.index]), []).append(p)
        tasks = []
        for (a, b), pts in sorted(rounds.items()):
            # in-process, one task per chunk of points covers the whole range
            size = task_games or (default_task_games(b - a, workers) if client is not None
                                  else b - a)
            tasks += plan(pts, by_index, spec.seed, a, b - a, size, threads)
        remaining = {p.index: 0 for p in open_points}
        for t in tasks:
            for q in t.points:
                remaining[q.index] += t.n
        for t, result in _results(client, tasks, progress):
            for idx, tally in result.items():
                tallies[idx].merge(tally)
                remaining[idx] -= t.n
            played += t.games
            for p in t.points:
                if remaining[p.index] == 0:
                    done[p.index] = target[p.index]
                    if not adaptive or _tight_enough(tallies[p.index], spec, done[p.index]):
                        on_point(p, tallies[p.index])
        still = []
        for p in open_points:
            if adaptive and not _tight_enough(tallies[p.index], spec, done[p.index]):
                nxt = _next_target(tallies[p.index], spec, done[p.index])
                progress.grow(nxt - target[p.index])
                target[p.index] = nxt
                still.append(p)
        open_points = still
    return played


def _tight_enough(tally: Tally, spec: SweepSpec, done: int) -> bool:
    return max(tally.half_widths()) <= spec.ci_width or done >= spec.max_games


def _next_target(tally: Tally, spec: SweepSpec, done: int) -> int:
    from fbsim.experiments.sweep import next_target

    return next_target(tally, spec, done)
