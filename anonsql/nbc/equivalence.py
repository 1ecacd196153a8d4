"""NBC-equivalence (Definition 2) decided exactly over all of ΠA_i, without enumerating it.

For classes c < c' the classifier's relation is f(τ,c) > f(τ,c') (else c' wins, ties
included, Section 6.1). With X_{τ,c} = P_c^{1-n} ∏_i N^i_{t_i,c} (eq. 2) it is decided by
per-attribute terms: a zero N^i_{t,c} anywhere makes it false, else a zero N^i_{t,c'} makes
it true, else it is the sign of d(τ) = Σ_i ln(N^i_{t_i,c}/N^i_{t_i,c'}) + (1-n) ln(P_c/P_c').

Two viewsets differ on some τ iff, for some pair, one relation holds and the other does not.
That is searched by meet in the middle: the attributes are split into two halves whose
partial assignments are enumerated (sizes ≈ √|ΠA_i|); the partial sums of one half, sorted
by the first viewset's d, give per prefix the least d of the second, so each partial
assignment of the other half is decided against the whole opposite half at once (a bound
over all its completions). Floats only prune: a candidate within a rigorous rounding bound
is decided again with exact integer/Fraction products, so no rounding can flip an answer.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations

import numpy as np

from ..errors import AnonsqlError
from .views import Number, Viewset

#: The relative rounding bound of a float sum of log ratios (float64 gives ~1e-16 per term).
_TOL = 1e-11
#: Each half of the attributes may enumerate at most this many partial assignments, so
#: products up to HALF_LIMIT² tuples are decided; beyond, `decidable` says no.
HALF_LIMIT = 1 << 22
#: Exactly re-checked candidates per pair before giving up the search as too tied.
_MAX_EXACT = 200_000


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


def exact_gt(view: Viewset, tau, c: int, c2: int) -> bool:
    """Does c beat c' at τ, in exact arithmetic: no zero N_c, and a zero N_c' or
    ∏N_c · P_c'^{n-1} > ∏N_c' · P_c^{n-1}."""
    rows = [view.N[i][int(t)] for i, t in enumerate(tau)]
    if any(row[c] == 0 for row in rows):
        return False
    if any(row[c2] == 0 for row in rows):
        return True
    a = Fraction(view.P[c2]) ** (view.n - 1)
    b = Fraction(view.P[c]) ** (view.n - 1)
    for row in rows:
        a *= row[c]
        b *= row[c2]
    return a > b


def relation(view: Viewset, tuples: np.ndarray, c: int, c2: int) -> np.ndarray:
    """Boolean per tuple (rows of value indexes): does class c beat c' (c < c') at τ?"""
    tables, p_term = _pair_tables(view, c, c2)
    d = np.full(len(tuples), p_term)
    mag = np.full(len(tuples), abs(p_term))
    z1 = np.zeros(len(tuples), bool)
    z2 = np.zeros(len(tuples), bool)
    for i, (di, zi1, zi2) in enumerate(tables):
        col = tuples[:, i]
        d += di[col]
        mag += np.abs(di[col])
        z1 |= zi1[col]
        z2 |= zi2[col]
    gt = np.where(z1, False, np.where(z2, True, d > 0))
    unsure = ~z1 & ~z2 & (np.abs(d) <= _TOL * (mag + 1e-300))
    for j in np.nonzero(unsure)[0]:
        gt[j] = exact_gt(view, tuples[j], c, c2)
    return gt


def product_size(view: Viewset) -> int:
    """|ΠA_i|: how many tuples the full product has."""
    return math.prod(len(attr) for attr in view.N)


def _halves(sizes: list[int]) -> tuple[list[int], list[int]]:
    """Attributes split into two groups of near-equal product size (largest first, greedy)."""
    left: list[int] = []
    right: list[int] = []
    for i in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
        (left if math.prod(sizes[j] for j in left) <= math.prod(sizes[j] for j in right) else right).append(i)
    return sorted(left), sorted(right)


def decidable(view: Viewset) -> bool:
    """Can `differences` decide Definition 2 on the full product of this viewset?"""
    sizes = [len(attr) for attr in view.N]
    return all(math.prod(sizes[j] for j in half) <= HALF_LIMIT for half in _halves(sizes))


@dataclass
class Difference:
    """A tuple on which the two classifiers rank classes c < c' differently."""

    tuple: tuple[int, ...]
    lower: int
    higher: int
    original_gt: bool  # original: lower class strictly beats the higher one


