"""The cells of one or more linked aggregate tables and how they add up (no SQL here).

Every published cell is a sum of *finest* cells, the cross-classification by all dimensions
of all linked tables (an inner cell of a table spanning every dimension is one finest cell).
A cell is coded by one integer per dimension, its value's position in the dimension's
domain, or TOTAL (-1) where the cell sums that dimension (a margin, or a dimension its
table does not have). A dimension with a taxonomy (`groups`) also has its inner nodes: code
size + i is the i-th inner node, the sum of its leaves (TOTAL is then the root). The
membership relation cell -> finest cells is the table's additivity: each margin, and each
taxonomy node, equals the sum of its members.

>>> grid = layout([2, 2], [(0, 1), (0,), (1,), ()])
>>> grid.codes.tolist()
[[0, 0], [0, 1], [1, 0], [1, 1], [0, -1], [1, -1], [-1, 0], [-1, 1], [-1, -1]]
>>> grid.members().toarray()[4].tolist()  # row 0's total holds finest cells (0,0), (0,1)
[1, 1, 0, 0]
>>> tree = layout([3], [(0,)], [[np.array([0, 1])]])  # leaves 0, 1, 2; node 3 = {0, 1}; the root
>>> tree.codes.ravel().tolist(), tree.members().toarray()[3].tolist(), tree.summed.tolist(), tree.grouping_id.tolist()
([0, 1, 2, 3, -1], [1, 1, 0], [0, 0, 0, 1, 1], [0, 0, 0, 0, 0])
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .sparse import sp

TOTAL = -1


@dataclass
class Grid:
    """All cells of the grouping sets over dimensions of `sizes` values each, empty ones included."""

    sizes: list[int]
    codes: np.ndarray  # (C, D) int64, TOTAL where the cell sums the dimension
    value: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (C,) the cell's count or sum
    freq: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # (C,) rows or contributors
    top: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (C, t) largest contributions
    #: per dimension: None (plain), or the leaves of each inner taxonomy node (codes size, size + 1, ...)
    groups: list[list[np.ndarray] | None] = field(default_factory=list)
    level: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # (C,) taxonomy levels above leaves
    _lookup: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        n = len(self.codes)
        if len(self.value) != n:
            self.value = np.zeros(n)
            self.freq = np.zeros(n, np.int64)
            self.top = np.zeros((n, 0))
        if not self.groups:
            self.groups = [None] * len(self.sizes)
        if len(self.level) != n:
            self.level = np.zeros(n, np.int64)

    @property
    def codes_per_dim(self) -> list[int]:
        """How many non-TOTAL codes each dimension has (its leaves, then its inner nodes)."""
        return [s + len(g or []) for s, g in zip(self.sizes, self.groups)]

    @property
    def grouping_id(self) -> np.ndarray:
        """SQL's GROUPING(d_1, ..., d_D): bit D-1-j set when the cell sums dimension j (never for a
        taxonomy's dimension: its root is a node like the others, shown by its label)."""
        plain = np.array([g is None for g in self.groups], bool)
        bits = ((self.codes == TOTAL) & plain).astype(np.int64)
        return bits @ (1 << np.arange(len(self.sizes) - 1, -1, -1, dtype=np.int64)) if len(self.sizes) else bits

    @property
    def summed(self) -> np.ndarray:
        """How many dimensions each cell sums (a margin or a taxonomy node; 0: a finest cell)."""
        return ((self.codes == TOTAL) | (self.codes >= np.array(self.sizes, np.int64))).sum(axis=1)

    def index(self, codes: np.ndarray) -> np.ndarray:
        """The cell numbers of rows of codes (-1 where no such cell)."""
        if self._lookup is None:
            keys = _keys(self.codes, self.codes_per_dim)
            order = np.argsort(keys, kind="stable")
            self._lookup = (keys[order], order)
        sorted_keys, order = self._lookup
        keys = _keys(np.asarray(codes, np.int64).reshape(-1, len(self.sizes)), self.codes_per_dim)
        pos = np.clip(np.searchsorted(sorted_keys, keys), 0, max(len(sorted_keys) - 1, 0))
        found = (sorted_keys[pos] == keys) if len(sorted_keys) else np.zeros(len(keys), bool)
        return np.where(found, order[pos] if len(order) else -1, -1).astype(np.int64)

    def members(self) -> sp.csr_matrix:
        """The 0/1 matrix cell x finest cell: cell = sum of its members (finest cells numbered in
        mixed radix, the last dimension fastest): the row-wise Kronecker product of each
        dimension's code -> leaves relation."""
        out = sp.csr_matrix(np.ones((len(self.codes), 1), np.int8))
        for j, size in enumerate(self.sizes):
            leaves = [np.array([k]) for k in range(size)] + list(self.groups[j] or []) + [np.arange(size)]
            spans = sp.csr_matrix((np.ones(sum(map(len, leaves)), np.int8), np.concatenate(leaves),
                                   np.cumsum([0, *map(len, leaves)])), shape=(len(leaves), size))
            out = _rowwise_kron(out, spans[np.where(self.codes[:, j] == TOTAL, len(leaves) - 1, self.codes[:, j])])
        return out

    def finest_cell(self) -> np.ndarray:
        """For each finest cell, the cell that is it (all dimensions fixed), or -1."""
        strides = np.cumprod([1, *self.sizes[::-1]])[:-1][::-1].astype(np.int64)
        out = np.full(int(np.prod(self.sizes, dtype=np.int64)), -1, np.int64)
        inner = np.flatnonzero(self.summed == 0)  # every code a leaf
        out[self.codes[inner] @ strides] = inner
        return out


