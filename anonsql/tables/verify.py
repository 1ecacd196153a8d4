"""Independent checks of a published table (none reuses the algorithm's code):

* every published value equals its recount from the source rows (sql/tables/recount.sql);
* no published cell fails a primary rule, re-checked on the source rows (published_rules.sql);
* the attacker's LP, rebuilt from the published table ALONE (its labels, grouping ids and
  values; published_cells.sql), the stored taxonomies of its --hierarchy dimensions (a
  node's label stands for the sum of the taxonomy's leaves under it) and what the policy tells
  (every hidden cell >= `floor`), bounds every primary cell no tighter than the protection asks
  (its rules' levels, and over whole numbers for counts), the true values coming from the SQL
  recount. With the true values at hand (the job's own check), each primary is first checked
  near itself, the rest of the table fixed at its true values (tables/neighbourhood.py: an
  interval inside the attacker's, so a protection that holds there holds on the whole table);
  only a primary that fails it there is bounded by the whole table's program.

`attack` is also the `tables audit` command: the attack on any published table.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
from sqlglot import exp

from .. import sql
from ..catalog import Table
from ..engine import Engine
from ..errors import AnonsqlError
from ..progress import tick
from ..report import Progress, Report, silent
from ..solver import load_highs, new_model, whole_numbers
from ..taxonomy.model import Taxonomy
from ..taxonomy.stats import read_taxonomies
from .neighbourhood import Near, fractional, worth
from .protection import Protection
from .sparse import sp
from .spec import Spec
from .stats import measure_expr, sets_expr, source_expr


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
    near: int = 0  # primaries whose protection held near them (their interval an inner bound of the attacker's)

    def pinned(self, tol: float = 1e-7) -> list[Interval]:
        return [i for i in self.intervals if i.width <= tol * max(1.0, abs(i.lower))]


def attack(engine: Engine, out: Table, dims: Sequence[str], hierarchy: Mapping[str, str] | None = None,
           targets: Collection[tuple[tuple[Any, ...], int]] | None = None, floor: float = 0.0,
           integer: bool = False, truth: Mapping[tuple[tuple[Any, ...], int], float] | None = None,
           enough: Callable[[tuple[tuple[Any, ...], int], float, float], bool] | None = None,
           progress: Progress | None = None) -> Attack:
    """min and max of every hidden cell (of those among `targets`, by (labels, grouping id), when
    given), given only the published rows, the taxonomies of `hierarchy` (dimension -> stored
    taxonomy) and `floor`: unknowns are the finest cells not published (>= 0), each published
    total an equation, each hidden cell an inequality (>= floor, when floor > 0); with `integer`
    (counts) over whole numbers: an end whose LP optimum is fractional is solved as a MILP.
    With `truth` (each hidden cell's true value) and `enough(key, lower, upper)` (its protection
    holds), a cell is first bounded near itself (tables/neighbourhood.py) and, when that interval
    is enough, reported with it: inside the attacker's interval, so no wider than the truth."""
    text, params = sql.render("tables/published_cells", engine.dialect, out=out.expr, label=sql.columns(dims))
    rows = engine.fetch_all(text, params)
    n = len(dims)
    if hierarchy is None and any(int(r[n + 1] or 0) for r in rows):
        raise AnonsqlError(f"{out} has taxonomy totals (level > 0): name them as when it was published, "
                           "--hierarchy DIM=TAXONOMY,...")
    trees = read_taxonomies(engine, dict(hierarchy or {}))
    sizes, spans = zip(*[_spans(rows, j, n, trees.get(d)) for j, d in enumerate(dims)]) if n else ((), ())
    strides = [int(np.prod(sizes[j + 1:], dtype=np.int64)) for j in range(n)]
    finest = int(np.prod(sizes, dtype=np.int64))
    idx_rows, idx_cols = [], []
    for i in range(len(rows)):
        span = np.zeros(1, np.int64)
        for j in range(n):
            span = (span[:, None] + spans[j][i][None, :] * strides[j]).ravel()
        idx_rows.append(np.full(len(span), i))
        idx_cols.append(span)
    m = sp.csr_matrix((np.ones(sum(map(len, idx_cols))), (np.concatenate(idx_rows), np.concatenate(idx_cols))),
                      shape=(len(rows), finest))
    value = np.array([np.nan if r[n + 2] is None else float(r[n + 2]) for r in rows])
    known_cell = (np.diff(m.indptr) == 1) & ~np.isnan(value)  # a published cell of one finest cell
    known = np.zeros(finest)
    unknown = np.ones(finest, bool)
    slots = m.indices[m.indptr[:-1][known_cell]]
    known[slots], unknown[slots] = value[known_cell], False
    eq = np.flatnonzero(~known_cell & ~np.isnan(value))
    cols = np.flatnonzero(unknown)
    # >= floor: a hidden cell of one finest cell bounds its column; a hidden total, a row of its own
    # unless one of its unknowns is so bounded already (which implies it, and the row would tie parts)
    lowest = np.zeros(finest)
    single = np.isnan(value) & (np.diff(m.indptr) == 1)
    lowest[m.indices[m.indptr[:-1][single]]] = floor
    ge = np.flatnonzero(np.isnan(value) & ~single & ((m @ (lowest >= floor).astype(float)) == 0)) if floor else \
        np.zeros(0, np.int64)
    a = sp.vstack([m[eq][:, cols], m[ge][:, cols]]).tocsr()
    rhs = np.concatenate([value[eq] - m[eq] @ known, floor - m[ge] @ known])
    comp = _components(a)
    result = Attack(cells=len(rows))
    say = progress or silent
    hidden = [i for i, r in enumerate(rows) if np.isnan(value[i])
              and (targets is None or (tuple(r[:n]), int(r[n])) in targets)]
    at_least = np.r_[np.zeros(len(eq), bool), np.ones(len(ge), bool)]
    solver = _Solver(a, rhs, at_least, lowest[cols], comp, integer)
    near = None
    if truth is not None and enough is not None and worth(len(cols)):
        true = np.full(finest, np.nan)  # a hidden cell of one finest cell: its recounted value
        true[m.indices[m.indptr[:-1][single]]] = [truth.get((tuple(rows[i][:n]), int(rows[i][n])), np.nan)
                                                  for i in np.flatnonzero(single)]
        near = Near(a, rhs, at_least, lowest[cols], true[cols], integer)
    for done, i in enumerate(hidden, 1):
        tick(say, "tables: primaries attacked", done, len(hidden),
             f"  verify: {done:,}/{len(hidden):,} hidden cells bounded by the attacker")
        mine = m.indices[m.indptr[i]:m.indptr[i + 1]]
        base = float(known[mine].sum())
        local = np.searchsorted(cols, mine[unknown[mine]])
        key = (tuple(rows[i][:n]), int(rows[i][n]))
        inner = near.check(local, partial(_shifted, enough, key, base)) if near and enough and len(local) else None
        if inner is not None:
            lo, hi = inner
            result.near += 1
        else:
            lo, hi = solver.bounds(local)
        result.intervals.append(Interval(key[0], key[1], rows[i][n + 3], base + lo, base + hi))
    return result


