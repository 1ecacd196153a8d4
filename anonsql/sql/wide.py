"""Wide tables: statements over thousands of columns, generated once and bound many times.

A wide table's features are thousands of columns; one sqlglot tree per column costs more than
the query. So a repeated piece is generated once on a stand-in column and copied as text, each
copy with its own name as sqlglot quotes it for the dialect: never a name pasted raw. A row's
group key over more columns than PostgreSQL's CONCAT takes is chained from chunks.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from functools import reduce
from typing import Any

import sqlglot
from sqlglot import exp

from .binding import bind, clause_item, expand_lists
from .names import column, ident
from .templates import fragment, template

#: The stand-in columns' name (no table has it: a random part per process).
_STAND = f"anonsql_stand_in_{uuid.uuid4().hex[:12]}"


def stand_in(i: int) -> exp.Column:
    """The i-th stand-in column: bind it where generated text goes, then `splice` the text in."""
    return column(f"{_STAND}_{i}")


def quoted(names: Sequence[str], dialect: str) -> list[str]:
    """The names as quoted identifiers of `dialect` (the text of `ident(name)`), one generator for all."""
    return _generated([ident(n) for n in names], dialect)


def _generated(nodes: Sequence[exp.Expr], dialect: str) -> list[str]:
    generator = sqlglot.Dialect.get_or_raise(dialect).generator()
    return [generator.generate(n) for n in nodes]


def splice(sql_text: str, dialect: str, pieces: Mapping[int, str]) -> str:
    """Generated `sql_text` with stand_in(i) replaced by pieces[i] (one pass: a piece is never rescanned)."""
    marks = dict(zip(quoted([f"{_STAND}_{i}" for i in pieces], dialect), pieces.values()))
    return re.sub("|".join(map(re.escape, marks)), lambda m: marks[m.group()], sql_text)


def render_columns(name: str, dialect: str, key: str, names: Sequence[str],
                   **bindings: Any) -> tuple[str, dict[str, Any]]:
    """render(name, dialect, key=columns(names), **bindings) for thousands of names: the clause
    item holding $key (e.g. `SUM($col) AS s`) is generated once on a stand-in column and repeated
    as text, each copy with its name quoted by sqlglot and its alias numbered (s_0, s_1, ...)."""
    if not names:
        raise ValueError(f"list binding ${key} must be non-empty")
    tree = expand_lists(template(name), {**bindings, key: [stand_in(0)]})
    item = clause_item(next(c for c in tree.find_all(exp.Column) if c.name == f"{_STAND}_0"))
    unit = item.copy()
    item.replace(stand_in(1))
    whole, params = bind(tree, dialect, bindings)
    aliases: Sequence[str] = [""] * len(names)
    if isinstance(unit, exp.Alias):  # numbered as expand_lists numbers them
        base = unit.alias.removesuffix("_0")
        aliases = _generated([exp.to_identifier(f"{base}_{i}") for i in range(len(names))], dialect)
        unit.set("alias", stand_in(2).this)
    piece, more = bind(unit, dialect, bindings)
    column_mark, alias_mark = quoted([f"{_STAND}_0", f"{_STAND}_2"], dialect)
    copies = ", ".join(piece.replace(alias_mark, a).replace(column_mark, n)  # the name last: never rescanned
                       for n, a in zip(quoted(names, dialect), aliases))
    return splice(whole, dialect, {1: copies}), {**params, **more}


#: PostgreSQL's CONCAT takes at most 100 arguments.
CONCAT_ARGS = 100


def group_key(cols: Sequence[exp.Expr]) -> exp.Expr:
    """The NULL-safe group key of sql/group_key.sql over `cols`; a wider row's key is the keys of
    chunks of CONCAT_ARGS columns joined by ||, the same text (so any number of columns works)."""
    cols = list(cols)
    if len(cols) <= CONCAT_ARGS:
        return fragment("common/group_key", col=cols)
    parts = [group_key(cols[i:i + CONCAT_ARGS]) for i in range(0, len(cols), CONCAT_ARGS)]
    return reduce(lambda left, right: exp.DPipe(this=left, expression=right, safe=True), parts)
