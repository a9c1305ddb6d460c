"""Properties of the reference engine over random rules, lineups, seeds and game indices.

Each game's event log is replayed by an independent referee (`walk`), which rebuilds every
Capital, the Fog pot, the Dial, the tipping tokens, Masks, free WORKS and owned assets from
the recorded transfers, Dial moves and decisions alone; the properties compare that replay
with the rules (RULES.md) and with the game record.

The legality property (`test_every_decision_is_legal`) is the one that reports a game that
cannot be played to the end; the other properties reject such inputs (`play`) so that each
test fails only for its own property.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import Phase, given, reject, settings
from hypothesis import strategies as st

from fbsim.game import layout as L
from fbsim.lineup import Lineup, parse_lineup
from fbsim.policies import registry
from fbsim.reference import engine as E
from fbsim.reference.record import GameRecord, make_record
from fbsim.reference.state import BANK, POT, Commitment
from fbsim.reference.view import player_view
from fbsim.rules import Rules, load_rules, rules_vector
from tests.strategies import game_index_st, lineup_st, overrides_st, rules_st, seed_st

# A failing game property shrinks for minutes (every step loads rules and plays a game):
# the quick "ci" profile reports the first failing example as found; "long" shrinks it.
GAMES = (settings() if os.environ.get("HYPOTHESIS_PROFILE") == "long"
         else settings(phases=[Phase.explicit, Phase.reuse, Phase.generate]))


@st.composite
def game_inputs(draw):
    rules = draw(rules_st())
    return rules, draw(lineup_st(rules.players)), draw(seed_st()), draw(game_index_st())


def play(inputs) -> GameRecord:
    """Play with events; inputs whose game cannot be played are the legality test's."""
    rules, lineup, seed, gi = inputs
    try:
        return E.play_game(rules, lineup, seed, gi, events=True)
    except Exception:
        reject()


# ------------------------------------------------------------------------ the referee


@dataclass
class State:
    """What the event log says, before the event `walk` yields with it."""

    n: int
    agendas: list[str]
    capital: list[int]
    pot: int = 0
    bank: int = 0  # the bank's balance: what it received minus what it paid
    dial: int = 0
    flipped: list[bool] = field(default_factory=list)
    masks: list[int] = field(default_factory=list)
    free_works: list[int] = field(default_factory=list)
    owned: list[list[int]] = field(default_factory=list)  # [seat][kind]
    revealed: list[bool] = field(default_factory=list)
    first_player: int = 0
    round: int = 0
    commits: dict[int, dict] = field(default_factory=dict)  # this round's, by seat
    cornered_cost: int = 0

    def revealed_accelerationist(self, s: int) -> bool:
        return self.revealed[s] and self.agendas[s] == "accelerationist"

    def order(self, start: int | None = None) -> list[int]:
        s = self.first_player if start is None else start
        return [(s + i) % self.n for i in range(self.n)]


def walk(rules: Rules, rec: GameRecord, final: bool = False) -> Iterator[tuple]:
    """Yield (event, state before it) for every event, then apply the event to the state;
    with `final`, yield (None, the state after the last event) at the end."""
    events = list(rec.events)
    setup = events[0]
    assert setup.kind == "setup"
    n = setup.data["players"]
    R = rules_vector(rules, n)
    kinds = list(rules.assets)
    st_ = State(n=n, agendas=list(setup.data["agendas"]), capital=[0] * n,
                dial=setup.data["dial"],
                flipped=[bool(R[L.R_TOKEN_START_FLIPPED + t])
                         for t in range(int(R[L.R_N_TOKENS]))],
                masks=[rules.masks] * n, free_works=[0] * n,
                owned=[[0] * len(kinds) for _ in range(n)], revealed=[False] * n,
                first_player=setup.data["first_player"])
    for ev in events:
        yield ev, st_
        d = ev.data
        if ev.kind == "round":
            st_.round = ev.round
            st_.first_player = d["first_player"]
            st_.commits = {}
        elif ev.kind == "transfer":
            for end, sign in ((d["src"], -1), (d["dst"], 1)):
                if end == BANK:
                    st_.bank += sign * d["amount"]
                elif end == POT:
                    st_.pot += sign * d["amount"]
                else:
                    st_.capital[end] += sign * d["amount"]
            if ev.step == "market" and d["src"] == BANK:
                st_.free_works[d["dst"]] = 0  # wages end the market turn
        elif ev.kind == "dial":
            st_.dial += d["delta"]
        elif ev.kind == "flip":
            st_.flipped[d["token"]] = True
        elif ev.kind == "commit":
            s = d["seat"]
            st_.commits[s] = d
            st_.masks[s] -= d["masked_cool"] + d["masked_burn"]
            st_.free_works[s] = d["works"]
        elif ev.kind == "buy":
            s = d["seat"]
            st_.free_works[s] -= d["labour"]
            st_.owned[s][kinds.index(d["asset"])] += 1
        elif ev.kind == "cornered":
            st_.cornered_cost = d.get("cost", 0)
        elif ev.kind == "reveal" and ev.step == "accusation":
            st_.revealed[d["seat"]] = True
    if final:
        yield None, st_


