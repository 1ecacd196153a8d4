"""Spark SQL engine (pyspark): a classic session (`spark:local[2]`, `spark://host:7077`) or Spark Connect (`sc://`).

URL forms accepted by `--db`:

* `spark:<master>[?warehouse=<dir>]`: a classic session with that master (`local`, `local[4]`,
  `local[*]`, `yarn`, ...). Tables are managed catalog tables under the warehouse directory
  (default `./spark-warehouse`), listed in an embedded Derby metastore inside it
  (`<dir>/metastore_db`), so they persist across processes. Derby admits one process at a time.
  `&catalog=in-memory` skips the metastore: tables then last only as long as the session.
* `spark://host:7077[?warehouse=<dir>]`: the same against a standalone cluster master.
* `sc://host:port[/;params]`: Spark Connect, the thin client of a running Connect server; the
  server owns the catalog and the warehouse.

Spark has no transactions and no UPDATE on Parquet tables: see `SparkEngine.transaction` and
`anonsql.catalog.staged_output`. One SparkSession per process: it is started by the first
connect and kept until the process ends (`close()` leaves it running for the next call).
"""

from __future__ import annotations

import os
import re
import tempfile
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote

import numpy as np
import pandas as pd
import pyarrow as pa
import sqlglot
from sqlglot import exp

from ..errors import AnonsqlError, DatabaseError, first_line
from .base import Closing, Scrubbed, Traced, target_names

SCHEMES = ("spark:", "sc://")
_LEADING_COMMENTS = re.compile(r"^\s*(?:/\*.*?\*/\s*|--[^\n]*\n\s*)*", re.S)
_FRAME = "__anonsql_frame"  # the one internal view name an uploaded frame is read through
# Spark writes only ERROR lines of its own, and not the analyzer's echo of a failed query (the
# error reaches the user once, as one line, through DatabaseError).
_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%ex
logger.query.name = SQLQueryContextLogger
logger.query.level = off
logger.hive.name = org.apache.hadoop.hive
logger.hive.level = off
logger.datanucleus.name = DataNucleus
logger.datanucleus.level = off
"""


@dataclass(frozen=True)
class SparkUrl:
    """A parsed Spark --db string: `remote` for Spark Connect, else `master` and `warehouse`."""

    master: str | None = None
    warehouse: str | None = None
    remote: str | None = None
    catalog: str = "hive"  # "in-memory": no metastore, tables last as long as the session

    @classmethod
    def parse(cls, url: str) -> SparkUrl:
        """
        >>> SparkUrl.parse("spark:local[2]?warehouse=/data/wh")
        SparkUrl(master='local[2]', warehouse='/data/wh', remote=None, catalog='hive')
        >>> SparkUrl.parse("spark://node1:7077?catalog=in-memory")
        SparkUrl(master='spark://node1:7077', warehouse=None, remote=None, catalog='in-memory')
        >>> SparkUrl.parse("sc://localhost:15002")
        SparkUrl(master=None, warehouse=None, remote='sc://localhost:15002', catalog='hive')
        """
        if url.startswith("sc://"):
            return cls(remote=url)
        body, _, query = url.partition("?")
        master = body if body.startswith("spark://") else body.removeprefix("spark:")
        options = parse_qs(query, keep_blank_values=True)
        unknown = sorted(set(options) - {"warehouse", "catalog"})
        catalog = options.get("catalog", ["hive"])[0]
        if not master or unknown or any(len(v) != 1 or not v[0] for v in options.values()) \
                or catalog not in ("hive", "in-memory"):
            raise AnonsqlError(f"not a Spark URL: {url!r} (use spark:local[2], spark://host:7077 or sc://host:port;"
                               " options ?warehouse=DIR and &catalog=hive|in-memory)")
        warehouse = options.get("warehouse", [None])[0]
        return cls(master=master, warehouse=unquote(warehouse) if warehouse else None, catalog=catalog)


_SESSION: dict[str, Any] = {}  # the one session of this process: {"url": SparkUrl, "spark": SparkSession}


def session(url: SparkUrl) -> Any:
    """The process's SparkSession for `url`, started on first use; a different URL is an error."""
    if _SESSION:
        if _SESSION["url"] != url:
            raise AnonsqlError(f"this process already runs a Spark session for {_SESSION['url']}; "
                               "one Spark session per process")
        return _SESSION["spark"]
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise AnonsqlError("Spark support needs pyspark: pip install 'anonsql[spark]' (and Java 17+)") from None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pyspark's notice about pandas 3
        try:
            spark = _remote(SparkSession, url.remote) if url.remote else _classic(SparkSession, url)
        except Exception as exc:  # the JVM or the server did not start: one line, not a Java trace
            raise AnonsqlError(f"cannot start Spark for {url.remote or url.master}: {first_line(exc)}") from None
    _SESSION.update(url=url, spark=spark)
    _silence_query_context_loggers()
    return spark


