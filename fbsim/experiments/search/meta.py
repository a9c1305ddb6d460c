"""The meta-game solver of `fbsim equilibrium`: a mixed equilibrium of a small 3-role game.

The meta-game: each Agenda (role) picks one strategy of its population; `W[r, i, j, k]` is
Agenda r's win rate when the Steward plays strategy i, the Opportunist j and the
Accelerationist k (estimated by simulation on common random numbers). The solver is
projected replicator dynamics (Lanctot et al. 2017, the meta-solver of PSRO): each role's
mixture grows the strategies that do better than its average against the others' mixtures,
kept a little inside the simplex so that no strategy dies out early. The tables are a few
hundred cells of noisy win rates at most, so this is a few lines of numpy; an exact solver
(`pygambit`) would return brittle corner equilibria of the noise, and the dynamics' damped
answer is what PSRO is known to work with. The answer is checked, not trusted: `regrets`
gives each role's gain from its best pure strategy against the mixture.
"""

from __future__ import annotations

import numpy as np

ROLES = 3


def payoffs(W: np.ndarray, mix: list[np.ndarray]) -> list[np.ndarray]:
    """Each role's payoff of each of its pure strategies against the others' mixtures."""
    s, o, a = mix
    return [np.einsum("ijk,j,k->i", W[0], o, a), np.einsum("ijk,i,k->j", W[1], s, a),
            np.einsum("ijk,i,j->k", W[2], s, o)]


def regrets(W: np.ndarray, mix: list[np.ndarray]) -> np.ndarray:
    """Per role: its best pure strategy's payoff minus the mixture's (>= 0; all 0 at an
    exact equilibrium)."""
    return np.array([u.max() - u @ x for u, x in zip(payoffs(W, mix), mix, strict=True)])


def _project(x: np.ndarray, floor: float) -> np.ndarray:
    x = np.maximum(x, floor)
    return x / x.sum()


def solve(W: np.ndarray, steps: int = 20_000, dt: float = 0.05, floor: float = 1e-6,
          prune: float = 1e-3, start: list[np.ndarray] | None = None
          ) -> tuple[list[np.ndarray], np.ndarray]:
    """An approximate equilibrium of the meta-game `W` (shape (3, n0, n1, n2), payoffs in
    [0, 1]): (one mixture per role, their regrets). Deterministic. The dynamics start from
    `start` (each role's mixture; default uniform; a shorter one, of a smaller population,
    gives each new strategy a tenth of the weight), so that a search tracks the equilibrium
    it was near rather than jump to another. Of the last iterate and the average of the
    second half of the run, the one of lower largest regret is kept; weights below `prune`
    are then dropped (and the regrets are those of what is returned)."""
    W = np.asarray(W, dtype=float)
    if W.ndim != 4 or W.shape[0] != ROLES:
        raise ValueError(f"W: expected shape (3, n0, n1, n2), got {W.shape}")
    mix = [np.full(n, 1.0 / n) for n in W.shape[1:]]
    if start is not None:
        for r, (x, n) in enumerate(zip(start, W.shape[1:], strict=True)):
            x = np.asarray(x, dtype=float)[:n]
            new = n - len(x)
            x = np.concatenate([x / max(x.sum(), 1e-300) * (1 - 0.1 * min(new, 5)),
                                np.full(new, 0.1 * min(new, 5) / max(new, 1))])
            mix[r] = _project(x, floor)
    avg = [np.zeros(n) for n in W.shape[1:]]
    half = steps // 2
    for t in range(steps):
        us = payoffs(W, mix)
        mix = [_project(x + dt * x * (u - u @ x), floor) for x, u in zip(mix, us, strict=True)]
        if t >= half:
            for a, x in zip(avg, mix, strict=True):
                a += x
    avg = [a / a.sum() for a in avg]
    best = min((mix, avg), key=lambda m: regrets(W, m).max())
    pruned = [_project(np.where(x >= prune, x, 0.0), 0.0) for x in best]
    return pruned, regrets(W, pruned)
