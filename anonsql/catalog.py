"""Resolve user-typed table and column names against the database catalog.

Names are matched exactly first, then case-insensitively when that is unambiguous, so
`--table Adult` finds PostgreSQL's folded `adult` and a quoted `"Adult"` alike. Unknown
names are user errors that list what exists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from . import sql
from .engine import Engine
from .errors import AnonsqlError

_KINDS = {
    "text": ("char", "text", "string", "varchar", "uuid", "enum"),
    "integer": ("int", "serial"),
    "float": ("double", "float", "real"),
    "decimal": ("decimal", "numeric"),
    "boolean": ("bool",),
    "timestamp": ("timestamp",),
    "date": ("date",),
}


def type_kind(data_type: str) -> str:
    """A portable name for an engine's column type: DuckDB VARCHAR and PostgreSQL text are 'text'."""
    low = data_type.lower()
    for kind, stems in _KINDS.items():
        if any(stem in low for stem in stems):
            return kind
    return low


@dataclass(frozen=True)
class Column:
    name: str
    data_type: str

    @property
    def kind(self) -> str:
        return type_kind(self.data_type)


@dataclass(frozen=True)
class Table:
    """A table that exists, with its catalog spelling and columns."""

    schema: str
    name: str
    columns: tuple[Column, ...]
    qualified: bool = False  # the user named the schema, so messages show it

    @property
    def expr(self) -> exp.Table:
        return sql.TableName(self.name, self.schema).expr

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> Column:
        """The column a user-typed name refers to (exact match, else unique case-insensitive)."""
        for c in self.columns:
            if c.name == name:
                return c
        folded = [c for c in self.columns if c.name.lower() == name.lower()]
        if len(folded) == 1:
            return folded[0]
        listing = ", ".join(self.column_names)
        raise AnonsqlError(f"unknown column '{name}' in table {self}; its columns: {listing}")

    def resolve(self, names: Sequence[str]) -> list[str]:
        """Catalog spellings of `names`; duplicates are an error."""
        resolved = [self.column(n).name for n in names]
        dupes = sorted({n for n in resolved if resolved.count(n) > 1})
        if dupes:
            raise AnonsqlError(f"column listed twice: {', '.join(dupes)}")
        return resolved

    def __str__(self) -> str:
        return f"{self.schema}.{self.name}" if self.qualified else self.name


def find_table(engine: Engine, name: str | sql.TableName) -> Table | None:
    """The table `name` refers to, or None when there is none."""
    ref = name if isinstance(name, sql.TableName) else sql.TableName.parse(name)
    text, params = sql.render(
        "common/table_columns", engine.dialect, table_name=ref.name, schema_name=ref.schema
    )
    rows = engine.fetch_all(text, params)
    tables = {(r[0], r[1]) for r in rows}
    exact = [t for t in tables if t[1] == ref.name and (ref.schema is None or t[0] == ref.schema)]
    if len(exact) == 1:
        chosen = exact[0]
    elif len(tables) == 1:
        chosen = next(iter(tables))
    elif not tables:
        return None
    else:
        raise AnonsqlError(f"table name {ref} is ambiguous: {sorted(tables)}; quote it exactly")
    cols = tuple(Column(r[2], r[3]) for r in rows if (r[0], r[1]) == chosen)
    return Table(chosen[0], chosen[1], cols, qualified=ref.schema is not None)


def get_table(engine: Engine, name: str | sql.TableName) -> Table:
    """The table `name` refers to; a user error when it does not exist."""
    table = find_table(engine, name)
    if table is None:
        raise AnonsqlError(f"table not found: {name}")
    return table


def output_table(engine: Engine, source: Table, out: str | None, default: str, replace: bool,
                 in_place: bool = False) -> tuple[sql.TableName, Table | None]:
    """Where a job writes: `out` (or `default` beside the source) and the table it replaces.

    `in_place` names the source itself. Otherwise writing over the source is refused and an
    existing output needs `replace`; the caller drops the returned table inside its own
    transaction, so a failed run leaves it in place.
    """
    if in_place:
        if out:
            raise AnonsqlError("--out and --in-place exclude each other")
        return sql.TableName(source.name, source.schema if source.qualified else None), None
    ref = sql.TableName.parse(out) if out else sql.TableName(default, source.schema if source.qualified else None)
    existing = find_table(engine, ref)
    if existing is not None and (existing.schema, existing.name) == (source.schema, source.name):
        raise AnonsqlError(f"the output would overwrite the source table {source}")
    if existing is not None and not replace:
        raise AnonsqlError(f"output table {existing} already exists (use --replace to overwrite it)")
    return ref, existing


def drop_table(engine: Engine, table: exp.Table) -> None:
    """Drop a table (the caller holds the transaction that makes it safe)."""
    engine.execute(*sql.render("common/drop_table", engine.dialect, tbl=table))
