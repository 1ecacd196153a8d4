"""Decision tree per fold: scikit-learn's CART with the entropy criterion (the optional extra).

The paper's second classifier is C4.5 as Weka's J48 (pruned, multiway splits on nominal
attributes, fractional instances for missing values). scikit-learn has no C4.5; this is a
stand-in, not a reproduction: DecisionTreeClassifier(criterion="entropy",
random_state=seed), unpruned, binary splits on one-hot indicators. Each attribute j becomes
one 0/1 column per value of its dictionary; a NULL cell (⊥) is NaN in ALL of attribute j's
columns, which scikit-learn >= 1.3 routes down whichever branch fits the training data
better (and, for a split trained without missing values, down the branch with more
training rows: see below).

The tree learns from the distinct (QI vector, class) tuples of the training table weighted by
their counts (sql/evaluate/fold_combos.sql, the query that also gives naive Bayes its test
tuples), not from one fetched row per record: with the default stopping rules
(min_samples_split=2, min_samples_leaf=1, no depth limit) a weighted distinct tuple grows the
same nodes as its copies would (identical rows cannot be separated), and the weights are
integers, so every weighted class count the splitter compares is exact whatever the order of
the samples; ties between equally good splits go by the seeded order of the FEATURES, not of
the samples. One field differs: at a node whose training samples had no NULL in the split
attribute, scikit-learn sends a NULL test cell down the child with more training SAMPLES
(sklearn/tree/_splitter.pyx, node_split_best: `missing_go_to_left = n_left > n_right`
when n_missing == 0, sample counts, ties to the right), i.e. more distinct tuples here, not
more rows. `route_nulls_by_records` rewrites that field after each fit with the same rule on
the children's weighted counts (= rows), so the tree is the one fitted on one row per record,
node for node, missing-value routing included (tests/test_evaluate.py checks trees and
predictions with NULL test cells against the row-by-row fit, on Adult among others). The
rewrite costs ~0.2 CPU s per fold trained with NULLs at 10^6 rows (one `apply` of the training
tuples; ~2.3 of the ~58 CPU seconds), next to nothing for a fold trained without NULLs.

Work done once, not per fold: the distinct (QI vector, class) tuples of all folds are numbered
and one-hot coded once (column-major float32, the layout scikit-learn's splitter reads a
feature at a time, so fit copies nothing); the test side's distinct QI vectors are numbered
once and one-hot coded per fold, for the vectors the fold asks about.
Fold f's weights are one bincount of the other folds' counts over those numbers; the tuples
seen only in fold f get weight 0, which scikit-learn's splitter leaves out (the same tree,
node for node, as fitted on the weighted tuples alone: tested). FIT_WORKERS folds are fitted
at once, in threads (scikit-learn's builder releases the GIL; each fold's tree depends only on
its weights and seed, so the trees are those of one fit after the other: tested); each worker
holds one tree and its fitting buffers (~0.1 GB at 10^6 rows), so the count stays at two, the
cores of the machine this was measured on. At 10^6 rows, 8 columns, 10 folds the twenty fits
take ~55 CPU seconds (benchmarks/evaluate_speed.py); less CPU needs a tree grown from count
tables in compiled code that reproduces scikit-learn's splits, missing-value routing and
seeded tie-breaks.

Pure numpy + scikit-learn: no SQL here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..errors import AnonsqlError
from ..progress import tick
from .model import FoldCombos

SKLEARN_MISSING = "the tree classifier needs scikit-learn: pip install 'anonsql[eval]'"
#: Folds fitted at once (threads): two cores' worth; each holds a tree while it works.
FIT_WORKERS = max(1, min(2, os.cpu_count() or 1))


def require_sklearn():
    """The DecisionTreeClassifier class, or a user error naming the extra to install."""
    try:
        from sklearn.tree import DecisionTreeClassifier
    except ImportError:
        raise AnonsqlError(SKLEARN_MISSING) from None
    return DecisionTreeClassifier


def one_hot(codes: np.ndarray, domain: list[int]) -> np.ndarray:
    """(T, Σ_j |V_j|) float32 matrix in column-major order (scikit-learn's trees work in float32
    and read one feature at a time): indicator of each value; NaN across attribute j when
    x_j = ⊥. Filled in place, one attribute's columns at a time."""
    out = np.zeros((len(codes), int(sum(domain))), dtype=np.float32, order="F")
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
    (`progress` hears one line per fold, in fold order)."""
    tree_class = require_sklearn()
    tuples, tuple_of = distinct_rows(np.column_stack([train.codes, train.classes.astype(train.codes.dtype)]))
    learn_x, learn_y = one_hot(tuples[:, :-1], domain), tuples[:, -1]  # every fold's training tuples
    learn_null = tuples[:, :-1] < 0  # (T, M): x_j = ⊥
    attribute_of = np.repeat(np.arange(len(domain)), domain)  # one-hot column -> attribute j
    del tuples
    vectors, vector_of = distinct_rows(test.codes)
    counts = train.counts.astype(np.float64)

    def fold_wrong(f: int) -> int:
        """Fold f's misclassified test rows (0 when fold f has no test row)."""
        ask, learn = test.fold == f, train.fold != f
        if not ask.any():
            return 0
        # weight 0 for the tuples seen only in fold f: scikit-learn's splitter leaves them out
        weights = np.bincount(tuple_of[learn], weights=counts[learn], minlength=len(learn_y))
        model = tree_class(criterion="entropy", random_state=seed % 2**32)
        model.fit(learn_x, learn_y, sample_weight=weights)
        route_nulls_by_records(model, learn_x, learn_null & (weights > 0)[:, None], attribute_of)
        asked, where = np.unique(vector_of[ask], return_inverse=True)  # each distinct QI vector once
        predicted = model.predict(one_hot(vectors[asked], domain))[where.reshape(-1)]
        return int(test.counts[ask][predicted != test.classes[ask]].sum())

    wrong = np.zeros(n_folds, dtype=np.int64)
    with ThreadPoolExecutor(FIT_WORKERS) as pool:
        for f, w in enumerate(pool.map(fold_wrong, range(n_folds))):  # results in fold order
            wrong[f] = w
            if progress is not None:
                tick(progress, "evaluate: tree folds", f + 1, n_folds, f"  evaluate: tree fold {f + 1}/{n_folds} done")
    return wrong


