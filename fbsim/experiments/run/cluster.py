"""Sweeps on a Dask cluster: the runner's tasks played on workers, with the same tables.

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

import os
import sys
from contextlib import contextmanager
from urllib.parse import urlsplit

from fbsim.experiments.run.runner import count_task, run_points
from fbsim.experiments.run.spec import Point, SweepSpec

# a scheduler on one of these is this machine's own (a local cluster listens on the first)
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def check_scheduler(scheduler: str) -> str:
    """A scheduler's address as Dask reads it (SCHEME://HOST:PORT, tcp:// if left out), or a
    usage error naming --scheduler: a malformed one is refused before any file is written,
    not a traceback from Dask when the client connects."""
    from distributed.comm.addressing import get_address_host_port

    from fbsim.errors import UsageError, cut

    try:
        _host, port = get_address_host_port(scheduler)
        if not 1 <= port <= 65535:
            raise ValueError(f"port {port} is not 1 to 65535")
    except (ValueError, TypeError) as e:
        raise UsageError(f"--scheduler {cut(scheduler) or repr(scheduler)}: not a scheduler's "
                         f"address ({cut(str(e), 200)}); expected tcp://HOST:PORT, e.g. "
                         "tcp://10.0.0.5:8786") from None
    return scheduler


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
        check_scheduler(scheduler)
        host = urlsplit(scheduler if "://" in scheduler else f"tcp://{scheduler}").hostname
        if host not in LOCAL_HOSTS:
            print(f"fbsim: warning: --scheduler {scheduler} is not on this machine: Dask's "
                  "tcp:// is neither authenticated nor encrypted, use it on a trusted network "
                  "only", file=sys.stderr)
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
    from distributed.security import Security

    # TLS with a certificate made for this cluster alone (kept in memory): the scheduler and
    # workers listen on 127.0.0.1 and accept only this process's client, not another local
    # user's (who could otherwise run code as this user through them)
    security = Security.temporary()
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address=None, silence_logs=40,
                           protocol="tls", security=security)
    client = Client(cluster, security=security)
    try:
        yield client, max(1, (os.cpu_count() or 1) // workers)
    finally:
        client.close()
        cluster.close()


def prepare(client) -> int:
    """Register the warm-up plugin (it runs on every worker, also those joining later);
    returns the number of workers now."""
    from fbsim.experiments.run.worker_plugin import WarmKernel

    client.register_plugin(WarmKernel())
    return max(1, len(client.scheduler_info().get("workers", {})))


def task_results(client, progress):
    """A function of tasks yielding (task, tallies) for each: in this process, one after the
    other, or on the cluster as they complete."""
    if client is None:
        def local(tasks):
            for t in tasks:
                yield t, count_task(t, progress)
        return local

    def remote(tasks):
        from distributed import as_completed

        futures = {client.submit(count_task, t, pure=False, retries=3): t for t in tasks}
        for fut in as_completed(futures):
            t = futures.pop(fut)
            result = fut.result()
            fut.release()
            progress.advance(t.games)
            yield t, result
    return remote


def run_tasks(client, spec: SweepSpec, todo: list[Point], by_index: dict[int, Point],
              task_games: int | None, threads: int | None, progress, on_point) -> int:
    """Play the unfinished points, in-process (client None) or on the cluster; calls
    `on_point(point, tally)` as each point completes. Returns the games played."""
    workers = prepare(client) if client is not None else 1
    return run_points(spec, todo, by_index, task_results(client, progress), workers, task_games,
                      threads, progress, on_point, remote=client is not None)
