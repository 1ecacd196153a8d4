"""CSV → database table: header row, NA markers, whitespace trimmed, column types inferred.

Every field is read as text, trimmed, and matched against the NA markers (the empty field is
always NULL); a column whose values all parse as integers becomes BIGINT, else as numbers
DOUBLE, else text. The table is created and filled in one transaction.
"""

from __future__ import annotations

import csv
import re
from dataclasses import asdict, dataclass
from typing import IO, Any, Sequence

import pandas as pd
from sqlglot import exp

from . import sql
from .catalog import find_table
from .engine import Engine
from .errors import AnonsqlError, first_line

_INT = re.compile(r"^[+-]?\d+$")
_SQL_TYPES = {"integer": "BIGINT", "float": "DOUBLE", "text": "TEXT"}


@dataclass
class LoadResult:
    table: str
    rows: int
    columns: dict[str, str]  # name -> integer | float | text

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def read_csv(source: str | IO[bytes], na: Sequence[str] = (), *, compression: str = "infer") -> pd.DataFrame:
    """Read a CSV as typed columns (see module docstring); unreadable input is a user error."""
    name = source if isinstance(source, str) else getattr(source, "name", "input")
    try:
        raw = pd.read_csv(
            source, dtype=str, keep_default_na=False, na_filter=False, skipinitialspace=True,
            skip_blank_lines=True, compression=compression, quoting=csv.QUOTE_MINIMAL,
        )
    except FileNotFoundError:
        raise AnonsqlError(f"CSV file not found: {name}") from None
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError, EOFError) as exc:
        raise AnonsqlError(f"cannot read CSV {name}: {first_line(exc)}") from None
    headers = [str(h).strip() for h in raw.columns]
    if any(not h or h.startswith("Unnamed: ") for h in headers):
        raise AnonsqlError(f"cannot read CSV {name}: the header row has an empty column name")
    if len(set(h.lower() for h in headers)) != len(headers):
        raise AnonsqlError(f"cannot read CSV {name}: the header row repeats a column name")
    markers = {""} | {m.strip() for m in na}
    frame = pd.DataFrame(
        {h: _typed(raw.iloc[:, j].str.strip().where(lambda s: ~s.isin(markers))) for j, h in enumerate(headers)}
    )
    return frame


def _typed(col: pd.Series) -> pd.Series:
    present = col.dropna()
    if len(present) and present.str.match(_INT).all():
        return pd.to_numeric(col).astype("Int64")
    numbers = pd.to_numeric(present, errors="coerce")
    if len(present) and numbers.notna().all():
        return pd.to_numeric(col).astype("Float64")
    return col.astype(object)


def column_kind(col: pd.Series) -> str:
    if pd.api.types.is_integer_dtype(col.dtype):
        return "integer"
    if pd.api.types.is_float_dtype(col.dtype):
        return "float"
    return "text"


def write_frame(engine: Engine, frame: pd.DataFrame, table: str | sql.TableName, *,
                replace: bool = False) -> LoadResult:
    """Create `table` from `frame` (one transaction); an existing table needs `replace`."""
    ref = table if isinstance(table, sql.TableName) else sql.TableName.parse(table)
    existing = find_table(engine, ref)
    if existing is not None and not replace:
        raise AnonsqlError(f"table {existing} already exists (use --replace to overwrite it)")
    kinds = {c: column_kind(frame[c]) for c in frame.columns}
    create = exp.Create(
        kind="TABLE",
        this=exp.Schema(
            this=ref.expr,
            expressions=[
                exp.ColumnDef(this=sql.ident(c), kind=exp.DataType.build(_SQL_TYPES[k])) for c, k in kinds.items()
            ],
        ),
    )
    with engine.transaction():
        if existing is not None:
            drop_table(engine, existing.expr)
        engine.execute(create.sql(engine.dialect))
        cols_sql = ", ".join(sql.ident(c).sql(engine.dialect) for c in frame.columns)
        engine.insert_rows(ref.expr.sql(engine.dialect), cols_sql, frame)
    return LoadResult(str(ref), len(frame), kinds)


def drop_table(engine: Engine, table: exp.Table) -> None:
    engine.execute(*sql.render("drop_table", engine.dialect, tbl=table))
