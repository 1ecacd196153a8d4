"""Independent checks of a published table (none reuses the algorithm's code):

* every published value equals its recount from the source rows (sql/tables/recount.sql);
* no published cell fails a primary rule, re-checked on the source rows (published_rules.sql);
* the attacker's LP, rebuilt from the published table ALONE (its labels, grouping ids and
  values; published_cells.sql), bounds every primary cell no tighter than the protection
  asks, the true values coming from the SQL recount.

`attack` is also the `tables audit` command: the attack on any published table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sqlglot import exp

from .. import sql
from ..catalog import Table
from ..engine import Engine
from ..report import Report
from .attack import load_highs, new_model
from .spec import Spec
from .stats import measure_expr, sets_expr

TOTAL_LABEL = "Total"


@dataclass
class Interval:
    """The attacker's bounds of one hidden cell of a published table."""

    labels: tuple[Any, ...]
    grouping_id: int
    status: str
    lower: float
    upper: float

    @property
    def width(self) -> float:
        return self.upper - self.lower


@dataclass
class Attack:
    """The attack on a published table: the bounds of every hidden cell (primaries first)."""

    cells: int
    intervals: list[Interval] = field(default_factory=list)

    def pinned(self, tol: float = 1e-7) -> list[Interval]:
        return [i for i in self.intervals if i.width <= tol * max(1.0, abs(i.lower))]


def attack(engine: Engine, out: Table, dims: Sequence[str], statuses: str = "u") -> Attack:
    """min and max of every hidden cell whose status is in `statuses`, given only the published
    rows: unknowns are the finest cells not published (>= 0), each published total an equation."""
    text, params = sql.render("tables/published_cells", engine.dialect, out=out.expr, label=sql.columns(dims))
    rows = engine.fetch_all(text, params)
    n = len(dims)
    fixed = [[not (int(r[n]) >> (n - 1 - j)) & 1 for j in range(n)] for r in rows]
    domains = [sorted({r[j] for r, f in zip(rows, fixed) if f[j]}, key=lambda v: (v is None, str(v))) for j in range(n)]
    pos = [{v: i for i, v in enumerate(dom)} for dom in domains]
    sizes = [len(dom) for dom in domains]
    strides = [int(np.prod(sizes[j + 1:], dtype=np.int64)) for j in range(n)]
    finest = int(np.prod(sizes, dtype=np.int64))
    idx_rows, idx_cols = [], []
    for i, (r, f) in enumerate(zip(rows, fixed)):
        span = np.zeros(1, np.int64)
        for j in range(n):
            step = np.array([pos[j][r[j]] * strides[j]]) if f[j] else np.arange(sizes[j]) * strides[j]
            span = (span[:, None] + step[None, :]).ravel()
        idx_rows.append(np.full(len(span), i))
        idx_cols.append(span)
    m = sp.csr_matrix((np.ones(sum(map(len, idx_cols))), (np.concatenate(idx_rows), np.concatenate(idx_cols))),
                      shape=(len(rows), finest))
    value = np.array([np.nan if r[n + 1] is None else float(r[n + 1]) for r in rows])
    known_cell = np.array([all(f) and not np.isnan(v) for f, v in zip(fixed, value)])
    known = np.zeros(finest)
    unknown = np.ones(finest, bool)
    slots = m.indices[m.indptr[:-1][known_cell]]  # a finest cell's own row has one member
    known[slots], unknown[slots] = value[known_cell], False
    eq = np.flatnonzero(~known_cell & ~np.isnan(value))
    cols = np.flatnonzero(unknown)
    a = m[eq][:, cols].tocsr()
    rhs = value[eq] - m[eq] @ known
    n_comp, comp = _components(a)
    result = Attack(cells=len(rows))
    targets = [i for i, r in enumerate(rows) if r[n + 2] in statuses and np.isnan(value[i])]
    solver = _Solver(a, rhs, comp, n_comp)
    for i in targets:
        mine = m.indices[m.indptr[i]:m.indptr[i + 1]]
        base = float(known[mine].sum())
        local = np.searchsorted(cols, mine[unknown[mine]])
        lo, hi = solver.bounds(local)
        result.intervals.append(Interval(tuple(rows[i][:n]), int(rows[i][n]), rows[i][n + 2], base + lo, base + hi))
    return result


def _components(a: sp.csr_matrix) -> tuple[int, np.ndarray]:
    """Connected parts of the unknowns: two unknowns meet when an equation holds both."""
    k = a.shape[1]
    if k == 0:
        return 0, np.zeros(0, np.int64)
    link = (a.T @ a).tocsr() if a.shape[0] else sp.csr_matrix((k, k))
    return connected_components(link, directed=False)


