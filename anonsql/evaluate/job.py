"""The evaluate job: cross-validated error of classifiers trained on the anonymized table.

The protocol of Kameya & Hayashi (2016), Sec. 4: stratified F-fold cross validation in
which fold f's classifier is trained on the ANONYMIZED rows of the other folds and tested
on the ORIGINAL rows of fold f; the baseline trains on the original rows instead. Rows of
the two tables are matched by a key column (the anonymizer copies non-QI columns unchanged).
Statistics in SQL (anonsql.evaluate.stats), scoring in numpy (nb) or scikit-learn (tree).

Error rates are pooled: misclassified test rows / rows (Weka's figure); it equals the mean of
the per-fold errors weighted by fold size, and the folds differ in size by at most the
number of classes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pyarrow as pa

from .. import validate
from ..catalog import Table
from ..engine import Engine
from ..errors import AnonsqlError
from ..report import Progress, Report, silent
from . import nb, stats, tree
from .choices import CLASSIFIERS
from .model import FoldCombos, FoldNBCounts, fold_errors, majority_misclassified


@dataclass
class ClassifierResult:
    """One classifier's cross-validated error, anonymized-trained and original-trained."""

    classifier: str
    error: float  # trained on the anonymized table, tested on the original: misclassified / rows
    fold_errors: list[float]
    misclassified: int
    baseline_error: float  # trained and tested on the original
    baseline_fold_errors: list[float]
    baseline_misclassified: int
    #: error - baseline_error: what anonymization cost this classifier (in error rate).
    degradation: float = field(init=False)

    def __post_init__(self) -> None:
        self.degradation = self.error - self.baseline_error


@dataclass(kw_only=True)
class EvaluationReport(Report):
    """Classifier utility of `anonymized` (trained on) against `table`, the original (tested on)."""

    PROVES: ClassVar[bool] = False  # a measurement: it promises nothing

    anonymized: str
    qi: list[str]
    class_column: str
    key: str
    folds: int
    seed: int
    alpha: float
    rows: int = 0
    fold_rows: list[int] = field(default_factory=list)
    classifiers: dict[str, ClassifierResult] = field(default_factory=dict)
    #: the error of always answering the most frequent class of the training folds (same folds):
    #: a classifier no better than this has learnt nothing from the quasi-identifiers
    majority_error: float = 0.0

    def lines(self) -> list[str]:
        head = (f"stratified {self.folds}-fold cross validation (seed {self.seed}), {self.rows:,} rows matched by "
                f"{self.key}: trained on {self.anonymized}, tested on {self.table}; baseline trained on {self.table}; "
                "majority: always the most frequent class")
        return [head] + [f"  {c.classifier:<4}  error {c.error:.2%}  baseline {c.baseline_error:.2%}  "
                         f"({c.degradation * 100:+.2f} points)  majority {self.majority_error:.2%}"
                         for c in self.classifiers.values()]


