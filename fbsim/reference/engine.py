"""The reference engine: RULES.md in plain Python, one function per step of a round.

    play_game(rules, lineup, seed, game_index) -> GameRecord

Each step cites the rules it implements. Bots are asked through `fbsim.reference.view`
(section I) and their answers are checked against the rules before they take effect, so an
illegal decision stops the game with an error naming the round, the seat and the rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fbsim.errors import IllegalDecision
from fbsim.game import layout as L
from fbsim.game import shape
from fbsim.game.legal import accusable
from fbsim.game.public import band_of, flips
from fbsim.game.rng import shuffle_in_place
from fbsim.lineup import Entry, Lineup
from fbsim.policies import registry
from fbsim.reference.record import GameRecord, make_record
from fbsim.reference.state import BANK, POT, Commitment, Game, Seat, move_dial, transfer
from fbsim.reference.view import player_view
from fbsim.rules import Rules, rules_vector

# ------------------------------------------------------------------------------ policies


@dataclass
class SeatPolicy:
    """A registered bot bound to its parameter vector."""

    name: str
    P: np.ndarray

    def __post_init__(self):
        self.spec = registry()[self.name]

    def commit(self, R, V, seed, game):
        return self.spec.commit(R, V, self.P, seed, game)

    def fog_request(self, R, V, seed, game):
        return self.spec.fog_request(R, V, self.P, seed, game)

    def market(self, R, V, seed, game):
        return self.spec.market(R, V, self.P, seed, game)

    def accuse(self, R, V, seed, game):
        return self.spec.accuse(R, V, self.P, seed, game)

    def cornered(self, R, V, seed, game):
        return self.spec.cornered(R, V, self.P, seed, game)

    def illegal(self, message: str, round_no: int, seat: int, rule: str) -> Exception:
        return IllegalDecision(message, round_no, seat, rule, self.name)


def bind_policy(entry: Entry | str) -> SeatPolicy:
    """A lineup entry (or a bot name, at its default parameters) bound to its bot."""
    entry = Entry.make(entry) if isinstance(entry, str) else entry
    return SeatPolicy(entry.bot, entry.vector())


# ------------------------------------------------------------------------------ setup


def deal_agendas(R: np.ndarray, seed: int, game_index: int) -> list[int]:
    """R-S4: shuffle the agenda deck for this table size (D2) and deal one card per seat."""
    deck = np.repeat(np.arange(L.N_AGENDAS, dtype=np.int64),
                     R[L.R_DECK:L.R_DECK + L.N_AGENDAS])
    shuffle_in_place(deck, seed, game_index, L.PURPOSE_AGENDA_DEAL)
    return [int(a) for a in deck[: shape.players(R)]]


def shuffle_assets(R: np.ndarray, seed: int, game_index: int) -> list[int]:
    """R-S5: the asset deck (D3), shuffled; top card first."""
    counts = [R[L.asset_at(k, L.A_COUNT)] for k in range(shape.n_kinds(R))]
    deck = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    shuffle_in_place(deck, seed, game_index, L.PURPOSE_ASSET_SHUFFLE)
    return [int(k) for k in deck]


def setup(rules: Rules, agendas: list[int], asset_deck: list[int], bots: list[str],
          seed: int, game_index: int, events: bool) -> Game:
    """R-S1..R-S5: Dial, tokens, Agents, Capital (staggered), Masks, Agendas, market."""
    n = len(agendas)
    R = rules_vector(rules, n)
    first = int(R[L.R_FIRST_PLAYER])  # D9
    n_tokens = int(shape.n_tokens(R))
    seats = [Seat(index=s, agenda=agendas[s], bot=bots[s], masks=int(R[L.R_MASKS]),
                  owned=[0] * int(shape.n_kinds(R))) for s in range(n)]
    size = int(shape.market_size(R))
    g = Game(rules=rules, R=R, seed=seed, game_index=game_index, seats=seats,
             dial=int(R[L.R_DIAL_START]),  # R-S1
             flipped=[bool(R[L.R_TOKEN_START_FLIPPED + t]) for t in range(n_tokens)],  # R-S1
             market=list(asset_deck[:size]), deck=list(asset_deck[size:]),  # R-S5
             first_player=first,
             events=[] if events else None,
             last_open=[(0, 0, 0)] * n,
             open_totals=[[0, 0, 0] for _ in range(n)],
             points=[[0] * n for _ in range(n)])
    g.log("setup", "setup", players=n, dial=g.dial, first_player=first,
          agendas=[L.AGENDA_NAMES[a] for a in agendas], bots=list(bots),
          market=list(g.market), deck_left=len(g.deck))
    for place, s in enumerate(g.order()):
        # R-S2 + R-S3: 8 Capital, plus one per place clockwise from the first player
        amount = int(R[L.R_CAPITAL] + place * R[L.R_STAGGER])
        transfer(g, BANK, s, amount, "starting Capital", "setup")
    return g


# ------------------------------------------------------------------------------ the round


def world_turn(g: Game) -> None:
    """R-W1..R-W4: income, the Dial's move, tipping tokens, Collapse."""
    R = g.R
    income_first = bool(R[L.R_INCOME_BEFORE_COLLAPSE])
    if income_first:
        pay_income(g)
    r = g.round
    move_dial(g, int(R[L.R_BASELINE + r - 1]), f"baseline of round {r}", "world")  # R-W2, D1
    move_dial(g, int(R[L.R_BASELINE_OFFSET]), "baseline offset", "world")
    n_flipped = sum(g.flipped)
    move_dial(g, int(n_flipped * R[L.R_TOKEN_PENALTY]),
              f"{n_flipped} flipped tipping token(s)", "world")  # R-W2
    for k in range(int(shape.n_kinds(R))):
        owned = sum(seat.owned[k] for seat in g.seats)
        ppm = int(R[L.asset_at(k, L.A_PPM)])
        move_dial(g, owned * ppm, f"{owned} owned {g.rules.asset_names[k]}", "world")  # R-W2
    apply_floor(g, "world")
    flip_tokens(g, "world")  # R-W3
    if g.dial >= R[L.R_COLLAPSE]:  # R-W4
        end_in_collapse(g, L.END_COLLAPSE_WORLD, "world")
        return
    if not income_first:
        pay_income(g)


