"""The meta-solver of the single-seat game: replicator dynamics on simulated payoffs.

In the game as played every seat draws its own strategy from its Agenda's mixture, so a
strategy's payoff (the win rate of one seat playing it, over the games it holds the Agenda,
every other seat drawing from the field) is not linear in the mixture once several seats of
one Agenda sit at a table: no fixed table of Agenda-against-Agenda cells describes it. So the
payoffs are not tabulated: each step simulates every strategy of the mixture's support, and of
any strategy just added, against the current mixture (`fbsim.experiments.search.deviation`,
one seat deviating, rotated over the seats, on common random numbers), and moves the mixture
by the discrete-time replicator dynamics in its exponential form (Hedge):

    x_i <- x_i * exp(eta * (u_i - u.x)) / Z

which raises the weight of every strategy that beats the mixture's own average and lowers
the others'. Its rest points with every unused strategy doing no better are the symmetric
Nash equilibria of the population game (Weibull 1995, *Evolutionary Game Theory*, ch. 3 and 5;
Hofbauer and Sigmund 1998, *Evolutionary Games and Population Dynamics*); the exponential
form is the multiplicative-weights update (Freund and Schapire 1999). The step is where the
simulation's noise matters: `eta` times a payoff difference of one interval's width stays
well below one, so noise moves the mixture little. Weights below `FLOOR` are dropped and at
most `COMPONENTS` strategies (the field bot's) are kept, the heaviest.
"""

from __future__ import annotations

import numpy as np

from fbsim.policies.field import COMPONENTS

FLOOR = 0.01  # a weight below this is dropped (then the mixture is normalised again)
ENTRY = 0.15  # the weight a strategy just added to the population enters the mixture with


def step(x: np.ndarray, u: np.ndarray, eta: float) -> np.ndarray:
    """One replicator step of mixture x (over a population) given each strategy's payoff u
    (only those of positive weight are read)."""
    x = np.asarray(x, dtype=float)
    on = x > 0
    avg = float(u[on] @ x[on]) / float(x[on].sum())
    y = np.where(on, x * np.exp(eta * (np.where(on, u, 0.0) - avg)), 0.0)
    return prune(y)


def prune(x: np.ndarray) -> np.ndarray:
    """The mixture normalised, weights below FLOOR dropped, at most COMPONENTS kept."""
    x = np.asarray(x, dtype=float).copy()
    x /= x.sum()
    order = np.argsort(-x, kind="stable")
    x[order[COMPONENTS:]] = 0.0
    x[x < FLOOR] = 0.0
    if not x.any():  # (every weight below the floor: keep the heaviest)
        x[order[0]] = 1.0
    return x / x.sum()


def enter(x: np.ndarray, size: int) -> np.ndarray:
    """Mixture x over a population grown to `size`: the strategies added enter with ENTRY of
    the weight between them (the rest scaled down)."""
    x = np.asarray(x, dtype=float)
    new = size - len(x)
    if new <= 0:
        return prune(x)
    y = np.concatenate([x * (1 - ENTRY), np.full(new, ENTRY / new)])
    return prune(y)


def regret(x: np.ndarray, u: np.ndarray) -> float:
    """How much the best strategy evaluated beats the mixture (over the strategies evaluated:
    those of positive weight); the payoffs' noise biases it up."""
    on = np.asarray(x) > 0
    return float(np.max(u[on]) - (u[on] @ x[on]) / x[on].sum())
