"""Independent SQL checks of feature selection, run on the written output itself: AC >= k
(Zhang et al. Def. 6) recomputed from the published projection's containment supports, plain
k-anonymity of the projection for --privacy kanon, and the row counts of every output.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from .. import sql
from ..catalog import Table
from ..engine import Engine
from ..report import Report
from . import stats

AC_CHECK = "k-anonymity by containment (AC >= k)"


def measure(engine: Engine, table: Table, attrs: Sequence[str], class_column: str,
            classes: Sequence[Any]) -> stats.Containment:
    """AC(D), k-anonymity, DistCnt and HamDist of a written projection, by SQL."""
    return stats.containment(engine, table, attrs, class_column, classes)


def published(engine: Engine, report: Report, table: Table, attrs: Sequence[str], class_column: str,
              classes: Sequence[Any], *, rows: int, k: int, privacy: str) -> stats.Containment:
    """Record on `report` whether the published projection keeps the promise; return its figures."""
    figures = measure(engine, table, attrs, class_column, classes)
    query = "features/supports" if attrs else "common/row_count"
    report.check(AC_CHECK, figures.ac >= k, query, f"AC(D) = {figures.ac}, k = {k}")
    if privacy == "kanon":
        report.check("k-anonymity of the projection", figures.kanon >= k, query,
                     f"smallest group {figures.kanon}, k = {k}")
    report.check("row count kept", figures.rows == rows, query, f"{figures.rows:,} rows, the source {rows:,}")
    return figures


def ac_query(dialect: str, table: sql.TableName, attrs: Sequence[str]) -> str:
    """The reviewer's query: AC(D), the smallest group (k-anonymity) and the rows of a projection."""
    if not attrs:  # the empty projection: AC(D) = k-anonymity = the row count
        return sql.readable("common/row_count", dialect, tbl=table.expr)
    query = stats.supports_query(table, attrs)
    supports = exp.Subquery(this=query.tree, alias=exp.TableAlias(this=exp.to_identifier("s")))
    query.tree = exp.select(exp.Min(this=exp.column("support")).as_("ac"), exp.Min(this=exp.column("n")).as_("kanon"),
                            exp.Sum(this=exp.column("n")).as_("n")).from_(supports)
    return query.render(dialect, inline=True)[0]


def binarized(engine: Engine, report: Report, table: Table, names: Sequence[str], rows: int) -> dict[str, int]:
    """Record whether the binarized table kept every row; return the rows with a 1 per column."""
    row = engine.fetch_all(*sql.render_columns("features/binarize_ones", engine.dialect, "col", names,
                                               tbl=table.expr))[0]
    report.check("row count kept", int(row[0]) == rows, "features/binarize_ones",
                 f"{int(row[0]):,} rows, the source {rows:,}")
    return {n: int(v) for n, v in zip(names, row[1:])}


def binarized_query(dialect: str, table: sql.TableName, names: Sequence[str]) -> str:
    """The reviewer's query of a binarized table: rows, and rows with a 1 per derived column."""
    return sql.readable("features/binarize_ones", dialect, tbl=table.expr, col=sql.columns(names))
