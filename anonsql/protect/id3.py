"""ID3 decision trees (Quinlan) as the thesis's HID3 uses them (Def. 2.3, Section 3.2).

Training set for cell (i, j): D - d_i, rows with a known target. Each split has one
branch per domain value (an empty branch is a leaf with its parent's majority). The thesis
does not say how ν is treated, so, like its ID3Hide (Figure 3.5), a ν value follows the
most common child; in the gain, rows with ν in the split attribute are left out and the gain
is scaled by the known fraction (C4.5's rule). Splitting stops when no attribute has a
positive gain. Majority ties go to the lowest class code.

The tree learns from the distinct (target, attributes) tuples of the training rows weighted
by their counts (`Tuples` keeps them up to date as cells change), and grows lazily: a node
chooses its split (all attribute gains from one
bincount) only when a walk asks for its children, so HID3 builds the confidential tuple's
path and the subtrees it inspects, not the whole tree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .naive_bayes import NU

_EPS = 1e-12


@dataclass
class _Data:
    """The distinct training tuples: column 0 the class code, then the attributes' codes; `w` counts."""

    codes: np.ndarray
    w: np.ndarray
    attrs: list[int]  # the X column of each attribute column (codes[:, 1 + n])
    domains: list[int]  # domain of each X column
    n_classes: int


class Node:
    """A tree node: a fixed one (label, population, split, children), or one grown lazily from
    a subset of the distinct training tuples, whose split is chosen on first use."""

    def __init__(self, label: int, population: int, attr: int | None = None,
                 children: dict[int, Node] | None = None) -> None:
        self.label, self.population = label, population  # majority class; training rows (ν rows included)
        self._attr, self._children = attr, children if children is not None or attr is not None else {}
        self._source: tuple[_Data, np.ndarray, list[int], np.ndarray] | None = None
        self._ranked: list[int] | None = None

    @classmethod
    def grown(cls, data: _Data, idx: np.ndarray, free: list[int], default: int) -> Node:
        """A lazy node over the distinct tuples `idx` that may split on the attribute columns `free`."""
        counts = np.bincount(data.codes[idx, 0], weights=data.w[idx], minlength=data.n_classes)
        return cls._made(data, free, default, counts[None, :], lambda _: idx)[0]

    @classmethod
    def _made(cls, data: _Data, free: list[int], default: int, counts: np.ndarray,
              part: Callable[[int], np.ndarray]) -> list[Node]:
        """Nodes from their weighted class counts, one per row of `counts`; a node that can
        split keeps its distinct tuples (part(n) for the n-th) for its growth."""
        populations = np.rint(counts.sum(axis=1)).astype(np.int64).tolist()
        labels = np.argmax(counts, axis=1).tolist()  # first maximum: lowest code
        mixed = ((counts > 0).sum(axis=1) > 1).tolist()
        out = []
        for n, (population, label) in enumerate(zip(populations, labels)):
            node = cls(label if population else default, population)
            if population and mixed[n] and free:
                node._children, node._source = None, (data, part(n), free, counts[n])
            out.append(node)
        return out

    def _grow(self) -> None:
        if self._source is None:
            return
        d, idx, free, counts = self._source
        self._source, self._children = None, {}
        gains, joint = _gains(d, idx, free)
        top = float(gains.max())
        best = next(n for n, g in enumerate(gains) if g > top - _EPS)
        if gains[best] <= _EPS:
            return
        col = free[best]
        a = d.attrs[col]
        # each branch's class counts from the gains' (value, class) table: the weights are
        # whole numbers, so these float sums are exact in any order
        table = joint[best, :d.domains[a]]
        common = int(np.argmax(table.sum(axis=1)))  # the largest branch, ties to the lowest code
        table[common] += counts - table.sum(axis=0)  # rows with ν in the split go to it
        values = d.codes[idx, 1 + col]
        self._attr = a
        kids = Node._made(d, [c for c in free if c != col], self.label, table,
                          lambda v: idx[(values == v) | (values == NU)] if v == common else idx[values == v])
        self._children = dict(enumerate(kids))

    @property
    def attr(self) -> int | None:
        """The split column (an X column index); None for a leaf."""
        self._grow()
        return self._attr

    @property
    def children(self) -> dict[int, Node]:
        """Value code -> child (empty for a leaf)."""
        self._grow()
        assert self._children is not None
        return self._children

    @property
    def is_leaf(self) -> bool:
        return self.attr is None

    @property
    def split(self) -> int:
        """The split column of an inner node."""
        if self.attr is None:
            raise ValueError("a leaf has no split column")
        return self.attr

    def most_common_child(self, prefer: int | None = None) -> int:
        """The child value with the highest population; `prefer` wins a tie it is part of
        (Example 5, Step 3), otherwise the lowest value code."""
        ranked = self.ranked()  # the most populated first, ties by value code
        best = self.children[ranked[0]].population
        if prefer is not None and prefer != ranked[0] and prefer in self.children \
                and self.children[prefer].population == best:
            return prefer
        return ranked[0]

    def ranked(self) -> list[int]:
        """The child values, the most populated first (ties by value code); computed once."""
        if self._ranked is None:
            self._ranked = sorted(self.children, key=lambda v: (-self.children[v].population, v))
        return self._ranked

    def route(self, value: int) -> Node:
        return self.children[self.most_common_child() if value == NU else value]

    def predict(self, row: np.ndarray) -> int:
        """v_π of the tree rooted here for tuple `row` (one value code per column)."""
        node = self
        while not node.is_leaf:
            node = node.route(int(row[node.split]))
        return node.label

    def describe(self) -> dict:
        """The tree as nested dicts (column index, value code -> subtree; a leaf is its label)."""
        if self.is_leaf:
            return {"label": self.label}
        return {"attr": self.attr, "children": {v: c.describe() for v, c in self.children.items()}}