def pay_income(g: Game) -> None:
    """R-W1: every owned asset pays its income (assets bought last round pay from now on)."""
    for s in g.order():
        for k, count in enumerate(g.seats[s].owned):
            income = int(g.R[L.asset_at(k, L.A_INCOME)])
            transfer(g, BANK, s, count * income, f"income of {count} "
                     f"{g.rules.asset_names[k]}", "world")


def apply_floor(g: Game, step: str) -> None:
    """D4: the Dial has no floor unless the rules give one."""
    if g.R[L.R_FLOOR_ENABLED] and g.dial < g.R[L.R_FLOOR]:
        move_dial(g, int(g.R[L.R_FLOOR]) - g.dial, "floor (D4)", step)


def flip_tokens(g: Game, step: str) -> None:
    """R-W3: every unflipped token whose threshold the Dial has reached (or, with
    `tipping.flip_when = "crossing"`, gone above) flips, for good.

    Its penalty first applies at the next world turn (it is counted there, not here).
    """
    for t, flipped in enumerate(g.flipped):
        threshold = int(g.R[L.R_TOKEN_THRESHOLD + t])
        if not flipped and flips(g.R, g.dial, threshold):
            g.flipped[t] = True
            g.log(step, "flip", token=t, threshold=threshold, dial=g.dial)


def end_in_collapse(g: Game, end: int, step: str) -> None:
    g.over = True
    g.end = end
    g.log(step, "collapse", dial=g.dial)


