"""`fbsim bench`: games per second of the kernel (1 thread, all threads) and of the reference
engine, per table size, measured in one run, plus the kernel's cold compile and warm start.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import numba

from fbsim.game.lineup import Lineup
from fbsim.kernel import simulate
from fbsim.reference.engine import play_game
from fbsim.rules import Rules, load_rules

_START_SNIPPET = """
import time
t0 = time.perf_counter()
from fbsim.rules import load_rules
from fbsim.kernel import simulate
simulate(load_rules(), n_games=1, records=True)
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


def kernel_rate(rules: Rules, lineup: Lineup, games: int, threads: int, seed: int = 1) -> float:
    prev = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        simulate(rules, lineup, seed, n_games=min(games, 2000), records=True)  # warm
        t0 = time.perf_counter()
        simulate(rules, lineup, seed, n_games=games, records=True)
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
                    "players": {}}
    if compile_times:
        with tempfile.TemporaryDirectory() as d:
            if echo:
                echo("timing a cold compile (fresh cache, a minute or so) ...")
            result["cold_start_s"] = time_to_first_game(d)
        time_to_first_game(None)  # fills the normal cache if this is its first use
        result["warm_start_s"] = time_to_first_game(None)
    for n in players:
        rules = load_rules(base=base, sets=[f"players={n}"])
        if echo:
            echo(f"{n} players ...")
        one = kernel_rate(rules, lineup, games, 1)
        many = kernel_rate(rules, lineup, games, all_threads)
        ref = reference_rate(rules, lineup, ref_games)
        result["players"][n] = {
            "kernel_1_thread": one, "kernel_all_threads": many, "reference": ref,
            "scaling": many / one, "kernel_vs_reference": one / ref,
        }
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
    lines = [f"fbsim bench: kernel on 1 and {res['threads']} threads ({res['games']:,} games "
             f"each), reference engine ({res['ref_games']} games); default lineup"]
    if "cold_start_s" in res:
        lines.append(f"  cold compile (empty cache) to first game: {res['cold_start_s']:.1f} s;"
                     f" warm start (cached): {res['warm_start_s']:.1f} s")
    lines.append(f"  {'players':>7} {'1 thread':>12} {str(res['threads']) + ' threads':>12} "
                 f"{'scaling':>8} {'reference':>10} {'kernel/ref':>11}")
    for n, r in res["players"].items():
        lines.append(f"  {n:>7} {r['kernel_1_thread']:>10,.0f}/s {r['kernel_all_threads']:>10,.0f}"
                     f"/s {r['scaling']:>7.2f}x {r['reference']:>8,.0f}/s "
                     f"{r['kernel_vs_reference']:>10,.0f}x")
    return "\n".join(lines)
