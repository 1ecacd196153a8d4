"""`evaluate`: cross-validated error of classifiers trained on the anonymized table.

The protocol of Kameya & Hayashi (2016), Sec. 4: stratified F-fold cross validation in
which fold f's classifier is trained on the ANONYMIZED rows of the other folds and tested
on the ORIGINAL rows of fold f; the baseline trains on the original rows instead. Rows of
the two tables are matched by a key column (the anonymizer copies non-QI columns unchanged).

Data path (see ARCHITECTURE.md): the folds (sql/eval_folds.sql) are a subquery over the
original, joined by key into every count query, so the rows never leave the database:
naive Bayes gets N_f(x_j, c) and N_f(c) from one GROUPING SETS query per training table
(sql/eval_nb_counts.sql), and the test side is one row per distinct (fold, QI vector,
class) of the original with its count (sql/eval_fold_combos.sql). That one is only as
small as the data allow: adult-kh's 30,161 rows give 22,476 combinations over its 8 QIs.
Scoring is numpy (anonsql.evaluation.nb) or scikit-learn (anonsql.evaluation.tree, the
optional extra).

Error rates are pooled: misclassified test rows / rows (Weka's figure); it equals the mean of
the per-fold errors weighted by fold size, and the folds differ in size by at most the
number of classes.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd
from sqlglot import exp

from .. import inputs, sql, stats
from ..catalog import Table
from ..engine import Engine
from ..errors import AnonsqlError
from . import nb, tree
from .model import FoldCombos, FoldNBCounts, fold_errors

CLASSIFIERS = ("nb", "tree")


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

    @property
    def degradation(self) -> float:
        """error - baseline_error: what anonymization cost this classifier (in error rate)."""
        return self.error - self.baseline_error


@dataclass
class EvaluationResult:
    original: str
    anonymized: str
    qi: list[str]
    class_column: str
    key: str
    folds: int
    seed: int
    alpha: float
    rows: int
    fold_rows: list[int]
    classifiers: dict[str, ClassifierResult]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for name, result in self.classifiers.items():
            out["classifiers"][name]["degradation"] = result.degradation
        return out


@dataclass(frozen=True)
class _Names:
    """Catalog spellings of the columns in the original (o_*) and the anonymized (a_*) table."""

    o_qi: list[str]
    o_cls: str
    o_key: str
    a_qi: list[str]
    a_cls: str
    a_key: str


def evaluate(engine: Engine, original: Table, anonymized: Table, qi: Sequence[str], class_col: str,
             key: str | None = None, *, folds: int = 10, seed: int = 0,
             classifiers: Sequence[str] | str = CLASSIFIERS, alpha: float = 1.0) -> EvaluationResult:
    """Stratified `folds`-fold CV error of each classifier: anonymized-train → original-test,
    and the baseline original-train → original-test.

    `key` (None: the one column of `original` outside the QIs and the class that is unique
    and also in `anonymized`, see find_key) matches the rows of the two tables; both must
    hold the same keys, once each, with the same class label. `classifiers`: "nb" (naive
    Bayes, Laplace smoothing `alpha`, see anonsql.evaluation.nb) and/or "tree" (scikit-learn,
    see anonsql.evaluation.tree). `seed` picks the folds (and the tree's random_state).
    Reads only; nothing is written to the database.
    """
    folds, seed, alpha = _require_numbers(folds, seed, alpha)
    chosen = _require_classifiers(classifiers)
    if "tree" in chosen:
        tree.require_sklearn()
    names = _resolve(engine, original, anonymized, qi, class_col, key)
    rows = _require_alignment(engine, original, anonymized, names, folds)
    fold_binds = dict(original=original.expr, key=sql.column(names.o_key), label=sql.column(names.o_cls),
                      n_folds=folds, seed=seed)

    def fetch(name: str, table: Table, qi_cols: list[str], cls: str, key_col: str) -> pd.DataFrame:
        text, params = sql.bind(_with_folds(name), engine.dialect, {
            **fold_binds, "tbl": table.expr, "tbl_key": sql.column(key_col, "t"),
            "qi": sql.columns(qi_cols, "t"), "cls": sql.column(cls, "t")})
        return engine.fetch_df(text, params)

    o_side = (original, names.o_qi, names.o_cls, names.o_key)
    a_side = (anonymized, names.a_qi, names.a_cls, names.a_key)
    frames: dict[str, pd.DataFrame] = {"test": fetch("eval_fold_combos", *o_side)}
    if "nb" in chosen:
        frames["nb_anon"] = fetch("eval_nb_counts", *a_side)
        frames["nb_orig"] = fetch("eval_nb_counts", *o_side)
    if "tree" in chosen:
        frames["tree_anon"] = fetch("eval_fold_combos", *a_side)

    m = len(names.o_qi)
    coded = _Coder(m, frames)
    test = coded.combos("test")
    fold_rows = np.bincount(test.fold, weights=test.counts, minlength=folds).round().astype(np.int64)
    if int(fold_rows.sum()) != rows:  # the join by key lost or doubled rows: never expected
        raise AnonsqlError(f"internal: the folds cover {int(fold_rows.sum())} of {rows} rows")

    results: dict[str, ClassifierResult] = {}
    for name in chosen:
        if name == "nb":
            wrong_a = _nb(coded.nb_counts("nb_anon", folds), test, alpha, folds)
            wrong_o = _nb(coded.nb_counts("nb_orig", folds), test, alpha, folds)
        else:
            wrong_a = tree.misclassified(coded.combos("tree_anon"), test, coded.domain, folds, seed)
            wrong_o = tree.misclassified(test, test, coded.domain, folds, seed)
        results[name] = ClassifierResult(
            name, float(wrong_a.sum()) / rows, fold_errors(wrong_a, fold_rows), int(wrong_a.sum()),
            float(wrong_o.sum()) / rows, fold_errors(wrong_o, fold_rows), int(wrong_o.sum()))
    return EvaluationResult(str(original), str(anonymized), names.o_qi, names.o_cls, names.o_key, folds, seed,
                            alpha, rows, [int(r) for r in fold_rows], results)


def _nb(train: FoldNBCounts, test: FoldCombos, alpha: float, n_folds: int) -> np.ndarray:
    """Naive Bayes misclassifications per fold; |V_j| = values of the test side ∪ the training side."""
    sizes = []
    for j, per_fold in enumerate(train.attr):
        present = per_fold.sum(axis=(0, 2)) > 0
        present[test.codes[test.codes[:, j] >= 0, j]] = True
        sizes.append(int(present.sum()))
    return nb.misclassified(train, test, np.array(sizes, dtype=np.int64), alpha, n_folds)


# --- folds -------------------------------------------------------------------------------

def _with_folds(name: str) -> exp.Expression:
    """sql/<name>.sql with its `$folds` table replaced by the fold subquery of sql/eval_folds.sql."""
    query = sql.template(name)
    folds = sql.template("eval_folds")
    folds.comments = None  # the file's comment stays in the file, not inside every query
    target = next(p.parent for p in query.find_all(exp.Placeholder)
                  if p.name == "folds" and isinstance(p.parent, exp.Table))
    target.replace(exp.Subquery(this=folds, alias=exp.TableAlias(this=exp.to_identifier(target.alias))))
    return query


def fold_assignment(engine: Engine, original: Table, key: str, class_col: str, folds: int = 10,
                    seed: int = 0) -> pd.DataFrame:
    """The fold of every row of `original`: a DataFrame (k = the key, fold = 0..folds-1).

    Stratified by class and seeded: within each class the rows are ranked by
    md5(CAST(key AS VARCHAR) || '|' || seed) and the r-th goes to fold (r - 1) mod folds.
    The same on every engine as long as the key renders as the same text (integer and text
    keys do; floats and timestamps may not).
    """
    text, params = sql.render("eval_folds", engine.dialect, original=original.expr,
                              key=sql.column(original.column(key).name),
                              label=sql.column(original.column(class_col).name), n_folds=folds, seed=seed)
    return engine.fetch_df(text, params)


# --- validation --------------------------------------------------------------------------

def _require_numbers(folds: object, seed: object, alpha: object) -> tuple[int, int, float]:
    if isinstance(folds, bool) or not isinstance(folds, numbers.Integral) or folds < 2:
        raise AnonsqlError(f"folds must be an integer >= 2, got {folds!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise AnonsqlError(f"seed must be an integer, got {seed!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not math.isfinite(alpha) or alpha <= 0:
        raise AnonsqlError(f"alpha (the Laplace pseudo count) must be a number > 0, got {alpha!r}")
    return int(folds), int(seed), float(alpha)


def _require_classifiers(classifiers: Sequence[str] | str) -> list[str]:
    names = inputs.split_names(classifiers)
    chosen = list(dict.fromkeys(n.lower() for n in names))
    unknown = [n for n in chosen if n not in CLASSIFIERS]
    if unknown or not chosen:
        what = f"unknown classifier '{unknown[0]}'" if unknown else "no classifier given"
        raise AnonsqlError(f"{what}; choose from {', '.join(CLASSIFIERS)}")
    return chosen


def _resolve(engine: Engine, original: Table, anonymized: Table, qi: Sequence[str], class_col: str,
             key: str | None) -> _Names:
    o_qi = original.resolve(qi)
    if not o_qi:
        raise AnonsqlError("no quasi-identifier columns given (--qi a,b,c)")
    o_cls = _class_column(engine, original, class_col, o_qi)
    a_qi = anonymized.resolve(o_qi)
    a_cls = _class_column(engine, anonymized, o_cls, a_qi)
    o_key = original.column(key).name if key is not None else find_key(engine, original, anonymized, o_qi, o_cls)
    if o_key in o_qi or o_key == o_cls:
        raise AnonsqlError(f"key column '{o_key}' must not be a quasi-identifier or the class")
    a_key = anonymized.column(o_key).name
    for what, o_col, a_col in (("key", o_key, a_key), ("class", o_cls, a_cls)):
        o_kind, a_kind = original.column(o_col).kind, anonymized.column(a_col).kind
        if o_kind != a_kind:
            raise AnonsqlError(f"{what} column '{o_col}' is {o_kind} in {original} but {a_kind} in {anonymized}")
    return _Names(o_qi, o_cls, o_key, a_qi, a_cls, a_key)


def _class_column(engine: Engine, table: Table, name: str, qi: list[str]) -> str:
    """inputs.require_class_column, its message naming the table (there are two here)."""
    try:
        return inputs.require_class_column(engine, table, name, qi)
    except AnonsqlError as exc:
        if str(table) in str(exc):
            raise
        raise AnonsqlError(f"{exc} (in table {table})") from None


def _profile(engine: Engine, table: Table, cols: Sequence[str]) -> tuple[int, list[int], list[int]]:
    """One scan: rows, and per column the distinct non-NULL values and the NULL cells."""
    text, params = sql.render("column_profile", engine.dialect, tbl=table.expr, col=sql.columns(cols))
    row = [int(v) for v in engine.fetch_all(text, params)[0]]
    k = len(cols)
    return row[0], row[1 : 1 + k], row[1 + k :]


def find_key(engine: Engine, original: Table, anonymized: Table, qi: Sequence[str], class_col: str) -> str:
    """The key when the user named none: the ONE column of `original` that is not a QI or the
    class, also exists in `anonymized`, and is unique (and never NULL) in `original`."""
    taken = {*qi, class_col}
    present = {c.lower() for c in anonymized.column_names}
    candidates = [c for c in original.column_names if c not in taken and c.lower() in present]
    hint = "; pass --key COLUMN (a column in both tables, unique in the original)"
    if not candidates:
        raise AnonsqlError(f"no key column to match the rows of {original} and {anonymized}: every shared "
                           f"column is a quasi-identifier or the class{hint}")
    rows, distinct, nulls = _profile(engine, original, candidates)
    unique = [c for c, d, n in zip(candidates, distinct, nulls) if d == rows and n == 0]
    if not unique:
        raise AnonsqlError(f"no key column to match the rows of {original} and {anonymized}: none of "
                           f"{', '.join(candidates)} is unique in {original}{hint}")
    if len(unique) > 1:
        raise AnonsqlError(f"several columns could be the key ({', '.join(unique)}){hint}")
    return unique[0]


def _require_alignment(engine: Engine, original: Table, anonymized: Table, n: _Names, folds: int) -> int:
    """Same row count, the key unique and non-NULL in both, the same key set, the same class
    per key, and at least `folds` rows in every class. Returns the row count."""
    rows, (distinct,), (nulls,) = _profile(engine, original, [n.o_key])
    if rows == 0:
        raise AnonsqlError(f"table {original} is empty")
    if nulls:
        raise AnonsqlError(f"key column '{n.o_key}' has {nulls} NULL value(s) in {original}")
    if distinct != rows:
        raise AnonsqlError(f"key column '{n.o_key}' is not unique in {original}: "
                           f"{rows:,} rows, {distinct:,} distinct values")
    a_rows, (a_distinct,), (a_nulls,) = _profile(engine, anonymized, [n.a_key])
    if a_rows != rows:
        raise AnonsqlError(f"the tables differ in row count: {original} has {rows:,} rows, "
                           f"{anonymized} has {a_rows:,}")
    if a_nulls or a_distinct != a_rows:
        raise AnonsqlError(f"key column '{n.a_key}' is not unique and non-NULL in {anonymized}: {a_rows:,} rows, "
                           f"{a_distinct:,} distinct values, {a_nulls:,} NULL")
    text, params = sql.render(
        "eval_alignment", engine.dialect, original=original.expr, anonymized=anonymized.expr,
        o_key=sql.column(n.o_key, "o"), a_key=sql.column(n.a_key, "a"),
        o_cls=sql.column(n.o_cls, "o"), a_cls=sql.column(n.a_cls, "a"))
    matched, changed = (int(v) for v in engine.fetch_all(text, params)[0])
    if matched != rows:
        raise AnonsqlError(f"the tables hold different keys: {rows - matched:,} of the {rows:,} values of "
                           f"'{n.o_key}' in {original} have no row in {anonymized}")
    if changed:
        raise AnonsqlError(f"{changed:,} row(s) have a different '{n.o_cls}' in {anonymized} than in {original}; "
                           "evaluation expects the anonymizer to keep the class column")
    counts = stats.class_counts(engine, original, n.o_cls)
    smallest = int(np.argmin(counts.counts))
    if folds > counts.counts[smallest]:
        raise AnonsqlError(f"folds ({folds}) exceeds the rows of the smallest class "
                           f"('{counts.values[smallest]}': {counts.counts[smallest]}); use --folds "
                           f"{max(int(counts.counts[smallest]), 2)} or fewer")
    return rows


# --- coding the fetched frames -----------------------------------------------------------

class _Coder:
    """Codes the fetched frames against shared dictionaries: per attribute j the values of
    every frame (-1 for NULL), the class labels sorted (ties go to the first label)."""

    def __init__(self, m: int, frames: dict[str, pd.DataFrame]):
        self.m, self.frames = m, frames
        self._attr_codes: dict[str, list[np.ndarray]] = {}
        self._class_codes: dict[str, np.ndarray] = {}
        layout = {name: (self._value_cols(name), self._class_col(name)) for name in frames}
        self.values = []
        for j in range(m):
            parts = {name: frames[name].iloc[:, cols[j]] for name, (cols, _) in layout.items()}
            codes, uniques = _factorize(parts, sort=True)
            for name, c in codes.items():
                self._attr_codes.setdefault(name, []).append(c)
            self.values.append(uniques)
        codes, self.class_values = _factorize({n: frames[n].iloc[:, c] for n, (_, c) in layout.items()}, sort=True)
        self._class_codes = codes

    @property
    def domain(self) -> list[int]:
        return [len(v) for v in self.values]

    def _is_nb(self, name: str) -> bool:
        return name.startswith("nb_")

    def _value_cols(self, name: str) -> list[int]:
        # combos: fold, y_1..y_M, c, n;  nb counts: fold, g_1..g_M, x_1..x_M, c, n
        start = 1 + self.m if self._is_nb(name) else 1
        return list(range(start, start + self.m))

    def _class_col(self, name: str) -> int:
        return 1 + 2 * self.m if self._is_nb(name) else 1 + self.m

    def combos(self, name: str) -> FoldCombos:
        """The frame as arrays in a canonical order (fold, codes, class): the same table gives
        the same arrays on every engine, so the tree sees its samples in the same order."""
        df = self.frames[name]
        fold = df.iloc[:, 0].to_numpy(np.int64)
        codes = np.column_stack(self._attr_codes[name]).astype(np.int64)
        classes = self._class_codes[name].astype(np.int64)
        order = np.lexsort((classes, *(codes[:, j] for j in reversed(range(self.m))), fold))
        return FoldCombos(fold[order], codes[order], classes[order], df.iloc[:, -1].to_numpy(np.int64)[order])

    def nb_counts(self, name: str, n_folds: int) -> FoldNBCounts:
        df, m = self.frames[name], self.m
        fold = df.iloc[:, 0].to_numpy(np.int64)
        grouping = df.iloc[:, 1 : 1 + m].to_numpy(np.int64)
        cls = self._class_codes[name].astype(np.int64)
        n = df.iloc[:, -1].to_numpy(np.int64)
        n_classes = len(self.class_values)
        class_rows = grouping.all(axis=1)
        by_class = np.zeros((n_folds, n_classes), np.int64)
        np.add.at(by_class, (fold[class_rows], cls[class_rows]), n[class_rows])
        attr = []
        for j in range(m):
            code = self._attr_codes[name][j]
            rows = (grouping[:, j] == 0) & (code >= 0)  # attribute j's set, non-NULL x_j
            table = np.zeros((n_folds, len(self.values[j]), n_classes), np.int64)
            np.add.at(table, (fold[rows], code[rows], cls[rows]), n[rows])
            attr.append(table)
        return FoldNBCounts(attr, by_class)


def _factorize(parts: dict[str, pd.Series], *, sort: bool) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Codes of several columns against one dictionary of their non-NULL values (-1 = NULL)."""
    arrays = [p.astype(object).where(p.notna(), None).to_numpy(dtype=object) for p in parts.values()]
    joined = np.concatenate(arrays) if arrays else np.array([], dtype=object)
    try:
        codes, uniques = pd.factorize(joined, sort=sort, use_na_sentinel=True)
    except TypeError:  # values of different types (e.g. a generalized integer column) do not sort
        codes, uniques = pd.factorize(joined, sort=False, use_na_sentinel=True)
    out, start = {}, 0
    for name, a in zip(parts, arrays):
        out[name] = codes[start : start + len(a)]
        start += len(a)
    return out, np.asarray(uniques, dtype=object)