class _Solver:
    """One small HiGHS model per connected part, built when a target first needs it."""

    def __init__(self, a: sp.csr_matrix, rhs: np.ndarray, comp: np.ndarray, n_comp: int):
        self.hs = load_highs()
        self.a, self.rhs, self.comp = a.tocsc(), rhs, comp
        self.models: dict[int, tuple[Any, np.ndarray]] = {}

    def _model(self, part: int) -> tuple[Any, np.ndarray]:
        if part not in self.models:
            cols = np.flatnonzero(self.comp == part)
            sub = self.a[:, cols]
            rows = np.flatnonzero(np.diff(sub.tocsr().indptr))
            sub = sub[rows].tocsc()
            lp = self.hs.HighsLp()
            lp.num_col_, lp.num_row_ = len(cols), len(rows)
            lp.col_cost_, lp.col_lower_ = np.zeros(len(cols)), np.zeros(len(cols))
            lp.col_upper_ = np.full(len(cols), self.hs.kHighsInf)
            lp.row_lower_ = lp.row_upper_ = self.rhs[rows]
            lp.a_matrix_.format_ = self.hs.MatrixFormat.kColwise
            lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = sub.indptr, sub.indices, sub.data
            h = new_model(self.hs)
            h.passModel(lp)
            self.models[part] = (h, cols)
        return self.models[part]

    def bounds(self, local: np.ndarray) -> tuple[float, float]:
        """min and max of the sum of unknowns `local`, summed over the parts they fall in."""
        lo = hi = 0.0
        for part in np.unique(self.comp[local]):
            h, cols = self._model(int(part))
            cost = np.isin(cols, local).astype(float)
            h.changeColsCost(len(cols), np.arange(len(cols), dtype=np.int32), cost)
            for sense in (self.hs.ObjSense.kMinimize, self.hs.ObjSense.kMaximize):
                h.changeObjectiveSense(sense)
                h.run()
                status = h.getModelStatus()
                if status == self.hs.HighsModelStatus.kOptimal:
                    v = h.getInfo().objective_function_value
                else:  # the true table is feasible, so anything else is unbounded
                    v = np.inf
                if sense == self.hs.ObjSense.kMinimize:
                    lo += v
                else:
                    hi += v
        return lo, hi


def bindings(source: exp.Table, out: exp.Table, spec: Spec) -> dict[str, Any]:
    """The names the recount and rule queries bind (cells keyed by grouping id and labels)."""
    cols = sql.columns(spec.dims)
    return dict(src=source, out=out, measure=measure_expr(spec), label=sql.columns(spec.dims),
                gid=exp.Grouping(expressions=[c.copy() for c in cols]),
                key=sql.group_key([sql.fragment("tables/label", dim=c) for c in cols]), out_key=sql.group_key(cols))


def recount_script(dialect: str, source: exp.Table, out: exp.Table, spec: Spec) -> tuple[str, str]:
    """The recount as a check of the --emit-sql script."""
    return ("every row: value IS NULL or value = total (the recount from the source rows)",
            sql.readable("tables/recount", dialect, sets=sets_expr(sql.columns(spec.dims), spec.sets),
                         **bindings(source, out, spec)))


def published(engine: Engine, report: Report, source: Table, out: Table, spec: Spec) -> dict[tuple, float]:
    """Record the recount and rule checks of the written table; returns the recounted (true) value
    of every hidden cell by (labels, grouping id)."""
    d, cols = engine.dialect, sql.columns(spec.dims)
    binds = bindings(source.expr, out.expr, spec)
    rows = engine.fetch_all(*sql.render("tables/recount", d, sets=sets_expr(cols, spec.sets), **binds))
    n = len(spec.dims)
    wrong = [r for r in rows if r[n + 2] is not None and abs(float(r[n + 2]) - float(r[n + 4] or 0))
             > 1e-9 * max(1.0, abs(float(r[n + 4] or 0)))]
    report.check("published values equal the SQL recount", not wrong, "tables/recount",
                 f"{len(rows)} cells" if not wrong else
                 f"{len(wrong)} of {len(rows)} cells differ, e.g. {wrong[0][:n]}")
    rules = spec.rules
    who = [sql.column(spec.contributor)] if spec.contributor else []
    violations = engine.fetch_all(*sql.render(
        "tables/published_rules", d, sets=sets_expr(cols, spec.sets, who), min_count=rules.min_count,
        zero_unsafe=rules.zero_unsafe, by_contributor=bool(spec.contributor),
        dominance_n=rules.dominance[0] if rules.dominance else 0,
        dominance_k=rules.dominance[1] if rules.dominance else -1,
        p_percent=rules.p_percent if rules.p_percent is not None else -1, **binds))[0][0]
    report.check("no published cell fails a primary rule", violations == 0, "tables/published_rules",
                 "" if violations == 0 else f"{violations} published cells are unsafe")
    return {(tuple(r[:n]), int(r[n])): float(r[n + 4] or 0) for r in rows if r[n + 2] is None}


def protection(report: Report, result: Attack, truth: dict[tuple, float], level: float) -> float:
    """Record whether every primary's interval meets the protection (width > 0; with a level in
    percent, upper >= v (1 + level/100) and lower <= v (1 - level/100)); returns the smallest width."""
    short = []
    for i in result.intervals:
        v = truth[(i.labels, i.grouping_id)]
        tol = 1e-7 * max(1.0, abs(v))
        if not (i.width > tol and i.upper >= v * (1 + level / 100) - tol and i.lower <= v * (1 - level / 100) + tol):
            short.append(i)
    report.check("the attacker's LP on the published table pins no primary cell", not short, "tables/published_cells",
                 f"{len(result.intervals)} primary cells, protection {'width > 0' if not level else f'{level:g}%'}"
                 if not short else f"{len(short)} primary cells too tightly bounded, e.g. {short[0].labels} in "
                 f"[{short[0].lower:g}, {short[0].upper:g}]")
    return min((i.width for i in result.intervals), default=float("inf"))
