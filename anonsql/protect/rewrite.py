"""Decisions -> SQL: write a protect run back set-based, or as the reviewable `--emit-sql` script.

One sequence of statements serves both: `write_back` sends it to an `Apply` (the job's
transaction, values as bound parameters) or to an `Emit` (a `Script`, values as literals).
It copies the source (unless in place), creates `<out>_changes(key, column_name, old_value,
new_value)`, loads the decisions relation (row key, column, new value; NULL is ν, for deletion
is generalization to NULL), records the old values, then per column one UPDATE writes the
labels and one the NULLs; removed tuples go last. The changes table (and the script's
confidential-cell list) name ORIGINAL confidential values: keep them private.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pandas as pd
from sqlglot import exp

from .. import sql
from ..catalog import Table
from ..engine import Engine
from ..rewrite import Script

DECISIONS = sql.TableName("anonsql_protect_decisions").expr
CELLS = sql.TableName("anonsql_protect_cells").expr
REMOVED = sql.TableName("anonsql_protect_removed").expr
RELATION = ["row_key", "column_name", "new_value"]


@dataclass
class Decisions:
    """What a run writes: cells -> new value (None: ν), the confidential cells (for the checks)
    and the keys of the tuples removed (only with delete_rows)."""

    cells: list[tuple[Any, str, str | None]]  # (row key, column, new value)
    confidential: list[tuple[Any, str]]  # (row key, column)
    removed: list[Any] = field(default_factory=list)

    @property
    def columns(self) -> list[str]:
        """The changed columns, in decision order."""
        return list(dict.fromkeys(c for _, c, _ in self.cells))

    @property
    def labelled(self) -> set[str]:
        """The columns that receive taxonomy labels (they must hold text)."""
        return {c for _, c, v in self.cells if v is not None}


class Sink(Protocol):
    """Where the statements of a write-back go."""

    def statement(self, comment: str, name: str, **bindings: Any) -> None: ...

    def rows(self, comment: str, table: exp.Table, rows: Sequence[tuple[Any, ...]]) -> None: ...


class Apply:
    """Run the statements on an engine (inside the caller's transaction)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def statement(self, comment: str, name: str, **bindings: Any) -> None:
        self.engine.execute(*sql.render(name, self.engine.dialect, **bindings))

    def rows(self, comment: str, table: exp.Table, rows: Sequence[tuple[Any, ...]]) -> None:
        if rows:
            frame = pd.DataFrame([list(r) + [None] * (3 - len(r)) for r in rows], columns=RELATION)
            self.engine.insert_rows(table.sql(self.engine.dialect), ", ".join(RELATION), frame.astype(object))


class Emit:
    """Write the statements into a reviewable script."""

    def __init__(self, script: Script) -> None:
        self.script = script

    def statement(self, comment: str, name: str, **bindings: Any) -> None:
        self.script.step(comment, sql.readable(name, self.script.dialect, **bindings))

    def rows(self, comment: str, table: exp.Table, rows: Sequence[tuple[Any, ...]]) -> None:
        width = max((len(r) for r in rows), default=len(RELATION))
        self.script.rows(comment, table, RELATION[:width], rows)


def write_back(sink: Sink, source: Table, out: sql.TableName, changes: sql.TableName, key: str,
               decisions: Decisions, *, in_place: bool, drop: Sequence[exp.Table] = ()) -> None:
    """The statements of a run, in order (see the module docstring)."""
    k = sql.column(key)
    for tbl in drop:
        sink.statement("replace the existing output", "common/drop_table", tbl=tbl)
    if not in_place:
        sink.statement(f"copy {source} to {out}", "common/copy_table", out=out.expr, src=source.expr)
    sink.statement(f"{changes}: every changed cell's ORIGINAL and new value (private)", "protect/changes_table",
                   changes=changes.expr, tbl=source.expr, key=k)
    relations: list[tuple[exp.Table, str, Sequence[tuple[Any, ...]]]] = [
        (DECISIONS, "the decisions: (row key, column, new value), NULL = hidden", decisions.cells),
        (CELLS, "the confidential cells (private), for the verification queries", decisions.confidential)]
    if decisions.removed:
        relations.append((REMOVED, "the tuples to remove (--delete-rows)", [(r,) for r in decisions.removed]))
    for tbl, comment, rows in relations:
        sink.statement(f"working relation {tbl.name}", "common/drop_temp_table", tbl=tbl)
        sink.statement(f"working relation {tbl.name}", "protect/decisions_table", decisions=tbl, tbl=source.expr,
                       key=k)
        sink.rows(comment, tbl, rows)
    for name in decisions.columns:
        col, where = sql.column(name), dict(out=out.expr, decisions=DECISIONS, key=k, col_name=name)
        if name in decisions.labelled and source.column(name).kind != "text":
            sink.statement(f"{name} receives taxonomy labels: it becomes text", "protect/column_to_text",
                           out=out.expr, col=sql.ident(name))
        sink.statement(f"record the changes of {name}", "protect/record_changes", changes=changes.expr,
                       col=col, **where)
        if name in decisions.labelled:
            sink.statement(f"generalize cells of {name}", "protect/generalize_cells", col=sql.ident(name), **where)
        sink.statement(f"hide cells of {name}", "protect/null_cells", col=sql.ident(name), **where)
    if decisions.removed:
        sink.statement("remove the deleted tuples", "protect/delete_rows", out=out.expr, deleted=REMOVED, key=k)


def cleanup(engine: Engine) -> None:
    """Drop the working relations of `write_back` (the script leaves them for its checks)."""
    for tbl in (DECISIONS, CELLS, REMOVED):
        engine.execute(*sql.render("common/drop_temp_table", engine.dialect, tbl=tbl))
