"""The searcher: a seat that searches its commitments by rollouts (`fbsim.kernel.search`),
and its gain against a field, the out-of-family oracle of `fbsim exploit --oracle search` and
of the equilibrium's audit.

    s = Searcher(rules, field_lineup, Knobs(rollouts=128))
    games = s.play(seed, first_game, n_games, seat)        # records + every decision's log
    gains = search_gains(rules, field_lineup, seed, seat_games=3000, knobs=Knobs())

The searcher decides only from its own view (R-I3): what it cannot see it samples per rollout
from the public record (`fbsim.kernel.search`), its rivals' Agendas weighted by a belief
table calibrated on the field's own games (`belief_table`, on a seed of its own). Its gain is
a **lower bound** of what a strong player gains against the field: a better search (more
candidates, more rollouts, better beliefs, searching the Fog, the market and Accusations
too) may find more.

The gain is paired: the seat searches only in the games it was dealt the Agenda, and plays
the field in the others; a searched game in which it never departs from the field is the
field's game, record for record (tests/test_searcher.py). So its gain is its win rate over
the seat-games it was dealt the Agenda against the field's on the same games, rotated over
the seats as the single-seat deviations are (`fbsim.experiments.search.deviation`), with
the paired score interval (`paired_proportions`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import numpy as np

from fbsim.errors import UsageError, shown
from fbsim.experiments.metrics.stats import paired_proportions
from fbsim.experiments.run.provenance import PROVENANCE_KEYS
from fbsim.experiments.run.runner import NoProgress
from fbsim.experiments.search.equilibrium.seeds import seed_of
from fbsim.experiments.search.equilibrium.state import KNOB_KEYS, MAX_COUNT, SEARCH_GAIN_KEYS
from fbsim.game import layout as L
from fbsim.inputs import Key, check, interval, within
from fbsim.kernel import Prepared, Records, columns
from fbsim.kernel import search as KS
from fbsim.kernel.build import compiled_once, in_spans
from fbsim.lineup import Lineup
from fbsim.rules import Rules

CALIBRATION_GAMES = 4000  # field games the belief table is counted on (`belief_table`)
BUDGET_FACTOR = 4  # the audit's second budget: this many times the rollouts


ROLLOUTS = 64  # the searcher's default rollouts per candidate (its audit also runs 4x)


@dataclass(frozen=True)
class Knobs:
    """What the searcher searches and how hard (`fbsim exploit --oracle search` flags).

    rollouts: sampled worlds per candidate at each commitment; step: the grid of open COOL
    and BURN (0, step, 2 step, .. up to the Agents); masked: each grid split with BURN also
    with its BURNs masked (R-C2); margin: the paired z the best candidate needs over the
    field's choice to be played; beliefs: rivals' Agendas weighted by their play's
    likelihood under the field (False: by the cards alone). The defaults are the command
    line's (`ROLLOUTS`), so that a notebook's searcher is the one `fbsim` reports."""

    rollouts: int = ROLLOUTS
    step: int = 2
    masked: bool = False
    margin: float = 2.0
    beliefs: bool = True

    def __post_init__(self):
        for name, lo in (("rollouts", 1), ("step", 1)):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < lo:
                raise UsageError(f"{name}: an integer of at least {lo}, got {v!r}")
        if not (isinstance(self.margin, (int, float)) and math.isfinite(self.margin)
                and self.margin >= 0):
            raise UsageError(f"margin: a number of at least 0, got {self.margin!r}")

    def vector(self, agendas: int = 0b111, perturb: int = 0) -> np.ndarray:
        """The kernel's knob vector (`fbsim.kernel.search.K_*`); `agendas`: bit a set to
        search when dealt Agenda a; `perturb`: the R-I3 test's scramble (0: none)."""
        K = np.zeros(KS.K_SIZE, dtype=np.int64)
        K[KS.K_ROLLOUTS] = self.rollouts
        K[KS.K_STEP] = self.step
        K[KS.K_MASKED] = int(self.masked)
        K[KS.K_MARGIN] = int(round(self.margin * 1000))
        K[KS.K_BELIEFS] = int(self.beliefs)
        K[KS.K_AGENDAS] = agendas
        K[KS.K_PERTURB] = perturb
        return K

    def with_rollouts(self, rollouts: int) -> Knobs:
        return replace(self, rollouts=rollouts)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class SearchedGames:
    """Games with one searching seat: their record columns (`fbsim.kernel.columns`), every
    round's decision of the searcher (`decisions` [games, rounds, D_*] of
    `fbsim.kernel.search.DECISION`), and, when asked, every candidate's tallies
    (`candidates` [games, rounds, candidate, C_*]) and the posterior over the rivals'
    Agendas (`posterior` [games, rounds, seat, agenda], x10000)."""

    seat: int
    columns: dict
    decisions: np.ndarray
    candidates: np.ndarray | None
    posterior: np.ndarray | None

    def searched(self) -> int:
        return int(self.decisions[:, :, KS.D_SEARCHED].sum())

    def departures(self) -> int:
        d = self.decisions
        return int(((d[:, :, KS.D_SEARCHED] == 1) & (d[:, :, KS.D_CHOSEN] != 0)).sum())


