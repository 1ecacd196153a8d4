"""Validation of user input shared by every command: each failure is one clear AnonsqlError."""

from __future__ import annotations

from typing import Sequence

from . import sql
from .catalog import Table
from .engine import Engine
from .errors import AnonsqlError


def require_k(k: object) -> int:
    """k must be an integer >= 1 (booleans and floats like 2.5 are rejected)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise AnonsqlError(f"k must be an integer >= 1, got {k!r}")
    return k


def split_names(text: str | Sequence[str] | None) -> list[str]:
    """A comma-separated CLI list (or a list already) as names; blanks around commas dropped."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return []
    items = text.split(",") if isinstance(text, str) else list(text)
    names = [n.strip() for n in items]
    if any(not n for n in names):
        raise AnonsqlError(f"empty column name in list: {text!r}")
    return names


def require_rows(engine: Engine, table: Table) -> int:
    """The table's row count; an empty table is an error (nothing to anonymize or profile)."""
    text, params = sql.render("row_count", engine.dialect, tbl=table.expr)
    n = int(engine.fetch_all(text, params)[0][0])
    if n == 0:
        raise AnonsqlError(f"table {table} is empty")
    return n


def require_class_column(engine: Engine, table: Table, name: str, qi: Sequence[str] = ()) -> str:
    """Resolve the class column: it must exist, must not be a QI and must hold no NULL."""
    col = table.column(name).name
    if col in qi:
        raise AnonsqlError(f"class column '{col}' is also listed as a quasi-identifier")
    text, params = sql.render("null_count", engine.dialect, tbl=table.expr, col=sql.column(col))
    nulls = int(engine.fetch_all(text, params)[0][0])
    if nulls:
        raise AnonsqlError(f"class column '{col}' has {nulls} NULL value(s); every row needs a class label")
    return col
