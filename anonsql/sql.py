"""The SQL layer: loads sql/<job>/<name>.sql, binds names through sqlglot, renders per dialect.

Every query anonsql runs lives in sql/ as one DuckDB-dialect statement with `$name`
placeholders, filed by the job that owns it (`sql/kanon/…`) or under `sql/common/` when
several jobs share it; it is addressed as "kanon/apply_suppression". `render()` fills the
placeholders in three ways, decided by the bound Python value:

* a sqlglot expression (from `ident`, `column`, `TableName.expr`, ...) replaces the
  placeholder in the syntax tree, so a user-supplied name is always a quoted identifier
  and never text pasted into SQL;
* a list of expressions repeats the *clause item* holding the placeholder once per element:
  `SELECT $qi` / `GROUP BY $qi` / `ORDER BY $qi` list the columns, a select item
  `COUNT(DISTINCT $col) AS d` becomes `d_0, d_1, ...`, and a grouping set `($attr, $cls)`
  becomes one set per attribute. Several lists in one item are zipped;
* anything else is a value: the placeholder stays a bound parameter (`$k` on DuckDB,
  `%(k)s` on PostgreSQL) and the value travels in the params dict.

The tree is then generated in the engine's dialect (transpiled by sqlglot). A `%` in a name
or a literal is safe: the PostgreSQL engine doubles every `%` that is not a parameter marker.

The text depends on the names bound, never on the values, so it is generated once per
(template, dialect, names) in a process and reused (`render`'s memo). Nothing is kept on disk.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, reduce
from importlib import resources
from itertools import count
from typing import Any

import numpy as np
import sqlglot
from sqlglot import exp

from .errors import AnonsqlError

SOURCE_DIALECT = "duckdb"


@cache
def _clause_lists() -> frozenset[tuple[type, str]]:
    """Lists whose items a list binding repeats: (parent node type, arg name)."""
    return frozenset({
        (exp.Select, "expressions"),
        (exp.Group, "expressions"),
        (exp.GroupingSets, "expressions"),
        (exp.Order, "expressions"),
        (exp.Window, "partition_by"),
        (exp.Update, "expressions"),
        (exp.Concat, "expressions"),
        (exp.Schema, "expressions"),
    })


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


@cache
def _sql_files() -> Any:
    """Where the sql/ files are (the anonsql._sql package), looked up once: 0.2 ms a lookup."""
    return resources.files("anonsql._sql")


@cache
def _text(name: str) -> str:
    """The text of sql/<name>.sql."""
    try:
        return _sql_files().joinpath(f"{name}.sql").read_text()
    except FileNotFoundError:
        raise KeyError(f"no SQL file sql/{name}.sql") from None


@cache
def _parse(name: str) -> exp.Expr:
    return sqlglot.parse_one(_text(name), read=SOURCE_DIALECT)


def template(name: str) -> exp.Expr:
    """The parsed statement of sql/<name>.sql (a fresh copy, safe to modify)."""
    return _parse(name).copy()


def render(name: str, dialect: str, **bindings: Any) -> tuple[str, dict[str, Any]]:
    """Bind sql/<name>.sql and generate it for `dialect`; returns (sql text, params).

    The text depends on the names bound, never on the values (those travel as parameters), so
    it is generated once per (template, dialect, shape of the bindings) in this process and
    reused (`_RENDERED`, bounded, cleared when full).
    """
    key = (name, dialect, tuple(sorted((k, _shape(v)) for k, v in bindings.items())))
    hit = _RENDERED.get(key)
    if hit is None:
        text, params = bind(template(name), dialect, bindings)
        hit = (text, tuple(params))
        if len(_RENDERED) >= _RENDERED_MAX:
            _RENDERED.clear()
        _RENDERED[key] = hit
    text, value_names = hit
    return text, {k: plain(bindings[k]) for k in value_names}


#: Rendered statements by (template, dialect, shape of the bindings).
_RENDERED: dict[tuple, tuple[str, tuple[str, ...]]] = {}
_RENDERED_MAX = 4096


def _shape(value: Any) -> Any:
    """A hashable, case-sensitive form of a binding as it shapes the SQL text: an expression by
    its full structure, a list item by item, any other value only as "a parameter"."""
    if isinstance(value, (list, tuple)):
        return tuple(_shape(v) for v in value)
    if isinstance(value, exp.Expr):
        return _structure(value)
    return _PARAMETER


def _structure(node: Any) -> Any:
    """An expression tree as nested tuples (class, (arg, value)...), strings kept as written."""
    if isinstance(node, exp.Expr):
        return (type(node).__name__, tuple((k, _structure(v)) for k, v in node.args.items() if v is not None))
    if isinstance(node, list):
        return tuple(_structure(v) for v in node)
    return node


#: The shape of a value binding.
_PARAMETER = object()


def readable(name: str, dialect: str, **bindings: Any) -> str:
    """sql/<name>.sql bound with its values written as literals and pretty-printed: the form
    of a statement in a script a person reviews and runs (`--emit-sql`), never executed by us."""
    text, _ = bind(template(name), dialect, bindings, inline=True)
    return text


def bind(tree: exp.Expr, dialect: str, bindings: Mapping[str, Any], *,
         inline: bool = False) -> tuple[str, dict[str, Any]]:
    """Bind placeholders of a parsed statement (see module docstring) and generate SQL.

    With `inline`, values become SQL literals (for reviewable scripts) and the text is pretty.
    """
    tree = _expand_lists(tree, bindings)
    params: dict[str, Any] = {}
    for ph in list(tree.find_all(exp.Placeholder)):
        key = ph.name
        if key not in bindings:
            raise KeyError(f"placeholder ${key} is not bound")
        value = bindings[key]
        if isinstance(value, exp.Expr):
            _substitute(ph, value)
        elif inline:
            ph.replace(exp.convert(plain(value)))
        else:
            params[key] = plain(value)
    return tree.sql(dialect=_dialect(dialect), pretty=inline), params


def _dialect(name: str) -> sqlglot.Dialect:
    """The sqlglot dialect anonsql writes for an engine's `dialect` (anonsql.engine.dialects: where
    an engine computes something else for the same text, its rewrites live there)."""
    from .engine import dialects  # with sqlglot, which a run served by the cache never imports

    return dialects.get(name)


def _expand_lists(tree: exp.Expr, bindings: Mapping[str, Any]) -> exp.Expr:
    is_list = {k for k, v in bindings.items() if isinstance(v, (list, tuple))}
    while True:
        ph = next((p for p in tree.find_all(exp.Placeholder) if p.name in is_list), None)
        if ph is None:
            return tree
        unit = _clause_item(ph)
        names = {p.name for p in unit.find_all(exp.Placeholder) if p.name in is_list}
        lengths = {len(bindings[n]) for n in names}
        if len(lengths) != 1 or 0 in lengths:
            raise ValueError(f"list bindings {sorted(names)} must be non-empty and of equal length")
        copies = []
        for i in range(lengths.pop()):
            if isinstance(unit, exp.Placeholder):
                copies.append(bindings[unit.name][i].copy())
                continue
            item = unit.copy()
            for p in list(item.find_all(exp.Placeholder)):
                if p.name in names:
                    _substitute(p, bindings[p.name][i])
            if isinstance(item, exp.Alias):  # keep output names distinct: d_0, d_1, ...
                item.set("alias", exp.to_identifier(f"{item.alias}_{i}"))
            copies.append(item)
        parent, key = unit.parent, unit.arg_key
        if parent is None or key is None:
            raise ValueError(f"list binding ${ph.name} has no clause to repeat in")
        items = list(parent.args[key])
        pos = next(i for i, node in enumerate(items) if node is unit)
        parent.set(key, items[:pos] + copies + items[pos + 1 :])


def fragment(name: str, **bindings: Any) -> exp.Expr:
    """The single select expression of sql/<name>.sql, bound, to embed in another query."""
    return _names_bound(name, bindings).expressions[0]


def subquery(name: str, alias: str, **bindings: Any) -> exp.Expr:
    """The statement of sql/<name>.sql, bound (names only), as `(...) AS alias` to read from in another query."""
    return exp.Subquery(this=_names_bound(name, bindings), alias=exp.TableAlias(this=ident(alias)))


def _names_bound(name: str, bindings: Mapping[str, Any]) -> exp.Expr:
    tree = _expand_lists(template(name), bindings)
    for ph in list(tree.find_all(exp.Placeholder)):
        _substitute(ph, bindings[ph.name])
    return tree


# ---------------------------------------------------------------- generated once, bound many times
# A wide table's features are thousands of columns; one sqlglot tree per column costs more than
# the query. So a repeated piece is generated once on a stand-in column and copied as text, each
# copy with its own name as sqlglot quotes it for the dialect: never a name pasted raw.

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


def text(node: exp.Expr, dialect: str) -> str:
    """One expression generated for `dialect`, with the engine rewrites `bind` applies."""
    return node.sql(dialect=_dialect(dialect))


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
    tree = _expand_lists(template(name), {**bindings, key: [stand_in(0)]})
    item = _clause_item(next(c for c in tree.find_all(exp.Column) if c.name == f"{_STAND}_0"))
    unit = item.copy()
    item.replace(stand_in(1))
    whole, params = bind(tree, dialect, bindings)
    aliases: Sequence[str] = [""] * len(names)
    if isinstance(unit, exp.Alias):  # numbered as _expand_lists numbers them
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


def _substitute(ph: exp.Placeholder, value: exp.Expr) -> None:
    """Put `value` where the placeholder stands, fitting it to the surrounding node."""
    parent = ph.parent
    if isinstance(value, exp.Table) and isinstance(parent, exp.Table):
        for arg in ("this", "db", "catalog"):  # FROM $tbl [AS alias]: keep the alias
            parent.set(arg, value.args.get(arg) and value.args[arg].copy())
    elif isinstance(value, exp.Column) and isinstance(parent, exp.Column):
        ph.replace(value.this.copy())  # alias.$col: the name goes under the alias
    else:
        ph.replace(value.copy())


def _clause_item(node: exp.Expr) -> exp.Expr:
    """The nearest ancestor-or-self that is an item of a clause list (select, group, order...)."""
    start = node
    while node.parent is not None:
        if (type(node.parent), node.arg_key) in _clause_lists():
            return node
        node = node.parent
    raise ValueError(f"list binding ${start.name} is not inside a select, group or order list")


def plain(value: Any) -> Any:
    """A Python scalar for a driver or a literal (numpy scalars are not adapted by psycopg)."""
    return value.item() if isinstance(value, np.generic) else value
