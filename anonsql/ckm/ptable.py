"""The perturbation table (ptable) of the cell key method: pure numpy, no SQL.

A ptable says, for a cell of original count i, with which probability p(i -> j) its published
count is j, the noise being v = j - i. It is built as R's `ptable` package builds it (Giessing
2016, "Computational issues in the design of transition probabilities ..."; Fraser & Wooton 2005):
for each i, the distribution of maximum entropy over the allowed noises such that

* the probabilities sum to 1 and the noise has mean 0 (unbiased) and variance V;
* |v| <= D (D: the largest absolute noise) and the published count j = i + v is never
  negative nor in 1..js-1 (js: the smallest positive count published);
* p(i -> i) >= pstay when pstay is given (R's lower bound on the probability of no change);
* a zero stays zero: p(0 -> 0) = 1.

Rows i >= D + js see every noise in -D..D and are alike: the last row stands for all of them.

Maximum entropy under linear constraints is the exponential family p_v ~ exp(a v + b v^2): the
two multipliers (a, b) are found by Newton's method on the convex dual, so the constraints hold
to rounding (about 1e-12), where R's nloptr solves the primal to its tolerance (1e-7). Where
V is out of the row's reach (a small i, whose noise cannot go below -i), the row takes the
closest variance it can, a two-point distribution, and says so (`Ptable.variance`); where the
bound pstay would make V unreachable it is dropped for that row, as R lowers it until V holds.

R's default monotony constraint (mono = TRUE: p(i -> i) >= p(i -> i +- 1) >= ...) is not imposed: rows
of counts >= D + js (every noise allowed, symmetric) are the same as R's (its vignette's D=2, V=1:
p(-2) = 0.0638, p(0) = 0.383), a small count's row may differ (there R's row 1 holds p(-1) = p(0)
and reaches variance 0.932; this one reaches V).

Note: js here is the smallest positive count published (no count in 1..js-1, as anonsql's issue
34 states it); R's `ptable` calls js the largest count blocked (no count in 1..js).

>>> t = ptable(D=2, V=1.0, js=1)
>>> [round(float(x), 5) for x in t.row(5)[1]], round(float(t.variance[-1]), 12)
([0.06383, 0.24469, 0.38296, 0.24469, 0.06383], 1.0)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ..errors import AnonsqlError

#: Cell keys are whole numbers in [0, KEY_UNITS): the fractional part of a sum of record keys in
#: units of 2^-32, so every engine adds them exactly and finds the same cell key.
KEY_BITS = 32
KEY_UNITS = 1 << KEY_BITS


@dataclass(frozen=True)
class Params:
    """The ptable's parameters: D (largest |noise|), V (noise variance), js (smallest positive
    count published), pstay (lower bound of p(i -> i); None: none)."""

    D: int
    V: float
    js: int = 1
    pstay: float | None = None

    def check(self) -> Params:
        """The parameters, or one error line saying which is wrong."""
        if not isinstance(self.D, int) or self.D < 1:
            raise AnonsqlError(f"--ckm-d must be a whole number >= 1, got {self.D!r}")
        if not self.V > 0 or not np.isfinite(self.V):
            raise AnonsqlError(f"--ckm-v must be a positive variance, got {self.V!r}")
        if not isinstance(self.js, int) or self.js < 0:
            raise AnonsqlError(f"--ckm-js must be a whole number >= 0, got {self.js!r}")
        if self.js > self.D:
            raise AnonsqlError(f"--ckm-js {self.js} needs --ckm-d >= {self.js}: a count of {self.js} can only move "
                               "down to 0, at most D away")
        if self.pstay is not None and not 0 < self.pstay < 1:
            raise AnonsqlError(f"--ckm-pstay must lie strictly between 0 and 1, got {self.pstay!r}")
        return self


@dataclass(frozen=True)
class Ptable:
    """p(i -> i + v) as long rows (i, v, p), i ascending then v ascending; rows i >= `top` use row `top`."""

    params: Params
    i: np.ndarray  # (R,) original count (the last, `top`, stands for every larger count)
    v: np.ndarray  # (R,) noise
    p: np.ndarray  # (R,) probability
    variance: np.ndarray  # (top + 1,) the variance each row reaches (V where feasible)
    pstay_met: np.ndarray  # (top + 1,) bool: p(i -> i) >= pstay (True without pstay)

    @property
    def top(self) -> int:
        return int(self.i.max())

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """The noises and probabilities of original count i."""
        at = self.i == min(i, self.top)
        return self.v[at], self.p[at]

    def intervals(self) -> tuple[np.ndarray, np.ndarray]:
        """Each entry's cell key interval [lo, hi) in key units (KEY_UNITS per 1): within a row the
        noises in ascending order share [0, KEY_UNITS) by their cumulative probabilities, rounded."""
        lo, hi = np.zeros(len(self.p), np.int64), np.zeros(len(self.p), np.int64)
        for i in range(self.top + 1):
            at = np.flatnonzero(self.i == i)
            cum = np.rint(np.cumsum(self.p[at]) * KEY_UNITS).astype(np.int64)
            cum[-1] = KEY_UNITS
            hi[at] = cum
            lo[at] = np.concatenate([[0], cum[:-1]])
        return lo, hi

    def fingerprint(self) -> str:
        """SHA-256 of the table as looked up (i, v, lo, hi): equal fingerprints, equal noise."""
        return fingerprint(self.i, self.v, *self.intervals())


def fingerprint(i: np.ndarray, v: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> str:
    """SHA-256 of a ptable's lookup rows (i, v, lo, hi), in the order i, then lo."""
    order = np.lexsort((lo, i))
    return hashlib.sha256(np.stack([i, v, lo, hi])[:, order].astype("<i8").tobytes()).hexdigest()


