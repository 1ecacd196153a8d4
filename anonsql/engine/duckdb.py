"""DuckDB engine: the embedded default, a file path (or ':memory:') and no server."""

from __future__ import annotations

import os
import re
import stat
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np

if TYPE_CHECKING:  # DuckDB imports them itself when a result is fetched as one (a fast start)
    import pandas as pd
    import pyarrow as pa
    from sqlglot import exp

from .. import sql
from ..errors import AnonsqlError, DatabaseError, first_line
from .base import Closing, Scrubbed, Traced, target_names

if TYPE_CHECKING:
    from ..sql import exp

#: DuckDB's row group: its unit of parallel work (a scan hands each thread whole row groups).
ROW_GROUP_ROWS = 122_880
#: The settings an owned session switches for a while (DuckDBEngine._switched): names from this
#: code, never a user's, so they may stand in the SET statement's text.
SWITCHED = ("checkpoint_threshold", "disabled_optimizers")
#: Every DuckDB database file has these bytes at this offset (its main header, after a checksum).
MAGIC, MAGIC_AT = b"DUCK", 8
#: The kinds of file people mistake for a database: the error for one of them says how to load it.
_LOADABLE = (".csv", ".tsv", ".txt", ".gz")
#: The name under which scrub() attaches the fresh file it copies the database into.
_REBUILD = "__anonsql_rebuild"


def _in_use(message: str) -> str | None:
    """DuckDB's lock error in a steward's words (it advises a -readonly flag of its own CLI, which
    anonsql has not): the file is in use by another process, named with its PID when DuckDB gives
    it. None for any other error.

    >>> _in_use('IO Error: Could not set lock on file "d.duckdb": Conflicting lock is held in /usr/bin/python3 '
    ...         '(PID 4242). See also https://duckdb.org/docs/current/connect/concurrency')
    'the file is in use by another process (/usr/bin/python3, PID 4242)'
    """
    if "Could not set lock on file" not in message:
        return None
    held = re.search(r"held in (.+?) \(PID (\d+)\)", message)
    return "the file is in use by another process" + (f" ({held.group(1)}, PID {held.group(2)})" if held else "")


#: How long a DuckDB file another process holds is waited for, in seconds, and what to say while
#: waiting (the command line's `--wait SECONDS`, anonsql.cli.options; 0: fail at once).
LOCK_WAIT: ContextVar[tuple[float, Callable[[str], None]]] = ContextVar(
    "LOCK_WAIT", default=(0.0, lambda line: print(line, file=sys.stderr)))


def _open(path: str, wait: float | None) -> duckdb.DuckDBPyConnection:
    """duckdb.connect(path), retried while another process holds the file's lock, up to `wait`
    seconds (default: LOCK_WAIT's); then, or at once without a wait, one error line naming the
    process that holds it."""
    seconds, say = LOCK_WAIT.get()
    seconds = seconds if wait is None else wait
    deadline, pause, said = time.monotonic() + seconds, 0.05, False
    while True:
        try:
            return duckdb.connect(path)
        except duckdb.Error as exc:
            held = _in_use(str(exc))
            if held is None:
                raise AnonsqlError(f"cannot open DuckDB database {path}: {first_line(exc)}") from None
            if time.monotonic() >= deadline:
                advice = (f"still in use after waiting {seconds:g} s" if seconds else
                          "retry when that process has ended, or wait for it with --wait SECONDS")
                raise AnonsqlError(f"cannot open DuckDB database {path}: {held}; {advice}") from None
            if not said:
                say(f"waiting up to {seconds:g} s for DuckDB database {path}: {held}")
                said = True
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(1.0, pause * 2)