def commit(g: Game, policies: list) -> None:
    """R-C1..R-C4: every player assigns all Agents at once, secretly."""
    R = g.R
    # R-C4: every view is taken before any commitment of this round is made
    views = [player_view(g, s, L.DP_COMMIT) for s in range(g.n)]
    for s in g.order():
        works, cool, burn, mc, mb = (int(x) for x in
                                     policies[s].commit(R, views[s], g.seed, g.game_index))
        check_commit(g, s, Commitment(works, cool, burn, mc, mb), policies[s])
    for s in g.order():
        seat = g.seats[s]
        c = seat.commitment
        seat.masks -= c.masked_cool + c.masked_burn  # R-C2: a spent mask is gone
        seat.works_total += c.works
        seat.cool_open += c.open_cool
        seat.cool_masked += c.masked_cool
        seat.burn_open += c.open_burn
        seat.burn_masked += c.masked_burn
        seat.free_works = c.works
        seat.bought = 0
        seat.fog_in_round = 0
        g.log("commit", "commit", seat=s, works=c.works, cool=c.cool, burn=c.burn,
              masked_cool=c.masked_cool, masked_burn=c.masked_burn)


def burn_pay(g: Game, s: int) -> int:
    """R-V3/R-A5: what one open BURN pays seat s."""
    if g.seats[s].is_revealed_accelerationist():
        return int(g.R[L.R_BURN_PAY_REVEALED])
    return int(g.R[L.R_BURN_PAY])


def check_commit(g: Game, s: int, c: Commitment, policy) -> None:
    R = g.R
    seat = g.seats[s]
    agents = int(R[L.R_AGENTS])

    def fail(msg, rule):
        raise policy.illegal(msg, g.round, s, rule)

    if min(c.works, c.cool, c.burn) < 0 or c.works + c.cool + c.burn != agents:
        fail(f"works {c.works} + cool {c.cool} + burn {c.burn} must be {agents}, each >= 0",
             "R-C1")
    if c.masked_cool < 0 or c.masked_burn < 0:
        fail("masked counts must be >= 0", "R-C2")
    if c.masked_cool > c.cool or c.masked_burn > c.burn:
        fail(f"masks {c.masked_cool} cool / {c.masked_burn} burn exceed the chips "
             f"({c.cool} cool, {c.burn} burn); WORKS can never be masked", "R-C2")
    if c.masked_cool + c.masked_burn > seat.masks:
        fail(f"uses {c.masked_cool + c.masked_burn} masks but has {seat.masks} left", "R-C2")
    cost = c.cool * int(R[L.R_COOL_COST])
    budget = seat.capital + c.open_burn * burn_pay(g, s)
    if cost > budget:
        fail(f"cooling {c.cool} costs {cost} but only {seat.capital} Capital + "
             f"{c.open_burn * burn_pay(g, s)} open-burn pay is there (masked burn money, "
             "claims and wages come later)", "R-C3")
    seat.commitment = c


def reveal(g: Game) -> None:
    """R-V1 + R-V2: show open chips with owners and the Fog pool's totals; move the Dial
    once; check tokens and Collapse (at which the game ends before any payment)."""
    R = g.R
    fog_cool = sum(seat.commitment.masked_cool for seat in g.seats)
    fog_burn = sum(seat.commitment.masked_burn for seat in g.seats)
    opens = []
    for s, seat in enumerate(g.seats):
        c = seat.commitment
        opens.append((c.works, c.open_cool, c.open_burn))
        tot = g.open_totals[s]
        tot[0] += c.works
        tot[1] += c.open_cool
        tot[2] += c.open_burn
    g.last_open = opens
    g.last_fog = (fog_cool, fog_burn)
    g.fog_cool_total += fog_cool
    g.fog_burn_total += fog_burn
    g.reveals += 1
    g.log("reveal", "reveal", open=[list(o) for o in opens], fog_cool=fog_cool,
          fog_burn=fog_burn)
    # R-V2: masks never remove a chip from the sum
    all_cool = sum(seat.commitment.cool for seat in g.seats)
    all_burn = sum(seat.commitment.burn for seat in g.seats)
    move_dial(g, int(all_burn * R[L.R_BURN_PPM]), f"{all_burn} BURN", "reveal")
    move_dial(g, -int(all_cool * R[L.R_COOL_PPM]), f"{all_cool} COOL", "reveal")
    apply_floor(g, "reveal")
    flip_tokens(g, "reveal")
    if g.dial >= R[L.R_COLLAPSE]:
        end_in_collapse(g, L.END_COLLAPSE_REVEAL, "reveal")


