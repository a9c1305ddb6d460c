"""The planner's table of commitments and the searcher's distillation into it
(`fbsim.policies.planner.TABLE`, `fbsim.experiments.search.distill`)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fbsim.experiments.search import distill as DS
from fbsim.game import layout as GL
from fbsim.kernel import search as KS
from fbsim.kernel import simulate
from fbsim.lineup import Entry, Lineup, lineup_hash
from fbsim.policies import field as F
from fbsim.policies.planner import (
    CAPITAL_BANDS,
    CAPITAL_EDGES,
    CAPITAL_TABLE,
    N_BANDS,
    N_CAPITAL,
    TABLE,
    TABLE_BANDS,
    TABLE_ROUNDS,
    capital_band,
    capital_cell,
    table_cell,
    table_name,
)
from fbsim.reference.engine import play_game
from fbsim.rules import load_rules
from fbsim.rules.vector import rules_vector


def every_cell(code: float) -> dict:
    return {p.name: code for p in TABLE}


def test_table_cell_by_round_and_the_band_of_the_projected_final_Dial_R_E2():
    """The cell is the round and the band of the final Dial the player projects (public,
    R-I1): from 40 ppm under Severe (R-E2) in steps of 20 to 20 over it, Extreme, halfway to
    Collapse, Collapse and 25 over it."""
    rules = load_rules(players=4)
    R = rules_vector(rules)
    V = np.zeros(GL.V_SIZE, dtype=np.int64)  # (no reveal yet: the projection is the world's)
    severe, extreme, collapse = rules.dial.severe, rules.dial.extreme, rules.dial.collapse
    cases = [(1, severe - 41, 0), (1, severe - 40, 1), (1, severe - 1, 2), (1, severe, 3),
             (2, extreme - 1, 4 + N_BANDS), (2, extreme, 5 + N_BANDS),
             (2, (extreme + collapse) // 2, 6 + N_BANDS), (3, collapse, 7 + 2 * N_BANDS),
             (TABLE_ROUNDS, collapse + 25, (TABLE_ROUNDS - 1) * N_BANDS + 8),
             (TABLE_ROUNDS + 1, 450, -1)]
    for r, projected, cell in cases:
        V[GL.V_ROUND], V[GL.V_WORLD_PROJECTION] = r, projected
        assert table_cell(R, V) == cell, (r, projected)
    assert TABLE[(2 - 1) * N_BANDS + 2].name == table_name(2, 2) == "r2_p2"
    assert len(TABLE) == TABLE_ROUNDS * N_BANDS


def test_capital_cell_by_round_and_the_band_of_its_own_Capital_R_I2_R_S3():
    """The Capital table's cell is the round and the band of the player's own Capital
    (private to it, R-I2): in round 1 each place of the staggered order apart (R-S3: 8 +
    place), then wider bands; -1 after the last round of the table."""
    assert [capital_band(c) for c in (0, 8, 9, 10, 11, 12, 13, 14, 17, 18, 23, 24, 99)] == \
        [0, 0, 1, 2, 3, 4, 4, 5, 5, 6, 6, 7, 7]
    assert len(CAPITAL_BANDS) == N_CAPITAL == len(CAPITAL_EDGES) + 1
    V = np.zeros(GL.V_SIZE, dtype=np.int64)
    V[GL.V_SEAT] = 2
    for r, capital, cell in ((1, 10, 2), (1, 8, 0), (3, 15, 2 * N_CAPITAL + 5),
                             (TABLE_ROUNDS, 30, (TABLE_ROUNDS - 1) * N_CAPITAL + 7),
                             (TABLE_ROUNDS + 1, 10, -1)):
        V[GL.V_ROUND] = r
        V[GL.V_MY_CAPITAL + 2] = capital
        V[GL.V_MY_CAPITAL + 1] = 50  # (a rival's slot: not read)
        assert capital_cell(V) == cell, (r, capital)
    assert CAPITAL_TABLE[N_CAPITAL + 3].name == table_name(2, 3, CAPITAL_BANDS) == "r2_c3"


def test_a_capital_cell_plays_before_the_projections_table_R_S3():
    """Every projection cell at 4 BURN and the Capital cell of round 1 at 8 Capital at 6 COOL:
    only the round-1 first player (8 Capital, R-S3) cools, 6 Agents in round 1 and never
    again; the other seats (9 to 11) burn 4 every round. Both engines agree."""
    rules = load_rules(players=4)
    cells = {**every_cell(4), "r1_c0": 60}
    lu = Lineup({a: Entry.make("planner", {"mask_burns": 0, **cells}) for a in GL.AGENDA_NAMES})
    cols = simulate(rules, lu, seed=5, n_games=30)
    cool = np.asarray(cols["cool_open"])
    assert (cool[:, 0] == 6).all() and (cool[:, 1:] == 0).all()
    burn = np.asarray(cols["burn_open"])
    rounds = np.asarray(cols["rounds_played"])
    assert (burn[:, 0] == 4 * (rounds - 1)).all() and (burn[:, 1] == 4 * rounds).all()
    for g in range(0, 30, 6):
        rec = play_game(rules, lu, 5, g)
        assert [s.cool_open for s in rec.seats] == [6, 0, 0, 0]


def test_a_table_cell_plays_its_commitment_in_both_engines_R_C1_R_C2():
    """Every cell at code 4 (0 COOL, 4 open BURN): every seat burns 4 and works 2 every
    round (R-C1) whatever its plan; at 104 its BURNs are masked while its Masks last (R-C2:
    2 Masks, so 2 in round 1). The kernel plays the reference engine's games."""
    rules = load_rules(players=4)
    plan = {"aim": 300, "chips": 6, "tolerance": 0, "mask_burns": 0}
    for code, masked in ((4, 0), (104, rules.masks)):
        lu = Lineup({a: Entry.make("planner", {**plan, **every_cell(code)})
                     for a in GL.AGENDA_NAMES})
        cols = simulate(rules, lu, seed=3, n_games=40)
        rounds = np.asarray(cols["rounds_played"])[:, None]
        assert np.array_equal(np.asarray(cols["works"]), 2 * np.broadcast_to(rounds, (40, 4)))
        burns = np.asarray(cols["burn_open"]) + np.asarray(cols["burn_masked"])
        assert np.array_equal(burns, 4 * np.broadcast_to(rounds, (40, 4)))
        assert (np.asarray(cols["burn_masked"]) == masked).all()
        assert (np.asarray(cols["cool_open"]) == 0).all()
        for g in range(0, 40, 7):
            rec = play_game(rules, lu, 3, g)
            assert [s.burn_masked for s in rec.seats] == [masked] * 4


