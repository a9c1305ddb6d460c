"""`fbsim bench`: games per second of every path, per table size, measured in one run.

Paths (`PATHS`):

- **runner**: what every command plays through (`fbsim.experiments.run.runner.run_blocks`):
  the kernel's fast build for the lineup, each block's records reduced to every metric
  (`Tally`: the compiled measure and the integer moments);
- **kernel**: the same fast build alone: records, no metrics;
- **checked**: the generic checked build (every compiled bot, every decision checked), which
  the tests compare the fast build with, game by game;
- **floor**: the engine alone: the same games replayed from their recorded bot answers, so no
  bot runs (the tape of each game is recorded first, untimed);
- **reference**: the readable reference engine, one game at a time;
- **openspiel**: OpenSpiel's C++ `goofspiel(num_cards=8,players=4)` played by uniform random
  bots through `pyspiel.evaluate_bots`, when the `open-spiel` package is installed
  (`pip install -e '.[bench]'`): an outside yardstick measured in the same run.

Every path but `reference` and `openspiel` runs on one thread; the runner also on `threads`
threads (its scaling). Each path's games are played in slices, the slices of every path in
turn, `repeats` times over, and each path keeps its fastest slice (time per game), so that the
machine's other load disturbs the ratios as little as it can; read the figures as ratios.
Also timed: the cold compile (an empty cache) and the warm start of `fbsim simulate`, each in a
new process, and optionally the peak memory of a long run.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np

from fbsim.experiments.metrics.tally import Tally
from fbsim.experiments.run.runner import Arm, run_blocks
from fbsim.lineup import Lineup
from fbsim.reference.engine import play_game
from fbsim.rules import Rules, load_rules, rules_vector

PATHS = {
    "runner": "the runner: fast build, records reduced to every metric (what commands run)",
    "kernel": "the fast build alone: records, no metrics",
    "checked": "the generic checked build alone: every bot compiled in, every decision checked",
    "floor": "engine-only floor: the same games replayed from recorded answers, no bot runs",
    "reference": "the reference engine, one game at a time",
    "openspiel": "OpenSpiel goofspiel(num_cards=8,players=4), uniform random bots (C++)",
}
OPENSPIEL_GAME = "goofspiel(num_cards=8,players=4)"
TAPE_BLOCK = 8192

_START = """
import sys, time
t0 = time.perf_counter()
from fbsim.experiments.run.simulate import simulate
simulate(players=4, games=int(sys.argv[1]))
print(time.perf_counter() - t0)
"""


def start_time(cache_dir: str | None, games: int = 1) -> float:
    """Seconds from a fresh interpreter to the end of `fbsim.simulate` of `games` games at 4
    players with the default lineup (the runner path: kernel build, metrics, tables), in a
    subprocess. cache_dir=None: the normal cache (warm start); a new empty folder: a cold
    compile of everything that path needs."""
    env = dict(os.environ)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-P", "-c", _START, str(games)], env=env, check=True,
                         capture_output=True, text=True).stdout
    wall = time.perf_counter() - t0
    return wall if not out.strip() else max(wall, float(out.strip().splitlines()[-1]))


_RSS = """
import resource, sys
from fbsim.experiments.run.simulate import simulate
simulate(players=int(sys.argv[2]), games=int(sys.argv[1]))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak_rss_mb(games: int, players: int = 4) -> float:
    """Peak resident memory (MB) of a process that aggregates `games` games through the
    runner (`fbsim.simulate`, every metric)."""
    out = subprocess.run([sys.executable, "-P", "-c", _RSS, str(games), str(players)], check=True,
                         capture_output=True, text=True).stdout
    return int(out.strip().splitlines()[-1]) / 1024


# ------------------------------------------------------------------ one measurement each


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def runner_seconds(rules: Rules, lineup: Lineup, games: int, threads: int,
                   metrics: bool = True, first: int = 0, checked: bool = False) -> float:
    """Seconds of `games` games through the runner, counted (runner) or not (kernel; with
    `checked`, the checked build)."""
    arm = Arm(rules, lineup, checked=checked or None)
    tally = Tally.for_rules(rules, lineup)

    def count(first: int, recs: list[dict], blocks: list) -> None:
        tally.add(blocks[0])

    def drop(first: int, recs: list[dict], blocks: list) -> None:
        pass

    prev = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        return _timed(lambda: run_blocks([arm], 1, first, games, count if metrics else drop,
                                         tallies=[tally if metrics else None]))
    finally:
        numba.set_num_threads(prev)