def evaluate(engine: Engine, original: Table, anonymized: Table, qi: Sequence[str] | str, class_column: str,
             key: str | None = None, *, folds: int = 10, seed: int = 0,
             classifiers: Sequence[str] | str = CLASSIFIERS, alpha: float = 1.0,
             progress: Progress | None = None) -> EvaluationReport:
    """Stratified `folds`-fold CV error of each classifier: anonymized-train → original-test,
    and the baseline original-train → original-test.

    `key` (None: the one column of `original` outside the QIs and the class that is unique
    and also in `anonymized`, see stats.find_key) matches the rows of the two tables; both must
    hold the same keys, once each, with the same class label. `classifiers`: "nb" (naive
    Bayes, Laplace smoothing `alpha`, see anonsql.evaluate.nb) and/or "tree" (scikit-learn,
    see anonsql.evaluate.tree). `seed` picks the folds (and the tree's random_state).
    Reads only; nothing is written to the database.
    """
    alpha = float(alpha)  # folds, seed and alpha were checked where the API received them
    chosen = _classifiers(classifiers)
    if "tree" in chosen:
        tree.require_sklearn()
    o, a = _resolve(engine, original, anonymized, qi, class_column, key)
    say = progress or silent
    report = EvaluationReport(table=str(original), anonymized=str(anonymized), qi=o.qi,
                              class_column=o.class_column, key=o.key, folds=folds, seed=seed, alpha=alpha)

    with report.timed("statistics"):
        say(f"evaluate: checking that {original} and {anonymized} hold the same rows by '{o.key}'")
        report.rows = stats.require_alignment(engine, o, a, folds)
        say(f"evaluate: counting per fold ({folds} folds)")
        frames = {"test": stats.fold_table(engine, "evaluate/fold_combos", o, o, folds, seed)}
        if "nb" in chosen:
            frames["nb_anon"] = stats.fold_table(engine, "evaluate/nb_counts", a, o, folds, seed)
            frames["nb_orig"] = stats.fold_table(engine, "evaluate/nb_counts", o, o, folds, seed)
        if "tree" in chosen:
            frames["tree_anon"] = stats.fold_table(engine, "evaluate/fold_combos", a, o, folds, seed)
        coded = stats.Coder(len(o.qi), frames)
        del frames  # the coder keeps integer codes, not the fetched tables
        pa.default_memory_pool().release_unused()  # hand Arrow's freed buffers back before the fits
        test = coded.combos("test")
    fold_rows = np.bincount(test.fold, weights=test.counts, minlength=folds).round().astype(np.int64)
    if int(fold_rows.sum()) != report.rows:  # the join by key lost or doubled rows: never expected
        raise AnonsqlError(f"internal: the folds cover {int(fold_rows.sum())} of {report.rows} rows")
    report.fold_rows = [int(r) for r in fold_rows]
    report.majority_error = float(majority_misclassified(test, folds).sum()) / report.rows

    for name in chosen:
        say(f"evaluate: training and testing {name} on every fold")
        with report.timed(name):
            if name == "nb":
                wrong_a = _nb(coded.nb_counts("nb_anon", folds), test, alpha, folds)
                wrong_o = _nb(coded.nb_counts("nb_orig", folds), test, alpha, folds)
            else:
                wrong_a = tree.misclassified(coded.combos("tree_anon"), test, coded.domain, folds, seed, say)
                wrong_o = tree.misclassified(test, test, coded.domain, folds, seed, say)
        report.classifiers[name] = ClassifierResult(
            name, float(wrong_a.sum()) / report.rows, fold_errors(wrong_a, fold_rows), int(wrong_a.sum()),
            float(wrong_o.sum()) / report.rows, fold_errors(wrong_o, fold_rows), int(wrong_o.sum()))
        if report.classifiers[name].error >= report.majority_error:
            report.notes.append(f"{name} trained on {anonymized} is no better than always answering the most "
                                f"frequent class ({report.classifiers[name].error:.2%} against "
                                f"{report.majority_error:.2%} error)")
    return report


def _nb(train: FoldNBCounts, test: FoldCombos, alpha: float, n_folds: int) -> np.ndarray:
    """Naive Bayes misclassifications per fold; |V_j| = values of the test side ∪ the training side."""
    sizes = []
    for j, per_fold in enumerate(train.attr):
        present = per_fold.sum(axis=(0, 2)) > 0
        present[test.codes[test.codes[:, j] >= 0, j]] = True
        sizes.append(int(present.sum()))
    return nb.misclassified(train, test, np.array(sizes, dtype=np.int64), alpha, n_folds)


# --- inputs ------------------------------------------------------------------------------

def _classifiers(classifiers: Sequence[str] | str) -> list[str]:
    """The chosen classifiers, each one of CLASSIFIERS (case-insensitive), in order, once each."""
    chosen = list(dict.fromkeys(n.lower() for n in validate.names(classifiers)))
    if not chosen:
        raise AnonsqlError(f"no classifier given; choose one of {', '.join(CLASSIFIERS)}")
    return [validate.choice("classifier", n, CLASSIFIERS) for n in chosen]


def _resolve(engine: Engine, original: Table, anonymized: Table, qi: Sequence[str] | str, class_column: str,
             key: str | None) -> tuple[stats.Side, stats.Side]:
    """The two tables' spellings of the QIs, the class and the key, checked: the class has no
    NULL in either table, the key is neither a QI nor the class, and has the same type in both."""
    o_qi = validate.quasi_identifiers(original, qi)
    o_cls = _class_column(engine, original, class_column, o_qi)
    a_qi = anonymized.resolve(o_qi)
    a_cls = _class_column(engine, anonymized, o_cls, a_qi)
    o_key = original.column(key).name if key is not None else stats.find_key(engine, original, anonymized, o_qi,
                                                                             o_cls)
    if o_key in o_qi or o_key == o_cls:
        raise AnonsqlError(f"key column '{o_key}' must not be a quasi-identifier or the class")
    a_key = anonymized.column(o_key).name
    for what, o_col, a_col in (("key", o_key, a_key), ("class", o_cls, a_cls)):
        o_kind, a_kind = original.column(o_col).kind, anonymized.column(a_col).kind
        if o_kind != a_kind:
            raise AnonsqlError(f"{what} column '{o_col}' is {o_kind} in {original} but {a_kind} in {anonymized}")
    return stats.Side(original, o_qi, o_cls, o_key), stats.Side(anonymized, a_qi, a_cls, a_key)


def _class_column(engine: Engine, table: Table, name: str, qi: list[str]) -> str:
    """validate.class_column, its message naming the table (there are two here)."""
    try:
        return validate.class_column(engine, table, name, qi)
    except AnonsqlError as exc:
        if str(table) in str(exc):
            raise
        raise AnonsqlError(f"{exc} (in table {table})") from None
