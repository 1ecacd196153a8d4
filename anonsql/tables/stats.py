"""The cells of the tables, counted by SQL: domains, every grouping set's cells, top contributions.

The grid of cells is the product of the domains over each grouping set (empty cells included);
SQL counts the non-empty ones, GROUPING SETS giving the margins, and ranks each cell's
contributors (ROW_NUMBER over the contributors' sums) for the dominance and p% rules. A
dimension with a stored taxonomy (--hierarchy) is counted on the source joined to the
taxonomy's ancestor closure, so grouping by it gives every node's total (the root's included).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sqlglot
from sqlglot import exp

from .. import sql
from ..catalog import Table
from ..engine import Engine
from ..errors import AnonsqlError
from ..taxonomy.model import Taxonomy
from ..taxonomy.stats import STORE, read_taxonomies
from .cells import TOTAL, Grid, layout
from .spec import Spec

#: The label of a margin in a dimension without a taxonomy (one with a taxonomy shows its root's).
TOTAL_LABEL = "Total"


def sets_expr(dims: Sequence[exp.Expr], sets: Sequence[Sequence[int]], extra: Sequence[exp.Expr] = ()) -> exp.Expr:
    """GROUPING SETS ((d_i, ...), ...) with `extra` columns in every set."""
    return exp.GroupingSets(expressions=[exp.Tuple(expressions=[*[dims[j].copy() for j in s],
                                                                 *[e.copy() for e in extra]]) for s in sets])


def measure_expr(spec: Spec) -> exp.Expr:
    """The summed measure: the column of a magnitude table, 1 for a frequency table."""
    return sql.column(spec.measure) if spec.measure else exp.Literal.number(1)


def source_expr(source: Table, spec: Spec, carry: Sequence[str] = ()) -> exp.Expr:
    """The rows the cells are counted from: the source table, or with taxonomies, the source with
    each such dimension replaced by every node above its value (sql/tables/hierarchy_source.sql
    over sql/tables/ancestors.sql; the taxonomy's name is written into the statement as a literal);
    `carry`: further columns the rows keep (the cell key method's record key)."""
    src: exp.Expr = source.expr
    needed = [c for c in dict.fromkeys([*spec.dims, spec.measure, spec.contributor, *carry]) if c]
    for dim, name in spec.hierarchy.items():
        store = sql.TableName(STORE).expr
        up: Any = sqlglot.parse_one(sql.readable("tables/ancestors", sql.SOURCE_DIALECT, store=store, taxonomy=name),
                                    read=sql.SOURCE_DIALECT)
        keep: list[exp.Expr] = [sql.column(c, "s") for c in needed if c != dim] or [
            exp.alias_(exp.Literal.number(1), "one")]
        tree: Any = sqlglot.parse_one(sql.readable("tables/hierarchy_source", sql.SOURCE_DIALECT, keep=keep, src=src,
                                              ancestors=up.subquery(), dim=sql.column(dim)),
                                 read=sql.SOURCE_DIALECT)
        tree.selects[-1].set("alias", sql.ident(dim))
        src = tree.subquery()
    return src if isinstance(src, exp.Table) else src.as_("src")


def gather(engine: Engine, source: Table, spec: Spec) -> tuple[Grid, list[list[Any]]]:
    """The grid of cells with value, frequency and top contributions, and each dimension's labels
    by code, the label of its total last (so code TOTAL = -1 indexes it)."""
    d = engine.dialect
    cols = sql.columns(spec.dims)
    trees = read_taxonomies(engine, spec.hierarchy)
    labels: list[list[Any]] = []
    lookup: list[dict[Any, int]] = []
    groups: list[list[np.ndarray] | None] = []
    heights: dict[int, np.ndarray] = {}
    for j, (dim, col) in enumerate(zip(spec.dims, cols)):
        rows = engine.fetch_all(*sql.render("tables/domain", d, dim=col, src=source.expr))
        if dim in trees:
            names, group, heights[j] = _tree_codes(dim, trees[dim], [r[1] for r in rows])
            labels.append(names)
            lookup.append({v: i for i, v in enumerate(names[:-1])} | {names[-1]: TOTAL})
            groups.append(group)
            continue
        labels.append([r[1] for r in rows] + [TOTAL_LABEL])
        lookup.append({r[0]: i for i, r in enumerate(rows)})
        groups.append(None)
    if spec.measure:
        smallest, _missing = engine.fetch_all(*sql.render("tables/measure_check", d, measure=measure_expr(spec),
                                                          src=source.expr))[0]
        if smallest is not None and smallest < 0:
            raise AnonsqlError(f"measure '{spec.measure}' has negative values (smallest {smallest}); the attacker's "
                               "bounds assume contributions >= 0")
    grid = layout([len(v) - 1 - len(g or []) for v, g in zip(labels, groups)], spec.sets, groups)
    grid.level = sum((h[grid.codes[:, j]] for j, h in heights.items()), np.zeros(len(grid.codes), np.int64))
    if int(np.prod(grid.sizes, dtype=np.float64)) > 5_000_000:
        raise AnonsqlError(f"the cross-classification of {', '.join(spec.dims)} has {np.prod(grid.sizes):,.0f} "
                           "cells: too many for the attacker's LP; publish fewer or coarser dimensions")
    gid = exp.Grouping(expressions=[c.copy() for c in cols])
    who = sql.column(spec.contributor) if spec.contributor else exp.Literal.number(1)
    src = source_expr(source, spec)
    rows = engine.fetch_all(*sql.render("tables/cells", d, dim=cols, gid=gid, who=who, measure=measure_expr(spec),
                                        src=src, sets=sets_expr(cols, spec.sets)))
    at = grid.index(_codes(rows, lookup))
    grid.value[at] = [float(r[-1] or 0) for r in rows]
    grid.freq[at] = [int(r[-2] if spec.contributor else r[-3]) for r in rows]
    top = spec.rules.top
    if top:
        grid.top = np.zeros((len(grid.codes), top))
        rows = engine.fetch_all(*sql.render("tables/top_contributions", d, dim=cols, gid=gid, top=top,
                                            measure=measure_expr(spec), src=src,
                                            sets=sets_expr(cols, spec.sets, [who])))
        at = grid.index(_codes([r[:-2] for r in rows], lookup))
        grid.top[at, [int(r[-2]) - 1 for r in rows]] = [float(r[-1] or 0) for r in rows]
    return grid, labels


def _tree_codes(dim: str, tree: Taxonomy, values: Sequence[Any]) -> tuple[list[str], list[np.ndarray], np.ndarray]:
    """A taxonomy's dimension: its labels by code (the leaves in pre-order, then the inner nodes,
    the root last), each inner node's leaves and each code's height (levels above its leaves);
    every value of the data must be a leaf."""
    tree.check_leaves(dim, values)
    leaves = [i for i in range(len(tree)) if not tree.children[i]]
    inner = [i for i in range(1, len(tree)) if tree.children[i]]
    position = {node: k for k, node in enumerate(leaves)}
    group = [np.array([position[leaf] for leaf in tree.leaves_under(i)], np.int64) for i in inner]
    order = [*leaves, *inner, 0]
    height = np.zeros(len(tree), np.int64)
    for i in reversed(range(len(tree))):  # pre-order: children after their parent
        height[i] = 1 + max((height[c] for c in tree.children[i]), default=-1)
    return [tree.labels[i] for i in order], group, height[order]


def _codes(rows: Sequence[Sequence[Any]], lookup: list[dict[Any, int]]) -> np.ndarray:
    """Codes of SQL rows (d_1..d_D, GROUPING id, ...): TOTAL where the id's bit says summed (or a
    taxonomy's root)."""
    n = len(lookup)
    out = np.empty((len(rows), n), np.int64)
    for i, r in enumerate(rows):
        g = int(r[n])
        out[i] = [TOTAL if g >> (n - 1 - j) & 1 else lookup[j][r[j]] for j in range(n)]
    return out
