"""The attacker's LP: how tightly do the published cells bound a suppressed one?

Unknowns are the finest cells not published (x >= 0; a hidden cell of the table >= `floor`,
what the attacker knows from the policy: see protection.Protection); every published total
gives one equation, its value minus its published members, every hidden total one inequality
(>= `floor`). The bounds of a cell are the minimum and
maximum of its unknown members' sum (plus its published members). One persistent HiGHS model
serves the whole run: suppressing a cell frees its row (and, for a finest cell, adds its
column), and only the objective changes between solves, so each solve starts warm. The rows
whose duals are non-zero at an optimum are the totals that pin the cell: its certificate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import AnonsqlError
from ..solver import load_highs, new_model, whole_numbers
from .sparse import sp


@dataclass
class Bounds:
    """The attacker's interval of one cell and the published totals (non-zero duals) behind each end;
    `fractional`: whether the LP's optimum at each end is not whole (only then can the whole
    numbers' end lie inside it); `lp`: the LP's interval when the ends are the whole numbers'."""

    lower: float
    upper: float
    pin_lower: np.ndarray
    pin_upper: np.ndarray
    fractional: tuple[bool, bool] = (False, False)
    lp: tuple[float, float] | None = None


class Attacker:
    """The attacker's LP over a table whose `suppressed` cells are hidden (see module docstring)."""

    def __init__(self, members: sp.csr_matrix, finest_cell: np.ndarray, value: np.ndarray, suppressed: np.ndarray,
                 floor: float = 0.0):
        self._hs = load_highs()
        self.floor = floor
        self.members = members
        self.holders = members.T.tocsr()  # finest cell -> cells containing it
        self.finest_cell = finest_cell
        self.value = value.astype(float)
        self.suppressed = suppressed.copy()
        self.inner = np.zeros(len(value), bool)
        self.inner[finest_cell[finest_cell >= 0]] = True
        free = self._free()
        known = np.where(free, 0.0, self.value[np.maximum(finest_cell, 0)])
        self.rhs = self.value - members @ known  # each cell's value minus its published members
        self.col_of = np.full(len(finest_cell), -1, np.int64)
        self.col_of[free] = np.arange(int(free.sum()))
        self.row_of = np.full(len(value), -1, np.int64)
        has_free = (members @ free.astype(np.int64)) > 0
        rows = np.flatnonzero(has_free & ~self.inner)
        self.row_of[rows] = np.arange(len(rows))
        self.cell_of_row: list[int] = rows.tolist()
        self.h = new_model(self._hs)
        inf = self._hs.kHighsInf
        lp = self._hs.HighsLp()
        a = members[rows][:, np.flatnonzero(free)].tocsc()
        lp.num_col_, lp.num_row_ = a.shape[1], a.shape[0]
        lp.col_cost_ = np.zeros(a.shape[1])
        lp.col_lower_ = np.where(finest_cell[free] >= 0, floor, 0.0)
        lp.col_upper_ = np.full(a.shape[1], inf)
        hidden = self.suppressed[rows]
        lp.row_lower_ = np.where(hidden, self._hidden_lower(rows), self.rhs[rows])
        lp.row_upper_ = np.where(hidden, inf, self.rhs[rows])
        lp.a_matrix_.format_ = self._hs.MatrixFormat.kColwise
        lp.a_matrix_.start_, lp.a_matrix_.index_ = a.indptr, a.indices
        lp.a_matrix_.value_ = np.ones(a.nnz)
        self.h.passModel(lp)
        self._objective = np.zeros(0, np.int64)

    def _hidden_lower(self, cells: np.ndarray | int) -> Any:
        """The lower end of a hidden total's row: >= floor, less its published members (-inf without a floor)."""
        if not self.floor:
            return np.full(np.shape(cells), -self._hs.kHighsInf) if np.ndim(cells) else -self._hs.kHighsInf
        return self.floor - (self.value[cells] - self.rhs[cells])

    def _free(self) -> np.ndarray:
        """Finest cells the attacker does not see: not a cell of their own, or a suppressed one."""
        cell = self.finest_cell
        return (cell < 0) | self.suppressed[np.maximum(cell, 0)]

    def suppress(self, cell: int) -> None:
        """Hide one more cell: its equation goes; a finest cell becomes an unknown."""
        inf = self._hs.kHighsInf
        self.suppressed[cell] = True
        if self.row_of[cell] >= 0 and not self.inner[cell]:
            self.h.changeRowBounds(int(self.row_of[cell]), self._hidden_lower(cell), inf)
        if not self.inner[cell]:
            return
        finest = int(self.members.indices[self.members.indptr[cell]])
        holders = self.holders.indices[self.holders.indptr[finest]:self.holders.indptr[finest + 1]]
        holders = holders[~self.inner[holders]]
        self.rhs[cell] += self.value[cell]  # its own value is no longer known
        self.rhs[holders] += self.value[cell]
        for c in holders:
            hidden = self.suppressed[c]
            if self.row_of[c] < 0:
                self.row_of[c] = len(self.cell_of_row)
                self.cell_of_row.append(int(c))
                self.h.addRow(self._hidden_lower(c) if hidden else self.rhs[c], inf if hidden else self.rhs[c], 0,
                              np.zeros(0, np.int32), np.zeros(0))
            else:
                self.h.changeRowBounds(int(self.row_of[c]), self._hidden_lower(c) if hidden else self.rhs[c],
                                       inf if hidden else self.rhs[c])
        rows = self.row_of[holders].astype(np.int32)
        self.col_of[finest] = self.h.getNumCol()
        self.h.addCol(0.0, self.floor, inf, len(rows), rows, np.ones(len(rows)))

    def bounds(self, cell: int) -> Bounds:
        """The attacker's min and max of `cell` given everything published."""
        mine = self.members.indices[self.members.indptr[cell]:self.members.indptr[cell + 1]]
        cols = self.col_of[mine]
        cols = cols[cols >= 0].astype(np.int32)
        known = float(self.value[cell] - self.rhs[cell])
        if not len(cols):
            return Bounds(known, known, np.zeros(0, np.int64), np.zeros(0, np.int64))
        self.h.changeColsCost(len(self._objective), self._objective.astype(np.int32), np.zeros(len(self._objective)))
        self.h.changeColsCost(len(cols), cols, np.ones(len(cols)))
        self._objective = cols
        ends = []
        for sense in (self._hs.ObjSense.kMinimize, self._hs.ObjSense.kMaximize):
            self.h.changeObjectiveSense(sense)
            self.h.run()
            status = self.h.getModelStatus()
            if status in (self._hs.HighsModelStatus.kUnbounded, self._hs.HighsModelStatus.kUnboundedOrInfeasible):
                ends.append((np.inf, np.zeros(0, np.int64), False))
                continue
            if status != self._hs.HighsModelStatus.kOptimal:
                raise AnonsqlError(f"the attacker's LP failed: {self.h.modelStatusToString(status)}")
            solution = self.h.getSolution()
            duals = np.asarray(solution.row_dual)
            pinning = np.asarray(self.cell_of_row, np.int64)[np.abs(duals) > 1e-9]
            pinning = pinning[~self.suppressed[pinning]]
            x = np.asarray(solution.col_value)
            ends.append((known + self.h.getInfo().objective_function_value, pinning,
                         bool((np.abs(x - np.round(x)) > 1e-6).any())))
        return Bounds(ends[0][0], ends[1][0], ends[0][1], ends[1][1], (ends[0][2], ends[1][2]))

    def whole(self, cell: int, b: Bounds, ends: tuple[bool, bool] = (True, True)) -> Bounds:
        """The interval over whole numbers (counts): each end of `ends` the LP found at a fractional
        optimum is solved again as a MILP (HiGHS branch and bound; a whole optimum is already the
        integer end). The LP's ends stay in `lp`, its certificates in the pins: a repair breaks those."""
        todo = (b.fractional[0] and ends[0], b.fractional[1] and ends[1])
        if not any(todo):
            return Bounds(b.lower, b.upper, b.pin_lower, b.pin_upper, b.fractional, (b.lower, b.upper))
        whole_numbers(self.h, self._hs, True)
        found = [b.lower, b.upper]
        try:
            for k, sense in enumerate((self._hs.ObjSense.kMinimize, self._hs.ObjSense.kMaximize)):
                if not todo[k]:
                    continue
                self.h.changeObjectiveSense(sense)
                self.h.run()
                status = self.h.getModelStatus()
                if status != self._hs.HighsModelStatus.kOptimal:
                    raise AnonsqlError(f"the attacker's integer program failed: {self.h.modelStatusToString(status)}")
                found[k] = float(self.value[cell] - self.rhs[cell]) + self.h.getInfo().objective_function_value
        finally:
            whole_numbers(self.h, self._hs, False)
        return Bounds(found[0], found[1], b.pin_lower, b.pin_upper, b.fractional, (b.lower, b.upper))
