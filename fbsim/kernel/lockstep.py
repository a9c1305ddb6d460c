"""Lockstep comparison of the kernel with the reference engine, for debugging mismatches.

Both engines play the same game one step at a time (the reference engine's round, each of its
steps followed by the kernel's step of the same name); after every step each seat's view (the
vector a bot would see) and hidden state are compared, and the first difference is reported
by field name, round and step, e.g. "round 3, after market: my_capital[2] (view of seat 2):
reference 11 != kernel 9".
"""

from __future__ import annotations

import numpy as np

from fbsim.game import layout as L
from fbsim.game import record as GR
from fbsim.game.public import world_projection
from fbsim.kernel.layout import STATE
from fbsim.lineup import Lineup
from fbsim.reference import engine as E
from fbsim.reference.view import player_view
from fbsim.rules import Rules, rules_vector


def field_name(i: int) -> str:
    """The name of index i of a state row W (`fbsim.game.layout.VIEW`, then the kernel's
    `STATE`), e.g. `owned[9]` or `my_capital[2]` (seat 2's)."""
    return (L.VIEW if i < L.V_SIZE else STATE).name_of(i)


def visible(V, s):
    """What seat s may know of a view section that holds every seat's private fields: the
    other seats' slots zeroed, as the reference engine builds a view (a copy)."""
    out = V.copy()
    for f in L.PRIVATE:
        for t in range(L.MAX_PLAYERS):
            if t != s:
                out[f + t] = 0
    return out


def settled(R, V):
    """A view as its bot would read it: the world projection computed where it is STALE
    (`fbsim.game.public.world_projection`; a kernel view whose projection the engine failed
    to mark stale keeps an old value and so differs from the reference's, computed afresh),
    and every seat's bot memo blanked (`fbsim.game.public.memo`: what a bot keeps of its own
    view and parameters, which the reference engine never keeps, building a fresh view for
    every decision)."""
    out = V.copy()
    world_projection(R, out)
    out[L.V_MY_MEMO:L.V_MY_MEMO + L.MAX_PLAYERS] = L.NO_MEMO
    return out


def kernel_view(K, W, s, decision):
    """What build K hands seat s's bot for a decision (a copy of W's view section)."""
    X = W.copy()
    K.ask(X, np.int64(s), np.int64(decision))
    return X[:L.V_SIZE]


class _Differs(Exception):
    pass


def first_difference(rules: Rules, lineup: Lineup | None, seed: int, game: int,
                     build=None) -> str | None:
    """Play game `game` in both engines step by step; describe the first difference. The
    kernel is `build` (`fbsim.kernel.build.Build`; default: the generic checked build).

    The reference engine plays its own round (`run`); after each of its steps the kernel
    plays its step of the same name and the two are compared."""
    from fbsim.kernel import bot_arrays
    from fbsim.kernel.build import kernel_build

    lineup = lineup or Lineup()
    build = build or kernel_build(checked=True)
    K = build.module
    n = rules.players
    R = rules_vector(rules)
    P, by_agenda, seat_bot = bot_arrays(rules, lineup, build)
    W, deck, agenda_deck = K.scratch(R)
    tape = np.zeros(1, dtype=np.int64)
    ks, kg = np.int64(seed), np.int64(game)

    agendas = E.deal_agendas(R, seed, game)
    bots = [lineup.label_for(s, agendas[s]) for s in range(n)]
    policies = [E.bind_policy(lineup.entry_for(s, agendas[s])) for s in range(n)]
    g = E.setup(rules, agendas, E.shuffle_assets(R, seed, game), bots, seed, game, False)
    K.setup_game(R, by_agenda, seat_bot, ks, kg, W, deck, agenda_deck, build.token)

    def compare(r: int, step: str) -> str | None:
        for s in range(n):
            for decision in (L.DP_COMMIT, L.DP_MARKET):
                a = settled(R, player_view(g, s, decision))
                b = settled(R, visible(kernel_view(K, W, s, decision), s))
                diff = np.flatnonzero(a != b)
                if diff.size:
                    i = int(diff[0])
                    return (f"round {r}, after {step}: {field_name(i)} (view of seat {s}): "
                            f"reference {a[i]} != kernel {b[i]}")
        if g.over != bool(W[K.S_OVER]):
            return f"round {r}, after {step}: the game is over in only one engine"
        return None

    def after(name: str) -> None:
        # the kernel's step of the same name, or the round's close, as its games play it
        k = K.N_ROUND_STEPS if name == "end" else K.ROUND_STEPS.index(name)
        K.play_step(np.int64(k), R, P, W, np.int64(g.round), ks, kg, deck, tape, build.token)
        diff = compare(g.round, "end of round" if name == "end" else name)
        if diff:
            raise _Differs(diff)

    diff = compare(0, "setup")
    if diff:
        return diff
    try:
        E.run(g, policies, after)
    except _Differs as e:
        return str(e)
    return None


def record_difference(rec, cols: dict, i: int, lineup: Lineup | None = None) -> str | None:
    """The first field (in the order of `fbsim.game.record.FIELDS`) where the reference
    record `rec` differs from row i of the kernel's columns, or None. The kernel's `bot` is
    the seat's entry of `lineup` (default: the default lineup); the reference names it
    (`Lineup.labels()`)."""
    lineup = lineup or Lineup()
    labels = lineup.labels()
    entries: dict[int, int] = {}  # seat -> its lineup entry

    def code(f: GR.Field, value, seat: int = -1):
        return entries[seat] if f.name == "bot" else GR.encode(f, value)

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
        agenda = L.AGENDA_NAMES.index(seat["agenda"])
        entries[s] = entry = lineup.entry_index(s, agenda)
        if labels[entry] != seat["bot"]:
            return (f"bot of seat {s}: reference {seat['bot']} != lineup entry {entry} "
                    f"({labels[entry]})")
        for f in GR.of_shape(GR.SEAT):
            want, got = code(f, seat[f.name], s), int(cols[f.name][i, s])
            if got != want:
                return f"{f.name} of seat {s}: reference {want} != kernel {got}"
        for f in GR.of_shape(GR.SEAT_KIND):
            for k, (kind, want) in enumerate(seat[f.name].items()):
                got = int(cols[f.name][i, s, k])
                if got != want:
                    return f"{f.name}[{kind}] of seat {s}: reference {want} != kernel {got}"
    return None
