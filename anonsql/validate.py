"""One home for input validation: every check of a user's input raises one clear AnonsqlError.

The CLI validates choices and ranges at parse time with the same constants; the API, which
Python callers reach directly, validates again here. Algorithm modules may still refuse
impossible arrays, but never re-validate user input.

>>> k(10)
10
>>> choice("cost", "mar", ("ham", "info", "mar", "hybrid"))
'mar'
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

from . import sql
from .catalog import Table
from .engine import Engine
from .errors import AnonsqlError


def k(value: object, name: str = "k") -> int:
    """k must be an integer >= 1 (booleans and floats like 2.5 are rejected)."""
    return integer(value, name, minimum=1)


def integer(value: object, name: str, *, minimum: int | None = None) -> int:
    """A whole number (not a bool, not a float) at least `minimum`."""
    if isinstance(value, bool) or not isinstance(value, int) or (minimum is not None and value < minimum):
        bound = f" >= {minimum}" if minimum is not None else ""
        raise AnonsqlError(f"{name} must be an integer{bound}, got {value!r}")
    return value


def seed(value: object) -> int:
    """A random seed: an integer >= 0 (numpy refuses negative seeds)."""
    return integer(value, "seed", minimum=0)


def number(value: object, name: str, *, minimum: float | None = None, above: float | None = None) -> float:
    """A finite number, optionally >= `minimum` or > `above`."""
    number = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan
    ok = math.isfinite(number) and (minimum is None or number >= minimum) and (above is None or number > above)
    if not ok:
        bound = f" >= {minimum:g}" if minimum is not None else f" > {above:g}" if above is not None else ""
        raise AnonsqlError(f"{name} must be a finite number{bound}, got {value!r}")
    return number


def choice(name: str, value: str, options: Sequence[str]) -> str:
    """`value` must be one of `options` (the CLI offers the same list as a click.Choice)."""
    if value not in options:
        raise AnonsqlError(f"unknown {name} '{value}'; choose one of {', '.join(options)}")
    return value


def names(text: str | Sequence[str] | None) -> list[str]:
    """A comma-separated CLI list (or a list already) as names; blanks around commas dropped."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return []
    items = text.split(",") if isinstance(text, str) else list(text)
    out = [n.strip() for n in items]
    if any(not n for n in out):
        raise AnonsqlError(f"empty column name in list: {text!r}")
    return out


def quasi_identifiers(table: Table, qi: str | Sequence[str] | None) -> list[str]:
    """The catalog spellings of the quasi-identifier columns; at least one is required."""
    cols = table.resolve(names(qi))
    if not cols:
        raise AnonsqlError("no quasi-identifier columns given (--qi a,b,c)")
    return cols


def rows(engine: Engine, table: Table) -> int:
    """The table's row count; an empty table is an error (nothing to anonymize or profile).
    A validator changes nothing: the job that counted tells its engine the size
    (Engine.expect_rows)."""
    text, params = sql.render("common/row_count", engine.dialect, tbl=table.expr)
    n = int(engine.fetch_all(text, params)[0][0])
    if n == 0:
        raise AnonsqlError(f"table {table} is empty")
    return n


def class_column(engine: Engine, table: Table, name: str, qi: Sequence[str] = ()) -> str:
    """Resolve the class column: it must exist, must not be a QI and must hold no NULL."""
    col = table.column(name).name
    if col in qi:
        raise AnonsqlError(f"class column '{col}' is also listed as a quasi-identifier")
    text, params = sql.render("common/null_count", engine.dialect, tbl=table.expr, col=sql.column(col))
    nulls = int(engine.fetch_all(text, params)[0][0])
    if nulls:
        raise AnonsqlError(f"class column '{col}' has {nulls} NULL value(s); every row needs a class label")
    return col


def k_within(k_value: int, n_rows: int) -> int:
    """k cannot exceed the number of rows: no grouping could reach it."""
    if k_value > n_rows:
        raise AnonsqlError(f"k = {k_value} is larger than the table ({n_rows:,} rows): no grouping can reach it")
    return k_value


def dry_run(execute: bool, emit_sql: str | None) -> None:
    """A dry run (execute=False, CLI --dry-run) only writes the script, so it needs one."""
    if not execute and not emit_sql:
        raise AnonsqlError("a dry run needs --emit-sql FILE (it only writes the script)")


def output_file(path: str | None, what: str) -> str | None:
    """A file a job will write (`-` = standard output), checked before any work: its folder must
    exist and be writable, and it must not be a folder. None passes (no file asked for)."""
    if path is None or path == "-":
        return path
    if os.path.isdir(path):
        raise AnonsqlError(f"{what} {path} is a directory, not a file")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise AnonsqlError(f"{what} {path}: folder {folder} does not exist")
    if not os.access(path if os.path.exists(path) else folder, os.W_OK):
        raise AnonsqlError(f"{what} {path} is not writable")
    return path


def column_pairs(spec: Mapping[str, Any] | str | None) -> list[tuple[str, str]]:
    """'a=1, b = x' (or a mapping) as (column, value) text pairs, blanks trimmed.

    >>> column_pairs("zip=text, born = date")
    [('zip', 'text'), ('born', 'date')]
    """
    if not spec:
        return []
    pairs = spec.items() if isinstance(spec, Mapping) else (
        item.rpartition("=")[::2] for item in spec.split(",") if item.strip())
    return [(str(column).strip(), str(value).strip()) for column, value in pairs]