def tape_length(rules: Rules) -> int:
    """Enough tape for every answer of one game: per round, five numbers per commitment and
    one per Fog request, Accusation and market answer (a purchase takes a card: at most the
    deck per round), and one for a cornered player."""
    deck = sum(a.count for a in rules.assets.values())
    return 1 + rules.rounds * (rules.players * 8 + deck + 1)


def taped_builds(rules: Rules, lineup: Lineup, modes) -> tuple:
    """The rules vector, the bots' arrays (`fbsim.kernel.bot_arrays`) and the lineup's fast
    builds in these tape modes (`fbsim.kernel.dispatch`), for the runner's shape of table."""
    from fbsim.game.shape import shape_of
    from fbsim.kernel import bot_arrays
    from fbsim.kernel.build import build_for

    R = rules_vector(rules)
    builds = {m: build_for(lineup, False, m, shape_of(R)) for m in modes}
    P, by_agenda, seat_bot = bot_arrays(rules, lineup, builds[modes[0]])
    return R, P, by_agenda, seat_bot, builds


def floor_seconds(rules: Rules, lineup: Lineup, games: int, first: int = 0) -> float:
    """Seconds to replay `games` games from their recorded answers (recording untimed). The
    tapes bound the games played at once, so this plays TAPE_BLOCK games at a time itself
    (the runner has no tapes)."""
    from fbsim.kernel import Records

    R, P, by_agenda, seat_bot, builds = taped_builds(rules, lineup, ("record", "replay"))
    rec, rep = builds["record"], builds["replay"]
    block = min(games, TAPE_BLOCK)
    tapes = np.zeros((block, tape_length(rules)), dtype=np.int64)
    out = Records(block)
    total = 0.0
    for lo in range(0, games, block):
        m = min(block, games - lo)
        arrays, t = out.arrays(m), tapes[:m]
        rec.run(R, P, by_agenda, seat_bot, 1, first + lo, m, m, arrays, t, threads=1)
        t0 = time.perf_counter()
        rep.run(R, P, by_agenda, seat_bot, 1, first + lo, m, m, arrays, t, threads=1)
        total += time.perf_counter() - t0
    return total


def decision_costs(rules: Rules, lineup: Lineup, games: int, repeats: int = 3) -> dict:
    """What each decision of the lineup's bots costs, on the floor's games: the games are
    recorded (untimed), then replayed by the probing build (`fbsim.kernel.dispatch`) asking no
    bot (the floor) and, for each decision, asking the bots that decision on the side too,
    their answers added up and not played, so every replay plays the same games through the
    same compiled code. A decision's cost is its replay's time less the floor's (best slice of
    each), per game and per question; bots that share work between decisions (a memo) are
    charged where it is first done."""
    from fbsim.kernel import Records
    from fbsim.kernel.dispatch import DECISIONS, PROBE_WORDS, probe

    R, P, by_agenda, seat_bot, builds = taped_builds(rules, lineup, ("record", "probe"))
    rec, rep = builds["record"], builds["probe"]
    block = min(games, TAPE_BLOCK)
    tapes = np.zeros((block, tape_length(rules) + PROBE_WORDS), dtype=np.int64)
    out = Records(block)
    asking = (None, *DECISIONS)
    best = {d: float("inf") for d in asking}
    asked = {}
    for i in range(repeats * SLICES):
        lo = (i % SLICES) * block
        rec.run(R, P, by_agenda, seat_bot, 1, lo, block, block, out.arrays(block), tapes,
                threads=1)
        for d in asking:
            probe(tapes, d)
            t0 = time.perf_counter()
            rep.run(R, P, by_agenda, seat_bot, 1, lo, block, block, out.arrays(block), tapes,
                    threads=1)
            best[d] = min(best[d], (time.perf_counter() - t0) / block)
            asked[d] = float(tapes[:, 1 - PROBE_WORDS].mean())
    floor = best[None]
    rows = {}
    for d in DECISIONS:
        extra = max(0.0, best[d] - floor) * 1e6
        rows[d] = {"asked_per_game": asked[d], "us_per_game": extra,
                   "ns_per_question": 1e3 * extra / asked[d] if asked[d] else None}
    return {"players": rules.players, "games_per_slice": block, "floor_us": floor * 1e6,
            "lineup": lineup.describe(), "decisions": rows}


