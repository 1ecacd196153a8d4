"""CSV → database table, parsed by DuckDB's CSV reader, keeping every value as written.

The dialect is fixed, never guessed: a header row, RFC 4180 double quotes, the delimiter given
(`--delimiter`) or else the one of `, ; TAB |` found most often in the header line, the
encoding given (default UTF-8; a byte-order mark is dropped), gzip by its magic bytes. Fields
are trimmed; empty fields and NA markers become NULL. A column's type is read from its values
by SQL (sql/data/csv_kinds.sql): whole numbers that fit BIGINT without a leading zero become
integer (so ZIP 01548 and a 20-digit code stay text), numbers float, ISO dates date, ISO
timestamps timestamp, ISO timestamps ending in a zone (`Z`, `+00:00`) timestamptz (the instant
kept), the rest text; `--types col=TYPE` overrides (`date:truncate` to drop a time of day, which
`date` refuses). Ragged rows, undecodable bytes and NUL bytes are one error line. On PostgreSQL
the file is read the same way by an in-process DuckDB and copied in, so both engines hold the
same table.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from sqlglot import exp

from .. import sql
from ..catalog import find_table, staged_output
from ..engine import Engine
from ..engine.duckdb import DuckDBEngine
from ..errors import AnonsqlError, DatabaseError, VerificationError, first_line
from ..report import Report
from ..validate import column_pairs

#: The column types a CSV column can take (kind -> SQL type); `--types` names these kinds.
KINDS = {"integer": "BIGINT", "float": "DOUBLE", "date": "DATE", "timestamp": "TIMESTAMP",
         "timestamptz": "TIMESTAMPTZ", "boolean": "BOOLEAN", "text": "TEXT"}
_DELIMITERS = (",", ";", "\t", "|")
_DUCKDB_ENCODINGS = {"utf-8": "utf-8", "utf-8-sig": "utf-8", "utf-16": "utf-16", "latin-1": "latin-1",
                     "iso8859-1": "latin-1"}
_BATCH_ROWS = 100_000
#: `--types x=date:truncate`: the one kind with a qualifier, a date that may drop a time of day.
TRUNCATE = "date:truncate"


@dataclass(kw_only=True)
class LoadReport(Report):
    """A table created from a CSV or a bundled data set."""

    rows: int
    columns: dict[str, str]  # name -> integer | float | date | timestamp | timestamptz | boolean | text

    def lines(self) -> list[str]:
        cols = ", ".join(f"{c} ({k})" for c, k in self.columns.items())
        return [f"loaded {self.rows:,} rows into {self.table}: {cols}"]


@dataclass(frozen=True)
class CsvFormat:
    """How to read a CSV: NA markers, delimiter (None: from the header), encoding, type overrides."""

    na: tuple[str, ...] = ()
    delimiter: str | None = None
    encoding: str = "utf-8"
    types: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def build(cls, na: Sequence[str] = (), delimiter: str | None = None, encoding: str | None = None,
              types: Mapping[str, str] | str | None = None) -> CsvFormat:
        """Validated options as typed by a user (`types` as 'col=TYPE,...' or a mapping)."""
        if delimiter is not None:
            delimiter = {"\\t": "\t", "tab": "\t"}.get(delimiter, delimiter)
            if len(delimiter) != 1 or delimiter in '"\r\n':
                raise AnonsqlError(f"bad delimiter {delimiter!r}: give one character (\\t for a tab), not a quote")
        try:
            encoding = codecs.lookup(encoding or "utf-8").name
        except LookupError:
            raise AnonsqlError(f"unknown encoding {encoding!r} (e.g. utf-8, latin-1, cp1252, utf-16)") from None
        return cls(tuple(na), delimiter, encoding, parse_types(types))


def parse_types(types: Mapping[str, str] | str | None) -> dict[str, str]:
    """'zip=text,age=integer' (or a mapping) -> {column: kind}, kinds checked against KINDS
    (and `date:truncate`, a date that may drop a time of day)."""
    result: dict[str, str] = {}
    for column, kind in column_pairs(types, "--types", "zip=text,born=date"):
        kind = kind.lower()
        if not column or (kind not in KINDS and kind != TRUNCATE):
            raise AnonsqlError(f"bad type for {column or '?'!r}: {kind!r}; use COLUMN=TYPE with TYPE one of "
                               + ", ".join(KINDS) + f" (or {TRUNCATE}: a date, its time of day dropped)")
        if column in result:
            raise AnonsqlError(f"column '{column}' has two --types entries")
        result[column] = kind
    return result


def count_rows(engine: Engine, table: exp.Table) -> int:
    """N: the rows of a table, counted by SQL (for checks)."""
    text, params = sql.render("common/row_count", engine.dialect, tbl=table)
    return int(engine.fetch_all(text, params)[0][0])


@dataclass
class _Csv:
    """A CSV file ready for DuckDB's reader: a UTF-8/UTF-16/Latin-1 path, its dialect and header."""

    name: str  # as the user gave it, for messages
    path: str
    compression: str
    encoding: str
    delimiter: str
    header: list[str]


