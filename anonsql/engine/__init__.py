"""Where SQL runs: `connect()` turns a --db string into an Engine (DuckDB file, PostgreSQL or Spark URL)."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import AnonsqlError
from .base import Engine
from .duckdb import DuckDBEngine
from .duckdb import duckdb as _duckdb

__all__ = ["Engine", "connect", "engine_class", "opened"]

#: The engine class of each dialect name (module, class), imported when asked (engine_class).
_CLASSES = {"duckdb": (".duckdb", "DuckDBEngine"), "postgres": (".postgres", "PostgresEngine"),
            "spark": (".spark", "SparkEngine")}

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")
_SPARK_SCHEMES = ("spark:", "sc://")


def connect(db: str | os.PathLike[str] | Engine | Any, *, create: bool = False) -> Engine:
    """Open `db`: a postgresql:// URL; a Spark URL (`spark:local[2]`, `spark:local[2]?warehouse=DIR`,
    `spark://host:7077`, or `sc://host:port` for Spark Connect; see anonsql.engine.spark); else a
    DuckDB file path (created only if `create`).

    An Engine passed in is returned as is; an open DuckDB connection (duckdb.DuckDBPyConnection)
    or psycopg connection is wrapped in one that never closes it. So API functions accept all.
    """
    if isinstance(db, _duckdb.DuckDBPyConnection):
        return DuckDBEngine.wrap(db)
    if type(db).__module__.startswith("psycopg") and hasattr(db, "info"):
        from .postgres import PostgresEngine

        return PostgresEngine.wrap(db)
    if isinstance(db, os.PathLike):
        db = os.fspath(db)
    if not isinstance(db, str):
        if all(hasattr(db, a) for a in ("dialect", "execute", "fetch_all", "transaction")):
            return db  # an Engine
        raise AnonsqlError(f"db must be a DuckDB path, a postgresql:// URL, an open DuckDB or psycopg "
                           f"connection or an anonsql Engine, not {type(db).__name__}")
    if db.startswith(_POSTGRES_SCHEMES):
        from .postgres import PostgresEngine

        return PostgresEngine(db)
    if db.startswith(_SPARK_SCHEMES):
        from .spark import SparkEngine

        return SparkEngine(db)
    if "://" in db:
        scheme = db.split("://", 1)[0]
        raise AnonsqlError(
            f"unsupported database URL scheme '{scheme}': give a DuckDB file path, a postgresql:// URL"
            " or a Spark URL (spark:local[2], spark://host:7077, sc://host:port)"
        )
    return DuckDBEngine(db, create=create)


@contextmanager
def opened(db: str | os.PathLike[str] | Engine | Any, *, create: bool = False) -> Iterator[Engine]:
    """`connect(db)` for one block, closed after it; an Engine passed in stays open for its caller."""
    engine = connect(db, create=create)
    try:
        yield engine
    finally:
        if engine is not db:
            engine.close()


def engine_class(dialect: str) -> type[Engine]:
    """The engine class whose `dialect` is `dialect`: its declared capabilities (engine/base.py), for
    code that holds a dialect rather than an engine (a script written for review, a template chosen
    for a dialect). Code holding an engine asks the engine itself."""
    if dialect not in _CLASSES:
        raise AnonsqlError(f"no anonsql engine writes the SQL dialect {dialect!r} (DuckDB, PostgreSQL and Spark do)")
    module, name = _CLASSES[dialect]
    cls: type[Engine] = getattr(importlib.import_module(module, __name__), name)
    return cls
