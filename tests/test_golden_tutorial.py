"""The tutorial round of RULES.md (checks under R-W and R-V), played from examples/tutorial.toml.

Three players; the first player (seat 0, 8 Capital) sends 4 Agents to WORKS, 1 to an open COOL
and 1 to a masked BURN; the table totals 7 COOL and 1 BURN; seat 0 claims 3 from the Fog pot
and buys a Refinery, and so does one rival (seat 1).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fbsim.reference.script import load_script, play_script

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "examples" / "tutorial.toml"


@pytest.fixture(scope="module")
def rec():
    return play_script(load_script(TUTORIAL))


def dial_after(rec, round_no: int, step: str) -> int:
    """The Dial's reading at the end of `step` of round `round_no` (from the event log)."""
    cur = None
    last = None
    for e in rec.events:
        if e.kind == "setup":
            cur = e.data["dial"]
        elif e.kind == "dial":
            cur = e.data["dial"]
        if e.round == round_no and e.step == step:
            last = cur
    assert last is not None, f"no events in round {round_no}, step {step}"
    return last


def test_R_S1_R_W2_round1_world_turn_dial_459(rec):
    # R-S1: the Dial starts at 450 with Ice Loss flipped.
    # R-W2 + D1: 450 + 7 (round-1 baseline at 3 players) + 2 (one flipped token) = 459.
    assert dial_after(rec, 0, "setup") == 450
    assert dial_after(rec, 1, "world") == 459


def test_R_V2_reveal_dial_441(rec):
    # R-V2: 7 COOL, 1 BURN (the masked one counts): 459 - 3*7 + 3*1 = 441.
    assert dial_after(rec, 1, "reveal") == 441
    reveal = [e for e in rec.events if e.kind == "reveal" and e.round == 1]
    assert len(reveal) == 1
    # R-V1: seat 0's open counts hide its masked BURN; the Fog shows 1 masked BURN in total.
    assert reveal[0].data["open"][0] == [4, 1, 0]
    assert reveal[0].data["fog_burn"] == 1
    assert reveal[0].data["fog_cool"] == 0


def test_R_V2_record_dial_by_round_starts_at_441(rec):
    # the record's Dial trajectory: round 1 ends at its reveal's 441 (R-V2); the last entry is
    # the final Dial (R-E1)
    assert rec.dial_by_round[0] == 441
    assert len(rec.dial_by_round) == 8 and rec.dial_by_round[-1] == rec.final_dial


def test_R_W1_R_W2_round2_world_turn_dial_452(rec):
    # R-W2: 441 + 7 (round-2 baseline) + 2 (Ice Loss) + 2 x 1 (two owned Refineries, +1 each,
    # bought in round 1, so they first move the Dial now, R-W1) = 452.
    assert dial_after(rec, 2, "world") == 452


def test_R_V3_R_V4_R_V5_R_V6_R_W1_seat0_capital_sequence(rec):
    # Seat 0: starts with 8 (R-S2, first player R-S3 +0); masked BURN pays nothing to the
    # owner, 3 to the pot (R-V3); COOL costs 1: 8 -> 7 (R-V4); claims 3: 7 -> 10 (R-V5);
    # Refinery for 3 WORKS + 4: 10 -> 6 (R-V6); 1 free WORKS earns 2: 6 -> 8 (R-V6);
    # round 2 world turn, Refinery income 3: 8 -> 11 (R-W1).
    balance = 0
    seq = []
    for e in rec.events:
        if e.round > 2 or (e.round == 2 and e.step != "world"):
            break
        if e.kind != "transfer":
            continue
        d = e.data
        if d["dst"] == 0:
            balance += d["amount"]
        elif d["src"] == 0:
            balance -= d["amount"]
        else:
            continue
        seq.append(balance)
    assert seq == [8, 7, 10, 6, 8, 11]


def test_R_V3_masked_burn_fills_the_pot_and_R_V5_claim_empties_it(rec):
    # R-V3: 1 masked BURN x 3 into the pot; R-V5: seat 0 requests 3 and gets min(3, 3) = 3.
    to_pot = [e.data["amount"] for e in rec.events if e.kind == "transfer" and e.round == 1
              and e.data["dst"] == "pot"]
    assert to_pot == [3]
    claims = [(e.data["seat"], e.data["requested"], e.data["received"]) for e in rec.events
              if e.kind == "claim" and e.round == 1]
    assert claims == [(0, 3, 3), (1, 0, 0), (2, 0, 0)]
