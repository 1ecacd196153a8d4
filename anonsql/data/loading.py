"""CSV → database table: header row, NA markers, whitespace trimmed, column types inferred.

Every field is read as text, trimmed, and matched against the NA markers (the empty field is
always NULL); a column whose values all parse as integers becomes BIGINT, else as numbers
DOUBLE, else text. The table is created and filled in one transaction.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any

import pandas as pd
from sqlglot import exp

from .. import sql
from ..catalog import drop_table, find_table
from ..engine import Engine
from ..errors import AnonsqlError, VerificationError, first_line
from ..report import Report

_INT = re.compile(r"^[+-]?\d+$")
_SQL_TYPES = {"integer": "BIGINT", "float": "DOUBLE", "text": "TEXT"}


@dataclass(kw_only=True)
class LoadReport(Report):
    """A table created from a CSV or a bundled data set."""

    rows: int
    columns: dict[str, str]  # name -> integer | float | text

    def lines(self) -> list[str]:
        cols = ", ".join(f"{c} ({k})" for c, k in self.columns.items())
        return [f"loaded {self.rows:,} rows into {self.table}: {cols}"]


def count_rows(engine: Engine, table: exp.Table) -> int:
    """N: the rows of a table, counted by SQL (for checks)."""
    text, params = sql.render("common/row_count", engine.dialect, tbl=table)
    return int(engine.fetch_all(text, params)[0][0])


def read_csv(source: str | IO[bytes], na: Sequence[str] = ()) -> pd.DataFrame:
    """Read a CSV (plain or gzip) as typed columns; unreadable or ragged input is a user error."""
    name = source if isinstance(source, str) else getattr(source, "name", "input")
    try:
        with _open_text(source) as fh:
            rows = [r for r in csv.reader(fh, skipinitialspace=True, strict=True) if r]
    except FileNotFoundError:
        raise AnonsqlError(f"CSV file not found: {name}") from None
    except (OSError, UnicodeDecodeError, csv.Error, EOFError) as exc:
        raise AnonsqlError(f"cannot read CSV {name}: {first_line(exc)}") from None
    if not rows:
        raise AnonsqlError(f"cannot read CSV {name}: the file is empty (a header row is required)")
    headers = [h.strip() for h in rows[0]]
    if any(not h for h in headers):
        raise AnonsqlError(f"cannot read CSV {name}: the header row has an empty column name")
    if len({h.lower() for h in headers}) != len(headers):
        raise AnonsqlError(f"cannot read CSV {name}: the header row repeats a column name")
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(headers):
            raise AnonsqlError(
                f"cannot read CSV {name}: data row {line - 1} has {len(row)} fields, the header {len(headers)}"
            )
    raw = pd.DataFrame(rows[1:], columns=headers, dtype=object)
    markers = {""} | {m.strip() for m in na}
    return pd.DataFrame({h: _typed(raw[h].str.strip().where(lambda s: ~s.isin(markers))) for h in headers})


def _open_text(source: str | IO[bytes]) -> IO[str]:
    """A text stream over `source`, gunzipped when it starts with the gzip magic bytes."""
    raw: Any = open(source, "rb") if isinstance(source, str) else source
    binary: Any = raw if hasattr(raw, "peek") else io.BufferedReader(raw)
    if binary.peek(2)[:2] == b"\x1f\x8b":
        binary = gzip.GzipFile(fileobj=binary)
    return io.TextIOWrapper(binary, encoding="utf-8", newline="")


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
                replace: bool = False) -> LoadReport:
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
        report = LoadReport(table=str(ref), rows=len(frame), columns=kinds)
        written = count_rows(engine, ref.expr)
        report.check("every row read is in the table", written == len(frame), "common/row_count",
                     f"{written:,} of {len(frame):,}")
        if not report.ok:
            raise VerificationError(report.checks)
    return report

