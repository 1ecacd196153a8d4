"""k-anonymity by containment (Zhang et al. 2017, Sec. 3) and the utility functions of Sec. 4.

Pure numpy, no SQL. The input is the statistic SQL returns: the distinct containment sets
of the rows (a boolean matrix, one row per distinct row vector, one column per feature) with
their row counts per class, n_1(g) and n_2(g) (classes C_1 and C_2 of Sec. 3).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np


class BinaryCounts:
    """Distinct row vectors of a binary table with their counts per class (C_1, C_2).

    Held by column, as sparse binary tables are: for each feature x the distinct rows having
    it (`rows[starts[x]:starts[x + 1]]`, ascending), so every count over the ones costs their
    number, not rows x features. `masks` is the dense (m, d) view, built on first use.
    """

    def __init__(self, masks: np.ndarray, n1: np.ndarray, n2: np.ndarray):
        """From a dense (m, d) boolean matrix: CS(e) of each distinct row vector."""
        n1 = np.asarray(n1, dtype=np.int64)
        dense = np.asarray(masks, dtype=bool).reshape(len(n1), -1)
        features, rows = np.nonzero(dense.T)  # by feature, then row
        self._set(rows, np.bincount(features, minlength=dense.shape[1]), n1, n2)
        self._dense: np.ndarray | None = dense

    @classmethod
    def from_ones(cls, rows: np.ndarray, features: np.ndarray, d: int, n1: np.ndarray, n2: np.ndarray
                  ) -> BinaryCounts:
        """From the coordinates of the ones: distinct row `rows[i]` has feature `features[i]`."""
        data = cls.__new__(cls)
        features, rows = np.asarray(features, dtype=np.int64), np.asarray(rows, dtype=np.int64)
        order = np.argsort(features * len(n1) + rows)  # by feature, then row
        data._set(rows[order], np.bincount(features, minlength=d), n1, n2)
        data._dense = None
        return data

    def _set(self, rows: np.ndarray, per_feature: np.ndarray, n1: np.ndarray, n2: np.ndarray) -> None:
        self.n1 = np.asarray(n1, dtype=np.int64)  # (m,) rows of class C_1 with this vector
        self.n2 = np.asarray(n2, dtype=np.int64)  # (m,) rows of class C_2 with this vector
        self.rows = np.asarray(rows, dtype=np.int64)  # the ones: distinct rows, grouped by feature
        self.starts = np.concatenate([[0], np.cumsum(per_feature)]).astype(np.int64)  # (d + 1,)
        self.owner = np.repeat(np.arange(len(per_feature), dtype=np.int64), per_feature)  # feature of each one

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[int]], labels: Sequence[object], positive: object) -> BinaryCounts:
        """Group a small row-by-row table (e.g. a paper's toy example); `positive` names C_1."""
        matrix = np.asarray(rows, dtype=bool)
        first = np.asarray([label == positive for label in labels])
        uniq, inverse = np.unique(matrix, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        n1 = np.bincount(inverse, weights=first, minlength=len(uniq)).astype(np.int64)
        n2 = np.bincount(inverse, weights=~first, minlength=len(uniq)).astype(np.int64)
        return cls(uniq, n1, n2)

    @property
    def masks(self) -> np.ndarray:
        """(m, d) bool: CS(e) of each distinct row vector (dense; `columns` for a few features)."""
        if self._dense is None:
            self._dense = self.columns(range(self.features))
        return self._dense

    def column(self, x: int) -> np.ndarray:
        """The distinct rows having feature x."""
        return self.rows[self.starts[x]:self.starts[x + 1]]

    def columns(self, selected: Iterable[int]) -> np.ndarray:
        """The dense (m, |S|) boolean matrix of the features S, in the order given."""
        selected = list(selected)
        if self._dense is not None:
            return self._dense[:, selected]
        out = np.zeros((len(self.n1), len(selected)), dtype=bool)
        for j, x in enumerate(selected):
            out[self.column(x), j] = True
        return out

    @property
    def counts(self) -> np.ndarray:
        return self.n1 + self.n2

    @property
    def features(self) -> int:
        return len(self.starts) - 1

    @property
    def class_sizes(self) -> tuple[int, int]:
        """|E_1| and |E_2|."""
        return int(self.n1.sum()), int(self.n2.sum())


def containment_supports(masks: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per distinct vector a: the rows whose containment set contains CS(a), i.e. AC(a) (Def. 4).

    `a` counts itself: AC(e) is the largest k with k-1 *other* entities containing CS(e).
    """
    masks = np.asarray(masks, dtype=bool)
    if masks.shape[1] == 0:
        return np.full(len(counts), int(np.sum(counts)), dtype=np.int64)
    inter = masks.astype(np.int32) @ masks.T.astype(np.int32)  # |CS(a) ∩ CS(b)|
    contains = inter == masks.sum(axis=1)[:, None]  # CS(b) ⊇ CS(a)
    return contains.astype(np.int64) @ np.asarray(counts, dtype=np.int64)


def ac_dataset(data: BinaryCounts, selected: Sequence[int] | None = None) -> int:
    """AC(Π_S(D)): the smallest AC(e) over the rows (Def. 6); S = all features when None."""
    masks = data.masks if selected is None else data.columns(selected)
    return int(containment_supports(masks, data.counts).min())


def equal_groups(data: BinaryCounts, selected: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Rows of each class per group of equal projections Π_S: (n_1(g), n_2(g))."""
    if not len(selected):
        return data.n1.sum(keepdims=True), data.n2.sum(keepdims=True)
    _, inverse = np.unique(data.columns(selected), axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    return (np.bincount(inverse, weights=data.n1).astype(np.int64),
            np.bincount(inverse, weights=data.n2).astype(np.int64))


def kanon_dataset(data: BinaryCounts, selected: Sequence[int]) -> int:
    """The k for which Π_S(D) is k-anonymous (Def. 1): the smallest group of equal projections."""
    n1, n2 = equal_groups(data, selected)
    return int((n1 + n2).min())


def feature_hamdist(data: BinaryCounts) -> np.ndarray:
    """HamDist({x}) for every feature x in closed form from per-class column sums (Def. 8).

    A pair (a ∈ E_1, b ∈ E_2) differs on x when exactly one of them has it:
    s_1(x)·(|E_2| − s_2(x)) + (|E_1| − s_1(x))·s_2(x) pairs out of |E_1||E_2|.
    """
    d = data.features
    s1 = np.bincount(data.owner, weights=data.n1[data.rows], minlength=d)  # exact: integers below 2^53
    s2 = np.bincount(data.owner, weights=data.n2[data.rows], minlength=d)
    return hamdist_from_sums(s1, s2, *data.class_sizes)


def hamdist_from_sums(s1: np.ndarray, s2: np.ndarray, e1: int, e2: int) -> np.ndarray:
    """Per-feature HamDist from the column sums s_1, s_2 of the two classes and |E_1|, |E_2|."""
    s1 = np.asarray(s1, dtype=np.float64)
    s2 = np.asarray(s2, dtype=np.float64)
    return (s1 * (e2 - s2) + (e1 - s1) * s2) / (e1 * e2)


def hamdist(data: BinaryCounts, selected: Sequence[int]) -> float:
    """HamDist(S) (eq. 3); modular (Theorem 1), so the sum of the per-feature values."""
    return float(feature_hamdist(data)[list(selected)].sum())


def distcnt_from_groups(n1: np.ndarray, n2: np.ndarray) -> float:
    """DistCnt (eq. 4) = 1 − Σ_g n_1(g)·n_2(g) / (|E_1||E_2|) over groups of equal projections."""
    return 1.0 - float(np.sum(n1 * n2)) / (float(np.sum(n1)) * float(np.sum(n2)))


def distcnt(data: BinaryCounts, selected: Sequence[int]) -> float:
    """DistCnt(S): the share of (E_1, E_2) pairs that S distinguishes (Def. 9)."""
    return distcnt_from_groups(*equal_groups(data, selected))


def cm_penalty(data: BinaryCounts, selected: Sequence[int]) -> int:
    """CM of Π_S(D) (Def. 2) with no row suppressed: the minority-class rows of every group."""
    n1, n2 = equal_groups(data, selected)
    return int(np.minimum(n1, n2).sum())
