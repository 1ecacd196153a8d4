"""The arrays evaluation works on: count tables per fold, coded like anonsql.stats.

Values are coded per attribute j against one dictionary shared by the original and the
training table (codes 0..len-1, -1 for NULL, the papers' ⊥); classes against one sorted
list of labels. Nothing here touches a database.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NULL_CODE = -1


@dataclass
class FoldCombos:
    """N_f(y, c): one row per distinct (fold f, QI vector y, class c) of a table, with its count."""

    fold: np.ndarray  # (T,) int64, 0..F-1
    codes: np.ndarray  # (T, M) int32, -1 = ⊥
    classes: np.ndarray  # (T,) int64 index into the class labels
    counts: np.ndarray  # (T,) int64

    @property
    def rows(self) -> int:
        return int(self.counts.sum())


@dataclass
class FoldNBCounts:
    """Naive Bayes statistics of a training table split by fold (not yet 'all folds but f').

    attr[j][f, x, c] = N_f(x_j = x, c) over the non-NULL values of attribute j;
    cls[f, c] = N_f(c). Training counts of fold f are the totals over folds minus fold f.
    """

    attr: list[np.ndarray]  # per attribute j: (F, V_j, C) int64
    cls: np.ndarray  # (F, C) int64


def majority_misclassified(test: FoldCombos, n_folds: int) -> np.ndarray:
    """The majority-class baseline's misclassified rows per fold: fold f's rows all answered with
    the most frequent class of the other folds (ties: the first class in sorted label order)."""
    n_classes = int(test.classes.max()) + 1 if len(test.classes) else 1
    by_fold = np.zeros((n_folds, n_classes), np.int64)
    np.add.at(by_fold, (test.fold, test.classes), test.counts)
    chosen = np.argmax(by_fold.sum(axis=0) - by_fold, axis=1)  # argmax: the first of equal counts
    return by_fold.sum(axis=1) - by_fold[np.arange(n_folds), chosen]


def fold_errors(misclassified: np.ndarray, fold_rows: np.ndarray) -> list[float]:
    """Per-fold error rates: misclassified test rows / test rows of the fold."""
    return [float(m) / float(r) for m, r in zip(misclassified.tolist(), fold_rows.tolist())]


def first_argmax(scores: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Row-wise argmax where near-ties go to the FIRST class in sorted label order.

    Scores are sums of logarithms, so mathematically equal products can differ in the last
    bits; scores within tol * (1 + |best|) of the best count as tied.
    """
    best = scores.max(axis=1, keepdims=True)
    winners = scores >= best - tol * (1.0 + np.abs(best))
    return np.argmax(winners, axis=1)
