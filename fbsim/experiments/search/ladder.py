"""The skill ladder: how much skill pays, one seat at a time, against a field.

One seat climbs four rungs of skill while every other seat plays the field (the single-seat
equilibrium of `fbsim equilibrium`, or any lineup): the **random** bot, the Agenda's **default
bot** (`fbsim.lineup.DEFAULT_BY_AGENDA`), the **field**'s own strategy, and the **searcher**
(`fbsim.experiments.search.searcher`: the field's strategy with every commitment searched by
rollouts from its own view). At each rung the ladder gives each Agenda's chance to win as a
player (the wins of a seat over the games it was dealt the Agenda) and the rung's gain over
the field's own strategy on the same games (paired, 95% score interval; the seat is rotated
over the seats as in `fbsim.experiments.search.deviation`). Against 1/players, the ladder
says how far below fair an unskilled player sits and how far above the field a strong one
climbs; the searcher's rung is a lower bound of what skill can reach.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from fbsim import jsonfile
from fbsim.errors import UsageError, cut, shown
from fbsim.experiments.metrics.stats import wilson
from fbsim.experiments.run.provenance import base_provenance, now_iso, write_table
from fbsim.experiments.run.runner import NoProgress
from fbsim.experiments.search.deviation import Deviant, evaluate
from fbsim.experiments.search.equilibrium.seeds import seed_of
from fbsim.experiments.search.equilibrium.state import KNOB_KEYS, MAX_COUNT, write_json, write_text
from fbsim.experiments.search.searcher import Knobs, search_gains
from fbsim.game import layout as L
from fbsim.inputs import Key, check, interval, within
from fbsim.limits import MAX_SEED
from fbsim.lineup import DEFAULT_BY_AGENDA, Entry, Lineup, lineup_hash
from fbsim.rules import Rules, rules_hash

RUNGS = ("random", "default bot", "field", "searcher")
DEFAULT_GAMES = 20_000  # games per seat range of the first three rungs
DEFAULT_SEAT_GAMES = 3_000  # the searcher's seat-games per Agenda


@dataclass(frozen=True)
class Rung:
    """One Agenda at one rung: a player's chance `rate` (Wilson interval `ci`, over the `n`
    seat-games dealt the Agenda) and its `gain` over the field's own strategy on the same
    games (`gain_ci`: paired 95% interval; 0 at the field's rung)."""

    players: int
    agenda: str
    rung: str
    bot: str
    rate: float
    ci: list[float]
    gain: float
    gain_ci: list[float]
    n: int

    def as_dict(self) -> dict:
        return asdict(self)


def ladder(rules: Rules, field: Lineup, seed: int, games: int = DEFAULT_GAMES,
           seat_games: int = DEFAULT_SEAT_GAMES, knobs: Knobs | None = None,
           threads: int | None = None, progress=None) -> list[Rung]:
    """Every Agenda's rungs at one table size (`RUNGS` order, Agendas in `L.AGENDA_NAMES`
    order). The first three rungs are played on the games of seed `seed_of(seed, players,
    "ladder")` (`games` per seat range), the searcher on its own (`search_gains` of seed
    `seed_of(seed, players, "ladder-searcher")`, `seat_games` per Agenda, `knobs`' budget)."""
    n = rules.players
    knobs = knobs or Knobs(rollouts=64)
    progress = progress or NoProgress()
    deviants = []
    for a in L.AGENDA_NAMES:
        deviants.append(Deviant(a, Entry.make("random")))
        deviants.append(Deviant(a, Entry.make(DEFAULT_BY_AGENDA[a])))
    ev = evaluate(rules, field, deviants, seed_of(seed, n, "ladder"), games, threads=threads,
                  progress=progress)
    searched = search_gains(rules, field, seed_of(seed, n, "ladder-searcher"),
                            seat_games=seat_games, knobs=knobs, budgets=(knobs.rollouts,),
                            threads=threads, progress=progress)
    out: list[Rung] = []
    for k, a in enumerate(L.AGENDA_NAMES):
        rnd, dflt = ev.gains[2 * k], ev.gains[2 * k + 1]
        if not rnd.n:
            continue  # (an Agenda the deck never deals at this size)
        for name, bot, g in (("random", "random", rnd), ("default bot", DEFAULT_BY_AGENDA[a],
                                                          dflt)):
            out.append(Rung(n, a, name, bot, g.rate, _wilson(g.rate, g.n), g.gain,
                            list(g.ci), g.n))
        out.append(Rung(n, a, "field", field.by_agenda[a].bot, rnd.base,
                        _wilson(rnd.base, rnd.n), 0.0, [0.0, 0.0], rnd.n))
        if a in searched:
            s = searched[a][0]
            out.append(Rung(n, a, "searcher", f"searcher ({s.rollouts} rollouts)", s.rate,
                            _wilson(s.rate, s.n), s.gain, list(s.ci), s.n))
    return out


def _inputs(rules, field, name: str, seed: int, games: int, seat_games: int,
            knobs: Knobs) -> dict:
    """What a table size's ladder was played with (kept beside it: a size with the same
    inputs is not played again)."""
    return {"field": name, "lineup_hash": lineup_hash(field), "seed": seed, "games": games,
            "seat_games": seat_games, "knobs": knobs.as_dict(), "rules_hash": rules_hash(rules)}


def check_rungs_whole(entry: dict, rules, path: Path) -> None:
    """A kept table size holds every rung (`RUNGS`) of every Agenda the rules' deck deals at
    that size, as `ladder` writes them: a ladder cut short is refused, not rewritten short.
    UsageError naming the file and the rung."""
    n = rules.players
    dealt = [a for a, c in zip(L.AGENDA_NAMES, rules.decks.for_players(n).counts(),
                               strict=True) if c > 0]
    have = {(r["agenda"], r["rung"]) for r in entry["rungs"]}
    for a in dealt:
        for rung in RUNGS:
            if (a, rung) not in have:
                raise UsageError(f"{path}: not a ladder fbsim wrote (players.{n}.rungs: the "
                                 f"{a} rung \"{rung}\" is missing); restore the file, or "
                                 "remove it to start afresh")


def _wilson(rate: float, n: int) -> list[float]:
    _, lo, hi = wilson(round(rate * n), n)
    return [float(lo), float(hi)]


def ladder_rows(rungs: list[Rung]) -> list[tuple[int, str, list[str]]]:
    """The ladder's table, one row per table size and Agenda dealt there: (players, Agenda,
    one cell per rung of `RUNGS`: a player's chance, and but at the field's rung the rung's
    gain over the field's strategy with its interval; "" where a rung is missing)."""
    by = {(r.players, r.agenda, r.rung): r for r in rungs}
    rows = []
    for n in sorted({r.players for r in rungs}):
        for a in L.AGENDA_NAMES:
            if (n, a, "field") not in by:
                continue
            cells = []
            for name in RUNGS:
                r = by.get((n, a, name))
                if r is None:
                    cells.append("")
                elif name == "field":
                    cells.append(f"{100 * r.rate:.1f}%")
                else:
                    cells.append(f"{100 * r.rate:.1f}% ({100 * r.gain:+.1f} "
                                 f"[{100 * r.gain_ci[0]:+.1f}, {100 * r.gain_ci[1]:+.1f}])")
            rows.append((n, a, cells))
    return rows


def format_ladder(rungs: list[Rung]) -> str:
    """The ladder as a Markdown table (`ladder_rows`), with each size's fair share."""
    lines = ["| players | Agenda | fair | " + " | ".join(RUNGS) + " |",
             "|---|---|---|" + "---|" * len(RUNGS)]
    for n, a, cells in ladder_rows(rungs):
        lines.append(f"| {n} | {a} | {100 / n:.1f}% | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run_ladder(plan: list[tuple[Rules, Lineup, str]], out: Path, seed: int, games: int,
               seat_games: int, knobs: Knobs, threads: int | None = None, progress=None,
               echo=None) -> Path:
    """`fbsim ladder`: the ladder of each (rules, field, the field's name) of `plan` into
    OUT/ladder.json (per table size, with what it was played with), OUT/ladder.parquet (every
    rung, with provenance) and OUT/ladder.md. A table size already in ladder.json with the
    same inputs is kept, not replayed (an interrupted run resumes there); returns the
    Parquet file's path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "ladder.json"
    doc = read_ladder(path)
    for rules, field, name in plan:  # (a kept size whole, every rung, before any game)
        kept = doc["players"].get(str(rules.players))
        if kept is not None and kept.get("inputs") == _inputs(rules, field, name, seed, games,
                                                              seat_games, knobs):
            check_rungs_whole(kept, rules, path)
    started = now_iso()
    for rules, field, name in plan:
        n = rules.players
        inputs = _inputs(rules, field, name, seed, games, seat_games, knobs)
        kept = doc["players"].get(str(n))
        if kept is not None and kept.get("inputs") == inputs:
            if echo:
                echo(f"{n} players: kept from {path}")
            continue
        if echo:
            echo(f"== {n} players: the ladder against {name}")
        rungs = ladder(rules, field, seed, games, seat_games, knobs, threads,
                       progress() if progress else None)
        doc["players"][str(n)] = {"inputs": inputs, "fair": 1.0 / n,
                                  "rungs": [r.as_dict() for r in rungs]}
        doc["players"] = dict(sorted(doc["players"].items()))
        write_json(path, doc)  # (each size as it is done: the resume point)
    rungs = [Rung(**r) for entry in doc["players"].values() for r in entry["rungs"]]
    df = pd.DataFrame([{**{k: v for k, v in r.as_dict().items() if k not in ("ci", "gain_ci")},
                        "ci_low": r.ci[0], "ci_high": r.ci[1], "gain_low": r.gain_ci[0],
                        "gain_high": r.gain_ci[1], "fair": 1.0 / r.players} for r in rungs])
    table = out / "ladder.parquet"
    write_table(df, table, {**base_provenance(started), "kind": "ladder",
                            "inputs": {k: v["inputs"] for k, v in doc["players"].items()}})
    text = ["# The skill ladder: how much skill pays", "",
            "One seat at each rung, every other seat the field; a player's chance to win "
            "given the Agenda dealt, and (in brackets) the rung's gain over the field's own "
            "strategy on the same games, 95% intervals. The searcher's gain is a lower bound "
            "of what skill reaches.", "", format_ladder(rungs), ""]
    for k, entry in doc["players"].items():
        text.append(f"- {k} players: field {entry['inputs']['field']}, "
                    f"{entry['inputs']['games']:,} games per seat range, the searcher "
                    f"{entry['inputs']['seat_games']:,} seat-games per Agenda at "
                    f"{entry['inputs']['knobs']['rollouts']} rollouts")
    write_text(out / "ladder.md", "\n".join(text) + "\n")
    return table


SIZES = range(3, L.MAX_PLAYERS + 1)
# ladder.json's keys (`fbsim.inputs`), as `run_ladder` writes them: per table size, what it
# was played with (`KNOB_KEYS`: the fields of `Knobs`), the fair share and the rungs (those
# of `Rung`)
RUNG_KEYS = {
    "players": Key("int", lo=SIZES[0], hi=SIZES[-1], required=True),
    "agenda": Key("text", choices=L.AGENDA_NAMES, required=True),
    "rung": Key("text", choices=RUNGS, required=True),
    "bot": Key("text", required=True),  # (a bot's name: not blank, checked below)
    "rate": Key("number", lo=0, hi=1, required=True),
    "ci": interval(0, 1, required=True),
    "gain": Key("number", lo=-1, hi=1, required=True),
    "gain_ci": interval(-1, 1, required=True),
    "n": Key("count", lo=0, hi=MAX_COUNT, required=True),
}
INPUT_KEYS = {
    "field": Key("text", required=True), "lineup_hash": Key("text", required=True),
    "seed": Key("count", lo=0, hi=MAX_SEED, required=True),
    "games": Key("count", lo=1, hi=MAX_COUNT, required=True),
    "seat_games": Key("count", lo=1, hi=MAX_COUNT, required=True),
    "knobs": Key("table", keys=KNOB_KEYS, required=True),
    "rules_hash": Key("text", required=True),
}
SIZE_KEYS = {
    "inputs": Key("table", keys=INPUT_KEYS, required=True),
    "fair": Key("number", lo=0, hi=1, open=True, required=True),
    "rungs": Key("list", "a list of rungs", size=(1, 10_000),
                 item=Key("table", keys=RUNG_KEYS), required=True),
}
LADDER_KEYS = {
    "players": Key("table", "a table of table sizes", known="table size", required=True,
                   keys={str(n): Key("table", keys=SIZE_KEYS) for n in SIZES}),
}


def check_ladder(doc, path: Path) -> dict:
    """ladder.json's shape and values (`LADDER_KEYS`), and what spans keys: each rung at the
    table size it is filed under, each Agenda's rungs once each and its field rung there.
    UsageError naming the file and the key, and the way out."""

    def fail(key: str, message: str):
        raise UsageError(f"{path}: not a ladder fbsim wrote ({key}: {message}); restore the "
                         "file, or remove it to start afresh")

    doc = check(doc, LADDER_KEYS, fail)
    for k, entry in doc["players"].items():
        if abs(entry["fair"] - 1 / int(k)) > 1e-12:
            fail(f"players.{k}.fair", f"expected 1/{k} (a player's fair share), got "
                 f"{shown(entry['fair'])}")
        seen = set()
        for i, r in enumerate(entry["rungs"]):
            where = f"players.{k}.rungs[{i}]"
            if r["players"] != int(k):
                fail(f"{where}.players", f"expected {k} (the table size it is filed under), "
                     f"got {shown(r['players'])}")
            if not r["bot"].strip():
                fail(f"{where}.bot", "expected the rung's bot, got blank text")
            within(r["rate"], r["ci"], fail, f"{where}.rate")
            within(r["gain"], r["gain_ci"], fail, f"{where}.gain")
            if (r["agenda"], r["rung"]) in seen:
                fail(where, f"the {r['agenda']} rung \"{r['rung']}\" again")
            seen.add((r["agenda"], r["rung"]))
        for a in sorted({a for a, _ in seen}):
            if (a, "field") not in seen:
                fail(f"players.{k}.rungs", f"no field rung of {a} (every Agenda's rungs are "
                     "read against it)")
    return doc


def read_ladder(path: Path) -> dict:
    """ladder.json as written (a missing file: no size yet); a damaged one is a usage error
    naming the file and the key (`check_ladder`)."""
    if not path.exists():
        return {"players": {}}
    try:
        doc = jsonfile.read(path)
    except (OSError, ValueError) as e:
        raise UsageError(f"{path}: not a ladder fbsim wrote ({type(e).__name__}: "
                         f"{cut(str(e))}); restore the file, or remove it to start afresh"
                         ) from None
    return check_ladder(doc, path)
