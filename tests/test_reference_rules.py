"""The reference engine against RULES.md: at least one test per rule ID (R-T1 is not simulated).

Every expected number is derived by hand from RULES.md; the arithmetic is in the comments.
Games are scripted (dict documents for `play_script`, the `hoarder` bot deciding what a script
leaves out: all WORKS, no buys, no claims, abstains) or built with `engine.setup` and driven
one step function at a time.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from fbsim.errors import ConfigError, ScriptError
from fbsim.game import layout as L
from fbsim.game.public import mine
from fbsim.policies import bot_names
from fbsim.policies.scripted import ScriptedPolicy
from fbsim.reference import engine
from fbsim.reference.script import play_script, prepare
from fbsim.reference.state import Commitment
from fbsim.reference.view import player_view
from fbsim.rules import Rules, load_rules, rules_vector

# ----------------------------------------------------------------------------- helpers

D1_3P = (7, 7, 8, 9, 10, 10, 12, 12)  # D1 at 3 players
AGENDAS = {
    3: ["steward", "opportunist", "accelerationist"],
    4: ["steward", "opportunist", "accelerationist", "steward"],
    5: ["steward", "opportunist", "accelerationist", "steward", "opportunist"],
    6: ["steward", "opportunist", "accelerationist", "steward", "opportunist",
        "accelerationist"],
}
KIND = {name: k for k, name in enumerate(Rules().asset_names)}


def short_game(rounds: int, accusations=()) -> dict:
    """Rules overrides for a game of `rounds` rounds (the baseline tables follow, D1)."""
    return {"rounds": rounds,
            "baseline": {f"p{n}": [b + 2 * (n - 3) for b in D1_3P[:rounds]]
                         for n in range(3, 7)},
            "accusation": {"rounds": list(accusations)}}


def doc(rounds=(), players=3, agendas=None, deck=None, rules=None, fallback="hoarder"):
    d = {"players": players, "agendas": agendas or AGENDAS[players],
         "rounds": [{"seats": list(seats)} for seats in rounds]}
    if fallback:
        d["fallback"] = fallback
    if deck is not None:
        d["deck"] = deck
    if rules:
        d["rules"] = rules
    return d


def idle(players=3):
    """A round left entirely to the fallback bot."""
    return [{}] * players


def build(d):
    """A Game after setup and the scripted policies of document `d` (as play_script does)."""
    rules, agendas, deck, plans, fb = prepare(d)
    n = rules.players
    g = engine.setup(rules, agendas, deck, ["scripted"] * n, 0, 0, True)
    pols = [ScriptedPolicy(s, plans[s], rules.asset_names,
                           engine.bind_policy(fb) if fb else None) for s in range(n)]
    return g, pols


def events(rec_or_game, kind=None, round_no=None, step=None):
    evs = rec_or_game.events
    return [e for e in evs if (kind is None or e.kind == kind)
            and (round_no is None or e.round == round_no) and (step is None or e.step == step)]


def transfers(x, round_no=None, step=None):
    return [(e.data["src"], e.data["dst"], e.data["amount"])
            for e in events(x, "transfer", round_no, step)]


def dial_after(x, round_no, step):
    """The Dial at the end of `step` of round `round_no`."""
    cur = last = None
    for e in x.events:
        if e.kind in ("setup", "dial"):
            cur = e.data["dial"]
        if e.round == round_no and e.step == step:
            last = cur
    assert last is not None
    return last


def token_delta(x, round_no):
    """The world-turn Dial move of round `round_no` caused by flipped tokens (R-W2)."""
    return sum(e.data["delta"] for e in events(x, "dial", round_no, "world")
               if "flipped tipping token" in e.data["cause"])


def script_error(d) -> ScriptError:
    with pytest.raises(ScriptError) as info:
        play_script(d)
    return info.value


def assert_violation(d, round_no, seat, rule):
    err = script_error(d)
    assert (err.round_no, err.seat, err.rule) == (round_no, seat, rule), str(err)


class Recorder:
    """Wraps a policy and records every view it is shown, by decision."""

    def __init__(self, inner):
        self.inner = inner
        self.views: dict[str, list[np.ndarray]] = {}

    def _rec(self, what, V):
        self.views.setdefault(what, []).append(np.array(V, copy=True))

    def commit(self, R, V, seed, game):
        self._rec("commit", V)
        return self.inner.commit(R, V, seed, game)

    def fog_request(self, R, V, seed, game):
        self._rec("fog", V)
        return self.inner.fog_request(R, V, seed, game)

    def market(self, R, V, seed, game):
        self._rec("market", V)
        return self.inner.market(R, V, seed, game)

    def accuse(self, R, V, seed, game):
        self._rec("accuse", V)
        return self.inner.accuse(R, V, seed, game)

    def cornered(self, R, V, seed, game):
        self._rec("cornered", V)
        return self.inner.cornered(R, V, seed, game)

    def illegal(self, *a):
        return self.inner.illegal(*a)


# ============================================================================= S. Setup


def test_R_S1_dial_450_ice_loss_flipped_three_tokens_unflipped():
    g, _ = build(doc())
    assert g.dial == 450
    assert g.flipped == [True, False, False, False]
    assert [int(g.R[L.R_TOKEN_THRESHOLD + t]) for t in (1, 2, 3)] == [500, 550, 575]
    # Ice Loss counts from round 1: 450 + 7 (D1) + 2 x 1 token = 459
    g.round = 1
    engine.world_turn(g)
    assert g.dial == 459


def test_R_S2_six_agents_eight_capital_two_masks():
    g, pols = build(doc([[{"works": 6}, {"works": 4, "cool": 1, "burn": 1,
                                          "masked_cool": 1, "masked_burn": 1}, {}]],
                        rules={"stagger": 0}))
    assert int(g.R[L.R_AGENTS]) == 6
    assert [s.capital for s in g.seats] == [8, 8, 8]  # stagger 0: everyone the base 8
    assert [s.masks for s in g.seats] == [2, 2, 2]
    g.round = 1
    engine.world_turn(g)
    engine.commit(g, pols)  # 6 Agents assigned, 2 masks spent at once: legal
    assert g.seats[1].masks == 0


@pytest.mark.parametrize("players", [3, 4, 5, 6])
@pytest.mark.parametrize("first", [0, 1, 2])
def test_R_S3_staggered_capital_from_round1_first_player(players, first):
    g, _ = build(doc(players=players, rules={"first_player": first}))
    # place k clockwise from the first player: 8 + k
    for k in range(players):
        assert g.seats[(first + k) % players].capital == 8 + k


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_R_S4_agenda_deal_from_the_table_deck(players):
    rules = load_rules(overrides={"players": players})
    R = rules_vector(rules, players)
    deck = rules.decks.for_players(players).counts()
    assert sum(deck) > players  # the deck is always larger than the table
    left_out = set()
    hands = set()
    for seed in range(60):
        hand = engine.deal_agendas(R, seed, 0)
        assert len(hand) == players
        for a in range(L.N_AGENDAS):
            assert hand.count(a) <= deck[a]
            if hand.count(a) < deck[a]:
                left_out.add(a)
        hands.add(tuple(hand))
    # shuffled: several different deals, and more than one kind of card left out unseen
    assert len(hands) > 1
    assert len(left_out) > 1


def test_R_S4_script_cannot_deal_more_cards_than_the_deck_holds():
    # 3 players: 2/1/1 (D2) holds a single Accelerationist
    err = script_error(doc(agendas=["steward", "accelerationist", "accelerationist"]))
    assert err.rule == "R-S4"


def test_R_S4_agendas_are_dealt_face_down():
    g, _ = build(doc())
    V = player_view(g, 0, L.DP_COMMIT)
    assert mine(V, L.V_MY_AGENDA) == L.STEWARD
    assert list(V[L.V_REVEALED_AGENDA:L.V_REVEALED_AGENDA + 3]) == [-1, -1, -1]


def test_R_S5_asset_deck_shuffled_four_card_market():
    rules = load_rules(overrides={"players": 3})
    R = rules_vector(rules, 3)
    decks = [engine.shuffle_assets(R, seed, 0) for seed in range(10)]
    for d in decks:
        # D3 counts: 5 Refinery, 4 Carbon Sink, 2 Media House, 2 Grey Bank, 2 Bunker = 15
        assert sorted(d) == sorted([0] * 5 + [1] * 4 + [2] * 2 + [3] * 2 + [4] * 2)
    assert len({tuple(d) for d in decks}) > 1
    g = engine.setup(rules, [0, 1, 2], decks[3], ["hoarder"] * 3, 0, 0, False)
    assert g.market == decks[3][:4]
    assert g.deck == decks[3][4:]
    assert len(g.deck) == 11


@pytest.mark.parametrize("players", [2, 7])
def test_R_S6_tables_outside_3_to_6_are_refused(players):
    with pytest.raises(ConfigError):
        load_rules(overrides={"players": players})


def test_R_S6_at_most_8_rounds():
    assert Rules().rounds == 8
    rec = play_script(doc())
    assert rec.rounds_played == 8
    assert max(e.round for e in rec.events) == 8


# ============================================================================= W. World turn


def test_R_W1_asset_pays_from_the_next_world_turn():
    # seat 2 (10 Capital) buys a Refinery (4) and a Grey Bank (3) with 6 WORKS in round 1:
    # 10 - 4 - 3 = 3, no free WORKS so no wages.
    rec = play_script(doc([[{}, {}, {"works": 6, "buy": ["refinery", "grey-bank"]}]],
                          deck=["refinery", "grey-bank", "carbon-sink", "media-house"]))
    assert transfers(rec, 1, "world") == []  # nothing owned at round 1's world turn
    # market turns in order 0, 1, 2; seat 2 has no free WORKS left, so no wages
    assert transfers(rec, 1, "market") == [("bank", 0, 12), ("bank", 1, 12),
                                           (2, "bank", 4), (2, "bank", 3)]
    # round 2: Refinery +3, Grey Bank +2 to seat 2 -> 3 + 5 = 8
    assert sorted(transfers(rec, 2, "world")) == [("bank", 2, 2), ("bank", 2, 3)]
    # the Dial: the Refinery's +1 first applies at round 2: 459 + 7 + 2 + 1 = 469
    assert dial_after(rec, 1, "world") == 459
    assert dial_after(rec, 2, "world") == 469


def test_R_W2_baseline_tokens_and_asset_ppm():
    # seat 2 buys a Refinery (+1) and a Carbon Sink (-2): 4 + 5 = 9 <= 10.
    rec = play_script(doc([[{}, {}, {"works": 6, "buy": ["refinery", "carbon-sink"]}]],
                          deck=["refinery", "carbon-sink", "media-house", "grey-bank"]))
    # round 2: 459 + 7 + 2 x 1 + 1 - 2 = 467; round 3: 467 + 8 + 2 + 1 - 2 = 476
    assert dial_after(rec, 2, "world") == 467
    assert dial_after(rec, 3, "world") == 476
    causes = {e.data["cause"]: e.data["delta"] for e in events(rec, "dial", 2, "world")}
    assert causes["1 owned refinery"] == 1
    assert causes["1 owned carbon-sink"] == -2


@pytest.mark.parametrize("dial, flipped", [(499, [True, False, False, False]),
                                           (500, [True, True, False, False]),
                                           (550, [True, True, True, False]),
                                           (575, [True, True, True, True])])
def test_R_W3_threshold_reached_means_greater_or_equal(dial, flipped):
    g, _ = build(doc())
    g.dial = dial
    engine.flip_tokens(g, "world")
    assert g.flipped == flipped


def test_R_W3_several_tokens_flip_in_one_move_and_never_unflip():
    # Dial starts at 490: round 1 world turn 490 + 7 + 2 = 499 (no flip). Everyone BURNs 6:
    # 18 BURN -> 499 + 54 = 553: the 500 and 550 tokens flip in that one move.
    # Round 2 world turn: 553 + 7 + 2 x 3 = 566. Round 2 everyone COOLs 6 (cost 6, each has
    # 8 + 18 or more): 566 - 54 = 512, below 550 and near 500: no token unflips.
    # Round 3 world turn: 512 + 8 + 2 x 3 = 526.
    burn = {"burn": 6}
    cool = {"cool": 6}
    rec = play_script(doc([[burn] * 3, [cool] * 3], rules={"dial": {"start": 490}}))
    assert dial_after(rec, 1, "world") == 499
    assert events(rec, "flip", 1, "world") == []
    flips = events(rec, "flip", 1, "reveal")
    assert sorted(e.data["threshold"] for e in flips) == [500, 550]
    assert dial_after(rec, 1, "reveal") == 553
    assert dial_after(rec, 2, "world") == 566
    assert dial_after(rec, 2, "reveal") == 512
    assert token_delta(rec, 3) == 6
    assert dial_after(rec, 3, "world") == 526


def test_R_W3_new_token_adds_from_the_next_world_turn_not_the_flipping_one():
    # hoarders at 3 players: 459, 468, 478, 489, then round 5: 489 + 10 + 2 = 501 flips 500;
    # round 6: 501 + 10 + 2 x 2 = 515.
    rec = play_script(doc())
    assert dial_after(rec, 4, "world") == 489
    assert token_delta(rec, 5) == 2
    assert [e.data["threshold"] for e in events(rec, "flip", 5, "world")] == [500]
    assert dial_after(rec, 5, "world") == 501
    assert token_delta(rec, 6) == 4
    assert dial_after(rec, 6, "world") == 515


@pytest.mark.parametrize("start, collapsed", [(591, True), (590, False)])
def test_R_W4_collapse_at_world_turn_skips_the_commit(start, collapsed):
    # start + 7 + 2 = 600 (Collapse, >=) or 599 (the game goes on)
    rec = play_script(doc(rules={"dial": {"start": start}}))
    assert dial_after(rec, 1, "world") == start + 9
    if collapsed:
        assert rec.end == "collapse-world"
        assert rec.rounds_played == 1
        assert rec.final_dial == 600
        assert events(rec, "commit", 1) == []
        assert events(rec, "reveal", 1) == []
    else:
        assert len(events(rec, "commit", 1)) == 3
        # round 2: 599 + 7 + 2 x 4 (all four flipped at 599) = 614 -> Collapse then
        assert rec.end == "collapse-world"
        assert rec.rounds_played == 2
        assert rec.final_dial == 614


# ============================================================================= C. Commit


@pytest.mark.parametrize("works, cool, burn", [(5, 0, 0), (6, 1, 0), (4, 1, 2), (7, -1, 0),
                                               (-1, 4, 3)])
def test_R_C1_all_six_agents_each_nonnegative(works, cool, burn):
    seat1 = {"works": works, "cool": cool, "burn": burn}
    assert_violation(doc([idle(), [{}, seat1, {}]]), 2, 1, "R-C1")


def test_R_C1_legal_split_is_accepted():
    rec = play_script(doc([idle(), [{}, {"works": 2, "cool": 2, "burn": 2}, {}]]))
    c = events(rec, "commit", 2)
    assert [(e.data["works"], e.data["cool"], e.data["burn"]) for e in c
            if e.data["seat"] == 1] == [(2, 2, 2)]


def test_R_C2_third_mask_when_only_two_exist():
    # round 1: both masks in the same round (legal); round 2: a third mask does not exist
    r1 = [{"works": 4, "burn": 2, "masked_burn": 2}, {}, {}]
    r2 = [{"works": 5, "cool": 1, "masked_cool": 1}, {}, {}]
    assert_violation(doc([r1, r2]), 2, 0, "R-C2")


def test_R_C2_spent_masks_are_gone_for_the_game():
    r1 = [{"works": 4, "burn": 2, "masked_burn": 1}, {}, {}]
    r3 = [{"works": 5, "cool": 1, "masked_cool": 1}, {}, {}]
    rec = play_script(doc([r1, idle(), r3]))
    assert [s.masks_left for s in rec.seats] == [0, 2, 2]
    assert (rec.seats[0].burn_masked, rec.seats[0].cool_masked) == (1, 1)


@pytest.mark.parametrize("entry", [
    {"works": 5, "cool": 1, "masked_cool": 2},   # more masked COOL than COOL
    {"works": 5, "burn": 1, "masked_burn": 2},   # more masked BURN than BURN
    {"works": 6, "masked_cool": 1},              # WORKS can never be masked
    {"works": 5, "burn": 1, "masked_burn": -1},  # negative
])
def test_R_C2_masks_only_on_own_cool_and_burn_chips(entry):
    assert_violation(doc([[{}, {}, entry]]), 1, 2, "R-C2")


# every seat starts with 2 Capital (capital 2, stagger 0)
POOR = {"capital": 2, "stagger": 0}


@pytest.mark.parametrize("entry", [
    {"works": 3, "cool": 3},                      # 3 > 2 (wages come later)
    {"works": 2, "cool": 3, "burn": 1, "masked_burn": 1},  # 3 > 2 + 0 (masked pays later)
    {"works": 0, "cool": 6},                      # 6 > 2
])
def test_R_C3_unaffordable_cooling_cannot_be_confirmed(entry):
    assert_violation(doc([[{}, {}, entry]], rules=POOR), 1, 2, "R-C3")


def test_R_C3_open_burn_pay_funds_cooling_up_to_the_limit():
    # cool 5 <= 2 + 1 open BURN x 3 = 5: legal; Capital 2 + 3 - 5 = 0 after the reveal
    rec = play_script(doc([[{}, {}, {"cool": 5, "burn": 1}]], rules=POOR))
    assert transfers(rec, 1, "reveal") == [("bank", 2, 3), (2, "bank", 5)]


def test_R_C4_commit_views_do_not_show_this_rounds_commitments():
    # seat 0 commits first; seat 1 (a compiled bot) and seat 2 must see the same view and
    # decide the same whatever seat 0 committed this round.
    seen = []
    decisions = []
    for seat0 in ({"works": 6}, {"works": 2, "cool": 2, "burn": 2, "masked_burn": 1}):
        g, pols = build(doc([[seat0, {}, {}]]))
        pols[1] = Recorder(engine.bind_policy("random"))
        pols[2] = Recorder(pols[2])
        g.round = 1
        engine.world_turn(g)
        before = player_view(g, 1, L.DP_COMMIT)
        engine.commit(g, pols)
        assert np.array_equal(pols[1].views["commit"][0], before)
        seen.append((pols[1].views["commit"][0], pols[2].views["commit"][0]))
        c = g.seats[1].commitment
        decisions.append((c.works, c.cool, c.burn, c.masked_cool, c.masked_burn))
    assert np.array_equal(seen[0][0], seen[1][0])
    assert np.array_equal(seen[0][1], seen[1][1])
    assert decisions[0] == decisions[1]


# ============================================================================= V. Reveal


def _v1_game():
    # seat 0: 2 WORKS, 2 COOL (1 masked), 2 BURN (1 masked) -> open (2, 1, 1)
    # seat 1: 4 WORKS, 1 COOL (masked), 1 BURN            -> open (4, 0, 1)
    # seat 2: hoarder, 6 WORKS                             -> open (6, 0, 0)
    # Fog pool: masked COOL 1 + 1 = 2, masked BURN 1
    d = doc([[{"works": 2, "cool": 2, "burn": 2, "masked_cool": 1, "masked_burn": 1},
              {"works": 4, "cool": 1, "burn": 1, "masked_cool": 1}, {}]])
    g, pols = build(d)
    g.round = 1
    engine.world_turn(g)
    engine.commit(g, pols)
    engine.reveal(g)
    return g


def test_R_V1_reveal_shows_open_counts_with_owner_and_fog_totals_only():
    g = _v1_game()
    (rev,) = events(g, "reveal", 1)
    assert rev.data["open"] == [[2, 1, 1], [4, 0, 1], [6, 0, 0]]
    assert (rev.data["fog_cool"], rev.data["fog_burn"]) == (2, 1)
    V = player_view(g, 2, L.DP_FOG)
    assert list(V[L.V_LAST_OPEN_WORKS:L.V_LAST_OPEN_WORKS + 3]) == [2, 4, 6]
    assert list(V[L.V_LAST_OPEN_COOL:L.V_LAST_OPEN_COOL + 3]) == [1, 0, 0]
    assert list(V[L.V_LAST_OPEN_BURN:L.V_LAST_OPEN_BURN + 3]) == [1, 1, 0]
    assert (V[L.V_LAST_FOG_COOL], V[L.V_LAST_FOG_BURN]) == (2, 1)
    # Agendas stay hidden, and seat 2's private fields are its own (no masks used)
    assert list(V[L.V_REVEALED_AGENDA:L.V_REVEALED_AGENDA + 3]) == [-1, -1, -1]
    assert mine(V, L.V_MY_CAPITAL) == 10
    assert mine(V, L.V_MY_MASKED_COOL_TOTAL) == 0
    # ... in seat 2's own slot of each private field; the other seats' slots are empty
    assert V[L.V_MY_CAPITAL + 2] == 10
    assert not any(V[f + t] for f in L.PRIVATE for t in range(L.MAX_PLAYERS) if t != 2)


def test_R_V2_dial_moves_by_all_chips_fog_included():
    # seat 0: 1 COOL open, 4 BURN of which 2 masked; seat 1: 2 COOL open.
    # all BURN 4, all COOL 3: 459 + 3 x 4 - 3 x 3 = 462 (without the Fog it would be 456)
    rec = play_script(doc([[{"works": 1, "cool": 1, "burn": 4, "masked_burn": 2},
                            {"works": 4, "cool": 2}, {}]]))
    assert dial_after(rec, 1, "reveal") == 462


def test_R_V2_dial_moves_once_tokens_checked_after_the_net_move():
    # start 482: world turn 482 + 9 = 491; 4 BURN (+12) and 4 COOL (-12): net 491.
    # Passing 503 on the way must not flip the 500 token.
    rec = play_script(doc([[{"works": 2, "burn": 4}, {"works": 2, "cool": 4}, {}]],
                          rules={"dial": {"start": 482}}))
    assert dial_after(rec, 1, "reveal") == 491
    assert events(rec, "flip", 1) == []
    g, pols = build(doc([[{"works": 2, "burn": 4}, {"works": 2, "cool": 4}, {}]],
                        rules={"dial": {"start": 482}}))
    g.round = 1
    engine.world_turn(g)
    engine.commit(g, pols)
    engine.reveal(g)
    assert g.flipped == [True, False, False, False]


def test_R_V2_collapse_is_judged_on_the_net_move():
    # start 582: world turn 582 + 9 = 591 (flips 500, 550, 575); 4 BURN, 4 COOL: net 591,
    # although 603 is passed on the way: no Collapse at the reveal.
    # Round 2 world turn: 591 + 7 + 2 x 4 = 606: Collapse there.
    rec = play_script(doc([[{"works": 2, "burn": 4}, {"works": 2, "cool": 4}, {}]],
                          rules={"dial": {"start": 582}}))
    assert dial_after(rec, 1, "reveal") == 591
    assert rec.end == "collapse-world"
    assert rec.rounds_played == 2
    assert rec.final_dial == 606


def test_R_V2_collapse_at_reveal_stops_every_payment():
    # start 570: world turn 570 + 7 + 2 = 579 (flips 500, 550, 575).
    # seat 0: 1 COOL, 5 BURN (1 masked); seat 1: 3 WORKS, 3 BURN; seat 2 requests and buys.
    # all BURN 8, all COOL 1: 579 + 24 - 3 = 600 -> Collapse before any payment:
    # no burn pay, no Fog pot money, no cool cost, no claims, no market, no wages.
    rec = play_script(doc(
        [[{"works": 0, "cool": 1, "burn": 5, "masked_burn": 1, "request": 3},
          {"works": 3, "burn": 3, "request": 2},
          {"works": 6, "request": 5, "buy": ["refinery"]}]],
        deck=["refinery", "carbon-sink", "media-house", "grey-bank"],
        rules={"dial": {"start": 570}}))
    assert dial_after(rec, 1, "world") == 579
    assert rec.end == "collapse-reveal"
    assert rec.final_dial == 600
    assert rec.rounds_played == 1
    assert transfers(rec, 1) == []
    assert events(rec, "claim") == [] and events(rec, "buy") == []
    assert [s.capital for s in rec.seats] == [8, 9, 10]  # the starting Capital, untouched
    assert rec.pot_left == 0
    assert [s.fog_in for s in rec.seats] == [0, 0, 0]
    assert all(sum(s.assets.values()) == 0 for s in rec.seats)
    # R-E3: the Accelerationist (seat 2) holds 10 >= 10 and wins the Collapse alone
    assert rec.winner == 2


@pytest.mark.parametrize("agenda, revealed, pay", [
    (L.STEWARD, False, 3), (L.STEWARD, True, 3),
    (L.ACCELERATIONIST, False, 3), (L.ACCELERATIONIST, True, 4)])
def test_R_V3_open_burn_pays_owner_masked_burn_fills_pot(agenda, revealed, pay):
    # seat 0: 2 WORKS, 4 BURN, 1 masked: 3 open x pay from the bank; 1 masked x 3 to the pot
    agendas = ["accelerationist" if agenda == L.ACCELERATIONIST else "steward",
               "opportunist", "steward"]
    g, pols = build(doc([[{"works": 2, "burn": 4, "masked_burn": 1}, {}, {}]],
                        agendas=agendas))
    g.seats[0].revealed = revealed
    g.round = 1
    engine.world_turn(g)
    engine.commit(g, pols)
    engine.reveal(g)
    engine.pay_burns(g)
    assert transfers(g, 1, "reveal") == [("bank", 0, 3 * pay), ("bank", "pot", 3)]
    assert g.pot == 3
    assert g.seats[0].capital == 8 + 3 * pay
    assert g.seats[0].fog_in == 3


def test_R_V4_every_cool_open_or_masked_costs_one():
    # seat 0: 3 WORKS, 3 COOL (2 masked): 8 - 3 = 5, wages 3 x 2 = 6 -> 11
    rec = play_script(doc([[{"works": 3, "cool": 3, "masked_cool": 2}, {}, {}]]))
    assert transfers(rec, 1, "reveal") == [(0, "bank", 3)]
    g, pols = build(doc([[{"works": 3, "cool": 3, "masked_cool": 2}, {}, {}]]))
    g.round = 1
    engine.play_round(g, pols)
    assert g.seats[0].capital == 11


def _fog_doc(partial_fill=True, carry_over=True):
    # round 1: seat 0 masks 2 BURN -> pot 2 x 3 = 6; nobody claims in round 1.
    # round 2 (first player seat 1): seat 0 asks 5, seat 1 asks 4, seat 2 asks 1.
    r1 = [{"works": 4, "burn": 2, "masked_burn": 2}, {}, {}]
    r2 = [{"works": 6, "request": 5}, {"works": 6, "request": 4}, {"works": 6, "request": 1}]
    return doc([r1, r2], rules={"fog": {"partial_fill": partial_fill,
                                        "carry_over": carry_over}})


def claims(rec, round_no):
    return [(e.data["seat"], e.data["requested"], e.data["received"])
            for e in events(rec, "claim", round_no)]


def test_R_V5_partial_fill_in_first_player_order():
    # order 1, 2, 0 from a pot of 6: seat 1 gets 4 (2 left), seat 2 gets 1 (1 left),
    # seat 0 asks 5 and gets min(5, 1) = 1 (0 left).
    rec = play_script(_fog_doc())
    assert claims(rec, 1) == [(0, 0, 0), (1, 0, 0), (2, 0, 0)]
    assert claims(rec, 2) == [(1, 4, 4), (2, 1, 1), (0, 5, 1)]
    assert [s.fog_received for s in rec.seats] == [1, 4, 1]
    assert rec.pot_left == 0


def test_R_V5_negative_request_is_refused():
    assert_violation(doc([[{}, {"works": 6, "request": -1}, {}]]), 1, 1, "R-V5")


def test_D5_off_claim_over_what_is_left_gets_nothing():
    # D5 off: seat 1 gets 4 (2 left), seat 2 gets 1 (1 left), seat 0 asks 5 > 1: gets 0;
    # the 1 stays in the pot (D6) and is lost at the end.
    rec = play_script(_fog_doc(partial_fill=False))
    assert claims(rec, 2) == [(1, 4, 4), (2, 1, 1), (0, 5, 0)]
    assert rec.pot_left == 1


def test_D6_pot_carries_over_and_what_is_left_at_the_end_is_lost():
    # D6 on: the 6 of round 1 waits in the pot for round 2 (pot_before of the first claim).
    rec = play_script(_fog_doc())
    assert events(rec, "claim", 2)[0].data["pot_before"] == 6
    # masked BURN 3 never claimed: lost at the end
    rec2 = play_script(doc([[{"works": 5, "burn": 1, "masked_burn": 1}, {}, {}]]))
    assert rec2.pot_left == 3
    assert ("pot", "bank", 3) in transfers(rec2, 8, "end")


def test_D6_off_pot_emptied_after_the_claims():
    rec = play_script(_fog_doc(carry_over=False))
    assert ("pot", "bank", 6) in transfers(rec, 1, "fog")
    assert claims(rec, 2) == [(1, 4, 0), (2, 1, 0), (0, 5, 0)]


def test_R_V6_purchase_costs_three_works_plus_price_then_wages():
    # seat 0: 4 WORKS, Refinery: 8 - 4 = 4; 1 free WORKS x 2 = 2 -> 6
    rec = play_script(doc([[{"works": 4, "cool": 1, "burn": 1, "buy": ["refinery"]}, {}, {}]],
                          deck=["refinery", "carbon-sink", "media-house", "grey-bank"]))
    (buy,) = events(rec, "buy", 1)
    assert (buy.data["seat"], buy.data["price"], buy.data["labour"]) == (0, 4, 3)
    assert transfers(rec, 1, "market")[:2] == [(0, "bank", 4), ("bank", 0, 2)]


def test_R_V6_market_turns_in_first_player_order_and_refill():
    # round 2, first player seat 1: seat 1 buys the Refinery, the market refills from the
    # deck's next card (Bunker), which seat 0 then buys; wages in order 1, 2, 0.
    deck = ["refinery", "carbon-sink", "media-house", "grey-bank", "bunker"]
    r2 = [{"works": 6, "buy": ["bunker"]}, {"works": 6, "buy": ["refinery"]}, {}]
    rec = play_script(doc([idle(), r2], deck=deck))
    buys = [(e.data["seat"], e.data["asset"], e.data["refill"]) for e in events(rec, "buy", 2)]
    assert buys[0] == (1, "refinery", "bunker")
    assert buys[1][:2] == (0, "bunker")
    wages = [dst for src, dst, _ in transfers(rec, 2, "market") if src == "bank"]
    assert wages == [1, 2, 0]


@pytest.mark.parametrize("entry", [
    {"works": 2, "cool": 4, "buy": ["refinery"]},              # 2 free WORKS < 3
    {"works": 5, "cool": 1, "buy": ["refinery", "grey-bank"]},  # 2 left after the first
])
def test_R_V6_purchase_needs_three_free_works(entry):
    d = doc([idle(), [{}, entry, {}]],
            deck=["refinery", "carbon-sink", "media-house", "grey-bank"])
    assert_violation(d, 2, 1, "R-V6")


def test_R_V6_wages_cannot_fund_a_purchase():
    # 3 Capital, Refinery costs 4: refused though 6 WORKS would earn 12 in wages
    d = doc([[{"works": 6, "buy": ["refinery"]}, {}, {}]],
            deck=["refinery", "carbon-sink", "media-house", "grey-bank"],
            rules={"capital": 3, "stagger": 0})
    assert_violation(d, 1, 0, "R-V6")


def test_R_V6_market_refills_only_while_the_deck_lasts():
    g, pols = build(doc())
    g.round = 1
    g.deck = []
    first = g.market[0]
    g.seats[0].free_works = 6
    engine.buy(g, 0, 0, 3, pols[0])
    assert g.seats[0].owned[first] == 1
    assert g.market[0] == -1
    with pytest.raises(ScriptError) as info:
        engine.buy(g, 0, 0, 3, pols[0])  # the slot is empty now
    assert info.value.rule == "R-V6"


# ============================================================================= A. Accusation


ACC = short_game(4, accusations=[3])  # an Accusation after round 3, then round 4


def acc_doc(points, players=3, cornered=None, before=None, rules=None, **kw):
    """Rounds 1-2 to `before` (or the fallback), round 3 with these points."""
    r3 = []
    for s in range(players):
        e = {"works": 6, "point": points[s]}
        if cornered and s in cornered:
            e["cornered"] = cornered[s]
        r3.append(e)
    rounds = list(before or [idle(players), idle(players)]) + [r3]
    return doc(rounds, players=players, rules={**ACC, **(rules or {})}, **kw)


def cornered_seat(rec, round_no=3):
    (e,) = events(rec, "cornered", round_no)
    return e.data["seat"], e.data.get("weight")


@pytest.mark.parametrize("points, seat", [([0, -1, -1], 0), ([-1, 5, -1], 1)])
def test_R_A1_point_only_at_a_rival(points, seat):
    assert_violation(acc_doc(points), 3, seat, "R-A1")


def test_R_A1_everyone_points_at_once():
    # seat 1's Accusation view is the same whatever seat 0 points at this round
    views = []
    for p0 in (1, 2, -1):
        g, pols = build(acc_doc([p0, -1, -1]))
        for r in (1, 2, 3):
            g.round = r
            if r == 3:
                pols[1] = Recorder(pols[1])
                engine.world_turn(g)
                engine.commit(g, pols)
                engine.reveal(g)
                engine.pay_burns(g)
                engine.pay_cools(g)
                engine.fog_claims(g, pols)
                engine.market_turns(g, pols)
                engine.accusation(g, pols)
            else:
                engine.play_round(g, pols)
                engine.end_round(g)
        views.append(pols[1].views["accuse"][0])
    assert all(np.array_equal(views[0], v) for v in views[1:])
    assert list(views[0][L.V_ELIGIBLE:L.V_ELIGIBLE + 3]) == [1, 0, 1]


@pytest.mark.parametrize("media", [False, True])
def test_R_A2_media_house_point_weighs_two(media):
    # 4 players. seat 0 points at 1, seat 2 at 3. Weights 1 vs 1: a tie, nobody cornered;
    # with seat 0 owning a Media House (bought in round 1: 3 WORKS + 4): 2 vs 1, seat 1.
    r1 = [{"works": 6, "buy": ["media-house"]} if media else {}, {}, {}, {}]
    rec = play_script(acc_doc([1, -1, 3, -1], players=4, before=[r1, idle(4)],
                              cornered={1: "pay"},
                              deck=["media-house", "refinery", "grey-bank", "carbon-sink"]))
    w = {e.data["seat"]: e.data["weight"] for e in events(rec, "point", 3)}
    assert w == {0: 2 if media else 1, 1: 0, 2: 1, 3: 0}
    if media:
        assert cornered_seat(rec) == (1, 2)
        # R-A4: 1 accuser x 2, not doubled by the Media House
        assert transfers(rec, 3, "accusation") == [(1, 0, 2)]
    else:
        assert cornered_seat(rec)[0] == -1
        assert transfers(rec, 3, "accusation") == []


def test_R_A2_R_A4_payment_stays_two_per_accuser_with_a_media_house():
    # seat 0 (Media House, weight 2) and seat 2 (weight 1) point at seat 1: weight 3,
    # 2 accusers -> seat 1 pays 2 to each (4 in all, not 2 x weight 3 = 6).
    r1 = [{"works": 6, "buy": ["media-house"]}, {}, {}, {}]
    rec = play_script(acc_doc([1, -1, 1, -1], players=4, before=[r1, idle(4)],
                              cornered={1: "pay"},
                              deck=["media-house", "refinery", "grey-bank", "carbon-sink"]))
    assert cornered_seat(rec) == (1, 3)
    assert sorted(transfers(rec, 3, "accusation")) == [(1, 0, 2), (1, 2, 2)]
    assert rec.seats[1].paid == 1 and rec.seats[1].revealed == 0


@pytest.mark.parametrize("stacks", [False, True])
def test_D7_two_media_houses_still_weigh_two(stacks):
    # seat 0 buys both Media Houses in round 1 (6 WORKS, 4 + 4 = 8 Capital).
    # Round 3: seat 0 points at 1 (weight 2; 4 if weights stacked), seats 1 and 2 at 3
    # (1 + 1 = 2). D7: 2 vs 2, a tie, nobody cornered; stacked: 4 vs 2, seat 1.
    r1 = [{"works": 6, "buy": ["media-house", "media-house"]}, {}, {}, {}]
    rec = play_script(acc_doc([1, 3, 3, -1], players=4, before=[r1, idle(4)],
                              cornered={1: "pay"},
                              rules={"accusation": {"rounds": [3], "media_stacks": stacks}},
                              deck=["media-house", "media-house", "refinery", "grey-bank"]))
    assert rec.seats[0].assets["media-house"] == 2
    w0 = [e.data["weight"] for e in events(rec, "point", 3) if e.data["seat"] == 0]
    assert w0 == [4 if stacks else 2]
    if stacks:
        assert cornered_seat(rec) == (1, 4)
    else:
        assert cornered_seat(rec)[0] == -1


@pytest.mark.parametrize("points, cornered", [
    ([-1, -1, -1, -1], -1),  # nobody points: nobody is cornered
    ([2, 3, -1, -1], -1),    # 1 vs 1: a tie corners nobody
    ([2, 3, 3, 2], -1),      # 2 vs 2
    ([2, 2, -1, 1], 2),      # 2 vs 1: seat 2
])
def test_R_A3_strictly_highest_weight_is_cornered_a_tie_corners_nobody(points, cornered):
    rec = play_script(acc_doc(points, players=4))
    assert cornered_seat(rec)[0] == cornered
    assert [s.cornered for s in rec.seats] == [int(s == cornered) for s in range(4)]
    if cornered == -1:
        assert transfers(rec, 3, "accusation") == []
        assert events(rec, "reveal", 3, "accusation") == []


def test_R_A4_cornered_pays_two_per_accuser():
    # seats 0 and 1 point at seat 2, who pays 2 to each.
    rec = play_script(acc_doc([2, 2, -1], cornered={2: "pay"}))
    assert sorted(transfers(rec, 3, "accusation")) == [(2, 0, 2), (2, 1, 2)]
    assert (rec.seats[2].paid, rec.seats[2].revealed) == (1, 0)


def test_R_A4_cornered_reveals_agenda_for_the_rest_of_the_game():
    rec = play_script(acc_doc([2, 2, -1], cornered={2: "reveal"}))
    assert transfers(rec, 3, "accusation") == []
    assert (rec.seats[2].paid, rec.seats[2].revealed) == (0, 1)
    (rev,) = [e for e in rec.events if e.kind == "reveal" and e.step == "accusation"]
    assert rev.data["agenda"] == "accelerationist"


@pytest.mark.parametrize("capital, revealed", [(3, True), (4, False)])
def test_R_A4_who_cannot_pay_in_full_must_reveal(capital, revealed):
    # 2 accusers: paying costs 4. With 3 Capital seat 2 must reveal although it would pay;
    # with exactly 4 it may pay (and does), ending on 0.
    g, pols = build(acc_doc([2, 2, -1], cornered={2: "pay"}))
    g.round = 3
    g.seats[2].capital = capital
    engine.accusation(g, pols)
    assert g.seats[2].revealed is revealed
    if revealed:
        assert transfers(g, 3, "accusation") == []
        assert g.seats[2].capital == 3
        assert [e.data["forced"] for e in events(g, "reveal", 3, "accusation")] == [True]
    else:
        assert transfers(g, 3, "accusation") == [(2, 0, 2), (2, 1, 2)]
        assert g.seats[2].capital == 0


def test_R_A4_media_house_does_not_raise_the_price_of_silence():
    # seat 0 owns a Media House and alone points at seat 2: weight 2, but 1 accuser, so
    # paying costs 1 x 2 = 2. With 3 Capital seat 2 can pay (3 - 2 = 1): not forced to reveal.
    g, pols = build(acc_doc([2, -1, -1], cornered={2: "pay"}))
    g.round = 3
    g.seats[0].owned[KIND["media-house"]] = 1
    g.seats[2].capital = 3
    engine.accusation(g, pols)
    (c,) = events(g, "cornered", 3)
    assert (c.data["seat"], c.data["weight"], c.data["cost"]) == (2, 2, 2)
    assert not g.seats[2].revealed
    assert transfers(g, 3, "accusation") == [(2, 0, 2)]
    assert g.seats[2].capital == 1


def test_R_A4_revealing_exposes_no_masked_chip_and_audits_no_claim():
    g, pols = build(acc_doc([2, 2, -1], cornered={2: "reveal"}))
    g.round = 3
    g.seats[2].cool_masked, g.seats[2].burn_masked = 1, 1
    g.seats[2].fog_requested, g.seats[2].fog_received = 9, 3
    engine.accusation(g, pols)
    assert g.seats[2].revealed
    V = player_view(g, 0, L.DP_COMMIT)
    assert V[L.V_REVEALED_AGENDA + 2] == L.ACCELERATIONIST
    h = copy.deepcopy(g)
    h.seats[2].cool_masked, h.seats[2].burn_masked = 0, 2
    h.seats[2].fog_requested, h.seats[2].fog_received = 0, 0
    assert np.array_equal(player_view(h, 0, L.DP_COMMIT), V)


def _a5_doc(round4_point0=-1):
    # 5 rounds, Accusations after rounds 3 and 4. Round 1: seat 2 (Accelerationist, hidden)
    # burns 1 open. Round 3: seats 0 and 1 point at seat 2, who reveals. Round 4: seat 2
    # 3 WORKS, 3 BURN (1 masked).
    rules = short_game(5, accusations=[3, 4])
    r1 = [{}, {}, {"works": 5, "burn": 1}]
    r3 = [{"works": 6, "point": 2}, {"works": 6, "point": 2},
          {"works": 6, "cornered": "reveal"}]
    r4 = [{"works": 6, "point": round4_point0}, {"works": 6},
          {"works": 3, "burn": 3, "masked_burn": 1}]
    return doc([r1, idle(), r3, r4], rules=rules)


def test_R_A5_revealed_accelerationist_open_burn_pays_four_masked_still_three_to_pot():
    rec = play_script(_a5_doc())
    # round 1, hidden: 1 open BURN x 3
    assert ("bank", 2, 3) in transfers(rec, 1, "reveal")
    assert rec.seats[2].revealed == 1
    # round 4, revealed: 2 open x 4 = 8 to seat 2; 1 masked x 3 = 3 into the pot
    assert transfers(rec, 4, "reveal") == [("bank", 2, 8), ("bank", "pot", 3)]


def test_R_A5_revealed_accelerationist_cannot_be_targeted():
    assert_violation(_a5_doc(round4_point0=2), 4, 0, "R-A1")


def test_R_A5_revealed_accelerationist_is_not_eligible_in_the_view():
    g, pols = build(_a5_doc())
    g.seats[2].revealed = True
    V = player_view(g, 0, L.DP_ACCUSE)
    assert list(V[L.V_ELIGIBLE:L.V_ELIGIBLE + 3]) == [0, 1, 0]
    g.seats[2].agenda = L.STEWARD  # a revealed Steward stays eligible
    V = player_view(g, 0, L.DP_ACCUSE)
    assert list(V[L.V_ELIGIBLE:L.V_ELIGIBLE + 3]) == [0, 1, 1]


@pytest.mark.parametrize("revealed", [False, True])
def test_R_A5_R_C3_revealed_burn_pay_counts_toward_cooling(revealed):
    # 0 Capital; 4 COOL, 1 open BURN: 4 <= 0 + 4 only if revealed (else 4 > 0 + 3)
    g, pols = build(doc([[{}, {}, {"works": 1, "cool": 4, "burn": 1}]]))
    g.seats[2].capital = 0
    g.seats[2].revealed = revealed
    g.round = 1
    engine.world_turn(g)
    if revealed:
        engine.commit(g, pols)
        assert g.seats[2].commitment.cool == 4
    else:
        with pytest.raises(ScriptError) as info:
            engine.commit(g, pols)
        assert (info.value.round_no, info.value.seat, info.value.rule) == (1, 2, "R-C3")


# ============================================================================= E. End


# hoarders (all WORKS) for 8 rounds: the Dial moves by baseline + 2 per flipped token only.
# 3p (7,7,8,9,10,10,12,12): 459 468 478 489 501* 515 531 547        -> Severe
# 4p (+2): 461 472 484 497 511* 527 545 563*                        -> Extreme
# 5p (+4): 463 476 490 505* 523 541 561* 583*                       -> Extreme
# 6p (+6): 465 480 496 513* 533 553* 577* 603 -> Collapse at round 8's world turn
# (* a token flips; its +2 applies from the next world turn)
HOARDER_GAMES = [(3, 547, "survived", "severe"), (4, 563, "survived", "extreme"),
                 (5, 583, "survived", "extreme"), (6, 603, "collapse-world", "collapse")]


@pytest.mark.parametrize("players, dial, end, band", HOARDER_GAMES)
def test_R_E1_ends_after_round_8_without_a_world_turn(players, dial, end, band):
    rec = play_script(doc(players=players))
    assert rec.rounds_played == 8
    assert rec.final_dial == dial
    assert rec.end == end
    assert rec.band == band
    assert max(e.round for e in rec.events) == 8
    if end == "survived":
        # the last move of the Dial is round 8's world turn; wages close the game
        assert dial_after(rec, 8, "world") == dial
        assert events(rec, "dial", 8, "market") == [] and events(rec, "dial", 8, "end") == []
        assert len([t for t in transfers(rec, 8, "market")]) == players


def test_R_E1_shorter_game_ends_after_its_last_round():
    rec = play_script(doc(rules=short_game(3)))
    # 459, 468, 478
    assert (rec.rounds_played, rec.final_dial) == (3, 478)


@pytest.mark.parametrize("dial, band", [(-5, L.WARMING), (509, L.WARMING), (510, L.SEVERE),
                                        (549, L.SEVERE), (550, L.EXTREME), (599, L.EXTREME),
                                        (600, L.COLLAPSE), (640, L.COLLAPSE)])
def test_R_E2_bands_of_the_final_dial(dial, band):
    R = rules_vector(Rules(), 3)
    assert engine.band_of(R, dial) == band


def _scored(players, agendas, capitals, dial, first=0, bunkers=None, revealed=(), rules=None,
            **seat_fields):
    g, _ = build(doc(players=players, agendas=agendas, rules=rules))
    g.dial = dial
    g.first_player = first
    for s, c in enumerate(capitals):
        g.seats[s].capital = c
    for s, b in (bunkers or {}).items():
        g.seats[s].owned[KIND["bunker"]] = b
    for s in revealed:
        g.seats[s].revealed = True
    for name, values in seat_fields.items():
        for s, v in enumerate(values):
            setattr(g.seats[s], name, v)
    engine.score(g)
    return g


COLLAPSE_TABLE = ["accelerationist", "steward", "accelerationist", "opportunist"]


@pytest.mark.parametrize("capitals, bunkers, first, revealed, winner", [
    ((12, 50, 15, 50), {}, 0, (), 2),       # most Capital among Accelerationists
    ((9, 50, 9, 50), {}, 0, (), -1),        # nobody holds 10: everyone loses
    ((10, 0, 9, 0), {}, 0, (), 0),          # 10 is enough
    ((11, 0, 12, 0), {}, 0, (2,), 2),       # revealed or not
    ((12, 0, 12, 0), {2: 1}, 0, (), 2),     # tie: most Bunkers
    ((12, 0, 12, 0), {0: 2, 2: 1}, 0, (), 0),
    ((13, 0, 12, 0), {2: 2}, 0, (), 0),     # Bunkers only break Capital ties
    ((12, 0, 12, 0), {}, 0, (), 0),         # then order from the first player: 0,1,2,3
    ((12, 0, 12, 0), {}, 1, (), 2),         # 1,2,3,0
    ((12, 0, 12, 0), {}, 3, (), 0),         # 3,0,1,2
])
def test_R_E3_collapse_winner_and_tie_breaks(capitals, bunkers, first, revealed, winner):
    g = _scored(4, COLLAPSE_TABLE, capitals, 600, first, bunkers, revealed)
    assert g.winner == winner
    assert g.legacy == [0, 0, 0, 0]


def test_R_E3_collapse_in_play_richest_accelerationist_wins():
    # 6 hoarders collapse at round 8's world turn (603). Accelerationists at seats 2 and 5:
    # 8 + 2 + 7 x 12 = 94 and 8 + 5 + 84 = 97 -> seat 5.
    rec = play_script(doc(players=6))
    assert [rec.seats[s].capital for s in (2, 5)] == [94, 97]
    assert rec.winner == 5


def test_R_E4_legacy_capital_assets_chips_and_bonus():
    # Warming (500). seat 0 Steward: 11 // 2 = 5; 2 Carbon Sinks x 3 = 6; COOL 3 + 2 masked
    #   - BURN 1 + 1 masked = 3; bonus 4 + 3 x ((510 - 500) // 10) = 7 -> 21.
    # seat 1 Opportunist: 20 // 2 = 10; a Refinery (0); BURN 4 -> -4; 0 -> 6.
    # seat 2 Accelerationist: 7 // 2 = 3; a Bunker (0 in Warming); 0; -2 -> 1.
    g, _ = build(doc())
    g.dial = 500
    for s, cap in enumerate((11, 20, 7)):
        g.seats[s].capital = cap
    a, b, c = g.seats
    a.owned[KIND["carbon-sink"]] = 2
    a.cool_open, a.cool_masked, a.burn_open, a.burn_masked = 3, 2, 1, 1
    b.owned[KIND["refinery"]] = 1
    b.burn_open = 4
    c.owned[KIND["bunker"]] = 1
    engine.score(g)
    assert g.legacy == [21, 6, 1]
    assert g.winner == 0
    parts = [e.data for e in events(g, "legacy")]
    assert (parts[0]["capital"], parts[0]["assets"], parts[0]["chips"],
            parts[0]["agenda"]) == (5, 6, 3, 7)
    # the same table in Extreme (560): seat 0: 5 + 0 + 3 + 0 = 8; seat 1: 10 + 0 - 4 + 0 = 6;
    # seat 2 (+ a Refinery): 3 + 3 (Bunker) + 0 + 4 + 1 (one positive-ppm asset) = 11.
    g2 = copy.deepcopy(g)
    g2.events = []
    g2.dial = 560
    g2.seats[2].owned[KIND["refinery"]] = 1
    engine.score(g2)
    assert g2.legacy == [8, 6, 11]
    assert g2.winner == 2


def test_R_E4_survival_in_play_hoarders():
    # 3 hoarders, final 547 (Severe): Capital 8 + 8 x 12 = 104, 105, 106 -> 52, 52, 53;
    # bonuses Steward 0, Opportunist 9, Accelerationist -2 -> 52, 61, 51: seat 1 wins.
    rec = play_script(doc())
    assert [s.capital for s in rec.seats] == [104, 105, 106]
    assert [s.legacy for s in rec.seats] == [52, 61, 51]
    assert rec.winner == 1


TIE_TABLE = ["steward", "opportunist", "steward"]  # all bonuses 0 in Extreme (560)


def test_R_E4_tie_broken_by_most_cool_committed():
    # legacies: 4 // 2 = 2; 4 // 2 = 2; 0 + 2 COOL (1 masked) = 2 -> seat 2 has most COOL
    g = _scored(3, TIE_TABLE, (4, 4, 0), 560, cool_open=(0, 0, 1), cool_masked=(0, 0, 1))
    assert g.legacy == [2, 2, 2]
    assert g.winner == 2


@pytest.mark.parametrize("tiebreak, first, winner", [
    ("last-round", 1, 1), ("last-round", 2, 2), ("round-1", 1, 0), ("round-1", 2, 0)])
def test_D8_tie_break_order_from_first_player_of_last_round(tiebreak, first, winner):
    g = _scored(3, TIE_TABLE, (4, 4, 4), 560, first=first,
                rules={"scoring": {"tiebreak_first_player": tiebreak}})
    assert g.legacy == [2, 2, 2]
    assert g.winner == winner


@pytest.mark.parametrize("tiebreak, winner", [("last-round", 2), ("round-1", 0)])
def test_D8_in_play_last_round_first_player(tiebreak, winner):
    # 2 rounds, no stagger, hoarders: Dial 459, 468; Capital 8 + 12 + 12 = 32 -> 16 each.
    # Stewards (seats 0, 2): 4 + 3 x ((510 - 468) // 10 = 4) = 16 -> 32; Opportunist 16.
    # Round 2's first player is seat 1: order 1, 2, 0 -> seat 2 (round-1 order: seat 0).
    rules = {**short_game(2), "stagger": 0, "scoring": {"tiebreak_first_player": tiebreak}}
    rec = play_script(doc(agendas=TIE_TABLE, rules=rules))
    assert rec.final_dial == 468
    assert rec.first_player_last == 1
    assert [s.legacy for s in rec.seats] == [32, 16, 32]
    assert rec.winner == winner


# ============================================================================= X. Agendas


@pytest.mark.parametrize("agenda, dial, owned, bonus", [
    (L.STEWARD, 490, {}, 10),        # 4 + 3 x 2
    (L.STEWARD, 509, {}, 4),         # 4 + 3 x 0
    (L.STEWARD, 510, {}, 0),         # Severe
    (L.STEWARD, 500, {}, 7),         # 4 + 3 x 1
    (L.STEWARD, 501, {}, 4),         # 9 ppm below: no full step
    (L.STEWARD, 400, {}, 37),        # 4 + 3 x 11, no cap
    (L.STEWARD, 560, {}, 0),
    (L.OPPORTUNIST, 510, {}, 9),
    (L.OPPORTUNIST, 549, {}, 9),
    (L.OPPORTUNIST, 509, {}, 0),
    (L.OPPORTUNIST, 550, {}, 0),
    (L.ACCELERATIONIST, 550, {"refinery": 2, "carbon-sink": 1, "bunker": 1}, 6),  # 4 + 2
    (L.ACCELERATIONIST, 599, {}, 4),
    (L.ACCELERATIONIST, 549, {"refinery": 3}, -2),
    (L.ACCELERATIONIST, 480, {}, -2),
])
def test_R_X1_agenda_bonus_for_the_final_band(agenda, dial, owned, bonus):
    R = rules_vector(Rules(), 3)
    counts = [0] * len(KIND)
    for name, c in owned.items():
        counts[KIND[name]] = c
    assert engine.agenda_bonus(R, agenda, engine.band_of(R, dial), dial, counts) == bonus


# ============================================================================= I. Information


def _history_game():
    """A Game after round 1 with masks, a claim and a purchase, ready for round 2."""
    d = doc([[{"works": 4, "cool": 1, "burn": 1, "masked_burn": 1, "request": 3,
               "buy": ["refinery"]},
              {"works": 3, "cool": 2, "burn": 1, "masked_cool": 1, "request": 2,
               "buy": ["grey-bank"]},
              {"works": 5, "burn": 1, "masked_burn": 1}]],
            deck=["refinery", "grey-bank", "carbon-sink", "media-house"])
    g, pols = build(d)
    g.round = 1
    engine.play_round(g, pols)
    engine.end_round(g)
    g.round = 2
    return g, pols


def _set(attr, value=None, delta=None):
    def f(seat):
        setattr(seat, attr, getattr(seat, attr) + delta if delta is not None else value)
    return f


HIDDEN = {
    "capital": _set("capital", delta=7),
    "agenda": _set("agenda", value=L.STEWARD),
    "masks": _set("masks", delta=-1),
    "cool_masked": _set("cool_masked", delta=2),
    "burn_masked": _set("burn_masked", delta=1),
    "fog_in": _set("fog_in", delta=3),
    "fog_requested": _set("fog_requested", delta=5),
    "fog_received": _set("fog_received", delta=2),
    "commitment": _set("commitment", value=Commitment(2, 2, 2, 1, 1)),
}


@pytest.mark.parametrize("decision", [L.DP_COMMIT, L.DP_FOG, L.DP_MARKET, L.DP_ACCUSE])
def test_R_I1_public_state_is_in_every_view(decision):
    g, _ = _history_game()
    for s in range(3):
        V = player_view(g, s, decision)
        assert V[L.V_DIAL] == g.dial and V[L.V_POT] == g.pot
        assert V[L.V_ROUND] == 2 and V[L.V_FIRST_PLAYER] == 1
        assert V[L.V_DECK_LEFT] == len(g.deck)
        assert list(V[L.V_MARKET:L.V_MARKET + 4]) == g.market
        assert V[L.V_OWNED + 0 * L.MAX_KINDS + KIND["refinery"]] == 1
        assert V[L.V_OWNED + 1 * L.MAX_KINDS + KIND["grey-bank"]] == 1
        # round 1's reveal: open counts per owner, Fog totals (masked COOL 1, BURN 2)
        assert list(V[L.V_OPEN_BURN_TOTAL:L.V_OPEN_BURN_TOTAL + 3]) == [0, 1, 0]
        assert (V[L.V_FOG_COOL_TOTAL], V[L.V_FOG_BURN_TOTAL]) == (1, 2)
    base = player_view(g, 0, decision)
    public_changes = [
        lambda h: setattr(h, "dial", h.dial + 1),
        lambda h: setattr(h, "pot", h.pot + 1),
        lambda h: h.flipped.__setitem__(1, True),
        lambda h: h.market.__setitem__(0, KIND["bunker"]),
        lambda h: h.seats[2].owned.__setitem__(KIND["bunker"], 1),
        lambda h: setattr(h.seats[2], "revealed", True),
        lambda h: h.points[1].__setitem__(2, 1),
    ]
    for change in public_changes:
        h = copy.deepcopy(g)
        change(h)
        assert not np.array_equal(player_view(h, 0, decision), base)


@pytest.mark.parametrize("what", sorted(HIDDEN))
@pytest.mark.parametrize("rival", [1, 2])
def test_R_I2_rival_hidden_state_is_not_in_the_view(what, rival):
    g, _ = _history_game()
    for decision in (L.DP_COMMIT, L.DP_FOG, L.DP_MARKET, L.DP_ACCUSE):
        base = player_view(g, 0, decision)
        h = copy.deepcopy(g)
        HIDDEN[what](h.seats[rival])
        assert np.array_equal(player_view(h, 0, decision), base), (what, decision)


@pytest.mark.parametrize("what", sorted(HIDDEN))
def test_R_I2_own_hidden_state_is_in_the_own_view(what):
    g, _ = _history_game()
    base = player_view(g, 0, L.DP_MARKET)
    h = copy.deepcopy(g)
    if what == "agenda":
        h.seats[0].agenda = L.OPPORTUNIST
    else:
        HIDDEN[what](h.seats[0])
    assert not np.array_equal(player_view(h, 0, L.DP_MARKET), base)


def test_R_I2_a_revealed_agenda_becomes_public():
    g, _ = _history_game()
    g.seats[1].revealed = True
    base = player_view(g, 0, L.DP_COMMIT)
    assert base[L.V_REVEALED_AGENDA + 1] == L.OPPORTUNIST
    h = copy.deepcopy(g)
    h.seats[1].agenda = L.STEWARD
    assert not np.array_equal(player_view(h, 0, L.DP_COMMIT), base)


@pytest.mark.parametrize("bot", [b for b in bot_names(compiled_only=True) if b != "hoarder"])
def test_R_I3_decisions_ignore_rival_hidden_state(bot):
    # round 2 played with seat 0 = `bot` in two games that differ only in the rivals' hidden
    # state: seat 0's commitment, claim and purchases must be the same.
    outcomes = []
    for mutate in (False, True):
        g, pols = _history_game()
        g.round = 2
        pols[0] = engine.bind_policy(bot)
        pols[1] = engine.bind_policy("hoarder")
        pols[2] = engine.bind_policy("hoarder")
        if mutate:
            for s in (1, 2):
                for what in ("capital", "agenda", "masks", "cool_masked", "burn_masked",
                             "fog_in", "fog_requested", "fog_received"):
                    HIDDEN[what](g.seats[s])
        n0 = len(g.events)
        engine.play_round(g, pols)
        mine = [(e.kind, e.data) for e in g.events[n0:]
                if e.data.get("seat") == 0 and e.kind in ("commit", "claim", "buy", "point")]
        outcomes.append((mine, g.seats[0].capital))
    assert outcomes[0] == outcomes[1]


# ============================================================================= D. Defaults


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_D1_baseline_per_round(players):
    expected = [b + 2 * (players - 3) for b in D1_3P]
    assert list(Rules().baseline.for_players(players)) == expected
    R = rules_vector(load_rules(overrides={"players": players}), players)
    assert list(R[L.R_BASELINE:L.R_BASELINE + 8]) == expected
    # round 1 with hoarders: 450 + baseline + 2 (Ice Loss)
    g, pols = build(doc(players=players))
    g.round = 1
    engine.world_turn(g)
    assert g.dial == 450 + expected[0] + 2


def test_D1_known_totals():
    assert sum(Rules().baseline.for_players(3)) == 75
    assert sum(Rules().baseline.for_players(6)) == 123
    assert Rules().baseline.for_players(3)[:2] == (7, 7)


@pytest.mark.parametrize("players, counts", [(3, (2, 1, 1)), (4, (2, 2, 2)), (5, (3, 2, 2)),
                                             (6, (3, 3, 2))])
def test_D2_agenda_decks(players, counts):
    deck = Rules().decks.for_players(players).counts()
    assert deck == counts
    steward, opportunist, accel = deck
    assert sum(deck) > players            # deck > players
    assert steward < players              # an all-Steward table is impossible
    assert (accel >= 2) == (players >= 4)  # two Accelerationists only from 4 players
    assert steward + opportunist >= players  # zero Accelerationists always possible


D3 = {  # count, price, income, ppm, legacy (warming, severe, extreme), weight, tie-break
    "refinery": (5, 4, 3, 1, (0, 0, 0), 0, False),
    "carbon-sink": (4, 5, 0, -2, (3, 0, 0), 0, False),
    "media-house": (2, 4, 1, 0, (0, 0, 0), 2, False),
    "grey-bank": (2, 3, 2, 0, (0, 0, 0), 0, False),
    "bunker": (2, 4, 0, 0, (0, 0, 3), 0, True),
}


@pytest.mark.parametrize("name", sorted(D3))
def test_D3_asset_deck_table(name):
    count, price, income, ppm, legacy, weight, tiebreak = D3[name]
    a = Rules().assets[name]
    assert (a.count, a.price, a.income, a.ppm) == (count, price, income, ppm)
    assert (a.legacy_warming, a.legacy_severe, a.legacy_extreme) == legacy
    assert (a.accusation_weight, a.collapse_tiebreak) == (weight, tiebreak)
    # in play: seat 2 (10 Capital) buys one in round 1 and pays the price; at round 2's
    # world turn it pays its income and moves the Dial by its ppm: 459 + 7 + 2 + ppm
    others = [n for n in D3 if n != name][:3]
    rec = play_script(doc([[{}, {}, {"works": 6, "buy": [name]}]], deck=[name] + others))
    assert (2, "bank", price) in transfers(rec, 1, "market")
    assert transfers(rec, 2, "world") == ([("bank", 2, income)] if income else [])
    assert dial_after(rec, 2, "world") == 459 + 7 + 2 + ppm
    # its Legacy in each survival band
    g, _ = build(doc())
    g.seats[0].owned[KIND[name]] = 1
    for band, leg in zip((L.WARMING, L.SEVERE, L.EXTREME), legacy, strict=True):
        assert engine.legacy_of(g, 0, band)["assets"] == leg


@pytest.mark.parametrize("floor, expected", [(None, -35), (0, 0)])
def test_D4_no_floor(floor, expected):
    # start 10: world turn 10 + 7 + 2 = 19; 18 COOL (cost 6 each, affordable):
    # 19 - 54 = -35 (no floor, D4); with a floor at 0 the Dial stops at 0.
    rules = {"dial": {"start": 10}}
    if floor is not None:
        rules["dial"].update(floor_enabled=True, floor=floor)
    rec = play_script(doc([[{"cool": 6}] * 3], rules=rules))
    assert dial_after(rec, 1, "world") == 19
    assert dial_after(rec, 1, "reveal") == expected


def test_D9_round1_first_player_is_seat0_and_marker_moves_clockwise():
    rec = play_script(doc(players=4, rules=short_game(5)))
    assert events(rec, "setup")[0].data["first_player"] == 0
    assert [e.data["first_player"] for e in events(rec, "round")] == [0, 1, 2, 3, 0]
    assert [e.data["seat"] for e in events(rec, "commit", 2)] == [1, 2, 3, 0]
    assert rec.seats[0].capital - 5 * 12 == 8  # first player of round 1: +0 stagger (R-S3)
