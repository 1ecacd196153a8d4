"""The attacker's program near one cell, the rest of the table fixed at its true values: a
sufficient check of the protection, run before the whole table's program.

The attacker's program is A x {=, >=} b, x >= l (x whole numbers for counts) over the unknowns
x (verify.attack). Near a target cell t, pick a neighbourhood N of unknowns (t's own, then
those sharing a published total of at most LINE unknowns with them, HOPS times over, at most
MOST in all) and fix every unknown outside N at its true value x*_j (the SQL recount):

    F_N = {x in F : x_j = x*_j for j not in N}  is a subset of  F  (the attacker's feasible set),

and F_N holds the true table x* itself (the recount satisfies every published total and every
policy bound, over whole numbers too), so it is not empty. Minimising and maximising the cell's
sum over a smaller non-empty set gives

    min_F <= min_{F_N}    and    max_{F_N} <= max_F :

the neighbourhood's interval [lo_N, hi_N] lies inside the attacker's [lo, hi]. Every protection
anonsql asks (protection.Protection: not pinned, both ends far enough from the value, the
rules' upper protection levels, the whole numbers not all inside [1, n-1]) only gets easier
as the interval widens, so if it holds on [lo_N, hi_N] it holds on [lo, hi]: the neighbourhood
is SOUND as a sufficient check, and only where it fails does the whole table's program decide.
The same holds for any feasible point: an end a solver reports short of its optimum (a MIP gap)
is still the value of some point of F_N, so still inside [lo, hi].

A neighbourhood program has a few hundred unknowns where the whole table's has thousands tied
by its grand total, so its MILP takes milliseconds where the whole table's takes minutes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..solver import load_highs, new_model, whole_numbers
from .sparse import sp

#: Published totals of more unknowns than this do not widen a neighbourhood (a grand total
#: would bring in the whole table); they still bind it, with the outside fixed.
LINE = 64
#: Rounds of widening through the totals (a hypercube's far corner is D totals away).
HOPS = 3
#: The most unknowns a neighbourhood holds: past it, widening stops (those tied by the most
#: totals to what was found come first). A cell whose protection fails in it is tried once more
#: in a neighbourhood WIDER times as large, one round further, before the whole table decides.
MOST = 200
WIDER = 4
#: A table of at most this many unknowns is solved whole at once (the neighbourhoods would cost more:
#: Adult's cube, 3.3 s whole against 9.5 s near, in one run).
SMALL = 800


def worth(unknowns: int) -> bool:
    """Whether the attacker's program of this many unknowns is checked near each cell first."""
    return unknowns > SMALL


def neighbourhood(a_rows: sp.csr_matrix, a_cols: sp.csc_matrix, seeds: np.ndarray, free: np.ndarray,
                  hops: int = HOPS, line: int = LINE, most: int = MOST) -> np.ndarray:
    """The unknowns near `seeds` (columns of the attacker's rows `a_rows`, the same in `a_cols`):
    the seeds, every unknown of `free` (no true value to fix it at), then HOPS rounds of the unknowns
    sharing a total of at most `line` unknowns with those found, while at most `most` are found.

    >>> a = sp.csr_matrix(np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [1, 1, 1, 1]]))
    >>> neighbourhood(a, a.tocsc(), np.array([0]), np.zeros(4, bool), hops=1, line=2).tolist()
    [0, 1]
    >>> neighbourhood(a, a.tocsc(), np.array([0]), np.zeros(4, bool), hops=2, line=2).tolist()
    [0, 1, 2]
    """
    inside = free.copy()
    inside[seeds] = True
    small = np.diff(a_rows.indptr) <= line
    frontier = np.asarray(seeds, np.int64)
    for _ in range(hops):
        rows = np.unique(np.concatenate([a_cols.indices[a_cols.indptr[c]:a_cols.indptr[c + 1]] for c in frontier]
                                        or [np.zeros(0, np.int64)]))
        rows = rows[small[rows]]
        cols, ties = np.unique(np.concatenate([a_rows.indices[a_rows.indptr[r]:a_rows.indptr[r + 1]] for r in rows]
                                              or [np.zeros(0, np.int64)]), return_counts=True)
        new, ties = cols[~inside[cols]], ties[~inside[cols]]
        room = most - int(inside.sum())
        if not len(new) or room <= 0:
            break
        new = new[np.argsort(-ties, kind="stable")[:room]]  # past the room: those tied by the most totals
        inside[new] = True
        frontier = new
    return np.flatnonzero(inside)


