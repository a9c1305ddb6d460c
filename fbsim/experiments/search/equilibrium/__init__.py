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

from fbsim.errors import UsageError, cut
from fbsim.experiments.search.equilibrium import basins, team
from fbsim.experiments.search.equilibrium import summary as seat_summary
from fbsim.experiments.search.equilibrium.state import (
    PUBLISHED_WAY_OUT,
    check_state_file,
    publish,
    read_published,
    write_text,
)
from fbsim.experiments.search.equilibrium.trainer import Budget, SeatSearch

DRAWS = ("seat", "agenda")
TeamBudget = team.Budget


def run_equilibrium(players: list[int], out: str | Path, seed: int = 0,
                    budget: Budget | TeamBudget | None = None, rules: str | None = None,
                    sets: dict | None = None, client=None, progress=None, echo=None,
                    force: bool = False, draw: str = "seat",
                    start_from: str | Path | None = None, searcher_games: int = 0,
                    searcher_knobs=None) -> dict:
    """Search every table size of the game `draw` names; write OUT/pN.toml per size,
    OUT/summary.json (merged with the sizes already there) and OUT/summary.md. Returns
    {"players": {n: summary}}. `start_from`: a finished single-seat search's folder to warm
    start each table size from (`trainer.warm_start`). `searcher_games` (seat-games per
    Agenda, 0: none): the field's audit by the searcher too (`searcher_audit`), whose gains
    go beside the planner family's and count in `converged`."""
    check_options(draw, budget, start_from, searcher_games)
    check_folders(out, players)
    if draw == "agenda":
        return team.run_equilibrium(players, out, seed, budget, rules, sets, client, progress,
                                    echo, force)
    out = Path(out)
    budget = budget or Budget()
    doc = {"players": {}}
    for n in players:
        doc = solve_size(n, out, seed, budget, rules, sets, client, progress, echo, force,
                         start_from, searcher_games, searcher_knobs)[2]
    return doc


def solve_size(n: int, out: Path, seed: int, budget: Budget, rules: str | None,
               sets: dict | None, client=None, progress=None, echo=None, force: bool = False,
               start_from: str | Path | None = None, searcher_games: int = 0,
               searcher_knobs=None) -> tuple[SeatSearch, dict, dict]:
    """One table size of `run_equilibrium`'s single-seat game: searched (and audited by the
    searcher, distilled where asked), OUT/pN.toml written and its summary merged into
    OUT/summary.json and OUT/summary.md. Returns (the search, its summary, the document)."""
    if not 3 <= n <= 6:
        raise UsageError(f"--players: table sizes are 3 to 6, got {n}")
    s = SeatSearch(n, out, seed, budget, rules, sets or {}, client, echo, force, start_from)
    began = time.monotonic()
    s.run()
    result = seat_summary.summary(s)
    if searcher_games:
        searcher_audit(s, result, searcher_games, searcher_knobs, progress, echo)
        while not result["searcher_audit"]["held"] and \
                len(s.state.distillations) < budget.distill:
            if not s.distill(searcher_games, searcher_knobs or default_knobs(),
                             searched_gains(result))["changed"]:
                break  # (the searcher's departures agree on no cell: nothing to add)
            s.run()
            result = seat_summary.summary(s)
            searcher_audit(s, result, searcher_games, searcher_knobs, progress, echo)
        best = least_searched(s.state.searched)
        if best is not None and best["field_iteration"] != result["field_iteration"]:
            # (a later phase the searcher beats by more: the answer is the earlier one)
            s.answer = best["field_iteration"]
            result = seat_summary.summary(s)
            apply_audit(result, best)
            if echo:
                echo(f"  {n} players: the answer is the field of iteration "
                     f"{best['field_iteration']} (phase {best['phase']}), the one the "
                     "searcher gains least against")
    if echo:  # (the time is not kept: the summaries are the same bytes on any machine)
        echo(f"  {n} players: {result['iterations']} iterations, "
             f"{result['games']:,} games; this run took {time.monotonic() - began:.0f} s")
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / f"p{n}.toml", seat_summary.field_file_text(s, result))
    doc = publish(out, n, result)
    seat_summary.write_summary_md(out, doc)
    return s, result, doc