def ptable(D: int, V: float, js: int = 1, pstay: float | None = None) -> Ptable:
    """The maximum-entropy ptable of the parameters (see the module's docstring)."""
    params = Params(D, float(V), js, pstay).check()
    top = D + max(js, 1)
    rows_i, rows_v, rows_p = [np.array([0])], [np.array([0])], [np.array([1.0])]
    variance, met = [0.0], [True]
    for i in range(1, top + 1):
        v = np.arange(max(-i, -D), D + 1)
        j = i + v
        v = v[(j == 0) | (j >= js)]
        p = _row(v, params.V, pstay)
        rows_i.append(np.full(len(v), i))
        rows_v.append(v)
        rows_p.append(p)
        variance.append(float(p @ (v * v.astype(float))))
        met.append(pstay is None or 0 not in v or bool(p[v == 0][0] >= pstay - 1e-12))
    keep = [p > 0 for p in rows_p]
    return Ptable(params, np.concatenate([a[k] for a, k in zip(rows_i, keep)]).astype(np.int64),
                  np.concatenate([a[k] for a, k in zip(rows_v, keep)]).astype(np.int64),
                  np.concatenate([a[k] for a, k in zip(rows_p, keep)]), np.array(variance), np.array(met))


def _row(v: np.ndarray, V: float, pstay: float | None) -> np.ndarray:
    """The probabilities over noises v (ascending, some < 0 < some): maximum entropy, mean 0,
    variance V (or the closest reachable), p(0) >= pstay where that keeps V reachable."""
    p = _max_entropy(v, V)
    if pstay is None or 0 not in v or p[v == 0][0] >= pstay:
        return p
    rest = v != 0
    if not _reachable(v[rest], V / (1 - pstay)):
        return p
    out = np.zeros(len(v))
    out[~rest] = pstay
    out[rest] = (1 - pstay) * _max_entropy(v[rest], V / (1 - pstay))
    return out


def _reachable(v: np.ndarray, V: float) -> bool:
    """Whether a zero-mean distribution on v has variance V strictly inside its range."""
    low, high = _variance_range(v)
    return low < V < high


def _variance_range(v: np.ndarray) -> tuple[float, float]:
    """The variances zero-mean distributions on v reach: from 0 (or the two noises next to 0)
    to the two-point distribution on the extreme noises, -min(v) * max(v)."""
    neg, pos = v[v < 0], v[v > 0]
    low = 0.0 if 0 in v else float(-neg.max() * pos.min())
    return low, float(-v.min() * v.max())


def _two_point(v: np.ndarray, a: int, b: int) -> np.ndarray:
    """Mean 0 on noises a < 0 < b: p(a) = b / (b - a), p(b) = -a / (b - a)."""
    p = np.zeros(len(v))
    p[v == a], p[v == b] = b / (b - a), -a / (b - a)
    return p


def _max_entropy(v: np.ndarray, V: float) -> np.ndarray:
    """argmax entropy over distributions on v with mean 0 and variance V: p ~ exp(a v + b v^2), the
    multipliers by damped Newton on the dual log Z(a, b) - b V. Out of reach: the closest end."""
    if len(v) == 0 or v.min() >= 0 or v.max() <= 0:
        raise AnonsqlError(f"no zero-mean noise on {v.tolist()}")
    low, high = _variance_range(v)
    if V >= high * (1 - 1e-12):
        return _two_point(v, int(v.min()), int(v.max()))
    if V <= low * (1 + 1e-12):
        return _two_point(v, int(v[v < 0].max()), int(v[v > 0].min()))
    x = v.astype(float)
    feats = np.stack([x, x * x])  # (2, n): the constrained moments
    target = np.array([0.0, V])
    lam = np.zeros(2)

    def dual(lam: np.ndarray) -> tuple[float, np.ndarray]:
        z = lam @ feats
        m = z.max()
        w = np.exp(z - m)
        return float(np.log(w.sum()) + m - lam @ target), w / w.sum()

    f, p = dual(lam)
    for _ in range(200):
        mean = feats @ p
        grad = mean - target
        if np.abs(grad).max() < 1e-13 * max(1.0, V):
            break
        centred = feats - mean[:, None]
        hess = (centred * p) @ centred.T
        step = np.linalg.solve(hess + 1e-300 * np.eye(2), grad)
        t = 1.0
        while t > 1e-12:  # backtracking: the dual is convex
            f_new, p_new = dual(lam - t * step)
            if f_new <= f - 1e-4 * t * (grad @ step) or t < 1e-6:
                break
            t /= 2
        lam, f, p = lam - t * step, f_new, p_new
    return p
