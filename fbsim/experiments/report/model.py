"""`fbsim report` and `fbsim.report(...)`: play a rules file (and, with --against, the old
rules on the same games) at every table size, and gather what the report page shows.

For each table size the runner plays games 0..N-1 of the seed in blocks, under the new
rules and, when comparing, the old; each block adds to one `Tally` (integer moments of every
metric, paired between old and new, and the Dial histograms). Memory does not grow with the
number of games; the tables do not depend on the block size or the thread count.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from fbsim import jsonfile
from fbsim.errors import ConfigError, FbsimError, UsageError, cut, shown
from fbsim.experiments.metrics import balance as B
from fbsim.experiments.metrics.tally import Tally
from fbsim.experiments.run.provenance import base_provenance, now_iso
from fbsim.experiments.run.runner import Arm, NoProgress, count_paired
from fbsim.game import layout as L
from fbsim.lineup import Lineup, lineup_hash, parse_lineup
from fbsim.rules import Rules, load_rules, rules_hash, rules_to_toml

DEFAULT_GAMES = 200_000
DEFAULT_PLAYERS = (3, 4, 5, 6)


@dataclass
class TableResult:
    """One table size: its rules (new, and old when comparing) and what was counted."""

    players: int
    rules: Rules
    counts: dict  # Dial histograms and seats dealt (`Tally.counts`)
    old_rules: Rules | None = None
    old_counts: dict | None = None


@dataclass
class BalanceReport:
    """Everything the page shows: `metrics` is one tidy row per (table size, metric)."""

    metrics: pd.DataFrame
    tables: list[TableResult]
    provenance: dict
    exploit: pd.DataFrame | None = None  # exploitability rows whose rules match (new rules)
    exploit_check: dict | None = None  # the largest of them, played again on fresh games
    old_exploit: pd.DataFrame | None = None
    rulebook: dict | None = None  # `fbsim tune --equilibrium`'s summary, for these rules
    maps: dict | None = None  # `fbsim equilibrium --map`'s maps at the sizes of these rules
    ladder: list | None = None  # `fbsim ladder`'s rungs at the sizes played under these rules
    verdict: list[str] = field(default_factory=list)

    @property
    def paired(self) -> bool:
        return self.tables[0].old_rules is not None


def _load(path, sets, players: int, flag: str, lineup: Lineup, against_sets=()
          ) -> tuple[Rules, Lineup]:
    """The rules, and the lineup with their `bots.BOT.PARAM` values (a bot's parameters);
    `against_sets` come last, and their errors name --against-set."""
    if path is not None and str(path) == "default" and not Path(path).exists():
        path = None  # `--against default`: the default rules
    if path is not None and not Path(path).is_file():
        raise UsageError(f"{flag} {path}: no such file")
    bots: dict = {}
    try:
        rules = load_rules(path, [*sets, *against_sets], bots=bots, players=players)
    except ConfigError as e:
        keys = [x.partition("=")[0].strip() for x in against_sets] + list(against_sets)
        if e.source == "--set" and any(e.key == k or e.key.startswith(k + ".")
                                       or k.startswith(e.key + ".") for k in keys):
            raise ConfigError(e.key, e.message, "--against-set") from None
        raise
    return rules, lineup.with_bot_params(bots, strict=True)


def check_inputs(rules=None, against=None, games: int = DEFAULT_GAMES,
                 players=DEFAULT_PLAYERS, sets=(), against_sets=(), lineup=None,
                 against_lineup=None) -> list:
    """Every input of `report` validated (before any game runs, or any file is written):
    per table size, (players, new rules, old rules or None, (new lineup, old lineup)).
    `against_lineup`: the old rules' field (default: `lineup`), e.g. the equilibrium solved
    under the old rules, so each rules file is played at its own equilibrium."""
    if games < 2:
        raise UsageError("--games: at least 2 games per table size are needed for intervals")
    players = list(players)
    for n in players:
        if not isinstance(n, int) or not 3 <= n <= 6:
            raise UsageError(f"--players: table sizes are 3 to 6, got {n!r}")
    if len(set(players)) != len(players):
        raise UsageError("--players: a table size is repeated")
    compare = against is not None or bool(against_sets)
    if against_lineup is not None and not compare:
        raise UsageError("--against-lineup: give it with --against or --against-set")
    setups = []
    for n in players:  # every rules file validated before any game runs
        lu = parse_lineup(lineup, [], n)
        lu_then = lu if against_lineup is None else parse_lineup(against_lineup, [], n,
                                                                 flag="--against-lineup")
        new, lu_new = _load(rules, sets, n, "--rules", lu)
        old, lu_old = (_load(against, sets, n, "--against", lu_then, against_sets) if compare
                       else (None, None))
        setups.append((n, new, old, (lu_new, lu_old)))
    return setups


def report(rules: str | Path | None = None, against: str | Path | None = None,
           games: int = DEFAULT_GAMES, players=DEFAULT_PLAYERS, seed: int = 0,
           sets=(), against_sets=(), lineup: str | None = None,
           exploit_dir: str | Path | None = "results/exploit", progress=None,
           resume: str | Path | None = None, echo=None, against_lineup: str | None = None,
           rulebook_dir: str | Path | None = None,
           ladder_dir: str | Path | None = None,
           map_dir: str | Path | None = None) -> BalanceReport:
    """Play `games` games per table size under `rules` (and, when `against` or
    `against_sets` is given, under the old rules on the same games) and return the report's
    tables. `sets` apply to both rules files; `against_sets` to the old rules only;
    `against="default"` compares with the default rules. `resume`: a folder where each
    finished table size is kept, so that an interrupted run with the same inputs picks up
    where it stopped (`clear_resume` removes it). `against_lineup`: the old rules' field
    (default: `lineup`). `rulebook_dir`: a `fbsim tune --equilibrium` folder, shown as "rules
    under strong play" when its recommended (or its searched) rules are the report's.
    `ladder_dir`: a `fbsim ladder` folder, whose table sizes played under the report's rules
    are shown as "how much skill pays". `map_dir`: a `fbsim equilibrium --map` folder, whose
    maps of equilibria at the table sizes of the report's rules are shown as "every
    equilibrium found"."""
    players = list(players)
    setups = check_inputs(rules, against, games, players, sets, against_sets, lineup,
                          against_lineup)
    ladder_doc = read_ladder_folder(ladder_dir)  # (a damaged one refused before any game)
    maps = read_map_folder(map_dir)  # (and a damaged map)
    rulebook_doc = read_rulebook_folder(rulebook_dir)  # (and so is a summary of another kind)
    exploits = read_exploit_folder(exploit_dir)  # (and a damaged best response)
    compare = against is not None or bool(against_sets)
    progress = progress or NoProgress()
    started = now_iso()
    frames, tables = [], []
    if resume is not None and Path(resume).is_dir():
        from fbsim.experiments.run.lock import remove_stale_temporaries

        remove_stale_temporaries(resume)  # table sizes a killed run was saving
    parts = [_part_path(resume, new, old, lu, games, seed) if resume is not None else None
             for _, new, old, lu in setups]
    if resume is not None:
        check_kept_parts(Path(resume), parts)
    kept = [p is not None and p.is_file() for p in parts]
    # every kept table size read back before any game (a damaged one refused first)
    tallies = [_load_part(part, new, lu, compare, games) if k else None
               for (_, new, _, lu), part, k in zip(setups, parts, kept, strict=True)]
    if echo and any(kept):
        echo(f"resuming: {sum(kept)} of {len(players)} table sizes already played")
    progress.start(games * (len(players) - sum(kept)) * (2 if compare else 1),
                   f"{len(players)} table sizes" + (", old and new rules" if compare else ""))
    try:
        for (n, new, old, lu), part, tally in zip(setups, parts, tallies, strict=True):
            if tally is None:
                tally = _play_table(new, old, *lu, games, seed, progress)
                if part is not None:
                    _save_part(part, tally)
            frames.append(B.table(tally, n, B.fair_shares(tally, new),
                                  B.fair_shares(tally, old, old=True) if compare else None))
            tables.append(TableResult(n, new, tally.counts(), old,
                                      tally.counts(old=True) if compare else None))
    finally:
        progress.close()
    df = pd.concat(frames, ignore_index=True)
    if compare:
        df = B.mark_significance(df)
    prov = {**base_provenance(started), "kind": "balance report", "seed": seed,
            "games": games, "players": players,
            "lineup": setups[0][3][0].describe(),
            # the field the numbers were measured against, as the user named it
            "field": lineup or "the default bots",
            "lineup_hash": lineup_hash(setups[0][3][0]),
            "rules_file": None if rules is None else str(rules),
            "against_file": None if against is None else str(against),
            "sets": list(sets), "against_sets": list(against_sets),
            "rules_hash": {str(t.players): rules_hash(t.rules) for t in tables},
            "rules_toml": rules_to_toml(tables[0].rules, comments=False)}
    if compare:
        prov["old_rules_hash"] = {str(t.players): rules_hash(t.old_rules) for t in tables}
        prov["old_lineup"] = setups[0][3][1].describe()
        prov["old_field"] = against_lineup or lineup or "the default bots"
        prov["old_lineup_hash"] = lineup_hash(setups[0][3][1])
        prov["old_rules_toml"] = rules_to_toml(tables[0].old_rules, comments=False)
    rep = BalanceReport(df, tables, prov)
    if rulebook_dir is not None:
        rep.rulebook = find_rulebook(rulebook_doc, rulebook_dir, tables)
    if ladder_doc is not None:
        rep.ladder = find_ladder(ladder_doc, tables)
    rep.maps = find_maps(maps, tables)
    if exploit_dir is not None:
        lineups = {n: lu for n, _, _, lu in setups}
        rep.exploit = find_exploit(exploit_dir, [t.rules for t in tables],
                                   {n: lu[0] for n, lu in lineups.items()}, exploits)
        if compare:
            rep.old_exploit = find_exploit(exploit_dir, [t.old_rules for t in tables],
                                           {n: lu[1] for n, lu in lineups.items()}, exploits)
        if rep.exploit is not None:
            rep.exploit_check = check_largest_exploit(rep.exploit, tables, games, seed, echo)
            prov["largest_exploit_check"] = rep.exploit_check
    rep.verdict = verdict(rep)
    return rep


def read_ladder_folder(folder: str | Path | None) -> dict | None:
    """The ladder.json of the `fbsim ladder` folder `folder` (None: no folder, or none there);
    a damaged one is a usage error naming it."""
    from fbsim.experiments.search.ladder import read_ladder

    path = None if folder is None else Path(folder) / "ladder.json"
    return read_ladder(path) if path is not None and path.is_file() else None


def find_ladder(doc: dict, tables: list[TableResult]) -> list | None:
    """The rungs of a ladder (`read_ladder_folder`) at the table sizes whose rules are the
    report's (by rules hash), or None when there are none."""
    from fbsim.experiments.search.ladder import Rung

    hashes = {str(t.players): rules_hash(t.rules) for t in tables}
    rungs = [Rung(**r) for k, entry in doc["players"].items()
             if hashes.get(k) == entry["inputs"]["rules_hash"] for r in entry["rungs"]]
    return rungs or None


def _read_summary(folder: str | Path | None, flag: str, kind: str):
    """The summary.json of the folder `folder` that `flag` names, and the `fail` that refuses
    it naming the file and the key (not the summary of `kind`); None: no folder, or none
    there."""
    if folder is None or not (Path(folder) / "summary.json").is_file():
        return None
    path = Path(folder) / "summary.json"

    def fail(key: str, message: str):
        raise UsageError(f"{flag} {folder}: {path}: {key}: {message} (not the summary of "
                         f"{kind}); give such a folder, or none")

    try:
        return jsonfile.read(path), fail
    except (OSError, ValueError) as e:
        raise UsageError(f"{flag} {folder}: {path}: cannot be read "
                         f"({type(e).__name__}: {e})") from None


def read_map_folder(folder: str | Path | None) -> dict | None:
    """The maps of equilibria in the summary.json of the `fbsim equilibrium --map` folder
    `folder`, by table size (None: no folder, or none there; a size without a map is left
    out): each size's `equilibria` and `map` (`basins.MAP_PARTS`), checked whole before any
    game is played; one of another kind, or damaged, is a usage error naming the file and
    the key."""
    from fbsim.experiments.search.equilibrium.basins import MAP_PARTS
    from fbsim.inputs import Key, value, within

    got = _read_summary(folder, "--map", "an `fbsim equilibrium --map` search")
    if got is None:
        return None
    doc, fail = got
    sizes = Key("table", "a table by table size (3 to 6)", known="table size", required=True,
                keys={str(n): Key("table") for n in range(3, L.MAX_PLAYERS + 1)})
    top = value(doc, Key("table", keys={"players": sizes}), fail, "")
    if "players" not in top:
        fail("players", f"missing: expected {sizes.wanted}")
    maps = {}
    for n, entry in top["players"].items():
        if "map" not in entry:
            continue  # (a single search's size: no map)
        part = {k: value(entry.get(k), key, fail, f"players.{n}.{k}")
                for k, key in MAP_PARTS.items()}
        for i, e in enumerate(part["equilibria"]):
            w = f"players.{n}.equilibria[{i}]"
            within(e["basin_share"], e["basin_ci"], fail, f"{w}.basin_share")
            for a, r in e["agendas"].items():
                within(r["player_win_rate"], r["player_win_ci"], fail,
                       f"{w}.agendas.{a}.player_win_rate")
        maps[n] = part
    if not maps:  # (a single search's folder, another command's: nothing to show)
        fail("players", "no table size holds a map of equilibria (`map`)")
    return maps


def find_maps(maps: dict | None, tables: list[TableResult]) -> dict | None:
    """The maps (`read_map_folder`) at the table sizes whose rules are the report's (by
    rules hash), or None where there are none."""
    if not maps:
        return None
    hashes = {str(t.players): rules_hash(t.rules) for t in tables}
    found = {n: m for n, m in maps.items() if hashes.get(n) == m["map"]["rules_hash"]}
    return found or None


def map_verdict(n: str, part: dict) -> str:
    """One sentence on a table size's map of equilibria: how many, whether it is fair over
    the map (every equilibrium with a basin share of at least `fair_basin` fair), and the
    largest basin's balance."""
    m, eqs = part["map"], part["equilibria"]
    unsettled = m["unsettled"]["starts"]
    head = (f"At {n} players, {m['starts']} cold starts of the single-seat equilibrium search "
            f"(`fbsim equilibrium --map`) reached {len(eqs)} distinct "
            f"equilibri{'um' if len(eqs) == 1 else 'a'} of the planner family"
            + (f"; {unsettled} more starts did not converge" if unsettled else "")
            + ("" if m["stopped"] else "; the map is still growing"))
    if not eqs:
        return head + "."
    big = eqs[0]
    chances = ", ".join(f"{a.capitalize()} {_pc(big['agendas'][a]['player_win_rate'])}"
                        for a in L.AGENDA_NAMES if a in big["agendas"])
    fair = "fair" if m["fair"] else "not fair"
    return (f"{head}: {fair} over the map (every equilibrium with a basin share of "
            f"{_pc(m['fair_basin'])} or more must be); the largest basin "
            f"({_pc(big['basin_share'])} of the starts) gives a player {chances} against a "
            f"fair {_pc(1 / int(n))}.")


def read_rulebook_folder(folder: str | Path | None) -> dict | None:
    """The summary.json of the `fbsim tune --equilibrium` folder `folder` (None: no folder,
    or none there); one of another kind, or damaged, is a usage error naming the file and
    the key (read before any game is played)."""
    from fbsim.experiments.search.rulebook import SUMMARY_FILE
    from fbsim.inputs import check, within

    got = _read_summary(folder, "--rulebook", "a `fbsim tune --equilibrium` search")
    if got is None:
        return None
    doc, fail = got
    if isinstance(doc, dict):  # (another command's summary: named by what it lacks)
        for k, key in SUMMARY_FILE.items():
            if key.required and k not in doc:
                fail(k, f"missing: expected {key.wanted}")
    doc = check(doc, SUMMARY_FILE, fail)
    sizes = list(doc["players"])
    if not sizes:
        fail("players", "expected at least one table size, got none")
    for role in ("rules_hash", "base_rules_hash"):
        if list(doc[role]) != sizes:
            fail(role, f"expected the table sizes of players ({', '.join(sizes)}), got "
                 f"{shown(list(doc[role]))}")
    for n, x in doc["players"].items():
        for a, r in x["agendas"].items():  # (what the page shows: rates and intervals in order)
            w = f"players.{n}.agendas.{a}"
            within(r["player_win_rate"], r["player_win_ci"], fail, f"{w}.player_win_rate")
            within(r["seat_deviation_gain"], r["seat_gain_ci"], fail,
                   f"{w}.seat_deviation_gain")
        for k in ("collapse", "everyone_loses"):
            within(x[k]["rate"], x[k]["ci"], fail, f"players.{n}.{k}.rate")
    return doc


def find_rulebook(doc: dict | None, folder: str | Path, tables: list[TableResult]
                  ) -> dict | None:
    """The rules search's summary (`read_rulebook_folder`) when the report's rules are the
    rules it recommends ("recommended") or the rules it searched from ("searched"), at every
    table size of the report; else None."""
    if doc is None:
        return None
    hashes = {"recommended": doc["rules_hash"], "searched": doc["base_rules_hash"]}
    for role, h in hashes.items():
        if all(h.get(str(t.players)) == rules_hash(t.rules) for t in tables):
            return {**doc, "role": role, "folder": str(folder)}
    return None


def rulebook_verdict(doc: dict) -> str:
    """One sentence on the rules search under strong play that concerns the report's rules."""
    moved = ", ".join(f"{k} = {v}" for k, v in doc["changes"].items()) or "no change"
    which = ("These rules are the ones it recommends" if doc["role"] == "recommended" else
             f"From these rules it recommends {moved}")
    short = [n for n, x in doc["players"].items() if not x["meets"]]
    if not doc.get("beats_unchanged", True):
        tail = ("no candidate made the game fairer than the rules unchanged, each at its own "
                "single-seat equilibrium solved from scratch (short at "
                f"{', '.join(short)} players)")
    elif doc["found"]:
        tail = ("every Agenda's chance to win as a player is within "
                f"{_pc(doc['target']['fair_band'])} of 1/players at every table size, each at "
                "its own single-seat equilibrium")
    else:
        tail = (f"no candidate made every table size fair at its own single-seat equilibrium "
                f"(short at {', '.join(short)} players; the closest found)")
    return (f"Rules under strong play (`fbsim tune --equilibrium`, {doc['trials']} candidates, "
            f"each solved at its own single-seat equilibrium): {which}: {tail}.")


def check_largest_exploit(found: pd.DataFrame, tables: list[TableResult], games: int,
                          seed: int, echo=None) -> dict:
    """The largest gain of the found best responses is the largest of several searches, so
    it overstates what a strong player gains: it is played again here, under the report's
    rules, on `games` games of a fresh seed."""
    from fbsim.experiments.search.exploit import RECHECK_SEED_OFFSET, recheck_gain

    top = found.loc[found["diff"].idxmax()]
    rules = next(t.rules for t in tables if t.players == int(top["players"]))
    if echo:
        echo(f"checking the largest gain ({top['agenda']}, {int(top['players'])} players) on "
             f"{games:,} fresh games")
    base = {"players": int(top["players"]), "agenda": str(top["agenda"]),
            "found_diff": float(top["diff"]), "of": int(len(found)),
            "folder": str(top["folder"])}
    try:
        got = recheck_gain(rules, str(top["agenda"]), str(top["field"]),
                           json.loads(top["params"]), games, seed + RECHECK_SEED_OFFSET,
                           mode=str(top["mode"]))
    except (FbsimError, ValueError) as e:  # e.g. its field file is no longer there
        return {**base, "unchecked": str(e)}
    return {**got, **base}


def _play_table(new: Rules, old: Rules | None, lu: Lineup, lu_old: Lineup | None, games: int,
                seed: int, progress) -> Tally:
    """One table size: games 0..games-1 under the new (and old) rules, in blocks."""
    return count_paired(Arm(new, lu), None if old is None else Arm(old, lu_old), seed, games,
                        progress, deal=True)


# ------------------------------------------------------------------------------ resuming


def _part_path(folder, new: Rules, old: Rules | None, lu: tuple[Lineup, Lineup | None],
               games: int, seed: int) -> Path:
    """Where a finished table size is kept: named by a digest of everything it depends on."""
    import hashlib

    from fbsim.kernel.layout import KERNEL_VERSION

    doc = json.dumps({"new": rules_to_toml(new, comments=False),
                      "old": None if old is None else rules_to_toml(old, comments=False),
                      "lineup": lineup_hash(lu[0]),
                      "old_lineup": None if lu[1] is None else lineup_hash(lu[1]),
                      "games": games, "seed": seed, "kernel": KERNEL_VERSION,
                      "metrics": [m.key for m in _tally(new, lu, False).metrics]},
                     sort_keys=True)
    return Path(folder) / f"p{new.players}-{hashlib.sha256(doc.encode()).hexdigest()[:16]}.npz"


def _save_part(path: Path, tally: Tally) -> None:
    import os

    import numpy as np

    from fbsim.experiments.run.lock import move_into_place

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp{os.getpid()}.npz")
    arrays = tally.arrays()
    try:
        np.savez(tmp, **arrays, checksum=_part_checksum(arrays))
        move_into_place(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _part_checksum(arrays: dict):
    """The SHA-256 of a kept table size's arrays (names, types, shapes and values), kept
    with them: a part whose numbers were changed after it was saved is refused."""
    import hashlib

    import numpy as np

    h = hashlib.sha256()
    for k in sorted(arrays):
        a = np.ascontiguousarray(arrays[k])
        h.update(repr((k, a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    return np.frombuffer(h.digest(), dtype=np.uint8)


def check_kept_parts(folder: Path, parts: list[Path | None]) -> None:
    """The report's folder of kept table sizes, and each kept part's place in it, are a
    folder and files (or absent): UsageError naming the one that is not, before any game."""
    from fbsim.experiments.run.provenance import check_places

    check_places(files=[p for p in parts if p is not None], folders=[folder])


def _load_part(path: Path, rules: Rules, lu: tuple[Lineup, Lineup | None],
               paired: bool, games: int) -> Tally:
    """A kept table size (`_save_part`), checked against the tally it is read into: the
    same arrays, of the same shapes, of integers, of `games` games (its name digests them).
    A damaged one (truncated, another file) is a UsageError naming it and the way out."""
    import zipfile

    import numpy as np

    tally = _tally(rules, lu, paired)
    want = {k: np.shape(v) for k, v in tally.arrays().items()}
    if paired:  # (the old rules' Dial by round: made by the first block counted)
        want["old_dial_round_hist"] = want["dial_round_hist"]
    want["checksum"] = (32,)

    def fail(message: str):
        raise UsageError(f"{path}: a kept table size of the report, damaged ({message}); "
                         "remove it: that table size is played again")

    try:
        with np.load(path) as z:
            if sorted(z.files) != sorted(want):
                fail(f"its arrays are {', '.join(sorted(z.files)) or 'none'}, expected "
                     f"{', '.join(sorted(want))}")
            for k, shape in want.items():
                a = z[k]
                if a.shape != shape or a.dtype.kind not in "iu":
                    fail(f"{k}: expected integers of shape {shape}, got {a.dtype} of shape "
                         f"{a.shape}")
            if int(z["games"]) != games:
                fail(f"games: expected {games}, got {int(z['games'])}")
            arrays = {k: z[k] for k in z.files if k != "checksum"}
            if not np.array_equal(z["checksum"], _part_checksum(arrays)):
                fail("its numbers were changed after it was saved: they do not match its "
                     "checksum")
            return tally.load_arrays(z)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        fail(f"{type(e).__name__}: {cut(str(e))}")


def _tally(rules: Rules, lu: tuple[Lineup, Lineup | None], paired: bool) -> Tally:
    """The tally of one table size: a bot row for each entry of the new and old lineups."""
    return Tally.for_rules(rules, *(x for x in lu if x is not None), paired=paired, deal=True)


def clear_resume(folder: str | Path | None) -> None:
    """Remove the kept table sizes of a finished report."""
    import shutil

    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


# ----------------------------------------------------------------------- exploitability


EXPLOIT_WAY_OUT = ("restore the file, or run that `fbsim exploit` again, or give --exploit "
                   "another folder")


def read_exploit_folder(folder: str | Path | None) -> list[tuple[str, dict, Rules, dict]]:
    """The best-response results of `fbsim exploit` in `folder` (FOLDER/<agenda>-p<n>/, those
    holding both result.json and search.parquet; none for a missing folder): (the folder's
    name, search.parquet's provenance, the rules it was searched under, result.json checked
    against `exploit.RESULT_KEYS`). A damaged result (truncated, hand-edited, not fbsim's,
    its two files at other table sizes) is a UsageError naming the file, the key and the way
    out, read before any game is played."""
    import pyarrow as pa

    from fbsim.experiments.run.provenance import read_provenance
    from fbsim.experiments.search.exploit import check_result
    from fbsim.rules import rules_from_toml

    if folder is None or not Path(folder).is_dir():
        return []
    found = []
    for d in sorted(Path(folder).glob("*-p[3-6]")):
        res, search = d / "result.json", d / "search.parquet"
        if not (res.is_file() and search.is_file()):
            continue  # (not a result: a search killed before writing it, another folder)

        def fail(key: str, message: str, path: Path = res):
            raise UsageError(f"--exploit {folder}: {path}: {key}: {message}; "
                             f"{EXPLOIT_WAY_OUT}")

        try:
            prov = read_provenance(search)
        except (OSError, ValueError, pa.ArrowException) as e:
            fail("(file)", f"damaged, or not a table fbsim wrote ({type(e).__name__}: "
                 f"{cut(str(e))})", search)
        if not isinstance(prov, dict) or prov.get("kind") != "exploit search":
            fail("kind", f"expected an exploit search's table, got "
                 f"{shown(prov.get('kind') if isinstance(prov, dict) else prov)}", search)
        for k in ("rules_toml", "field", "field_lineup_hash"):
            if (k in prov or k == "rules_toml") and not isinstance(prov.get(k), str):
                fail(k, f"expected text, got {shown(prov.get(k))}", search)
        try:
            rules = rules_from_toml(prov["rules_toml"], "rules_toml")
        except ConfigError as e:
            fail(f"rules_toml: {cut(e.key)}", e.message, search)
        try:
            doc = jsonfile.read(res)
        except (OSError, ValueError) as e:
            fail("(file)", f"cannot be read ({type(e).__name__}: {cut(str(e))})")
        row = check_result(doc, fail)
        if row["players"] != rules.players:
            fail("players", f"expected {rules.players} (the table size of its search.parquet), "
                 f"got {row['players']}")
        found.append((d.name, prov, rules, row))
    return found


def find_exploit(folder: str | Path, rules: list[Rules],
                 lineups: dict[int, Lineup] | None = None,
                 results: list | None = None) -> pd.DataFrame | None:
    """The best-response results of `fbsim exploit` (FOLDER/<agenda>-p<n>/, read by
    `read_exploit_folder` unless given as `results`) played under exactly these rules (the
    same rules hash at that table size) and, given `lineups` (per table size), against that
    field (the same lineup hash: a best response against the default bots says nothing of an
    equilibrium field), or None."""
    results = read_exploit_folder(folder) if results is None else results
    wanted = {r.players: rules_hash(r) for r in rules}
    rows = []
    for name, prov, found, row in results:
        n = found.players
        field_hash = prov.get("field_lineup_hash") or (
            lineup_hash(Lineup()) if prov.get("field", "default lineup") == "default lineup"
            else None)
        if lineups is not None and (n not in lineups or
                                    field_hash != lineup_hash(lineups[n])):
            continue
        if wanted.get(n) == rules_hash(found):
            rows.append({k: row[k] for k in ("players", "agenda", "field_rate", "field_ci_low",
                                             "field_ci_high", "best_rate", "best_ci_low",
                                             "best_ci_high", "diff", "diff_ci_low",
                                             "diff_ci_high", "search_games",
                                             "confirm_games", "params")}
                        | {"folder": name, "field": prov.get("field", "default lineup"),
                           "mode": row.get("mode", "team")})
    if not rows:
        return None
    return pd.DataFrame(rows).sort_values(["players", "agenda"], ignore_index=True)


# ------------------------------------------------------------------------------ verdict


def _pc(x: float) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{100 * x:.1f}%"


def _pts(x: float) -> str:
    return f"{100 * x:+.1f} points"


def verdict(rep: BalanceReport) -> list[str]:
    """A few sentences in words and numbers: one per table size, and the biggest changes."""
    df = rep.metrics
    field = rep.provenance.get("field") or "the default bots"
    old_field = rep.provenance.get("old_field", field)
    lines = [f"Measured against {field}: these numbers describe the game as that field "
             "plays it (better play can move them; `fbsim equilibrium`)." if old_field == field
             else f"The new rules are played by {field} and the old by {old_field}: each "
             "rules file by its own field, on the same games."]
    if rep.rulebook is not None:
        lines.append(rulebook_verdict(rep.rulebook))
    for n, part in (rep.maps or {}).items():
        lines.append(map_verdict(n, part))
    for t in rep.tables:
        rows = df[df["players"] == t.players].set_index("metric")
        wins = [(a, rows.loc[f"win_{a}"]) for a in L.AGENDA_NAMES]
        top = max(wins, key=lambda ar: ar[1]["value"] - ar[1]["fair_share"])
        parts = []
        for a, r in sorted(wins, key=lambda ar: -ar[1]["value"]):
            text = f"{a.capitalize()} wins {_pc(r['value'])} (fair share {_pc(r['fair_share'])}"
            if rep.paired:
                text += f"; was {_pc(r['old_value'])}"
            parts.append(text + ")")
        col = rows.loc["collapse"]
        lose = rows.loc["everyone_loses"]
        s = (f"{t.players} players: " + ", ".join(parts)
             + f"; world collapses in {_pc(col['value'])} of games"
             + (f" (was {_pc(col['old_value'])})" if rep.paired else "")
             + f"; everyone loses in {_pc(lose['value'])}.")
        gap = top[1]["value"] - top[1]["fair_share"]
        s += (f" Most favoured: {top[0].capitalize()}, {_pts(gap)} above its fair share."
              if gap > 0 else "")
        places = [rows.loc[f"win_place_{p}"]["value"] for p in range(t.players)]
        best = max(range(t.players), key=lambda p: places[p])
        s += (f" Seat advantage: place {best} wins {_pc(places[best])} against a fair "
              f"{_pc(1 / t.players)}.")
        lines.append(s)
    if rep.paired:
        sig = df[df["significant"]].copy()
        n_tests = int(df["p_holm"].notna().sum())
        if n_tests == 0:
            lines.append("The old and the new rules gave the same result in every game: no "
                         "difference to test.")
        elif sig.empty:
            lines.append(f"No difference detected between the old and the new rules "
                         f"(Holm-corrected over {n_tests} comparisons at 5%; each interval "
                         f"is in the table).")
        else:
            sig["z"] = (sig["diff"].abs()
                        / ((sig["diff_ci_high"] - sig["diff_ci_low"]) / 2).clip(lower=1e-300))
            key = sig[sig["metric"].isin([f"win_{a}" for a in L.AGENDA_NAMES]
                                         + ["collapse", "everyone_loses"])]
            show = (key if not key.empty else sig).sort_values("diff", key=abs,
                                                               ascending=False).head(6)
            bits = [f"{r.label.lower()} at {r.players} players {_pc(r.old_value)} -> "
                    f"{_pc(r.value)} ({_pts(r.diff)})" if r.kind != "mean" else
                    f"{r.label.lower()} at {r.players} players {r.old_value:.2f} -> "
                    f"{r.value:.2f}" for r in show.itertuples()]
            lines.append(f"{len(sig)} of {n_tests} differences are significant (Holm-"
                         f"corrected at 5%); the largest: " + "; ".join(bits) + ".")
    c = rep.exploit_check
    if rep.exploit is not None and c.get("unchecked"):
        lines.append(f"Exploitability: the largest gain of {c['of']} best responses found, a "
                     f"tuned {c['agenda'].capitalize()} at {c['players']} players "
                     f"({_pts(c['found_diff'])}), could not be played again ({c['unchecked']}): "
                     "as the largest of several searches it overstates the gain.")
    elif rep.exploit is not None:
        seat = rep.exploit["mode"].eq("seat").all()
        who = "one seat wins" if seat else "the Agenda's seats win"
        lines.append(f"Exploitability: the largest gain of {c['of']} best responses found, a "
                     f"tuned {c['agenda'].capitalize()} at {c['players']} players "
                     f"({'one seat deviating alone' if seat else 'every seat of its Agenda'}; "
                     f"{_pts(c['found_diff'])} when found), played again on {c['games']:,} "
                     f"fresh games: {who} {_pc(c['best_rate'])} against "
                     f"{_pc(c['field_rate'])} in the field ({_pts(c['diff'])}, "
                     f"[{100 * c['diff_ci_low']:+.1f}, {100 * c['diff_ci_high']:+.1f}]); a gain "
                     "found by a search is a lower bound of what exists.")
    return lines


def format_verdict(rep: BalanceReport) -> str:
    return "\n".join(rep.verdict) + "\n"
