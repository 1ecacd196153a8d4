"""The SQL statistics of evaluate: the folds, the alignment of the two tables, the per-fold
count tables, and those tables coded into the arrays of anonsql.evaluate.model.

The folds (sql/evaluate/folds.sql) are a subquery over the original, joined by key into every
count query, so the rows never leave the database: naive Bayes gets N_f(x_j, c) and N_f(c)
from one GROUPING SETS query per training table (sql/evaluate/nb_counts.sql), and the test side
is one row per distinct (fold, QI vector, class) of the original with its count
(sql/evaluate/fold_combos.sql). That one is only as small as the data allow: adult-kh's 30,161
rows give 22,476 combinations over its 8 QIs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from .. import sql, stats
from ..catalog import Table
from ..engine import Engine
from ..errors import AnonsqlError
from .model import FoldCombos, FoldNBCounts


@dataclass(frozen=True)
class Side:
    """One of the two tables with its catalog spellings of the QIs, the class and the key."""

    table: Table
    qi: list[str]
    class_column: str
    key: str


# --- folds -------------------------------------------------------------------------------

def _fold_bindings(table: Table, key: str, class_column: str, folds: int, seed: int) -> dict[str, Any]:
    """The bindings of sql/evaluate/folds.sql: the folds of `table`'s rows by key and class."""
    return dict(original=table.expr, key=sql.column(key), label=sql.column(class_column), n_folds=folds, seed=seed)


def fold_assignment(engine: Engine, original: Table, key: str, class_column: str, folds: int = 10,
                    seed: int = 0) -> pd.DataFrame:
    """The fold of every row of `original`: a DataFrame (k = the key, fold = 0..folds-1).

    Stratified by class and seeded: within each class the rows are ranked by
    md5(CAST(key AS VARCHAR) || '|' || seed) and the r-th goes to fold (r - 1) mod folds.
    The same on every engine as long as the key renders as the same text (integer and text
    keys do; floats and timestamps may not).
    """
    bindings = _fold_bindings(original, original.column(key).name, original.column(class_column).name, folds, seed)
    text, params = sql.render("evaluate/folds", engine.dialect, **bindings)
    return engine.fetch_df(text, params)


def _with_folds(name: str) -> exp.Expr:
    """sql/<name>.sql with its `$folds` table replaced by the fold subquery of sql/evaluate/folds.sql."""
    query = sql.template(name)
    folds = sql.template("evaluate/folds")
    folds.comments = None  # the file's comment stays in the file, not inside every query
    target = next(p.parent for p in query.find_all(exp.Placeholder)
                  if p.name == "folds" and isinstance(p.parent, exp.Table))
    target.replace(exp.Subquery(this=folds, alias=exp.TableAlias(this=exp.to_identifier(target.alias))))
    return query


def fold_table(engine: Engine, name: str, side: Side, original: Side, folds: int, seed: int) -> pa.Table:
    """sql/<name>.sql over the rows of `side`, each placed in the fold of its key in `original`
    (an Arrow table: strings stay packed, see Coder)."""
    text, params = sql.bind(_with_folds(name), engine.dialect, {
        **_fold_bindings(original.table, original.key, original.class_column, folds, seed),
        "tbl": side.table.expr, "tbl_key": sql.column(side.key, "t"),
        "qi": sql.columns(side.qi, "t"), "cls": sql.column(side.class_column, "t")})
    return engine.fetch_arrow(text, params)


# --- the key and the alignment of the two tables ----------------------------------------------

def _profile(engine: Engine, table: Table, cols: Sequence[str]) -> tuple[int, list[int], list[int]]:
    """One scan: rows, and per column the distinct non-NULL values and the NULL cells."""
    text, params = sql.render("common/column_profile", engine.dialect, tbl=table.expr, col=sql.columns(cols))
    row = [int(v) for v in engine.fetch_all(text, params)[0]]
    k = len(cols)
    return row[0], row[1 : 1 + k], row[1 + k :]