def groups(rec: GameRecord) -> list[tuple[int, str, list]]:
    """The event log cut into runs of one (round, step)."""
    out: list[tuple[int, str, list]] = []
    for ev in rec.events:
        if not out or (out[-1][0], out[-1][1]) != (ev.round, ev.step):
            out.append((ev.round, ev.step, []))
        out[-1][2].append(ev)
    return out


# ------------------------------------------------------------------------ known bugs

# Minimal valid rules on which a bot once crashed (a zero ppm divisor) or broke R-C1 (more
# BURN than Agents); regressions.
_STEWARD = Lineup(by_agenda={a: "steward" for a in L.AGENDA_NAMES})
_OPPORTUNIST = Lineup(by_agenda={a: "opportunist" for a in L.AGENDA_NAMES})
BUG_COOL_PPM_0 = (load_rules(sets=["players=3", "jobs.cool_ppm=0"]), _STEWARD, 0, 0)
BUG_BURN_PPM_0 = (load_rules(sets=["players=3", "jobs.burn_ppm=0"]), _OPPORTUNIST, 0, 0)
BUG_MAX_BURN = (load_rules(sets=["players=3", "agents=2"]),
                parse_lineup("steward:max_burn=3"), 0, 0)


# ------------------------------------------------------------------------ properties


@pytest.mark.parametrize("inputs", [BUG_COOL_PPM_0, BUG_BURN_PPM_0, BUG_MAX_BURN],
                         ids=["steward-cool_ppm-0", "opportunist-burn_ppm-0",
                              "steward-max_burn-over-agents"])
def test_bots_play_legally_on_minimal_edge_rules(inputs):
    """Valid rules on which a bot used to crash or break R-C1 (kept as regressions)."""
    rules, lineup, seed, gi = inputs
    E.play_game(rules, lineup, seed, gi, events=True)


@GAMES
@given(inputs=game_inputs())
def test_every_decision_is_legal(inputs):
    """play_game never raises: no bot decision breaks a rule, no bot crashes."""
    rules, lineup, seed, gi = inputs
    E.play_game(rules, lineup, seed, gi, events=True)


