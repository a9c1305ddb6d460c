"""Unit tests of the kernel's pieces against the reference engine's functions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fbsim.game import layout as L
from fbsim.kernel import engine as K
from fbsim.kernel import layout as KL
from fbsim.kernel.lockstep import field_name, first_difference
from fbsim.lineup import parse_lineup
from fbsim.reference import engine as E
from fbsim.reference.state import Game
from fbsim.rules import load_rules, rules_vector

R4 = rules_vector(load_rules())


@settings(deadline=None)
@given(st.integers(300, 700))
def test_R_E2_band_of_matches_reference(dial):
    assert K.band_of(R4, dial) == E.band_of(R4, dial)


@settings(deadline=None)
@given(st.integers(0, 2), st.integers(380, 620), st.lists(st.integers(0, 3), min_size=5,
                                                          max_size=5))
def test_R_X1_agenda_bonus_matches_reference(agenda, dial, owned):
    band = E.band_of(R4, dial)
    V = np.zeros(L.V_SIZE, dtype=np.int64)
    V[L.V_OWNED + 2 * L.MAX_KINDS:L.V_OWNED + 2 * L.MAX_KINDS + 5] = owned
    assert K.agenda_bonus(R4, V, agenda, band, dial, 2) == E.agenda_bonus(R4, agenda, band,
                                                                          dial, owned)


@settings(deadline=None)
@given(st.lists(st.integers(0, 3), min_size=5, max_size=5), st.booleans())
def test_R_A2_D7_point_weight_matches_reference(owned, stacks):
    rules = load_rules(sets=[f"accusation.media_stacks={'true' if stacks else 'false'}"])
    R = rules_vector(rules)
    V = np.zeros(L.V_SIZE, dtype=np.int64)
    V[L.V_OWNED + L.MAX_KINDS:L.V_OWNED + L.MAX_KINDS + 5] = owned
    g = E.setup(rules, [0, 1, 2, 0], list(range(5)) * 3, ["hoarder"] * 4, 0, 0, False)
    g.seats[1].owned = list(owned)
    assert isinstance(g, Game)
    assert K.point_weight(R, V, 1) == E.point_weight(g, 1)


def test_lockstep_finds_no_difference_on_sample_games():
    for n, lineup in ((3, None), (4, "random"), (6, None)):
        rules = load_rules(sets=[f"players={n}"])
        for game in range(3):
            assert first_difference(rules, parse_lineup(lineup), 9, game) is None


def test_lockstep_reports_field_round_and_step(monkeypatch):
    # break the reference's wage (R-V6) and check the report names the field and the step
    rules = load_rules()
    orig = E.market_turns

    def bad_market(g, policies):
        orig(g, policies)
        g.seats[0].capital += 1

    monkeypatch.setattr(E, "market_turns", bad_market)
    msg = first_difference(rules, None, 1, 0)
    assert msg is not None
    assert msg.startswith("round 1, after market: my_capital[0] (view of seat 0)")


def test_field_names():
    assert field_name(L.V_DIAL) == "dial"
    assert field_name(L.V_OWNED + 9) == "owned[9]"
    assert field_name(L.V_MY_CAPITAL + 2) == "my_capital[2]"
    assert field_name(KL.S_OVER) == "over"
    with pytest.raises(IndexError):
        field_name(KL.W_SIZE)


def projection_turn_by_turn(R, V):
    """R-W2/R-W3 world turn by world turn (what `project_world` must equal)."""
    dial = int(V[L.V_DIAL])
    flipped = [int(V[L.V_FLIPPED + t]) for t in range(R[L.R_N_TOKENS])]
    crossing = R[L.R_FLIP_WHEN] == L.FLIP_CROSSING
    for r in range(V[L.V_ROUND], R[L.R_ROUNDS]):
        dial += int(R[L.R_BASELINE + r] + R[L.R_BASELINE_OFFSET])
        dial += sum(flipped) * int(R[L.R_TOKEN_PENALTY]) + int(V[L.V_TABLE_PPM])
        for t in range(len(flipped)):
            th = int(R[L.R_TOKEN_THRESHOLD + t])
            if not flipped[t] and (dial > th if crossing else dial >= th):
                flipped[t] = 1
    return dial


@settings(deadline=None, max_examples=400)
@given(rounds=st.integers(1, L.MAX_ROUNDS), offset=st.integers(-20, 20),
       baseline=st.lists(st.integers(-30, 40), min_size=L.MAX_ROUNDS, max_size=L.MAX_ROUNDS),
       thresholds=st.lists(st.integers(380, 640), min_size=0, max_size=L.MAX_TOKENS),
       flipped=st.lists(st.booleans(), min_size=L.MAX_TOKENS, max_size=L.MAX_TOKENS),
       penalty=st.integers(0, 12), crossing=st.booleans(), dial=st.integers(300, 700),
       ppm=st.integers(-40, 40), round_no=st.integers(0, L.MAX_ROUNDS))
def test_R_W2_R_W3_projection_equals_turn_by_turn(rounds, offset, baseline, thresholds,
                                                   flipped, penalty, crossing, dial, ppm,
                                                   round_no):
    """The world projection gives the Dial that playing out every remaining world turn
    gives, for any baseline (falling ones included), tokens, penalty, flip reading, Dial, ppm
    and round."""
    from fbsim.game.public import project_world

    R = R4.copy()
    R[L.R_ROUNDS] = rounds
    R[L.R_BASELINE_OFFSET] = offset
    R[L.R_BASELINE:L.R_BASELINE + L.MAX_ROUNDS] = baseline
    R[L.R_N_TOKENS] = len(thresholds)
    R[L.R_TOKEN_THRESHOLD:L.R_TOKEN_THRESHOLD + len(thresholds)] = thresholds
    R[L.R_TOKEN_PENALTY] = penalty
    R[L.R_FLIP_WHEN] = L.FLIP_CROSSING if crossing else L.FLIP_REACHING
    V = np.zeros(L.V_SIZE, dtype=np.int64)
    V[L.V_DIAL] = dial
    V[L.V_TABLE_PPM] = ppm
    V[L.V_ROUND] = min(round_no, rounds)
    for t in range(len(thresholds)):
        V[L.V_FLIPPED + t] = 1 if flipped[t] else 0
    assert project_world(R, V) == projection_turn_by_turn(R, V)


def test_R_I1_world_projection_is_computed_when_stale_and_kept():
    """The view's world projection is a memo (`world_projection`): a STALE view computes
    `project_world` and keeps it, a kept value is returned as it is (so a view whose memo the
    engine forgot to mark stale would answer from an old Dial: the engines must mark it)."""
    from fbsim.game.public import project_world, world_projection

    V = np.zeros(L.V_SIZE, dtype=np.int64)
    V[L.V_DIAL] = 480
    V[L.V_ROUND] = 2
    V[L.V_TABLE_PPM] = 3
    V[L.V_WORLD_PROJECTION] = L.STALE
    want = project_world(R4, V)
    assert world_projection(R4, V) == want and V[L.V_WORLD_PROJECTION] == want
    V[L.V_DIAL] = 500  # the Dial moves, nobody marks the memo stale: the old value stays
    assert world_projection(R4, V) == want != project_world(R4, V)
    V[L.V_WORLD_PROJECTION] = L.STALE
    assert world_projection(R4, V) == project_world(R4, V)


def test_a_state_row_reads_by_name():
    """`named_state` (what to print of W in a debugger) names every field of the view and of
    the hidden state, each slot where the engine keeps it."""
    R = rules_vector(load_rules(players=4))
    W, deck, agenda_deck = K.scratch(R)
    K.setup(R, np.zeros(3, dtype=np.int64), np.full(6, -1, dtype=np.int64), np.int64(1),
            np.int64(2), W, deck, agenda_deck)
    named = KL.named_state(W)
    assert named["dial"] == W[L.V_DIAL] == R[L.R_DIAL_START]
    assert named["my_capital"] == list(W[L.V_MY_CAPITAL:L.V_MY_CAPITAL + L.MAX_PLAYERS])
    assert sorted(named["my_agenda"][:4]) == sorted(agenda_deck[:4])
    assert named["deck_pos"] == W[KL.S_DECK_POS] == R[L.R_MARKET_SIZE]
    assert sum(1 if isinstance(v, int) else len(v) for v in named.values()) == KL.W_SIZE
