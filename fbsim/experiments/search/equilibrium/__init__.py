"""`fbsim equilibrium`: balance measured at an equilibrium of strong strategies.

Two games, by how a field's mixtures are drawn (`fbsim.policies.field`):

- **the game as played** (`draw = "seat"`, the default): every seat draws its own planner from
  its Agenda's mixture and each player is alone in seeking the one win (R-E3, R-E4); the
  equilibrium is symmetric, no single seat gains by switching strategy. The search is split as
  PSRO splits it: `trainer` (the loop), `oracle` (best responses), `metasolver` (the
  meta-solver), `state` (typed, saved as JSON), `seeds` (every seed, derived in one place),
  `summary` (what it answers);
- **the team game** (`draw = "agenda"`): one draw per Agenda, shared by its seats, the
  Agenda's win counted, every seat of an Agenda one player (`team`).

`run_equilibrium` searches each table size and writes OUT/pN.toml (the field), OUT/summary.json
and OUT/summary.md; interrupted searches resume from OUT/pN/state.json.
"""

from __future__ import annotations

import time
from pathlib import Path

from fbsim.errors import UsageError
from fbsim.experiments.search.equilibrium import summary as seat_summary
from fbsim.experiments.search.equilibrium import team
from fbsim.experiments.search.equilibrium.state import publish
from fbsim.experiments.search.equilibrium.trainer import Budget, SeatSearch

DRAWS = ("seat", "agenda")
TeamBudget = team.Budget


def run_equilibrium(players: list[int], out: str | Path, seed: int = 0,
                    budget: Budget | TeamBudget | None = None, rules: str | None = None,
                    sets: dict | None = None, client=None, progress=None, echo=None,
                    force: bool = False, draw: str = "seat",
                    start_from: str | Path | None = None) -> dict:
    """Search every table size of the game `draw` names; write OUT/pN.toml per size,
    OUT/summary.json (merged with the sizes already there) and OUT/summary.md. Returns
    {"players": {n: summary}}. `start_from`: a finished single-seat search's folder to warm
    start each table size from (`trainer.warm_start`)."""
    if draw not in DRAWS:
        raise UsageError(f"--draw: one of {', '.join(DRAWS)}, got {draw!r}")
    if start_from is not None and draw != "seat":
        raise UsageError("--from: a warm start is for the single-seat search (--draw seat)")
    if draw == "agenda":
        return team.run_equilibrium(players, out, seed, budget, rules, sets, client, progress,
                                    echo, force)
    out = Path(out)
    budget = budget or Budget()
    doc = {"players": {}}
    for n in players:
        if not 3 <= n <= 6:
            raise UsageError(f"--players: table sizes are 3 to 6, got {n}")
        s = SeatSearch(n, out, seed, budget, rules, sets or {}, client, echo, force,
                       start_from)
        began = time.monotonic()
        s.run()
        result = seat_summary.summary(s)
        if echo:  # (the time is not kept: the summaries are the same bytes on any machine)
            echo(f"  {n} players: {result['iterations']} iterations, "
                 f"{result['games']:,} games; this run took {time.monotonic() - began:.0f} s")
        out.mkdir(parents=True, exist_ok=True)
        (out / f"p{n}.toml").write_text(seat_summary.field_file_text(s, result))
        doc = publish(out, n, result)
        seat_summary.write_summary_md(out, doc)
    return doc


def format_summary(players: int, s: dict) -> str:
    if s.get("draw") == "seat":
        return seat_summary.format_summary(players, s)
    return team.format_summary(players, s)


__all__ = ["Budget", "TeamBudget", "format_summary", "run_equilibrium"]
