"""Expert iteration: the searcher's departures distilled into the field's tables.

The searcher (`fbsim.experiments.search.searcher`) improves on the field one decision at a
time, by rollouts; the field cannot search. Distillation gives the field what the searcher
found, in a form the fast kernel plays without a rollout: each planner of an Agenda's field
keeps a table of commitments by round and the band of the final Dial it projects
(`fbsim.policies.planner.TABLE`, `table_cell`). For one Agenda:

1. the searcher plays the seat-games it was dealt the Agenda against the field (seats
   rotated, every candidate's rollout tallies logged, `Searcher.play(full_log=True)`);
2. every searched commitment is filed under the component its seat drew (the field's memo)
   and the table cell it decided in; for each candidate commitment, the cell sums the paired
   rollout differences against the field's own choice over its decisions (each a mean of
   `rollouts` paired wins, with its variance);
3. a cell takes the commitment of the largest sum whose paired z over the cell exceeds
   `margin` and that was a candidate in at least `coverage` of the cell's decisions (it
   could be played there), given `min_decisions` decisions; the other cells keep what they
   had (the plan, or an earlier distillation's commitment).

This is one step of approximate policy iteration by state aggregation (Bertsekas & Tsitsiklis
1996, ch. 6; the expert iteration of Anthony, Tian & Barber 2017 with a table for the
apprentice): the improvement estimated per cell is the average of the searcher's one-step
improvements there, so unlike the searcher's own choice it is not biased up by choosing the
best of many noisy candidates at each decision. Every seat of the Agenda then plays the new
table, the other Agendas answer it (the equilibrium search goes on from the distilled field),
and the searcher audits again: the loop of `fbsim equilibrium --distill`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from fbsim.experiments.search.equilibrium.fields import planner_params
from fbsim.experiments.search.searcher import Knobs, Searcher, seat_games_for
from fbsim.game import layout as L
from fbsim.kernel import search as KS
from fbsim.lineup import Entry, Lineup
from fbsim.policies import field as F
from fbsim.policies.planner import (
    BAND_TEXT,
    CAPITAL_BANDS,
    CAPITAL_TEXT,
    N_BANDS,
    N_CAPITAL,
    TABLE_BANDS,
    TABLE_MASKED,
    capital_band,
    table_name,
)
from fbsim.rules import Rules

MARGIN = 3.0  # the paired z over a cell a change needs
COVERAGE = 0.9  # ... and a candidate in this share of the cell's decisions
MIN_DECISIONS = 30  # ... of at least this many decisions


@dataclass(frozen=True)
class Change:
    """One table cell changed: component `component` of the Agenda's field, round `round`,
    the projection's band `band`, from code `before` (-1: the plan) to `code`; `gain`: the summed
    one-step improvement per seat-game dealt the Agenda (win probability), `z` its paired z
    over the cell's `decisions`."""

    component: int
    round: int
    band: str
    before: int
    code: int
    decisions: int
    gain: float
    z: float

    def as_dict(self) -> dict:
        return asdict(self)

    def text(self) -> str:
        where = band_text(self.band)
        return (f"component {self.component}, round {self.round}, {where}: "
                f"{code_text(self.before)} -> {code_text(self.code)} ({self.decisions:,} "
                f"decisions, {100 * self.gain:+.2f} points, z {self.z:.1f})")


def band_text(band: str) -> str:
    """What a cell's band names: a band of the projected final Dial or of its Capital."""
    if band in CAPITAL_BANDS:
        return f"its {CAPITAL_TEXT[CAPITAL_BANDS.index(band)]}"
    return f"projected {BAND_TEXT[TABLE_BANDS.index(band)]}"


def code_of(commit) -> int:
    """The table code of a commitment (works, cool, burn, masked cool, masked burn)."""
    _, cool, burn, _, mb = (int(x) for x in commit)
    return 10 * cool + burn + (TABLE_MASKED if mb > 0 else 0)


def code_text(code: int) -> str:
    if code < 0:
        return "its plan"
    c = code % 100
    masked = " (BURNs masked)" if code >= TABLE_MASKED else ""
    return f"{c // 10} COOL, {c % 10} BURN{masked}"