@contextmanager
def _prepared(path: str, fmt: CsvFormat) -> Iterator[_Csv]:
    """Open `path`: gzip detected, other encodings transcoded to a private UTF-8 copy, the header
    row read and checked (names present, none repeated)."""
    if not os.path.isfile(path):
        raise AnonsqlError(f"CSV file not found: {path}")
    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    encoding = _DUCKDB_ENCODINGS.get(fmt.encoding)
    scratch = None
    try:
        source = path
        if encoding is None:  # an encoding DuckDB lacks: transcode once, in a private temp file
            scratch = tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".csv", delete=False)
            with scratch, _text(path, gz, fmt.encoding) as fh:
                shutil.copyfileobj(fh, scratch)
            source, gz, encoding = scratch.name, False, "utf-8"
        with _text(source, gz, "utf-8-sig" if encoding == "utf-8" else encoding) as fh:
            line = fh.readline()
        if not line.strip():
            raise AnonsqlError(f"cannot read CSV {path}: the file is empty (a header row is required)")
        delimiter = fmt.delimiter or max(_DELIMITERS, key=lambda d: (line.count(d), d == ","))
        header = [h.strip() for h in next(csv.reader([line], delimiter=delimiter, strict=True))]
        yield _Csv(path, source, "gzip" if gz else "none", encoding, delimiter, header)
    except UnicodeDecodeError:
        raise AnonsqlError(f"cannot read CSV {path}: the bytes are not {fmt.encoding} text (give --encoding)") from None
    except (OSError, UnicodeError, csv.Error, EOFError) as exc:
        raise AnonsqlError(f"cannot read CSV {path}: {first_line(exc)}") from None
    finally:
        if scratch is not None:
            os.unlink(scratch.name)


def _text(path: str, gz: bool, encoding: str) -> Any:
    return (gzip.open(path, "rt", encoding=encoding, newline="") if gz
            else open(path, encoding=encoding, newline=""))


def _check_header(src: _Csv) -> None:
    if any(not h for h in src.header):
        raise AnonsqlError(f"cannot read CSV {src.name}: the header row has an empty column name")
    if len({h.lower() for h in src.header}) != len(src.header):
        raise AnonsqlError(f"cannot read CSV {src.name}: the header row repeats a column name")
    if any("\x00" in h for h in src.header):
        raise AnonsqlError(f"cannot read CSV {src.name}: the header row holds a NUL byte (not a text file?)")


def _csv_error(src: _Csv, exc: DatabaseError) -> AnonsqlError:
    """DuckDB's many-line CSV error as one line: where, and what is wrong."""
    text = str(exc.__cause__ or exc)
    line = re.search(r"CSV Error on Line: (\d+)", text)
    where = f"line {line.group(1)}: " if line else ""
    if "Expected Number of Columns" in text:
        return AnonsqlError(f"cannot read CSV {src.name}: {where}the row does not have the header's "
                            f"{len(src.header)} fields (delimiter {src.delimiter!r})")
    if "Invalid unicode" in text:
        return AnonsqlError(f"cannot read CSV {src.name}: {where}the bytes are not {src.encoding} text "
                            "(give --encoding)")
    reason = next((ln.strip() for ln in text.splitlines()[1:] if ln.strip()), first_line(exc))
    return AnonsqlError(f"cannot read CSV {src.name}: {where}{reason if line else first_line(exc)}")


