"""Naive Bayes with the thesis's conventions (Hintoglu 2011, Def. 2.2 and Examples 2-4).

Exact fractions, unsmoothed relative frequencies. The classifier predicting cell (i, j) is
trained on D - d_i restricted to rows whose target value is known (the INCP example: a row
with a hidden target leaves the training set). A hidden predictor value (ν, code -1) of the
tuple is skipped in the product, while a hidden value in a training row only lowers the
count, the class total stays the denominator (Theorem 3.1 and Example 2, Step 6).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

NU = -1  # ν: the unknown value, NULL in SQL


def class_scores(X: np.ndarray, row: int, target: int, attrs: Sequence[int], n_classes: int) -> list[Fraction]:
    """p(v|d_row) up to the common factor 1/p(d_row), for every class code v (eq. 2.4)."""
    train = X[:, target] >= 0
    train[row] = False
    labels = X[train, target]
    totals = np.bincount(labels, minlength=n_classes)
    n = int(totals.sum())
    scores = [Fraction(int(t), n) if n else Fraction(0) for t in totals]
    for a in attrs:
        value = X[row, a]
        if value == NU:
            continue
        hits = np.bincount(labels[X[train, a] == value], minlength=n_classes)
        scores = [s * Fraction(int(h), int(t)) if t else Fraction(0) for s, h, t in zip(scores, hits, totals)]
    return scores


def is_predicted(scores: Sequence[Fraction], value: int) -> bool:
    """Assertion (3.8): `value` is strictly more probable than every other class."""
    return all(scores[value] > s for v, s in enumerate(scores) if v != value)


def most_probable(scores: Sequence[Fraction]) -> list[int]:
    """The most probable classes: one value, or several on a tie (which eq. 3.8 counts as
    no prediction)."""
    best = max(scores)
    return [v for v, s in enumerate(scores) if s == best]


def top_k(scores: Sequence[Fraction], k: int | None) -> list[int]:
    """Ω_k (Def. 3.1): the k most probable classes (all of them for k = None), ties broken
    by value order."""
    return sorted(range(len(scores)), key=lambda v: (-scores[v], v))[:k]


def next_best_candidates(scores: Sequence[Fraction], value: int, k: int | None = None) -> list[int]:
    """Values allowed as the random next best guess (Def. 3.2): not the confidential value,
    0 < p(v|d) < p(value|d), and, for a bounded k, in Ω_k. The default k = None is the
    thesis's draw among ALL admissible values (Section 3.4: drawing only from the top k
    lets an adversary who knows the method guess the hidden value back).

    >>> next_best_candidates([5, 4, 3, 2], 0)
    [1, 2, 3]
    >>> next_best_candidates([5, 4, 3, 2], 0, 2)
    [1]
    """
    return [v for v in top_k(scores, k) if v != value and 0 < scores[v] < scores[value]]


class Counts:
    """The naive Bayes statistics of one target over the whole microdata, kept up to date one
    hidden cell at a time: N(v) (rows of class v) and N(v, x_a) (rows of class v holding x in
    predictor a), as Python ints. `scores` leaves the cell's own row out (D - d_i) and gives
    exactly `class_scores`."""

    def __init__(self, codes: np.ndarray, w: np.ndarray, target: int, attrs: Sequence[int],
                 domains: Sequence[int]) -> None:
        """From the data as tuples of all columns (`codes`) with counts `w` (a tuple may repeat)."""
        self.target, self.attrs, self.n_classes = target, list(attrs), domains[target]
        labels = codes[:, target]
        known = labels != NU
        self.totals: list[int] = tally(labels[known], w[known], self.n_classes).tolist()
        self.pairs: dict[int, list[list[int]]] = {}
        for a in self.attrs:
            both = known & (codes[:, a] != NU)
            joint = tally(codes[both, a] * self.n_classes + labels[both], w[both], domains[a] * self.n_classes)
            self.pairs[a] = joint.reshape(domains[a], self.n_classes).tolist()
        self.reads = {target, *self.attrs}

    def account(self, row: Sequence[int], sign: int) -> None:
        """Add (sign 1) or remove (sign -1) one row's contributions."""
        v = row[self.target]
        if v == NU:
            return
        self.totals[v] += sign
        for a in self.attrs:
            if row[a] != NU:
                self.pairs[a][row[a]][v] += sign

    def change(self, row: Sequence[int], col: int, code: int) -> None:
        """Cell `col` of `row` (as it is before) becomes `code`: a predictor's cell moves one
        count, O(1); a target's cell moves the whole row."""
        v = row[self.target]
        if col == self.target:
            self.account(row, -1)
            self.account([code if j == col else x for j, x in enumerate(row)], 1)
        elif v != NU:
            hits = self.pairs[col]
            if row[col] != NU:
                hits[row[col]][v] -= 1
            if code != NU:
                hits[code][v] += 1

    def above(self, row: Sequence[int], v: int, w: int) -> bool:
        """p(v|d) > p(w|d) (trained without `row`), by integer cross-multiplication."""
        (nv, dv), (nw, dw) = self.fraction(row, v), self.fraction(row, w)
        return nv * dw > nw * dv

    def fraction(self, row: Sequence[int], u: int, but: int | None = None) -> tuple[int, int]:
        """p(u|d) up to the common factor 1/(n p(d)) as (numerator, denominator), trained
        without `row`: N(u) Π_a N(u, x_a) / N(u)^m over the m predictors known in d; predictor
        `but`'s factor left out of the numerator."""
        own = row[self.target]
        t = self.totals[u] - (u == own)
        if not t:
            return 0, 1
        num, m = t, 0
        for a in self.attrs:
            if row[a] != NU:
                m += 1
                if a != but:
                    num *= self.pairs[a][row[a]][u] - (u == own)
        return num, t ** m

    def drops_above(self, row: Sequence[int], v: int, w: int, a: int) -> int:
        """How many times N(v, x_a) can drop by one, each drop made while p(v|d) > p(w|d)
        still holds (DECP's hides of predictor a, Figure 3.2, in one step). p(v|d) is linear
        in N(v, x_a) = h: K (h - j) > R holds for j < h - R // K."""
        nv, dv = self.fraction(row, v, but=a)
        nw, dw = self.fraction(row, w)
        k = nv * dw
        if not k:
            return 0
        h = self.pairs[a][row[a]][v] - (v == row[self.target])
        return max(0, h - (nw * dv) // k)

    def scores(self, row: Sequence[int]) -> list[Fraction]:
        """p(v|d) up to 1/p(d) for every class v (eq. 2.4), trained without `row` itself:
        `fraction` over n, the rows of D - d with a known class."""
        n = sum(self.totals) - (row[self.target] != NU)
        if not n:
            return [Fraction(0)] * self.n_classes
        return [Fraction(num, n * den) for num, den in (self.fraction(row, v) for v in range(self.n_classes))]


def tally(keys: np.ndarray, w: np.ndarray, size: int) -> np.ndarray:
    """Σ w per key in 0 .. size-1, as exact integers (w may be negative: FetchedRows.weighted).
    np.add.at in int64: exact at any size, and (numpy 2.4) faster than a float64 bincount with its
    2^53 check at every size protect tallies: 1.7x at 100 keys, 2x at 10^5."""
    out = np.zeros(size, dtype=np.int64)
    np.add.at(out, keys, w.astype(np.int64, copy=False))
    return out
