"""Count tables computed in SQL and returned as numpy arrays with value dictionaries.

Values are coded per column: codes 0..|V_j|-1 index the sorted distinct non-NULL values
(the dictionary), and -1 stands for NULL, the papers' ⊥. Rows are never dropped for NULLs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import sql
from .catalog import Table
from .engine import Engine

NULL_CODE = -1


def encode(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes (int32, -1 for NULL) and the sorted dictionary of distinct non-NULL values."""
    codes, uniques = pd.factorize(values, sort=True, use_na_sentinel=True)
    return codes.astype(np.int32), np.asarray(uniques, dtype=object)


@dataclass
class ClassCounts:
    """N(c): class labels (sorted) and their row counts."""

    values: np.ndarray
    counts: np.ndarray

    @property
    def total(self) -> int:
        return int(self.counts.sum())


@dataclass
class QIClassCounts:
    """N(y, c) over the tuple set S: one row per distinct (QI vector y, class c)."""

    qi: list[str]
    codes: np.ndarray  # (T, M) int32, -1 = ⊥
    classes: np.ndarray  # (T,) int32 index into class_values
    counts: np.ndarray  # (T,) int64
    values: list[np.ndarray]  # per QI j: code -> value
    class_values: np.ndarray
    keys: np.ndarray  # (T,) the group key of sql/group_key.sql, to address the group's rows

    @property
    def domain_sizes(self) -> np.ndarray:
        """|V_j|: distinct non-NULL values of each QI column."""
        return np.array([len(v) for v in self.values], dtype=np.int64)


@dataclass
class AttrClassCounts:
    """N(x_j, c) for every attribute j, plus N(⊥_j, c)."""

    attrs: list[str]
    values: list[np.ndarray]  # per attribute j: sorted distinct non-NULL values x_j
    counts: list[np.ndarray]  # per attribute j: (|V_j|, |C|) int64
    null_counts: np.ndarray  # (M, |C|) int64: N(⊥_j, c)
    class_values: np.ndarray


def class_counts(engine: Engine, table: Table, class_column: str) -> ClassCounts:
    text, params = sql.render("common/class_counts", engine.dialect, tbl=table.expr, cls=sql.column(class_column))
    df = engine.fetch_df(text, params)
    codes, values = encode(df["class_value"])
    order = np.argsort(np.where(codes < 0, len(values), codes), kind="stable")
    counts = df["n"].to_numpy(np.int64)[order]
    labels = np.array([values[c] if c >= 0 else None for c in codes[order]], dtype=object)
    return ClassCounts(labels, counts)


def qi_class_counts(engine: Engine, table: Table, qi: Sequence[str], class_column: str) -> QIClassCounts:
    """N(y, c) in one GROUP BY; the arrays are sorted by (class, y) for a canonical order."""
    text, params = sql.render(
        "common/qi_class_counts", engine.dialect, tbl=table.expr, qi=sql.columns(qi), cls=sql.column(class_column),
        group_key=sql.group_key(sql.columns([*qi, class_column])),
    )
    df = engine.fetch_df(text, params)
    encoded = [encode(df.iloc[:, j]) for j in range(len(qi))]
    classes, class_values = encode(df.iloc[:, len(qi)])
    codes = np.column_stack([c for c, _ in encoded]) if qi else np.zeros((len(df), 0), np.int32)
    counts = df["n"].to_numpy(np.int64)
    order = np.lexsort(tuple(codes[:, j] for j in reversed(range(len(qi)))) + (classes,))
    keys = df["group_key"].to_numpy(object)
    return QIClassCounts(
        list(qi), codes[order], classes[order], counts[order], [v for _, v in encoded], class_values, keys[order]
    )


def attr_class_counts(engine: Engine, table: Table, attrs: Sequence[str], class_column: str) -> AttrClassCounts:
    """N(x_j, c) for all attributes in one GROUPING SETS query (one scan, not one per j)."""
    m = len(attrs)
    text, params = sql.render("common/attr_class_counts", engine.dialect, tbl=table.expr, attr=sql.columns(attrs),
                              cls=sql.column(class_column))
    df = engine.fetch_df(text, params)
    classes, class_values = encode(df.iloc[:, 2 * m])
    n = df["n"].to_numpy(np.int64)
    values, counts, nulls = [], [], np.zeros((m, len(class_values)), np.int64)
    for j in range(m):
        rows = (df.iloc[:, j].to_numpy() == 0).nonzero()[0]
        codes, uniq = encode(df.iloc[rows, m + j])
        table_j = np.zeros((len(uniq), len(class_values)), np.int64)
        known = codes >= 0
        np.add.at(table_j, (codes[known], classes[rows][known]), n[rows][known])
        np.add.at(nulls[j], classes[rows][~known], n[rows][~known])
        values.append(uniq)
        counts.append(table_j)
    return AttrClassCounts(list(attrs), values, counts, nulls, class_values)