def _silence_query_context_loggers() -> None:
    """pyspark 4 logs every failed query as a JSON line with its Java trace on stderr (its
    Python-side query context loggers); the error reaches the user once, as one line."""
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:  # pyspark < 4 has no such loggers
        return
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True


def _remote(builder_cls: Any, remote: str) -> Any:
    return builder_cls.builder.remote(remote).getOrCreate()


def _classic(builder_cls: Any, url: SparkUrl) -> Any:
    warehouse = os.path.abspath(url.warehouse or "spark-warehouse")
    os.makedirs(warehouse, exist_ok=True)
    log4j = os.path.join(tempfile.gettempdir(), "anonsql-spark-log4j2.properties")
    with open(log4j, "w") as fh:
        fh.write(_LOG4J)
    local = url.master is not None and url.master.startswith("local")
    builder = (builder_cls.builder.master(url.master).appName("anonsql")
               .config("spark.sql.warehouse.dir", warehouse)
               .config("spark.hadoop.javax.jdo.option.ConnectionURL",
                       f"jdbc:derby:;databaseName={os.path.join(warehouse, 'metastore_db')};create=true")
               .config("spark.driver.extraJavaOptions",
                       f"-Dderby.system.home={warehouse} -Dlog4j2.configurationFile=file:{log4j}")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.adaptive.enabled", "true")  # shuffle partitions coalesced to the data size
               .config("spark.sql.catalogImplementation", url.catalog))
    if local:  # a local run has few cores: start from 4 partitions per core, AQE merges small ones
        builder = builder.config("spark.sql.shuffle.partitions", str(4 * (os.cpu_count() or 1)))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _statement(sql: str) -> exp.Expr | None:
    """The parsed statement when it is one the engine must look at (DDL/DML), else None."""
    head = _LEADING_COMMENTS.sub("", sql)[:12].upper()
    if not head.startswith(("CREATE", "DROP", "INSERT", "UPDATE", "DELETE", "MERGE", "ALTER", "TRUNCATE")):
        return None
    try:
        return sqlglot.parse_one(sql, read="spark")
    except sqlglot.errors.ParseError:
        return None


def _name(table: exp.Expr | None) -> str:
    """A comparable spelling of a table name (Spark's catalog is case-insensitive)."""
    if isinstance(table, exp.Schema):
        table = table.this
    return table.sql("spark").lower() if isinstance(table, exp.Table) else ""


