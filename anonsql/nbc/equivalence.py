"""NBC-equivalence (Definition 2) decided exactly for every tuple of a given set.

For classes c < c' the classifier's relation is f(τ,c) > f(τ,c') (else c' wins, ties
included, Section 6.1). With X_{τ,c} = P_c^{1-n} ∏_i N^i_{t_i,c} (eq. 2) its sign is the
sign of d(τ) = Σ_i ln(N^i_{t_i,c}/N^i_{t_i,c'}) + (1-n) ln(P_c/P_c'). d is summed in
float64 over all tuples at once; wherever |d| is within a generous rounding bound the
tuple is decided again with exact integer/Fraction products, so no rounding can flip it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations

import numpy as np

from .views import Number, Viewset

#: Relative rounding bound for a float sum of log ratios (float64 gives ~1e-16 per term).
_TOL = 1e-10
_CHUNK = 1 << 20


def _log_ratio(a: Number, b: Number) -> float:
    """ln(a/b) for positive a, b, accurate relative to the result even when a/b is near 1."""
    r = Fraction(a) / Fraction(b)
    if abs(r - 1) < Fraction(1, 2):
        return math.log1p(float(r - 1))
    return math.log(r.numerator) - math.log(r.denominator)


def _pair_tables(view: Viewset, c: int, c2: int):
    """Per attribute: log ratio D_i[t], zero flags of class c and of c'; and the P term."""
    tables = []
    for attr in view.N:
        d = np.zeros(len(attr))
        z1 = np.zeros(len(attr), bool)
        z2 = np.zeros(len(attr), bool)
        for t, row in enumerate(attr):
            z1[t], z2[t] = row[c] == 0, row[c2] == 0
            if not (z1[t] or z2[t]):
                d[t] = _log_ratio(row[c], row[c2])
        tables.append((d, z1, z2))
    return tables, (1 - view.n) * _log_ratio(view.P[c], view.P[c2])


def _exact_gt(view: Viewset, tau: np.ndarray, c: int, c2: int) -> bool:
    """X_{τ,c} > X_{τ,c'} in exact arithmetic: ∏N_c · P_c'^{n-1} > ∏N_c' · P_c^{n-1}."""
    a = Fraction(view.P[c2]) ** (view.n - 1)
    b = Fraction(view.P[c]) ** (view.n - 1)
    for i, t in enumerate(tau):
        a *= view.N[i][t][c]
        b *= view.N[i][t][c2]
    return a > b


def relation(view: Viewset, tuples: np.ndarray, c: int, c2: int) -> np.ndarray:
    """Boolean per tuple (rows of value indexes): does class c beat c' (c < c') at τ?"""
    tables, p_term = _pair_tables(view, c, c2)
    out = np.zeros(len(tuples), bool)
    for lo in range(0, len(tuples), _CHUNK):
        block = tuples[lo : lo + _CHUNK]
        d = np.full(len(block), p_term)
        mag = np.full(len(block), abs(p_term))
        z1 = np.zeros(len(block), bool)
        z2 = np.zeros(len(block), bool)
        for i, (di, zi1, zi2) in enumerate(tables):
            col = block[:, i]
            d += di[col]
            mag += np.abs(di[col])
            z1 |= zi1[col]
            z2 |= zi2[col]
        # X_c = 0 never beats; X_c' = 0 < X_c always loses; both zero is a tie (c' wins).
        gt = np.where(z1, False, np.where(z2, True, d > 0))
        unsure = ~z1 & ~z2 & (np.abs(d) <= _TOL * (mag + 1e-300))
        for j in np.nonzero(unsure)[0]:
            gt[j] = _exact_gt(view, block[j], c, c2)
        out[lo : lo + len(block)] = gt
    return out


def product_size(view: Viewset) -> int:
    """|ΠA_i|: how many tuples the full product has."""
    return math.prod(len(attr) for attr in view.N)


@dataclass
class Difference:
    """A tuple on which the two classifiers rank classes c < c' differently."""

    tuple: tuple[int, ...]
    lower: int
    higher: int
    original_gt: bool  # original: lower class strictly beats the higher one


def differences(a: Viewset, b: Viewset, blocks: Iterable[np.ndarray], limit: int = 10) -> list[Difference]:
    """Tuples (blocks of value-index rows) where a and b are not NBC-equivalent (eq. 11-12)."""
    found: list[Difference] = []
    for tuples in blocks:
        for c, c2 in combinations(range(a.classes), 2):
            ra, rb = relation(a, tuples, c, c2), relation(b, tuples, c, c2)
            for j in np.nonzero(ra != rb)[0][: limit - len(found)]:
                found.append(Difference(tuple(int(x) for x in tuples[j]), c, c2, bool(ra[j])))
            if len(found) >= limit:
                return found
    return found


def chunks(view: Viewset) -> Iterator[np.ndarray]:
    """The full product in blocks, for products too large to hold at once."""
    sizes = [len(attr) for attr in view.N]
    total = math.prod(sizes)
    for lo in range(0, total, _CHUNK):
        flat = np.arange(lo, min(total, lo + _CHUNK))
        yield np.stack(np.unravel_index(flat, sizes), axis=1).astype(np.int64)
