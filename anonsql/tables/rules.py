"""Primary sensitivity rules: which cells may not be published as they are (no SQL here).

* minimum frequency: a cell of fewer than `min_count` rows (contributors in a magnitude
  table) is unsafe; an empty cell is safe unless `zero_unsafe`;
* (n, k)-dominance: the n largest contributions make more than k % of the cell total;
* p % rule: the second largest contributor could estimate the largest within p %:
  total - x_1 - x_2 < p/100 * x_1.

Each rule has its standard upper protection level (Hundepool et al. 2012, 4.3): how far above
the true total T the attacker's upper bound must reach before the rule's estimate is spoilt.
p %: p/100 x_1 - (T - x_1 - x_2); (n, k): 100/k (x_1 + ... + x_n) - T. Where the rule holds the
level is <= 0 (nothing to protect).

>>> rule = Rules(min_count=3)
>>> rule.reason(2, 2.0, np.zeros(0)), rule.reason(0, 0.0, np.zeros(0)), rule.reason(3, 3.0, np.zeros(0))
(('frequency', 'frequency 2 < 3'), None, None)
>>> Rules(p_percent=10).reason(3, 100.0, np.array([60.0, 35.0]))
('p%', 'p% rule: 100 - 60 - 35 < 10% of 60')
>>> float(Rules(p_percent=10, dominance=(1, 80)).upper_level(100.0, np.array([98.0, 1.0])))  # 100/80 98 - 100
22.5
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

    def reason(self, freq: int, value: float, top: np.ndarray) -> tuple[str, str] | None:
        """Why a cell is unsafe: (the rule, e.g. 'frequency', '2-dominance', 'p%'; the numbers
        behind it, PRIVATE), None when it is safe."""
        if freq == 0:
            return ("empty", "empty cell (--zero-unsafe)") if self.zero_unsafe else None
        if freq < self.min_count:
            return "frequency", f"frequency {freq} < {self.min_count}"
        if self.dominance and value > 0:
            n, k = self.dominance
            if top[:n].sum() > k / 100 * value:
                return f"{n}-dominance", f"({n},{k:g})-dominance: top {n} = {top[:n].sum():g} > {k:g}% of {value:g}"
        if self.p_percent is not None and value > 0 and len(top) >= 2:
            x1, x2 = top[0], top[1]
            if value - x1 - x2 < self.p_percent / 100 * x1:
                return "p%", f"p% rule: {value:g} - {x1:g} - {x2:g} < {self.p_percent:g}% of {x1:g}"
        return None

    def upper_level(self, value: float, top: np.ndarray) -> float:
        """The largest of the magnitude rules' upper protection levels of a cell (0 if none is positive)."""
        level = 0.0
        if self.dominance:
            n, k = self.dominance
            level = max(level, 100 / k * float(top[:n].sum()) - value)
        if self.p_percent is not None and len(top) >= 2:
            level = max(level, self.p_percent / 100 * float(top[0]) - (value - float(top[0]) - float(top[1])))
        return level


def primary(grid: Grid, rules: Rules) -> list[tuple[str, str] | None]:
    """The reason each cell of `grid` is a primary (unsafe) cell (rule, details), None for a safe one."""
    return [rules.reason(int(f), float(v), t) for f, v, t in zip(grid.freq, grid.value, grid.top)]


def by_magnitude(reasons: list[tuple[str, str] | None]) -> np.ndarray:
    """Which cells are primaries of a magnitude rule ((n,k)-dominance or p%), from `primary`'s reasons."""
    return np.array([r is not None and (r[0].endswith("-dominance") or r[0] == "p%") for r in reasons], bool)


def upper_levels(grid: Grid, rules: Rules) -> np.ndarray:
    """Every cell's upper protection level from the magnitude rules (zeros without them)."""
    if not rules.top:
        return np.zeros(len(grid.codes))
    return np.array([rules.upper_level(float(v), t) for v, t in zip(grid.value, grid.top)])