def pay_burns(g: Game) -> None:
    """R-V3: open BURN pays its owner from the bank; masked BURN pays into the Fog pot."""
    for s in g.order():
        seat = g.seats[s]
        c = seat.commitment
        transfer(g, BANK, s, c.open_burn * burn_pay(g, s), f"{c.open_burn} open BURN",
                 "reveal")
        to_pot = c.masked_burn * int(g.R[L.R_FOG_PER_MASKED_BURN])
        seat.fog_in += to_pot
        seat.fog_in_round = to_pot
        transfer(g, BANK, POT, to_pot,
                 f"{c.masked_burn} masked BURN (seat {s}'s, hidden from the table)", "reveal")


def pay_cools(g: Game) -> None:
    """R-V4: every COOL, open or masked, costs its owner (affordable by R-C3)."""
    for s in g.order():
        c = g.seats[s].commitment
        transfer(g, s, BANK, c.cool * int(g.R[L.R_COOL_COST]), f"{c.cool} COOL", "reveal")


def fog_claims(g: Game, policies: list) -> None:
    """R-V5 + D5 + D6: secret requests, paid in order from the first player."""
    views = [player_view(g, s, L.DP_FOG) for s in range(g.n)]  # secret: nobody sees a claim
    requests = {}
    for s in g.order():
        req = int(policies[s].fog_request(g.R, views[s], g.seed, g.game_index))
        if req < 0:
            raise policies[s].illegal(f"requests {req} from the pot", g.round, s, "R-V5")
        requests[s] = req
    for s in g.order():
        req = requests[s]
        got = min(req, g.pot)
        if got < req and not g.R[L.R_FOG_PARTIAL_FILL]:
            got = 0  # D5 off: a claim the pot cannot fill in full gets nothing
        seat = g.seats[s]
        seat.fog_requested += req
        seat.fog_received += got
        g.log("fog", "claim", seat=s, requested=req, received=got, pot_before=g.pot)
        transfer(g, POT, s, got, "Fog claim", "fog")
    if not g.R[L.R_FOG_CARRY_OVER]:
        transfer(g, POT, BANK, g.pot, "Fog pot emptied (D6 off)", "fog")


def market_turns(g: Game, policies: list) -> None:
    """R-V6: in order from the first player, buy one card at a time, then take wages."""
    R = g.R
    labour = int(R[L.R_PURCHASE_LABOUR])
    for s in g.order():
        seat = g.seats[s]
        while True:
            V = player_view(g, s, L.DP_MARKET)
            slot = int(policies[s].market(R, V, g.seed, g.game_index))
            if slot == -1:
                break
            buy(g, s, slot, labour, policies[s])
        # wages: every WORKS Agent not used for a purchase (cannot fund a purchase)
        transfer(g, BANK, s, seat.free_works * int(R[L.R_WAGE]),
                 f"wages of {seat.free_works} WORKS", "market")
        seat.free_works = 0


def buy(g: Game, s: int, slot: int, labour: int, policy) -> None:
    """R-V6: one purchase: labour WORKS + the printed price; then the market refills."""
    seat = g.seats[s]
    if not 0 <= slot < len(g.market) or g.market[slot] < 0:
        raise policy.illegal(f"buys from market slot {slot}, which holds no card", g.round, s,
                             "R-V6")
    kind = g.market[slot]
    name = g.rules.asset_names[kind]
    price = int(g.R[L.asset_at(kind, L.A_PRICE)])
    if seat.free_works < labour:
        raise policy.illegal(f"buys a {name} with {seat.free_works} free WORKS; a purchase "
                             f"needs {labour}", g.round, s, "R-V6")
    if seat.capital < price:
        raise policy.illegal(f"buys a {name} for {price} with {seat.capital} Capital (wages "
                             "cannot fund a purchase)", g.round, s, "R-V6")
    seat.free_works -= labour
    seat.bought += 1
    seat.owned[kind] += 1
    new = g.deck.pop(0) if g.deck else -1
    g.market[slot] = new
    g.log("market", "buy", seat=s, asset=name, slot=slot, price=price, labour=labour,
          refill=g.rules.asset_names[new] if new >= 0 else None, deck_left=len(g.deck))
    transfer(g, s, BANK, price, f"buys a {name}", "market")


