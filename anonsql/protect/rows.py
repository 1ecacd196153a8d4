"""Where the algorithms read the microdata's rows: all in memory (`ArrayRows`, the thesis's
examples and the benchmarks), or fetched from the database when needed (`FetchedRows`, the job).

The algorithms need count tables (built from `weighted`: the data as tuples with counts, as it
is now), the confidential rows, and, for the side effects of DECP / INCP / the -G
methods, the rows of one class holding one value (`select`, in row order: the thesis's "next
tuple"), as their ids and a snapshot of their codes. A row is addressed by an id: its index in
memory, its key in the database. `row(r)` is live: changes made through `set` show in it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

#: (column, code) pairs a selected row must hold now.
Where = Mapping[int, int]


class Rows(Protocol):
    """The microdata's rows as codes (ν = -1)."""

    n: int  # rows in the table

    def row(self, r: Any) -> np.ndarray: ...

    def set(self, r: Any, col: int, code: int) -> None: ...

    def select(self, where: Where) -> tuple[list[Any], np.ndarray]: ...

    def weighted(self) -> tuple[np.ndarray, np.ndarray]: ...


class ArrayRows:
    """Every row in memory: the matrix X itself (changed in place), ids 0 .. n-1."""

    def __init__(self, X: np.ndarray) -> None:
        self.X, self.n = X, len(X)

    def row(self, r: Any) -> np.ndarray:
        return self.X[r]  # a view: live

    def set(self, r: Any, col: int, code: int) -> None:
        self.X[r, col] = code

    def select(self, where: Where) -> tuple[list[Any], np.ndarray]:
        mask = np.ones(self.n, dtype=bool)
        for c, v in where.items():
            mask &= self.X[:, c] == v
        return np.flatnonzero(mask).tolist(), self.X[mask]

    def weighted(self) -> tuple[np.ndarray, np.ndarray]:
        """The data as (tuples, counts): each row once."""
        return self.X, np.ones(self.n, dtype=np.int64)


class FetchedRows:
    """Rows read from the database when needed, never all of them: `fetch(where)` gives the
    (ids, codes) of the rows whose ORIGINAL codes match, sorted by id; `counts()` the original
    distinct tuples with their counts (read once). Rows changed in this run (and the confidential rows,
    `seed`) are held here and overlay what is fetched."""

    def __init__(self, n: int, fetch: Callable[[Where], tuple[Sequence[Any], np.ndarray]],
                 counts: Callable[[], tuple[np.ndarray, np.ndarray]], seed: Mapping[Any, np.ndarray]) -> None:
        self.n, self._fetch, self._counts = n, fetch, counts
        self._tuples: tuple[np.ndarray, np.ndarray] | None = None
        self.live: dict[Any, np.ndarray] = {r: np.array(c, dtype=np.int64) for r, c in seed.items()}
        self.original: dict[Any, np.ndarray] = {r: c.copy() for r, c in self.live.items()}
        self._seen: dict[Any, np.ndarray] = {}  # the rows of the latest select

    def row(self, r: Any) -> np.ndarray:
        """A confidential or changed row, or one of the latest select (the same array: live)."""
        return self.live[r] if r in self.live else self._seen[r]

    def set(self, r: Any, col: int, code: int) -> None:
        if r not in self.live:
            self.live[r] = self._seen[r]
            self.original[r] = self._seen[r].copy()
        self.live[r][col] = code

    def select(self, where: Where) -> tuple[list[Any], np.ndarray]:
        ids, codes = self._fetch(where)
        self._seen = {r: np.array(c, dtype=np.int64) for r, c in zip(ids, codes)}
        out = {r: self.live.get(r, c) for r, c in self._seen.items()}
        out.update({r: c for r, c in self.live.items() if r not in out})  # changed here to match
        found = sorted((r for r, c in out.items() if all(c[j] == v for j, v in where.items())),
                       key=lambda r: r)
        return found, np.array([out[r] for r in found], dtype=np.int64).reshape(len(found), codes.shape[1])

    def weighted(self) -> tuple[np.ndarray, np.ndarray]:
        """The data as (tuples, counts): the original distinct tuples, then each changed row's
        original tuple counted -1 and its tuple now +1 (so a tuple may repeat)."""
        if self._tuples is None:
            self._tuples = self._counts()
        codes, w = self._tuples
        changed = [r for r in self.live if not np.array_equal(self.live[r], self.original[r])]
        if not changed:
            return codes, w
        ones = np.ones(len(changed), dtype=np.int64)
        return (np.vstack([codes, *(self.original[r] for r in changed), *(self.live[r] for r in changed)]),
                np.concatenate([w, -ones, ones]))

    def changed(self) -> list[tuple[Any, int, int, int]]:
        """(id, column, original code, code now) of every cell this run changed, by id."""
        out = []
        for r in sorted(self.live, key=lambda r: r):
            for j in np.flatnonzero(self.live[r] != self.original[r]).tolist():
                out.append((r, j, int(self.original[r][j]), int(self.live[r][j])))
        return out
