"""Decisions -> tables: the published table (values of safe cells only) and the private audit.

The published table marks every hidden cell alike (status 'suppressed', value NULL, the same
attacker's bounds for all with --bounds): whether a cell is a primary or a secondary, and why,
would give primaries back (a primary holds 1..n-1 rows, a secondary 0 or >= n), so statuses
and reasons live only in the private audit (`<out>_private_audit`).

Both are created by one statement each and filled with the decided rows in bulk; the
`--emit-sql` script holds the same statements with the rows spelled out, and the checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sqlglot import exp

from .. import sql
from ..engine import Engine
from ..errors import AnonsqlError
from ..rewrite import Script
from .cells import Grid
from .suppress import Outcome

PUBLISHED = ["grouping_id", "level", "value", "status", "lower", "upper"]
AUDIT = ["grouping_id", "level", "value", "n", "status", "reason", "detail", "lower", "upper", "lp_lower", "lp_upper"]
#: The status a published row shows, by the private status (s safe, z forced; u primary, x secondary).
SHOWN = {"s": "published", "z": "published", "u": "suppressed", "x": "suppressed"}


def check_names(dims: Sequence[str]) -> None:
    """The dimensions must not collide with the fixed columns of the written tables."""
    taken = sorted(set(dims) & set(PUBLISHED + AUDIT))
    if taken:
        raise AnonsqlError(f"dimension name(s) {', '.join(taken)} collide with the published table's columns "
                           f"({', '.join(dict.fromkeys(PUBLISHED + AUDIT))}); rename them in a view first")


@dataclass
class Publication:
    """The rows of the published table and of its audit, and where they go."""

    dims: list[str]
    out: exp.Table
    audit: exp.Table
    published: list[list[Any]]
    audited: list[list[Any]]
    integer: bool = False  # counts: the value columns are BIGINT

    @property
    def value_column(self) -> exp.ColumnDef:
        """The value column's definition: exact whole numbers for counts, double precision for sums."""
        return exp.ColumnDef(this=sql.ident("value"), kind=exp.DataType.build("BIGINT" if self.integer else "DOUBLE"))

    def execute(self, engine: Engine) -> None:
        """Create both tables and load their rows (the caller holds the transaction and has
        dropped what the run replaces: anonsql.catalog.staged_outputs)."""
        d = engine.dialect
        for name, table, columns, rows in self._tables():
            engine.execute(*sql.render(f"tables/{name}", d, out=table, label=[sql.ident(c) for c in self.dims],
                                       value=self.value_column))
            frame = pd.DataFrame(rows, columns=columns, dtype=object)
            engine.insert_rows(table, columns, frame)

    def _tables(self) -> list[tuple[str, exp.Table, list[str], list[list[Any]]]]:
        return [("create_published", self.out, [*self.dims, *PUBLISHED], self.published),
                ("create_audit", self.audit, [*self.dims, *AUDIT], self.audited)]

    def script(self, dialect: str, title: str, replaced: Sequence[exp.Table],
               checks: Sequence[tuple[str, str]]) -> str:
        """The same run as a reviewable script, ending with the verification queries."""
        text = Script(dialect, title, ["PRIVATE: the audit table's rows hold the TRUE values of the suppressed cells;",
                                       "keep this file as private as the source table."])
        for table in replaced:
            text.step("drop the old output, replaced by this run (sql/common/drop_table.sql)",
                      sql.readable("common/drop_table", dialect, tbl=table))
        for name, table, columns, rows in self._tables():
            text.step(f"sql/tables/{name}.sql", sql.readable(f"tables/{name}", dialect, out=table,
                                                             label=[sql.ident(c) for c in self.dims],
                                                             value=self.value_column))
            text.rows(f"its {len(rows):,} rows", table, columns, rows)
        for comment, query in checks:
            text.check(comment, query)
        return text.text()


def publication(grid: Grid, labels: Sequence[Sequence[Any]], outcome: Outcome, rules: Sequence[str],
                dims: Sequence[str], out: exp.Table, audit: exp.Table, *, bounds: bool,
                integer: bool) -> Publication:
    """One published row and one audit row per cell (`labels`: each dimension's labels by code, its
    total's last; `rules`: each cell's reason, e.g. 'frequency', 'secondary'); `integer`: the values
    are counts, written as whole numbers."""
    gid = grid.grouping_id
    published, audited = [], []
    for c, codes in enumerate(grid.codes):
        names = [labels[j][k] for j, k in enumerate(codes)]
        status = str(outcome.status[c])
        value: float | int = int(grid.value[c]) if integer else float(grid.value[c])
        lo, hi = (_plain(outcome.lower[c]), _plain(outcome.upper[c]))
        head = [*names, int(gid[c]), int(grid.level[c])]
        published.append([*head, value if status in "sz" else None, SHOWN[status],
                          lo if bounds else None, hi if bounds else None])
        audited.append([*head, value, int(grid.freq[c]), status, rules[c], outcome.reason[c], lo, hi,
                        _plain(outcome.lp_lower[c]), _plain(outcome.lp_upper[c])])
    return Publication(list(dims), out, audit, published, audited, integer)


def _plain(x: float) -> float | None:
    """A bound as stored: NULL when not computed (NaN) or unbounded (an upper end of +inf)."""
    return None if not np.isfinite(x) else float(x)
