"""ID3 decision trees (Quinlan) as the thesis's HID3 uses them (Def. 2.3, Section 3.2).

Training set for cell (i, j): D - d_i, rows with a known target. Each split has one
branch per domain value (an empty branch is a leaf with its parent's majority). The thesis
does not say how ν is treated, so, like its ID3Hide (Figure 3.5), a ν value follows the
most common child; in the gain, rows with ν in the split attribute are left out and the gain
is scaled by the known fraction (C4.5's rule). Splitting stops when no attribute has a
positive gain. Majority ties go to the lowest class code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .naive_bayes import NU

_EPS = 1e-12


@dataclass
class Node:
    label: int  # majority class of the node's training rows
    population: int  # training rows reaching the node (ν rows included)
    attr: int | None = None  # split column; None for a leaf
    children: dict[int, Node] = field(default_factory=dict)  # value code -> child

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
        best = max(c.population for c in self.children.values())
        tied = [v for v, c in sorted(self.children.items()) if c.population == best]
        return prefer if prefer in tied else tied[0]

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
    """Entropy in bits of each row of a count table (a 1-d table is one row)."""
    counts = np.atleast_2d(counts).astype(float)
    totals = counts.sum(axis=1, keepdims=True)
    p = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
    return -(p * np.log2(p, out=np.zeros_like(p), where=p > 0)).sum(axis=1)


def _majority(labels: np.ndarray, n_classes: int, default: int) -> int:
    if not len(labels):
        return default
    return int(np.argmax(np.bincount(labels, minlength=n_classes)))  # first maximum: lowest code


def _gain(values: np.ndarray, labels: np.ndarray, n_classes: int, n_values: int) -> float:
    known = values != NU
    if not known.any():
        return 0.0
    joint = np.bincount(values[known] * n_classes + labels[known],
                        minlength=n_values * n_classes).reshape(n_values, n_classes)
    sizes = joint.sum(axis=1)
    rest = float((sizes / sizes.sum() * _entropy(joint)).sum())
    return float(known.mean() * (_entropy(joint.sum(axis=0))[0] - rest))


def build(X: np.ndarray, rows: np.ndarray, target: int, attrs: Sequence[int], domains: Sequence[int],
          default: int = 0) -> Node:
    """The ID3 tree over training rows `rows` of the coded matrix X."""
    labels = X[rows, target]
    n_classes = domains[target]
    node = Node(_majority(labels, n_classes, default), len(rows))
    if len(rows) == 0 or len(np.unique(labels)) <= 1 or not attrs:
        return node
    gains = [_gain(X[rows, a], labels, n_classes, domains[a]) for a in attrs]
    best = max(range(len(attrs)), key=lambda i: (gains[i] > max(gains) - _EPS, -i))
    if gains[best] <= _EPS:
        return node
    a = attrs[best]
    values = X[rows, a]
    sizes = [(int((values == v).sum()), -v) for v in range(domains[a])]
    common = -max(sizes)[1]
    rest = [x for x in attrs if x != a]
    node.attr = a
    for v in range(domains[a]):
        part = rows[(values == v) | ((values == NU) & (v == common))]
        node.children[v] = build(X, part, target, rest, domains, node.label)
    return node


def train(X: np.ndarray, row: int, target: int, attrs: Sequence[int], domains: Sequence[int]) -> Node:
    """ς_id3 for cell (row, target): trained on D - d_row, rows with a known target."""
    mask = X[:, target] != NU
    mask[row] = False
    return build(X, np.flatnonzero(mask), target, list(attrs), domains)
