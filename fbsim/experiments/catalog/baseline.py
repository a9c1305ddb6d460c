"""Default rules and the default lineup at every table size."""

from fbsim.experiments.report.findings import agenda_line, collapse_line
from fbsim.experiments.run.spec import SweepSpec

NAME = "baseline"
SUMMARY = "default rules, default lineup, 3 to 6 players"
X = "players"


def spec(games: int) -> SweepSpec:
    return SweepSpec(games=games, seed=1, players=[3, 4, 5, 6], title=SUMMARY)


def findings(t) -> list[str]:
    out = []
    for n in sorted(t["outcomes"]["players"].unique()):
        p = int(t["outcomes"][t["outcomes"]["players"] == n]["point"].iloc[0])
        out.append(f"{n} players: {agenda_line(t, p)}; {collapse_line(t, p)}")
    return out