def components(entry: Entry) -> list[tuple[float, dict]]:
    """An Agenda's strategies as (weight, planner parameters): a field's components, or one
    planner."""
    if entry.bot == "field":
        return F.component_params(entry.as_dict())
    if entry.bot == "planner":
        return [(1.0, planner_params(entry.as_dict()))]
    raise ValueError(f"distillation needs a planner or a field of planners, got {entry.bot}")


def component_of(entry: Entry, memo: int) -> int:
    """The component a decision's memo names (`fbsim.policies.field.chosen`)."""
    if entry.bot != "field":
        return 0
    return (int(memo) - F.COMPONENTS) // F.WIDTH


@dataclass
class Tally:
    """Per (component, projection's cell, Capital cell, code): the sum of the per-decision
    mean paired differences, of their variances, and the decisions it was a candidate in;
    per (component, projection's cell, Capital cell): the decisions."""

    sums: dict
    decisions: dict
    seat_games: int = 0

    @classmethod
    def empty(cls) -> Tally:
        return cls({}, {})

    def add(self, entry: Entry, decisions: np.ndarray, cands: np.ndarray) -> None:
        D, C = decisions, cands
        for g, r in zip(*np.nonzero(D[:, :, KS.D_SEARCHED] == 1), strict=True):
            d = D[g, r]
            if r == 0 or not (D[g, :r, KS.D_SEARCHED] == 1).any():
                self.seat_games += 1
            cell = int(d[KS.D_CELL])
            if cell < 0:
                continue
            ccell = int(r) * N_CAPITAL + capital_band(int(d[KS.D_CAPITAL]))  # `capital_cell`
            key = (component_of(entry, d[KS.D_MEMO]), cell, ccell)
            self.decisions[key] = self.decisions.get(key, 0) + 1
            k = int(d[KS.D_ROLLOUTS])
            for row in C[g, r, :int(d[KS.D_CANDIDATES])]:
                m = row[KS.C_DIFF] / k
                var = (row[KS.C_DIFF2] - k * m * m) / (k - 1) / k if k > 1 else 0.0
                s = self.sums.setdefault((*key, code_of(row[KS.C_COMMIT:KS.C_COMMIT + 5])),
                                         [0.0, 0.0, 0])
                s[0] += m
                s[1] += max(var, 0.0)
                s[2] += 1

    def changes(self, tables: list[dict], margin: float = MARGIN, coverage: float = COVERAGE,
                min_decisions: int = MIN_DECISIONS) -> list[Change]:
        """Each cell's best commitment where it clears the bars (`distill`, steps 3 and 4),
        against the tables the field played (`tables[k]`: component k's parameters)."""
        def now(k, band_cell, bands, size):
            return int(round(tables[k].get(cell_name(band_cell, bands, size), -1.0)))

        # step 3: the projection's cells, over the decisions no Capital cell decides
        sums: dict = {}
        count: dict = {}
        for (k, cell, ccell), n in self.decisions.items():
            if now(k, ccell, CAPITAL_BANDS, N_CAPITAL) < 0:
                count[(k, cell)] = count.get((k, cell), 0) + n
        for (k, cell, ccell, code), v in self.sums.items():
            if (k, cell) in count and now(k, ccell, CAPITAL_BANDS, N_CAPITAL) < 0:
                t = sums.setdefault((k, cell, code), [0.0, 0.0, 0])
                for i in range(3):
                    t[i] += v[i]
        best = pick(sums, count, margin, coverage, min_decisions)
        out = [change(k, cell, TABLE_BANDS, N_BANDS, now(k, cell, TABLE_BANDS, N_BANDS),
                      pick_, self.seat_games) for (k, cell), pick_ in best.items()]
        new_code = {(k, cell): p[0] for (k, cell), p in best.items()}
        # step 4: the Capital cells, against what their decisions play after step 3
        sums, count = {}, {}
        for (k, _cell, ccell), n in self.decisions.items():
            count[(k, ccell)] = count.get((k, ccell), 0) + n
        for (k, cell, ccell, code), (s, v, m) in self.sums.items():
            base = new_code.get((k, cell))
            if base is not None and now(k, ccell, CAPITAL_BANDS, N_CAPITAL) < 0:
                b = self.sums.get((k, cell, ccell, base), (0.0, 0.0, 0))
                s, v = s - b[0], v + b[1]
            t = sums.setdefault((k, ccell, code), [0.0, 0.0, 0])
            t[0] += s
            t[1] += v
            t[2] += m
        best = pick(sums, count, margin, coverage, min_decisions)
        out += [change(k, ccell, CAPITAL_BANDS, N_CAPITAL,
                       now(k, ccell, CAPITAL_BANDS, N_CAPITAL), p, self.seat_games)
                for (k, ccell), p in best.items()]
        return [c for c in sorted(out, key=lambda c: (c.component, c.round, c.band))
                if c.code != c.before]