def test_a_table_cell_cools_only_what_it_can_pay_R_C3():
    """Code 60 (6 COOL) every round: COOL is cut to the Capital it holds (R-C3), never
    illegal; WORKS take the rest."""
    rules = load_rules(players=3)
    lu = Lineup({a: Entry.make("planner", every_cell(60)) for a in GL.AGENDA_NAMES})
    cols = simulate(rules, lu, seed=9, n_games=60)
    cool = np.asarray(cols["cool_open"])
    assert cool.min() > 0
    assert (cool + np.asarray(cols["works"]) == 6 * np.asarray(cols["rounds_played"])[:, None]
            ).all()


def test_the_table_off_changes_no_game_nor_any_lineups_hash():
    """Every cell at -1 (the default): the planner plays its plan, the same games as without
    the table's keys, and the lineup's hash is the one it had before the table was declared
    (a quiet parameter at its default is left out of the hash)."""
    rules = load_rules(players=4)
    plan = {"aim": 520, "chips": 2}
    plain = Lineup({a: Entry.make("planner", plan) for a in GL.AGENDA_NAMES})
    off = Lineup({a: Entry.make("planner", {**plan, **every_cell(-1)})
                  for a in GL.AGENDA_NAMES})
    a, b = simulate(rules, plain, 1, 200), simulate(rules, off, 1, 200)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert lineup_hash(plain) == lineup_hash(off)
    assert '"r1_p0"' not in off.canonical()
    on = Lineup({a: Entry.make("planner", {**plan, "r2_p3": 20}) for a in GL.AGENDA_NAMES})
    assert lineup_hash(on) != lineup_hash(plain)