def point_weight(g: Game, s: int) -> int:
    """R-A2 + D7: 1, or the Media House's 2 (several still weigh 2 unless they stack)."""
    R = g.R
    best = int(R[L.R_POINT_WEIGHT])
    stacked = 0
    for k, count in enumerate(g.seats[s].owned):
        w = int(R[L.asset_at(k, L.A_ACCUSATION_WEIGHT)])
        if count > 0 and w > 0:
            best = max(best, w)
            stacked += count * w
    if R[L.R_MEDIA_STACKS] and stacked > 0:
        return stacked
    return best


def accusation(g: Game, policies: list) -> None:
    """R-A1..R-A5: everyone points at once; a strict top weight corners; reveal or pay."""
    R = g.R
    views = [player_view(g, s, L.DP_ACCUSE) for s in range(g.n)]
    points = {}
    for s in g.order():
        t = int(policies[s].accuse(R, views[s], g.seed, g.game_index))
        if t != -1 and (not 0 <= t < g.n or t == s
                        or not accusable(R, g.seats[t].public_agenda())):
            raise policies[s].illegal(f"points at seat {t}, who is not an eligible rival",
                                      g.round, s, "R-A1")
        points[s] = t
    weight = [0] * g.n
    accusers: list[list[int]] = [[] for _ in range(g.n)]
    for s in g.order():
        t = points[s]
        w = point_weight(g, s) if t >= 0 else 0
        g.log("accusation", "point", seat=s, target=t, weight=w)
        if t >= 0:
            weight[t] += w
            accusers[t].append(s)
            g.points[s][t] += 1
            g.seats[t].pointed_at += 1
    top = max(weight)
    leaders = [s for s in range(g.n) if weight[s] == top]
    if top <= 0 or len(leaders) != 1:  # R-A3: a tie corners nobody
        g.log("accusation", "cornered", seat=-1, weight=top)
        return
    c = leaders[0]
    seat = g.seats[c]
    seat.cornered += 1
    cost = len(accusers[c]) * int(R[L.R_PAY_PER_ACCUSER])  # per accuser, never doubled
    g.log("accusation", "cornered", seat=c, weight=top, accusers=accusers[c], cost=cost)
    if seat.capital < cost:
        choice = 1  # R-A4: who cannot pay in full must reveal
        forced = True
    else:
        V = player_view(g, c, L.DP_CORNERED, accusers=len(accusers[c]), corner_cost=cost)
        choice = int(policies[c].cornered(R, V, g.seed, g.game_index))
        forced = False
        if choice not in (0, 1):
            raise policies[c].illegal(f"answers {choice} when cornered (1 reveal, 0 pay)",
                                      g.round, c, "R-A4")
    if choice == 1:
        seat.revealed = True  # R-A4/R-A5: face up for the rest of the game
        g.log("accusation", "reveal", seat=c, agenda=L.AGENDA_NAMES[seat.agenda],
              forced=forced)
    else:
        seat.paid += 1
        g.log("accusation", "pay", seat=c, cost=cost)
        for a in accusers[c]:
            transfer(g, c, a, int(R[L.R_PAY_PER_ACCUSER]), "silence", "accusation")


def end_round(g: Game) -> None:
    """The first-player marker moves one seat clockwise."""
    for seat in g.seats:
        seat.commitment = None
        seat.fog_in_round = 0
        seat.bought = 0
    g.first_player = (g.first_player + 1) % g.n


