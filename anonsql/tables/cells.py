"""The cells of one or more linked aggregate tables and how they add up (no SQL here).

Every published cell is a sum of *finest* cells, the cross-classification by all dimensions
of all linked tables (an inner cell of a table spanning every dimension is one finest cell).
A cell is coded by one integer per dimension, its value's position in the dimension's
domain, or TOTAL (-1) where the cell sums that dimension (a margin, or a dimension its
table does not have). The membership relation cell -> finest cells is the table's
additivity: each margin equals the sum of its members.

>>> grid = layout([2, 2], [(0, 1), (0,), (1,), ()])
>>> grid.codes.tolist()
[[0, 0], [0, 1], [1, 0], [1, 1], [0, -1], [1, -1], [-1, 0], [-1, 1], [-1, -1]]
>>> grid.members().toarray()[4].tolist()  # row 0's total holds finest cells (0,0), (0,1)
[1, 1, 0, 0]
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

TOTAL = -1


@dataclass
class Grid:
    """All cells of the grouping sets over dimensions of `sizes` values each, empty ones included."""

    sizes: list[int]
    codes: np.ndarray  # (C, D) int64, TOTAL where the cell sums the dimension
    value: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (C,) the cell's count or sum
    freq: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # (C,) rows or contributors
    top: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (C, t) largest contributions
    _lookup: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        n = len(self.codes)
        if len(self.value) != n:
            self.value = np.zeros(n)
            self.freq = np.zeros(n, np.int64)
            self.top = np.zeros((n, 0))

    @property
    def grouping_id(self) -> np.ndarray:
        """SQL's GROUPING(d_1, ..., d_D): bit D-1-j set when the cell sums dimension j."""
        bits = (self.codes == TOTAL).astype(np.int64)
        return bits @ (1 << np.arange(len(self.sizes) - 1, -1, -1, dtype=np.int64)) if len(self.sizes) else bits

    @property
    def summed(self) -> np.ndarray:
        """How many dimensions each cell sums (0: a finest cell)."""
        return (self.codes == TOTAL).sum(axis=1)

    def index(self, codes: np.ndarray) -> np.ndarray:
        """The cell numbers of rows of codes (-1 where no such cell)."""
        if self._lookup is None:
            keys = _keys(self.codes, self.sizes)
            order = np.argsort(keys, kind="stable")
            self._lookup = (keys[order], order)
        sorted_keys, order = self._lookup
        keys = _keys(np.asarray(codes, np.int64).reshape(-1, len(self.sizes)), self.sizes)
        pos = np.clip(np.searchsorted(sorted_keys, keys), 0, max(len(sorted_keys) - 1, 0))
        found = (sorted_keys[pos] == keys) if len(sorted_keys) else np.zeros(len(keys), bool)
        return np.where(found, order[pos] if len(order) else -1, -1).astype(np.int64)

    def members(self) -> sp.csr_matrix:
        """The 0/1 matrix cell x finest cell: cell = sum of its members (finest cells numbered in
        mixed radix, the last dimension fastest)."""
        strides = np.cumprod([1, *self.sizes[::-1]])[:-1][::-1].astype(np.int64)
        finest = int(np.prod(self.sizes, dtype=np.int64))
        rows, cols = [], []
        pattern = self.codes == TOTAL
        for free in np.unique(pattern, axis=0):
            which = np.flatnonzero((pattern == free).all(axis=1))
            base = np.where(free, 0, self.codes[which]) @ strides
            spans = [np.arange(s) * st if f else np.zeros(1, np.int64)
                     for s, st, f in zip(self.sizes, strides, free)]
            offsets = np.zeros(1, np.int64)
            for span in spans:
                offsets = (offsets[:, None] + span[None, :]).ravel()
            rows.append(np.repeat(which, len(offsets)))
            cols.append((base[:, None] + offsets[None, :]).ravel())
        r, c = np.concatenate(rows), np.concatenate(cols)
        return sp.csr_matrix((np.ones(len(r), np.int8), (r, c)), shape=(len(self.codes), finest))

    def finest_cell(self) -> np.ndarray:
        """For each finest cell, the cell that is it (all dimensions fixed), or -1."""
        strides = np.cumprod([1, *self.sizes[::-1]])[:-1][::-1].astype(np.int64)
        out = np.full(int(np.prod(self.sizes, dtype=np.int64)), -1, np.int64)
        inner = np.flatnonzero(self.summed == 0)
        out[self.codes[inner] @ strides] = inner
        return out


def layout(sizes: Sequence[int], sets: Sequence[Sequence[int]]) -> Grid:
    """Every cell of the grouping sets (each a tuple of the fixed dimensions), set by set, in
    lexicographic order of codes; a cell two sets share (linked tables) appears once."""
    blocks, seen = [], set()
    for fixed in sets:
        key = tuple(sorted(fixed))
        if key in seen:
            continue
        seen.add(key)
        axes = [range(s) if j in key else [TOTAL] for j, s in enumerate(sizes)]
        blocks.append(np.array(list(itertools.product(*axes)), dtype=np.int64).reshape(-1, len(sizes)))
    return Grid(list(sizes), np.concatenate(blocks) if blocks else np.zeros((0, len(sizes)), np.int64))


def grouping_sets(dims: int, tables: Sequence[Sequence[int]], margins: str) -> list[tuple[int, ...]]:
    """The grouping sets of linked tables (each a list of dimension numbers): `cube` every subset,
    `rollup` every prefix, `none` the inner cells only.

    >>> grouping_sets(3, [[0, 2], [1, 2]], "cube")
    [(0, 2), (0,), (2,), (), (1, 2), (1,)]
    """
    out: list[tuple[int, ...]] = []
    for dims_of in tables:
        if margins == "cube":
            subsets = [c for r in range(len(dims_of), -1, -1) for c in itertools.combinations(dims_of, r)]
        elif margins == "rollup":
            subsets = [tuple(dims_of[:r]) for r in range(len(dims_of), -1, -1)]
        else:
            subsets = [tuple(dims_of)]
        out += [s for s in subsets if s not in out]
    return out


def _keys(codes: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    radix = np.cumprod([1, *[s + 1 for s in sizes[::-1]]])[:-1][::-1].astype(np.int64)
    return (codes + 1) @ radix
