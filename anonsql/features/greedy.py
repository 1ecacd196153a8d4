"""Greedy feature selection under a privacy constraint (Zhang et al. 2017, Sec. 4.2).

Algorithm 2 (HamDist, modular: features sorted once) and Algorithm 3 (DistCnt, submodular:
the best marginal gain each round), plus the CM-greedy baseline of Sec. 5.2 (Definition 2 as
the greedy criterion). The privacy constraint is AC(Π_S(D)) >= k (k-AC, the paper's) or
k-anonymity of Π_S(D) (the paper's "k-anonymity HamDist/DistCnt" baselines).

The state is a partition of the rows into groups of equal projections Π_S with the
containment order between groups, updated when a feature is added, so that testing a
candidate costs one pass over the groups instead of a fresh AC computation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from .containment import BinaryCounts, feature_hamdist

Privacy = Literal["ac", "kanon"]
Mode = Literal["stop", "skip"]
PRIVACY = ("ac", "kanon")
MODES = ("stop", "skip")


@dataclass
class Selection:
    """The features chosen (in the order added) and how the loop ended."""

    selected: list[int]
    gains: list[float]  # the criterion's value or marginal gain of each selected feature
    stopped_by: int | None = None  # the infeasible feature that ended the loop (mode 'stop')
    skipped: list[int] = field(default_factory=list)  # infeasible features passed over ('skip')


class _Groups:
    """Rows grouped by equal projection on S, with sizes per class and containment order."""

    def __init__(self, data: BinaryCounts):
        self.data = data
        self.gid = np.zeros(len(data.n1), dtype=np.int64)
        self.n1 = data.n1.sum(keepdims=True)
        self.n2 = data.n2.sum(keepdims=True)
        self.contains = np.ones((1, 1), dtype=bool)  # [a, b]: Π_S of group b ⊇ that of group a
        self.ones1, self.ones2 = data.n1[data.rows], data.n2[data.rows]  # class counts of every one

    @property
    def size(self) -> np.ndarray:
        return self.n1 + self.n2

    def split_counts(self, x: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows of each class per group that have feature x (the '1' side of the split; the
        '0' side is the group's size minus it): a count over x's ones only."""
        rows = self.data.column(x)
        gid, g = self.gid[rows], len(self.n1)
        return (np.bincount(gid, weights=self.data.n1[rows], minlength=g).astype(np.int64),
                np.bincount(gid, weights=self.data.n2[rows], minlength=g).astype(np.int64))

    def all_split_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """split_counts for every feature at once: two (groups, d) arrays from one count over
        all the ones (sparse tables: the ones are few, rows x features never enters)."""
        data, d, g = self.data, self.data.features, len(self.n1)
        cell = self.gid[data.rows] * d + data.owner  # (group, feature) of every one
        return (np.bincount(cell, weights=self.ones1, minlength=g * d).astype(np.int64).reshape(g, d),
                np.bincount(cell, weights=self.ones2, minlength=g * d).astype(np.int64).reshape(g, d))

    def feasible(self, x: int, k: int, privacy: Privacy, ones: np.ndarray | None = None) -> bool:
        """Does Π_{S ∪ {x}}(D) still satisfy the constraint (given that Π_S(D) does)?

        k-AC: a row without x keeps its containment group (Def. 5); a row of group a with x
        is contained exactly by the rows with x in groups b ⊇ a, so its support is
        Σ_b contains[a, b]·ones[b].
        """
        if ones is None:
            ones1, ones2 = self.split_counts(x)
            ones = ones1 + ones2
        if privacy == "kanon":
            zeros = self.size - ones
            return bool(np.all((ones == 0) | (ones >= k)) and np.all((zeros == 0) | (zeros >= k)))
        has = np.asarray(ones > 0)
        if not has.any():
            return True
        support = self.contains[has] @ ones
        return bool(support.min() >= k)

    def add(self, x: int) -> None:
        """S := S ∪ {x}: split every group by x and update the containment order."""
        col = np.zeros(len(self.gid), dtype=np.int64)
        col[self.data.column(x)] = 1
        key = self.gid * 2 + col
        uniq, self.gid = np.unique(key, return_inverse=True)
        self.gid = self.gid.reshape(-1)
        parent, bit = uniq // 2, (uniq % 2).astype(bool)
        g = len(uniq)
        self.n1 = np.bincount(self.gid, weights=self.data.n1, minlength=g).astype(np.int64)
        self.n2 = np.bincount(self.gid, weights=self.data.n2, minlength=g).astype(np.int64)
        self.contains = self.contains[np.ix_(parent, parent)] & (~bit[:, None] | bit[None, :])


