"""Information loss and uncertainty of a suppression (Hintoglu 2011, Section 2.4), from counts.

Probabilities are counts over the m tuples (log base 2). A hidden value ν is not in V_α, so in
D' the hidden mass simply leaves the distribution (Def. 2.7 sums over V_α only). Where the
thesis's ratios divide by zero the result is infinite (a value or a dependency that the
suppression erased completely); 0/0 counts as no change (ratio 1). Sums are math.fsum's, exact
and so independent of the order in which a database returns the counts (DuckDB and Spark differ).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

#: First-order counts per attribute (None = ν) and joint counts of non-ν pairs (i, j), i < j.
Distributions = tuple[list[dict[Any, int]], dict[tuple[int, int], dict[tuple[Any, Any], int]]]


def kl_distance(before: Mapping[Hashable, int], after: Mapping[Hashable, int], m: int) -> float:
    """D(p_α || p'_α), eq. 2.8, over the non-ν values of α."""
    terms = []
    for v, n in before.items():
        if n:
            q = after.get(v, 0)
            if not q:
                return math.inf
            terms.append(n / m * math.log2(n / q))
    return math.fsum(terms)


def mutual_information(joint: Mapping[tuple, int], left: Mapping[Hashable, int], right: Mapping[Hashable, int],
                       m: int) -> float:
    """I(α_k; α_l), eq. 2.10: joint and marginal counts of non-ν values over m tuples."""
    return math.fsum(n / m * math.log2(n * m / (left[a] * right[b])) for (a, b), n in joint.items() if n)


def average_change_in_mi(before: Sequence[float], after: Sequence[float], n_attributes: int) -> float:
    """ACMI, eq. 2.11: 2/(n(n-1)) Σ over attribute pairs i < j of I_D / I_D' (the printed
    inner sum starts at j = i, but the normalisation counts the n(n-1)/2 pairs)."""
    ratios = [1.0 if a == b == 0 else (math.inf if b == 0 else a / b) for a, b in zip(before, after)]
    return 2 * sum(ratios) / (n_attributes * (n_attributes - 1))


def conditional_entropy(hidden_by_value: Mapping[Hashable, int], nulls_after: int, m: int) -> float:
    """H(X_α^D | X_α^D'), eq. 2.12, for a suppression: a kept value v' = v has p(v|v') = 1,
    so only v' = ν contributes; `hidden_by_value` counts the cells of value v turned ν."""
    return -math.fsum(n / m * math.log2(n / nulls_after) for n in hidden_by_value.values() if n)


def information_loss(before: Distributions, after: Distributions,
                     changed: Mapping[tuple[str, Any], Mapping[Any, int]], cols: Sequence[str], m: int,
                     direct: int, removed: int) -> dict[str, float | None]:
    """Section 2.4 between a table and its protected version: DD (eq. 2.7), SKLD (2.9), ACMI
    (2.11, over the attribute pairs counted: those the run reads), SCE (2.13). `changed` maps
    (column, new value L, None for ν) to the counts of the original values changed into L. A
    removed row's cells count as ν, as in the NRD deletion they stand for; a label L contributes
    -Σ_v p(v, L) log p(v|L), its unchanged cells included.
    """
    (b1, b2), (a1, _) = before, after
    known = [{v: n for v, n in d.items() if v is not None} for d in b1]
    known_after = [{v: n for v, n in d.items() if v is not None} for d in a1]
    skld = math.fsum(kl_distance(b, a, m) for b, a in zip(known, known_after))
    acmi = None
    paired = {j for q in b2 for j in q}  # the attributes whose pairs were counted
    if len(paired) > 1:
        mi_b = [mutual_information(b2[q], known[q[0]], known[q[1]], m) for q in b2]
        mi_a = [mutual_information(after[1][q], known_after[q[0]], known_after[q[1]], m) for q in b2]
        acmi = average_change_in_mi(mi_b, mi_a, len(paired))
    entropies = []
    for (name, new), joint in changed.items():
        j = list(cols).index(name)
        if new is None:
            entropies.append(conditional_entropy(joint, a1[j].get(None, 0) + removed, m))
            continue
        kept = a1[j].get(new, 0) - sum(joint.values())
        entropies.append(conditional_entropy({**joint, ("kept", new): kept}, a1[j].get(new, 0), m))
    sce = math.fsum(entropies)
    return {"direct_distance": direct, "sum_kl_distance": skld, "avg_change_mutual_information": acmi,
            "sum_conditional_entropy": sce}
