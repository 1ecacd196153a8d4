"""Resolve user-typed table and column names against the database catalog.

Names are matched exactly first, then case-insensitively when that is unambiguous, so
`--table Adult` finds PostgreSQL's folded `adult` and a quoted `"Adult"` alike. Unknown
names are user errors that list what exists.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar, cast

from . import sql
from .engine import Engine
from .engine.base import StagingEngine
from .errors import AnonsqlError
from .report import fault_hook
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
        """The column a user-typed name refers to: exact match, else the unique one equal up to
        case, then up to Unicode normalization (NFC: an 'é' typed as one code point matches one
        stored as 'e' + a combining accent, which print alike), then up to both."""
        for c in self.columns:
            if c.name == name:
                return c
        for same in (str.lower, _nfc, lambda s: _nfc(s).lower()):
            matches = [c for c in self.columns if same(c.name) == same(name)]
            if len(matches) == 1:
                return matches[0]
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


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def find_table(engine: Engine, name: str | sql.TableName) -> Table | None:
    """The table `name` refers to, or None when there is none. Without transactions (Spark) a
    crashed run's working tables of that name are put right first (`recover`)."""
    ref = name if isinstance(name, sql.TableName) else sql.TableName.parse(name)
    recover(engine, ref)
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
    """(schema, table, column, type) rows for `ref` (Engine.table_columns): from information_schema
    (sql/common/table_columns.sql), on DuckDB from the function that view reads
    (table_columns_duckdb.sql), or on Spark, which has none, from its catalog."""
    return engine.table_columns(ref.name, ref.schema)


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
    """Rename `table` to `to` in its own schema; returns the new name. Only engines without
    transactions rename (a staged output's commit): Spark keeps the schema only if the new name
    names it, so it is qualified as the old one is."""
    new = sql.TableName(to, table.schema)
    engine.execute(*sql.render("common/rename_table", engine.dialect, tbl=table.expr, new=new.expr))
    return new


def _drop_if_exists(engine: Engine, table: sql.TableName) -> None:
    engine.execute(*sql.render("common/drop_temp_table", engine.dialect, tbl=table.expr))


# -- staged outputs: engines without transactions (Spark) ---------------------------------------------
#
# A staged write's working tables sit beside its output, in the output's schema, named
# <out>__anonsql_<role>_<run>, one <run> id shared by the outputs of one run:
#   stage  written and verified by the job's block (not yet known good);
#   ready  every output of the run verified: the commit has begun (its first rename is the point
#          from which a crashed run is finished, not undone);
#   old    the table an output replaces, moved aside until the new one holds the name.
# A crash (SIGKILL, power loss) at any moment leaves each output under its name, or leaves working
# tables from which `recover` puts it there, old or new, never neither.

_WORKING = re.compile(r"^(?P<out>\w+?)__anonsql_(?P<role>stage|ready|old)_(?P<run>[0-9a-f]{12})$")
#: The runs of this process whose staged block or commit is under way: recovery leaves them alone.
_RUNNING: set[str] = set()


def _working(out: sql.TableName, role: str, run: str) -> sql.TableName:
    return sql.TableName(f"{out.name}__anonsql_{role}_{run}", out.schema)


@contextmanager
def staged_output(engine: Engine, out: sql.TableName, replaces: Table | None = None) -> Iterator[sql.TableName]:
    """The name a writing job creates its output under, made the output only if the block succeeds.

    With transactions (DuckDB, PostgreSQL) that is `out` itself, inside the caller's transaction,
    after dropping `replaces`: a failure rolls all of it back. Without them (Spark) the block
    writes and verifies a staging table `<out>__anonsql_stage_<run>` in the same schema: if the
    block raises (a failed verification included) the staging table is dropped and nothing else
    was touched; if it succeeds it is committed (`_commit`), so the output name never holds
    unverified rows and a crash at any moment leaves the old or the new table under it (`recover`).
    """
    with staged_outputs(engine, [(out, replaces)]) as (stage,):
        yield stage


@contextmanager
def staged_outputs(engine: Engine, outputs: Sequence[tuple[sql.TableName, Table | None]]
                   ) -> Iterator[list[sql.TableName]]:
    """staged_output for tables published together (nbc's <out>_class and <out>_attr): each
    (output, the table it replaces) gets its staging name; only when the block succeeds are they
    all put in place (`_commit`), a failure putting back every table as it was."""
    if engine.supports_transactions:
        for _, replaces in outputs:
            if replaces is not None:
                drop_table(engine, replaces.expr)
        yield [out for out, _ in outputs]
        return
    staging = cast(StagingEngine, engine)
    run = uuid.uuid4().hex[:12]
    stages = [_working(out, "stage", run) for out, _ in outputs]
    _RUNNING.add(run)
    try:
        try:
            yield stages
        except BaseException:
            for stage in stages:
                _drop_if_exists(engine, stage)
            raise
        with staging.committing():
            _commit(engine, outputs, run)
    finally:
        _RUNNING.discard(run)


