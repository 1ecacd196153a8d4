"""The cells of the tables, counted by SQL: domains, every grouping set's cells, top contributions.

The grid of cells is the product of the domains over each grouping set (empty cells included);
SQL counts the non-empty ones, GROUPING SETS giving the margins, and ranks each cell's
contributors (ROW_NUMBER over the contributors' sums) for the dominance and p% rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlglot import exp

from .. import sql
from ..catalog import Table
from ..engine import Engine
from ..errors import AnonsqlError
from .cells import TOTAL, Grid, layout
from .spec import Spec


def sets_expr(dims: Sequence[exp.Expr], sets: Sequence[Sequence[int]], extra: Sequence[exp.Expr] = ()) -> exp.Expr:
    """GROUPING SETS ((d_i, ...), ...) with `extra` columns in every set."""
    return exp.GroupingSets(expressions=[exp.Tuple(expressions=[*[dims[j].copy() for j in s],
                                                                 *[e.copy() for e in extra]]) for s in sets])


def measure_expr(spec: Spec) -> exp.Expr:
    """The summed measure: the column of a magnitude table, 1 for a frequency table."""
    return sql.column(spec.measure) if spec.measure else exp.Literal.number(1)


def gather(engine: Engine, source: Table, spec: Spec) -> tuple[Grid, list[list[Any]]]:
    """The grid of cells with value, frequency and top contributions, and each dimension's labels."""
    d = engine.dialect
    cols = sql.columns(spec.dims)
    labels, lookup = [], []
    for col in cols:
        rows = engine.fetch_all(*sql.render("tables/domain", d, dim=col, src=source.expr))
        labels.append([r[1] for r in rows])
        lookup.append({r[0]: i for i, r in enumerate(rows)})
    if spec.measure:
        smallest, _missing = engine.fetch_all(*sql.render("tables/measure_check", d, measure=measure_expr(spec),
                                                          src=source.expr))[0]
        if smallest is not None and smallest < 0:
            raise AnonsqlError(f"measure '{spec.measure}' has negative values (smallest {smallest}); the attacker's "
                               "bounds assume contributions >= 0")
    grid = layout([len(v) for v in labels], spec.sets)
    if int(np.prod(grid.sizes, dtype=np.float64)) > 5_000_000:
        raise AnonsqlError(f"the cross-classification of {', '.join(spec.dims)} has {np.prod(grid.sizes):,.0f} "
                           "cells: too many for the attacker's LP; publish fewer or coarser dimensions")
    gid = exp.Grouping(expressions=[c.copy() for c in cols])
    who = sql.column(spec.contributor) if spec.contributor else exp.Literal.number(1)
    rows = engine.fetch_all(*sql.render("tables/cells", d, dim=cols, gid=gid, who=who, measure=measure_expr(spec),
                                        src=source.expr, sets=sets_expr(cols, spec.sets)))
    at = grid.index(_codes(rows, lookup))
    grid.value[at] = [float(r[-1] or 0) for r in rows]
    grid.freq[at] = [int(r[-2] if spec.contributor else r[-3]) for r in rows]
    top = spec.rules.top
    if top:
        grid.top = np.zeros((len(grid.codes), top))
        rows = engine.fetch_all(*sql.render("tables/top_contributions", d, dim=cols, gid=gid, top=top,
                                            measure=measure_expr(spec), src=source.expr,
                                            sets=sets_expr(cols, spec.sets, [who])))
        at = grid.index(_codes([r[:-2] for r in rows], lookup))
        grid.top[at, [int(r[-2]) - 1 for r in rows]] = [float(r[-1] or 0) for r in rows]
    return grid, labels


def _codes(rows: Sequence[Sequence[Any]], lookup: list[dict[Any, int]]) -> np.ndarray:
    """Codes of SQL rows (d_1..d_D, GROUPING id, ...): TOTAL where the id's bit says summed."""
    n = len(lookup)
    out = np.empty((len(rows), n), np.int64)
    for i, r in enumerate(rows):
        g = int(r[n])
        out[i] = [TOTAL if g >> (n - 1 - j) & 1 else lookup[j][r[j]] for j in range(n)]
    return out