@GAMES
@given(inputs=game_inputs())
def test_referee_agrees_every_decision_is_legal(inputs):
    """The referee's replay agrees with the engine's checks: R-C1..R-C3 commits, R-V5
    claims (D5), R-V6 purchases and wages, R-A1 points, R-A3 cornering (R-A2, D7), R-A4
    pay or reveal."""
    rules, *_ = inputs
    rec = play(inputs)
    n = rules.players
    kinds = list(rules.assets)
    weights: dict[int, int] = {}
    pointers: dict[int, list[int]] = {}
    for ev, s_ in walk(rules, rec):
        d = ev.data
        if ev.kind == "commit":
            s = d["seat"]
            w, c, b, mc, mb = (d[k] for k in ("works", "cool", "burn", "masked_cool",
                                              "masked_burn"))
            assert min(w, c, b) >= 0 and w + c + b == rules.agents, ev  # R-C1
            assert 0 <= mc <= c and 0 <= mb <= b, ev  # R-C2
            assert mc + mb <= s_.masks[s], ev  # R-C2
            pay = (rules.jobs.burn_pay_revealed if s_.revealed_accelerationist(s)
                   else rules.jobs.burn_pay)
            assert c * rules.jobs.cool_cost <= s_.capital[s] + (b - mb) * pay, ev  # R-C3
        elif ev.kind == "claim":
            req, got, before = d["requested"], d["received"], d["pot_before"]
            assert req >= 0 and before == s_.pot, ev  # R-V5
            want = min(req, before) if rules.fog.partial_fill or req <= before else 0
            assert got == want, ev  # D5
        elif ev.kind == "buy":
            s = d["seat"]
            a = rules.assets[d["asset"]]
            assert d["price"] == a.price and d["labour"] == rules.market.purchase_labour
            assert s_.free_works[s] >= d["labour"], ev  # R-V6
            assert s_.capital[s] >= a.price, ev  # R-V6: wages cannot fund it
        elif ev.kind == "transfer" and ev.step == "market" and d["src"] == BANK:
            assert d["amount"] == s_.free_works[d["dst"]] * rules.market.wage, ev  # R-V6
        elif ev.kind == "point":
            s, t = d["seat"], d["target"]
            if t != -1:  # R-A1 (R-A5; a revealed rival at all if revealed_accusable is off)
                assert 0 <= t < n and t != s and not s_.revealed_accelerationist(t), ev
                assert rules.accusation.revealed_accusable or not s_.revealed[t], ev
                # R-A2 + D7
                best, stacked = rules.accusation.point_weight, 0
                for k, count in enumerate(s_.owned[s]):
                    aw = rules.assets[kinds[k]].accusation_weight
                    if count > 0 and aw > 0:
                        best = max(best, aw)
                        stacked += count * aw
                want = stacked if rules.accusation.media_stacks and stacked > 0 else best
                assert d["weight"] == want, ev
                weights[t] = weights.get(t, 0) + want
                pointers.setdefault(t, []).append(s)
        elif ev.kind == "cornered":
            top = max(weights.values(), default=0)
            leaders = [t for t, w in weights.items() if w == top]
            if top > 0 and len(leaders) == 1:  # R-A3
                c = leaders[0]
                assert d["seat"] == c and sorted(d["accusers"]) == sorted(pointers[c]), ev
                assert d["cost"] == len(pointers[c]) * rules.accusation.pay_per_accuser
            else:
                assert d["seat"] == -1, ev
            weights, pointers = {}, {}
        elif ev.kind == "pay":
            assert s_.capital[d["seat"]] >= s_.cornered_cost, ev  # R-A4
        elif ev.kind == "reveal" and ev.step == "accusation":
            assert d["forced"] == (s_.capital[d["seat"]] < s_.cornered_cost), ev  # R-A4


@GAMES
@given(inputs=game_inputs())
def test_capital_is_never_negative(inputs):
    """No seat's Capital (nor the Fog pot) is ever below 0, after every transfer."""
    rules, *_ = inputs
    rec = play(inputs)
    last = None
    transfers = 0
    for ev, s_ in walk(rules, rec, final=True):
        if last is not None and last.kind == "transfer":
            transfers += 1
            assert min(s_.capital) >= 0 and s_.pot >= 0, (last, s_.capital, s_.pot)
        last = ev
    assert transfers == sum(ev.kind == "transfer" for ev in rec.events)


