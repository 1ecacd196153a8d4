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

from ..taxonomy.model import Taxonomy


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


def path_estimate(tax: Taxonomy, observed: Sequence[int], agg: Sequence[int], node: int, root: int = 0,
                  less: int = -1) -> tuple[int, int]:
    """`estimate(tax, observed, root)[node]` as an integer fraction (numerator, denominator),
    computed along the one path from `root` down to `node` from `agg`, every node's aggregate
    (its subtree's observed total, `aggregates`), so that a node's children hold agg - observed
    of it; `less` >= 0 counts one row less at that node (so at each of its ancestors too).
    (0, 1) when `node` lies outside the subtree of `root`. Python ints in and out (the -G
    methods' scores call it for every factor: no conversions). Equal factors cancel along the
    way: with rows on leaves only the estimate is (count, 1), so it keeps its pair while the
    count stays (the -G scores keep a product while their factors' pairs stay), and the
    numbers stay small."""
    path = tax.descent[node]
    if root:
        if root not in tax.lineage[node]:
            return 0, 1
        path = path[len(tax.lineage[root]) - 1:]
    if less >= 0 and less != root:  # the counts with that row taken out
        observed, agg = list(observed), list(agg)
        observed[less] -= 1
        for n in tax.lineage[less]:
            agg[n] -= 1
    # the estimate so far is base * last / den, last the count of the node reached: where the
    # children's total equals it (no row held at the node itself), the step last * agg / total
    # is just agg (exact: an equal nonzero factor above and below); 0 is (0, 1)
    base, last, den = 1, agg[root] - (less == root), 1  # a row at root leaves its children's total as it is
    for parent, child in path:
        total = agg[parent] - observed[parent]  # the children's total
        if not total:
            den *= len(tax.children[parent])
        elif total == last:
            last = agg[child]
        else:
            base, last, den = base * last, agg[child], den * total
    num = base * last
    return (num, den) if num else (0, 1)


def aggregates(tax: Taxonomy, observed: np.ndarray) -> np.ndarray:
    """Every node's aggregate (the observed total of its subtree) along the last axis of
    `observed` (one entry per node): nodes are numbered in pre-order, so a subtree is the run of
    nodes from its root to `tax.ends[root]` and its total a difference of running totals (exact
    integers, a few array operations whatever the tree)."""
    obs = np.asarray(observed, dtype=np.int64)
    run = np.zeros((*obs.shape[:-1], len(tax) + 1), dtype=np.int64)
    np.cumsum(obs[..., :len(tax)], axis=-1, out=run[..., 1:])
    return run[..., list(tax.ends)] - run[..., :-1]
