"""PostgreSQL engine (psycopg 3): a real server reached by a postgresql:// URL."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    from sqlglot import exp

from .. import sql
from ..errors import AnonsqlError, DatabaseError, first_line, redact
from .base import Closing, Scrubbed, Traced, target_names

#: The session's work_mem when the server's is left at its default (sql/common/work_mem.sql).
WORK_MEM, WORK_MEM_BYTES = "256MB", 256 * 1024 * 1024


#: How long one attempt at the lock of an in-place run waits before saying so and trying again.
LOCK_ATTEMPT = "1s"
_LOCK_NOT_AVAILABLE = "55P03"  # PostgreSQL's SQLSTATE of a lock_timeout

#: numpy dtypes COPY sends in binary: the PostgreSQL type OID each must land in, and its wire format.
_BINARY = {np.dtype(np.int64): (20, ">i8"), np.dtype(np.bool_): (16, "u1"), np.dtype(np.float64): (701, ">f8")}

#: What no statement of a client can erase, said after every in-place run (Engine.scrub).
OUT_OF_REACH = ("the WAL (and any WAL archive), base backups, replicas and their lag, rows another session's older "
                "snapshot still sees (VACUUM FULL keeps them), pg_statistic's dead rows until the server vacuums it, "
                "and the disk blocks of the files PostgreSQL dropped")


class PostgresEngine(Traced, Closing):  # Traced: the tracer hook, Engine.tracer; Closing: `with`
    """Runs anonsql's SQL on a PostgreSQL server, autocommit outside `transaction()`."""

    dialect = "postgres"
    supports_update = True
    supports_transactions = True
    temp_schema: str | None = "pg_temp"
    row_id: str | None = "ctid"  # stable within the transaction that holds the table
    pseudonymize_sql: str | None = "common/pseudonymize_postgres"
    text_nfc_sql = "common/text_nfc_postgres"
    same_text_kinds: tuple[str, ...] | None = None
    exact_numeric = True
    exact_digits: int | None = None
    rename_qualified = False
    plans_from_statistics = True
    matches_by_value = True  # each dictionary lookup is a hash join of every row, ~150 ms per 10^6 rows and column
    dictionaries_read_groups = False  # 10^6 rows: 0.23 -> 0.13 s reading the column values first
    broadcast_hints = False
    reads_csv = False
    recodes_globally = True

    def __init__(self, url: str):
        try:
            import psycopg
        except ImportError:
            raise AnonsqlError(
                "PostgreSQL support needs psycopg: pip install 'anonsql[postgres]'"
            ) from None
        self._psycopg = psycopg
        try:
            self._con = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except (psycopg.Error, ValueError) as exc:
            message = f"cannot connect to PostgreSQL at {url}: {first_line(exc)}"
            raise AnonsqlError(redact(message)) from None
        self.url = url
        self._owned = True
        # JIT compiles our GROUP BY / GROUPING SETS scans at ~0.6 s each when the planner
        # overestimates them (fresh tables, no statistics) and never paid back on 1M rows.
        self.execute("SET jit = off")
        self.fetch_all(*sql.render("common/work_mem", "postgres", work_mem=WORK_MEM,
                                   work_mem_bytes=WORK_MEM_BYTES))

    @classmethod
    def wrap(cls, con: Any) -> PostgresEngine:
        """An engine over a caller's open psycopg connection, used as it is (no session settings
        changed); `close()` leaves it open. In autocommit mode each job commits its own
        transaction; otherwise the work joins the connection's transaction, for the caller to commit."""
        import psycopg

        engine = cls.__new__(cls)
        engine._psycopg, engine._con, engine._owned = psycopg, con, False
        engine.url = redact(con.info.dsn)
        return engine

    def _cursor_run(self, sql: str, params: Mapping[str, Any] | None):
        self._trace(sql, params)
        cur = self._con.cursor()
        try:
            cur.execute(*with_params(sql, params))
        except self._psycopg.Error as exc:
            cur.close()
            raise DatabaseError(first_line(exc), sql) from exc
        return cur

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> None:
        self._cursor_run(sql, params).close()

    def fetch_all(self, sql: str, params: Mapping[str, Any] | None = None) -> list[tuple]:
        with self._cursor_run(sql, params) as cur:
            return cur.fetchall()

    def fetch_df(self, sql: str, params: Mapping[str, Any] | None = None) -> pd.DataFrame:
        import pandas as pd  # where results are fetched, not at start (a fast start)

        with self._cursor_run(sql, params) as cur:
            names = [d.name for d in cur.description]
            return pd.DataFrame.from_records(cur.fetchall(), columns=names)

    def fetch_columns(self, sql: str, params: Mapping[str, Any] | None = None) -> list[np.ndarray]:
        with self._cursor_run(sql, params) as cur:
            rows, width = cur.fetchall(), len(cur.description)
            return [np.fromiter((r[i] for r in rows), dtype=object, count=len(rows)) for i in range(width)]

    def fetch_arrow(self, sql: str, params: Mapping[str, Any] | None = None) -> pa.Table:
        import pyarrow as pa

        frame = self.fetch_df(sql, params)  # column by column: a result may repeat a name (SELECT f.n, t.n)
        return pa.Table.from_arrays([pa.Array.from_pandas(frame.iloc[:, i]) for i in range(frame.shape[1])],
                                    names=[str(c) for c in frame.columns])

    @contextmanager
    def transaction(self) -> Iterator[None]:
        # psycopg turns a nested block into a savepoint, so inner failures stay contained.
        with self._con.transaction():
            yield

    def insert_rows(self, table: exp.Table, columns: Sequence[str],
                    frame: pd.DataFrame | Mapping[str, np.ndarray]) -> None:
        table_sql, columns_sql = target_names(table, columns, self.dialect)
        stmt = f"COPY {table_sql} ({columns_sql}) FROM STDIN"
        self._trace(stmt, None)
        if isinstance(frame, Mapping) and self._binary_copy(table_sql, columns_sql, frame):
            return
        # Column-wise .tolist() gives plain Python values, which psycopg adapts.
        if isinstance(frame, Mapping):  # numpy arrays by name: None already stands for NULL
            data = [frame[c].tolist() for c in frame]
        else:
            import pandas as pd

            data = [[None if pd.isna(v) else v for v in frame[c].tolist()] for c in frame.columns]
        try:
            with self._con.cursor() as cur, cur.copy(stmt) as copy:
                for row in zip(*data):
                    copy.write_row(row)
        except self._psycopg.Error as exc:
            raise DatabaseError(first_line(exc), stmt) from exc

    def _binary_copy(self, table_sql: str, columns_sql: str, frame: Mapping[str, np.ndarray]) -> bool:
        """COPY numpy columns of int64, bool or float64 (no NULLs) in PostgreSQL's binary format, the
        whole payload built by numpy, where the target columns are exactly BIGINT, BOOLEAN, DOUBLE
        PRECISION (checked first: binary COPY does not convert); False, having sent nothing, where not.
        Row by row, 187,000 decisions of 17 columns took 0.7 s; so, 0.12 s, most of it the server's."""
        arrays = list(frame.values())
        if not arrays or not all(isinstance(a, np.ndarray) and a.dtype in _BINARY for a in arrays):
            return False
        probe = f"SELECT {columns_sql} FROM {table_sql} LIMIT 0"
        with self._cursor_run(probe, None) as cur:
            if [c.type_code for c in cur.description] != [_BINARY[a.dtype][0] for a in arrays]:
                return False
        fields = [("n", ">i2")]
        for i, a in enumerate(arrays):
            fields += [(f"l{i}", ">i4"), (f"v{i}", _BINARY[a.dtype][1])]
        rows = np.empty(len(arrays[0]), dtype=fields)
        rows["n"] = len(arrays)
        for i, a in enumerate(arrays):
            rows[f"l{i}"], rows[f"v{i}"] = rows.dtype[f"v{i}"].itemsize, a
        stmt = f"COPY {table_sql} ({columns_sql}) FROM STDIN (FORMAT BINARY)"
        try:  # header, rows, trailer; the rows from numpy's buffer (one joined bytes copied those 28 MB twice: +0.04 s)
            with self._con.cursor() as cur, cur.copy(stmt) as copy:
                for part in (b"PGCOPY\n\xff\r\n\0" + bytes(8), rows.data.cast("B"), b"\xff\xff"):
                    copy.write(part)
        except self._psycopg.Error as exc:
            raise DatabaseError(first_line(exc), stmt) from exc
        return True

    @staticmethod
    def integer_type(largest: int) -> str:
        """The column type for exact integers up to `largest` (in DuckDB's spelling, the templates'):
        BIGINT, else NUMERIC of up to 1000 digits."""
        return "BIGINT" if largest < 2**63 else "DECIMAL(1000, 0)"

    def table_columns(self, name: str, schema: str | None) -> list[tuple]:
        return self.fetch_all(*sql.render("common/table_columns", self.dialect, table_name=name, schema_name=schema))

    @contextmanager
    def committing(self) -> Iterator[None]:
        """Nothing to allow: the staged output is the caller's transaction."""
        yield

    @contextmanager
    def holding(self, table: exp.Table, waiting: Callable[[], None]) -> Iterator[None]:
        """ONE transaction from the statistics to the commit, opened with LOCK TABLE ... IN SHARE ROW
        EXCLUSIVE MODE, so a concurrent INSERT/UPDATE/DELETE waits for the run instead of invalidating
        its statistics (readers go on). While another session holds a conflicting lock, `waiting()`
        is called once per LOCK_ATTEMPT."""
        lock = sql.exp.Command(this="LOCK", expression=f"TABLE {table.sql(self.dialect)} IN SHARE ROW EXCLUSIVE MODE")
        with self.transaction():
            self.fetch_all(*sql.render("common/lock_timeout", self.dialect, timeout=LOCK_ATTEMPT))
            while True:
                try:
                    with self.transaction():  # a savepoint: a timed-out attempt leaves the transaction usable
                        self.execute(lock.sql(self.dialect))
                    break
                except DatabaseError as exc:
                    if getattr(exc.__cause__, "sqlstate", None) != _LOCK_NOT_AVAILABLE:
                        raise
                    waiting()
            self.fetch_all(*sql.render("common/lock_timeout", self.dialect, timeout="0"))
            yield

    def expect_rows(self, rows: int) -> None:
        """Nothing to size: PostgreSQL's planner chooses parallel workers per query from its statistics."""

    @contextmanager
    def joins_as_written(self) -> Iterator[None]:
        """Nothing to switch: join_collapse_limit (8) already bounds PostgreSQL's search, which
        plans Adult's 9 dictionary joins in 0.5 ms (0.05 ms at a limit of 1: not worth the two
        round trips of a SET and a RESET)."""
        yield

    def scrub(self, table: exp.Table) -> Scrubbed:
        """After an in-place run: VACUUM (FULL, ANALYZE) of `table`. An UPDATE writes new row
        versions and leaves the old ones, original values and all, in the heap (and its TOAST
        and indexes) until VACUUM FULL rewrites the table into new files; ANALYZE then replaces
        its rows in pg_statistic (most common values, histogram bounds), which sampled the
        originals. VACUUM cannot run inside a transaction: the run's has committed (autocommit
        outside transaction()); a caller's connection in a transaction of its own is left alone,
        with a warning. What stays out of reach is said in every case (OUT_OF_REACH)."""
        name = sql.text(table, self.dialect)
        outside = f"in place on PostgreSQL, original values of {table.name} stay where anonsql cannot reach: " \
                  + OUT_OF_REACH
        if not self._con.autocommit or self._con.info.transaction_status != self._psycopg.pq.TransactionStatus.IDLE:
            return Scrubbed(warnings=(f"in place: {name} was not rewritten (the connection is in a transaction of the "
                                      f"caller's): run VACUUM (FULL, ANALYZE) {name} after it commits", outside))
        file = sql.render("common/relation_file", self.dialect, relation=name)
        before = self.fetch_all(*file)
        try:  # names quoted by sqlglot (sql.text); VACUUM takes no parameter and sqlglot parses it as text
            self.execute(f"VACUUM (FULL, ANALYZE) {name}")
        except DatabaseError as exc:
            return Scrubbed(warnings=(f"in place: {name} was not rewritten ({first_line(exc)}): run VACUUM (FULL, "
                                      f"ANALYZE) {name} as its owner", outside))
        if self.fetch_all(*file) == before:  # skipped with a server WARNING: not the table's owner
            return Scrubbed(warnings=(f"in place: {name} was not rewritten (VACUUM FULL needs the table's owner): "
                                      f"run VACUUM (FULL, ANALYZE) {name} as its owner", outside))
        return Scrubbed(notes=(f"in place: VACUUM (FULL, ANALYZE) rewrote {name} into new files and refreshed its "
                               "statistics",), warnings=(outside,))

    def close(self) -> None:
        if self._owned:
            self._con.close()



def with_params(sql: str, params: Mapping[str, Any] | None) -> tuple[str, dict[str, Any] | None]:
    """The text and parameters psycopg expects: with parameters, every `%` that is not one of
    our `%(name)s` markers is doubled, so a table or column named `100%` stays a name.

    >>> with_params('SELECT "a%b" FROM t WHERE x = %(k)s', {"k": 1})
    ('SELECT "a%%b" FROM t WHERE x = %(k)s', {'k': 1})
    >>> with_params('SELECT "a%b"', None)
    ('SELECT "a%b"', None)
    """
    if not params:
        return sql, None  # psycopg reads no markers in a statement sent without parameters
    markers = "|".join(re.escape(k) for k in params)
    return re.sub(rf"%(?!\((?:{markers})\)s)", "%%", sql), dict(params)
