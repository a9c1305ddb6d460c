"""`fbsim bench`: games per second, per table size, measured in one run, of

- **runner**: the path every command plays through (`fbsim.experiments.run.runner`): the
  kernel's records of each block of games reduced to every metric (`Tally`), on 1 thread and
  on all threads;
- **kernel**: the kernel alone, the same blocks of records with no metric reduction;
- **reference**: the readable reference engine, one game at a time;

plus the kernel's cold compile and warm start. Read the figures as ratios: the machine's
other load moves the absolute numbers.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import numba

from fbsim.experiments.metrics.tally import Tally
from fbsim.experiments.run.runner import Arm, run_blocks
from fbsim.game.lineup import Lineup
from fbsim.reference.engine import play_game
from fbsim.rules import Rules, load_rules

PATHS = {
    "runner": "the runner: kernel records reduced to every metric (what commands run)",
    "kernel": "the kernel alone: records, no metrics",
    "reference": "the reference engine, one game at a time",
}

_START_SNIPPET = """
import time
t0 = time.perf_counter()
from fbsim.rules import load_rules
from fbsim.kernel import simulate
simulate(load_rules(), n_games=1)
print(time.perf_counter() - t0)
"""


def time_to_first_game(cache_dir: str | None) -> float:
    """Seconds from a fresh interpreter to its first kernel game (subprocess).

    cache_dir=None uses the normal cache (warm start); a new empty folder forces a cold
    compile of everything.
    """
    env = dict(os.environ)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _START_SNIPPET], env=env, check=True,
                         capture_output=True, text=True).stdout
    wall = time.perf_counter() - t0
    return max(float(out.strip().splitlines()[-1]), 0.0) if out.strip() else wall


def path_rate(path: str, rules: Rules, lineup: Lineup, games: int, threads: int,
              seed: int = 1) -> float:
    """Games per second of the runner (with metrics) or the kernel alone (records only)."""
    arm = Arm(rules, lineup)
    tally = Tally.for_rules(rules, lineup)

    def count(first: int, recs: list[dict]) -> None:
        tally.add(tally.measure(recs[0], rules, lineup))

    def drop(first: int, recs: list[dict]) -> None:
        pass

    consume = count if path == "runner" else drop
    prev = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        run_blocks([arm], seed, 0, min(games, 2000), consume)  # warm
        t0 = time.perf_counter()
        run_blocks([arm], seed, 0, games, consume)
        return games / (time.perf_counter() - t0)
    finally:
        numba.set_num_threads(prev)


def reference_rate(rules: Rules, lineup: Lineup, games: int, seed: int = 1) -> float:
    play_game(rules, lineup, seed, 0)  # warm
    t0 = time.perf_counter()
    for i in range(games):
        play_game(rules, lineup, seed, i)
    return games / (time.perf_counter() - t0)


def run_bench(players=(3, 4, 5, 6), games: int = 200_000, ref_games: int = 300,
              base: Rules | None = None, lineup: Lineup | None = None,
              compile_times: bool = True, echo=None) -> dict:
    lineup = lineup or Lineup()
    all_threads = numba.config.NUMBA_NUM_THREADS
    result: dict = {"threads": all_threads, "games": games, "ref_games": ref_games,
                    "lineup": lineup.describe(), "paths": PATHS, "players": {}}
    if compile_times:
        with tempfile.TemporaryDirectory() as d:
            if echo:
                echo("timing a cold compile (fresh cache, a minute or so) ...")
            result["cold_start_s"] = time_to_first_game(d)
        time_to_first_game(None)  # fills the normal cache if this is its first use
        result["warm_start_s"] = time_to_first_game(None)
    for n in players:
        rules = load_rules(base=base, players=n)
        if echo:
            echo(f"{n} players ...")
        row = {}
        for path in ("runner", "kernel"):
            row[f"{path}_1_thread"] = path_rate(path, rules, lineup, games, 1)
            row[f"{path}_all_threads"] = path_rate(path, rules, lineup, games, all_threads)
        row["reference"] = reference_rate(rules, lineup, ref_games)
        row["us_per_game"] = {"runner": 1e6 / row["runner_1_thread"],
                              "kernel": 1e6 / row["kernel_1_thread"],
                              "reference": 1e6 / row["reference"]}
        row["scaling"] = row["runner_all_threads"] / row["runner_1_thread"]
        row["runner_vs_kernel"] = row["runner_1_thread"] / row["kernel_1_thread"]
        row["runner_vs_reference"] = row["runner_1_thread"] / row["reference"]
        result["players"][n] = row
    return result


def sweep_rates(players, games: int, workers: int, scheduler: str | None = None,
                rules_file=None, sets=(), echo=None) -> dict:
    """Games per second of a one-point sweep (the sweep path: records, pairing, tables)
    in-process and through a Dask cluster (a new local one of `workers` processes, or the
    one at `scheduler`), measured one after the other on the same spec."""
    from fbsim.experiments.run.cluster import default_task_games, open_client, prepare
    from fbsim.experiments.run.spec import SweepSpec
    from fbsim.experiments.run.sweep import run_sweep, same_tables
    from fbsim.rules import parse_set

    out: dict = {"games": games, "workers": workers, "scheduler": scheduler, "players": {}}
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        with open_client(scheduler, None if scheduler else workers) as (client, threads):
            n_workers = prepare(client)
            out["cluster_start_s"] = time.perf_counter() - t0
            out["workers"] = n_workers
            for n in players:
                spec = SweepSpec(games=games, seed=1, players=[n], rules=rules_file,
                                 set=dict(parse_set(x) for x in sets))
                if echo:
                    echo(f"{n} players: in-process sweep ...")
                run_sweep(SweepSpec(games=2000, seed=1, players=[n]), f"{d}/warm{n}")
                t = time.perf_counter()
                run_sweep(spec, f"{d}/local{n}")
                local = games / (time.perf_counter() - t)
                if echo:
                    echo(f"{n} players: through {n_workers} workers ...")
                task_games = default_task_games(games, n_workers)
                t = time.perf_counter()
                run_sweep(spec, f"{d}/cluster{n}", client=client, threads=threads,
                          task_games=task_games)
                dist = games / (time.perf_counter() - t)
                same = same_tables(f"{d}/local{n}", f"{d}/cluster{n}")
                out["players"][n] = {"in_process": local, "cluster": dist,
                                     "ratio": dist / local, "tasks": -(-games // task_games),
                                     "same_tables": same}
    return out


def format_sweep_rates(res: dict) -> str:
    where = res["scheduler"] or f"a local cluster of {res['workers']} worker processes"
    lines = [f"fbsim bench --workers: a one-point sweep of {res['games']:,} games, in-process "
             f"and through {where} (started and warmed in {res['cluster_start_s']:.1f} s)",
             f"  {'players':>7} {'in-process':>12} {'cluster':>12} {'ratio':>7} {'tasks':>6} "
             f"{'same tables':>12}"]
    for n, r in res["players"].items():
        same = "yes" if r["same_tables"] else "NO"
        lines.append(f"  {n:>7} {r['in_process']:>10,.0f}/s {r['cluster']:>10,.0f}/s "
                     f"{r['ratio']:>6.2f}x {r['tasks']:>6} {same:>12}")
    return "\n".join(lines)


def format_bench(res: dict) -> str:
    th = res["threads"]
    lines = [f"fbsim bench: {res['games']:,} games per runner and kernel measurement, "
             f"{res['ref_games']} reference games; lineup {res['lineup']}"]
    for name, what in res["paths"].items():
        lines.append(f"  {name:<9} {what}")
    if "cold_start_s" in res:
        lines.append(f"  cold compile (empty cache) to first game: {res['cold_start_s']:.1f} s;"
                     f" warm start (cached): {res['warm_start_s']:.1f} s")
    lines.append(f"  {'players':>7} {'path':<9} {'us/game':>8} {'1 thread':>12} "
                 f"{str(th) + ' threads':>12} {'scaling':>8}")
    for n, r in res["players"].items():
        for path in ("runner", "kernel"):
            one, many = r[f"{path}_1_thread"], r[f"{path}_all_threads"]
            lines.append(f"  {n:>7} {path:<9} {1e6 / one:>8.2f} {one:>10,.0f}/s "
                         f"{many:>10,.0f}/s {many / one:>7.2f}x")
        lines.append(f"  {n:>7} {'reference':<9} {1e6 / r['reference']:>8.1f} "
                     f"{r['reference']:>10,.0f}/s")
        lines.append(f"  {'':>7} runner/kernel {r['runner_vs_kernel']:.2f}, runner/reference "
                     f"{r['runner_vs_reference']:,.0f}x")
    return "\n".join(lines)
