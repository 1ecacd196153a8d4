"""The refinement attack across the artefacts of one release (pure: arrays in, candidate sets out).

The attacker holds a row-level table R whose suppressed cells are ⊥ and safe count tables of the
same rows (their original values, with margins; some cells hidden). For each suppressed cell of a
column some artefact speaks about, the question is which values it can still hold.

The rows of R are grouped g by their published values (⊥ a value of its own), n_g rows each; a
group with ⊥ in the tables' dimensions T gets one unknown x_{g,z} >= 0 per completion z of its ⊥
dimensions (z a value of each one's domain: every value published anywhere, as a cell of R or a
label of a table). The counts the artefacts imply for the same rows are linear equations:

    Σ_z x_{g,z} = n_g                                   (each group's rows)
    Σ_{(g,z) in cell c} x_{g,z} = v_c − (rows of R shown whole in c)   (each published cell c)

A value a is a candidate of column j in group g when some solution over the whole numbers has
Σ_{z: z_j = a} x_{g,z} >= 1: an LP maximum below 1 excludes it; an LP optimum that is whole is a
witness (every unknown >= 1 in it witnesses its own values too, so most targets need no solve);
a fractional one is settled by the MILP (HiGHS branch and bound).

Algorithm-aware reasoning (`Kanon`): anonsql's kanon is Kameya & Hayashi's bottom-up suppression,
whose unit is a tuple (y, c) of the count table N(y, c): SUPPRESS merges two whole tuples of the
same class c, so all rows of one original (y, c) end in the same published tuple. Hence a tuple
(y', c) shown whole in R (no ⊥ in the quasi-identifiers) was never merged, and no suppressed row of
class c had the values y': a completion that would make a suppressed row equal to a visible tuple
of its class is excluded (for every completion of its other ⊥ cells, counted: a value is excluded
when every completion is visible). Not modelled: which tuple the greedy cost Γ would have picked
(the random pick and the cost's ties), the k bound on a merged class's parts (a counterpart needs
no violation), hidden table cells' protection floors, and the absence of zero cells from a table.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import AnonsqlError
from ..solver import load_highs, new_model, whole_numbers

#: A value of a cell: its text (values are compared as the engine's text of them), or None.
Value = str | None

#: The most unknowns x_{g,z} the attacker's program is built with.
MAX_UNKNOWNS = 500_000

_TOL = 1e-6

_CONTRADICTION = ("the published artefacts contradict each other: no values of the suppressed cells give every "
                  "published count (they do not count the same rows, or the table is not the method's output)")


@dataclass(frozen=True)
class CountTable:
    """A published safe count table over `dims` (positions in the microdata's columns): each
    published cell's labels, which of its dimensions are margins (Total), and its count."""

    name: str
    dims: tuple[int, ...]
    cells: list[tuple[tuple[Value, ...], tuple[bool, ...], int]]

    def labels(self, d: int) -> set[Value]:
        """The finest labels of dimension position `d` (of self.dims) in use."""
        return {labels[d] for labels, margin, _ in self.cells if not margin[d]}


@dataclass(frozen=True)
class Kanon:
    """What the attacker knows of the method: kanon's output over `qi` with class column `cls`
    (positions in the microdata's columns)."""

    qi: tuple[int, ...]
    cls: int


@dataclass(frozen=True)
class Cell:
    """The suppressed cells of column `column` in one group of `rows` rows, and their candidates."""

    group: tuple[Value, ...]
    column: int
    rows: int
    candidates: tuple[Value, ...]


@dataclass
class Refinement:
    """Every suppressed cell the attack reasoned about (by group and column), with its solver work."""

    cells: list[Cell] = field(default_factory=list)
    unknowns: int = 0
    solves: int = 0
    integer_solves: int = 0
    kanon_excluded: int = 0  # (group, column, value) excluded by the method's behaviour (groups alike: once)


def domains(groups: Sequence[tuple[tuple[Value, ...], int]], tables: Sequence[CountTable],
            columns: int) -> list[list[Value]]:
    """Each column's values known to the attacker: shown in a cell of R or a table's label (None, a
    label of the tables, stands for a value missing in the source), in a stable order."""
    found: list[set[Value]] = [set() for _ in range(columns)]
    for values, _ in groups:
        for j, v in enumerate(values):
            if v is not None:
                found[j].add(v)
    for t in tables:
        for d, j in enumerate(t.dims):
            found[j] |= t.labels(d)
    return [sorted(s, key=lambda v: (v is None, str(v))) for s in found]


def refine(groups: Sequence[tuple[tuple[Value, ...], int]], tables: Sequence[CountTable], attacked: Sequence[int],
           kanon: Kanon | None = None) -> Refinement:
    """The candidate values of every suppressed cell of the `attacked` columns (see the module
    docstring): of the tables' dimensions by the LP/MILP, of the others by the kanon rule alone.

    >>> t = CountTable("t", (0,), [(("a",), (False,), 3), (("b",), (False,), 1), ((None,), (True,), 4)])
    >>> r = refine([(("a",), 2), ((None,), 1), (("b",), 1)], [t], [0])
    >>> [(c.rows, c.candidates) for c in r.cells]
    [(1, ('a',))]
    """
    width = len(groups[0][0]) if groups else 0
    dom = domains(groups, tables, width)
    in_tables = sorted({j for t in tables for j in t.dims})
    result = Refinement()
    rule = _KanonRule(groups, dom, kanon) if kanon is not None else None
    lp = _Program(groups, tables, dom, in_tables, rule, result) if in_tables else None
    for g, (values, n) in enumerate(groups):
        for j in attacked:
            if values[j] is not None:
                continue
            if lp is not None and j in in_tables:
                cands = lp.candidates(g, j)
            elif rule is not None and j in rule.qi and rule.may_exclude(values, (j,)):
                cands = [a for a in dom[j] if not rule.excluded(values, {j: a})]
                result.kanon_excluded += len(dom[j]) - len(cands)
            else:
                cands = list(dom[j])
            result.cells.append(Cell(values, j, n, tuple(cands)))
    return result


class _KanonRule:
    """Completions a kanon output excludes: those making a suppressed row equal to a visible tuple
    (no ⊥ in the quasi-identifiers) of its class."""

    def __init__(self, groups: Sequence[tuple[tuple[Value, ...], int]], dom: list[list[Value]], kanon: Kanon):
        self.qi, self.cls, self.dom = kanon.qi, kanon.cls, dom
        self.columns = (kanon.cls, *kanon.qi)
        visible = [values for values, _ in groups
                   if values[self.cls] is not None and all(values[q] is not None for q in self.qi)]
        # the visible tuples as codes, one column per (class, qi): a projection's rows are then one
        # packed integer each, counted by numpy (a value no visible tuple shows has no code)
        self.code = [{v: i for i, v in enumerate(sorted({t[c] for t in visible}, key=str))} for c in self.columns]
        self.radix = [max(1, len(c)) for c in self.code]
        self.codes = np.asarray([[self.code[i][t[c]] for i, c in enumerate(self.columns)] for t in visible],
                                np.int64).reshape(len(visible), len(self.columns))
        self._counts: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._wide: dict[tuple[int, ...], Counter[tuple[int, ...]]] = {}

    def excluded(self, values: tuple[Value, ...], fixed: dict[int, Value]) -> bool:
        """Whether every completion of the ⊥ quasi-identifiers of `values`, with those of `fixed`
        set, is a visible tuple of the class (then none is the row's original)."""
        if values[self.cls] is None:
            return False
        free = tuple(q for q in self.qi if values[q] is None and q not in fixed)
        need = math.prod(len(self.dom[q]) for q in free)
        return self._count(tuple(fixed.get(j, v) for j, v in enumerate(values)), free) >= need

    def may_exclude(self, values: tuple[Value, ...], fixing: Sequence[int]) -> bool:
        """Whether fixing the ⊥ cells `fixing` of `values` could exclude anything: the visible tuples
        of the class that share the row's shown values must number at least the completions left
        (a bound that skips most rows)."""
        hidden = tuple(q for q in self.qi if values[q] is None)
        if values[self.cls] is None or not hidden:
            return False
        need = math.prod(len(self.dom[q]) for q in hidden if q not in fixing)
        return self._count(values, hidden) >= need

    def _count(self, values: tuple[Value, ...], free: tuple[int, ...]) -> int:
        """The visible tuples equal to `values` on the class and every quasi-identifier not `free`."""
        kept = [i for i, c in enumerate(self.columns) if c not in free]
        if math.prod(self.radix[i] for i in kept) >= 1 << 62:  # too many to pack in one integer: count tuples
            if free not in self._wide:
                self._wide[free] = Counter(map(tuple, self.codes[:, kept].tolist()))
            codes = tuple(self.code[i].get(values[self.columns[i]], -1) for i in kept)
            return self._wide[free][codes]
        if free not in self._counts:
            strides = np.ones(len(kept), np.int64)
            for n in range(len(kept) - 2, -1, -1):
                strides[n] = strides[n + 1] * self.radix[kept[n + 1]]
            keys, counts = np.unique(self.codes[:, kept] @ strides, return_counts=True)
            self._counts[free] = (strides, keys, counts)
        strides, keys, counts = self._counts[free]
        key = 0
        for n, i in enumerate(kept):
            code = self.code[i].get(values[self.columns[i]])
            if code is None:
                return 0
            key += code * int(strides[n])
        at = int(np.searchsorted(keys, key))
        return int(counts[at]) if at < len(keys) and keys[at] == key else 0


class _Program:
    """The attacker's program over the unknowns x_{g,z} (module docstring), one HiGHS model
    warm-started across targets."""

    def __init__(self, groups: Sequence[tuple[tuple[Value, ...], int]], tables: Sequence[CountTable],
                 dom: list[list[Value]], in_tables: list[int], rule: _KanonRule | None, result: Refinement):
        self.result, self.dom, self.in_tables = result, dom, in_tables
        self.code = code = [{v: i for i, v in enumerate(d)} for d in dom]
        # groups alike to the attacker (the same values in the tables' dimensions and the same completions
        # allowed) are one kind: any whole solution of the kind's rows splits among its groups at will
        self.span: dict[int, tuple[int, int]] = {}  # kind -> its unknowns [start, end)
        self.kind_of: dict[int, int] = {}  # group -> its kind
        kinds: dict[tuple[Any, ...], int] = {}
        self.rows_of: list[int] = []  # kind -> its rows, Σ n_g
        owner: list[int] = []
        filled: list[list[int]] = []
        allowed: list[bool] = []
        constant: list[tuple[tuple[Value, ...], int]] = []
        hidden_of: list[list[bool]] = []
        for g, (values, n) in enumerate(groups):
            hidden = [j for j in in_tables if values[j] is None]
            if not hidden:
                constant.append((values, n))
                continue
            completions = list(itertools.product(*(dom[j] for j in hidden)))
            fixing = [j for j in hidden if rule is not None and j in rule.qi]
            ok = tuple(rule is None or not fixing or not rule.may_exclude(values, fixing)
                       or not rule.excluded(values, {j: v for j, v in zip(hidden, z) if j in rule.qi})
                       for z in completions)
            key = (tuple(values[j] for j in in_tables), ok)
            kind = kinds.get(key)
            if kind is None:
                if len(owner) + len(completions) > MAX_UNKNOWNS:
                    raise AnonsqlError(f"the refinement attack needs more than {MAX_UNKNOWNS:,} unknowns (rows' "
                                       "completions over the tables' dimensions): attack fewer tables at once")
                kind = kinds[key] = len(self.rows_of)
                self.rows_of.append(0)
                hidden_of.append([values[j] is None for j in in_tables])
                self.span[kind] = (len(owner), len(owner) + len(completions))
                for z, fine in zip(completions, ok):
                    full = dict(zip(hidden, z))
                    owner.append(kind)
                    filled.append([code[j][full.get(j, values[j])] for j in in_tables])
                    allowed.append(fine)
            self.kind_of[g] = kind
            self.rows_of[kind] += n
        self.owner = np.asarray(owner, np.int64)
        self.codes = np.asarray(filled, np.int64).reshape(len(owner), len(in_tables))
        self.upper = np.where(allowed, np.asarray(self.rows_of, float)[self.owner], 0.0) if owner else np.zeros(0)
        self._found: dict[tuple[int, int], list[Value]] = {}
        result.unknowns = len(owner)
        rows: list[np.ndarray] = []
        rhs: list[float] = []
        for kind, (start, end) in self.span.items():  # Σ_z x_{g,z} = n_g, summed over a kind's groups
            rows.append(np.arange(start, end))
            rhs.append(float(self.rows_of[kind]))
        position = {j: p for p, j in enumerate(in_tables)}
        for t in tables:
            for labels, margin, value in t.cells:
                fixed = [(position[j], code[j][lab]) for j, lab, m in zip(t.dims, labels, margin) if not m]
                mask = np.ones(len(owner), bool)
                for p, c in fixed:
                    mask &= self.codes[:, p] == c
                shown = sum(n for values, n in constant
                            if all(code[j][values[j]] == code[j][lab] for j, lab, m in zip(t.dims, labels, margin)
                                   if not m))
                members = np.flatnonzero(mask)
                if not len(members):
                    if shown != value:
                        raise AnonsqlError(f"{t.name} does not count the rows of the published table: a cell of "
                                           f"{value:,} rows holds {shown:,} of them (the refinement attack needs "
                                           "artefacts of the same rows)")
                    continue
                rows.append(members)
                rhs.append(float(value - shown))
        self.by_method = ~np.asarray(allowed, bool)  # excluded by the kanon rule before any count
        lower, self.upper = propagate(rows, np.asarray(rhs), np.zeros(len(owner)), self.upper)
        if (lower > self.upper).any():
            raise AnonsqlError(_CONTRADICTION)
        self.hs = load_highs()
        self.h = new_model(self.hs)
        self._build(rows, np.asarray(rhs))
        # target (kind, p, value code) -> one id; each unknown names the targets it serves (-1: a shown value)
        self.width = max(1, *(len(dom[j]) for j in in_tables))
        hidden_at = np.asarray(hidden_of, bool).reshape(len(hidden_of), len(in_tables))[self.owner]
        ids = (self.owner[:, None] * len(in_tables) + np.arange(len(in_tables))[None, :]) * self.width + self.codes
        self.serves = np.where(hidden_at, ids, -1)
        self.witnessed = np.zeros(len(self.rows_of) * len(in_tables) * self.width, bool)
        self._harvest(lower)
        self._objective = np.zeros(0, np.int32)
        self._solve(np.zeros(0, np.int64), feasibility=True)
        self._sweep()

    def _sweep(self, rounds: int = 50) -> None:
        """Witnesses in bulk: maximize the unknowns of every target not yet witnessed at once (each
        weighted 1/n_g, so that small groups count as much as large ones), while each optimum over
        the whole numbers witnesses new ones."""
        weight = 1.0 / np.asarray(self.rows_of, float)[self.owner]
        for _ in range(rounds):
            before = int(self.witnessed.sum())
            open_ = ((self.serves >= 0) & ~self.witnessed[np.maximum(self.serves, 0)]).any(axis=1) & (self.upper >= 1)
            if not open_.any():
                return
            self._solve(np.flatnonzero(open_), weight, sweep=True)
            if int(self.witnessed.sum()) == before:
                return

    def _build(self, rows: list[np.ndarray], rhs: np.ndarray) -> None:
        hs = self.hs
        lp = hs.HighsLp()
        n = len(self.owner)
        row_index = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        row_of = np.repeat(np.arange(len(rows)), [len(r) for r in rows]) if rows else np.zeros(0, np.int64)
        order = np.lexsort((row_of, row_index))
        cols, index = row_index[order], row_of[order]
        lp.num_col_, lp.num_row_ = n, len(rows)
        lp.col_cost_ = np.zeros(n)
        lp.col_lower_ = np.zeros(n)  # the propagated lower ends only witness: the LP needs no more
        lp.col_upper_ = self.upper
        lp.row_lower_ = rhs
        lp.row_upper_ = rhs
        lp.a_matrix_.format_ = hs.MatrixFormat.kColwise
        lp.a_matrix_.start_ = np.searchsorted(cols, np.arange(n + 1)).astype(np.int32)
        lp.a_matrix_.index_ = index.astype(np.int32)
        lp.a_matrix_.value_ = np.ones(len(index))
        self.h.passModel(lp)

    def candidates(self, g: int, j: int) -> list[Value]:
        """The values of column j the whole-number solutions allow in group g's ⊥ cells (its kind's)."""
        kind = self.kind_of[g]
        if (kind, j) not in self._found:
            self._found[kind, j] = self._candidates(kind, j)
        return self._found[kind, j]

    def _candidates(self, g: int, j: int) -> list[Value]:
        p = self.in_tables.index(j)
        mine = np.arange(*self.span[g])
        found = []
        for a in self.dom[j]:
            which = mine[self.codes[mine, p] == self.code[j][a]]
            if not len(which) or not (self.upper[which] >= 1).any():
                self.result.kanon_excluded += bool(len(which)) and bool(self.by_method[which].all())
                continue
            if self.witnessed[(g * len(self.in_tables) + p) * self.width + self.code[j][a]] or self._solve(which):
                found.append(a)
        return found

    def _solve(self, which: np.ndarray, weight: np.ndarray | None = None, feasibility: bool = False,
               sweep: bool = False) -> bool:
        """max Σ x over `which` >= 1 over the whole numbers (the LP first); harvests witnesses."""
        hs, h = self.hs, self.h
        h.changeColsCost(len(self._objective), self._objective, np.zeros(len(self._objective)))
        self._objective = which.astype(np.int32)
        h.changeColsCost(len(which), self._objective, np.ones(len(which)) if weight is None else weight[which])
        h.changeObjectiveSense(hs.ObjSense.kMaximize)
        h.run()
        self.result.solves += 1
        status = h.getModelStatus()
        if status == hs.HighsModelStatus.kInfeasible:
            raise AnonsqlError(_CONTRADICTION)
        if status != hs.HighsModelStatus.kOptimal:
            raise AnonsqlError(f"the attacker's LP failed: {h.modelStatusToString(status)}")
        x = np.asarray(h.getSolution().col_value)
        whole = bool((np.abs(x - np.round(x)) <= _TOL).all())
        if whole:
            self._harvest(x)
        if feasibility or sweep:
            if sweep and not whole:  # the sweep's witnesses over the whole numbers
                self._integer()
            return True
        if h.getInfo().objective_function_value < 1 - _TOL:
            return False
        return whole or self._integer() >= 1 - _TOL

    def _integer(self) -> float:
        """The current objective's maximum over the whole numbers (HiGHS branch and bound); harvests."""
        hs, h = self.hs, self.h
        whole_numbers(h, hs, True)
        try:
            h.run()
            self.result.integer_solves += 1
            if h.getModelStatus() != hs.HighsModelStatus.kOptimal:
                raise AnonsqlError(f"the attacker's integer program failed: "
                                   f"{h.modelStatusToString(h.getModelStatus())}")
            self._harvest(np.asarray(h.getSolution().col_value))
            return float(h.getInfo().objective_function_value)
        finally:
            whole_numbers(h, hs, False)

    def _harvest(self, x: Any) -> None:
        """Every unknown >= 1 of a whole solution witnesses its completion's values in its group."""
        served = self.serves[np.asarray(x) >= 1 - _TOL].ravel()
        self.witnessed[served[served >= 0]] = True


def foreign_values(groups: Sequence[tuple[tuple[Value, ...], int]], table: CountTable) -> list[tuple[int, Value]]:
    """(column, value) shown in the microdata but no finest label of `table`: the two do not count
    the same values (one binned or generalized), so the table says nothing of these cells.

    >>> t = CountTable("t", (0,), [(("a",), (False,), 1)])
    >>> foreign_values([(("a",), 1), (("b",), 2), ((None,), 1)], t)
    [(0, 'b')]
    """
    labels = {j: table.labels(d) for d, j in enumerate(table.dims)}
    found = {(j, values[j]) for values, _ in groups for j in table.dims
             if values[j] is not None and labels[j] and values[j] not in labels[j]}
    return sorted(found, key=lambda p: (p[0], str(p[1])))


def propagate(rows: Sequence[np.ndarray], rhs: np.ndarray, lower: np.ndarray, upper: np.ndarray,
              rounds: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of whole-number unknowns x >= 0 under equations Σ_{i in row} x_i = rhs, tightened
    until they hold still: each unknown is at most its row's rhs less the others' lower ends, and
    at least the rhs less the others' upper ends (a lower end above an upper one: no solution).

    >>> lo, hi = propagate([np.array([0, 1]), np.array([1, 2])], np.array([3.0, 0.0]), np.zeros(3), np.full(3, 9.0))
    >>> lo.tolist(), hi.tolist()
    ([3.0, 0.0, 0.0], [3.0, 0.0, 0.0])
    """
    lo, hi = lower.astype(float).copy(), upper.astype(float).copy()
    if not len(rows):
        return lo, hi
    index = np.concatenate(rows)
    row = np.repeat(np.arange(len(rows)), [len(r) for r in rows])
    for _ in range(rounds):
        sum_lo = np.bincount(row, lo[index], len(rows))
        sum_hi = np.bincount(row, hi[index], len(rows))
        new_hi, new_lo = hi.copy(), lo.copy()
        np.minimum.at(new_hi, index, np.floor(rhs[row] - (sum_lo[row] - lo[index]) + _TOL))
        np.maximum.at(new_lo, index, np.ceil(rhs[row] - (sum_hi[row] - hi[index]) - _TOL))
        if (new_hi == hi).all() and (new_lo == lo).all():
            break
        lo, hi = new_lo, new_hi
        if (lo > hi).any():
            break
    return lo + 0.0, hi + 0.0  # no -0.0