# ------------------------------------------------------------------------------ scoring


def agenda_bonus(R: np.ndarray, agenda: int, band: int, dial: int, owned: list[int],
                 table_owned: list[int] | None = None) -> int:
    """R-X1: the final band's bonus (survival only). `owned`: the seat's assets per kind;
    `table_owned`: everyone's (needed when `agendas.accelerationist_heat_own_only` is
    false: then every heat asset at the table counts)."""
    if agenda == L.STEWARD:
        if band != L.WARMING:
            return 0
        steps = (int(R[L.R_SEVERE]) - dial) // int(R[L.R_STEWARD_STEP])
        return int(R[L.R_STEWARD_BASE] + R[L.R_STEWARD_PER_STEP] * steps)
    if agenda == L.OPPORTUNIST:
        return int(R[L.R_OPPORTUNIST_SEVERE]) if band == L.SEVERE else 0
    if band == L.EXTREME:
        counts = owned if R[L.R_ACCEL_HEAT_OWN_ONLY] else table_owned
        heat = sum(c for k, c in enumerate(counts)
                   if R[L.asset_at(k, L.A_PPM)] > 0)
        return int(R[L.R_ACCEL_EXTREME] + R[L.R_ACCEL_PER_HEAT_ASSET] * heat)
    return int(R[L.R_ACCEL_OTHER])


def legacy_of(g: Game, s: int, band: int) -> dict[str, int]:
    """R-E4: floor(Capital / 2) + assets' Legacy for the band + COOL - BURN + bonus."""
    R = g.R
    seat = g.seats[s]
    field = {L.WARMING: L.A_LEGACY_WARMING, L.SEVERE: L.A_LEGACY_SEVERE,
             L.EXTREME: L.A_LEGACY_EXTREME}[band]
    parts = {
        "capital": seat.capital // int(R[L.R_CAPITAL_PER_LEGACY]),
        "assets": sum(c * int(R[L.asset_at(k, field)])
                      for k, c in enumerate(seat.owned)),
        "chips": seat.cool_total - seat.burn_total,
        "agenda": agenda_bonus(R, seat.agenda, band, g.dial, seat.owned,
                               [sum(o.owned[k] for o in g.seats)
                                for k in range(len(seat.owned))]),
    }
    parts["total"] = sum(parts.values())
    return parts


def tiebreak_order(g: Game) -> list[int]:
    """D8: order from the first player of the last round played, of round 1, or from the
    seat after the last round's first player (the marker passed on once more at the end),
    by `scoring.tiebreak_first_player`."""
    mode = g.R[L.R_TIEBREAK_FIRST_PLAYER]
    if mode == L.TIEBREAK_ROUND_1:
        return g.order(int(g.R[L.R_FIRST_PLAYER]))
    if mode == L.TIEBREAK_AFTER_ROTATION:
        return g.order((g.first_player + 1) % g.n)
    return g.order()  # TIEBREAK_LAST_ROUND


def score(g: Game) -> None:
    """R-E3 (Collapse) or R-E4 (survival): the winner, or nobody."""
    R = g.R
    band = band_of(R, g.dial)
    order = tiebreak_order(g)
    if band == L.COLLAPSE:
        g.legacy = [0] * g.n
        qualified = [s for s in order if g.seats[s].agenda == L.ACCELERATIONIST
                     and g.seats[s].capital >= R[L.R_COLLAPSE_MIN_CAPITAL]]

        def bunkers(s):
            return sum(c for k, c in enumerate(g.seats[s].owned)
                       if R[L.asset_at(k, L.A_COLLAPSE_TIEBREAK)])

        # most Capital, then most Bunkers, then earliest in order (max keeps the first)
        g.winner = max(qualified, key=lambda s: (g.seats[s].capital, bunkers(s)),
                       default=-1)
        g.log("end", "collapse-result", winner=g.winner, qualified=qualified)
    else:
        parts = [legacy_of(g, s, band) for s in range(g.n)]
        g.legacy = [p["total"] for p in parts]
        for s in range(g.n):
            g.log("end", "legacy", seat=s, **parts[s])
        g.winner = max(order, key=lambda s: (g.legacy[s], g.seats[s].cool_total))
        g.log("end", "survival-result", winner=g.winner)
    g.pot_lost = g.pot
    transfer(g, POT, BANK, g.pot, "Fog pot lost at the end (D6)", "end")