def run_map(players: list[int], out: str | Path, seed: int = 0, budget: Budget | None = None,
            rules: str | None = None, sets: dict | None = None, client=None, progress=None,
            echo=None, force: bool = False, searcher_games: int = 0, searcher_knobs=None,
            least: int = 16, most: int = 48, new_within: int = basins.NEW_WITHIN,
            distance: float = basins.DISTANCE) -> dict:
    """The map of each table size's single-seat equilibria (`basins`): cold starts on seeds
    seed, seed + 1, ... into OUT/starts/pN/s<seed>/ (each resumed where it stopped) until
    the map stops (`basins.stop_reason`); after each start, OUT/pN.toml (the largest
    basin's representative) and its summary with the map so far (`equilibria`, `map`) in
    OUT/summary.json and OUT/summary.md. Returns {"players": {n: summary}}."""
    from fbsim.experiments.run.provenance import check_places
    from fbsim.rules import rules_hash

    budget = budget or Budget()
    check_map_options(budget, searcher_games, least, most, new_within, distance)
    out = Path(out)
    check_folders(out, players, mapping=True)
    doc = read_published(out)
    for n in players:  # (every start's folder and state checked before any start runs)
        for k in range(most):
            folder = basins.start_folder(out, n, seed + k)
            check_places(folders=[folder])
            if folder.is_dir():
                check_folders(folder, [n])
                if (folder / f"p{n}" / "state.json").is_file():
                    check_state_file(folder / f"p{n}" / "state.json")
    for n in players:
        starts, results = [], {}
        for k in range(most):
            s_seed = seed + k
            folder = basins.start_folder(out, n, s_seed)
            if echo:
                echo(f"  {n} players: cold start {k + 1} (seed {s_seed}), at least {least}, "
                     f"at most {most}")
            search, result, _ = solve_size(n, folder, s_seed, budget, rules, sets, client,
                                           progress, echo, force, None, searcher_games,
                                           searcher_knobs)
            starts.append(basins.start_of(s_seed, search, result))
            results[s_seed] = result
            part = basins.map_summary(starts, least, most, new_within, distance,
                                      rules_hash=rules_hash(search.rules))
            rep = (part["equilibria"][0]["representative"] if part["equilibria"]
                   else starts[0].seed)
            write_text(out / f"p{n}.toml",
                       (basins.start_folder(out, n, rep) / f"p{n}.toml").read_text())
            doc = publish(out, n, {**results[rep], **part})
            seat_summary.write_summary_md(out, doc)
            if part["map"]["stopped"] is not None:
                if echo:
                    echo(f"  {n} players: {len(part['equilibria'])} equilibria in "
                         f"{len(starts)} starts; stopped: {part['map']['stopped']}")
                break
    return doc


def check_map_options(budget: Budget, searcher_games: int, least: int, most: int,
                      new_within: int = basins.NEW_WITHIN,
                      distance: float = basins.DISTANCE) -> None:
    """What `run_map` cannot do, refused (UsageError) before any game or file: its bounds
    (`basins.check_map`), a distillation (each start is a cold search of the planner
    family), the single-seat options' own refusals (`check_options`)."""
    basins.check_map(least, most, new_within, distance)
    check_options("seat", budget, None, searcher_games)
    if budget.distill:
        raise UsageError("--distill: not with --map (each start is a cold search of the "
                         "planner family; distil the map's answer afterwards)")