class _Half:
    """The partial assignments of some attributes: value indexes, and per viewset the zero
    flags and the float partial sum of d with its magnitude (for the rounding bound)."""

    def __init__(self, attrs: list[int], sizes: list[int], tables: list, p_terms: tuple[float, float]):
        shape = [sizes[i] for i in attrs]
        count = math.prod(shape)
        grid = np.indices(shape).reshape(len(attrs), count) if attrs else np.zeros((0, 1), np.int64)
        self.attrs, self.index = attrs, grid
        self.z1, self.z2, self.d, self.mag = [], [], [], []
        for (tabs, p_term) in zip(tables, p_terms):
            d, mag = np.full(count, p_term), np.full(count, abs(p_term))
            z1, z2 = np.zeros(count, bool), np.zeros(count, bool)
            for k, i in enumerate(attrs):
                di, zi1, zi2 = tabs[i]
                d += di[grid[k]]
                mag += np.abs(di[grid[k]])
                z1 |= zi1[grid[k]]
                z2 |= zi2[grid[k]]
            self.z1.append(z1)
            self.z2.append(z2)
            self.d.append(d)
            self.mag.append(mag)

    def mode(self, v: int, other_z1: bool, other_z2: bool) -> np.ndarray:
        """Per partial assignment, the relation's fixed outcome for viewset v given the other
        half's zero flags: 0 false, 1 true, 2 decided by the sign of d."""
        z1, z2 = self.z1[v] | other_z1, self.z2[v] | other_z2
        return np.where(z1, 0, np.where(z2, 1, 2))


def pair_difference(a: Viewset, b: Viewset, c: int, c2: int) -> Difference | None:
    """A τ where a and b disagree on "c beats c'", or None when they agree on all of ΠA_i."""
    sizes = [len(attr) for attr in a.N]
    ta, pa = _pair_tables(a, c, c2)
    tb, pb = _pair_tables(b, c, c2)
    left_attrs, right_attrs = _halves(sizes)
    L = _Half(left_attrs, sizes, [ta, tb], (pa, pb))
    R = _Half(right_attrs, sizes, [ta, tb], (0.0, 0.0))
    tol = [_TOL * (1 + float(L.mag[v].max()) + float(R.mag[v].max())) for v in (0, 1)]
    budget = [_MAX_EXACT]

    def tuple_of(li: int, ri: int) -> tuple[int, ...]:
        tau = [0] * len(sizes)
        for k, i in enumerate(left_attrs):
            tau[i] = int(L.index[k, li])
        for k, i in enumerate(right_attrs):
            tau[i] = int(R.index[k, ri])
        return tuple(tau)

    def confirm(li: int, ri: int) -> Difference | None:
        tau = tuple_of(li, ri)
        ga, gb = exact_gt(a, tau, c, c2), exact_gt(b, tau, c, c2)
        budget[0] -= 1
        if budget[0] < 0:
            raise AnonsqlError(f"NBC-equivalence not decided: more than {_MAX_EXACT:,} tuples of the product "
                               f"tie within rounding for classes {c} and {c2}; the exact check stops there")
        return Difference(tau, c, c2, ga) if ga != gb else None

    # Group each half by its four zero flags; every pair of groups fixes which relation is
    # decided by zeros and which by the sign of d.
    def groups(h: _Half) -> dict[tuple[bool, ...], np.ndarray]:
        key = (h.z1[0].astype(int) * 8 + h.z2[0] * 4 + h.z1[1] * 2 + h.z2[1]).astype(int)
        return {(bool(k & 8), bool(k & 4), bool(k & 2), bool(k & 1)): np.nonzero(key == k)[0]
                for k in np.unique(key)}

    right_groups = groups(R)
    for (lz1a, lz2a, lz1b, lz2b), lidx in groups(L).items():
        for (rz1a, rz2a, rz1b, rz2b), ridx in right_groups.items():
            ma = 0 if (lz1a or rz1a) else 1 if (lz2a or rz2a) else 2
            mb = 0 if (lz1b or rz1b) else 1 if (lz2b or rz2b) else 2
            found = _search(L, R, lidx, ridx, ma, mb, tol, confirm)
            if found is not None:
                return found
    return None


