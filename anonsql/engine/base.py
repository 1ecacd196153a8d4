"""The Engine protocol: the few things anonsql needs from a database, nothing more."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:  # imported where results are fetched, not at start (issue 11: a fast start)
    from collections.abc import Callable

    import numpy as np
    import pandas as pd
    import pyarrow as pa
    from sqlglot import exp


class Scrubbed(NamedTuple):
    """What `Engine.scrub` did: notes for the summary, and privacy warnings (Report.warnings) for
    what it could not do or what stays outside its reach."""

    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


class Engine(Protocol):
    """A connection to one database that runs anonsql's SQL.

    `dialect` is the sqlglot dialect name the SQL layer transpiles to. Every method takes
    SQL text already rendered for that dialect (see anonsql.sql) and values as bound
    parameters, never pasted into the text.
    """

    dialect: str
    url: str

    # Capabilities and traits, declared on each engine class: method code asks them, never the
    # dialect name (code holding only a dialect, such as a script written for review, asks
    # anonsql.engine.engine_class(dialect)). Results never depend on a trait marked "speed".

    #: UPDATE ... FROM on its tables (Spark: no; writers create their output by CREATE TABLE AS SELECT).
    supports_update: bool
    #: Transactions that roll back (Spark: no; writers go through anonsql.catalog.staged_output).
    supports_transactions: bool
    #: The schema of the session's temporary tables (DuckDB temp, PostgreSQL pg_temp), so a scratch
    #: table never shares a name with a user's; None: temporary names live beside the tables (Spark).
    temp_schema: str | None
    #: The pseudo-column an in-place UPDATE addresses a row by (DuckDB rowid, PostgreSQL ctid;
    #: sql/kanon/row_id.sql); None without in-place writes. A user column of that name hides it.
    row_id: str | None
    #: The sql/ file of the keyed pseudonyms HMAC-SHA256(K, v) (--pseudonymize; None: refused).
    pseudonymize_sql: str | None
    #: The sql/ fragment writing a text in Unicode NFC ($text): a pseudonym's input, so that one value
    #: typed two ways (é as U+00E9 or as e + U+0301, NFD) gets one pseudonym (DuckDB NFC_NORMALIZE,
    #: PostgreSQL normalize(.., NFC), Spark ICU4J's Normalizer.compose through REFLECT).
    text_nfc_sql: str
    #: Column kinds (anonsql.catalog.Column.kind) whose text this engine writes as DuckDB and
    #: PostgreSQL do (a float: 1e+20 vs Spark's 1.0E20); None: every kind. A value's text feeds
    #: pseudonyms, keys and labels, which must not depend on the engine.
    same_text_kinds: tuple[str, ...] | None
    #: An exact NUMERIC of any size in SQL (PostgreSQL): nbc stores its counts and decides
    #: condition (10) in it; elsewhere in logs, undecided pairs decided exactly in Python.
    exact_numeric: bool
    #: The most digits a count may have for every sum of such counts to stay exact in SQL
    #: (Spark: DECIMAL(38, 0), less 2 digits of sums); None: no limit (BIGNUM, NUMERIC).
    exact_digits: int | None
    #: ALTER TABLE ... RENAME TO names the new table with its schema (Spark keeps the schema only
    #: if named; DuckDB and PostgreSQL take a bare name and keep the table in its schema).
    rename_qualified: bool
    #: Speed: the planner plans from statistics a fresh table has only after ANALYZE, and the
    #: planner settings of sql/common/analyze.sql, sql/kanon/decisions_sample.sql and hash_join.sql
    #: apply (PostgreSQL).
    plans_from_statistics: bool
    #: Speed: each dictionary lookup of a row is a hash join of every row (PostgreSQL), so kanon's
    #: write-back matches rows to decisions by value, not by dictionary code, where it can.
    matches_by_value: bool
    #: Speed: a value dictionary reads the grouped relation S itself (DuckDB), not the distinct
    #: values of all columns gathered in one pass over S first (sql/common/column_values.sql).
    dictionaries_read_groups: bool
    #: Speed: joins take BROADCAST hints for their small side (Spark: the decisions, the dictionaries).
    broadcast_hints: bool
    #: Reads a CSV file with its own reader (DuckDB's read_csv); others load one through a private
    #: in-memory DuckDB (anonsql.data.loading).
    reads_csv: bool
    #: Runs kanon's global recoding search (anonsql.kanon.recoding: GROUPING SETS named back by
    #: GROUPING() bit masks over several columns); an engine without it refuses --hierarchy in one line.
    recodes_globally: bool

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> None:
        """Run one statement that returns no rows."""

    def fetch_all(self, sql: str, params: Mapping[str, Any] | None = None) -> list[tuple]:
        """Run a query and return its rows as tuples."""

    def fetch_df(self, sql: str, params: Mapping[str, Any] | None = None) -> pd.DataFrame:
        """Run a query and return a pandas DataFrame."""

    def fetch_arrow(self, sql: str, params: Mapping[str, Any] | None = None) -> pa.Table:
        """Run a query and return an Arrow table."""

    def fetch_columns(self, sql: str, params: Mapping[str, Any] | None = None) -> list[np.ndarray]:
        """Run a query and return its columns by position as numpy arrays, NULL as None in an
        object array: the count tables' route, which imports neither pandas nor Arrow (a fast start)."""

    def transaction(self) -> AbstractContextManager[None]:
        """One transaction: committed on success, rolled back on any exception."""

    def insert_rows(self, table: exp.Table, columns: Sequence[str],
                    frame: pd.DataFrame | Mapping[str, np.ndarray]) -> None:
        """Bulk-insert a DataFrame, or numpy arrays by column name (no pandas needed), into the
        existing `table`: the frame's columns, in order, into the table's `columns` (names, quoted
        here through anonsql.sql: `target_names`)."""

    def table_columns(self, name: str, schema: str | None) -> list[tuple]:
        """(schema, table, column, type) rows of the tables called `name` (case-insensitively) in
        `schema`, or the current schema when None, in column order (anonsql.catalog resolves them)."""

    def committing(self) -> AbstractContextManager[None]:
        """The final renames and drops of a staged output (anonsql.catalog.staged_outputs) run
        inside: an engine without transactions allows them there only."""

    def holding(self, table: exp.Table, waiting: Callable[[], None]) -> AbstractContextManager[None]:
        """An in-place run's source kept stable inside, from its statistics to its commit
        (anonsql.catalog.holding_source); `waiting()` is called while another session keeps it."""

    def integer_type(self, largest: int) -> str:
        """The column type (in DuckDB's spelling, the SQL templates') of exact integers up to
        `largest`: BIGINT when they fit, else the engine's wider exact integer (DECIMAL, NUMERIC)."""

    def expect_rows(self, rows: int) -> None:
        """The rows of the table the coming work reads (the job tells it once it has counted them): an engine
        may size its parallelism to them. Only speed depends on it, never a result."""

    def joins_as_written(self) -> AbstractContextManager[None]:
        """Statements run inside join their relations in the order the SQL writes them: one
        relation probed against small lookups (anonsql.stats' value dictionaries), where a search
        for a better order only costs planning time. Only speed depends on it, never a result."""

    def scrub(self, table: exp.Table) -> Scrubbed:
        """After an in-place run on `table` has committed: make its original values unrecoverable
        from the database files this engine controls, as far as the engine can (DuckDB: the
        file rebuilt; PostgreSQL: the table rewritten and re-analyzed; Spark: never reached, in
        place is refused). Never raises for a scrub that could not be done: it says so in
        `Scrubbed.warnings`, the run's change being committed already."""

    def close(self) -> None:
        """Release the connection."""

    def __enter__(self) -> Engine:
        """`with anonsql.connect(db) as engine:` -- closed when the block ends (Closing)."""

    def __exit__(self, *exc: object) -> None:
        """Close the engine (an open connection it wraps stays open for its owner)."""

    def tracer(self, fn: Tracer) -> AbstractContextManager[None]:
        """Inside, every statement the engine runs for its caller (execute, fetch_*, insert_rows) is
        passed to `fn(text, params)` before it runs (sqlite-utils' `Database.tracer`)."""


