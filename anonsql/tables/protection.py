"""What a primary cell's attacker interval [lower, upper] must satisfy, and what the attacker knows
besides the published values (no SQL here).

* width > 0 (not pinned) and, with a `level` in percent of the cell's value, both ends that far
  from the value (the user's --protection);
* the magnitude rules' own upper protection level (rules.upper_level), per cell;
* in a frequency table (`integer`: counts are whole numbers) the interval is first narrowed to
  the whole numbers inside it, and under the minimum count n (`small`) a primary is exposed when
  that interval lies inside [1, n-1]: the attacker learns it is a small non-zero count, the very
  fact the rule hides;
* `floor`: the smallest value a hidden cell can have, which the attacker knows from the policy:
  1 in a frequency table where empty cells are published (not --zero-unsafe) and never chosen as
  secondaries (not --allow-empty-secondaries), else 0.

>>> Protection().holds(5, 5, 5), Protection().holds(5, 4, 9), Protection(20).holds(5, 4, 9)
(False, True, True)
>>> counts = Protection(small=4, integer=True, floor=1)
>>> counts.fails(2, 1.0, 2.6), counts.fails(2, 1.0, 3.9), counts.fails(2, 1.0, 4.0)  # [1, 3] hides nothing
((False, True), (False, True), (False, False))
>>> counts.fails(1, 0.6, 1.4)  # only the whole number 1 fits: pinned
(True, True)
>>> Protection().fails(100, 90, 120, upper_level=25)  # a p% primary needs upper >= 125
(False, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Protection:
    level: float = 0.0  # percent of the cell's value, on both sides (0: width > 0)
    small: int = 0  # the minimum count n of a frequency table (0: no [1, n-1] exposure)
    integer: bool = False  # the values are whole numbers (counts)
    floor: float = 0.0  # the smallest value of a hidden cell, known to the attacker
    allow_empty: bool = False  # an empty cell may be chosen as a secondary

    def holds(self, value: float, lower: float, upper: float, upper_level: float = 0.0) -> bool:
        return not any(self.fails(value, lower, upper, upper_level))

    def fails(self, value: float, lower: float, upper: float, upper_level: float = 0.0) -> tuple[bool, bool]:
        """(the lower end is too high, the upper end too low); a pinned cell fails both."""
        tol = 1e-7 * max(1.0, abs(value))
        lo, hi = self.whole(lower, upper)
        margin = self.level / 100 * abs(value)
        pinned = hi - lo <= tol
        low_bad = pinned or lo > value - margin + tol
        high_bad = pinned or hi < value + max(margin, upper_level) - tol
        if self.small and 1 <= lo and hi <= self.small - 1:
            high_bad = True  # to be repaired by an upper end reaching n
        return low_bad, high_bad

    def whole(self, lower: float, upper: float) -> tuple[float, float]:
        """The interval the attacker cannot exclude: with whole numbers, its whole numbers' ends."""
        if not self.integer:
            return lower, upper
        return float(math.ceil(lower - 1e-6)), (upper if math.isinf(upper) else float(math.floor(upper + 1e-6)))
