"""Decision tree per fold: scikit-learn's CART with the entropy criterion (the optional extra).

The paper's second classifier is C4.5 as Weka's J48 (pruned, multiway splits on nominal
attributes, fractional instances for missing values). scikit-learn has no C4.5; this is a
stand-in, not a reproduction: DecisionTreeClassifier(criterion="entropy",
random_state=seed), unpruned, binary splits on one-hot indicators. Each attribute j becomes
one 0/1 column per value of its dictionary; a NULL cell (⊥) is NaN in ALL of attribute j's
columns, which scikit-learn >= 1.3 routes down whichever branch fits the training data
better (and, for a split trained without missing values, down the larger branch).

The tree learns from the distinct (fold, QI vector, class) combinations of the training
table weighted by their counts (sql/evaluate/fold_combos.sql, the query that also gives naive
Bayes its test tuples), not from one fetched row per record: with the default stopping
rules (min_samples_split=2, min_samples_leaf=1, no depth limit) a weighted distinct tuple
grows the same splits as its copies would (identical rows cannot be separated), up to how
ties between equally good splits are broken (the scikit-learn tie-break is the seeded order
of the features, not of the samples; tests/test_evaluate.py checks row-by-row and weighted
trees predict alike). Fold f's training set merges the other folds' combinations into
distinct (QI vector, class) tuples, summing their counts, so a tree learns from each distinct
tuple once, however many folds hold it. Still, this fetches one row per combination of the
anonymized table: for adult-kh (30,161 rows, 8 QIs) 22,476 rows, as most QI vectors there
are nearly unique.

NOT YET (issue 16): at 10^6 rows with ~400,000 distinct tuples, the twenty scikit-learn fits
(10 folds, anonymized and baseline) take minutes (benchmarks/results/evaluate_speed.json), far
from the 60 s target; a faster tree must first be shown to keep these error figures.

Pure numpy + scikit-learn: no SQL here.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import AnonsqlError
from .model import FoldCombos

SKLEARN_MISSING = "the tree classifier needs scikit-learn: pip install 'anonsql[eval]'"


def require_sklearn():
    """The DecisionTreeClassifier class, or a user error naming the extra to install."""
    try:
        from sklearn.tree import DecisionTreeClassifier
    except ImportError:
        raise AnonsqlError(SKLEARN_MISSING) from None
    return DecisionTreeClassifier


def one_hot(codes: np.ndarray, domain: list[int]) -> np.ndarray:
    """(T, Σ_j |V_j|) float32 matrix (scikit-learn's trees work in float32 anyway, so this is
    the same input at half the memory): indicator of each value; NaN across attribute j when
    x_j = ⊥. Filled in place, one attribute's columns at a time."""
    out = np.zeros((len(codes), int(sum(domain))), dtype=np.float32)
    start = 0
    for j, size in enumerate(domain):
        code = codes[:, j]
        known = code >= 0
        out[known.nonzero()[0], start + code[known]] = 1.0
        out[~known, start:start + size] = np.nan
        start += size
    return out


def misclassified(train: FoldCombos, test: FoldCombos, domain: list[int], n_folds: int, seed: int,
                  progress: Callable[[str], None] | None = None) -> np.ndarray:
    """Misclassified test rows per fold: fold f's tree learns from train's other folds
    (`progress` hears one line per fold)."""
    tree_class = require_sklearn()
    wrong = np.zeros(n_folds, dtype=np.int64)
    for f in range(n_folds):
        learn, ask = train.fold != f, test.fold == f
        if not ask.any():
            continue
        codes, classes, weights = merged(train.codes[learn], train.classes[learn], train.counts[learn])
        model = tree_class(criterion="entropy", random_state=seed % 2**32)
        model.fit(one_hot(codes, domain), classes, sample_weight=weights)
        predicted = model.predict(one_hot(test.codes[ask], domain))
        wrong[f] = int(test.counts[ask][predicted != test.classes[ask]].sum())
        if progress is not None:
            progress(f"  evaluate: tree fold {f + 1}/{n_folds} done")
    return wrong


def merged(codes: np.ndarray, classes: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (QI vector, class) tuples of several folds' combinations, counts summed
    (float64 sample weights), in the order of their first occurrence."""
    if len(codes) == 0:
        return codes, classes, counts.astype(np.float64)
    table = np.column_stack([codes, classes]).astype(np.int64)
    _, first, inverse = np.unique(table, axis=0, return_index=True, return_inverse=True)
    weights = np.bincount(inverse.reshape(-1), weights=counts.astype(np.float64), minlength=len(first))
    order = np.argsort(first, kind="stable")
    return codes[first[order]], classes[first[order]], weights[order]