def _search(L: _Half, R: _Half, lidx: np.ndarray, ridx: np.ndarray, ma: int, mb: int, tol: list[float],
            confirm) -> Difference | None:
    """A disagreeing (left, right) pair within two groups, given each relation's mode."""
    if ma != 2 and mb != 2:
        return confirm(int(lidx[0]), int(ridx[0])) if ma != mb else None
    if ma != 2 or mb != 2:
        # One relation is fixed by zeros (outcome `fixed`); the other must take the opposite sign.
        v, fixed = (1, ma) if ma != 2 else (0, mb)
        dl, dr = L.d[v][lidx], R.d[v][ridx]
        sign = -1.0 if fixed else 1.0  # look for d > 0 when fixed false, d <= 0 when fixed true
        top = float(np.max(sign * dr))
        for j in np.nonzero(sign * dl + top > -tol[v])[0]:
            for ri in ridx[sign * (dl[j] + dr) > -tol[v]]:
                found = confirm(int(lidx[j]), int(ri))
                if found is not None:
                    return found
        return None
    for sign in (1.0, -1.0):
        # sign 1: a's d > 0 and b's d <= 0; sign -1: a's d <= 0 and b's d > 0 (both relaxed by tol).
        dal, dbl = sign * L.d[0][lidx], sign * L.d[1][lidx]
        dar, dbr = sign * R.d[0][ridx], sign * R.d[1][ridx]
        order = np.argsort(-dar, kind="stable")
        dar_sorted, prefix_min = dar[order], np.minimum.accumulate(dbr[order])
        # r qualifies for l when dal + dar > -tol: a prefix of the order sorted by dar descending.
        counts = np.searchsorted(-dar_sorted, dal + tol[0], side="left")
        has = counts > 0
        least = np.where(has, prefix_min[np.maximum(counts - 1, 0)], np.inf)
        for j in np.nonzero(has & (dbl + least <= tol[1]))[0]:
            pre = order[: counts[j]]
            for ri in ridx[pre[dbl[j] + dbr[pre] <= tol[1]]]:
                found = confirm(int(lidx[j]), int(ri))
                if found is not None:
                    return found
    return None


def differences(a: Viewset, b: Viewset, limit: int = 10) -> list[Difference]:
    """Tuples of ΠA_i where a and b are not NBC-equivalent (eq. 11-12), at most one per class
    pair and `limit` in all; empty when they are equivalent on the whole product."""
    found: list[Difference] = []
    for c, c2 in combinations(range(a.classes), 2):
        d = pair_difference(a, b, c, c2)
        if d is not None:
            found.append(d)
            if len(found) >= limit:
                break
    return found


def differences_on(a: Viewset, b: Viewset, tuples: np.ndarray, limit: int = 10) -> list[Difference]:
    """The same decided only on the given tuples (rows of value indexes)."""
    found: list[Difference] = []
    for c, c2 in combinations(range(a.classes), 2):
        ra, rb = relation(a, tuples, c, c2), relation(b, tuples, c, c2)
        for j in np.nonzero(ra != rb)[0][: limit - len(found)]:
            found.append(Difference(tuple(int(x) for x in tuples[j]), c, c2, bool(ra[j])))
        if len(found) >= limit:
            break
    return found


def equivalent(a: Viewset, b: Viewset) -> bool:
    """Definition 2 over all of ΠA_i (the caller checks `decidable` first)."""
    return not differences(a, b, limit=1)


def chunks(view: Viewset, size: int = 1 << 20) -> Iterator[np.ndarray]:
    """The full product in blocks (for tests and benchmarks that enumerate it)."""
    sizes = [len(attr) for attr in view.N]
    total = math.prod(sizes)
    for lo in range(0, total, size):
        flat = np.arange(lo, min(total, lo + size))
        yield np.stack(np.unravel_index(flat, sizes), axis=1).astype(np.int64)
