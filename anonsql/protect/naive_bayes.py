"""Naive Bayes with the thesis's conventions (Hintoglu 2011, Def. 2.2 and Examples 2-4).

Exact fractions, unsmoothed relative frequencies. The classifier predicting cell (i, j) is
trained on D - d_i restricted to rows whose target value is known (the INCP example: a row
with a hidden target leaves the training set). A hidden predictor value (ν, code -1) of the
tuple is skipped in the product, while a hidden value in a training row only lowers the
count, the class total stays the denominator (Theorem 3.1 and Example 2, Step 6).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

NU = -1  # ν: the unknown value, NULL in SQL


def class_scores(X: np.ndarray, row: int, target: int, attrs: Sequence[int], n_classes: int) -> list[Fraction]:
    """p(v|d_row) up to the common factor 1/p(d_row), for every class code v (eq. 2.4)."""
    train = X[:, target] >= 0
    train[row] = False
    labels = X[train, target]
    totals = np.bincount(labels, minlength=n_classes)
    n = int(totals.sum())
    scores = [Fraction(int(t), n) if n else Fraction(0) for t in totals]
    for a in attrs:
        value = X[row, a]
        if value == NU:
            continue
        hits = np.bincount(labels[X[train, a] == value], minlength=n_classes)
        scores = [s * Fraction(int(h), int(t)) if t else Fraction(0) for s, h, t in zip(scores, hits, totals)]
    return scores


def is_predicted(scores: Sequence[Fraction], value: int) -> bool:
    """Assertion (3.8): `value` is strictly more probable than every other class."""
    return all(scores[value] > s for v, s in enumerate(scores) if v != value)


def most_probable(scores: Sequence[Fraction]) -> list[int]:
    """The most probable classes: one value, or several on a tie (which eq. 3.8 counts as
    no prediction)."""
    best = max(scores)
    return [v for v, s in enumerate(scores) if s == best]


def top_k(scores: Sequence[Fraction], k: int) -> list[int]:
    """Ω_k (Def. 3.1): the k most probable classes, ties broken by value order."""
    return sorted(range(len(scores)), key=lambda v: (-scores[v], v))[:k]


def next_best_candidates(scores: Sequence[Fraction], value: int, k: int) -> list[int]:
    """Values allowed as the random next best guess (Def. 3.2): in Ω_k, not the
    confidential value, and 0 < p(v|d) < p(value|d)."""
    return [v for v in top_k(scores, k) if v != value and 0 < scores[v] < scores[value]]