def _shifted(enough: Callable[[tuple[tuple[Any, ...], int], float, float], bool], key: tuple[tuple[Any, ...], int],
             base: float, lower: float, upper: float) -> bool:
    """Whether cell `key`'s protection holds on the interval of its unknowns' sum, moved by its published part."""
    return enough(key, base + lower, base + upper)


def _spans(rows: Sequence[Sequence[Any]], j: int, n: int, tree: Taxonomy | None) -> tuple[int, list[np.ndarray]]:
    """Dimension j of the published rows: its number of finest values and, per row, the positions
    of the finest values its label covers (a taxonomy node: the leaves under it; a Total, by its
    grouping id's bit: all; else its own)."""
    if tree is not None:
        leaves = [i for i in range(len(tree)) if not tree.children[i]]
        pos = {node: k for k, node in enumerate(leaves)}
        cover = {}
        for label in {r[j] for r in rows}:
            if tree.find(label) is None:
                raise AnonsqlError(f"published label {label!r} is not a node of taxonomy {tree.name!r}")
            cover[label] = np.array([pos[leaf] for leaf in tree.leaves_under(tree.index(label))], np.int64)
        return len(leaves), [cover[r[j]] for r in rows]
    fixed = [not (int(r[n]) >> (n - 1 - j)) & 1 for r in rows]
    domain = sorted({r[j] for r, f in zip(rows, fixed) if f}, key=lambda v: (v is None, str(v)))
    place = {v: i for i, v in enumerate(domain)}
    everything = np.arange(len(domain), dtype=np.int64)
    return len(domain), [np.array([place[r[j]]], np.int64) if f else everything for r, f in zip(rows, fixed)]


def _components(a: sp.csr_matrix) -> np.ndarray:
    """The connected part of each unknown: two unknowns meet when an equation holds both (the
    smallest unknown reachable, by label propagation with pointer jumping; no scipy.sparse.csgraph,
    whose import alone outlasts the propagation on tables of this size).

    >>> _components(sp.csr_matrix(np.array([[1, 1, 0, 0], [0, 0, 1, 1], [0, 1, 0, 0]]))).tolist()
    [0, 0, 1, 1]
    """
    k = a.shape[1]
    coo = a.tocoo()
    label = np.arange(k)
    while True:
        least = np.full(a.shape[0], k)
        np.minimum.at(least, coo.row, label[coo.col])
        new = label.copy()
        np.minimum.at(new, coo.col, least[coo.row])
        new = new[new]
        if (new == label).all():
            return np.unique(label, return_inverse=True)[1].reshape(-1)
        label = new


