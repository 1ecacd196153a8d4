"""The query files: loads sql/<job>/<name>.sql, binds it and renders it per dialect, with a memo.

Every query anonsql runs lives in sql/ as one DuckDB-dialect statement with `$name`
placeholders, filed by the job that owns it (`sql/kanon/…`) or under `sql/common/` when
several jobs share it; it is addressed as "kanon/apply_suppression". How a placeholder is
filled (a name, a list of names, a value) is anonsql.sql.binding's.

The text depends on the names bound, never on the values, so it is generated once per
(template, dialect, names) in a process and reused (`render`'s memo). Nothing is kept on disk.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

import sqlglot
from sqlglot import exp

from .binding import bind, expand_lists, plain, substitute
from .names import ident

SOURCE_DIALECT = "duckdb"


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


def fragment(name: str, **bindings: Any) -> exp.Expr:
    """The single select expression of sql/<name>.sql, bound, to embed in another query."""
    return _names_bound(name, bindings).expressions[0]


def subquery(name: str, alias: str, **bindings: Any) -> exp.Expr:
    """The statement of sql/<name>.sql, bound (names only), as `(...) AS alias` to read from in another query."""
    return exp.Subquery(this=_names_bound(name, bindings), alias=exp.TableAlias(this=ident(alias)))


def _names_bound(name: str, bindings: Mapping[str, Any]) -> exp.Expr:
    tree = expand_lists(template(name), bindings)
    for ph in list(tree.find_all(exp.Placeholder)):
        substitute(ph, bindings[ph.name])
    return tree