class DuckDBEngine(Traced, Closing):  # Traced: the tracer hook, Engine.tracer; Closing: `with`
    """Runs anonsql's SQL on an embedded DuckDB database."""

    dialect = "duckdb"
    supports_update = True
    supports_transactions = True
    temp_schema: str | None = "temp"
    row_id: str | None = "rowid"
    pseudonymize_sql: str | None = "common/pseudonymize"
    text_nfc_sql = "common/text_nfc"
    same_text_kinds: tuple[str, ...] | None = None
    exact_numeric = False
    exact_digits: int | None = None
    rename_qualified = False
    plans_from_statistics = False
    matches_by_value = False  # DuckDB codes the rows faster than it hashes their values
    dictionaries_read_groups = True  # as fast at 10^7 rows, 12 ms faster on Adult
    broadcast_hints = False
    reads_csv = True
    recodes_globally = True

    def __init__(self, path: str, *, create: bool = False, wait: float | None = None):
        check_path(path, create)
        self._con = _open(path, wait)
        try:
            # DuckDB's progress bar writes to stdout, ahead of --json output; progress is ours, on stderr
            self._con.execute("SET enable_progress_bar = false")
            # DuckDB's allocator keeps the pages a query freed until its next allocation: a
            # background thread hands them back, so the numpy/scikit-learn work that follows
            # the statistics (kanon's loop, evaluate's trees) does not sit on ~0.2 GB more
            self._con.execute("SET allocator_background_threads = true")
        except duckdb.Error as exc:
            self._con.close()
            raise AnonsqlError(f"cannot open DuckDB database {path}: {first_line(exc)}") from None
        self.url = path
        self._depth = 0
        self._owned = True
        self._restore: list[tuple[str, dict[str, str]]] = []

    @classmethod
    def wrap(cls, con: duckdb.DuckDBPyConnection) -> DuckDBEngine:
        """An engine over a caller's open connection; `close()` leaves that connection open."""
        engine = cls.__new__(cls)
        engine._con, engine.url, engine._depth, engine._owned = con, "<open DuckDB connection>", 0, False
        engine._restore = []
        return engine

    def _run(self, sql: str, params: Mapping[str, Any] | None):
        self._trace(sql, params)
        try:
            return self._con.execute(sql, dict(params) if params else None)
        except duckdb.Error as exc:
            raise DatabaseError(first_line(exc), sql) from exc

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> None:
        self._run(sql, params)

    def fetch_all(self, sql: str, params: Mapping[str, Any] | None = None) -> list[tuple]:
        return self._run(sql, params).fetchall()

    def fetch_df(self, sql: str, params: Mapping[str, Any] | None = None) -> pd.DataFrame:
        return self._run(sql, params).df()

    def fetch_arrow(self, sql: str, params: Mapping[str, Any] | None = None) -> pa.Table:
        with warnings.catch_warnings():
            # DuckDB warns that a DB-API result copies once more than con.sql(); parameters
            # need the DB-API path, and the results anonsql fetches are small.
            warnings.simplefilter("ignore", UserWarning)
            return self._run(sql, params).to_arrow_table()

    def fetch_columns(self, sql: str, params: Mapping[str, Any] | None = None) -> list[np.ndarray]:
        return [_unmasked(col) for col in self._run(sql, params).fetchnumpy().values()]  # repeated names: a_1

    @contextmanager
    def transaction(self) -> Iterator[None]:
        if self._depth:  # DuckDB has no savepoints: an inner block joins the outer one
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self._con.begin()
        self._depth = 1
        try:
            yield
        except BaseException:
            self._con.rollback()
            raise
        else:
            self._commit()
        finally:
            self._depth = 0
            for statement, params in self._restore:  # see _switched
                self._con.execute(statement, params)
            self._restore.clear()

    def _commit(self) -> None:
        """Commit by checkpoint: a commit that checkpoints writes its changes to the database file
        directly, durable when COMMIT returns, instead of to the WAL first and the file again at
        close (DuckDB's checkpoint_threshold; Adult kanon: commit and close 30 -> 22 ms; an UPDATE
        in place is no longer logged row by row). So an owned session's threshold is 0 for its
        commit. A caller's own connection keeps its settings."""
        with self._switched("checkpoint_threshold", "0b"):
            self._con.commit()

    @contextmanager
    def _switched(self, setting: str, value: str) -> Iterator[None]:
        """An owned session's `setting` (one of SWITCHED) at `value` inside, then back to what it
        was: DuckDB's settings are global to the database, which another connection of this
        process may share. A failure that aborted an open transaction leaves it refusing SET: the
        old value then comes back after the rollback (transaction()). A caller's own connection
        keeps its settings."""
        if not self._owned:
            yield
            return
        if setting not in SWITCHED:
            raise ValueError(f"not a setting anonsql switches: {setting}")
        before = self._con.execute("SELECT current_setting($s)", {"s": setting}).fetchall()[0][0]
        self._con.execute(f"SET {setting} = $v", {"v": value})
        restore = (f"SET {setting} = $v", {"v": before})
        done = False
        try:
            yield
            done = True
        finally:
            if done or not self._depth:
                self._con.execute(*restore)
            else:
                self._restore.append(restore)

    def insert_rows(self, table: exp.Table, columns: Sequence[str],
                    frame: pd.DataFrame | Mapping[str, np.ndarray]) -> None:
        # The frame is registered under a fixed internal name, so no user text reaches SQL.
        table_sql, columns_sql = target_names(table, columns, self.dialect)
        self._con.register("__anonsql_frame", frame)
        try:
            self._run(f"INSERT INTO {table_sql} ({columns_sql}) SELECT * FROM __anonsql_frame", None)
        finally:
            self._con.unregister("__anonsql_frame")

    @staticmethod
    def integer_type(largest: int) -> str:
        """The column type for exact integers up to `largest`: BIGINT, DECIMAL(38, 0), else BIGNUM (any length)."""
        return "BIGINT" if largest < 2**63 else "DECIMAL(38, 0)" if largest < 10**38 else "BIGNUM"

    def table_columns(self, name: str, schema: str | None) -> list[tuple]:
        """From duckdb_columns(), which information_schema.columns is a view over
        (sql/common/table_columns_duckdb.sql)."""
        return self.fetch_all(*sql.render("common/table_columns_duckdb", self.dialect, table_name=name,
                                          schema_name=schema))

    @contextmanager
    def committing(self) -> Iterator[None]:
        """Nothing to allow: the staged output is the caller's transaction."""
        yield

    @contextmanager
    def holding(self, table: exp.Table, waiting: Callable[[], None]) -> Iterator[None]:
        """Nothing to hold: DuckDB's file lock already keeps other writers out."""
        yield

    def expect_rows(self, rows: int) -> None:
        """A table of at most one row group is read by one thread whatever the setting, while
        the idle workers' task hand-offs still cost every statement (kanon, whole process: Adult
        -20 ms; 10^5 rows: 40 ms less SQL): such a session runs on one thread. A caller's own
        connection (`wrap`) keeps its settings."""
        if self._owned and rows <= ROW_GROUP_ROWS:
            self._con.execute("SET threads = 1")

    @contextmanager
    def joins_as_written(self) -> Iterator[None]:
        """DuckDB orders a join of up to 11 relations exactly, by dynamic programming: ~2.7 ms of
        planning for each of a kanon run's three statements joining 9 value dictionaries (Adult
        whole process: -8 ms), where the written order, each lookup built on its small side
        (the build_side_probe_side optimizer stays on), is already the plan. So its join_order
        optimizer is off inside (_switched). A caller's own connection keeps its settings."""
        with self._switched("disabled_optimizers", "join_order"):
            yield

    def scrub(self, table: exp.Table) -> Scrubbed:
        """After an in-place run: rebuild the database file, so the original values of `table`
        are gone from it. DuckDB frees the blocks an UPDATE or DELETE replaced without zeroing
        them: after CHECKPOINT, even after VACUUM and FORCE CHECKPOINT, every old value is still
        in the file's bytes (issue 29). So the whole database is copied into a fresh file (ATTACH,
        COPY FROM DATABASE: schemas, tables, views, sequences, macros, indexes, comments), which
        replaces the old one by one rename, made while this connection still holds DuckDB's lock
        on the old file, so no other process writes in between. The in-place change committed
        before: if the rebuild fails, the old file stays whole with the change in it, the fresh
        file is removed and a warning says the file was not rebuilt. Only a file anonsql opened
        itself and that no other connection of this process shares (they would go on writing to
        the old file) is rebuilt; otherwise a warning says why not."""
        path = self.url
        if path.startswith(":memory:"):
            return Scrubbed(notes=("in place: the database is in memory, no file of it holds the original values",))
        why = ("the connection is the caller's (anonsql did not open the file)" if not self._owned
               else "the run is part of an open transaction" if self._depth
               else None)
        if why is None:
            others = self._con.execute("SELECT count FROM duckdb_connection_count()").fetchall()[0][0] - 1
            why = f"{others} other connection(s) of this process have it open" if others else None
        if why is not None:
            return Scrubbed(warnings=(f"in place: {path} was not rebuilt ({why}): the original values of {table.name} "
                                      "may still be readable in the database file's free blocks",))
        target = os.path.realpath(path)  # a symlink keeps pointing at the rebuilt file
        fresh = target + ".anonsql-rebuild"
        try:
            _remove(fresh)  # a rebuild killed before its rename left it: a copy made after that run's commit
            self._rebuild_into(fresh)
            os.chmod(fresh, stat.S_IMODE(os.stat(target).st_mode))
            _fsync(fresh)
            os.replace(fresh, target)
            _fsync(os.path.dirname(target))
        except (duckdb.Error, OSError) as exc:
            _remove(fresh)
            return Scrubbed(warnings=(f"in place: {path} was not rebuilt ({first_line(exc)}): the original values "
                                      f"of {table.name} may still be readable in the database file's free blocks",))
        self._con.close()  # the old file's last handle: its blocks go back to the filesystem
        self._con = DuckDBEngine(path)._con
        return Scrubbed(notes=(f"in place: {path} rebuilt from a fresh copy of the database, so the original values "
                               f"of {table.name} are gone from its bytes (copies made before, backups and the disk's "
                               "freed blocks are outside anonsql's reach)",))

    def _rebuild_into(self, fresh: str) -> None:
        """The whole database copied into the new file `fresh`, closed and durable; then a
        CHECKPOINT of the old one, so no WAL of it is left beside the file for DuckDB to replay
        into the rebuilt one. The names are DuckDB's own (current_database(), quoted by sqlglot)
        and a fixed alias: DuckDB takes neither a parameter there nor a sqlglot-parsed statement."""
        from ..sql import ident, text

        name = text(ident(self._con.execute("SELECT current_database()").fetchall()[0][0]), self.dialect)
        self._con.execute(f"ATTACH $path AS {_REBUILD}", {"path": fresh})
        try:
            self._con.execute(f"COPY FROM DATABASE {name} TO {_REBUILD}")
        finally:
            self._con.execute(f"DETACH {_REBUILD}")
        self._con.execute("CHECKPOINT")

    def close(self) -> None:
        if self._owned:
            self._con.close()


