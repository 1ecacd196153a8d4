"""Binding a parsed statement's `$name` placeholders and generating it for an engine's dialect.

`bind()` fills the placeholders in three ways, decided by the bound Python value:

* a sqlglot expression (from `ident`, `column`, `TableName.expr`, ...) replaces the
  placeholder in the syntax tree, so a user-supplied name is always a quoted identifier
  and never text pasted into SQL;
* a list of expressions repeats the *clause item* holding the placeholder once per element:
  `SELECT $qi` / `GROUP BY $qi` / `ORDER BY $qi` list the columns, a select item
  `COUNT(DISTINCT $col) AS d` becomes `d_0, d_1, ...`, and a grouping set `($attr, $cls)`
  becomes one set per attribute. Several lists in one item are zipped;
* anything else is a value: the placeholder stays a bound parameter (`$k` on DuckDB,
  `%(k)s` on PostgreSQL) and the value travels in the params dict.

The tree is then generated in the engine's dialect (transpiled by sqlglot, with anonsql's
rewrites: anonsql.engine.dialects). A `%` in a name or a literal is safe: the PostgreSQL engine
doubles every `%` that is not a parameter marker.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np
import sqlglot
from sqlglot import exp


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


def bind(tree: exp.Expr, dialect: str, bindings: Mapping[str, Any], *,
         inline: bool = False) -> tuple[str, dict[str, Any]]:
    """Bind placeholders of a parsed statement (see module docstring) and generate SQL.

    With `inline`, values become SQL literals (for reviewable scripts) and the text is pretty.
    """
    tree = expand_lists(tree, bindings)
    params: dict[str, Any] = {}
    for ph in list(tree.find_all(exp.Placeholder)):
        key = ph.name
        if key not in bindings:
            raise KeyError(f"placeholder ${key} is not bound")
        value = bindings[key]
        if isinstance(value, exp.Expr):
            substitute(ph, value)
        elif inline:
            ph.replace(exp.convert(plain(value)))
        else:
            params[key] = plain(value)
    return tree.sql(dialect=_dialect(dialect), pretty=inline), params


def text(node: exp.Expr, dialect: str) -> str:
    """One expression generated for `dialect`, with the engine rewrites `bind` applies."""
    return node.sql(dialect=_dialect(dialect))


def _dialect(name: str) -> sqlglot.Dialect:
    """The sqlglot dialect anonsql writes for an engine's `dialect` (anonsql.engine.dialects: where
    an engine computes something else for the same text, its rewrites live there)."""
    from ..engine import dialects  # the engine package imports this layer: looked up when used

    return dialects.get(name)


def expand_lists(tree: exp.Expr, bindings: Mapping[str, Any]) -> exp.Expr:
    """The tree with each clause item holding a list-bound placeholder repeated once per element."""
    is_list = {k for k, v in bindings.items() if isinstance(v, (list, tuple))}
    while True:
        ph = next((p for p in tree.find_all(exp.Placeholder) if p.name in is_list), None)
        if ph is None:
            return tree
        unit = clause_item(ph)
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
                    substitute(p, bindings[p.name][i])
            if isinstance(item, exp.Alias):  # keep output names distinct: d_0, d_1, ...
                item.set("alias", exp.to_identifier(f"{item.alias}_{i}"))
            copies.append(item)
        parent, key = unit.parent, unit.arg_key
        if parent is None or key is None:
            raise ValueError(f"list binding ${ph.name} has no clause to repeat in")
        items = list(parent.args[key])
        pos = next(i for i, node in enumerate(items) if node is unit)
        parent.set(key, items[:pos] + copies + items[pos + 1 :])


def substitute(ph: exp.Placeholder, value: exp.Expr) -> None:
    """Put `value` where the placeholder stands, fitting it to the surrounding node."""
    parent = ph.parent
    if isinstance(value, exp.Table) and isinstance(parent, exp.Table):
        for arg in ("this", "db", "catalog"):  # FROM $tbl [AS alias]: keep the alias
            parent.set(arg, value.args.get(arg) and value.args[arg].copy())
    elif isinstance(value, exp.Column) and isinstance(parent, exp.Column):
        ph.replace(value.this.copy())  # alias.$col: the name goes under the alias
    else:
        ph.replace(value.copy())


def clause_item(node: exp.Expr) -> exp.Expr:
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