class StagingEngine(Engine, Protocol):
    """An engine without transactions (Spark): its writers stage their outputs under working names
    and rename them into place (anonsql.catalog.staged_outputs), and a crashed run's working tables
    are found by listing the catalog (anonsql.catalog.recover)."""

    def committing(self) -> AbstractContextManager[None]:
        """Allow the renames and drops of a staged output's commit (and of its recovery)."""

    def schemas(self) -> list[str]:
        """Every schema (database) of the catalog."""

    def table_names(self, schema: str | None, pattern: str = "*") -> tuple[str, list[str]]:
        """The schema (None: the current one) and the names of its tables (not temporary views)
        matching `pattern` (`*` any text, `|` between alternatives), case-insensitively."""

class Closing:
    """An engine as a context manager: `with anonsql.connect(db) as engine: ...` closes it when
    the block ends, an exception or not (Engine.close: a connection passed in stays open)."""

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()  # type: ignore[attr-defined]  # every engine class defines close


# -- the tracer hook ---------------------------------------------------------------------------------

#: Called with each statement's text and parameters (None when it has none) before it runs.
Tracer = Callable[[str, "Mapping[str, Any] | None"], None]


class Traced:
    """The tracer hook of an engine class: `tracer(fn)` (Engine.tracer), and `_trace`, which the
    engine calls in its one path of running a statement. Tracers nest: each one active sees it."""

    _tracers: tuple[Tracer, ...] = ()

    @contextmanager
    def tracer(self, fn: Tracer) -> Iterator[None]:
        before = self._tracers
        self._tracers = (*before, fn)
        try:
            yield
        finally:
            self._tracers = before

    def _trace(self, sql: str, params: Mapping[str, Any] | None) -> None:
        for fn in self._tracers:
            fn(sql, params)


def target_names(table: exp.Table, columns: Sequence[str], dialect: str) -> tuple[str, str]:
    """The table and its comma-separated columns as `dialect` quotes them: the text of an engine's
    bulk insert (insert_rows), through anonsql.sql's one quoting path."""
    from .. import sql

    return sql.text(table, dialect), ", ".join(sql.quoted(columns, dialect))
