"""Frequency counts with partially specified values (Hintoglu 2011, Section 4.1.1, after Zhang et al.).

Counts observed on taxonomy nodes (a leaf: a fully specified value; an inner node: a value
already generalized) become an estimated count for every node in two passes: upward, a node
aggregates its own count and its children's aggregates; downward, a node's estimate is split
among its children in proportion to their aggregates. Example 6: Low = {1: 6, 2: 4} plus 5
rows stated as Low gives Low 15 and 1: 9, 2: 6. The proportions use the aggregates (counts
of the children's subtrees, generalized rows included), which is what reproduces Table 4.3
(palpitation 1,6/6 at Step 28).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from .taxonomy import Taxonomy


def estimate(tax: Taxonomy, observed: Sequence[int | Fraction] | np.ndarray, root: int = 0) -> list[Fraction]:
    """Estimated count of every node of the subtree of `root` (other nodes stay 0), from the
    `observed` count per node. A node whose children have no count at all splits its estimate
    evenly among them (a gap of the thesis: there is no distribution to follow)."""
    est = [Fraction(0)] * len(tax)
    agg = [Fraction(0)] * len(tax)
    order = tax.subtree(root)
    for n in reversed(order):  # children come after their parent in pre-order
        own = observed[n] if isinstance(observed[n], Fraction) else Fraction(int(observed[n]))  # no numpy ints
        agg[n] = own + sum((agg[c] for c in tax.children[n]), Fraction(0))
    est[root] = agg[root]
    for n in order:
        kids = tax.children[n]
        if not kids:
            continue
        total = sum((agg[c] for c in kids), Fraction(0))
        for c in kids:
            est[c] = est[n] * agg[c] / total if total else est[n] / len(kids)
    return est


def estimate_one(tax: Taxonomy, observed: np.ndarray, node: int, root: int = 0) -> Fraction:
    """`estimate(tax, observed, root)[node]` for integer counts, computed along the one path from
    `root` down to `node` with integer products (the same rational, without a Fraction per node)."""
    agg = _members(tax) @ np.asarray(observed, dtype=np.int64)
    path = [node]
    while path[-1] != root:
        path.append(tax.parents[path[-1]])
        if path[-1] < 0:
            return Fraction(0)  # `node` lies outside the subtree of `root`
    num, den = int(agg[root]), 1
    for parent, child in zip(path[:0:-1], path[-2::-1]):
        kids = tax.children[parent]
        total = int(sum(agg[k] for k in kids))
        if total:
            num, den = num * int(agg[child]), den * total
        else:
            den *= len(kids)
    return Fraction(num, den)


_MEMBERS: dict[int, tuple[Taxonomy, np.ndarray]] = {}


def _members(tax: Taxonomy) -> np.ndarray:
    """M[n, m] = 1 when m lies in the subtree of n (so M @ counts gives every aggregate)."""
    hit = _MEMBERS.get(id(tax))
    if hit is None or hit[0] is not tax:
        m = np.zeros((len(tax), len(tax)), dtype=np.int64)
        for n in range(len(tax)):
            m[n, tax.subtree(n)] = 1
        hit = _MEMBERS[id(tax)] = (tax, m)
    return hit[1]