@GAMES
@given(inputs=game_inputs())
def test_money_is_conserved(inputs):
    """Capital only moves by transfers: each seat's incoming minus outgoing is its final
    Capital; the pot ends at 0 (what is left goes to the bank, D6); nothing is created."""
    rules, *_ = inputs
    rec = play(inputs)
    n = rules.players
    net = {s: 0 for s in range(n)}
    net[POT] = 0
    net[BANK] = 0
    pot = 0
    pot_at_end = None
    setup = []
    for ev in rec.events:
        if ev.kind != "transfer":
            continue
        d = ev.data
        assert isinstance(d["amount"], int) and d["amount"] > 0, ev
        assert d["src"] != d["dst"], ev
        net[d["src"]] -= d["amount"]
        net[d["dst"]] += d["amount"]
        assert sum(net.values()) == 0
        if ev.step == "setup":
            setup.append((d["dst"], d["amount"]))
        if ev.step == "end" and d["src"] == POT:
            pot_at_end = pot
        pot = net[POT]
        if ev.step == "fog" and not rules.fog.carry_over and d["dst"] == BANK:
            assert pot == 0, ev  # D6 off: emptied after the claims
    for s in range(n):
        assert net[s] == rec.seats[s].capital, s
    assert net[POT] == 0
    assert rec.pot_left == (pot_at_end or 0)
    # R-S2 + R-S3: starting Capital, staggered clockwise from the round-1 first player
    want = [((rules.first_player + k) % n, rules.capital + k * rules.stagger)
            for k in range(n)]
    assert setup == [w for w in want if w[1] > 0]
    # and every flow is the one the rules give, from the state at the start of its step
    starts = {}
    for ev, s_ in walk(rules, rec):
        starts.setdefault((ev.round, ev.step), (copy.deepcopy(s_.owned), list(s_.revealed),
                                                list(s_.agendas)))
    j = rules.jobs
    incomes = [a.income for a in rules.assets.values()]
    for r, step, evs in groups(rec):
        flows: dict = {}
        for ev in evs:
            if ev.kind == "transfer":
                key = (ev.data["src"], ev.data["dst"])
                flows[key] = flows.get(key, 0) + ev.data["amount"]
        owned, revealed, agendas = starts[(r, step)]
        collapse = any(ev.kind == "collapse" for ev in evs)
        if step == "world":  # R-W1 (income before or after the R-W4 check)
            paid = rules.income_before_collapse or not collapse
            want = {(BANK, s): sum(c * i for c, i in zip(owned[s], incomes, strict=True))
                    for s in range(n) if paid}
            assert flows == {k: v for k, v in want.items() if v}, (r, step)
        elif step == "reveal":
            commits = {ev.data["seat"]: ev.data for ev in rec.events
                       if ev.round == r and ev.kind == "commit"}
            want = {}
            if not collapse:  # R-V2: a Collapse at the reveal stops every payment
                for s, c in commits.items():
                    pay = (j.burn_pay_revealed if revealed[s] and agendas[s] ==
                           "accelerationist" else j.burn_pay)
                    want[(BANK, s)] = (c["burn"] - c["masked_burn"]) * pay  # R-V3, R-A5
                    want[(s, BANK)] = c["cool"] * j.cool_cost  # R-V4
                want[(BANK, POT)] = sum(c["masked_burn"] for c in commits.values()) \
                    * j.fog_per_masked_burn  # R-V3
            assert flows == {k: v for k, v in want.items() if v}, (r, step)
        elif step == "accusation":  # R-A4: 2 to each accuser, never doubled
            pays = [ev.data for ev in evs if ev.kind == "pay"]
            corner = [ev.data for ev in evs if ev.kind == "cornered"]
            want = ({(pays[0]["seat"], a): rules.accusation.pay_per_accuser
                     for a in corner[0]["accusers"]} if pays else {})
            assert flows == {k: v for k, v in want.items() if v}, (r, step)


