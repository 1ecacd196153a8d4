"""Approximate disclosure of dominance primaries: the unions of suppressed cells the attacker can sum.

An additive relation is a published total t and its children along one plain dimension j (t
sums j; each child fixes j to one of its values, every other code as t's). Its hidden children
U sum to t minus the published ones, a value the attacker computes. When U holds a primary of a
magnitude rule ((n,k)-dominance, p%) and other cells besides (its suppressed companions), the
union must not itself be dominated under the rules (sql/tables/union_dominance.sql, over the
contributors pooled from the source rows), else the largest contributor's share of the primary
is estimated through the union's sum (the problem of sdcTools/UserSupport#160). The repair
adds the cheapest published child of the relation that covers what the union lacks (the rules'
upper protection level of the union), else the largest one, and checks again.

`Unions` works on the grid (the repair, inside anonsql.tables.suppress.protect); `check` re-derives
the unions from the published table's rows alone (labels, grouping ids, statuses) for the
verification. Relations along a --hierarchy dimension's taxonomy are not checked.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sqlglot import exp

from .. import sql
from ..catalog import Table
from ..engine import Engine
from ..errors import AnonsqlError
from ..report import Report
from ..stats import scratch_table
from .cells import TOTAL, Grid
from .spec import Spec
from .stats import TOTAL_LABEL, sets_expr
from .verify import bindings

#: The working table of the unions' member cells (the session's temporary schema).
UNIONS_TABLE = "anonsql_tables_unions"

Key = tuple[tuple[Any, ...], int]  # a cell: its labels as published and its grouping id


def magnitude(spec: Spec) -> bool:
    """Whether the run has a rule whose unions are checked ((n,k)-dominance or p%)."""
    return spec.rules.dominance is not None or spec.rules.p_percent is not None


def dominated(engine: Engine, source: Table, spec: Spec, unions: Sequence[Sequence[Key]]) -> dict[int, float]:
    """The unions (by position) the rules call dominated, each with how much its total must grow
    (the magnitude rules need a --contributor: anonsql.tables.entry checks it)."""
    if not unions:
        return {}
    d, dims, who = engine.dialect, spec.dims, sql.column(spec.contributor or "")
    table = scratch_table(UNIONS_TABLE, d)
    engine.execute(*sql.render("tables/union_cells", d, unions=table, label=[sql.ident(c) for c in dims]))
    try:
        rows = [[u, *labels, gid] for u, members in enumerate(unions) for labels, gid in members]
        frame = pd.DataFrame(rows, columns=["union_id", *dims, "grouping_id"], dtype=object)
        engine.insert_rows(table, ["union_id", *dims, "grouping_id"], frame)
        r = spec.rules
        found = engine.fetch_all(*sql.render(
            "tables/union_dominance", d, unions=exp.alias_(table, "u", table=True),
            union_key=sql.group_key(sql.columns(dims, "u")), who=who,
            sets=sets_expr(sql.columns(dims), spec.sets, [who]),
            dominance_n=r.dominance[0] if r.dominance else 0, dominance_k=r.dominance[1] if r.dominance else -1,
            p_percent=r.p_percent if r.p_percent is not None else -1,
            **{k: v for k, v in bindings(source, table, spec).items() if k in ("src", "measure", "gid", "key")}))
    finally:
        engine.execute(*sql.render("common/drop_table", d, tbl=table))
    return {int(u): float(needed) for u, needed in found}


@dataclass
class Unions:
    """The repair on the grid: which published cells to suppress so that no union of a magnitude
    primary's suppressed companions is dominated (see module docstring)."""

    engine: Engine
    source: Table
    spec: Spec
    grid: Grid
    labels: list[list[Any]]
    targets: np.ndarray  # the magnitude-rule primaries (bool per cell)
    added: int = 0

    def __post_init__(self) -> None:
        plain = [d not in self.spec.hierarchy for d in self.spec.dims]
        self.relations = relations(self.grid, plain)
        gid = self.grid.grouping_id
        self.keys: list[Key] = [(tuple(self.labels[j][k] for j, k in enumerate(codes)), int(gid[c]))
                                for c, codes in enumerate(self.grid.codes)]

    def __call__(self, status: np.ndarray, barred: np.ndarray) -> list[tuple[int, int]]:
        """The cells to suppress now (each with the primary it protects), none when every union holds."""
        hidden = (status == "u") | (status == "x")
        found = self.unions(hidden)
        if not found:
            return []
        need = dominated(self.engine, self.source, self.spec, [[self.keys[c] for c in cells] for _, cells in found])
        out: list[tuple[int, int]] = []
        for at, needed in sorted(need.items()):
            r, cells = found[at]
            children = self.relations[r][1]
            free = children[(status[children] == "s") & ~barred[children]]
            protects = int(cells[self.targets[cells]][0])
            if not len(free):
                raise AnonsqlError(f"the suppressed cells around primary cell {self._label(protects)} are dominated "
                                   "as a union and no published cell of their relation may join them (forced or "
                                   "empty): force fewer cells, or --allow-empty-secondaries")
            free = free[~np.isin(free, [c for c, _ in out])]
            if not len(free):
                continue  # its one candidate joins another union this round: checked again next round
            value = self.grid.value[free]
            order = np.lexsort((free, value))
            enough = order[value[order] >= needed]
            out.append((int(free[enough[0] if len(enough) else order[-1]]), protects))
        self.added += len(out)
        return out

    def unions(self, hidden: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """(relation, its hidden children) for each relation with a published total whose hidden
        children are two or more and hold a target; the same union once."""
        out, seen = [], set()
        for r, (total, children) in enumerate(self.relations):
            cells = children[hidden[children]]
            if hidden[total] or len(cells) < 2 or not self.targets[cells].any() or tuple(cells) in seen:
                continue
            seen.add(tuple(cells))
            out.append((r, cells))
        return out

    def _label(self, c: int) -> str:
        return ", ".join(f"{d}={v}" for d, v in zip(self.spec.dims, self.keys[c][0]))


def relations(grid: Grid, plain: Sequence[bool]) -> list[tuple[int, np.ndarray]]:
    """Every (total cell, its children along one plain dimension) of the grid whose children all exist."""
    out = []
    for j, size in enumerate(grid.sizes):
        if not plain[j]:
            continue
        totals = np.flatnonzero(grid.codes[:, j] == TOTAL)
        if not len(totals):
            continue
        codes = np.repeat(grid.codes[totals], size, axis=0)
        codes[:, j] = np.tile(np.arange(size), len(totals))
        at = grid.index(codes).reshape(len(totals), size)
        out += [(int(t), row) for t, row in zip(totals, at) if (row >= 0).all()]
    return out


def check(engine: Engine, report: Report, source: Table, published: Table, spec: Spec,
          targets: Collection[Key]) -> None:
    """Record whether any union of a magnitude primary's suppressed companions is dominated, the
    unions derived from the published table's rows alone (sql/tables/published_cells.sql): for a
    published row summing a plain dimension j (its grouping id's bit), the rows that fix j and
    agree on the rest are its children."""
    if not magnitude(spec):
        return
    dims = spec.dims
    n = len(dims)
    rows = engine.fetch_all(*sql.render("tables/published_cells", engine.dialect, out=published.expr,
                                        label=sql.columns(dims)))
    hidden = {(tuple(r[:n]), int(r[n])): r[n + 3] != "published" for r in rows}
    families: dict[tuple, list[Key]] = {}
    for labels, gid in hidden:
        for j, d in enumerate(dims):
            bit = 1 << (n - 1 - j)
            if d not in spec.hierarchy and not gid & bit:
                families.setdefault((j, gid | bit, labels[:j] + labels[j + 1:]), []).append((labels, gid))
    unions = []
    for (j, gid, rest), children in sorted(families.items(), key=repr):
        total = (rest[:j] + (TOTAL_LABEL,) + rest[j:], gid)
        cells = sorted((c for c in children if hidden[c]), key=repr)
        if total in hidden and not hidden[total] and len(cells) >= 2 and set(cells) & set(targets):
            unions.append(cells)
    unique = list(dict.fromkeys(tuple(u) for u in unions))
    bad = dominated(engine, source, spec, unique)
    report.check("no union of a dominance primary's suppressed companions is dominated (approximate disclosure)",
                 not bad, "tables/union_dominance", f"{len(unique)} unions checked" if not bad else
                 f"{len(bad)} of {len(unique)} unions dominated, e.g. around {unique[min(bad)][0][0]}")
