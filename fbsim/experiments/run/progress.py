"""A progress bar on stderr (rate in games/s and ETA) for long runs."""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text


class _Rate(ProgressColumn):
    def render(self, task):
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.0f} games/s", style="progress.data.speed")


class RichProgress:
    """Implements fbsim.experiments.run.sweep.Progress with a rich bar on stderr."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self._p: Progress | None = None
        self._task = None
        self._t0 = 0.0

    def start(self, total: int, description: str) -> None:
        self._p = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                           _Rate(), TimeElapsedColumn(), TextColumn("eta"),
                           TimeRemainingColumn(), console=self.console, transient=False)
        self._p.start()
        self._task = self._p.add_task(description, total=total)
        self._t0 = time.perf_counter()

    def advance(self, games: int) -> None:
        if self._p is not None:
            self._p.advance(self._task, games)

    def grow(self, games: int) -> None:
        if self._p is not None:
            t = self._p.tasks[0]
            self._p.update(self._task, total=(t.total or 0) + games)

    def close(self) -> None:
        if self._p is not None:
            self._p.stop()
            self._p = None
