"""A quick look from anonsql (`anonsql show`, `anonsql sql`): a table's first rows, or the rows of
one read-only query, as a text table or JSON. Nothing is written: a query that could change
anything (INSERT, UPDATE, DELETE, DDL, a data-modifying CTE, several statements) is refused
before it runs, and an accepted one still runs in a transaction that is rolled back."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, ClassVar

import sqlglot
from sqlglot import exp

from .. import sql
from ..catalog import get_table
from ..engine import Engine
from ..errors import AnonsqlError
from ..report import Report
from ..verify import shown_columns

#: Widest cell of the text table, in characters (longer values end in '…'; --json has them whole).
CELL = 40
#: Nodes of a statement that write: anywhere in the tree, they make the query a write.
_WRITES = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Alter, exp.Command,
           exp.TruncateTable, exp.Copy, exp.Set, exp.Transaction, exp.Commit, exp.Rollback, exp.Into)


@dataclass(kw_only=True)
class RowsReport(Report):
    """Rows for a person to look at: column names, the rows, and whether more were left out."""

    PROVES: ClassVar[bool] = False  # a look: it promises nothing
    #: the rows are the table's own values: never in a public artefact (Report.public_dict)
    PRIVATE: ClassVar[tuple[str, ...]] = ("rows",)

    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    limit: int = 0
    more: bool = False  # rows beyond the limit exist

    def lines(self) -> list[str]:
        cells = [self.columns] + [[_cell(v) for v in row] for row in self.rows]
        widths = [max(len(r[j]) for r in cells) for j in range(len(self.columns))]
        text = ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in cells]
        text.insert(1, "  ".join("-" * w for w in widths))
        more = f"; more exist beyond --limit {self.limit}" if self.more else ""
        return [*text, f"({len(self.rows):,} row{'s' if len(self.rows) != 1 else ''} of {self.table}{more})"]


def _cell(value: Any) -> str:
    text = "NULL" if value is None else str(value)
    text = text.replace("\n", "\\n")
    return text if len(text) <= CELL else text[:CELL - 1] + "…"


def show_table(engine: Engine, table: str, limit: int) -> RowsReport:
    """The first `limit` rows of `table` (sql/data/show_rows.sql), one more fetched to tell if more exist."""
    tab = get_table(engine, table)
    text, params = sql.render("data/show_rows", engine.dialect, tbl=tab.expr,
                              shown=shown_columns(tab, tab.column_names), limit=limit + 1)
    found = engine.fetch_all(text, params)
    return RowsReport(table=str(tab), columns=list(tab.column_names), rows=[list(r) for r in found[:limit]],
                      limit=limit, more=len(found) > limit)


def read_only(engine: Engine, query: str) -> exp.Query:
    """The one statement of `query`, parsed in the engine's dialect, if it only reads: else one error line."""
    try:
        statements = [s for s in sqlglot.parse(query, read=engine.dialect) if s is not None]
    except sqlglot.errors.ParseError as exc:
        raise AnonsqlError(f"cannot parse the query as {engine.dialect} SQL, so cannot tell that it only reads: "
                           f"{str(exc).splitlines()[0]}") from None
    if len(statements) != 1:
        raise AnonsqlError(f"give one query, not {len(statements)} statements")
    (tree,) = statements
    writes = tree.find(*_WRITES) if isinstance(tree, exp.Query) else tree
    if writes is not None or not isinstance(tree, exp.Query):
        raise AnonsqlError(f"anonsql sql only reads: {(writes or tree).key.upper()} refused (run writes with your "
                           "database's own client)")
    return tree


class _Rollback(Exception):
    """Raised inside the query's transaction so that it ends rolled back."""


def read_query(engine: Engine, query: str, limit: int) -> RowsReport:
    """The rows of one read-only query (at most `limit`; one more fetched to tell if more exist),
    run in a transaction that is rolled back."""
    tree = read_only(engine, query)
    limited = tree if tree.args.get("limit") is not None else tree.limit(limit + 1)
    fetched = []
    with contextlib.suppress(_Rollback), engine.transaction():
        fetched.append(engine.fetch_arrow(limited.sql(engine.dialect)))
        raise _Rollback
    (found,) = fetched
    values = [found.column(j).to_pylist() for j in range(found.num_columns)]
    rows = [list(r) for r in zip(*values)]
    return RowsReport(table="the query", columns=list(found.column_names), rows=rows[:limit], limit=limit,
                      more=len(rows) > limit)
