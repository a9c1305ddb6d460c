"""A black-box optimiser for noisy objectives: the cross-entropy method (CEM).

Each generation draws `population` candidates from a Gaussian over the (clipped) box, scores
them all on the same games (common random numbers, so candidates are compared on equal
luck), keeps the best `elite` share and moves the Gaussian's mean and spread towards them.
Scores are to be maximised. The draws come from a generator seeded by the caller, so a rerun
proposes the same candidates (which lets a killed search resume from its finished
generations).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Dim:
    name: str
    lo: float
    hi: float
    integer: bool = False
    start: float | None = None  # initial mean (default: the middle)


@dataclass
class SearchResult:
    best: dict[str, float]
    best_score: float
    curve: list[dict] = field(default_factory=list)  # one row per generation
    candidates: list[dict] = field(default_factory=list)  # every candidate and its score


def _snap(x: np.ndarray, dims: Sequence[Dim]) -> np.ndarray:
    out = x.copy()
    for j, d in enumerate(dims):
        out[..., j] = np.clip(out[..., j], d.lo, d.hi)
        if d.integer:
            out[..., j] = np.round(out[..., j])
        else:
            out[..., j] = np.round(out[..., j], 4)
    return out


def cem(score: Callable[[list[dict[str, float]], int], Sequence[float]], dims: Sequence[Dim],
        generations: int = 8, population: int = 16, elite: float = 0.25, seed: int = 0,
        smoothing: float = 0.7, min_sigma: float = 0.02, on_generation=None,
        spread: float = 0.25) -> SearchResult:
    """Maximise `score(candidates, generation) -> one score per candidate`.

    `spread` is the first generation's spread, a share of each dimension's range (a search
    from a strong start in a wide box looks near it first); `min_sigma` is a share of each
    dimension's range below which its spread does not shrink (so that noise cannot freeze
    the search early).
    """
    rng = np.random.default_rng(seed)
    lo = np.array([d.lo for d in dims], dtype=float)
    hi = np.array([d.hi for d in dims], dtype=float)
    span = np.where(hi > lo, hi - lo, 1.0)
    mean = np.array([d.start if d.start is not None else (d.lo + d.hi) / 2 for d in dims])
    sigma = span * spread
    n_elite = max(1, int(round(population * elite)))
    res = SearchResult(best={}, best_score=-np.inf)
    for gen in range(generations):
        x = _snap(mean + sigma * rng.standard_normal((population, len(dims))), dims)
        x[0] = _snap(mean, dims)  # the current mean is always a candidate
        cands = [{d.name: (int(v) if d.integer else float(v)) for d, v in zip(dims, row,
                                                                            strict=True)}
                 for row in x]
        scores = np.asarray(score(cands, gen), dtype=float)
        order = np.argsort(-scores, kind="stable")
        top = x[order[:n_elite]]
        for c, s in zip(cands, scores, strict=True):
            res.candidates.append({"generation": gen, **c, "score": float(s)})
        if scores[order[0]] > res.best_score:
            res.best_score = float(scores[order[0]])
            res.best = cands[int(order[0])]
        res.curve.append({"generation": gen, "best": float(scores[order[0]]),
                          "elite_mean": float(scores[order[:n_elite]].mean()),
                          "median": float(np.median(scores)), "mean_candidate": float(scores[0])})
        mean = smoothing * top.mean(axis=0) + (1 - smoothing) * mean
        sigma = np.maximum(smoothing * top.std(axis=0) + (1 - smoothing) * sigma,
                           min_sigma * span)
        if on_generation is not None:
            on_generation(gen, res)
    res.best_mean = {d.name: (int(v) if d.integer else float(v))
                     for d, v in zip(dims, _snap(mean, dims), strict=True)}
    return res
