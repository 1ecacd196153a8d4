"""Information loss and uncertainty of a suppression (Hintoglu 2011, Section 2.4), from counts.

Probabilities are counts over the m tuples (log base 2). A hidden value ν is not in V_α, so in
D' the hidden mass simply leaves the distribution (Def. 2.7 sums over V_α only). Where the
thesis's ratios divide by zero the result is infinite (a value or a dependency that the
suppression erased completely); 0/0 counts as no change (ratio 1).
"""

from __future__ import annotations

import math
from typing import Hashable, Mapping, Sequence


def kl_distance(before: Mapping[Hashable, int], after: Mapping[Hashable, int], m: int) -> float:
    """D(p_α || p'_α), eq. 2.8, over the non-ν values of α."""
    total = 0.0
    for v, n in before.items():
        if n:
            q = after.get(v, 0)
            if not q:
                return math.inf
            total += n / m * math.log2(n / q)
    return total


def mutual_information(joint: Mapping[tuple, int], left: Mapping[Hashable, int], right: Mapping[Hashable, int],
                       m: int) -> float:
    """I(α_k; α_l), eq. 2.10: joint and marginal counts of non-ν values over m tuples."""
    return sum(n / m * math.log2(n * m / (left[a] * right[b])) for (a, b), n in joint.items() if n)


def average_change_in_mi(before: Sequence[float], after: Sequence[float], n_attributes: int) -> float:
    """ACMI, eq. 2.11: 2/(n(n-1)) Σ over attribute pairs i < j of I_D / I_D' (the printed
    inner sum starts at j = i, but the normalisation counts the n(n-1)/2 pairs)."""
    ratios = [1.0 if a == b == 0 else (math.inf if b == 0 else a / b) for a, b in zip(before, after)]
    return 2 * sum(ratios) / (n_attributes * (n_attributes - 1))


def conditional_entropy(hidden_by_value: Mapping[Hashable, int], nulls_after: int, m: int) -> float:
    """H(X_α^D | X_α^D'), eq. 2.12, for a suppression: a kept value v' = v has p(v|v') = 1,
    so only v' = ν contributes; `hidden_by_value` counts the cells of value v turned ν."""
    return -sum(n / m * math.log2(n / nulls_after) for n in hidden_by_value.values() if n)