def cell_name(cell: int, bands: tuple[str, ...], size: int) -> str:
    """The parameter of a table's cell (round - 1) x size + band."""
    return table_name(cell // size + 1, cell % size, bands)


def pick(sums: dict, count: dict, margin: float, coverage: float,
         min_decisions: int) -> dict:
    """Per (component, cell): the code of the largest positive sum whose paired z exceeds
    `margin`, a candidate in `coverage` of the cell's (at least `min_decisions`) decisions:
    (code, sum, z, decisions)."""
    best: dict = {}
    for (k, cell, code), (s, v, m) in sorted(sums.items()):
        n = count.get((k, cell), 0)
        if n < min_decisions or m < coverage * n or s <= 0 or v <= 0:
            continue
        z = s / math.sqrt(v)
        if z > margin and (best.get((k, cell)) is None or s > best[(k, cell)][1]):
            best[(k, cell)] = (code, s, z, n)
    return dict(sorted(best.items()))


def change(k: int, cell: int, bands: tuple[str, ...], size: int, before: int, p: tuple,
           seat_games: int) -> Change:
    code, s, z, n = p
    return Change(k, cell // size + 1, bands[cell % size], before, code, n,
                  s / max(seat_games, 1), z)


def apply(entry: Entry, changes: list[Change]) -> Entry:
    """The Agenda's entry with its tables changed (a planner stays a planner)."""
    comps = components(entry)
    comps = [(w, dict(p)) for w, p in comps]
    for c in changes:
        comps[c.component][1][f"r{c.round}_{c.band}"] = float(c.code)
    if entry.bot == "planner":
        return Entry.make("planner", comps[0][1])
    return Entry.make("field", F.field_params(comps, F.draw_name(entry.as_dict())))


@dataclass
class Distilled:
    """One Agenda's distillation: the changes and the lineup that plays them."""

    agenda: str
    changes: list[Change]
    lineup: Lineup
    seat_games: int
    decisions: int
    departures: int

    def gain(self) -> float:
        """The summed one-step improvement of the changes, per seat-game (an estimate)."""
        return float(sum(c.gain for c in self.changes))


def distill(rules: Rules, field: Lineup, agenda: str, seed: int, seat_games: int = 3000,
            knobs: Knobs | None = None, belief_seed: int = 0, margin: float = MARGIN,
            coverage: float = COVERAGE, min_decisions: int = MIN_DECISIONS,
            threads: int | None = None, progress=None) -> Distilled:
    """The searcher's departures for `agenda` against `field`, distilled into the tables of
    the Agenda's strategies (seat s searching on games [s G, (s + 1) G) of `seed`, G from
    `seat_games_for`)."""
    knobs = knobs or Knobs()
    entry = field.by_agenda[agenda]
    tables = [p for _, p in components(entry)]
    a = L.AGENDA_NAMES.index(agenda)
    n = rules.players
    G = seat_games_for(rules, a, seat_games)
    s = Searcher(rules, field, knobs, belief_seed=belief_seed)
    tally = Tally.empty()
    dec = dep = 0
    chunk = 500  # games per call (the full log holds every candidate of every round)
    for seat in range(n):
        for lo in range(seat * G, (seat + 1) * G, chunk):
            hi = min(lo + chunk, (seat + 1) * G)
            g = s.play(seed, lo, hi - lo, seat, agendas=1 << a, full_log=True,
                       threads=threads)
            tally.add(entry, g.decisions, g.candidates)
            dec += g.searched()
            dep += g.departures()
            if progress is not None:
                progress.advance(hi - lo)
    changes = tally.changes(tables, margin, coverage, min_decisions)
    by = dict(field.by_agenda)
    by[agenda] = apply(entry, changes)
    return Distilled(agenda, changes, Lineup(by, dict(field.seats)), tally.seat_games, dec,
                     dep)
