"""The runner: the one loop over blocks of games. Every command plays its games here.

A run plays games [first, first + n) of one seed under one or more *arms* (a rules file and
a lineup each) on common random numbers: game i of every arm uses the same random draws, so
arms are compared game by game. The kernel plays each arm's block of games; the caller's
`consume(first, records)` counts it (metrics, paired differences, per-game records). Memory
does not grow with the number of games, and no count depends on the block size.

- `simulate` and `fbsim report`: one or two arms over a whole range;
- sweeps, exploit and tune: `Task`s of (a baseline, up to 8 points sharing it, a range of
  games), played by `count_task` in this process or on a Dask worker
  (`fbsim.experiments.run.cluster`);
- `fbsim bench`: times this loop with its metric reduction.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from fbsim.experiments.metrics.definitions import bot_rows, search_metrics
from fbsim.experiments.metrics.measure import Block
from fbsim.experiments.metrics.tally import Tally
from fbsim.experiments.run import prewarm
from fbsim.experiments.run.spec import Point, SweepSpec
from fbsim.lineup import Lineup
from fbsim.rules import Rules

BLOCK = 8_192  # games per kernel call (its arrays are reused); results do not depend on it
POINTS_PER_TASK = 8
KERNEL_LOCK = threading.Lock()  # one kernel call at a time per process (Dask workers)


class Progress(Protocol):
    def start(self, total: int, description: str) -> None: ...
    def advance(self, games: int) -> None: ...
    def grow(self, games: int) -> None: ...
    def close(self) -> None: ...


class NoProgress:
    """A `Progress` that shows nothing."""

    def start(self, total, description):
        pass

    def advance(self, games):
        pass

    def grow(self, games):
        pass

    def close(self):
        pass


@dataclass(frozen=True)
class Arm:
    """One setting played on the run's games: rules and lineup."""

    rules: Rules
    lineup: Lineup
    checked: bool | None = None  # the kernel's checked build (None: fast, or FBSIM_CHECKED)


def play(arm: Arm, seed: int, first: int, n: int, out=None) -> dict:
    """The kernel's records of games [first, first + n) under one arm (its fast build,
    `fbsim.kernel.build`), written into `out` (`fbsim.kernel.Records`) when given."""
    from fbsim.kernel import Prepared

    return start(arm, Prepared(arm.rules, arm.lineup, arm.checked), seed, first, n, out)()[0]


def start(arm: Arm, prepared, seed: int, first: int, n: int, out=None,
          tally: Tally | None = None, slot: object = None
          ) -> Callable[[], tuple[dict, Block | None]]:
    """`play`, started: the games go to the kernel's threads, and the returned function
    waits for them and returns their records and, with a `tally`, their `Block` (every chunk
    measured with the tally's metrics on the kernel's own thread as soon as it is played).
    `prepared`: the arm's `fbsim.kernel.Prepared`; `slot`: which of the tally's measures
    counts them (one per block in flight, `run_blocks`)."""
    if tally is None:
        wait_records = prepared.start(seed, first, n, out)
        return lambda: (wait_records(), None)
    m = tally.measurer(arm.rules, arm.lineup, slot)
    # on a cold cache the measure compiles in a helper process while the kernel compiles here
    helper = prewarm.start(m, arm.rules, arm.lineup, tally.bots)
    m.start(n)

    def after(arrays: tuple, lo: int, hi: int) -> None:
        G, SE, _, DR = arrays
        helper.wait()
        m.chunk((G, SE, DR), lo, hi)

    wait = prepared.start(seed, first, n, out, after=after)

    def result() -> tuple[dict, Block]:
        return wait(), m.finish()

    return result


