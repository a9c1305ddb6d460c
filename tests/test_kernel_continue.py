"""A game continued from any mid-game state is the game played straight through.

The searcher (`fbsim.kernel.search`) plays its rollouts on from a copy of a game's state row
(`fbsim.kernel.engine.play_from`); these tests step a game through the kernel's steps
(`play_step`, as the lockstep comparison does), copy its state row and asset deck before every
step of every round, continue the copy to the end, and compare its record field by field with
the same game played straight through by `run_chunk`, in the fast build of the lineup and in
the checked build.
"""

from __future__ import annotations

import numpy as np
import pytest

from fbsim.game.shape import shape_of
from fbsim.kernel import Records, bot_arrays
from fbsim.kernel import engine as K
from fbsim.kernel.build import build_for, kernel_build
from fbsim.lineup import parse_lineup
from fbsim.rules import load_rules, rules_vector


def _records(build, R, P, by_agenda, seat_bot, seed, game, continue_at=None):
    """Game `game`'s record arrays: straight through (`run_chunk`), or stepped to
    (round, step) = `continue_at`, copied there, and the copy continued (`continue_entry`)."""
    out = Records(1).arrays(1)
    for a in out:
        a[...] = 0  # (seats past the table's are not written)
    tape = np.zeros((1, 1), dtype=np.int64)
    W, deck, agenda_deck = K.scratch(R)
    ks, kg = np.int64(seed), np.int64(game)
    if continue_at is None:
        K.run_chunk(R, P, by_agenda, seat_bot, ks, kg, 0, 1, *out, tape, W, deck, agenda_deck,
                    build.token)
        return out
    r_stop, k_stop = continue_at
    K.setup_game(R, by_agenda, seat_bot, ks, kg, W, deck, agenda_deck, build.token)
    for r in range(1, r_stop + 1):
        for k in range(K.N_ROUND_STEPS + 1):
            if (r, k) == (r_stop, k_stop):
                W2, deck2 = W.copy(), deck.copy()
                last = K.continue_entry(np.int64(k), R, P, W2, np.int64(r), ks, kg, deck2,
                                        tape[0], build.token)
                K.write_record(0, last, R, W2, *out)
                return out
            K.play_step(np.int64(k), R, P, W, np.int64(r), ks, kg, deck, tape[0], build.token)
            if W[K.S_OVER] == 1:
                return None  # the game ended before the point asked for
    return None


def _every_point(rules, lineup, seed, games, checked):
    R = rules_vector(rules)
    build = (kernel_build(checked=True) if checked
             else build_for(lineup, checked=False, shape=shape_of(R)))
    P, by_agenda, seat_bot = bot_arrays(rules, lineup, build)
    compared = 0
    for game in range(games):
        whole = _records(build, R, P, by_agenda, seat_bot, seed, game)
        for r in range(1, rules.rounds + 1):
            for k in range(K.N_ROUND_STEPS + 1):
                part = _records(build, R, P, by_agenda, seat_bot, seed, game, (r, k))
                if part is None:
                    break
                for name, a, b in zip("G SE AS DR".split(), whole, part, strict=True):
                    assert np.array_equal(a, b), (
                        f"game {game} continued before step {k} of round {r}: {name} differs")
                compared += 1
    return compared


@pytest.mark.parametrize("checked", [False, True], ids=["fast", "checked"])
@pytest.mark.parametrize("players,lineup", [(3, None), (4, "results/equilibrium/p4.toml"),
                                            (6, "random")])
def test_a_game_continued_from_every_step_is_the_game_played_through(players, lineup,
                                                                     checked):
    rules = load_rules(players=players)
    lu = parse_lineup(lineup)  # (a lineup file by its path)
    # every point of every round of each game, Collapse at the world turn or the reveal
    # included (the committed 4-player field collapses early: three games give as many points)
    assert _every_point(rules, lu, 17, 3, checked) >= 2 * 20