def find_key(engine: Engine, original: Table, anonymized: Table, qi: Sequence[str], class_column: str) -> str:
    """The key when the user named none: the ONE column of `original` that is not a QI or the
    class, also exists in `anonymized`, and is unique (and never NULL) in `original`."""
    taken = {*qi, class_column}
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


def require_alignment(engine: Engine, original: Side, anonymized: Side, folds: int) -> int:
    """Same row count, the key unique and non-NULL in both, the same key set, the same class
    per key (sql/evaluate/alignment.sql), and at least `folds` rows in every class. Returns
    the row count."""
    o, a = original, anonymized
    rows, (distinct,), (nulls,) = _profile(engine, o.table, [o.key])
    if rows == 0:
        raise AnonsqlError(f"table {o.table} is empty")
    if nulls:
        raise AnonsqlError(f"key column '{o.key}' has {nulls} NULL value(s) in {o.table}")
    if distinct != rows:
        raise AnonsqlError(f"key column '{o.key}' is not unique in {o.table}: "
                           f"{rows:,} rows, {distinct:,} distinct values")
    a_rows, (a_distinct,), (a_nulls,) = _profile(engine, a.table, [a.key])
    if a_rows != rows:
        raise AnonsqlError(f"the tables differ in row count: {o.table} has {rows:,} rows, "
                           f"{a.table} has {a_rows:,}")
    if a_nulls or a_distinct != a_rows:
        raise AnonsqlError(f"key column '{a.key}' is not unique and non-NULL in {a.table}: {a_rows:,} rows, "
                           f"{a_distinct:,} distinct values, {a_nulls:,} NULL")
    text, params = sql.render(
        "evaluate/alignment", engine.dialect, original=o.table.expr, anonymized=a.table.expr,
        o_key=sql.column(o.key, "o"), a_key=sql.column(a.key, "a"),
        o_cls=sql.column(o.class_column, "o"), a_cls=sql.column(a.class_column, "a"))
    matched, changed = (int(v) for v in engine.fetch_all(text, params)[0])
    if matched != rows:
        raise AnonsqlError(f"the tables hold different keys: {rows - matched:,} of the {rows:,} values of "
                           f"'{o.key}' in {o.table} have no row in {a.table}")
    if changed:
        raise AnonsqlError(f"{changed:,} row(s) have a different '{o.class_column}' in {a.table} than in "
                           f"{o.table}; evaluation expects the anonymizer to keep the class column")
    counts = stats.class_counts(engine, o.table, o.class_column)
    smallest = int(np.argmin(counts.counts))
    if folds > counts.counts[smallest]:
        raise AnonsqlError(f"folds ({folds}) exceeds the rows of the smallest class "
                           f"('{counts.values[smallest]}': {counts.counts[smallest]}); use --folds "
                           f"{max(int(counts.counts[smallest]), 2)} or fewer")
    return rows


# --- coding the fetched frames -----------------------------------------------------------