def format_decisions(res: dict) -> str:
    lines = [f"fbsim bench --decisions: {res['players']} players, {res['lineup']}; the floor "
             f"{res['floor_us']:.2f} us per game (best slice of {res['games_per_slice']:,} "
             "games)", f"  {'decision':<12} {'asked/game':>10} {'us/game':>8} "
             f"{'ns/question':>11}"]
    for d, r in res["decisions"].items():
        per = "-" if r["ns_per_question"] is None else f"{r['ns_per_question']:.1f}"
        lines.append(f"  {d:<12} {r['asked_per_game']:>10.2f} {r['us_per_game']:>8.3f} "
                     f"{per:>11}")
    lines.append("  (each decision asked on the side while the floor replays the same games: "
                 "its time less the floor's)")
    return "\n".join(lines)


def reference_seconds(rules: Rules, lineup: Lineup, games: int, first: int = 0) -> float:
    def go():
        for i in range(first, first + games):
            play_game(rules, lineup, 1, i)
    return _timed(go)


def openspiel_available() -> bool:
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        return False
    return True


def openspiel_seconds(games: int, first: int = 0) -> float:
    import pyspiel

    game = pyspiel.load_game(OPENSPIEL_GAME)
    players = game.num_players()
    bots = [pyspiel.make_uniform_random_bot(p, 1234 + p) for p in range(players)]

    def go():
        for i in range(first, first + games):
            pyspiel.evaluate_bots(game.new_initial_state(), bots, i)
    return _timed(go)


# ------------------------------------------------------------------ the run

SLICES = 10  # each measurement is played in this many slices, interleaved with the others'


