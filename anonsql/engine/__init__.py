"""Where SQL runs: `connect()` turns a --db string into an Engine (DuckDB file or PostgreSQL URL)."""

from __future__ import annotations

from ..errors import AnonsqlError
from .base import Engine
from .duckdb import DuckDBEngine

__all__ = ["Engine", "connect"]

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def connect(db: str | Engine, *, create: bool = False) -> Engine:
    """Open `db`: a postgresql:// URL, else a DuckDB file path (created only if `create`).

    An Engine passed in is returned as is, so API functions accept either.
    """
    if not isinstance(db, str):
        return db
    if db.startswith(_POSTGRES_SCHEMES):
        from .postgres import PostgresEngine

        return PostgresEngine(db)
    if "://" in db:
        scheme = db.split("://", 1)[0]
        raise AnonsqlError(
            f"unsupported database URL scheme '{scheme}': give a DuckDB file path or a postgresql:// URL"
        )
    return DuckDBEngine(db, create=create)
