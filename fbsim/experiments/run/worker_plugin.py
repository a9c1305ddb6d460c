"""The Dask worker plugin that warms fbsim's kernel on every worker as it joins."""

from __future__ import annotations

from distributed.diagnostics.plugin import WorkerPlugin


class WarmKernel(WorkerPlugin):
    """Loads (or compiles) the numba kernel once per worker process, not in its first task."""

    name = "fbsim-warm-kernel"

    def setup(self, worker):
        from fbsim.experiments.run.runner import warm

        warm()