class Coder:
    """Codes the fetched Arrow tables against shared dictionaries: per attribute j the values
    of every table (-1 for NULL), the class labels sorted (ties go to the first label).

    Each column is dictionary-encoded by Arrow, so only the small dictionaries become Python
    values: their union is sorted once (anonsql's order, not the engine's collation) and every
    table's indices are remapped into it by one numpy lookup. Memory follows the fetched count
    tables as integers, never one Python object per cell.

    Tables named nb_* are naive Bayes counts (fold, g_1..g_M, x_1..x_M, c, n); the others
    are combinations (fold, y_1..y_M, c, n)."""

    def __init__(self, m: int, frames: dict[str, pa.Table]):
        self.m = m
        # per table: fold, count n, and for nb_* tables the GROUPING flags g_1..g_M
        self._columns = {name: (_ints(t.column(0)), _ints(t.column(t.num_columns - 1)),
                                np.column_stack([_ints(t.column(1 + j)) for j in range(m)])
                                if name.startswith("nb_") else None) for name, t in frames.items()}
        self._attr_codes: dict[str, list[np.ndarray]] = {name: [] for name in frames}
        self.values = []
        for j in range(m):
            codes, uniques = _factorize({name: t.column(self._value_cols(name)[j]) for name, t in frames.items()})
            for name, c in codes.items():
                self._attr_codes[name].append(c)
            self.values.append(uniques)
        self._class_codes, self.class_values = _factorize(
            {name: t.column(self._class_col(name)) for name, t in frames.items()})

    @property
    def domain(self) -> list[int]:
        """|V_j|: the number of distinct non-NULL values of each attribute over every frame."""
        return [len(v) for v in self.values]

    def _value_cols(self, name: str) -> list[int]:
        start = 1 + self.m if name.startswith("nb_") else 1
        return list(range(start, start + self.m))

    def _class_col(self, name: str) -> int:
        return 1 + 2 * self.m if name.startswith("nb_") else 1 + self.m

    def combos(self, name: str) -> FoldCombos:
        """The table as arrays in a canonical order (fold, codes, class): the same table gives
        the same arrays on every engine. Once per table: its arrays are handed over."""
        fold, n, _ = self._columns.pop(name)
        codes = np.column_stack(self._attr_codes.pop(name))
        classes = self._class_codes.pop(name).astype(np.int64)
        order = np.lexsort((classes, *(codes[:, j] for j in reversed(range(self.m))), fold))
        return FoldCombos(fold[order], codes[order], classes[order], n[order])

    def nb_counts(self, name: str, n_folds: int) -> FoldNBCounts:
        """N_f(x_j, c) per attribute and N_f(c) from the GROUPING SETS rows of an nb_* table
        (once per table, like combos)."""
        fold, n, grouping = self._columns.pop(name)
        assert grouping is not None
        cls = self._class_codes.pop(name).astype(np.int64)
        attr_codes = self._attr_codes.pop(name)
        n_classes = len(self.class_values)
        class_rows = grouping.all(axis=1)
        by_class = np.zeros((n_folds, n_classes), np.int64)
        np.add.at(by_class, (fold[class_rows], cls[class_rows]), n[class_rows])
        attr = []
        for j in range(self.m):
            code = attr_codes[j]
            rows = (grouping[:, j] == 0) & (code >= 0)  # attribute j's set, non-NULL x_j
            table = np.zeros((n_folds, len(self.values[j]), n_classes), np.int64)
            np.add.at(table, (fold[rows], code[rows], cls[rows]), n[rows])
            attr.append(table)
        return FoldNBCounts(attr, by_class)


def _ints(col: pa.ChunkedArray) -> np.ndarray:
    return col.to_numpy().astype(np.int64)


def _factorize(parts: dict[str, pa.ChunkedArray]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Codes of several columns against one sorted dictionary of their non-NULL values (-1 =
    NULL, and so is a float NaN). Values of different types (e.g. a generalized integer
    column) do not sort: then the dictionary is in order of first appearance."""
    encoded = {name: pc.dictionary_encode(col.combine_chunks() if col.num_chunks != 1 else col.chunk(0))
               for name, col in parts.items()}
    dicts = [np.array(e.dictionary.to_pylist() + [None], dtype=object) for e in encoded.values()]
    joined = np.concatenate(dicts)
    joined[pd.isna(joined)] = None  # NaN is NULL, as pandas read it
    try:
        codes, uniques = pd.factorize(joined, sort=True, use_na_sentinel=True)
    except TypeError:
        codes, uniques = pd.factorize(joined, sort=False, use_na_sentinel=True)
    out, start = {}, 0
    for (name, e), d in zip(encoded.items(), dicts):
        lookup = codes[start : start + len(d)].astype(np.int32)  # the last entry: NULL -> -1
        out[name] = lookup[e.indices.fill_null(len(d) - 1).to_numpy()]
        start += len(d)
    return out, np.asarray(uniques, dtype=object)