def _run_chunk(p: Prepared, seed, first_game, lo, hi, me, K, BL, COUNTS, arrays, logs) -> None:
    """`search_chunk` on games lo .. hi - 1 of the block (its own scratch buffers), compiled
    (or loaded) once per process under the cache's lock first."""
    def run(lo_, hi_):
        KS.search_chunk(p.R, p.P, p.by_agenda, p.seat_bot, np.int64(seed),
                        np.int64(first_game), lo_, hi_, np.int64(me), K, BL, COUNTS, *arrays,
                        *logs, np.zeros(1, dtype=np.int64), *KS.scratch(p.R), p.build.token)

    compiled_once(("search", p.build), lambda: run(0, 0))
    run(lo, hi)


class Searcher:
    """A seat searching its commitments against `field` under `rules` (the field's fast
    build; `checked` for the checked build), with its belief table counted once."""

    def __init__(self, rules: Rules, field: Lineup, knobs: Knobs | None = None,
                 checked: bool | None = None, belief_seed: int = 0):
        self.knobs = knobs or Knobs()
        self.prepared = Prepared(rules, field, checked)
        self.rules = rules
        self.beliefs = (belief_table(self.prepared, belief_seed) if self.knobs.beliefs
                        else np.zeros((1, 1)))

    def play(self, seed: int, first_game: int, n_games: int, seat: int,
             agendas: int = 0b111, full_log: bool = False, threads: int | None = None,
             chunk: int | None = None, knobs: Knobs | None = None,
             knob_vector: np.ndarray | None = None) -> SearchedGames:
        """Games first_game .. first_game + n_games - 1 of `seed`, seat `seat` searching
        when dealt an Agenda of `agendas` (bit a), every other seat (and that seat
        otherwise) the field (`knob_vector`: the kernel's knobs as given, for the tests).
        The result of each game depends only on (rules, field, knobs, seed, game), never on
        `threads` or `chunk`."""
        if not 0 <= seat < self.rules.players:
            raise UsageError(f"seat: 0 to {self.rules.players - 1}, got {seat}")
        K = (knobs or self.knobs).vector(agendas) if knob_vector is None else knob_vector
        out = Records(n_games)
        arrays = out.arrays(n_games)
        logs = KS.log_arrays(n_games, full_log)
        COUNTS = np.zeros((1, 1))

        def span(lo: int, hi: int) -> None:
            # (each span its own buffers; the logs are written by row)
            _run_chunk(self.prepared, seed, first_game, lo, hi, seat, K, self.beliefs, COUNTS,
                       arrays, logs)

        in_spans(span, n_games, chunk or max(1, min(64, -(-n_games // 8))), threads)()
        cols = columns(self.rules, arrays, first_game, n_games)
        return SearchedGames(seat, cols, logs[0], logs[1] if full_log else None,
                             logs[2] if full_log else None)


def belief_table(prepared: Prepared, seed: int, games: int = CALIBRATION_GAMES) -> np.ndarray:
    """log P(feature | Agenda) of each of the likelihood's features
    (`fbsim.kernel.search.FEATURE_GROUPS`) in the field's own games of `seed` (every seat's
    rounds counted under its own Agenda; add-one smoothing in each group): what the searcher
    weighs its rivals' play with."""
    COUNTS = np.zeros((L.N_AGENDAS, KS.N_FEATURES))
    out = Records(games)
    arrays = out.arrays(games)
    logs = KS.log_arrays(games, False)
    _run_chunk(prepared, seed, 0, 0, games, -1, Knobs().vector(0), np.zeros((1, 1)), COUNTS,
               arrays, logs)
    table = np.zeros_like(COUNTS)
    for lo, hi in KS.FEATURE_GROUPS:
        c = COUNTS[:, lo:hi] + 1.0
        table[:, lo:hi] = np.log(c / c.sum(axis=1, keepdims=True))
    return table


@dataclass
class SearchGain:
    """The searcher's single-seat gain for one Agenda at one budget (a lower bound of what a
    strong player gains): `rate` and `base` its win rate as a searcher and in the field over
    the `n` seat-games it was dealt the Agenda, `gain` = rate - base with its paired 95%
    interval `ci`; `departures` of `decisions` searched commitments left the field's choice."""

    agenda: str
    rollouts: int
    rate: float
    base: float
    gain: float
    ci: list[float]
    n: int
    changed: int
    decisions: int
    departures: int

    def as_dict(self) -> dict:
        return asdict(self)


def seat_games_for(rules: Rules, agenda: int, seat_games: int) -> int:
    """Games per seat so that about `seat_games` seat-games are dealt `agenda` over all the
    seats (R-S4: a seat is dealt it with probability deck[a] / deck)."""
    deck = rules.decks.for_players(rules.players).counts()
    share = deck[agenda] / sum(deck) if sum(deck) else 0.0
    if share <= 0:
        return 0
    return max(1, math.ceil(seat_games / (rules.players * share)))


def search_gains(rules: Rules, field: Lineup, seed: int, seat_games: int = 3000,
                 knobs: Knobs | None = None, budgets: tuple[int, ...] | None = None,
                 agendas: tuple[str, ...] = L.AGENDA_NAMES, threads: int | None = None,
                 progress=None) -> dict[str, list[SearchGain]]:
    """Each Agenda's searcher gain against `field` at each budget (rollouts; default the
    knobs' and BUDGET_FACTOR times them), on the same games at every budget: Agenda a's
    games are seed `seed_of(seed, players, "audit-searcher", agenda=a)`'s, seat s searching
    on games [s * G, (s + 1) * G) with G from `seat_games_for`."""
    knobs = knobs or Knobs()
    budgets = budgets or (knobs.rollouts, BUDGET_FACTOR * knobs.rollouts)
    progress = progress or NoProgress()
    n = rules.players
    searcher = Searcher(rules, field, knobs,
                        belief_seed=seed_of(seed, n, "searcher-beliefs"))
    field_arm = searcher.prepared
    plan = []
    for name in agendas:
        a = L.AGENDA_NAMES.index(name)
        G = seat_games_for(rules, a, seat_games)
        if G:
            plan.append((name, a, G))
    progress.start(sum(G * n * len(budgets) for _, _, G in plan), "searched games")
    out: dict[str, list[SearchGain]] = {}
    for name, a, G in plan:
        s_seed = seed_of(seed, n, "audit-searcher", agenda=a)
        base = field_arm.start(s_seed, 0, n * G, threads=threads)()
        base_winner = np.asarray(base["winner"]).copy()
        base_agenda = np.asarray(base["agenda"]).copy()
        rows = []
        for k in budgets:
            b = c = m = dec = dep = wins = bwins = 0
            for s in range(n):
                lo = s * G
                g = searcher.play(s_seed, lo, G, s, agendas=1 << a, threads=threads,
                                  knobs=knobs.with_rollouts(k))
                dealt = base_agenda[lo:lo + G, s] == a
                won = (np.asarray(g.columns["winner"]) == s) & dealt
                was = (base_winner[lo:lo + G] == s) & dealt
                b += int((won & ~was).sum())
                c += int((was & ~won).sum())
                m += int(dealt.sum())
                wins += int(won.sum())
                bwins += int(was.sum())
                dec += g.searched()
                dep += g.departures()
                progress.advance(G)
            d, lo_, hi_, _ = paired_proportions(b, c, m)
            rows.append(SearchGain(name, k, wins / m if m else math.nan,
                                   bwins / m if m else math.nan, d, [lo_, hi_], m, b + c, dec,
                                   dep))
        out[name] = rows
    progress.close()
    return out


TOLERANCE = 0.03  # a field holds against the searcher when every gain's upper end is below


def gains_summary(gains: dict[str, list[SearchGain]], knobs: Knobs, seed: int, field: str,
                  seat_games: int, tolerance: float = TOLERANCE) -> dict:
    """One table size's searcher audit as `summary.json` keeps it: per Agenda `search_gain`
    and `search_gain_ci` at the knobs' budget, every budget's row (`by_rollouts`), and
    `held` (every budget's upper end at most `tolerance`); `held` over the Agendas."""
    agendas = {}
    for name in L.AGENDA_NAMES:  # (in the order of declaration, whatever was asked first)
        rows = gains.get(name)
        if not rows:
            continue
        first = rows[0]
        agendas[name] = {
            "search_gain": first.gain, "search_gain_ci": first.ci,
            "field_rate": first.base, "searcher_rate": first.rate, "seat_games": first.n,
            "by_rollouts": {str(r.rollouts): r.as_dict() for r in rows},
            "held": all(r.ci[1] <= tolerance for r in rows)}
    return {"field": field, "seed": seed, "seat_games": seat_games, "knobs": knobs.as_dict(),
            "budgets": [r.rollouts for r in next(iter(gains.values()), [])],
            "tolerance": tolerance, "agendas": agendas,
            "held": all(a["held"] for a in agendas.values()),
            "note": "the searcher's single-seat gains are lower bounds of what a strong player "
                    "gains against this field"}


# OUT/search/summary.json's keys (`fbsim.inputs`), as `gains_summary` and `fbsim exploit
# --oracle search` write them: per table size the knobs (the fields of `Knobs`), the budgets,
# and per Agenda its gains (`by_rollouts`: one row per budget, the fields of `SearchGain`)
COUNT = Key("count", lo=0, hi=MAX_COUNT, required=True)
GAIN_ROW_KEYS = SEARCH_GAIN_KEYS  # (one budget's row, as a state keeps it too)
GAIN_AGENDA_KEYS = {
    "search_gain": Key("number", lo=-1, hi=1, required=True),
    "search_gain_ci": interval(-1, 1, required=True),
    "field_rate": Key("number", lo=0, hi=1, required=True),
    "searcher_rate": Key("number", lo=0, hi=1, required=True),
    "seat_games": COUNT,
    "by_rollouts": Key("table", "a table of budgets", required=True),  # (rows: below)
    "held": Key("bool", required=True),
}
GAINS_KEYS = {
    "field": Key("text", required=True), "seed": Key("count", lo=0, required=True),
    "seat_games": Key("count", lo=10, hi=MAX_COUNT, required=True),
    "knobs": Key("table", keys=KNOB_KEYS, required=True),
    "budgets": Key("list", "a list of rollout budgets, each above the one before",
                   size=(1, 16), item=Key("count", lo=1, hi=100_000), required=True,
                   ordered=True),
    "tolerance": Key("number", lo=0, hi=1, required=True),
    "agendas": Key("table", known="agenda", required=True,
                   keys={a: Key("table", keys=GAIN_AGENDA_KEYS) for a in L.AGENDA_NAMES}),
    "held": Key("bool", required=True), "note": Key("text", required=True),
    "rules_toml": Key("text", required=True),
    "provenance": Key("table", required=True,
                      keys={**{k: Key("any", required=True) for k in PROVENANCE_KEYS},
                            "kind": Key("text", choices=("exploit search",), required=True)}),
}
PUBLISHED_KEYS = {"players": Key("table", required=True)}  # (its entries: `GAINS_KEYS`)
# what an Agenda's entry repeats of its first budget's row (`gains_summary`)
FIRST_ROW = {"search_gain": "gain", "search_gain_ci": "ci", "field_rate": "base",
             "searcher_rate": "rate", "seat_games": "n"}


def check_gains(doc: dict, path) -> dict:
    """OUT/search/summary.json (as `read_published` read it): its keys, each table size's
    entry by `GAINS_KEYS`, and what spans keys, as `gains_summary` writes them: every
    Agenda's rows those of the budgets, each estimate within its interval, the Agenda's
    numbers its first budget's, the knobs' rollouts the first budget, `held` what the upper
    ends and the tolerance say, no more changed games than games nor departures than
    decisions, rules that read as TOML. UsageError naming the file and the key, and the way
    out."""
    import tomllib

    def fail(key: str, message: str):
        raise UsageError(f"{path}: not a searcher audit fbsim wrote ({key}: {message}); "
                         "restore the file, or remove it and audit each table size it held "
                         "again")

    doc = check(doc, PUBLISHED_KEYS, fail)
    out = {}
    for n, entry in doc["players"].items():
        where = f"players.{n}"
        entry = check(entry, GAINS_KEYS, fail, where)
        if not entry["field"].strip():
            fail(f"{where}.field", "expected the field's name, got blank text")
        try:
            tomllib.loads(entry["rules_toml"])
        except tomllib.TOMLDecodeError as e:
            fail(f"{where}.rules_toml", f"not TOML ({e})")
        budgets = [str(b) for b in entry["budgets"]]
        if len(set(budgets)) < len(budgets):
            fail(f"{where}.budgets", f"a budget repeated: {shown(entry['budgets'])}")
        if entry["knobs"]["rollouts"] != entry["budgets"][0]:
            fail(f"{where}.knobs.rollouts", f"expected the first budget "
                 f"{entry['budgets'][0]}, got {entry['knobs']['rollouts']}")
        for name, a in entry["agendas"].items():
            at = f"{where}.agendas.{name}"
            if sorted(a["by_rollouts"]) != sorted(budgets):  # (written with keys sorted)
                fail(f"{at}.by_rollouts", f"expected one row per budget {shown(budgets)}, "
                     f"got {shown(list(a['by_rollouts']))}")
            for b, row in a["by_rollouts"].items():
                rat = f"{at}.by_rollouts.{b}"
                row = check(row, GAIN_ROW_KEYS, fail, rat)
                within(row["gain"], row["ci"], fail, f"{rat}.gain")
                if row["agenda"] != name or str(row["rollouts"]) != b:
                    fail(rat, f"expected the row of {name} at {b} rollouts, got "
                         f"{shown(row['agenda'])} at {shown(row['rollouts'])}")
                for small, big in (("changed", "n"), ("departures", "decisions")):
                    if row[small] > row[big]:
                        fail(f"{rat}.{small}", f"expected at most {big} ({row[big]}), got "
                             f"{row[small]}")
                a["by_rollouts"][b] = row
            first = a["by_rollouts"][budgets[0]]
            for key, of in FIRST_ROW.items():
                if a[key] != first[of]:
                    fail(f"{at}.{key}", f"expected the first budget's {of} "
                         f"{shown(first[of])}, got {shown(a[key])}")
            held = all(r["ci"][1] <= entry["tolerance"] for r in a["by_rollouts"].values())
            if a["held"] != held:
                fail(f"{at}.held", f"expected {str(held).lower()} (every budget's upper end "
                     f"against the tolerance {entry['tolerance']:g})")
        held = all(a["held"] for a in entry["agendas"].values())
        if entry["held"] != held:
            fail(f"{where}.held", f"expected {str(held).lower()} (every Agenda's held)")
        out[n] = entry
    return {**doc, "players": out}


def format_gains(players: int, summary: dict) -> str:
    """The audit of one table size in words and numbers (a Markdown table)."""
    budgets = summary["budgets"]
    head = " | ".join(f"gain at {k} rollouts" for k in budgets)
    lines = [f"## {players} players against {summary['field']}", "",
             f"| Agenda | seat-games | field | searcher ({budgets[0]} rollouts) | {head} | "
             "departures | held |", "|---|---|---|---|" + "---|" * len(budgets) + "---|---|"]
    for name, a in summary["agendas"].items():
        rows = a["by_rollouts"]
        first = rows[str(budgets[0])]
        gains = " | ".join(
            f"{100 * rows[str(k)]['gain']:+.1f} [{100 * rows[str(k)]['ci'][0]:+.1f}, "
            f"{100 * rows[str(k)]['ci'][1]:+.1f}]" for k in budgets)
        dep = first["departures"] / first["decisions"] if first["decisions"] else 0.0
        lines.append(f"| {name} | {a['seat_games']:,} | {100 * a['field_rate']:.1f}% | "
                     f"{100 * a['searcher_rate']:.1f}% | {gains} | {100 * dep:.0f}% of "
                     f"{first['decisions']:,} | {'yes' if a['held'] else 'no'} |")
    return "\n".join(lines)


# ---------------------------------------------------------------- a searched game, replayed


def _commit_text(c) -> str:
    works, cool, burn, mc, mb = (int(x) for x in c)
    masked = [f"{x} {what} masked" for x, what in ((mc, "COOL"), (mb, "BURN")) if x]
    return f"{works} WORKS, {cool} COOL, {burn} BURN" + (f" ({', '.join(masked)})"
                                                         if masked else "")


class _LoggedCommits:
    """A seat's policy whose commitments are the searcher's logged ones (its bot decides
    everything else, and every round the searcher did not search)."""

    def __init__(self, policy, decisions: np.ndarray):
        self.policy = policy
        self.decisions = decisions

    def commit(self, R, V, seed, game):
        r = int(V[L.V_ROUND])
        d = self.decisions[r - 1]
        field = self.policy.commit(R, V, seed, game)
        if d[KS.D_SEARCHED] != 1:
            return field
        return tuple(int(x) for x in d[KS.D_COMMIT:KS.D_COMMIT + 5])

    def __getattr__(self, name):
        return getattr(self.policy, name)


@dataclass
class ReplayedSearch:
    """One game with a searching seat: its reference record (`fbsim.reference`), and the
    searcher's log for it (`SearchedGames` of one game)."""

    record: object
    games: SearchedGames


def replay_searched(rules: Rules, field: Lineup, knobs: Knobs, seed: int, game: int,
                    seat: int, belief_seed: int = 0) -> ReplayedSearch:
    """Game `game` of `seed` with seat `seat` searching: played by the kernel (its decisions
    and every candidate's rollout tallies), then replayed by the reference engine with that
    seat's commitments as the searcher made them, every other decision by the bots; the two
    records must agree field by field (else an error naming the field)."""
    from fbsim.errors import FbsimError
    from fbsim.kernel.lockstep import record_difference
    from fbsim.reference.engine import play_game

    s = Searcher(rules, field, knobs, belief_seed=belief_seed)
    g = s.play(seed, game, 1, seat, full_log=True, threads=1)
    rec = play_game(rules, field, seed, game, events=True,
                    wrap=lambda t, p: _LoggedCommits(p, g.decisions[0]) if t == seat else p)
    diff = record_difference(rec, g.columns, 0, field)
    if diff:
        raise FbsimError(f"game {game} (seed {seed}) with seat {seat} searching: the reference "
                         f"engine and the kernel disagree ({diff})")
    return ReplayedSearch(rec, g)


def search_lines(g: SearchedGames, r: int, players: int) -> list[str]:
    """What the searcher weighed at its commitment of round r (the narration's lines)."""
    d = g.decisions[0, r - 1]
    if d[KS.D_SEARCHED] != 1:
        return []
    k = int(d[KS.D_ROLLOUTS])
    cands = g.candidates[0, r - 1, : int(d[KS.D_CANDIDATES])]
    seat = g.seat
    lines = [f"  Seat {seat} searches its commitment: {len(cands)} candidates x {k} rollouts "
             "from worlds it samples from its own view"]
    post = g.posterior[0, r - 1]
    guess = [f"seat {s}: " + "/".join(f"{n[:3]} {post[s, a] / 100:.0f}%"
                                      for a, n in enumerate(L.AGENDA_NAMES))
             for s in range(players) if s != seat and post[s].max() < 10000]
    if guess:
        lines.append("    rivals' Agendas as it weighs them: " + "; ".join(guess))
    order = sorted(range(len(cands)), key=lambda c: (-cands[c, KS.C_WINS], c))
    for c in order[:6]:
        row = cands[c]
        diff = row[KS.C_DIFF] / k
        var = (row[KS.C_DIFF2] - k * diff * diff) / (k - 1) if k > 1 else 0.0
        se = math.sqrt(max(var, 0.0) / k)
        what = "the field's choice" if c == 0 else f"{100 * diff:+.1f} [se {100 * se:.1f}]"
        lines.append(f"    {_commit_text(row[KS.C_COMMIT:KS.C_COMMIT + 5])}: wins "
                     f"{row[KS.C_WINS]}/{k} ({what})")
    if len(cands) > 6:
        lines.append(f"    ... and {len(cands) - 6} more candidates")
    chosen = int(d[KS.D_CHOSEN])
    z = d[KS.D_Z] / 1000
    if chosen == 0:
        lines.append(f"    keeps the field's choice (the best's paired z {z:.2f} is not "
                     "above the margin)")
    else:
        why = ("no rollout favours the field's choice" if z >= 1e6
               else f"paired z {z:.2f} over the field's choice")
        lines.append(f"    departs: plays {_commit_text(d[KS.D_COMMIT:KS.D_COMMIT + 5])} "
                     f"({why})")
    return lines


def narrate_searched(replayed: ReplayedSearch, rules: Rules) -> str:
    """The reference engine's narration of the game with, at each round's commitments, what
    the searcher weighed and chose."""
    from fbsim.reference.narrate import narrate

    text = narrate(replayed.record, rules, None)
    out, r = [], 0
    for line in text.splitlines():
        if line.startswith("Round "):
            r = int(line.split()[1])
        if line == "  Reveal and resolve:" and r:
            out += search_lines(replayed.games, r, rules.players)
        out.append(line)
    return "\n".join(out) + "\n"