def run_blocks(arms: Sequence[Arm], seed: int, first: int, n: int,
               consume: Callable[[int, list[dict], list[Block | None]], None],
               progress: Progress | None = None,
               weight: int | None = None, block: int | None = None,
               tallies: Sequence[Tally | None] | None = None) -> None:
    """Play games [first, first + n) under every arm, block by block (`block` games, default
    BLOCK), and hand each block's records (one dict per arm, in order) and their blocks of
    metrics to `consume(first_game_of_block, records, blocks)`. `progress.advance(m *
    weight)` follows each block of m games (weight: the arms counted, default all). The
    records handed to `consume` are overwritten by a later block: count them, or copy what
    must be kept.
    `tallies` (one per arm, or None): the tally whose metrics measure each arm's records,
    chunk by chunk on the kernel's threads as they are played (`start`): `blocks[i]` is
    arm i's `Block` for `tallies[i].add`, None for an arm without a tally.

    On more than one thread the next block is already being played while `consume` counts
    one (two sets of output arrays in turn), so the threads never wait for the counting;
    blocks are consumed in order either way, and nothing counted depends on it."""
    import numba

    from fbsim.kernel import Prepared, Records

    weight = len(arms) if weight is None else weight
    block = BLOCK if block is None else block
    tallies = list(tallies) if tallies is not None else [None] * len(arms)
    prepared = [Prepared(a.rules, a.lineup, a.checked) for a in arms]
    depth = 2 if numba.get_num_threads() > 1 and n > block else 1
    # `depth` sets of output arrays, one per arm, reused in turn: `consume` reads a block's
    # records before the block after next is played into them, and keeps none of them
    bufs = [[Records(min(block, n)) for _ in arms] for _ in range(depth)]
    end = first + n
    inflight: deque = deque()
    done, k = first, 0
    while done < end or inflight:
        while done < end and len(inflight) < depth:
            m = min(block, end - done)
            inflight.append((done, m, [
                start(a, p, seed, done, m, buf, t, (i, k % depth))
                for i, (a, p, buf, t) in enumerate(zip(arms, prepared, bufs[k % depth],
                                                       tallies, strict=True))]))
            done += m
            k += 1
        lo, m, waits = inflight.popleft()
        recs, blocks = zip(*(w() for w in waits), strict=True)
        consume(lo, list(recs), list(blocks))
        if progress is not None:
            progress.advance(m * weight)


def count_paired(new: Arm, old: Arm | None, seed: int, n: int,
                 progress: Progress | None = None, deal: bool = False) -> Tally:
    """Games 0..n-1 of `seed` under `new` and, when given, `old` on the same games (common
    random numbers), counted in one tally with a bot row for each arm's lineup entries:
    paired when there is an `old` arm (`Tally.difference`), plain otherwise. `deal`: a
    player's chance by the Agenda dealt counted too (`Tally.for_rules`)."""
    arms = [new] if old is None else [new, old]
    tally = Tally.for_rules(new.rules, *(a.lineup for a in arms), paired=old is not None,
                            deal=deal)

    def consume(first: int, recs: list[dict], blocks: list[Block]) -> None:
        tally.add(blocks[0], None if old is None else blocks[1])

    run_blocks(arms, seed, 0, n, consume, progress, tallies=[tally] * len(arms))
    return tally


# ------------------------------------------------------------------------- sweep tasks


@dataclass(frozen=True)
class Task:
    """Games [first, first + n) of a few points sharing a baseline (a pure function of its
    fields, so a cluster may run it again elsewhere)."""

    seed: int
    first: int
    n: int
    baseline: Point
    points: tuple[Point, ...]  # the points (possibly including the baseline) to count
    threads: int | None = None
    bots: tuple[str, ...] | None = None  # the per-bot rows (default: of these points)
    metrics: str = "sweep"  # which metrics: "sweep" (the tables') or "deal" (`tally`)

    def rows(self) -> tuple[str, ...]:
        if self.bots is not None:
            return self.bots
        return bot_rows(self.baseline.lineup, *(p.lineup for p in self.points))

    def tally(self, rules: Rules, paired: bool, per_game: bool | None = None) -> Tally:
        """A tally of this task's metrics: the sweep tables' (`metrics`), or "deal": who
        wins and a player's chance by the Agenda dealt (`deal_metrics`: the single-seat
        searches')."""
        if self.metrics == "deal":
            return Tally(rules.players, rules.rounds, paired, self.rows(),
                         metric_list=search_metrics(rules.players), per_game=per_game)
        return Tally.for_rules(rules, paired=paired, bots=self.rows(), per_game=per_game)

    @property
    def games(self) -> int:
        return self.n * len(self.points)