class _Solver:
    """One small HiGHS model per connected part, built when a target first needs it (rows: the
    published totals' equations, then the hidden cells' inequalities, `at_least`)."""

    def __init__(self, a: sp.csr_matrix, rhs: np.ndarray, at_least: np.ndarray, lowest: np.ndarray,
                 comp: np.ndarray, integer: bool = False):
        self.hs = load_highs()
        self.integer, self.lowest = integer, lowest
        self.a, self.rhs, self.at_least, self.comp = a.tocsc(), rhs, at_least, comp
        self.models: dict[int, tuple[Any, np.ndarray]] = {}

    def _model(self, part: int) -> tuple[Any, np.ndarray]:
        if part not in self.models:
            cols = np.flatnonzero(self.comp == part)
            sub = self.a[:, cols]
            rows = np.flatnonzero(np.diff(sub.tocsr().indptr))
            sub = sub[rows].tocsc()
            lp = self.hs.HighsLp()
            lp.num_col_, lp.num_row_ = len(cols), len(rows)
            lp.col_cost_, lp.col_lower_ = np.zeros(len(cols)), self.lowest[cols]
            lp.col_upper_ = np.full(len(cols), self.hs.kHighsInf)
            lp.row_lower_ = self.rhs[rows]  # a published total: = rhs; a hidden cell: >= rhs
            lp.row_upper_ = np.where(self.at_least[rows], self.hs.kHighsInf, self.rhs[rows])
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
                v = self._optimum(h)
                if self.integer and np.isfinite(v) and fractional(h.getSolution().col_value):
                    whole_numbers(h, self.hs, True)
                    v = self._optimum(h)
                    whole_numbers(h, self.hs, False)
                if sense == self.hs.ObjSense.kMinimize:
                    lo += v
                else:
                    hi += v
        return lo, hi

    def _optimum(self, h: Any) -> float:
        """The optimum of the model as it stands (the true table is feasible: anything else is unbounded)."""
        h.run()
        return h.getInfo().objective_function_value if h.getModelStatus() == self.hs.HighsModelStatus.kOptimal \
            else np.inf


def bindings(source: Table, out: exp.Table, spec: Spec) -> dict[str, Any]:
    """The names the recount and rule queries bind (cells keyed by grouping id and labels)."""
    cols = sql.columns(spec.dims)
    return dict(src=source_expr(source, spec), out=out, measure=measure_expr(spec), label=sql.columns(spec.dims),
                gid=exp.Grouping(expressions=[c.copy() for c in cols]),
                key=sql.group_key([sql.fragment("tables/label", dim=c) for c in cols]), out_key=sql.group_key(cols))


def recount_script(dialect: str, source: Table, out: exp.Table, spec: Spec) -> tuple[str, str]:
    """The recount as a check of the --emit-sql script."""
    return ("every row: value IS NULL or value = total (the recount from the source rows)",
            sql.readable("tables/recount", dialect, sets=sets_expr(sql.columns(spec.dims), spec.sets),
                         **bindings(source, out, spec)))


def published(engine: Engine, report: Report, source: Table, out: Table, spec: Spec) -> dict[tuple, float]:
    """Record the recount and rule checks of the written table; returns the recounted (true) value
    of every hidden cell by (labels, grouping id)."""
    d, cols = engine.dialect, sql.columns(spec.dims)
    binds = bindings(source, out.expr, spec)
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


def protection(report: Report, result: Attack, truth: dict[tuple, float], protection: Protection,
               levels: Mapping[tuple, float]) -> float:
    """Record whether every primary's interval meets the protection (protection.Protection, with each
    primary's upper protection level from `levels`); returns the smallest width. The failure
    names the cells, never their values."""
    short = []
    for i in result.intervals:
        key = (i.labels, i.grouping_id)
        if not protection.holds(truth[key], i.lower, i.upper, levels.get(key, 0.0)):
            short.append(i)
    report.check("the attacker's LP on the published table leaves every primary its protection", not short,
                 "tables/published_cells", f"{len(result.intervals)} primary cells ({result.near} held near "
                 f"themselves, the rest fixed at its true values), {_asked(protection)}"
                 if not short else f"{len(short)} primary cells too tightly bounded, e.g. {short[0].labels}")
    return min((i.width for i in result.intervals), default=float("inf"))


def _asked(p: Protection) -> str:
    """The protection asked, in words."""
    parts = ["width > 0" if not p.level else f"{p.level:g}% each side", "the rules' upper protection levels"]
    if p.integer:
        parts.append("over whole numbers" + (f", not inside [1, {p.small - 1}]" if p.small > 1 else ""))
    if p.floor:
        parts.append(f"hidden cells known >= {p.floor:g}")
    return "; ".join(parts)
