"""Resolve user-typed table and column names against the database catalog.

Names are matched exactly first, then case-insensitively when that is unambiguous, so
`--table Adult` finds PostgreSQL's folded `adult` and a quoted `"Adult"` alike. Unknown
names are user errors that list what exists.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from . import sql
from .engine import Engine
from .errors import AnonsqlError, DatabaseError
from .sql import exp  # sqlglot.expressions, imported on first use

if TYPE_CHECKING:
    from .report import Report

_KINDS = {
    "text": ("char", "text", "string", "varchar", "uuid", "enum"),
    "integer": ("int", "serial"),
    "float": ("double", "float", "real"),
    "decimal": ("decimal", "numeric"),
    "boolean": ("bool",),
    "timestamp": ("timestamp",),
    "date": ("date",),
}


def type_kind(data_type: str) -> str:
    """A portable name for an engine's column type: DuckDB VARCHAR and PostgreSQL text are 'text'."""
    low = data_type.lower()
    for kind, stems in _KINDS.items():
        if any(stem in low for stem in stems):
            return kind
    return low


@dataclass(frozen=True)
class Column:
    name: str
    data_type: str

    @property
    def kind(self) -> str:
        return type_kind(self.data_type)


@dataclass(frozen=True)
class Table:
    """A table that exists, with its catalog spelling and columns."""

    schema: str
    name: str
    columns: tuple[Column, ...]
    qualified: bool = False  # the user named the schema, so messages show it

    @property
    def expr(self) -> exp.Table:
        return sql.TableName(self.name, self.schema).expr

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> Column:
        """The column a user-typed name refers to (exact match, else unique case-insensitive)."""
        for c in self.columns:
            if c.name == name:
                return c
        folded = [c for c in self.columns if c.name.lower() == name.lower()]
        if len(folded) == 1:
            return folded[0]
        listing = ", ".join(self.column_names)
        raise AnonsqlError(f"unknown column '{name}' in table {self}; its columns: {listing}")

    def resolve(self, names: Sequence[str]) -> list[str]:
        """Catalog spellings of `names`; duplicates are an error."""
        resolved = [self.column(n).name for n in names]
        dupes = sorted({n for n in resolved if resolved.count(n) > 1})
        if dupes:
            raise AnonsqlError(f"column listed twice: {', '.join(dupes)}")
        return resolved

    def __str__(self) -> str:
        return f"{self.schema}.{self.name}" if self.qualified else self.name


def find_table(engine: Engine, name: str | sql.TableName) -> Table | None:
    """The table `name` refers to, or None when there is none."""
    ref = name if isinstance(name, sql.TableName) else sql.TableName.parse(name)
    rows = _table_columns(engine, ref)
    tables = {(r[0], r[1]) for r in rows}
    exact = [t for t in tables if t[1] == ref.name and (ref.schema is None or t[0] == ref.schema)]
    if len(exact) == 1:
        chosen = exact[0]
    elif len(tables) == 1:
        chosen = next(iter(tables))
    elif not tables:
        return None
    else:
        raise AnonsqlError(f"table name {ref} is ambiguous: {sorted(tables)}; quote it exactly")
    cols = tuple(Column(r[2], r[3]) for r in rows if (r[0], r[1]) == chosen)
    return Table(chosen[0], chosen[1], cols, qualified=ref.schema is not None)


def _table_columns(engine: Engine, ref: sql.TableName) -> list[tuple]:
    """(schema, table, column, type) rows for `ref`: from information_schema (sql/common/
    table_columns.sql), on DuckDB from the function that view reads (table_columns_duckdb.sql), or
    on Spark, which has none, from its catalog (SparkEngine.table_columns)."""
    if engine.dialect == "spark":
        return engine.table_columns(ref.name, ref.schema)  # type: ignore[attr-defined]
    query = "common/table_columns_duckdb" if engine.dialect == "duckdb" else "common/table_columns"
    text, params = sql.render(query, engine.dialect, table_name=ref.name, schema_name=ref.schema)
    return engine.fetch_all(text, params)


def get_table(engine: Engine, name: str | sql.TableName) -> Table:
    """The table `name` refers to; a user error when it does not exist."""
    table = find_table(engine, name)
    if table is None:
        raise AnonsqlError(f"table not found: {name}")
    return table


