"""One seat played by the hoarder (all WORKS, never buys, masks or claims) against the default
lineup, seat by seat: is hoarding a dominant strategy?"""

from fbsim.experiments.report.findings import hoarder_lines
from fbsim.experiments.run.spec import SweepSpec

NAME = "hoarder"
SUMMARY = "a hoarder in each seat against the default lineup"
X = "seat_bot"


def spec(games: int) -> SweepSpec:
    points = []
    for n in (3, 4, 5, 6):
        points.append({"players": n, "seat_bot": ""})
        points += [{"players": n, "seat_bot": f"{k}=hoarder"} for k in range(n)]
    return SweepSpec(games=games, seed=1, players=[3, 4, 5, 6], points=points,
                     baseline={"seat_bot": ""}, title=SUMMARY)


def findings(t) -> list[str]:
    return hoarder_lines(t)
