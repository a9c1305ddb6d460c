"""Seat win rates with and without the staggered Capital (R-S3), which exists to offset the
first player's advantage."""

from fbsim.experiments.report.findings import seat_lines
from fbsim.experiments.run.spec import SweepSpec

NAME = "first-player"
SUMMARY = "seat win rates with and without staggered Capital (stagger 0, 1, 2)"
X = "stagger"


def spec(games: int) -> SweepSpec:
    return SweepSpec(games=games, seed=1, players=[3, 4, 5, 6], vary={"stagger": [0, 1, 2]},
                     title=SUMMARY)


def findings(t) -> list[str]:
    return seat_lines(t, X)
