"""DuckDB engine: the embedded default, a file path (or ':memory:') and no server."""

from __future__ import annotations

import importlib
import os
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

try:
    # DuckDB's extension module itself, which the duckdb package re-exports and extends with a
    # Python layer (relational and expression API, its version read through importlib.metadata):
    # importing the package costs every start ~40 ms more (kanon on Adult, whole process: -25 to
    # -30 ms). The engine calls the extension's own methods, save fetch_arrow's to_arrow_table,
    # which imports the package where it is used. The classes are the package's (a caller's
    # duckdb.connect() returns a _duckdb.DuckDBPyConnection). A DuckDB laid out otherwise: the package.
    import _duckdb as duckdb
except ImportError:  # pragma: no cover - DuckDB 2.0 has the module
    import duckdb  # type: ignore[no-redef]
import numpy as np

if TYPE_CHECKING:  # DuckDB imports them itself when a result is fetched as one (a fast start)
    import pandas as pd
    import pyarrow as pa
    from sqlglot import exp

    from ..sql import Name

from .. import sql
from ..errors import AnonsqlError, DatabaseError, first_line
from .base import target_names

#: DuckDB's row group: its unit of parallel work (a scan hands each thread whole row groups).
ROW_GROUP_ROWS = 122_880
#: The settings an owned session switches for a while (DuckDBEngine._switched): names from this
#: code, never a user's, so they may stand in the SET statement's text.
SWITCHED = ("checkpoint_threshold", "disabled_optimizers")


class DuckDBEngine:
    """Runs anonsql's SQL on an embedded DuckDB database."""

    dialect = "duckdb"
    supports_update = True
    supports_transactions = True
    temp_schema: str | None = "temp"
    row_id: str | None = "rowid"
    pseudonymize_sql: str | None = "common/pseudonymize"
    same_text_kinds: tuple[str, ...] | None = None
    exact_numeric = False
    exact_digits: int | None = None
    rename_qualified = False
    plans_from_statistics = False
    matches_by_value = False  # DuckDB codes the rows faster than it hashes their values
    sorts_grouping_sets = False
    dictionaries_read_groups = True  # as fast at 10^7 rows, 12 ms faster on Adult
    broadcast_hints = False
    reads_csv = True

    def __init__(self, path: str, *, create: bool = False):
        if path != ":memory:" and not create and not os.path.exists(path):
            raise AnonsqlError(f"DuckDB database file not found: {path}")
        try:
            self._con = duckdb.connect(path)
            # DuckDB's progress bar writes to stdout, ahead of --json output; progress is ours, on stderr
            self._con.execute("SET enable_progress_bar = false")
            # DuckDB's allocator keeps the pages a query freed until its next allocation: a
            # background thread hands them back, so the numpy/scikit-learn work that follows
            # the statistics (kanon's loop, evaluate's trees) does not sit on ~0.2 GB more
            self._con.execute("SET allocator_background_threads = true")
        except duckdb.Error as exc:
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
        # the duckdb package's Python layer adds to_arrow_table to the connection class (see the
        # import of _duckdb above); pyarrow's own import here costs far more
        importlib.import_module("duckdb")

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

    def insert_rows(self, table: exp.Table | Name, columns: Sequence[str],
                    frame: pd.DataFrame | Mapping[str, np.ndarray]) -> None:
        # The frame is registered under a fixed internal name, so no user text reaches SQL.
        table_sql, columns_sql = target_names(table, columns, self.dialect)
        self._con.register("__anonsql_frame", frame)
        try:
            self._run(f"INSERT INTO {table_sql} ({columns_sql}) SELECT * FROM __anonsql_frame", None)
        finally:
            self._con.unregister("__anonsql_frame")

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

    def close(self) -> None:
        if self._owned:
            self._con.close()


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