class SparkEngine(Traced, Closing):  # Traced: the tracer hook, Engine.tracer; Closing: `with`
    """Runs anonsql's SQL on Spark SQL. No transactions, no UPDATE: writers use CTAS and staging."""

    dialect = "spark"
    supports_update = False
    supports_transactions = False
    temp_schema: str | None = None
    row_id: str | None = None
    pseudonymize_sql: str | None = "common/pseudonymize"  # DuckDB's SHA256, ENCODE, UNHEX, || in Spark's words
    text_nfc_sql = "common/text_nfc_spark"
    same_text_kinds: tuple[str, ...] | None = ("text", "integer")
    exact_numeric = False
    exact_digits: int | None = 36  # DECIMAL(38, 0) (AnonsqlSpark's BIGNUM), two digits left for sums
    rename_qualified = True
    plans_from_statistics = False
    matches_by_value = False
    dictionaries_read_groups = False
    broadcast_hints = True
    reads_csv = False
    recodes_globally = False  # untested there: refused (README's Spark table)

    def __init__(self, url: str):
        self.url = url
        self._spark = session(SparkUrl.parse(url))
        self._temp: dict[str, Any] = {}  # emulated temporary tables: name -> DataFrame behind the view
        self._created: list[exp.Table] | None = None  # tables created inside transaction(), else None
        self._committing = False

    # -- running statements -------------------------------------------------------------------------

    def _df(self, sql: str, params: Mapping[str, Any] | None):
        from pyspark.errors import PySparkException

        try:
            return self._spark.sql(sql, args=dict(params) if params else None)
        except PySparkException as exc:
            raise DatabaseError(first_line(exc), sql) from exc

    def _collect(self, df: Any, sql: str) -> pa.Table:
        from pyspark.errors import PySparkException

        try:
            return df.toArrow()
        except PySparkException as exc:
            raise DatabaseError(first_line(exc), sql) from exc

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> None:
        self._trace(sql, params)
        stmt = _statement(sql)
        if stmt is not None and self._special(stmt, sql, params):
            return
        if stmt is not None:
            self._guard(stmt)
        df = self._df(sql, params)
        if stmt is None:  # a query run for its effect: make it run
            self._collect(df, sql)
        elif self._created is not None and isinstance(stmt, exp.Create) and stmt.kind == "TABLE":
            self._created.append(stmt.this.this if isinstance(stmt.this, exp.Schema) else stmt.this)

    def fetch_all(self, sql: str, params: Mapping[str, Any] | None = None) -> list[tuple]:
        from pyspark.errors import PySparkException

        self._trace(sql, params)
        try:
            return [tuple(r) for r in self._df(sql, params).collect()]
        except PySparkException as exc:
            raise DatabaseError(first_line(exc), sql) from exc

    def fetch_arrow(self, sql: str, params: Mapping[str, Any] | None = None) -> pa.Table:
        self._trace(sql, params)
        return self._collect(self._df(sql, params), sql)

    def fetch_df(self, sql: str, params: Mapping[str, Any] | None = None) -> pd.DataFrame:
        return self.fetch_arrow(sql, params).to_pandas()

    def fetch_columns(self, sql: str, params: Mapping[str, Any] | None = None) -> list[np.ndarray]:
        table = self.fetch_arrow(sql, params)
        return [np.fromiter(col.to_pylist(), dtype=object, count=len(col)) for col in table.columns]

    # -- temporary tables: temporary views over data materialized once ------------------------------

    def _special(self, stmt: exp.Expr, sql: str, params: Mapping[str, Any] | None) -> bool:
        """Temporary tables, which Spark lacks: `CREATE TEMPORARY TABLE t (cols)` becomes an empty
        view that insert_rows appends to; `CREATE TEMPORARY VIEW t AS SELECT` (what anonsql.sql
        makes of a temporary table) is computed ONCE (a local checkpoint), so later reads see the
        rows it had when created, like a table, not a re-run of the query. True when handled."""
        if not isinstance(stmt, exp.Create) or not _is_temporary(stmt):
            return False
        if isinstance(stmt.this, exp.Schema) and stmt.expression is None:
            fields = ", ".join(f"{c.this.sql('spark')} {c.args['kind'].sql('spark')}"
                               for c in stmt.this.expressions if isinstance(c, exp.ColumnDef))
            self._set_temp(stmt.this.this, self._spark.createDataFrame([], fields))
            return True
        if stmt.kind == "VIEW" and isinstance(stmt.expression, exp.Query):
            query = stmt.expression.sql("spark")
            self._set_temp(stmt.this, self._df(query, _used(params, query)).localCheckpoint(eager=True))
            return True
        return False

    def _set_temp(self, table: exp.Expr, df: Any) -> None:
        df.createOrReplaceTempView(exp.to_identifier(table.name, quoted=True).sql("spark"))
        self._temp[table.name.lower()] = df

    # -- writing data -------------------------------------------------------------------------------

    def _frame(self, data: pa.Table | pd.DataFrame | Mapping[str, np.ndarray]) -> Any:
        table = data if isinstance(data, pa.Table) else pa.table(dict(data)) if isinstance(data, Mapping) \
            else pa.Table.from_pandas(data, preserve_index=False)
        # Spark reads plain Arrow types: dictionary and large/view strings become plain ones
        table = table.cast(pa.schema([pa.field(f.name, _plain(f.type)) for f in table.schema]))
        return self._spark.createDataFrame(table)

    def insert_rows(self, table: exp.Table, columns: Sequence[str],
                    frame: pd.DataFrame | Mapping[str, np.ndarray]) -> None:
        table_sql, columns_sql = target_names(table, columns, self.dialect)
        target = table
        df = self._frame(frame)
        key = target.name.lower()
        if key in self._temp and not target.db:  # an emulated temporary table: append to its rows
            old = self._temp[key]
            self._set_temp(target, old.unionByName(df.toDF(*old.columns)))
            return
        self._guard(exp.Insert(this=target))
        self._typed(table_sql, columns, df).createOrReplaceTempView(_FRAME)
        try:
            self.execute(f"INSERT INTO {table_sql} ({columns_sql}) SELECT * FROM {_FRAME}")
        finally:
            self._spark.catalog.dropTempView(_FRAME)

    def _typed(self, table_sql: str, columns: Sequence[str], df: Any) -> Any:
        """`df`'s columns, by position, cast to the types of the table's `columns`:
        Spark's INSERT refuses to store a string in a number column (ANSI store assignment) where
        DuckDB's INSERT and PostgreSQL's COPY convert it, e.g. nbc's exact counts, sent as decimal
        text whatever their length. A malformed value is an error, as there."""
        from pyspark.sql import functions

        names = [c.lower() for c in columns]
        types = {f.name.lower(): f.dataType for f in self._spark.table(table_sql).schema.fields}
        positional = df.toDF(*(f"c{i}" for i in range(len(df.columns))))
        return positional.select(*(functions.col(f"c{i}").cast(types[name]) if name in types else functions.col(f"c{i}")
                                   for i, name in enumerate(names)))

    # -- catalog ------------------------------------------------------------------------------------

    def table_columns(self, name: str, schema: str | None) -> list[tuple[str, str, str, str]]:
        """(schema, table, column, type) rows of the table `name` (case-insensitive, as Spark's
        catalog is), the shape of sql/common/table_columns.sql, which needs an information_schema
        Spark lacks. No schema: the current database."""
        catalog = self._spark.catalog
        db = schema or catalog.currentDatabase()
        if not re.fullmatch(r"\w+", name) or not re.fullmatch(r"\w+", db) or not catalog.databaseExists(db):
            return []  # Spark names are letters, digits and _ only: anything else cannot exist
        found = [t for t in catalog.listTables(db, pattern=name)
                 if t.name.lower() == name.lower() and not t.isTemporary]
        if len(found) != 1:
            return []
        return [(db, found[0].name, c.name, c.dataType) for c in catalog.listColumns(f"{db}.{found[0].name}")]

    def schemas(self) -> list[str]:
        """Every database of the catalog (where `anonsql cleanup` looks for a crashed run's tables)."""
        return sorted(db.name for db in self._spark.catalog.listDatabases())

    def table_names(self, schema: str | None, pattern: str = "*") -> tuple[str, list[str]]:
        """`schema` (None: the current database) and its catalog tables matching `pattern`, the
        catalog's own filter (`*` any text, `|` between alternatives, case-insensitive); temporary
        views are not tables. A schema that does not exist has none."""
        catalog = self._spark.catalog
        db = schema or catalog.currentDatabase()
        if not re.fullmatch(r"\w+", db) or not re.fullmatch(r"[\w*|]+", pattern) or not catalog.databaseExists(db):
            return db, []  # Spark names are letters, digits and _ only: nothing else can match
        return db, sorted(t.name for t in catalog.listTables(db, pattern=pattern) if not t.isTemporary)

    # -- the missing transaction --------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Not a transaction: Spark has none. The block undoes what it can and refuses the rest.

        Tables created inside are dropped when the block fails, so a failed job leaves no new
        table. Statements that change data existing before the block (UPDATE, DELETE, MERGE,
        INSERT into or DROP/ALTER of an older table) cannot be undone and are refused before they
        run; writing jobs create their output through anonsql.catalog.staged_output instead.
        """
        if self._created is not None:  # nested: joins the outer block
            yield
            return
        self._created = []
        try:
            yield
        except BaseException:
            created, self._created = self._created, None
            for table in reversed(created):
                self._spark.sql(f"DROP TABLE IF EXISTS {table.sql('spark')}")
            raise
        finally:
            self._created = None

    @contextmanager
    def committing(self) -> Iterator[None]:
        """Allow the renames and drops of a staged output's final step and of a crashed run's
        recovery (anonsql.catalog only); nested blocks keep the outer one's permission."""
        was, self._committing = self._committing, True
        try:
            yield
        finally:
            self._committing = was

    def _guard(self, stmt: exp.Expr) -> None:
        if isinstance(stmt, (exp.Update, exp.Delete, exp.Merge)):
            raise AnonsqlError(f"{stmt.key.upper()} is not available on Spark (no row updates on its tables): "
                               "this job has no Spark path yet")
        if self._created is None or self._committing:
            return
        if isinstance(stmt, exp.Drop) and stmt.kind == "TABLE":
            targets = stmt.args.get("tables") or [stmt.this]
        elif isinstance(stmt, exp.TruncateTable):
            targets = stmt.expressions
        elif isinstance(stmt, (exp.Insert, exp.Alter)):
            targets = [stmt.this]
        else:
            return
        for target in targets:
            name = _name(target)
            if (isinstance(target, exp.Table) and target.name.lower() in self._temp and not target.db) \
                    or any(_name(t) == name for t in self._created) \
                    or (isinstance(stmt, exp.Drop) and stmt.args.get("exists")
                        and not self._spark.catalog.tableExists(target.sql("spark"))):
                continue  # a table of this block, or nothing to drop
            verb = stmt.key.upper().removesuffix("TABLE")
            raise AnonsqlError(f"Spark has no transactions: {verb} of the existing table {name} could not be "
                               "undone if the job failed; this job has no Spark path yet")

    @staticmethod
    def integer_type(largest: int) -> str:
        """The column type for exact integers up to `largest` (in DuckDB's spelling, the templates'):
        BIGINT, else DECIMAL(38, 0), Spark's widest (nbc refuses longer counts on Spark)."""
        return "BIGINT" if largest < 2**63 else "DECIMAL(38, 0)"

    @contextmanager
    def holding(self, table: exp.Table, waiting: Callable[[], None]) -> Iterator[None]:
        """Nothing to hold: Spark refuses in-place runs (no transactions)."""
        yield

    def expect_rows(self, rows: int) -> None:
        """Nothing to size: Spark splits work by its own partitions."""

    @contextmanager
    def joins_as_written(self) -> Iterator[None]:
        """Nothing to switch: Spark broadcasts the small side of each join (the dictionaries)."""
        yield

    def scrub(self, table: Any) -> Scrubbed:
        """Never reached: in place is refused on Spark (catalog.output_table), whose writers only
        ever create a new table under a staging name and rename it."""
        raise AnonsqlError("--in-place is not available on spark: nothing to scrub")

    def close(self) -> None:
        """Forget this engine's temporary views; the process's session stays up for the next call."""
        for name in self._temp:
            self._spark.catalog.dropTempView(name)
        self._temp.clear()


def _is_temporary(stmt: exp.Create) -> bool:
    props = stmt.args.get("properties")
    return bool(props and any(isinstance(p, exp.TemporaryProperty) for p in props.expressions))


def _used(params: Mapping[str, Any] | None, sql: str) -> dict[str, Any] | None:
    """The parameters a statement's text still refers to (`:name` markers)."""
    return {k: v for k, v in params.items() if f":{k}" in sql} if params else None


def _plain(t: pa.DataType) -> pa.DataType:
    if pa.types.is_dictionary(t):
        return _plain(t.value_type)
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    return t
