"""The baseline schedule (D1) shifted by a per-round offset: how hot must the world run
before it collapses, and how does the balance of the Agendas move with it?"""

from fbsim.experiments.report.findings import by_size_sweep
from fbsim.experiments.run.spec import SweepSpec

NAME = "baseline-schedule"
SUMMARY = "baseline offset -4..+10 ppm per round (collapse and Agenda balance)"
X = "baseline_offset"


def spec(games: int) -> SweepSpec:
    return SweepSpec(games=games, seed=1, players=[3, 4, 5, 6],
                     vary={"baseline_offset": list(range(-4, 11, 2))}, title=SUMMARY)


def findings(t) -> list[str]:
    return by_size_sweep(t, X)
