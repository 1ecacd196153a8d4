"""Naive Bayes with Laplace smoothing (Kameya & Hayashi 2016, Sec. 2.1 and 3.1), per fold.

Training on the rows of every fold but f (counts from SQL, see sql/evaluate/nb_counts.sql):

    p̂(c)       = (N(c) + α) / (N + α|C|)
    p̂(x_j | c) = (N(x_j, c) + α) / (N(¬⊥_j, c) + α|V_j|)
    p̂(⊥_j | c) = 1            (a NULL cell is ignored in training and in the test tuple)

and the test tuple x of fold f gets c* = argmax_c log p̂(c) + Σ_{j: x_j ≠ ⊥} log p̂(x_j | c).

Choices the paper leaves open:
* |V_j| is the number of distinct non-NULL values of attribute j in the ORIGINAL table
  together with the training table (the test tuples' domain: the anonymized table may have
  lost values entirely). For suppression, whose values are a subset of the original's,
  this is exactly the original's domain; the baseline uses the original's domain.
* |C| is the number of class labels in the original and the training table.
* Ties (equal posteriors, up to rounding) go to the first class in sorted label order.

Pure numpy: no SQL here.
"""

from __future__ import annotations

import numpy as np

from .model import FoldCombos, FoldNBCounts, first_argmax


def log_tables(train: FoldNBCounts, domain_sizes: np.ndarray, alpha: float
               ) -> tuple[np.ndarray, list[np.ndarray]]:
    """log p̂(c) as (F, C) and log p̂(x_j | c) per attribute as (F, V_j, C), trained per fold f
    on all folds but f."""
    n_c = train.cls.sum(axis=0)[None, :] - train.cls  # N(c) without fold f: (F, C)
    n_classes = n_c.shape[1]
    log_prior = np.log(n_c + alpha) - np.log(n_c.sum(axis=1, keepdims=True) + alpha * n_classes)
    log_cond = []
    for j, per_fold in enumerate(train.attr):
        n_xc = per_fold.sum(axis=0)[None, :, :] - per_fold  # N(x_j, c) without fold f
        n_known = n_xc.sum(axis=1, keepdims=True)  # N(¬⊥_j, c): (F, 1, C)
        log_cond.append(np.log(n_xc + alpha) - np.log(n_known + alpha * domain_sizes[j]))
    return log_prior, log_cond


def predict(log_prior: np.ndarray, log_cond: list[np.ndarray], test: FoldCombos) -> np.ndarray:
    """c* for every test tuple, each scored by the classifier of its own fold."""
    scores = log_prior[test.fold].copy()  # (T, C)
    for j, table in enumerate(log_cond):
        code = test.codes[:, j]
        known = code >= 0  # ⊥_j contributes log 1 = 0
        scores[known] += table[test.fold[known], code[known]]
    return first_argmax(scores)


def misclassified(train: FoldNBCounts, test: FoldCombos, domain_sizes: np.ndarray, alpha: float,
                  n_folds: int) -> np.ndarray:
    """Misclassified test rows per fold (weighted by the count of each distinct test tuple)."""
    log_prior, log_cond = log_tables(train, domain_sizes, alpha)
    wrong = predict(log_prior, log_cond, test) != test.classes
    return np.bincount(test.fold, weights=test.counts * wrong, minlength=n_folds).round().astype(np.int64)