def greedy_hamdist(data: BinaryCounts, k: int, *, privacy: Privacy = "ac", mode: Mode = "stop",
                   values: np.ndarray | None = None) -> Selection:
    """Algorithm 2: features in non-increasing HamDist, added while the constraint holds.

    mode 'stop' is the paper's (line 7: break at the first infeasible feature); 'skip' passes
    over it and tries the next ones (by Lemma 2 a skipped feature never becomes feasible).
    Ties keep the column order (a stable sort). `values`: per-feature HamDist when already
    computed (the job takes them from SQL column sums); else from `data`.
    """
    _check(k, privacy, mode)
    values = feature_hamdist(data) if values is None else np.asarray(values, dtype=np.float64)
    order = np.argsort(-values, kind="stable")
    groups = _Groups(data)
    result = Selection([], [])
    for x in order.tolist():
        if groups.feasible(x, k, privacy):
            groups.add(x)
            result.selected.append(x)
            result.gains.append(float(values[x]))
        elif mode == "stop":
            result.stopped_by = x
            break
        else:
            result.skipped.append(x)
    return result


def greedy_distcnt(data: BinaryCounts, k: int, *, privacy: Privacy = "ac", mode: Mode = "stop",
                   criterion: Literal["distcnt", "cm"] = "distcnt") -> Selection:
    """Algorithm 3: add the feature of largest marginal DistCnt gain while the constraint holds.

    As printed, Algorithm 3 repeats `until AC(Π_T(D)) >= k` and returns S, which would stop
    at the first *feasible* T and return the set before it. Sec. 4.2.2 says the stop test is
    "identical to Algorithm 2" (stop when adding the feature breaks k-AC), so the loop here
    runs until AC(Π_T(D)) < k and returns the last feasible S. Line 7's strict test keeps
    the first feature (column order) among equal gains, and a round with no positive gain
    leaves u_m undefined: the loop ends there. mode 'skip' instead drops an infeasible best
    feature (for good, by Lemma 2) and takes the next best.

    criterion 'cm' is the CM-greedy baseline (Sec. 5.2): the gain is the drop of the CM
    penalty (Definition 2, no row suppressed) over the groups of equal projections.
    """
    _check(k, privacy, mode)
    if criterion not in ("distcnt", "cm"):
        raise ValueError(f"unknown criterion {criterion!r}")
    e1, e2 = data.class_sizes
    groups = _Groups(data)
    result = Selection([], [])
    available = np.ones(data.features, dtype=bool)
    while available.any():
        ones1, ones2 = groups.all_split_counts()
        zeros1, zeros2 = groups.n1[:, None] - ones1, groups.n2[:, None] - ones2
        if criterion == "distcnt":  # pairs still undistinguished before minus after
            before = float(np.sum(groups.n1 * groups.n2))
            gain = (before - (ones1 * ones2 + zeros1 * zeros2).sum(axis=0)) / (e1 * e2)
        else:
            before = float(np.minimum(groups.n1, groups.n2).sum())
            gain = before - (np.minimum(ones1, ones2) + np.minimum(zeros1, zeros2)).sum(axis=0)
        gain = np.where(available, gain, -np.inf)
        chosen = None
        for x in np.argsort(-gain, kind="stable").tolist():
            if not gain[x] > 0:
                break
            if groups.feasible(x, k, privacy, ones1[:, x] + ones2[:, x]):
                chosen = x
                break
            available[x] = False
            if mode == "stop":
                result.stopped_by = x
                break
            result.skipped.append(x)
        if chosen is None:
            break
        groups.add(chosen)
        available[chosen] = False
        result.selected.append(chosen)
        result.gains.append(float(gain[chosen]))
    return result


def _check(k: int, privacy: str, mode: str) -> None:
    if privacy not in PRIVACY:
        raise ValueError(f"unknown privacy model {privacy!r}; choose from {PRIVACY}")
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose from {MODES}")
    if k < 1:
        raise ValueError("k must be >= 1")