def _entropy(counts: np.ndarray) -> np.ndarray:
    """Entropy in bits along the last axis of a count table."""
    totals = counts.sum(axis=-1, keepdims=True)
    p = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
    return -(p * np.log2(p, out=np.zeros_like(p), where=p > 0)).sum(axis=-1)


def _gains(d: _Data, idx: np.ndarray, free: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The gain of every free attribute at a node, from one weighted bincount of
    (attribute, value, class), and that count table; ν values are left out and the gain
    scaled by the known share."""
    nc = d.n_classes
    width = max(d.domains[d.attrs[c]] for c in free)
    labels, w = d.codes[idx, 0], d.w[idx]
    values = d.codes[idx][:, [1 + c for c in free]]
    known = values != NU
    keys = (np.arange(len(free)) * width + np.where(known, values, 0)) * nc + labels[:, None]
    joint = np.bincount(keys[known], weights=np.broadcast_to(w[:, None], keys.shape)[known],
                        minlength=len(free) * width * nc).reshape(len(free), width, nc)
    sizes = joint.sum(axis=2)
    n_known = sizes.sum(axis=1)
    total = float(w.sum())
    safe = np.where(n_known > 0, n_known, 1)
    rest = (sizes / safe[:, None] * _entropy(joint)).sum(axis=1)
    gains = n_known / total * (_entropy(joint.sum(axis=1)) - rest)
    return np.where(n_known > 0, gains, 0.0), joint


def build(X: np.ndarray, rows: np.ndarray, target: int, attrs: Sequence[int], domains: Sequence[int],
          default: int = 0) -> Node:
    """The (lazy) ID3 tree over training rows `rows` of the coded matrix X."""
    cols = [target, *attrs]
    codes, w = distinct(X[np.asarray(rows)][:, cols], [domains[c] for c in cols])
    data = _Data(codes, w.astype(np.float64), list(attrs), list(domains), domains[target])
    return Node.grown(data, np.arange(len(codes)), list(range(len(attrs))), default)


def distinct(sub: np.ndarray, domains: Sequence[int], w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a coded matrix (ν = -1) and their counts (the sums of the rows'
    weights `w`, when given; rows summing to 0 are left out), in lexicographic order, through
    one packed int64 key when the domains allow (else numpy's row-wise unique)."""
    if len(sub) == 0:
        return sub.reshape(0, sub.shape[1]), np.zeros(0, dtype=np.int64)
    radix = [int(d) + 1 for d in domains]
    if float(np.prod(np.array(radix, dtype=np.float64))) < 2.0 ** 62:
        key = np.zeros(len(sub), dtype=np.int64)
        for j, r in enumerate(radix):
            key = key * r + (sub[:, j].astype(np.int64) + 1)
        _, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
        uniq = sub[first]
    else:
        uniq, inverse, counts = np.unique(sub, axis=0, return_inverse=True, return_counts=True)
    if w is None:
        return uniq, counts
    total = np.zeros(len(uniq), dtype=np.int64)
    np.add.at(total, inverse.reshape(-1), np.asarray(w, dtype=np.int64))
    return uniq[total != 0], total[total != 0]


class Tuples:
    """The distinct (target, attributes) tuples of the whole microdata and their counts, kept up
    to date one changed row at a time (`account`), so that a tree for any cell is grown from
    the distinct tuples (memory and work follow them, not the rows). Built from the data as
    tuples of all columns (`codes`) with counts `w` (a tuple may repeat)."""

    def __init__(self, codes: np.ndarray, w: np.ndarray, target: int, attrs: Sequence[int],
                 domains: Sequence[int]) -> None:
        self.cols = [target, *attrs]
        self.reads = set(self.cols)
        self.attrs, self.domains, self.n_classes = list(attrs), list(domains), domains[target]
        codes, w = distinct(codes[:, self.cols], [domains[c] for c in self.cols], w)
        self.size = len(codes)
        self.codes = np.zeros((max(2 * self.size, 16), len(self.cols)), dtype=np.int64)
        self.codes[:self.size] = codes
        self.w = np.zeros(len(self.codes), dtype=np.int64)
        self.w[:self.size] = w
        # a tuple's key: one packed int when the domains allow (fast to build), else the tuple
        radix = [int(domains[c]) + 1 for c in self.cols]
        self._radix = radix if float(np.prod(np.array(radix, dtype=np.float64))) < 2.0 ** 62 else None
        if self._radix is None:
            self._at: dict = {tuple(k): i for i, k in enumerate(codes.tolist())}
        else:
            packed = np.zeros(len(codes), dtype=np.int64)
            for j, r in enumerate(self._radix):
                packed = packed * r + (codes[:, j] + 1)
            self._at = {k: i for i, k in enumerate(packed.tolist())}

    def _index(self, row: Sequence[int]) -> int:
        """The slot of `row`'s tuple (a new, empty one when never seen)."""
        values = [int(row[c]) for c in self.cols]
        key: int | tuple = tuple(values)
        if self._radix is not None:
            key = 0
            for v, r in zip(values, self._radix):
                key = key * r + v + 1
        i = self._at.get(key)
        if i is None:
            if self.size == len(self.codes):
                self.codes = np.concatenate([self.codes, np.zeros_like(self.codes)])
                self.w = np.concatenate([self.w, np.zeros_like(self.w)])
            i = self._at[key] = self.size
            self.codes[i] = values
            self.size += 1
        return i

    def account(self, row: Sequence[int], sign: int) -> None:
        """Add (sign 1) or remove (sign -1) one row."""
        i = self._index(row)  # may grow the arrays: index after
        self.w[i] += sign

    def tree(self, own: Sequence[int], classes: Sequence[int] | None = None) -> Node:
        """The lazy tree trained on every row but `own` (D - d_i) whose target is known (or, given
        `classes`, one of those)."""
        i = self._index(own)
        w = self.w[:self.size].copy()
        w[i] -= 1
        codes = self.codes[:self.size]
        keep = (w > 0) & (codes[:, 0] != NU)
        if classes is not None:
            keep &= np.isin(codes[:, 0], np.asarray(classes, dtype=np.int64))
        data = _Data(codes[keep], w[keep].astype(np.float64), self.attrs, self.domains, self.n_classes)
        return Node.grown(data, np.arange(len(data.codes)), list(range(len(self.attrs))), 0)


def train(X: np.ndarray, row: int, target: int, attrs: Sequence[int], domains: Sequence[int]) -> Node:
    """ς_id3 for cell (row, target): trained on D - d_row, rows with a known target."""
    mask = X[:, target] != NU
    mask[row] = False
    return build(X, np.flatnonzero(mask), target, list(attrs), domains)