def count_task(task: Task, progress: Progress | None = None) -> dict[int, Tally]:
    """One `Tally` per point of the task: its games counted, each paired game by game with
    the baseline's same games (played once for the whole task)."""
    out = {p.index: task.tally(p.rules, paired=True) for p in task.points}
    others = [p for p in task.points if p.index != task.baseline.index]
    b = task.baseline
    arms = [Arm(b.rules, b.lineup)] + [Arm(p.rules, p.lineup) for p in others]
    # measures the baseline's games, game by game (the points' tallies pair with them)
    counter = task.tally(b.rules, paired=False, per_game=True)

    def consume(first: int, recs: list[dict], blocks: list[Block]) -> None:
        base = blocks[0]  # measured by `counter`, each point's by its own tally
        if b.index in out:
            out[b.index].add(base, base)
        for p, block in zip(others, blocks[1:], strict=True):
            out[p.index].add(block, base)

    with KERNEL_LOCK:
        if task.threads:
            import numba

            numba.set_num_threads(max(1, min(task.threads, numba.config.NUMBA_NUM_THREADS)))
        run_blocks(arms, task.seed, task.first, task.n, consume, progress,
                   weight=len(task.points),
                   tallies=[counter] + [out[p.index] for p in others])
    return out


def sweep_rows(by_index: dict[int, Point]) -> tuple[str, ...]:
    """The per-bot rows of a whole sweep (the same for every task, so tallies merge)."""
    return bot_rows(*(p.lineup for p in by_index.values()))


def plan(points: list[Point], by_index: dict[int, Point], seed: int, first: int, n: int,
         task_games: int, threads: int | None) -> list[Task]:
    """Tasks covering games [first, first + n) of `points` (which share nothing else)."""
    bots = sweep_rows(by_index)
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
                tasks.append(Task(seed, start, m, by_index[b], chunk, threads, bots))
                start += m
    return tasks


def default_task_games(games: int, workers: int) -> int:
    """Ranges small enough to spread one point over every worker a few times."""
    per = math.ceil(games / max(1, 3 * workers))
    return max(BLOCK, min(2_000_000, -(-per // BLOCK) * BLOCK))


def next_target(tally: Tally, spec: SweepSpec, done: int) -> int:
    """The next batch of a --ci-width run: up to the games the rates so far say are needed
    (and at least a quarter more than so far). It depends only on the counts, so a rerun, or
    a run on a cluster, stops at the same number of games."""
    need = int(tally.needed_games(spec.ci_width) * 1.05)
    return min(spec.max_games, max(need, done + max(1000, done // 4)))


def tight_enough(tally: Tally, spec: SweepSpec, done: int) -> bool:
    return max(tally.half_widths()) <= spec.ci_width or done >= spec.max_games


def run_points(spec: SweepSpec, todo: list[Point], by_index: dict[int, Point],
               results: Callable, workers: int, task_games: int | None,
               threads: int | None, progress: Progress, on_point, remote: bool) -> int:
    """Play the unfinished points of a sweep in rounds of tasks; `results(tasks)` yields
    (task, tallies) as they finish (in this process or on a cluster). Calls
    `on_point(point, tally)` as each point completes; returns the games played."""
    adaptive = spec.ci_width is not None
    target = {p.index: (min(spec.min_games, spec.max_games) if adaptive else spec.games)
              for p in todo}
    done = {p.index: 0 for p in todo}
    bots = sweep_rows(by_index)
    tallies = {p.index: Tally.for_rules(p.rules, paired=True, bots=bots) for p in todo}
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
            size = task_games or (default_task_games(b - a, workers) if remote else b - a)
            tasks += plan(pts, by_index, spec.seed, a, b - a, size, threads)
        remaining = {p.index: 0 for p in open_points}
        for t in tasks:
            for q in t.points:
                remaining[q.index] += t.n
        for t, result in results(tasks):
            for idx, tally in result.items():
                tallies[idx].merge(tally)
                remaining[idx] -= t.n
            played += t.games
            for p in t.points:
                if remaining[p.index] == 0:
                    done[p.index] = target[p.index]
                    if not adaptive or tight_enough(tallies[p.index], spec, done[p.index]):
                        on_point(p, tallies[p.index])
        still = []
        for p in open_points:
            if adaptive and not tight_enough(tallies[p.index], spec, done[p.index]):
                nxt = next_target(tallies[p.index], spec, done[p.index])
                progress.grow(nxt - target[p.index])
                target[p.index] = nxt
                still.append(p)
        open_points = still
    return played


def warm() -> str:
    """Load (or compile) the kernel in this process; returns the fbsim version."""
    from fbsim.lineup import Lineup as DefaultLineup
    from fbsim.rules import load_rules
    from fbsim.version import __version__

    with KERNEL_LOCK:
        play(Arm(load_rules(), DefaultLineup()), 0, 0, 1)
    return __version__