def check_folders(out: str | Path, players: list[int], mapping: bool = False) -> None:
    """Each table size's search folder (OUT/pN, where its state.json is kept) a folder or
    absent, and OUT/summary.json, which each finished size is merged into, readable
    (`read_published`): UsageError naming the one that is not, before any game or file.
    A map of equilibria (`mapping`: `run_map`) and a single search are not written into
    each other's folder: neither replaces the other's field."""
    from fbsim.experiments.run.provenance import check_places

    doc = read_published(out)
    for n, entry in doc["players"].items():  # (each entry as `publish` merged it)
        missing = [k for k in PUBLISHED_ENTRY if k not in entry]
        if missing:
            raise UsageError(f"{Path(out) / 'summary.json'}: players.{n}.{missing[0]}: "
                             f"missing (not a table size's summary fbsim wrote); "
                             f"{PUBLISHED_WAY_OUT}")
        # (summary.md is written of every size after a search: a size it cannot be written of
        # would fail only then, after the games)
        text = team.summary_md_text if entry.get("draw") == "agenda" else \
            seat_summary.summary_md_text
        try:
            text({"players": {n: entry}})
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
            raise UsageError(f"{Path(out) / 'summary.json'}: players.{n}: not a table size's "
                             f"summary fbsim wrote ({type(e).__name__}: {cut(str(e))}); "
                             f"{PUBLISHED_WAY_OUT}") from None
    for n in players:
        entry = doc["players"].get(str(n))
        if mapping and ((Path(out) / f"p{n}").exists() or
                        (entry is not None and "map" not in entry)):
            raise UsageError(f"{Path(out)}: holds a single search at {n} players, not a map "
                             "of equilibria; give --map another --out")
        if not mapping and entry is not None and "map" in entry:
            raise UsageError(f"{Path(out)}: holds a map of equilibria at {n} players; run it "
                             "again with --map to resume it, or give another --out")
    starts = [Path(out) / "starts", *(Path(out) / "starts" / f"p{n}" for n in players)]
    check_places(files=[Path(out) / f"p{n}.toml" for n in players],
                 folders=[Path(out) / f"p{n}" for n in players] + (starts if mapping else []))
    for n in players:  # (a file of the user's own in a field file's place is not replaced)
        field = Path(out) / f"p{n}.toml"
        if field.is_file() and not field.read_text(errors="replace").startswith(FIELD_HEAD):
            raise UsageError(f"{field}: not a field file fbsim wrote (it starts otherwise); "
                             "move it away, or give another --out")


FIELD_HEAD = "# fbsim field: "  # the first words of every pN.toml the searches write
# the keys every table size's summary holds (`seat_summary`, `team`), whatever else it has
PUBLISHED_ENTRY = ("agendas", "audited", "collapse", "converged", "draw", "games",
                   "iterations", "mixture", "populations", "tolerance")


def check_options(draw: str, budget: Budget | TeamBudget | None = None,
                  start_from: str | Path | None = None, searcher_games: int = 0) -> None:
    """What `run_equilibrium`'s options cannot do together, refused (UsageError) before any
    game is played or any file written: a warm start or distillation outside the
    single-seat search, a distillation without the searcher's audit (whose departures it
    distils)."""
    if draw not in DRAWS:
        raise UsageError(f"--draw: one of {', '.join(DRAWS)}, got {draw!r}")
    if start_from is not None and draw != "seat":
        raise UsageError("--from: a warm start is for the single-seat search (--draw seat)")
    distill = getattr(budget, "distill", 0)
    if distill and draw != "seat":
        raise UsageError("--distill: only with --draw seat")
    if distill and not searcher_games:
        raise UsageError(f"--distill {distill}: distils the searcher's departures, so it needs "
                         "the searcher's audit: give --searcher-games above 0, or leave "
                         "--distill out")


def default_knobs():
    from fbsim.experiments.search.searcher import Knobs

    return Knobs()


def searched_gains(result: dict) -> dict:
    """Each Agenda's searcher gain and interval in a summary (what asked for a
    distillation)."""
    return {a: {"search_gain": r["search_gain"], "search_gain_ci": r["search_gain_ci"]}
            for a, r in result["agendas"].items() if r.get("search_gain") is not None}


