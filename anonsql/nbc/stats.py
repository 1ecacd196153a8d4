"""The nbc statistics in SQL: the NBC-enabling views (P_c, N^i_{t,c}) of a table, and published
views read back, as a `Viewset` laid out on the source's values and class order.

NULL attribute values are ignored, as the paper's NBC counts complete (A_i, C) pairs: a row
with a NULL counts in P_c but in no N^i_{t,c}. Values and classes are their SQL text, coded by
the database (NaN is a value of its own, a 38-digit decimal stays exact).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from .. import sql
from ..catalog import Table, comparable
from ..engine import Engine
from ..errors import AnonsqlError
from .views import Number, Viewset


@dataclass
class Views:
    """(P, N) of a table, classes in precedence order (last wins ties), with their labels."""

    attrs: list[str]
    class_column: str
    classes: list[str]  # labels as text, precedence order
    values: list[list[str]]  # per attribute: value labels as text (sorted by the typed value)
    view: Viewset
    codes: np.ndarray  # distinct complete tuples of the table, as value indexes
    null_cells: list[int]  # per attribute: rows whose value is NULL (ignored in N^i)

    @property
    def rows(self) -> int:
        return int(sum(self.view.P))

    def ordered(self, order: Sequence[int]) -> Views:
        """The same views with the classes in `order` (indexes into `classes`)."""
        pick = list(order)
        view = Viewset([self.view.P[c] for c in pick], [[[row[c] for c in pick] for row in attr]
                                                         for attr in self.view.N])
        return replace(self, classes=[self.classes[c] for c in pick], view=view)


def load_views(engine: Engine, table: Table, attrs: Sequence[str], class_column: str) -> Views:
    """N^i_{t,c} in one scan (sql/common/attr_class_counts.sql: a grouping set (A_i, C) per
    attribute), P_c summed from the first attribute's set (its rows, NULL values included, are
    every row once), classes in SQL sort order; plus the table's distinct complete tuples
    (sql/nbc/complete_tuples.sql)."""
    comparable(table, [*attrs, class_column])
    m = len(attrs)  # >= 1: nbc.job._prepare refuses an empty --attrs
    text, params = sql.render("common/attr_class_counts", engine.dialect, tbl=table.expr,
                              attr=sql.columns(attrs), cls=sql.column(class_column))
    df = engine.fetch_df(text, params)
    g = df.iloc[:, :m].to_numpy(np.int64)
    n = df.iloc[:, 3 * m + 2].to_numpy(np.int64)
    class_codes = df.iloc[:, 3 * m].to_numpy(np.int64)
    class_text = dict(zip(class_codes.tolist(), df.iloc[:, 3 * m + 1]))
    C = int(class_codes.max(initial=-1)) + 1
    P = [0] * C
    for r in np.nonzero(g[:, 0] == 0)[0]:
        P[class_codes[r]] += int(n[r])
    N: list[list[list[Number]]] = []
    values: list[list[str]] = []
    nulls: list[int] = []
    for j in range(m):
        rows = np.nonzero(g[:, j] == 0)[0]
        codes = df.iloc[rows, m + j].to_numpy(np.int64)
        value_text = dict(zip(codes.tolist(), df.iloc[rows, 2 * m + j]))
        counts: list[list[Number]] = [[0] * C for _ in range(int(codes.max(initial=-1)) + 1)]
        null = 0
        for code, cls_code, cnt in zip(codes, class_codes[rows], n[rows]):
            if code < 0:
                null += int(cnt)
            else:
                counts[code][cls_code] += int(cnt)
        N.append(counts)
        values.append([value_text[i] for i in range(len(counts))])
        nulls.append(null)
    text, params = sql.render("nbc/complete_tuples", engine.dialect, tbl=table.expr, attr=sql.columns(attrs))
    complete = engine.fetch_df(text, params).dropna()
    index = [{x: t for t, x in enumerate(vals)} for vals in values]
    tuples = np.array([[index[j][x] for j, x in enumerate(row)] for row in complete.itertuples(index=False)],
                      dtype=np.int64).reshape(-1, m)
    return Views(list(attrs), class_column, [class_text[c] for c in range(C)], values, Viewset(P, N), tuples,
                 nulls)


def published_prior(engine: Engine, class_table: Table, attr_table: Table) -> dict[str, int]:
    """The prior weights F_c a publication was made r-close to, by class label (1: uniform)."""
    text, params = sql.render("nbc/read_published", engine.dialect, class_tbl=class_table.expr,
                              attr_tbl=attr_table.expr)
    return {label: int(f) for attr, _, label, _, f in engine.fetch_all(text, params) if attr is None and f is not None}


def read_published(engine: Engine, v: Views, class_table: Table, attr_table: Table) -> Viewset:
    """Published tables (sql/nbc/read_published.sql) as a viewset on the source's layout; rows
    the source does not know and missing (value, class) pairs are errors."""
    C = len(v.classes)
    P: list[int | None] = [None] * C
    N: list[list[list[int | None]]] = [[[None] * C for _ in vals] for vals in v.values]
    cls_pos = {c: i for i, c in enumerate(v.classes)}
    attr_pos = {a: i for i, a in enumerate(v.attrs)}
    val_pos = [{x: t for t, x in enumerate(vals)} for vals in v.values]
    text, params = sql.render("nbc/read_published", engine.dialect, class_tbl=class_table.expr,
                              attr_tbl=attr_table.expr)
    for attr, value, label, n, _ in engine.fetch_all(text, params):
        c = cls_pos.get(label)
        if attr is None:
            if c is None:
                raise AnonsqlError(f"published class {label!r} is not a class of the source")
            P[c] = int(n)
            continue
        i = attr_pos.get(attr)
        t = None if i is None else val_pos[i].get(value)
        if i is None or t is None or c is None:
            raise AnonsqlError(f"published row ({attr!r}, {value!r}, {label!r}) has no counterpart in the source")
        N[i][t][c] = int(n)
    missing = sum(x is None for x in P) + sum(x is None for attr in N for row in attr for x in row)
    if missing:
        raise AnonsqlError(f"the published tables lack {missing} counts of the source's (value, class) pairs")
    return Viewset([int(p or 0) for p in P], [[[int(x or 0) for x in row] for row in attr] for attr in N])
