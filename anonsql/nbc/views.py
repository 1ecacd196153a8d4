"""NBC-enabling viewsets (P, N) and the safety condition of Corollary 4 (eq. 10), exactly.

Classes are indexed in precedence order: index 0 has the lowest precedence and the last
index wins ties (Section 6.1: "the larger the class label the higher the precedence").
Counts are ints or Fractions; nothing here rounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

Number = int | Fraction


@dataclass
class Viewset:
    """P[c] = |σ_{C=c}(T)| and N[i][t][c] = |σ_{A_i=t ∧ C=c}(T)| (Section 3)."""

    P: Sequence[Number]
    N: Sequence[Sequence[Sequence[Number]]]  # attribute i -> value t -> class c

    @property
    def n(self) -> int:
        return len(self.N)

    @property
    def classes(self) -> int:
        return len(self.P)

    def values(self) -> list[Number]:
        """Every count of the viewset: all P_c and all N^i_{t,c}."""
        return list(self.P) + [x for attr in self.N for row in attr for x in row]


def _max_ratio(groups: Sequence[Sequence[Number]]) -> Fraction | None:
    """max over groups of max/min; None when a group holds a zero (an infinite ratio)."""
    best = Fraction(1)
    for g in groups:
        lo, hi = min(g), max(g)
        if lo <= 0:
            return None
        best = max(best, Fraction(hi) / Fraction(lo))
    return best


def amplification(view: Viewset) -> Fraction | None:
    """The largest ratio that eq. (10) bounds: max(P_c'/P_c, N^i_{t,c}/N^i_{t,c'}); None if a count is 0."""
    return _max_ratio([view.P] + [row for attr in view.N for row in attr])


def smallest_rho(view: Viewset) -> Fraction | None:
    """The smallest ρ for which Corollary 4 holds, (max ratio)^n; None when no ρ does (a zero count)."""
    ratio = amplification(view)
    return None if ratio is None else ratio ** view.n


def is_safe(view: Viewset, rho: Fraction) -> bool:
    """Condition (10): every ratio positive and at most ρ^(1/n), decided as ratio^n <= ρ exactly."""
    rho0 = smallest_rho(view)
    return rho0 is not None and rho0 <= rho


def is_realistic(view: Viewset) -> bool:
    """Σ_t N^i_{t,c} = P_c for every attribute and class (Statement 9a): the views of one table.
    Fails on a source with NULL attribute values, whose rows count in P_c only."""
    return all(sum(row[c] for row in attr) == view.P[c] for attr in view.N for c in range(view.classes))


def k_sind(view: Viewset) -> Number:
    """Lemma 10: SafetyTransform provides k-SIND with k = min_c P_c."""
    return min(view.P)