@GAMES
@given(inputs=game_inputs())
def test_dial_is_start_plus_recorded_moves(inputs):
    """The Dial starts at dial.start (R-S1), moves only by recorded deltas, and ends at
    final_dial; each world turn moves it by R-W2 and each reveal by R-V2 (plus D4)."""
    rules, *_ = inputs
    rec = play(inputs)
    n = rules.players
    R = rules_vector(rules, n)
    setup = rec.events[0]
    assert setup.data["dial"] == rules.dial.start
    dial = rules.dial.start
    for ev in rec.events:
        if ev.kind == "dial":
            assert ev.data["delta"] != 0
            dial += ev.data["delta"]
            assert ev.data["dial"] == dial, ev
    assert dial == rec.final_dial
    # R-E2
    band = ("collapse" if dial >= rules.dial.collapse else "extreme"
            if dial >= rules.dial.extreme else "severe" if dial >= rules.dial.severe
            else "warming")
    assert rec.band == band
    # R-W2 / R-V2 per step, from the referee's state at the start of each step
    states = {}
    for ev, s_ in walk(rules, rec):
        key = (ev.round, ev.step)
        if key not in states:
            states[key] = (sum(s_.flipped), [row[:] for row in s_.owned])
    for r, step, evs in groups(rec):
        moves = [e.data["delta"] for e in evs if e.kind == "dial"
                 and e.data["cause"] != "floor (D4)"]
        if step == "world":
            flipped, owned = states[(r, step)]
            ppm = sum(owned[s][k] * a.ppm for s in range(n)
                      for k, a in enumerate(rules.assets.values()))
            want = (int(R[L.R_BASELINE + r - 1]) + rules.baseline_offset
                    + flipped * rules.tipping.penalty + ppm)
            assert sum(moves) == want, (r, step)
        elif step == "reveal":
            commits = {ev.data["seat"]: ev.data for ev in rec.events
                       if ev.round == r and ev.kind == "commit"}
            want = (rules.jobs.burn_ppm * sum(c["burn"] for c in commits.values())
                    - rules.jobs.cool_ppm * sum(c["cool"] for c in commits.values()))
            assert sum(moves) == want, (r, step)


@GAMES
@given(inputs=game_inputs())
def test_dial_by_round_is_the_dial_as_each_round_ended(inputs):
    """The record's Dial trajectory (R-S6, R-E1): one entry per round of the rules; entry r is
    the Dial after the last recorded move of round r+1 (or, once the game is over, R-W4 /
    R-V2, its final Dial); the last entry is the final Dial."""
    rules, *_ = inputs
    rec = play(inputs)
    assert len(rec.dial_by_round) == rules.rounds
    dial = rules.dial.start
    ends = {}
    for ev in rec.events:
        if ev.kind == "dial":
            dial = ev.data["dial"]
        if ev.round >= 1 and ev.step != "end":
            ends[ev.round] = dial
    for r in range(1, rules.rounds + 1):
        want = ends.get(r, dial) if r < rec.rounds_played else rec.final_dial
        assert rec.dial_by_round[r - 1] == want, (r, rec.dial_by_round)
        if r < rec.rounds_played:
            assert rec.dial_by_round[r - 1] < rules.dial.collapse  # still playing (R-W4)
    assert rec.dial_by_round[-1] == rec.final_dial


@GAMES
@given(inputs=game_inputs())
def test_tokens_never_unflip(inputs):
    """Each token flips at most once, only when the Dial has reached its threshold (or gone
    above it, `tipping.flip_when = "crossing"`), and after every world turn and reveal every
    such token has flipped (R-W3); tokens_flipped = start_flipped + flip events."""
    rules, *_ = inputs
    rec = play(inputs)
    R = rules_vector(rules, rules.players)
    n_tokens = int(R[L.R_N_TOKENS])
    thresholds = [int(R[L.R_TOKEN_THRESHOLD + t]) for t in range(n_tokens)]
    flips = [ev for ev in rec.events if ev.kind == "flip"]
    tokens = [ev.data["token"] for ev in flips]
    assert len(tokens) == len(set(tokens))
    assert all(t >= rules.tipping.start_flipped for t in tokens)  # those start flipped
    assert rec.tokens_flipped == rules.tipping.start_flipped + len(flips)
    crossing = rules.tipping.flip_when == "crossing"

    def tips(dial, threshold):
        return dial > threshold if crossing else dial >= threshold

    dial = rules.dial.start
    flipped = [t < rules.tipping.start_flipped for t in range(n_tokens)]
    for _r, step, evs in groups(rec):
        for ev in evs:
            if ev.kind == "dial":
                dial = ev.data["dial"]
            elif ev.kind == "flip":
                t = ev.data["token"]
                assert not flipped[t] and thresholds[t] == ev.data["threshold"], ev
                assert tips(dial, thresholds[t]), ev
                flipped[t] = True
        if step in ("world", "reveal"):
            for t in range(n_tokens):
                assert flipped[t] or not tips(dial, thresholds[t]), (_r, step, t)