def route_nulls_by_records(model, x: np.ndarray, null: np.ndarray, attribute_of: np.ndarray) -> None:
    """Make the fitted tree send a NULL test cell where the tree fitted on one row per record
    would. x: the (T, features) one-hot training matrix; null: (T, M) x_j = ⊥ for the training
    tuples of positive weight (False for the others); attribute_of: each column's attribute.

    A node whose training tuples include some with x_j = ⊥ for its split attribute j learned
    its direction from them (the same as row by row: the splitter compared weighted counts).
    At any other node scikit-learn chose `n_left > n_right` on SAMPLE counts (_splitter.pyx,
    node_split_best, n_missing == 0); row by row the samples are the rows, so that node gets
    `weighted left > weighted right`, ties to the right as there. Only nodes whose direction
    differs from that rule are looked at; which of them saw a ⊥: each tuple's leaf (`apply`
    retraces the training partition, NULL directions included), ORed up the tree a level at a
    time, deepest first."""
    tree = model.tree_
    state = tree.__getstate__()
    if "missing_go_to_left" not in state["nodes"].dtype.names:
        import sklearn
        raise AnonsqlError(f"the tree classifier needs scikit-learn >= 1.3 (missing values in trees), "
                           f"found {sklearn.__version__}: pip install -U 'anonsql[eval]'")
    left, right, rows = tree.children_left, tree.children_right, tree.weighted_n_node_samples
    inner = np.flatnonzero(left >= 0)
    by_rows = rows[left[inner]] > rows[right[inner]]
    differ = state["nodes"]["missing_go_to_left"][inner] != by_rows
    flip, by_rows = inner[differ], by_rows[differ]
    if len(flip) and null.any():
        saw_null = np.zeros((tree.node_count, null.shape[1]), dtype=bool)  # (node, j): a ⊥ in j reached it
        leaf = model.apply(x, check_input=False)
        for j in range(null.shape[1]):
            saw_null[leaf[null[:, j]], j] = True
        levels, level = [], np.zeros(1, dtype=np.intp)
        while len(level := level[left[level] >= 0]):  # the internal nodes of one depth
            levels.append(level)
            level = np.concatenate([left[level], right[level]])
        for level in reversed(levels):
            saw_null[level] |= saw_null[left[level]] | saw_null[right[level]]
        unseen = ~saw_null[flip, attribute_of[tree.feature[flip]]]
        flip, by_rows = flip[unseen], by_rows[unseen]
    if len(flip):
        nodes = state["nodes"].copy()  # __setstate__ copies from these arrays into the tree's own
        nodes["missing_go_to_left"][flip] = by_rows
        tree.__setstate__({**state, "nodes": nodes, "values": state["values"].copy()})


def distinct_rows(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a matrix of codes >= -1 (sorted) and, for every row, the number of
    its distinct row: through one int64 number per row (mixed radix) when the codes fit."""
    if len(table) == 0:
        return table, np.zeros(0, dtype=np.int64)
    radix = table.max(axis=0).astype(np.int64) + 2  # codes -1..max as digits 0..max+1
    if float(np.prod(radix.astype(np.float64))) >= 2.0**62:
        rows, inverse = np.unique(table, axis=0, return_inverse=True)
        return rows, inverse.reshape(-1)
    number = np.zeros(len(table), dtype=np.int64)
    for j in range(table.shape[1]):
        number = number * radix[j] + (table[:, j] + 1)
    _, first, inverse = np.unique(number, return_index=True, return_inverse=True)
    return table[first], inverse.reshape(-1)