def check_path(path: str, create: bool) -> None:
    """--db names a DuckDB database: ':memory:' spelled out, an existing DuckDB file, or a new
    file where `create` (only `load` and `dataset`: every other command reads or writes tables
    that must already exist). Anything else is one error line before DuckDB sees the path:
    DuckDB opened a CSV file given as --db as an empty in-memory database, so a run reported
    success and its output existed nowhere (issue 29)."""
    if path.startswith(":memory:"):
        return
    if not path:
        raise AnonsqlError("no database given: name a DuckDB file, a postgresql:// URL or ':memory:'")
    if not os.path.exists(path):
        if create:
            return
        raise AnonsqlError(f"DuckDB database file not found: {path} (only `anonsql load` and `anonsql dataset` "
                           "create one)")
    try:
        with open(path, "rb") as file:
            head = file.read(MAGIC_AT + len(MAGIC))
    except OSError as exc:
        raise AnonsqlError(f"cannot read {path}: {exc.strerror}") from None
    if head[MAGIC_AT:] != MAGIC:
        how = (f"; load it with `anonsql load {path} --db <file>.duckdb --table <name>`"
               if path.lower().endswith(_LOADABLE) else ": give a DuckDB file, a postgresql:// URL or ':memory:'")
        raise AnonsqlError(f"{path} is not a DuckDB database{how}")


def _remove(path: str) -> None:
    """Remove a file and its WAL, if there."""
    for name in (path, path + ".wal"):
        if os.path.lexists(name):
            os.remove(name)


def _fsync(path: str) -> None:
    """Flush a file, or a folder's entries (a rename), to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unmasked(col: np.ndarray) -> np.ndarray:
    """A column of fetchnumpy without numpy's mask: where it has NULLs, an object array with None.
    A plain array (a column without NULLs) returns before numpy.ma is touched: importing it costs
    a short run ~7 ms (DuckDB imports it itself when it builds a masked column)."""
    if type(col) is np.ndarray or not np.ma.isMaskedArray(col):
        return np.asarray(col)
    if not col.mask.any():
        return np.ma.getdata(col)
    out = np.ma.getdata(col).astype(object)
    out[np.ma.getmaskarray(col)] = None
    return out