def _commit(engine: Engine, outputs: Sequence[tuple[sql.TableName, Table | None]], run: str) -> None:
    """Put a run's verified staging tables in place. First every stage becomes "ready" (from the
    first of these renames on, `recover` finishes the run: all its outputs were verified); then,
    output by output, the table it replaces moves aside ("old") and the ready one takes the name;
    the old ones are dropped last. A failure (not a crash) undoes it: the ready tables are dropped
    first (so a crash while undoing is not finished by `recover`), then every placed output, and
    the old tables get their names back."""
    readies: list[sql.TableName] = []
    done: list[tuple[sql.TableName, sql.TableName | None, bool]] = []  # (output, aside, placed)
    try:
        for out, _ in outputs:
            readies.append(rename_table(engine, _working(out, "stage", run), _working(out, "ready", run).name))
        fault_hook("ready")
        for (out, replaces), ready in zip(outputs, readies):
            aside = None
            if replaces is not None:
                old = sql.TableName(replaces.name, replaces.schema)
                aside = rename_table(engine, old, _working(out, "old", run).name)
            done.append((out, aside, False))
            fault_hook("swap")  # inside the rename window: the output's name is free here
            rename_table(engine, ready, out.name)
            done[-1] = (out, aside, True)
    except BaseException:
        for i, (out, _) in enumerate(outputs):
            if i >= len(done) or not done[i][2]:  # not placed: its staging table, "ready" or not yet
                for role in ("ready", "stage"):
                    _drop_if_exists(engine, _working(out, role, run))
        for out, aside, placed in reversed(done):
            if placed:
                drop_table(engine, out.expr)
            if aside is not None:
                rename_table(engine, aside, out.name)
        raise
    for _, aside, _ in done:
        if aside is not None:
            _drop_if_exists(engine, aside)


def recover(engine: Engine, ref: sql.TableName) -> list[str]:
    """Put right what a crashed staged run left of the output `ref` (engines without transactions;
    `find_table` calls it, so every command that opens a name does): see `recover_schema`.
    Returns what it did, one line each; nothing when `ref` has no working tables (one catalog
    lookup)."""
    if engine.supports_transactions:
        return []
    staging = cast(StagingEngine, engine)
    schema, names = staging.table_names(ref.schema, f"{ref.name}__anonsql_*")
    runs = {m["run"] for m in map(_WORKING.match, (n.lower() for n in names))
            if m and m["out"] == ref.name.lower()} - _RUNNING
    return recover_schema(staging, schema, runs) if runs else []


def recover_schema(engine: StagingEngine, schema: str | None, runs: set[str] | None = None) -> list[str]:
    """Put right every crashed run (or those of `runs`) with working tables in `schema`:

    * a run with a "ready" table had verified all its outputs and begun its commit: it is finished
      (each output not yet swapped gets its verified table, the one it replaces moved aside);
    * a run without one had not committed: its staging tables are dropped (stale), and a table it
      had moved aside gets its name back where the name is free (a failed commit that was undoing);
    * a table moved aside whose output holds its name again is dropped (the swap was complete).

    Runs under way in this process are left alone. Returns one line per action."""
    schema, names = engine.table_names(schema)
    existing = {n.lower() for n in names}
    runs_found: dict[str, dict[str, dict[str, str]]] = {}  # run -> output -> role -> table name
    for name in names:
        m = _WORKING.match(name.lower())
        if m and m["run"] not in _RUNNING and (runs is None or m["run"] in runs):
            runs_found.setdefault(m["run"], {}).setdefault(m["out"], {})[m["role"]] = name
    said: list[str] = []
    with engine.committing():
        for run, outs in sorted(runs_found.items()):
            said += _recover_run(engine, schema, run, outs, existing)
    return said


def _recover_run(engine: Engine, schema: str, run: str, outs: dict[str, dict[str, str]],
                 existing: set[str]) -> list[str]:
    finishing = any("ready" in roles for roles in outs.values())
    said = []
    for out, roles in sorted(outs.items()):
        target = sql.TableName(out, schema)
        pending = roles.get("ready") or roles.get("stage")
        if pending is not None and finishing and not (out in existing and "old" in roles):
            if out in existing:  # the table this output replaces, not yet moved aside
                roles["old"] = rename_table(engine, target, _working(target, "old", run).name).name
            rename_table(engine, sql.TableName(pending, schema), out)
            existing.add(out)
            said.append(f"{schema}.{out}: finished a crashed run's swap (its verified table {pending} took the name)")
        elif pending is not None:
            _drop_if_exists(engine, sql.TableName(pending, schema))
            said.append(f"{schema}.{out}: dropped {pending}, left by a run that did not commit")
        if "old" in roles:
            old = sql.TableName(roles["old"], schema)
            if out in existing:
                _drop_if_exists(engine, old)
                said.append(f"{schema}.{out}: dropped {roles['old']}, the table a finished run replaced")
            else:
                rename_table(engine, old, out)
                existing.add(out)
                said.append(f"{schema}.{out}: restored from {roles['old']} (a crashed run had moved it aside)")
    return said


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
    """An in-place run keeps its source stable for its whole life (Engine.holding): on PostgreSQL ONE transaction
    from the statistics to the commit, opened with LOCK TABLE ... IN SHARE ROW EXCLUSIVE MODE, so
    a concurrent INSERT/UPDATE/DELETE waits for the run instead of invalidating its statistics
    (readers go on). While another session holds a conflicting lock, "waiting for a lock on <table>"
    is said once per LOCK_ATTEMPT. DuckDB's file lock already keeps other writers out; a copy
    (not in place) reads the source and writes elsewhere, so neither needs more."""
    if not in_place:
        yield
        return
    with engine.holding(table.expr, lambda: say(f"waiting for a lock on {table} (another session is using it)")):
        yield