def layout(sizes: Sequence[int], sets: Sequence[Sequence[int]],
           groups: Sequence[list[np.ndarray] | None] = ()) -> Grid:
    """Every cell of the grouping sets (each a tuple of the fixed dimensions), set by set, in
    lexicographic order of codes; a cell two sets share (linked tables) appears once. A fixed
    dimension with a taxonomy (`groups`, see Grid) takes its leaves, its inner nodes and its root."""
    groups = list(groups) or [None] * len(sizes)
    blocks, seen = [], set()
    for fixed in sets:
        key = tuple(sorted(fixed))
        if key in seen:
            continue
        seen.add(key)
        axes = [([*range(s + len(g)), TOTAL] if g is not None else range(s)) if j in key else [TOTAL]
                for j, (s, g) in enumerate(zip(sizes, groups))]
        blocks.append(np.array(list(itertools.product(*axes)), dtype=np.int64).reshape(-1, len(sizes)))
    codes = np.concatenate(blocks) if blocks else np.zeros((0, len(sizes)), np.int64)
    _, first = np.unique(codes, axis=0, return_index=True)
    return Grid(list(sizes), codes[np.sort(first)], groups=groups)


def grouping_sets(dims: int, tables: Sequence[Sequence[int]], margins: str,
                  trees: Sequence[int] = ()) -> list[tuple[int, ...]]:
    """The grouping sets of linked tables (each a list of dimension numbers): `cube` every subset,
    `rollup` every prefix, `none` the inner cells only. A dimension with a taxonomy (`trees`) stays
    in every set: its totals are the taxonomy's nodes, the root included.

    >>> grouping_sets(3, [[0, 2], [1, 2]], "cube")
    [(0, 2), (0,), (2,), (), (1, 2), (1,)]
    >>> grouping_sets(2, [[0, 1]], "cube", trees=[0])
    [(0, 1), (0,)]
    """
    out: list[tuple[int, ...]] = []
    for dims_of in tables:
        if margins == "cube":
            subsets = [c for r in range(len(dims_of), -1, -1) for c in itertools.combinations(dims_of, r)]
        elif margins == "rollup":
            subsets = [tuple(dims_of[:r]) for r in range(len(dims_of), -1, -1)]
        else:
            subsets = [tuple(dims_of)]
        subsets = [tuple(j for j in dims_of if j in s or j in trees) for s in subsets]
        out += [s for s in dict.fromkeys(subsets) if s not in out]
    return out


def _rowwise_kron(a: sp.csr_matrix, b: sp.csr_matrix) -> sp.csr_matrix:
    """Row i of the result is kron(a[i], b[i]) (both with the same number of rows)."""
    na, nb = np.diff(a.indptr), np.diff(b.indptr)
    counts = na * nb
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    row = np.repeat(np.arange(len(counts)), counts)
    k = np.arange(indptr[-1]) - indptr[row]
    left, right = a.indices[a.indptr[row] + k // nb[row]], b.indices[b.indptr[row] + k % nb[row]]
    cols = left.astype(np.int64) * b.shape[1] + right
    return sp.csr_matrix((np.ones(len(cols), np.int8), cols, indptr), shape=(a.shape[0], a.shape[1] * b.shape[1]))


def _keys(codes: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    radix = np.cumprod([1, *[s + 1 for s in sizes[::-1]]])[:-1][::-1].astype(np.int64)
    return (codes + 1) @ radix