class Near:
    """The attacker's programs near single cells of one table (see module docstring): rows `a`
    (= rhs, or >= rhs where `at_least`), unknowns >= `lowest`, each fixed outside a neighbourhood
    at `true` (NaN: no true value known, always inside)."""

    def __init__(self, a: sp.csr_matrix, rhs: np.ndarray, at_least: np.ndarray, lowest: np.ndarray,
                 true: np.ndarray, integer: bool):
        self.hs = load_highs()
        self.rows, self.cols = a.tocsr(), a.tocsc()
        self.rhs, self.at_least, self.lowest, self.integer = rhs, at_least, lowest, integer
        self.free = np.isnan(true)
        self.true = np.where(self.free, 0.0, true)
        self.fixed_sum = self.rows @ self.true  # each row's true total over the unknowns with a true value

    def check(self, local: np.ndarray, enough: Callable[[float, float], bool]) -> tuple[float, float] | None:
        """An interval inside the attacker's for the sum of unknowns `local` that is `enough`, from
        a neighbourhood, then a wider one; None when neither gives one (the whole table decides)."""
        for hops, most in ((HOPS, MOST), (HOPS + 1, WIDER * MOST)):
            inner = self.bounds(local, hops, most, enough)
            if inner is not None and enough(*inner):
                return inner
        return None

    def bounds(self, local: np.ndarray, hops: int, most: int,
               enough: Callable[[float, float], bool] | None = None) -> tuple[float, float] | None:
        """min and max of the sum of unknowns `local` with the unknowns outside their neighbourhood
        fixed at the truth: an interval inside the attacker's (None when the solver does not finish,
        or more unknowns than `most` have no true value). With `enough`, an LP interval that is not
        enough is returned as it is: the whole numbers' lies inside it, so it is not enough either."""
        if int(self.free.sum()) > most:
            return None
        near = neighbourhood(self.rows, self.cols, local, self.free, hops, LINE, most)
        sub = self.cols[:, near]
        touched = np.flatnonzero(np.diff(sub.tocsr().indptr))
        sub = sub[touched].tocsc()
        # a row's right-hand side less the true values of its unknowns outside the neighbourhood
        outside = self.fixed_sum[touched] - self.rows[touched][:, near] @ self.true[near]
        rhs = self.rhs[touched] - outside
        inf = self.hs.kHighsInf
        lp = self.hs.HighsLp()
        lp.num_col_, lp.num_row_ = len(near), len(touched)
        lp.col_cost_ = np.isin(near, local).astype(float)
        lp.col_lower_, lp.col_upper_ = self.lowest[near], np.full(len(near), inf)
        lp.row_lower_ = rhs
        lp.row_upper_ = np.where(self.at_least[touched], inf, rhs)
        lp.a_matrix_.format_ = self.hs.MatrixFormat.kColwise
        lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = sub.indptr, sub.indices, sub.data
        h = new_model(self.hs)
        h.passModel(lp)
        senses = (self.hs.ObjSense.kMinimize, self.hs.ObjSense.kMaximize)
        ends: list[float | None] = []
        whole = []  # the ends whose LP optimum is not a whole point (else it is the whole numbers' already)
        for sense in senses:
            h.changeObjectiveSense(sense)
            end = _optimum(h, self.hs)
            ends.append(end)
            finite = end is not None and np.isfinite(end)
            whole.append(self.integer and finite and fractional(h.getSolution().col_value))
        if any(e is None for e in ends):
            return None
        if enough is not None and not enough(*ends):  # type: ignore[arg-type]
            return float(ends[0]), float(ends[1])  # type: ignore[arg-type]
        for k in np.flatnonzero(whole):
            h.changeObjectiveSense(senses[k])
            whole_numbers(h, self.hs, True)
            ends[k] = _optimum(h, self.hs)
            whole_numbers(h, self.hs, False)
        if any(e is None for e in ends):
            return None
        return float(ends[0]), float(ends[1])  # type: ignore[arg-type]


def fractional(x: Any) -> bool:
    """Whether a solution has a component that is not a whole number."""
    x = np.asarray(x)
    return bool((np.abs(x - np.round(x)) > 1e-6).any())


def _optimum(h: Any, hs: Any) -> float | None:
    """The optimum (inf when unbounded; None when the solver stops short without a feasible point)."""
    h.run()
    status = h.getModelStatus()
    if status == hs.HighsModelStatus.kOptimal:
        return float(h.getInfo().objective_function_value)
    if status == hs.HighsModelStatus.kUnbounded:  # not "unbounded or infeasible": that one is left to the whole table
        return float("inf") if h.getLp().sense_ == hs.ObjSense.kMaximize else float("-inf")
    return None