# ------------------------------------------------------------------------------ the game


def payments(g: Game, policies: list) -> None:
    """R-V3 then R-V4."""
    pay_burns(g)
    pay_cools(g)


def accusation_if_due(g: Game, policies: list) -> None:
    """R-A1: an Accusation follows the rounds the rules name."""
    if g.R[L.R_ACCUSE_AFTER + g.round - 1]:
        accusation(g, policies)


# The play of one round, in order: (name, step(g, policies)). The game ends as soon as a
# step ends it (R-W4; R-V2: Collapse at the reveal stops every payment). The kernel plays the
# same steps under the same names (fbsim.kernel.engine.ROUND_STEPS).
ROUND_STEPS = (
    ("world", lambda g, policies: world_turn(g)),  # R-W1..R-W4
    ("commit", lambda g, policies: commit(g, policies)),  # R-C1..R-C4
    ("reveal", lambda g, policies: reveal(g)),  # R-V1, R-V2
    ("payments", lambda g, policies: payments(g, policies)),  # R-V3, R-V4
    ("fog", lambda g, policies: fog_claims(g, policies)),  # R-V5, D5, D6
    ("market", lambda g, policies: market_turns(g, policies)),  # R-V6
    ("accusation", lambda g, policies: accusation_if_due(g, policies)),  # R-A1..R-A5
)


def play_round(g: Game, policies: list, after=None) -> None:
    """One round's play: the steps of ROUND_STEPS in order, until one ends the game;
    `after(name)`, when given, follows each step."""
    g.log("world", "round", first_player=g.first_player)
    for name, step in ROUND_STEPS:
        step(g, policies)
        if after is not None:
            after(name)
        if g.over:
            return


def close_round(g: Game) -> None:
    """The Dial as the round ended; the first player of the next round, if any (R-S6)."""
    g.dial_by_round.append(g.dial)
    if g.round < shape.rounds(g.R):
        end_round(g)


def run(g: Game, policies: list, after=None) -> Game:
    """Every round (R-S6, R-E1) until the game ends, then the score (R-E3, R-E4);
    `after(name)`, when given, follows each step of a round and its close ("end")."""
    rounds = int(shape.rounds(g.R))
    for r in range(1, rounds + 1):
        g.round = r
        play_round(g, policies, after)
        if g.over:
            break
        close_round(g)
        if after is not None:
            after("end")
    # a game that ended early stays at its final Dial for the rounds it did not play
    g.dial_by_round += [g.dial] * (rounds - len(g.dial_by_round))
    g.over = True
    score(g)
    return g


def play_game(rules: Rules, lineup: Lineup | None = None, seed: int = 0, game_index: int = 0,
              events: bool = False, wrap=None) -> GameRecord:
    """Play one game with bots; `events=True` keeps the full event log on the record.
    `wrap(seat, policy)`: the policy seat plays instead of its bot's (e.g. the searcher's
    logged commitments, `fbsim.experiments.search.searcher.replay_searched`)."""
    lineup = lineup or Lineup()
    n = rules.players
    R = rules_vector(rules, n)
    agendas = deal_agendas(R, seed, game_index)
    policies = [bind_policy(lineup.entry_for(s, agendas[s])) for s in range(n)]
    if wrap is not None:
        policies = [wrap(s, p) for s, p in enumerate(policies)]
    bots = [lineup.label_for(s, agendas[s]) for s in range(n)]  # the records' names
    g = setup(rules, agendas, shuffle_assets(R, seed, game_index), bots, seed, game_index,
              events)
    return make_record(run(g, policies))