# ---------------------------------------------------------------- the distillation's tally


SPREAD = (8, 9, 10, 11, 12, 14, 18, 24)  # one Capital of each band (`CAPITAL_EDGES`)


def fake_log(cells, games=100, capital=None):
    """Searched decisions of a planner seat (one per game, round 2) with candidate 0 (the
    field's: 3 WORKS, 3 COOL) and candidate 1 (6 WORKS) whose mean paired difference per
    decision is `cells[cell]` (k = 64 rollouts; a spread of 1 in every paired diff); the
    seat's Capital `capital(g)` (default: game g's in band g mod 8, too few decisions a
    Capital cell for a change)."""
    k = 64
    D = np.zeros((games, GL.MAX_ROUNDS, KS.D_SIZE), dtype=np.int64)
    C = np.zeros((games, GL.MAX_ROUNDS, KS.MAX_CANDIDATES, KS.C_SIZE), dtype=np.int64)
    for g in range(games):
        cell, mean = cells[g % len(cells)]
        d = D[g, 1]
        d[KS.D_SEARCHED], d[KS.D_CELL], d[KS.D_MEMO] = 1, cell, GL.NO_MEMO
        d[KS.D_ROLLOUTS], d[KS.D_CANDIDATES] = k, 2
        d[KS.D_CAPITAL] = capital(g) if capital else SPREAD[g % len(SPREAD)]
        C[g, 1, 0, KS.C_COMMIT:KS.C_COMMIT + 5] = (3, 3, 0, 0, 0)
        C[g, 1, 1, KS.C_COMMIT:KS.C_COMMIT + 5] = (6, 0, 0, 0, 0)
        wins = int(round(mean * k))  # wins - losses = mean k, |diff| = 1 on every rollout
        C[g, 1, 1, KS.C_DIFF] = wins
        C[g, 1, 1, KS.C_DIFF2] = k
    return D, C


def test_a_cell_takes_the_commitment_its_decisions_favour_clearly():
    """A cell whose decisions favour 6 WORKS over the field's choice by 0.25 a decision
    changes to it (code 0); a cell favouring it by 0.01 (z below the margin) does not, nor
    one of too few decisions; the change's gain is the summed improvement per seat-game."""
    entry = Entry.make("planner", {})
    strong, weak, rare = N_BANDS + 1, N_BANDS + 2, N_BANDS + 3
    D, C = fake_log([(strong, 0.25)] * 5 + [(weak, 0.01)] * 4 + [(rare, 0.5)], games=100)
    tally = DS.Tally.empty()
    tally.add(entry, D, C)
    assert tally.seat_games == 100
    changes = tally.changes([entry.as_dict()], min_decisions=30)
    assert [(c.round, c.band, c.before, c.code) for c in changes] == [
        (2, TABLE_BANDS[1], -1, 0)]
    assert changes[0].gain == pytest.approx(50 * 0.25 / 100)
    new = DS.apply(entry, changes)
    assert new.as_dict()["r2_p1"] == 0.0 and new.as_dict()["r2_p2"] == -1.0
    # (the table it now has is the field's choice: the same log changes nothing more)
    assert tally.changes([new.as_dict()], min_decisions=30) == []


