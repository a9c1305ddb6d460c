"""Lockstep comparison of the kernel with the reference engine, for debugging mismatches.

Both engines play the same game one step at a time; after every step each seat's view (the
vector a bot would see) and hidden state are compared, and the first difference is reported
by field name, round and step, e.g. "round 3, market: V_MY_CAPITAL (seat 2): 11 != 9".
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fbsim.game import layout as L
from fbsim.game import record as GR
from fbsim.game.lineup import Lineup
from fbsim.kernel import engine as K
from fbsim.kernel.layout import S_SIZE
from fbsim.reference import engine as E
from fbsim.reference.view import player_view
from fbsim.rules import Rules, rules_vector

STEPS = ("world", "commit", "reveal", "payments", "fog", "market", "accusation", "end")

_V_NAMES = sorted(((v, k) for k, v in vars(L).items() if k.startswith("V_")
                   and isinstance(v, int) and k not in ("V_SIZE", "V_PRIVATE_START")))


def field_name(i: int) -> str:
    """`V_OWNED[7]`-style name of index i of the view vector."""
    name, start = "?", 0
    for v, k in _V_NAMES:
        if v <= i:
            name, start = k, v
    return name if i == start else f"{name}[{i - start}]"


@njit(cache=True)
def kernel_step(step, R, P, bot_of_agenda, seat_bot, seed, game, V, S, deck, agenda_deck, r):
    n = R[L.R_PLAYERS]
    V[L.V_ROUND] = r
    if step == -1:
        K.setup(R, bot_of_agenda, seat_bot, seed, game, V, S, deck, agenda_deck)
    elif step == 0:
        K.world_turn(R, V, S, n, r)
    elif step == 1:
        K.commit(R, P, V, S, n, r, seed, game)
    elif step == 2:
        K.reveal(R, V, S, n)
    elif step == 3:
        K.pay_burns_and_cools(R, V, S, n)
    elif step == 4:
        K.fog_claims(R, P, V, S, n, r, seed, game)
    elif step == 5:
        K.market_turns(R, P, V, S, n, r, seed, game, deck)
    elif step == 6:
        K.accusation(R, P, V, S, n, r, seed, game)
    elif step == 7:
        K.end_round(V, S, n)
    elif step == 8:
        K.score(R, V, S, n)


@njit(cache=True)
def kernel_view(V, S, s, decision):
    W = V.copy()
    K.write_private(W, S, s, decision)
    return W


def first_difference(rules: Rules, lineup: Lineup | None, seed: int, game: int) -> str | None:
    """Play game `game` in both engines step by step; describe the first difference."""
    from fbsim.kernel import bot_arrays

    lineup = lineup or Lineup()
    n = rules.players
    R = rules_vector(rules)
    P, by_agenda, seat_bot = bot_arrays(rules, lineup)
    deck_total = sum(a.count for a in rules.assets.values())
    V = np.zeros(L.V_SIZE, dtype=np.int64)
    S = np.zeros(S_SIZE, dtype=np.int64)
    deck = np.zeros(max(deck_total, L.MAX_MARKET), dtype=np.int64)
    agenda_deck = np.zeros(int(R[L.R_DECK:L.R_DECK + L.N_AGENDAS].sum()), dtype=np.int64)
    args = (R, P, by_agenda, seat_bot, np.int64(seed), np.int64(game), V, S, deck, agenda_deck)

    agendas = E.deal_agendas(R, seed, game)
    bots = [lineup.bot_for(s, agendas[s]) for s in range(n)]
    policies = [E.bind_policy(rules, b) for b in bots]
    g = E.setup(rules, agendas, E.shuffle_assets(R, seed, game), bots, seed, game, False)
    kernel_step(-1, *args, 0)

    def compare(r: int, step: str) -> str | None:
        for s in range(n):
            for decision in (L.DP_COMMIT, L.DP_MARKET):
                a = player_view(g, s, decision)
                b = kernel_view(V, S, s, decision)
                diff = np.flatnonzero(a != b)
                if diff.size:
                    i = int(diff[0])
                    return (f"round {r}, after {step}: {field_name(i)} (view of seat {s}): "
                            f"reference {a[i]} != kernel {b[i]}")
        if g.over != bool(S[K.S_OVER]):
            return f"round {r}, after {step}: the game is over in only one engine"
        return None

    steps = [
        ("world", 0, lambda: E.world_turn(g)),
        ("commit", 1, lambda: E.commit(g, policies)),
        ("reveal", 2, lambda: E.reveal(g)),
        ("payments", 3, lambda: (E.pay_burns(g), E.pay_cools(g))),
        ("fog", 4, lambda: E.fog_claims(g, policies)),
        ("market", 5, lambda: E.market_turns(g, policies)),
    ]
    diff = compare(0, "setup")
    if diff:
        return diff
    for r in range(1, rules.rounds + 1):
        g.round = r
        for name, k, ref_step in steps:
            ref_step()
            kernel_step(k, *args, r)
            diff = compare(r, name)
            if diff or g.over:
                return diff
        if R[L.R_ACCUSE_AFTER + r - 1]:
            E.accusation(g, policies)
            kernel_step(6, *args, r)
            diff = compare(r, "accusation")
            if diff:
                return diff
        if r < rules.rounds:
            E.end_round(g)
            kernel_step(7, *args, r)
            diff = compare(r, "end of round")
            if diff:
                return diff
    return None


def record_difference(rec, cols: dict, i: int) -> str | None:
    """The first field (in the order of `fbsim.game.record.FIELDS`) where the reference
    record `rec` differs from row i of the kernel's columns, or None."""
    from fbsim.kernel.dispatch import bot_id

    def code(f: GR.Field, value):
        return bot_id(value) if f.name == "bot" else GR.encode(f, value)

    d = rec.as_dict()
    for f in GR.of_shape(GR.GAME):
        want, got = code(f, d[f.name]), int(cols[f.name][i])
        if got != want:
            return f"{f.name}: reference {want} != kernel {got}"
    for f in GR.of_shape(GR.ROUND):
        want_all, got_all = d[f.name], cols[f.name][i]
        for r, want in enumerate(want_all):
            if r < len(got_all) and int(got_all[r]) != want:
                return f"{f.name}[round {r + 1}]: reference {want} != kernel {int(got_all[r])}"
        if len(got_all) != len(want_all):
            return f"{f.name}: reference has {len(want_all)} rounds, kernel {len(got_all)}"
    for s, seat in enumerate(d["seats"]):
        for f in GR.of_shape(GR.SEAT):
            want, got = code(f, seat[f.name]), int(cols[f.name][i, s])
            if got != want:
                return f"{f.name} of seat {s}: reference {want} != kernel {got}"
        for f in GR.of_shape(GR.SEAT_KIND):
            for k, (kind, want) in enumerate(seat[f.name].items()):
                got = int(cols[f.name][i, s, k])
                if got != want:
                    return f"{f.name}[{kind}] of seat {s}: reference {want} != kernel {got}"
    return None
