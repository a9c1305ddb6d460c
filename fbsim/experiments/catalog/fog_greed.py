"""The Fog-grabber's greed, from honest (claims only its own masked-burn money) to taking the
whole pot: does the unaudited pot reward over-claiming?"""

from fbsim.experiments.report.findings import by_size_sweep
from fbsim.experiments.run.spec import SweepSpec

NAME = "fog-greed"
SUMMARY = "Fog-grabber greed from 0 (honest) to 1 (whole pot)"
X = "bots.fog-grabber.greed"


def spec(games: int) -> SweepSpec:
    return SweepSpec(games=games, seed=1, players=[3, 4, 5, 6],
                     vary={X: [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]}, title=SUMMARY)


def findings(t) -> list[str]:
    return by_size_sweep(t, X)