def run_bench(players=(3, 4, 5, 6), games: int = 200_000, ref_games: int = 300,
              base: Rules | None = None, lineup: Lineup | None = None,
              threads: int | None = None, repeats: int = 3, compile_times: bool = True,
              openspiel_games: int = 20_000, rss_games: int | None = None,
              echo=None) -> dict:
    """Every path at every table size. A path's `games` are played in SLICES slices, and the
    slices of all paths in turn, `repeats` times over; each path keeps its fastest time per
    game over its slices (a burst of the machine's other load then spoils a slice, not the
    figure)."""
    lineup = lineup or Lineup()
    threads = threads or numba.config.NUMBA_NUM_THREADS
    with_os = openspiel_available()
    result: dict = {"threads": threads, "games": games, "ref_games": ref_games,
                    "openspiel_games": openspiel_games if with_os else 0,
                    "repeats": repeats, "slices": SLICES, "lineup": lineup.describe(),
                    "machine": machine(),
                    "paths": {k: v for k, v in PATHS.items() if with_os or k != "openspiel"},
                    "players": {}}
    if not with_os and echo:
        echo("open-spiel is not installed (the project's 'bench' extra): no OpenSpiel figures")
    if compile_times:
        with tempfile.TemporaryDirectory() as d:
            if echo:
                echo("timing a cold compile (an empty cache: a minute or so) ...")
            result["cold_start_s"] = start_time(d)
        start_time(None)  # fills the normal cache if this is its first use
        result["warm_start_s"] = min(start_time(None, 1000) for _ in range(3))
    if rss_games:
        if echo:
            echo(f"peak memory of {rss_games:,} games ...")
        result["rss_games"] = rss_games
        result["rss_mb"] = peak_rss_mb(rss_games)
    for n in players:
        rules = load_rules(base=base, players=n)
        if echo:
            echo(f"{n} players: compiling and warming every path ...")
        work = {
            "runner": lambda m, f, r=rules: runner_seconds(r, lineup, m, 1, first=f),
            f"runner_{threads}": lambda m, f, r=rules: runner_seconds(r, lineup, m, threads,
                                                                      first=f),
            "kernel": lambda m, f, r=rules: runner_seconds(r, lineup, m, 1, False, f),
            "checked": lambda m, f, r=rules: runner_seconds(r, lineup, m, 1, False, f, True),
            "floor": lambda m, f, r=rules: floor_seconds(r, lineup, m, f),
            "reference": lambda m, f, r=rules: reference_seconds(r, lineup, m, f),
        }
        count = {k: games for k in work}
        # the threaded runner gets each thread a slice's worth: a slice of one thread's games
        # spread over every thread is mostly the pipeline filling and draining (a block of
        # 8,192 games per thread in flight), which a run of millions of games pays once
        count[f"runner_{threads}"] = games * threads
        count["reference"] = ref_games
        if with_os:
            work["openspiel"] = lambda m, f: openspiel_seconds(m, f)
            count["openspiel"] = openspiel_games
        for k, fn in work.items():  # compile and warm each path (not timed)
            fn(max(1, count[k] // 100), 0)
        best = {k: float("inf") for k in work}
        for i in range(repeats * SLICES):
            if echo and i % SLICES == 0:
                echo(f"{n} players: measuring, round {i // SLICES + 1} of {repeats} ...")
            for k, fn in work.items():
                m = max(1, count[k] // SLICES)
                best[k] = min(best[k], fn(m, (i % SLICES) * m) / m)
        result["players"][n] = summarise(best, threads)
    return result


def summarise(best: dict[str, float], threads: int) -> dict:
    """The figures of one table size from each path's best seconds per game."""
    us = {k: 1e6 * v for k, v in best.items()}
    row: dict = {"us_per_game": {k: v for k, v in us.items() if k != f"runner_{threads}"},
                 "games_per_s": {k: 1e6 / v for k, v in us.items()
                                 if k != f"runner_{threads}"}}
    row["runner_threads_games_per_s"] = 1e6 / us[f"runner_{threads}"]
    row["scaling"] = us["runner"] / us[f"runner_{threads}"]
    row["vs_floor"] = {k: us[k] / us["floor"] for k in row["us_per_game"]}
    if "openspiel" in us:
        row["vs_openspiel"] = {k: us["openspiel"] / us[k] for k in row["us_per_game"]}
    return row


def machine() -> dict:
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": round(mem, 1),
            "python": sys.version.split()[0], "numba": numba.__version__,
            "numpy": np.__version__, "max_rss_mb_self": resource.getrusage(
                resource.RUSAGE_SELF).ru_maxrss // 1024}


def ratio(v: float) -> str:
    return f"{v:.2f}" if v >= 0.1 else f"{v:.2g}"


def table_rows(n, row: dict) -> list[tuple[str, ...]]:
    """One table size's figures, a row of text cells per path: players, path, us per game,
    games per second, x floor and, when measured, x OpenSpiel."""
    out = []
    for path, us in row["us_per_game"].items():
        cells = (str(n), path, f"{us:.2f}", f"{row['games_per_s'][path]:,.0f}",
                 f"{row['vs_floor'][path]:.2f}")
        if "vs_openspiel" in row:
            cells += (ratio(row["vs_openspiel"][path]),)
        out.append(cells)
    return out


def format_bench(res: dict) -> str:
    th = res["threads"]
    m = res["machine"]
    lines = [f"fbsim bench: {res['games']:,} games per path ({res['ref_games']} for the "
             f"reference engine) in {res['slices']} slices, {res['repeats']} times over, "
             f"each path's best slice; lineup {res['lineup']}",
             f"machine: {m['cpu'] or 'unknown CPU'}, {m['cores']} cores, {m['memory_gib']} GiB; "
             f"Python {m['python']}, numba {m['numba']}"]
    for name, what in res["paths"].items():
        lines.append(f"  {name:<9} {what}")
    if "cold_start_s" in res:
        lines.append(f"  cold compile of the runner path (empty cache): {res['cold_start_s']:.1f}"
                     f" s; warm start of fbsim.simulate (1000 games, best of 3): "
                     f"{res['warm_start_s']:.1f} s")
    if "rss_mb" in res:
        lines.append(f"  peak memory aggregating {res['rss_games']:,} games: "
                     f"{res['rss_mb']:.0f} MB")
    os_on = "openspiel" in res["paths"]
    head = (f"  {'players':>7} {'path':<9} {'us/game':>8} {'games/s':>11} {'x floor':>8}"
            + (f" {'x OpenSpiel':>11}" if os_on else ""))
    lines.append(head)
    for n, r in res["players"].items():
        for row in table_rows(n, r):
            lines.append("  {:>7} {:<9} {:>8} {:>11} {:>8}".format(*row[:5])
                         + (f" {row[5]:>11}" if len(row) > 5 else ""))
        lines.append(f"  {'':>7} runner on {th} threads: {r['runner_threads_games_per_s']:,.0f}"
                     f" games/s, {r['scaling']:.2f}x one thread")
    lines.append("  x floor: time per game over the floor's; x OpenSpiel: OpenSpiel's time per "
                 "game over the path's (above 1: faster than OpenSpiel)")
    return "\n".join(lines)


def format_markdown(res: dict, command: str = "fbsim bench") -> str:
    """The figures as a Markdown page (what `results/bench.md` holds)."""
    m = res["machine"]
    os_on = "openspiel" in res["paths"]
    out = ["# fbsim bench", "",
           f"Measured with `{command}` on {m['cpu'] or 'an unknown CPU'}, {m['cores']} cores, "
           f"{m['memory_gib']} GiB (Python {m['python']}, numba {m['numba']}, numpy "
           f"{m['numpy']}); lineup `{res['lineup']}`; {res['games']:,} games per path "
           f"({res['ref_games']} for the reference engine"
           + (f", {res['openspiel_games']:,} for OpenSpiel" if os_on else "")
           + f") played in {res['slices']} slices, the slices of every path in turn, "
           f"{res['repeats']} times over; each path keeps its fastest slice (time per "
           "game).", "",
           "| path | what |", "| --- | --- |"]
    out += [f"| {k} | {v} |" for k, v in res["paths"].items()]
    out += ["", "| players | path | us/game | games/s | x floor |"
            + (" x OpenSpiel |" if os_on else ""),
            "| ---: | --- | ---: | ---: | ---: |" + (" ---: |" if os_on else "")]
    for n, r in res["players"].items():
        out += ["| " + " | ".join(row) + " |" for row in table_rows(n, r)]
    out += ["", f"The runner on {res['threads']} threads (each slice {res['threads']} times "
            "the one-thread slice's games, as many per thread):", "",
            "| players | games/s | over one thread |", "| ---: | ---: | ---: |"]
    out += [f"| {n} | {r['runner_threads_games_per_s']:,.0f} | {r['scaling']:.2f}x |"
            for n, r in res["players"].items()]
    extra = []
    if "cold_start_s" in res:
        extra.append(f"- cold compile of the runner path (a new process, an empty cache): "
                     f"{res['cold_start_s']:.1f} s; warm start of `fbsim.simulate` (a new "
                     f"process, 1000 games, best of 3): {res['warm_start_s']:.1f} s")
    if "rss_mb" in res:
        extra.append(f"- peak memory of a process aggregating {res['rss_games']:,} games "
                     f"(4 players, every metric): {res['rss_mb']:.0f} MB")
    if extra:
        out += [""] + extra
    out += ["", "x floor: the path's time per game over the engine-only floor's. "
            + ("x OpenSpiel: OpenSpiel's time per game over the path's (above 1: faster than "
               "OpenSpiel). " if os_on else "")
            + "Read the figures as ratios: the machine's other load moves the absolute ones."]
    return "\n".join(out) + "\n"


def sweep_rates(players, games: int, workers: int, scheduler: str | None = None,
                rules_file=None, sets=(), echo=None) -> dict:
    """Games per second of a one-point sweep (the sweep path: records, pairing, tables)
    in-process and through a Dask cluster (a new local one of `workers` processes, or the
    one at `scheduler`), measured one after the other on the same spec."""
    from fbsim.experiments.run.cluster import open_client, prepare
    from fbsim.experiments.run.runner import default_task_games
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