class _Reader:
    """The CSV's trimmed text as a temporary table (internal column names c0, c1, ...; a fresh
    random name, private to the connection) on a DuckDB connection: the target itself when it
    is DuckDB, else a private in-memory one."""

    def __init__(self, engine: Engine, src: _Csv, na: Sequence[str]):
        self.src = src
        self.own = not engine.reads_csv
        self.engine: Engine = DuckDBEngine(":memory:") if self.own else engine
        self.view = sql.TableName(f"anonsql_csv_{uuid.uuid4().hex}").expr
        self.inner = [f"c{i}" for i in range(len(src.header))]
        columns = exp.Struct(expressions=[exp.PropertyEQ(this=exp.to_identifier(c), expression=exp.convert("VARCHAR"))
                                          for c in self.inner])
        markers = exp.convert(sorted({m.strip() for m in na}) or [""])
        fields = [exp.alias_(sql.fragment("data/csv_field", col=sql.column(c), na=markers), sql.ident(c))
                  for c in self.inner]
        try:
            self.engine.execute(*sql.render(
                "data/csv_read", "duckdb", view=self.view, item=fields, path=exp.convert(src.path),
                delim=exp.convert(src.delimiter), columns=columns, encoding=exp.convert(src.encoding),
                compression=exp.convert(src.compression)))
        except DatabaseError as exc:
            self.close()
            raise _csv_error(src, exc) from None

    def fetch_all(self, name: str, **binds: Any) -> list[tuple]:
        try:
            return self.engine.fetch_all(*sql.render(name, "duckdb", tbl=self.view, **binds))
        except DatabaseError as exc:
            raise _csv_error(self.src, exc) from None

    def kinds(self, types: Mapping[str, str]) -> tuple[dict[str, str], int]:
        """Each column's kind (sql/data/csv_kinds.sql, then `types`) and the number of data rows."""
        m = len(self.inner)
        first = self.fetch_all("data/csv_candidates", v=sql.columns(self.inner))[0]
        rows, values, candidates, nuls = int(first[0]), first[1:1 + m], first[1 + m:1 + 2 * m], first[1 + 2 * m:]
        for name, nul in zip(self.src.header, nuls):
            if nul:
                raise AnonsqlError(f"cannot read CSV {self.src.name}: column '{name}' holds a NUL byte "
                                   "(binary data, not CSV text)")
        known = {h.lower(): h for h in self.src.header}
        unknown = [c for c in types if c not in self.src.header and c.lower() not in known]
        if unknown:
            raise AnonsqlError(f"--types names a column the CSV lacks: {', '.join(unknown)}; "
                               f"its columns: {', '.join(self.src.header)}")
        override = {c if c in self.src.header else known[c.lower()]: k for c, k in types.items()}
        self._refuse_times_of_day([j for j in range(m) if override.get(self.src.header[j]) == "date"])
        kinds = {name: override.get(name, "text").removesuffix(":truncate") for name in self.src.header}
        look = [j for j in range(m) if self.src.header[j] not in override and values[j] and values[j] == candidates[j]]
        if look:
            shapes = [sql.fragment("data/csv_shape", v=sql.column(self.inner[j])) for j in look]
            row = self.fetch_all("data/csv_kinds", shape=shapes, k=[sql.column(f"k_{i}") for i in range(len(look))])[0]
            for i, j in enumerate(look):
                integer, number, date, stamp, zoned = (int(row[c * len(look) + i]) for c in range(5))
                n = int(values[j])
                kinds[self.src.header[j]] = ("integer" if integer == n else "float" if number == n
                                             else "date" if date == n else "timestamp" if stamp == n
                                             else "timestamptz" if zoned == n else "text")
        return kinds, rows

    def _refuse_times_of_day(self, dates: list[int]) -> None:
        """--types x=date on values with a time of day: one error line (date:truncate drops it)."""
        if not dates:
            return
        timed = self.fetch_all("data/csv_times_of_day", v=[sql.column(self.inner[j]) for j in dates])[0]
        for j, n in zip(dates, timed):
            if n:
                name = self.src.header[j]
                raise AnonsqlError(f"--types {name}=date: {n:,} value(s) of column '{name}' hold a time of day, "
                                   f"which a date would drop; use {name}=timestamp to keep it, or "
                                   f"{name}={TRUNCATE} to drop it")

    def typed(self, kinds: Mapping[str, str]) -> list[exp.Expr]:
        """The select items casting each internal column to its kind under the header's name."""
        return [exp.alias_(sql.column(c) if kind == "text" else exp.cast(sql.column(c), KINDS[kind]), sql.ident(name))
                for c, (name, kind) in zip(self.inner, kinds.items())]

    def close(self) -> None:
        if self.own:
            self.engine.close()
        else:
            self.engine.execute(*sql.render("common/drop_temp_table", "duckdb", tbl=self.view))


@contextmanager
def _reading(engine: Engine, path: str, fmt: CsvFormat) -> Iterator[tuple[_Reader, dict[str, str], int]]:
    with _prepared(path, fmt) as src:
        _check_header(src)
        reader = _Reader(engine, src, fmt.na)
        try:
            kinds, rows = reader.kinds(fmt.types)
            if not rows:
                raise AnonsqlError(f"CSV {path} has a header but no rows")
            yield reader, kinds, rows
        finally:
            reader.close()


