"""Names as sqlglot identifiers: a user-supplied table or column name is always a quoted
identifier in the tree, never text pasted into SQL."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import count

from sqlglot import exp

from ..errors import AnonsqlError


def ident(name: str) -> exp.Identifier:
    """A user-supplied name as a quoted identifier: `select`, `a b`, `a"b` all stay names."""
    return exp.to_identifier(name, quoted=True)


def unused_ident(base: str, taken: Sequence[str]) -> exp.Identifier:
    """An internal alias that none of the `taken` names spells, in any case (`base`, `base_1`, ...):
    for a query that puts its own column beside a user's columns in one select list."""
    names = {t.lower() for t in taken}
    candidates = (f"{base}_{i}" if i else base for i in count())
    return ident(next(c for c in candidates if c.lower() not in names))


def column(name: str, table: str | None = None) -> exp.Column:
    """A quoted column reference, optionally qualified by a (query-local) table alias."""
    return exp.column(ident(name), table=ident(table) if table else None)


def columns(names: Sequence[str], table: str | None = None) -> list[exp.Column]:
    return [column(n, table) for n in names]


@dataclass(frozen=True)
class TableName:
    """A table name as the user typed it: `name` or `schema.name` (double quotes allowed)."""

    name: str
    schema: str | None = None

    @classmethod
    def parse(cls, text: str) -> TableName:
        """Split on dots outside double quotes; `"a.b"` is one name, `""` an escaped quote."""
        parts, buf, quoted, i = [], [], False, 0
        while i < len(text):
            ch = text[i]
            if ch == '"':
                if quoted and text[i + 1 : i + 2] == '"':
                    buf.append('"')
                    i += 1
                else:
                    quoted = not quoted
            elif ch == "." and not quoted:
                parts.append("".join(buf))
                buf = []
            else:
                buf.append(ch)
            i += 1
        parts.append("".join(buf))
        if quoted or not 1 <= len(parts) <= 2 or not all(p.strip() for p in parts):
            raise AnonsqlError(f"not a table name: {text!r} (use name or schema.name)")
        return cls(parts[-1], parts[0] if len(parts) == 2 else None)

    @property
    def expr(self) -> exp.Table:
        return exp.Table(this=ident(self.name), db=ident(self.schema) if self.schema else None)

    def __str__(self) -> str:
        return f"{self.schema}.{self.name}" if self.schema else self.name
