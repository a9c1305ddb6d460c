"""What a single-seat search answers, in numbers and words: summary.json's entry for a table
size, OUT/summary.md, the field file's header and the command's printout.

Per Agenda, a player's chance to win given the Agenda dealt (`player_win_rate`, fair share
1/players of the games somebody wins) beside the Agenda's win rate (`win_rate`), both by the
deal (how many seats hold the Agenda); the largest single-seat deviation gain that the
search or an audit confirmed against the field (`seat_deviation_gain`), and the audit's team
deviation gain beside it (`team_deviation_gain`). Deviation gains found by a search are lower
bounds of what exists.
"""

from __future__ import annotations

from pathlib import Path

from fbsim.experiments.metrics.definitions import deck_share
from fbsim.experiments.search.equilibrium.trainer import AGENDAS, DRAW, SeatSearch, played
from fbsim.lineup import lineup_to_toml


def summary(search: SeatSearch) -> dict:
    st = search.state
    k = search.chosen()
    rec, audit = st.iterations[k], st.audit_of(k)
    stats = audit.field if audit is not None else rec.field
    loses = stats["everyone_loses"]["rate"]
    agendas = {}
    for a in AGENDAS:
        s = stats["agendas"][a]
        seat, found_by = rec.responses[a], "search"
        if audit is not None and audit.seat[a].gain["ci"][1] > seat.gain["ci"][1]:
            seat, found_by = audit.seat[a], "audit"
        team = audit.team[a] if audit is not None else None
        agendas[a] = {
            "win_rate": s["win_rate"], "ci": s["ci"],
            "fair": deck_share(search.rules, a) * (1 - loses),
            "player_win_rate": s["player_win_rate"], "player_win_ci": s["player_win_ci"],
            "player_fair": (1 - loses) / search.players,
            # (with k seats dealt, at most one winner: the Agenda wins k x a player's chance)
            "by_deal": {k: {**v, "win_rate": int(k) * v["player_win_rate"]}
                        for k, v in s["by_deal"].items()},
            "seat_deviation_gain": seat.gain["gain"], "seat_gain_ci": seat.gain["ci"],
            "seat_changed_games": seat.gain["changed"], "seat_found_by": found_by,
            "seat_best_response": seat.strategy,
            "team_deviation_gain": None if team is None else team.gain["gain"],
            "team_gain_ci": None if team is None else team.gain["ci"],
            "team_best_response": None if team is None else team.strategy,
        }
    return {"draw": DRAW, "agendas": agendas, "iterations": len(st.iterations),
            "field_iteration": k, "converged": search.converged() is not None,
            "audited": sorted(x.iteration for x in st.audits), "games": st.games,
            "field_games": stats["games"], "tolerance": search.budget.tolerance,
            "collapse": stats["collapse"], "everyone_loses": stats["everyone_loses"],
            "meta_regret": rec.meta_regret,
            "mixture": played({a: rec.mixture[a] for a in AGENDAS}),
            "populations": {a: len(p) for a, p in st.populations.items()},
            "distillations": st.distillations}


def map_lines(players: int, s: dict) -> list[str]:
    """summary.md's section of a table size's map (`basins.map_summary`)."""
    m = s["map"]
    agendas = [a for a in AGENDAS if a in s["agendas"]]
    lines = ["", f"## {players} players: the map of equilibria ({m['starts']} cold starts)", "",
             f"Seeds {m['starts_played'][0]['seed']} to {m['starts_played'][-1]['seed']}, each "
             "a search from scratch (`starts/`); two converged answers are one equilibrium "
             f"when every Agenda's chance and the Collapse rate are within "
             f"{100 * m['distance']:g} points. Stopped: {m['stopped'] or 'not yet (resume it)'}."
             f" Unsettled (not converged): {m['unsettled']['starts']} of {m['starts']}.", "",
             "| equilibrium | basin share | starts | " + " | ".join(agendas)
             + " | Collapse | fair | the searcher held | spread: outcome / strategy |",
             "|---" * (len(agendas) + 7) + "|"]
    for i, e in enumerate(s["equilibria"], 1):
        held = {None: "-", True: "yes", False: "no"}[e["searcher_held"]]
        lines.append(
            f"| {i} (seed {e['representative']}) | {pc(e['basin_share'])} "
            f"[{pc(e['basin_ci'][0])}, {pc(e['basin_ci'][1])}] | {e['starts']} | "
            + " | ".join(pc(e["agendas"][a]["player_win_rate"]) for a in agendas)
            + f" | {pc(e['collapse'])} | {'yes' if e['fair'] else 'no'} | {held} | "
              f"{100 * e['outcome_spread']:.1f} / {e['strategy_spread']:.2f} |")
    verdict = ("fair: every equilibrium" if m["fair"] else "not fair: not every equilibrium")
    lines += ["", f"Over the map the table size is {verdict} of basin share "
              f"{pc(m['fair_basin'])} or more puts every Agenda's chance to win as a player "
              f"(its whole 95% interval) within {100 * m['fair_band']:g} points of 1/players."]
    return lines