def output_table(engine: Engine, source: Table, out: str | None, default: str, replace: bool,
                 in_place: bool = False) -> tuple[sql.TableName, Table | None]:
    """Where a job writes: `out` (or `default` beside the source) and the table it replaces.

    `in_place` names the source itself (refused on engines without transactions). Otherwise
    writing over the source is refused and an existing output needs `replace`; the caller
    drops the returned table inside its own transaction, so a failed run leaves it in place.
    """
    if in_place:
        if out:
            raise AnonsqlError("--out and --in-place exclude each other")
        if not engine.supports_transactions:
            raise AnonsqlError(f"--in-place is not available on {engine.dialect}: without transactions the source "
                               "could be left missing or half-written; write to --out instead")
        return sql.TableName(source.name, source.schema if source.qualified else None), None
    ref = sql.TableName.parse(out) if out else sql.TableName(default, source.schema if source.qualified else None)
    existing = find_table(engine, ref)
    if existing is not None and (existing.schema, existing.name) == (source.schema, source.name):
        raise AnonsqlError(f"the output would overwrite the source table {source}")
    if existing is not None and not replace:
        raise AnonsqlError(f"output table {existing} already exists (use --replace to overwrite it)")
    return ref, existing


def drop_table(engine: Engine, table: exp.Table) -> None:
    """Drop a table (the caller holds the transaction that makes it safe)."""
    engine.execute(*sql.render("common/drop_table", engine.dialect, tbl=table))


def rename_table(engine: Engine, table: sql.TableName, to: str) -> sql.TableName:
    """Rename `table` to `to` in its own schema; returns the new name."""
    new = sql.TableName(to, table.schema)
    target = new.expr if engine.dialect == "spark" else sql.TableName(to).expr  # Spark keeps the schema only if named
    engine.execute(*sql.render("common/rename_table", engine.dialect, tbl=table.expr, new=target))
    return new


@contextmanager
def staged_output(engine: Engine, out: sql.TableName, replaces: Table | None = None) -> Iterator[sql.TableName]:
    """The name a writing job creates its output under, made the output only if the block succeeds.

    With transactions (DuckDB, PostgreSQL) that is `out` itself, inside the caller's transaction,
    after dropping `replaces`: a failure rolls all of it back. Without them (Spark) the block
    writes and verifies a staging table `<out>__anonsql_stage_<hex>` in the same schema: if the
    block raises (a failed verification included) the staging table is dropped and nothing else
    was touched; if it succeeds the old output is renamed aside, the staging table takes its
    name and the old one is dropped (renamed back if that fails), so the output name never holds
    unverified rows.
    """
    with staged_outputs(engine, [(out, replaces)]) as (stage,):
        yield stage


@contextmanager
def staged_outputs(engine: Engine, outputs: Sequence[tuple[sql.TableName, Table | None]]
                   ) -> Iterator[list[sql.TableName]]:
    """staged_output for tables published together (nbc's <out>_class and <out>_attr): each
    (output, the table it replaces) gets its staging name; only when the block succeeds are they
    all renamed into place, and a rename that fails puts back every rename done before it."""
    if engine.supports_transactions:
        for _, replaces in outputs:
            if replaces is not None:
                drop_table(engine, replaces.expr)
        yield [out for out, _ in outputs]
        return
    stages = [sql.TableName(f"{out.name}__anonsql_stage_{uuid.uuid4().hex[:12]}", out.schema) for out, _ in outputs]
    committing = getattr(engine, "committing", nullcontext)
    try:
        yield stages
    except BaseException:
        for stage in stages:
            engine.execute(*sql.render("common/drop_temp_table", engine.dialect, tbl=stage.expr))
        raise
    with committing():
        done: list[tuple[sql.TableName, sql.TableName | None, bool]] = []  # (output, aside, placed)
        try:
            for (out, replaces), stage in zip(outputs, stages):
                aside = None
                if replaces is not None:
                    old = sql.TableName(replaces.name, replaces.schema)
                    aside = rename_table(engine, old, f"{out.name}__anonsql_old_{uuid.uuid4().hex[:12]}")
                done.append((out, aside, False))
                rename_table(engine, stage, out.name)
                done[-1] = (out, aside, True)
        except BaseException:
            for out, aside, placed in reversed(done):
                if placed:
                    drop_table(engine, out.expr)
                if aside is not None:
                    rename_table(engine, aside, out.name)
            for stage in stages:
                engine.execute(*sql.render("common/drop_temp_table", engine.dialect, tbl=stage.expr))
            raise
        for _, aside, _ in done:
            if aside is not None:
                drop_table(engine, aside.expr)


