"""Maximal (Zhang et al. 2017, Algorithm 1): maximal frequent itemsets of the containment sets.

By Lemma 3 every itemset with support >= k over the rows' containment sets (the transactions)
is a feasible feature set (AC(Π_X(D)) >= k). Note the converse does not hold: Π_{x3x4x5}
of Table 1 is 2-anonymous, hence 2-AC, yet x3x4x5 is contained in no row, so F_k is the set
the paper enumerates, not every feasible set. The miner is a depth-first Eclat over weighted
row sets (the distinct row vectors with their counts), maximality checked at the leaves, or
pyfim's C Eclat when installed (see maximal_itemsets and benchmarks/features_maximal.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .containment import BinaryCounts, feature_hamdist


def _walk(data: BinaryCounts, k: int, maximal_only: bool) -> Iterator[tuple[int, ...]]:
    """Depth-first over the frequent itemsets (support >= k), items in column order so each set
    appears once. With `maximal_only`, yield only sets no item at all extends (the tail test
    prunes, then one product counts every item over the set's rows)."""
    masks, counts = data.masks, data.counts
    supports = counts @ masks.astype(np.int64)
    items = [int(x) for x in np.flatnonzero(supports >= k)]
    frequent = masks[:, items]

    def walk(prefix: tuple[int, ...], rows: np.ndarray, tail: list[int]) -> Iterator[tuple[int, ...]]:
        extensions = []
        for x in tail:
            sub = rows & masks[:, x]
            if counts[sub].sum() >= k:
                extensions.append((x, sub))
        if not maximal_only:
            yield prefix
        elif not extensions and prefix:
            ext = counts[rows] @ frequent[rows]  # support of prefix ∪ {y} for every frequent y
            ext[[items.index(x) for x in prefix]] = 0
            if ext.max(initial=0) < k:
                yield prefix
        for i, (x, sub) in enumerate(extensions):
            yield from walk(prefix + (x,), sub, [y for y, _ in extensions[i + 1:]])

    yield from walk((), np.ones(len(counts), dtype=bool), items)


def frequent_itemsets(data: BinaryCounts, k: int) -> list[tuple[int, ...]]:
    """F_k: every non-empty itemset contained in at least k rows (Lemma 3)."""
    return [s for s in _walk(data, k, maximal_only=False) if s]


MINERS = ("auto", "pyfim", "anonsql")


def maximal_itemsets(data: BinaryCounts, k: int, miner: str = "auto") -> list[tuple[int, ...]]:
    """M_k: the frequent itemsets with no frequent proper superset, largest first.

    miner 'pyfim' is Borgelt's C Eclat (the optional extra anonsql[features]), 'anonsql' the
    numpy walk above; 'auto' takes pyfim when installed. Both return the same sets
    (benchmarks/features_maximal.py checks it); pyfim is ~500x faster on wide sparse data.
    """
    if miner not in MINERS:
        raise ValueError(f"unknown miner {miner!r}; choose from {MINERS}")
    found = None
    if miner != "anonsql":
        try:
            import fim
        except ImportError:
            if miner == "pyfim":
                raise
        else:
            tracts: dict[tuple[int, ...], int] = {}
            for row, n in zip(data.masks, data.counts.tolist()):
                key = tuple(np.flatnonzero(row).tolist())
                tracts[key] = tracts.get(key, 0) + n
            found = [tuple(sorted(s)) for s, _ in fim.eclat(tracts, target="m", supp=-k, report="a")]
    if found is None:
        found = list(_walk(data, k, maximal_only=True))
    return sorted(found, key=lambda s: (-len(s), s))


def maximal_select(data: BinaryCounts, k: int, r: int = 20, *, values: np.ndarray | None = None,
                   miner: str = "auto") -> tuple[list[int], list[tuple[int, ...]]]:
    """Algorithm 1: among the r largest sets of M_k (the paper uses r = 20), the best by HamDist.

    Returns (the chosen set, the candidates considered). Ties keep the first candidate, which
    is the lexicographically smallest among sets of the same size. `values`: per-feature
    HamDist when already computed (HamDist is modular, Theorem 1).
    """
    if r < 1:
        raise ValueError("r must be >= 1")
    candidates = maximal_itemsets(data, k, miner)[:r]
    if not candidates:
        return [], []
    values = feature_hamdist(data) if values is None else np.asarray(values, dtype=np.float64)
    scores = [float(values[list(c)].sum()) for c in candidates]
    best = candidates[int(np.argmax(scores))]
    return list(best), candidates