def test_a_commitment_missing_from_many_of_a_cells_decisions_is_not_taken():
    """A candidate scored in fewer than `coverage` of its cell's decisions (not playable in
    the others, R-C3) does not take the cell."""
    entry = Entry.make("planner", {})
    D, C = fake_log([(N_BANDS, 0.25)], games=100)
    C[:20, 1, 1] = 0  # (20 decisions without it)
    D[:20, 1, KS.D_CANDIDATES] = 1
    tally = DS.Tally.empty()
    tally.add(entry, D, C)
    assert tally.changes([entry.as_dict()], coverage=0.9) == []
    assert len(tally.changes([entry.as_dict()], coverage=0.75)) == 1


def test_a_fields_decisions_are_filed_under_the_component_they_drew():
    """A field's decision is filed under the component its memo names; the change goes to
    that component's table alone."""
    comps = [(0.5, {"aim": 500.0}), (0.5, {"aim": 600.0})]
    entry = Entry.make("field", F.field_params(
        [(w, Entry.make("planner", p).as_dict()) for w, p in comps]))
    D, C = fake_log([(N_BANDS, 0.25)], games=60)
    D[:, 1, KS.D_MEMO] = F.COMPONENTS + 1 * F.WIDTH
    tally = DS.Tally.empty()
    tally.add(entry, D, C)
    tables = [p for _, p in DS.components(entry)]
    changes = tally.changes(tables)
    assert [(c.component, c.round, c.band) for c in changes] == [(1, 2, "p0")]
    new = F.component_params(DS.apply(entry, changes).as_dict())
    assert new[0][1]["r2_p0"] == -1.0 and new[1][1]["r2_p0"] == 0.0
    assert DS.code_text(0) == "0 COOL, 0 BURN" and DS.code_text(124) == \
        "2 COOL, 4 BURN (BURNs masked)" and DS.code_of((2, 0, 4, 0, 1)) == 104


def test_a_capital_cell_takes_what_the_projection_cannot_see():
    """Decisions of one projection cell that favour 6 WORKS by 0.25 at 8 Capital and
    disfavour it by 0.25 at 15: the projection's cell sums to nothing and keeps the plan; the
    Capital cell of round 2 at 8 (c0) takes 6 WORKS, the one at 15 (c5) keeps the plan."""
    entry = Entry.make("planner", {})
    D, C = fake_log([(N_BANDS + 1, 0.25), (N_BANDS + 1, -0.25)], games=120,
                    capital=lambda g: 8 if g % 2 == 0 else 15)
    tally = DS.Tally.empty()
    tally.add(entry, D, C)
    changes = tally.changes([entry.as_dict()])
    assert [(c.round, c.band, c.before, c.code) for c in changes] == [(2, "c0", -1, 0)]
    assert changes[0].gain == pytest.approx(60 * 0.25 / 120)
    assert "its Capital below 9" in changes[0].text()
    assert json.loads(json.dumps(changes[0].as_dict())) == changes[0].as_dict()  # (the state)
    new = DS.apply(entry, changes)
    assert new.as_dict()["r2_c0"] == 0.0 and new.as_dict()["r2_p1"] == -1.0
    # (now the Capital cell plays it: the same log changes nothing more)
    assert tally.changes([new.as_dict()]) == []


def test_a_capital_cell_takes_nothing_the_projections_cell_already_takes():
    """Every decision of a projection cell favours 6 WORKS by 0.25, at one Capital: the
    projection's cell takes it, and the Capital cell, scored against that change, finds no
    more (it overrides the projection's table only where it tells more)."""
    entry = Entry.make("planner", {})
    D, C = fake_log([(N_BANDS + 1, 0.25)], games=100, capital=lambda g: 8)
    tally = DS.Tally.empty()
    tally.add(entry, D, C)
    changes = tally.changes([entry.as_dict()])
    assert [(c.round, c.band, c.code) for c in changes] == [(2, "p1", 0)]
    # a Capital cell set already (to the field's choice here, 3 COOL) decides these
    # decisions: the projection's cell is not moved, the Capital cell is
    fixed = {**entry.as_dict(), "r2_c0": 30.0}
    assert [(c.round, c.band, c.before, c.code) for c in tally.changes([fixed])] == [
        (2, "c0", 30, 0)]
