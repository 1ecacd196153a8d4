"""Exact linear disclosure: which suppressed cells are linear combinations of the published ones?

The system's rows are the published totals restricted to the unknown (suppressed) finest
cells, 0/1 coefficients; a target is a cell's unknown members. Gauss-Jordan elimination runs
in exact integer arithmetic modulo the prime PRIME (vectorized), carrying for every row the
combination of original rows it came from, so a target in the span comes with its
certificate: the totals whose combination gives it back. Modular rank can only be lower
than the rational one for a prime dividing a minor: then a cell is reported recomputable
too often (one more secondary), never too rarely for a target whose certificate has
coefficients free of that prime; the LP audit that follows catches anything else.

>>> rows = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 1]])  # a 2x2 rectangle's margins
>>> certificates(rows, np.eye(4, dtype=np.int64)[:1])  # the four suppressed corners protect each other
[None]
>>> [None if c is None else c.tolist() for c in certificates(rows[:3], np.array([[1, 0, 1, 0], [0, 0, 0, 1]]))]
[[1], None]
"""

from __future__ import annotations

import numpy as np

#: The largest prime below 2**24: products of two residues summed over thousands of terms fit int64.
PRIME = 16_777_213


def certificates(rows: np.ndarray, targets: np.ndarray) -> list[np.ndarray | None]:
    """For each target (a row over the same unknowns), the rows whose combination equals it
    (empty for an all-zero target), or None when it is not in their span."""
    m, n = rows.shape
    work = np.concatenate([rows.astype(np.int64) % PRIME, np.eye(m, dtype=np.int64)], axis=1)
    pivots: list[int] = []
    r = 0
    for c in range(n):
        if r == m:
            break
        nonzero = np.flatnonzero(work[r:, c])
        if not len(nonzero):
            continue
        i = r + int(nonzero[0])
        if i != r:
            work[[r, i]] = work[[i, r]]
        work[r] = work[r] * pow(int(work[r, c]), PRIME - 2, PRIME) % PRIME
        col = work[:, c].copy()
        col[r] = 0
        hit = np.flatnonzero(col)
        if len(hit):
            work[hit] = (work[hit] - col[hit, None] * work[r]) % PRIME
        pivots.append(c)
        r += 1
    basis = work[:r]
    out: list[np.ndarray | None] = []
    for t in targets.astype(np.int64) % PRIME:
        coef = t[pivots]
        rest = (t - coef @ basis[:, :n]) % PRIME if r else t
        if rest.any():
            out.append(None)
            continue
        comb = coef @ basis[:, n:] % PRIME if r else np.zeros(m, np.int64)
        out.append(np.flatnonzero(comb))
    return out