def pc(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def interval(r: dict, key: str, ci: str) -> str:
    lo, hi = r[ci]
    return f"{pc(r[key])} [{pc(lo)}, {pc(hi)}]"


def gain(value: float | None, ci: list | None) -> str:
    if value is None:
        return "-"
    return f"{100 * value:+.1f} [{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]"


def status(s: dict) -> str:
    searched = s.get("searcher_audit")
    if s["converged"]:
        return (f"converged: every single-seat gain <= {100 * s['tolerance']:.0f} points "
                "(upper end of its 95% interval), by the search and an audit on fresh seeds"
                + (" and by the searcher (out of the family)" if searched else ""))
    if searched and not searched["held"]:
        return (f"not converged: the searcher (out of the planner family) gains more than "
                f"{100 * s['tolerance']:.0f} points against the field of iteration "
                f"{s['field_iteration']}, an equilibrium of the planner family at most")
    return (f"not converged: the least exploitable field found (iteration "
            f"{s['field_iteration']}), an approximate equilibrium")


def deal_text(r: dict) -> str:
    """A player's chance (and the Agenda's win rate) by how many seats hold the Agenda."""
    return ", ".join(f"{k} dealt {pc(v['player_win_rate'])} (Agenda {pc(v['win_rate'])})"
                     for k, v in sorted(r["by_deal"].items(), key=lambda x: int(x[0])))


def searcher_text(r: dict) -> str:
    """The searcher's gain (an out-of-family oracle), where the field was audited by it."""
    if r.get("search_gain") is None:
        return ""
    return f", the searcher {gain(r['search_gain'], r['search_gain_ci'])}"


def field_file_text(search: SeatSearch, s: dict) -> str:
    lines = [f"fbsim field: the single-seat equilibrium found by `fbsim equilibrium` at "
             f"{search.players} players (the game as played: every seat draws its own "
             "planner)", f"{s['iterations']} iterations, {s['games']:,} games; "
             + status(s), ""]
    for a, r in s["agendas"].items():
        chance = interval(r, "player_win_rate", "player_win_ci")
        lines.append(f"{a}: a player's chance to win {chance} (fair {pc(r['player_fair'])}; "
                     f"by the deal: {deal_text(r)}); the Agenda wins {pc(r['win_rate'])}; "
                     "single-seat deviation gain "
                     f"{gain(r['seat_deviation_gain'], r['seat_gain_ci'])}, "
                     f"team {gain(r['team_deviation_gain'], r['team_gain_ci'])} points"
                     + searcher_text(r))
    if s.get("distillations"):
        lines += ["", f"The searcher's departures were distilled into the planners' tables "
                  f"(r<round>_<band>) {len(s['distillations'])} times; the search went on "
                  "from each (summary.md lists every cell)."]
    lines += ["", "Deviation gains are the largest a search found: lower bounds of what "
              "exists.", "Each seat draws one planner of its Agenda's mixture with these "
              "weights, every game.", "Play it: fbsim simulate --lineup THIS_FILE --players "
              f"{search.players}"]
    return lineup_to_toml(search.field(search.state.iterations[s["field_iteration"]].mixture),
                          lines)


def summary_md_text(doc: dict) -> str:
    """OUT/summary.md's text: every table size's answer in words and numbers."""
    lines = ["# Balance at a single-seat equilibrium (the game as played)", "",
             "Found by `fbsim equilibrium` (docs/strong-play.md): every seat draws "
             "its own planner from its Agenda's mixture, and no single player gains more "
             "than the tolerance by switching strategy alone, by the search's best responses "
             "and an audit on fresh seeds. A player's chance is the win rate of a seat dealt "
             "the Agenda (fair: 1/players of the games somebody wins); the Agenda's win rate "
             "counts a win by any of its seats. Deviation gains are paired on the same games, "
             "95% intervals in brackets, and are lower bounds: a search finds what it "
             "finds. The searcher's gain (where audited: `fbsim equilibrium "
             "--searcher-games`) is an oracle out of the planner family: one seat searching "
             "its commitments by rollouts from its own view.", "",
             "| players | Agenda | a player's chance | fair | by the deal: k dealt, a "
             "player's chance (the Agenda's) | Agenda wins | single-seat gain | team gain | "
             "the searcher's gain |",
             "|---|---|---|---|---|---|---|---|---|"]
    for n, s in doc["players"].items():
        if s.get("draw") != DRAW:
            continue
        for a in AGENDAS:
            r = s["agendas"][a]
            lines.append(f"| {n} | {a} | {interval(r, 'player_win_rate', 'player_win_ci')} | "
                         f"{pc(r['player_fair'])} | {deal_text(r)} | "
                         f"{interval(r, 'win_rate', 'ci')} | "
                         f"{gain(r['seat_deviation_gain'], r['seat_gain_ci'])} | "
                         f"{gain(r['team_deviation_gain'], r['team_gain_ci'])} | "
                         f"{gain(r.get('search_gain'), r.get('search_gain_ci'))} |")
    lines += ["", "| players | iterations | field of iteration | audited | games | converged "
              "| collapse | everyone loses |", "|---|---|---|---|---|---|---|---|"]
    for n, s in doc["players"].items():
        if s.get("draw") != DRAW:
            continue
        lines.append(f"| {n} | {s['iterations']} | {s['field_iteration']} | "
                     f"{', '.join(map(str, s['audited'])) or '-'} | {s['games']:,} | "
                     f"{'yes' if s['converged'] else 'no'} | "
                     f"{interval(s['collapse'], 'rate', 'ci')} | "
                     f"{interval(s['everyone_loses'], 'rate', 'ci')} |")
    for n, s in doc["players"].items():
        if s.get("draw") == DRAW and s.get("equilibria") is not None:
            lines += map_lines(int(n), s)
    for n, s in doc["players"].items():
        if s.get("draw") == DRAW and s.get("distillations"):
            lines += ["", f"## {n} players: the searcher's departures distilled", "",
                      *distillation_lines(s["distillations"])]
    return "\n".join(lines) + "\n"


def write_summary_md(out: Path, doc: dict) -> Path:
    """OUT/summary.md (`summary_md_text`)."""
    path = Path(out) / "summary.md"
    path.write_text(summary_md_text(doc))
    return path


def distillation_lines(records: list[dict]) -> list[str]:
    """Each distillation (`trainer.SeatSearch.distill`): what the searcher gained before it and
    every table cell it changed."""
    from fbsim.experiments.search.distill import Change

    lines = []
    for k, d in enumerate(records):
        before = ", ".join(f"{a} {gain(g['search_gain'], g['search_gain_ci'])}"
                           for a in AGENDAS if (g := d["searcher_before"].get(a)))
        lines.append(f"{k + 1}. After iteration {d['after'] - 1} (the field of iteration "
                     f"{d['field_iteration']}; the searcher's gains {before or '-'} points), "
                     f"{d['changed']} table cells changed (each changed component's copy "
                     "taking a share of its weight):")
        for a in AGENDAS:  # (in the order of declaration: a state read back has its keys
            x = d["agendas"][a]  # sorted)
            share = x["departures"] / x["decisions"] if x["decisions"] else 0.0
            lines.append(f"   - {a} (the searcher departed in {100 * share:.0f}% of "
                         f"{x['decisions']:,} commitments; estimated "
                         f"{100 * x['estimated_gain']:+.1f} points):")
            lines += [f"     - {Change(**c).text()}" for c in x["changes"]] or \
                ["     - no cell changed"]
    return lines


def format_summary(players: int, s: dict) -> str:
    """The command's printout for one table size."""
    lines = [f"{players} players (single-seat game, draw = seat): {s['iterations']} "
             f"iterations, {s['games']:,} games; {status(s)}"]
    for a in AGENDAS:
        r = s["agendas"][a]
        lines.append(f"  {a:<16} a player wins {interval(r, 'player_win_rate', 'player_win_ci')}"
                     f" (fair {pc(r['player_fair'])}); the Agenda {pc(r['win_rate'])}; "
                     f"single-seat gain {gain(r['seat_deviation_gain'], r['seat_gain_ci'])}, "
                     f"team {gain(r['team_deviation_gain'], r['team_gain_ci'])} points"
                     + searcher_text(r))
        lines.append(f"  {'':<16} by the deal: {deal_text(r)}")
    lines.append(f"  collapse {interval(s['collapse'], 'rate', 'ci')}; everyone loses "
                 f"{interval(s['everyone_loses'], 'rate', 'ci')}")
    if s.get("equilibria") is not None:
        m = s["map"]
        lines.append(f"  the map: {len(s['equilibria'])} equilibria in {m['starts']} cold "
                     f"starts ({m['unsettled']['starts']} unsettled); the answer above is "
                     + ("the largest basin's" if s["equilibria"] else
                        "the first start's (none converged)")
                     + "; stopped: " + (m["stopped"] or "not yet"))
        for i, e in enumerate(s["equilibria"], 1):
            lines.append(f"    {i}. basin {pc(e['basin_share'])} [{pc(e['basin_ci'][0])}, "
                         f"{pc(e['basin_ci'][1])}] (seed {e['representative']}): " + ", ".join(
                             f"{a} {pc(e['agendas'][a]['player_win_rate'])}" for a in AGENDAS)
                         + f", Collapse {pc(e['collapse'])}"
                         + ("; fair" if e["fair"] else ""))
    return "\n".join(lines)