def exact_text(table: Table, names: Sequence[str], purpose: str) -> None:
    """Refuse floating-point columns where their text is used (`purpose`, e.g. "a row key"):
    engines print doubles differently (DuckDB 1e+20, Spark 1.0E20, and -0.0 apart from 0.0), so
    a key or label built from that text would differ from one engine to another."""
    floats = [n for n in names if table.column(n).kind == "float"]
    if floats:
        raise AnonsqlError(f"column {', '.join(floats)} of {table} is floating-point and cannot be {purpose} "
                           "(its text differs between engines): cast it to DECIMAL or INTEGER first")


#: Column types without an equality (PostgreSQL's json, xml and geometric types): they can be
#: neither grouped nor compared, so they cannot be a quasi-identifier, an attribute or a class.
INCOMPARABLE = ("json", "xml", "point", "line", "lseg", "box", "path", "polygon", "circle", "txid_snapshot",
                "pg_snapshot")


def comparable(table: Table, names: Sequence[str]) -> None:
    """Refuse, in one line naming the column and its type, a column the database cannot group by
    (every other type works, NULL being a value of its own: see sql/common/qi_class_counts.sql)."""
    for name in names:
        col = table.column(name)
        if col.data_type.lower() in INCOMPARABLE:
            raise AnonsqlError(f"column '{col.name}' of {table} has type {col.data_type}, which the database cannot "
                               "compare or group: cast it to a comparable type (e.g. jsonb or text) first")


#: How long one attempt at the lock of an in-place run waits before saying so and trying again.
LOCK_ATTEMPT = "1s"
_LOCK_NOT_AVAILABLE = "55P03"  # PostgreSQL's SQLSTATE of a lock_timeout


R = TypeVar("R", bound="Report")


def in_place_run(engine: Engine, table: Table, in_place: bool, say: Callable[[str], None], work: Callable[[], R]) -> R:
    """`work()`, a job's run on `table`; in place, its source held stable from the statistics to
    the commit (holding_source), and once committed scrubbed of its original values: the
    engine makes them unrecoverable from the database files it controls (Engine.scrub: DuckDB
    rebuilds the file, PostgreSQL rewrites and re-analyzes the table). The report says what it
    did and, as a privacy warning, what it could not do or cannot reach. Always, not behind a
    --scrub flag: whoever asks for in place wants the originals gone, and a flag one can forget
    would leave them readable while the summary said the table was rewritten (issue 29)."""
    with holding_source(engine, table, in_place, say):
        report = work()
    if in_place:
        with report.timed("scrub"):
            done = engine.scrub(table.expr)
        report.notes += done.notes
        report.warnings += done.warnings
        for note in done.notes:
            say(note)
    return report


@contextmanager
def holding_source(engine: Engine, table: Table, in_place: bool, say: Callable[[str], None]) -> Iterator[None]:
    """An in-place run keeps its source stable for its whole life: on PostgreSQL ONE transaction
    from the statistics to the commit, opened with LOCK TABLE ... IN SHARE ROW EXCLUSIVE MODE, so
    a concurrent INSERT/UPDATE/DELETE waits for the run instead of invalidating its statistics
    (readers go on). While another session holds a conflicting lock, "waiting for a lock on <table>"
    is said once per LOCK_ATTEMPT. DuckDB's file lock already keeps other writers out; a copy
    (not in place) reads the source and writes elsewhere, so neither needs more."""
    if not in_place or engine.dialect != "postgres":
        yield
        return
    lock = exp.Command(this="LOCK", expression=f"TABLE {table.expr.sql(engine.dialect)} IN SHARE ROW EXCLUSIVE MODE")
    with engine.transaction():
        engine.fetch_all(*sql.render("common/lock_timeout", engine.dialect, timeout=LOCK_ATTEMPT))
        while True:
            try:
                with engine.transaction():  # a savepoint: a timed-out attempt leaves the transaction usable
                    engine.execute(lock.sql(engine.dialect))
                break
            except DatabaseError as exc:
                if getattr(exc.__cause__, "sqlstate", None) != _LOCK_NOT_AVAILABLE:
                    raise
                say(f"waiting for a lock on {table} (another session is using it)")
        engine.fetch_all(*sql.render("common/lock_timeout", engine.dialect, timeout="0"))
        yield
