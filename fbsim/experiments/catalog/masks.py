"""Masks per player from 0 to 4: how much do anonymous actions help the Accelerationist?"""

from fbsim.experiments.report.findings import by_size_sweep
from fbsim.experiments.run.spec import SweepSpec

NAME = "masks"
SUMMARY = "0 to 4 Masks per player"
X = "masks"


def spec(games: int) -> SweepSpec:
    return SweepSpec(games=games, seed=1, players=[3, 4, 5, 6], vary={"masks": [0, 1, 2, 3, 4]},
                     title=SUMMARY)


def findings(t) -> list[str]:
    return by_size_sweep(t, X)
