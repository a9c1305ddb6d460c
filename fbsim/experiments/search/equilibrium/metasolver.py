"""The meta-solver of the single-seat game: smooth fictitious play on simulated payoffs.

In the game as played every seat draws its own strategy from its Agenda's mixture, so a
strategy's payoff (the win rate of one seat playing it, over the games it holds the Agenda,
every other seat drawing from the field) is not linear in the mixture once several seats of
one Agenda sit at a table: no fixed table of Agenda-against-Agenda cells describes it. So the
payoffs are not tabulated: each step simulates every strategy of the populations against the
current mixture (`fbsim.experiments.search.deviation`: one seat deviating, rotated over the
seats, on common random numbers), and the mixture moves by smooth fictitious play:

    x_{k+1} = (1 - a_k) x_k + a_k softmax(beta * u_k),    a_k = 1 / (k + 2 + memory)

so after an iteration's steps the mixture is the average of the previous field (counted as
`memory + 1` steps) and each step's smoothed best response to the mixture of its time
(Brown 1951; Fudenberg and Kreps 1993; Fudenberg and Levine 1998, *The Theory of Learning in
Games*, ch. 4). Why it fits:

- it reads only simulated payoffs against the current mixture, which is all a symmetric game
  with private Agendas and non-linear payoffs offers;
- averaging damps the cycles that the best responses of a game like this one go round (an
  Accelerationist strategy beats one Steward's play, which another beats, ...), where the
  last iterate of the replicator dynamics keeps cycling (as in matching pennies);
- the softmax gives every strategy of the population a share by its payoff, so a strategy
  dropped earlier comes back when it becomes good again, and noise between strategies that
  play alike is spread instead of followed (smooth fictitious play converges to an
  approximate equilibrium where fictitious play may not: Hofbauer and Sandholm 2002);
- `beta` sets how close to a best response: 100 per unit of win rate weights a strategy
  5 points better e^5 (about 150) times more, well above the noise of a step's payoffs.

Weights below `FLOOR` are dropped from the field played, and at most `COMPONENTS` strategies
(the field bot's) are kept, the heaviest (`prune`).
"""

from __future__ import annotations

import numpy as np

from fbsim.policies.field import COMPONENTS

FLOOR = 0.01  # a weight below this is left out of the field played


def softmax(u: np.ndarray, beta: float) -> np.ndarray:
    z = beta * (np.asarray(u, dtype=float) - np.max(u))
    e = np.exp(z)
    return e / e.sum()


def step(x: np.ndarray, u: np.ndarray, beta: float, k: int, memory: int = 0) -> np.ndarray:
    """Step k (0, 1, ... within an iteration) of smooth fictitious play: mixture x given
    every strategy's payoff u against it."""
    x = np.asarray(x, dtype=float)
    a = 1.0 / (k + 2 + memory)
    return (1 - a) * x / x.sum() + a * softmax(u, beta)


def prune(x: np.ndarray) -> np.ndarray:
    """The mixture as a field plays it: weights below FLOOR dropped, at most COMPONENTS kept
    (the heaviest), normalised."""
    x = np.asarray(x, dtype=float).copy()
    x /= x.sum()
    order = np.argsort(-x, kind="stable")
    x[order[COMPONENTS:]] = 0.0
    x[x < FLOOR] = 0.0
    if not x.any():
        x[order[0]] = 1.0
    return x / x.sum()


def grow(x: np.ndarray, size: int) -> np.ndarray:
    """Mixture x over a population grown to `size` (the new strategies at weight 0: the next
    step's response gives them their share)."""
    x = np.asarray(x, dtype=float)
    return np.concatenate([x, np.zeros(max(0, size - len(x)))])


def regret(x: np.ndarray, u: np.ndarray) -> float:
    """How much the population's best strategy beats the mixture, by the step's payoffs (the
    noise of the payoffs biases it up)."""
    x = np.asarray(x, dtype=float)
    return float(np.max(u) - u @ (x / x.sum()))
