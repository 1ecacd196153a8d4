"""The Engine protocol: the few things anonsql needs from a database, nothing more."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:  # imported where results are fetched, not at start (issue 11: a fast start)
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    from ..sql import exp


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
    # Capabilities a job asks before it writes: UPDATE ... FROM on its tables (Spark: no), and
    # transactions that roll back (Spark: no; writers go through anonsql.catalog.staged_output).
    supports_update: bool
    supports_transactions: bool

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

    def insert_rows(self, table_sql: str, columns_sql: str, frame: pd.DataFrame | Mapping[str, np.ndarray]) -> None:
        """Bulk-insert a DataFrame, or numpy arrays by column name (no pandas needed), into an
        existing table (names already quoted by anonsql.sql)."""

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
