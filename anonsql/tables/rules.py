"""Primary sensitivity rules: which cells may not be published as they are (no SQL here).

* minimum frequency: a cell of fewer than `min_count` rows (contributors in a magnitude
  table) is unsafe; an empty cell is safe unless `zero_unsafe`;
* (n, k)-dominance: the n largest contributions make more than k % of the cell total;
* p % rule: the second largest contributor could estimate the largest within p %:
  total - x_1 - x_2 < p/100 * x_1.

>>> rule = Rules(min_count=3)
>>> rule.reason(2, 2.0, np.zeros(0)), rule.reason(0, 0.0, np.zeros(0)), rule.reason(3, 3.0, np.zeros(0))
('frequency 2 < 3', None, None)
>>> Rules(p_percent=10).reason(3, 100.0, np.array([60.0, 35.0]))
'p% rule: 100 - 60 - 35 < 10% of 60'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cells import Grid


@dataclass(frozen=True)
class Rules:
    min_count: int = 0
    zero_unsafe: bool = False
    dominance: tuple[int, float] | None = None  # (n, k): n contributors, k percent
    p_percent: float | None = None

    @property
    def top(self) -> int:
        """How many of the largest contributions per cell the rules read."""
        return max(self.dominance[0] if self.dominance else 0, 2 if self.p_percent is not None else 0)

    def reason(self, freq: int, value: float, top: np.ndarray) -> str | None:
        """Why a cell is unsafe (None: it is safe)."""
        if freq == 0:
            return "empty cell (--zero-unsafe)" if self.zero_unsafe else None
        if freq < self.min_count:
            return f"frequency {freq} < {self.min_count}"
        if self.dominance and value > 0:
            n, k = self.dominance
            if top[:n].sum() > k / 100 * value:
                return f"({n},{k:g})-dominance: top {n} = {top[:n].sum():g} > {k:g}% of {value:g}"
        if self.p_percent is not None and value > 0 and len(top) >= 2:
            x1, x2 = top[0], top[1]
            if value - x1 - x2 < self.p_percent / 100 * x1:
                return f"p% rule: {value:g} - {x1:g} - {x2:g} < {self.p_percent:g}% of {x1:g}"
        return None


def primary(grid: Grid, rules: Rules) -> list[str | None]:
    """The reason each cell of `grid` is a primary (unsafe) cell, None for a safe one."""
    return [rules.reason(int(f), float(v), t) for f, v, t in zip(grid.freq, grid.value, grid.top)]