def searcher_audit(s: SeatSearch, result: dict, seat_games: int, knobs, progress, echo) -> None:
    """The out-of-family audit of the answer's field: the searcher's single-seat gain per
    Agenda at two budgets (`fbsim.experiments.search.searcher.search_gains`, on a seed of
    its own for each phase of the search), written beside the planner family's gains
    (`search_gain`, `search_gain_ci`, `search_gain_by_rollouts`); the field is converged only
    if it holds against both."""
    from fbsim.experiments.search.equilibrium.seeds import seed_of
    from fbsim.experiments.search.searcher import gains_summary, search_gains
    knobs = knobs or default_knobs()
    k = result["field_iteration"]
    phase = len(s.state.distillations)
    seed = seed_of(s.seed, s.players, "audit-searcher", phase)
    key = {"phase": phase, "field_iteration": k, "seed": seed, "seat_games": seat_games,
           "knobs": knobs.as_dict()}
    done = next((x for x in s.state.searched if {f: x[f] for f in key} == key), None)
    if done is None:  # (a finished search run again reads its audit back)
        field = s.field(s.state.iterations[k].mixture)
        gains = search_gains(s.rules, field, seed, seat_games=seat_games, knobs=knobs,
                             progress=progress)
        audit = gains_summary(gains, knobs, seed, "the answer's field", seat_games,
                              s.budget.tolerance)
        done = {**key, "held": audit["held"], "budgets": audit["budgets"],
                "worst": max(max(r["ci"][1] for r in g["by_rollouts"].values())
                             for g in audit["agendas"].values()),
                "agendas": {a: {"search_gain": g["search_gain"],
                                "search_gain_ci": g["search_gain_ci"],
                                "search_gain_by_rollouts": g["by_rollouts"],
                                "search_held": g["held"]}
                            for a, g in audit["agendas"].items()}}
        s.state.searched.append(done)
        s.save()
    apply_audit(result, done)
    audit = result["searcher_audit"]
    if echo:
        echo(f"  {s.players} players: the searcher's audit: " + ", ".join(
            f"{a} {100 * g['search_gain']:+.1f} [{100 * g['search_gain_ci'][0]:+.1f}, "
            f"{100 * g['search_gain_ci'][1]:+.1f}]" for a, g in in_order(done["agendas"]))
             + (" (holds)" if audit["held"] else " (does not hold: not converged)"))


def in_order(by_agenda: dict) -> list[tuple[str, dict]]:
    """A dict by Agenda in the Agendas' order of declaration (a state read back from JSON
    has its keys sorted)."""
    from fbsim.game.layout import AGENDA_NAMES

    return [(a, by_agenda[a]) for a in AGENDA_NAMES if a in by_agenda]


def apply_audit(result: dict, done: dict) -> None:
    """A searcher's audit (an entry of `State.searched`) written into a summary: its gains
    beside the family's, and `converged` only if it held."""
    for a, g in done["agendas"].items():
        result["agendas"][a].update(g)
    result["searcher_audit"] = {k: done[k] for k in ("seed", "seat_games", "knobs",
                                                     "budgets", "held")}
    result["converged"] = bool(result["converged"] and done["held"])


def least_searched(searched: list[dict]) -> dict | None:
    """The audited field the searcher gains least against (the smallest upper end of its
    largest gain at any budget; ties: the later phase), or None."""
    if not searched:
        return None
    return min(reversed(searched), key=lambda x: x["worst"])


def format_summary(players: int, s: dict) -> str:
    if s.get("draw") == "seat":
        return seat_summary.format_summary(players, s)
    return team.format_summary(players, s)


__all__ = ["Budget", "TeamBudget", "check_folders", "check_options", "format_summary",
           "check_map_options", "run_equilibrium", "run_map", "solve_size"]