def load_csv(engine: Engine, path: str, table: str, fmt: CsvFormat, *, replace: bool = False) -> LoadReport:
    """Create `table` from the CSV at `path` in one transaction (an existing table needs `replace`;
    on Spark the rows go to a staging table that replaces it only once checked: staged_output)."""
    ref = sql.TableName.parse(table)
    existing = find_table(engine, ref)
    if existing is not None and not replace:
        raise AnonsqlError(f"table {existing} already exists (use --replace to overwrite it)")
    with _reading(engine, path, fmt) as (reader, kinds, rows), engine.transaction(), \
            staged_output(engine, ref, existing) as target:
        _create(engine, target, kinds)
        try:
            if reader.engine is engine:  # DuckDB: one INSERT ... SELECT where the data lives
                engine.execute(*sql.render("data/insert_select", engine.dialect, out=target.expr,
                                           col=sql.columns(list(kinds)), item=reader.typed(kinds), tbl=reader.view))
            else:  # PostgreSQL, Spark: the typed rows, read by DuckDB, copied in batches
                data = reader.engine.fetch_arrow(*sql.render("data/select_items", "duckdb", item=reader.typed(kinds),
                                                             tbl=reader.view))
                for batch in data.to_batches(max_chunksize=_BATCH_ROWS):
                    engine.insert_rows(target.expr, list(kinds), batch.to_pandas(types_mapper=pd.ArrowDtype))
        except DatabaseError as exc:
            named = re.sub(r"source column c(\d+)", lambda m: f"column '{list(kinds)[int(m.group(1))]}'", str(exc))
            raise AnonsqlError(f"cannot load CSV {path}: {named} (check --types)") from None
        return _written(engine, ref, target, kinds, rows)


def read_frame(path: str, fmt: CsvFormat) -> tuple[pd.DataFrame, dict[str, str]]:
    """The CSV read exactly as `load_csv` reads it, as a DataFrame in file order, and its kinds."""
    scratch = DuckDBEngine(":memory:")
    try:
        with _reading(scratch, path, fmt) as (reader, kinds, _rows):
            data = scratch.fetch_arrow(*sql.render("data/select_items", "duckdb", item=reader.typed(kinds),
                                                   tbl=reader.view))
            return data.to_pandas(types_mapper=pd.ArrowDtype), kinds
    finally:
        scratch.close()


def column_kind(col: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(col.dtype):
        return "boolean"
    if pd.api.types.is_integer_dtype(col.dtype):
        return "integer"
    if pd.api.types.is_float_dtype(col.dtype):
        return "float"
    return "text"


def _create(engine: Engine, ref: sql.TableName, kinds: Mapping[str, str], temporary: bool = False) -> None:
    create = exp.Create(
        kind="TABLE",
        this=exp.Schema(this=ref.expr, expressions=[
            exp.ColumnDef(this=sql.ident(c), kind=exp.DataType.build(KINDS[k])) for c, k in kinds.items()]),
        properties=exp.Properties(expressions=[exp.TemporaryProperty()]) if temporary else None,
    )
    engine.execute(create.sql(engine.dialect))


def _written(engine: Engine, ref: sql.TableName, target: sql.TableName, kinds: Mapping[str, str],
             rows: int) -> LoadReport:
    """The report of a load into `ref`, with the SQL check that every row read is in the table
    (`target`: `ref` itself, or on Spark its staging table)."""
    report = LoadReport(table=str(ref), rows=rows, columns=dict(kinds))
    written = count_rows(engine, target.expr)
    report.check("every row read is in the table", written == rows, "common/row_count", f"{written:,} of {rows:,}")
    if not report.ok:
        raise VerificationError(report.checks)
    return report


def write_frame(engine: Engine, frame: pd.DataFrame, table: str | sql.TableName, *, replace: bool = False,
                kinds: Mapping[str, str] | None = None, temporary: bool = False) -> LoadReport:
    """Create `table` from `frame` (one transaction); an existing table needs `replace`.
    `kinds` gives the column types (default: from the frame's dtypes); `temporary` makes it a
    temporary table, private to this connection."""
    ref = table if isinstance(table, sql.TableName) else sql.TableName.parse(table)
    existing = None if temporary else find_table(engine, ref)
    if existing is not None and not replace:
        raise AnonsqlError(f"table {existing} already exists (use --replace to overwrite it)")
    with engine.transaction(), (nullcontext(ref) if temporary else staged_output(engine, ref, existing)) as target:
        return fill_table(engine, frame, ref, target, kinds, temporary)


def fill_table(engine: Engine, frame: pd.DataFrame, ref: sql.TableName, target: sql.TableName,
               kinds: Mapping[str, str] | None = None, temporary: bool = False) -> LoadReport:
    """Create `target` holding `frame` and check it by SQL; the report names `ref` (`target` is
    `ref`, or the staging name staged_output gave it)."""
    kinds = dict(kinds) if kinds else {c: column_kind(frame[c]) for c in frame.columns}
    _create(engine, target, kinds, temporary)
    engine.insert_rows(target.expr, list(kinds), frame)
    return _written(engine, ref, target, kinds, len(frame))