def legacy_of(rules: Rules, rec: GameRecord, s: int) -> int:
    """R-E4 + R-X1, from the record alone."""
    seat = rec.seats[s]
    band = rec.band
    dial = rec.final_dial
    field_ = {"warming": "legacy_warming", "severe": "legacy_severe",
              "extreme": "legacy_extreme"}[band]
    g = rules.agendas
    if seat.agenda == "steward":
        bonus = (g.steward_base + g.steward_per_step * ((rules.dial.severe - dial)
                                                        // g.steward_step)
                 if band == "warming" else 0)
    elif seat.agenda == "opportunist":
        bonus = g.opportunist_severe if band == "severe" else 0
    else:
        # R-X1: the Accelerationist's own heat assets, or the whole table's
        holders = [seat] if g.accelerationist_heat_own_only else rec.seats
        heat = sum(c for h in holders for k, c in h.assets.items() if rules.assets[k].ppm > 0)
        bonus = (g.accelerationist_extreme + g.accelerationist_per_heat_asset * heat
                 if band == "extreme" else g.accelerationist_other)
    return (seat.capital // rules.scoring.capital_per_legacy
            + sum(c * getattr(rules.assets[k], field_) for k, c in seat.assets.items())
            + seat.cool_open + seat.cool_masked - seat.burn_open - seat.burn_masked + bonus)


def tiebreak_start(rules: Rules, rec: GameRecord) -> int:
    """D8: the seat the tie-break order starts from."""
    return {"last-round": rec.first_player_last, "round-1": rules.first_player,
            "after-rotation": (rec.first_player_last + 1) % rules.players,
            }[rules.scoring.tiebreak_first_player]


def check_winner(rules: Rules, rec: GameRecord) -> None:
    """R-E3 (Collapse) or R-E4 (survival, D8 tie-breaks) give the recorded winner."""
    n = rules.players
    # the marker moves one seat clockwise after every round but the last played
    assert rec.first_player_last == (rules.first_player + rec.rounds_played - 1) % n
    start = tiebreak_start(rules, rec)
    order = [(start + i) % n for i in range(n)]
    assert (rec.end == "survived") == (rec.band != "collapse")
    if rec.end == "survived":
        assert rec.rounds_played == rules.rounds  # R-E1
        legacy = [legacy_of(rules, rec, s) for s in range(n)]
        assert [seat.legacy for seat in rec.seats] == legacy
        cool = [seat.cool_open + seat.cool_masked for seat in rec.seats]
        top = max((legacy[s], cool[s]) for s in range(n))
        assert rec.winner == next(s for s in order if (legacy[s], cool[s]) == top)
    else:
        assert all(seat.legacy == 0 for seat in rec.seats)
        qualified = [s for s in order if rec.seats[s].agenda == "accelerationist"
                     and rec.seats[s].capital >= rules.scoring.collapse_min_capital]
        if not qualified:
            assert rec.winner == -1
        else:
            def key(s):
                seat = rec.seats[s]
                bunkers = sum(c for k, c in seat.assets.items()
                              if rules.assets[k].collapse_tiebreak)
                return seat.capital, bunkers
            top = max(key(s) for s in qualified)
            assert rec.winner == next(s for s in qualified if key(s) == top)
        # R-W4 / R-V2: the game ended at the step whose Dial reached the collapse reading
        last = [e for e in rec.events if e.kind == "collapse"]
        assert len(last) == 1
        assert last[0].step == {"collapse-world": "world", "collapse-reveal": "reveal"}[rec.end]
        after = rec.events[rec.events.index(last[0]) + 1:]
        assert all(e.step == "end" for e in after)  # no payment, no further round
        assert rec.rounds_played == last[0].round


@GAMES
@given(inputs=game_inputs())
def test_winner_follows_from_scores(inputs):
    """R-E3 (Collapse) or R-E4 (survival, D8 tie-breaks) give the recorded winner."""
    rules, *_ = inputs
    check_winner(rules, play(inputs))


@st.composite
def tied_inputs(draw):
    """Tables where every seat ties: one Agenda, equal Capital, hoarders only."""
    o = draw(overrides_st())
    n = o["players"]
    o["stagger"] = 0
    o["decks"] = {f"p{n}": {"steward": 0, "opportunist": 0, "accelerationist": 0,
                            draw(st.sampled_from(["steward", "opportunist",
                                                  "accelerationist"])): n + 1}}
    lineup = Lineup(by_agenda={a: "hoarder" for a in L.AGENDA_NAMES})
    return load_rules(overrides=o), lineup, draw(seed_st()), draw(game_index_st())


@GAMES
@given(inputs=tied_inputs())
def test_D8_ties_go_to_the_earliest_in_order(inputs):
    """With everyone tied, the winner is the first player of the last round played (D8
    default), of round 1, or the seat after the last round's first player (R-E3 Collapse:
    the earliest qualified in that order)."""
    rules, *_ = inputs
    rec = play(inputs)
    check_winner(rules, rec)
    n = rules.players
    start = tiebreak_start(rules, rec)
    if rec.end == "survived" or rec.winner >= 0:
        assert rec.winner == start % n


@GAMES
@given(inputs=game_inputs())
def test_same_inputs_give_the_same_record(inputs):
    rules, lineup, seed, gi = inputs
    rec = play(inputs)
    again = E.play_game(rules, lineup, seed, gi, events=True)
    assert again.as_dict(events=True) == rec.as_dict(events=True)
    quiet = E.play_game(rules, lineup, seed, gi, events=False)
    assert quiet.as_dict() == rec.as_dict()


# ------------------------------------------------------------------------ R-I3

DECISIONS = {L.DP_COMMIT: "commit", L.DP_FOG: "fog_request", L.DP_MARKET: "market",
             L.DP_ACCUSE: "accuse", L.DP_CORNERED: "cornered"}


def perturb_rivals(g, seat: int, decision: int, rnd: random.Random):
    """A copy of the game whose rivals' hidden state (R-I2) is changed at random, with
    the public state (R-I1) kept: Agenda unless revealed, Capital, Masks, masked chips,
    this round's commitment (open counts kept once revealed), Fog money and claims."""
    seats = []
    for t, other in enumerate(g.seats):
        if t == seat:
            seats.append(other)
            continue
        ch = dict(capital=rnd.randrange(0, 300), masks=rnd.randrange(0, 6),
                  cool_masked=rnd.randrange(0, 20), burn_masked=rnd.randrange(0, 20),
                  fog_in=rnd.randrange(0, 60), fog_in_round=rnd.randrange(0, 20),
                  fog_requested=rnd.randrange(0, 200), fog_received=rnd.randrange(0, 60))
        if not other.revealed:
            ch["agenda"] = rnd.randrange(L.N_AGENDAS)
        c = other.commitment
        mc, mb = rnd.randrange(0, 4), rnd.randrange(0, 4)
        if decision == L.DP_COMMIT or c is None:  # R-C4: nothing of it is public yet
            w, cl, b = (rnd.randrange(0, 7) for _ in range(3))
            ch["commitment"] = Commitment(w, cl + mc, b + mb, mc, mb)
        else:
            ch["commitment"] = Commitment(c.works, c.open_cool + mc, c.open_burn + mb, mc, mb)
        seats.append(dataclasses.replace(other, **ch))
    g2 = copy.copy(g)
    g2.seats = seats
    return g2


class CheckedPolicy:
    """Wraps a seat's bot: at each decision, checks R-I3 against a perturbed game."""

    def __init__(self, entry, seat: int, box: dict, rnd: random.Random):
        self.inner = E.bind_policy(entry)
        self.spec = registry()[entry.bot]
        self.P = entry.vector()
        self.seat = seat
        self.box = box
        self.rnd = rnd

    def _decide(self, fn: str, R, V, seed, game):
        g = self.box["g"]
        dec = int(V[L.V_DECISION])
        assert DECISIONS[dec] == fn
        kw = dict(accusers=int(V[L.V_ACCUSERS]), corner_cost=int(V[L.V_CORNER_COST]))
        # the view the engine gave is this seat's view of the game as it stands
        assert np.array_equal(player_view(g, self.seat, dec, **kw), V)
        g2 = perturb_rivals(g, self.seat, dec, self.rnd)
        V2 = player_view(g2, self.seat, dec, **kw)
        diff = np.flatnonzero(V2 != V)
        assert diff.size == 0, f"R-I3: {fn} view of seat {self.seat} changed at {diff}"
        f = getattr(self.spec, fn)
        a, b = f(R, V, self.P, seed, game), f(R, V2, self.P, seed, game)
        assert np.array_equal(np.asarray(a), np.asarray(b)), (fn, a, b)
        self.box["checks"] += 1
        return getattr(self.inner, fn)(R, V, seed, game)

    def commit(self, R, V, seed, game):
        return self._decide("commit", R, V, seed, game)

    def fog_request(self, R, V, seed, game):
        return self._decide("fog_request", R, V, seed, game)

    def market(self, R, V, seed, game):
        return self._decide("market", R, V, seed, game)

    def accuse(self, R, V, seed, game):
        return self._decide("accuse", R, V, seed, game)

    def cornered(self, R, V, seed, game):
        return self._decide("cornered", R, V, seed, game)

    def illegal(self, *args):
        return self.inner.illegal(*args)


def play_checked(rules: Rules, lineup: Lineup, seed: int, gi: int, rnd: random.Random):
    """play_game, step by step through the engine's own functions, with checked bots."""
    n = rules.players
    R = rules_vector(rules, n)
    agendas = E.deal_agendas(R, seed, gi)
    bots = [lineup.label_for(s, agendas[s]) for s in range(n)]
    box = {"checks": 0}
    policies = [CheckedPolicy(lineup.entry_for(s, agendas[s]), s, box, rnd) for s in range(n)]
    g = E.setup(rules, agendas, E.shuffle_assets(R, seed, gi), bots, seed, gi, True)
    box["g"] = g
    return make_record(E.run(g, policies)), box["checks"]


@GAMES
@given(inputs=game_inputs(), perturb_seed=st.integers(0, 2**32))
def test_R_I3_rivals_hidden_state_changes_no_view_and_no_decision(inputs, perturb_seed):
    rules, lineup, seed, gi = inputs
    rec = play(inputs)
    checked, checks = play_checked(rules, lineup, seed, gi, random.Random(perturb_seed))
    # every decision point of the game was checked
    kinds = [ev.kind for ev in rec.events]
    markets = rules.players * len({ev.round for ev in rec.events if ev.kind == "claim"})
    chosen = sum(ev.kind == "pay" or (ev.kind == "reveal" and ev.step == "accusation"
                                      and not ev.data["forced"]) for ev in rec.events)
    assert checks == (kinds.count("commit") + kinds.count("claim") + markets
                      + kinds.count("buy") + kinds.count("point") + chosen)
    # the checked game is the same game
    assert checked.as_dict(events=True) == rec.as_dict(events=True)


@given(seed=seed_st(), perturb_seed=st.integers(0, 2**32))
def test_R_I2_own_hidden_state_is_in_the_view(seed, perturb_seed):
    """The R-I3 check can fail: the deciding seat's own hidden state does reach its view."""
    rules = load_rules(sets=["players=4"])
    lineup = parse_lineup("random")
    rnd = random.Random(perturb_seed)
    R = rules_vector(rules, 4)
    agendas = E.deal_agendas(R, seed, 0)
    g = E.setup(rules, agendas, E.shuffle_assets(R, seed, 0),
                [lineup.bot_for(s, a) for s, a in enumerate(agendas)], seed, 0, False)
    seat = rnd.randrange(4)
    V = player_view(g, seat, L.DP_COMMIT)
    mine = copy.copy(g)
    mine.seats = list(g.seats)
    mine.seats[seat] = dataclasses.replace(g.seats[seat],
                                           capital=g.seats[seat].capital + 1 + rnd.randrange(9))
    assert not np.array_equal(player_view(mine, seat, L.DP_COMMIT), V)
    # and a rival's public state (owned assets) reaches it too
    rival = (seat + 1 + rnd.randrange(3)) % 4
    pub = copy.copy(g)
    pub.seats = list(g.seats)
    pub.seats[rival] = dataclasses.replace(g.seats[rival], owned=[1] + g.seats[rival].owned[1:])
    assert not np.array_equal(player_view(pub, seat, L.DP_COMMIT), V)
