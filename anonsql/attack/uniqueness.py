"""Population uniqueness from a sample (pure: arrays in, numbers out; no SQL here).

Input is the sample's frequency of frequencies: c_k classes of size k (sql/data/class_size_histogram.sql),
with n = Σ k·c_k records in u = Σ c_k classes, drawn with sampling fraction π from a population of
N = n/π records. Each model estimates the number of population uniques (classes of size 1 in the
population, each one a person an attacker can single out):

* Pitman (Hoshino 2001): the two parameters (θ, α) of the Pitman sampling formula fitted by maximum
  likelihood, then uniques = Γ(θ+1)/Γ(θ+α) · N^α;
* Zayatz (1991): the share of sample uniques that are population uniques, from hypergeometric draws;
* SNB (Chen & Keller-McNulty 1998): a slide-negative-binomial model fitted to c_1 and c_2 over K, the
  number of non-empty population classes (Shlosser's estimator, Haas et al. 1995);
* Dankar et al. (2012)'s decision rule picks one: Pitman when π <= 0.1, else the smaller of Zayatz and
  SNB (Zayatz when a model gives no estimate).

The formulas follow ARX's implementation (org.deidentifier.arx.risk.ModelPitman, ModelZayatz,
ModelSNB, RiskModelPopulationUniqueness), whose published figures on Adult the tests reproduce.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

#: Dankar et al.'s rule: below this sampling fraction Pitman's model is the most accurate.
PITMAN_UP_TO = 0.1
_TOLERANCE = 1e-9
_ITERATIONS = 200


@dataclass(frozen=True)
class Uniqueness:
    """Estimated population uniques (records) by each model; NaN where a model gives no estimate."""

    sampling_fraction: float
    population: float  # N = n / π
    sample_uniques: int  # c_1
    pitman: float
    zayatz: float
    snb: float
    dankar: float
    dankar_model: str  # which model the rule chose ("none": no sample uniques)

    def share(self, uniques: float) -> float:
        """Population uniques as a share of the population."""
        return uniques / self.population if self.population else 0.0


def estimate(sizes: Sequence[tuple[int, int]], sampling_fraction: float) -> Uniqueness:
    """Every model on the frequency of frequencies `sizes` [(k, c_k)], with 0 < π <= 1.

    >>> u = estimate([(1, 2), (2, 1)], 1.0)
    >>> (u.population, u.dankar, u.dankar_model)
    (4.0, 2.0, 'zayatz')
    """
    k = np.array([s for s, c in sizes if c > 0], dtype=float)
    c = np.array([c for s, c in sizes if c > 0], dtype=float)
    n, pi = float((k * c).sum()), float(sampling_fraction)
    big_n = n / pi
    c1 = float(c[k == 1].sum())
    if c1 == 0:
        return Uniqueness(pi, big_n, 0, 0.0, 0.0, 0.0, 0.0, "none")
    pitman = _valid(_guarded(lambda: pitman_uniques(k, c, n, big_n)))
    zayatz = _valid(_guarded(lambda: zayatz_uniques(k, c, n, big_n, pi)))
    snb = _valid(_guarded(lambda: snb_uniques(k, c, pi)))
    if pi <= PITMAN_UP_TO:
        chosen = ("pitman", pitman) if not math.isnan(pitman) else ("zayatz", zayatz)
    elif not math.isnan(snb) and snb <= zayatz:
        chosen = ("snb", snb)
    else:
        chosen = ("zayatz", zayatz)
    return Uniqueness(pi, big_n, int(c1), pitman, zayatz, snb, chosen[1], chosen[0])


def _guarded(f: Callable[[], float]) -> float:
    with np.errstate(all="ignore"):
        try:
            return f()
        except (ArithmeticError, ValueError):
            return math.nan


def _valid(x: float) -> float:
    """A model's estimate, NaN when it is none (ARX: NaN or 0 means no estimate)."""
    return x if math.isfinite(x) and x > 0 else math.nan


def _newton(f: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], start: np.ndarray) -> np.ndarray:
    """Newton-Raphson in two unknowns: f returns (value, Jacobian)."""
    x = start.astype(float)
    for _ in range(_ITERATIONS):
        value, jac = f(x)
        try:
            step = np.linalg.solve(jac, value)
        except np.linalg.LinAlgError:  # a flat spot: no root from here
            return np.array([math.nan, math.nan])
        x = x - step
        if not np.all(np.isfinite(x)):
            return np.array([math.nan, math.nan])
        if np.max(np.abs(step)) <= _TOLERANCE * max(1.0, float(np.max(np.abs(x)))):
            break
    return x


def pitman_uniques(k: np.ndarray, c: np.ndarray, n: float, big_n: float) -> float:
    """Hoshino's Pitman model: maximum-likelihood (θ, α) of the sample partition, then
    E[population uniques] = Γ(θ+1)/Γ(θ+α) · N^α."""
    u = float(c.sum())
    c1, c2 = float(c[k == 1].sum()), float(c[k == 2].sum()) or 1.0  # no pairs: overestimate, as ARX
    g = c1 * (c1 - 1) / c2
    theta = (n * u * g - c1 * (n - 1) * (2 * u + g)) / (2 * c1 * u + c1 * g - n * g)
    alpha = (theta * (c1 - n) + (n - 1) * c1) / (n * u)
    i_u = np.arange(1, int(u), dtype=float)  # i = 1 .. u-1
    i_n = np.arange(1, int(n), dtype=float)  # i = 1 .. n-1
    big = k > 1
    j = np.arange(1, int(k.max()), dtype=float)  # j = 1 .. max k - 1

    def equations(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t, a = x
        inv = 1.0 / (t + i_u * a)
        inv_n = 1.0 / (t + i_n)
        inv_j, inv_j2 = np.cumsum(1.0 / (j - a)), np.cumsum(1.0 / (j - a) ** 2)  # Σ_{j<k} 1/(j-α), 1/(j-α)²
        at = (k[big] - 2).astype(int)
        o4, d4 = float((c[big] * inv_j[at]).sum()), float((c[big] * inv_j2[at]).sum())
        value = np.array([inv.sum() - inv_n.sum(), (i_u * inv).sum() - o4])
        d1, d5, d3 = (inv ** 2).sum(), (i_u * inv ** 2).sum(), (i_u ** 2 * inv ** 2).sum()
        jac = np.array([[(inv_n ** 2).sum() - d1, -d5], [-d5, -d3 - d4]])
        return value, jac

    t, a = _newton(equations, np.array([theta, alpha]))
    if not (math.isfinite(t) and math.isfinite(a)) or a == 0:
        return math.nan
    result = math.exp(math.lgamma(t + 1) - math.lgamma(t + a) + a * math.log(big_n))
    return result if 0 <= result <= big_n else math.nan


def _hypergeometric_one(population: int, successes: np.ndarray, draws: int) -> np.ndarray:
    """P(exactly one success) drawing `draws` of `population` holding `successes` successes."""
    def log_choose(a: float, b: float) -> float:
        return math.lgamma(a + 1) - math.lgamma(b + 1) - math.lgamma(a - b + 1)

    return np.array([math.exp(math.log(s) + log_choose(population - s, draws - 1) - log_choose(population, draws))
                     if population - s >= draws - 1 else 0.0 for s in successes.tolist()])


def zayatz_uniques(k: np.ndarray, c: np.ndarray, n: float, big_n: float, pi: float) -> float:
    """Zayatz: P(population unique | sample unique) = c_1·h(1) / Σ_k c_k·h_k(1), h_k(1) the
    hypergeometric chance that a population class of size k shows one record in the sample;
    population uniques = c_1 · P / π."""
    h = _hypergeometric_one(int(big_n), k, int(n))
    c1 = float(c[k == 1].sum())
    share = c1 * float(h[k == 1].sum()) / float((c * h).sum())
    return c1 * share / pi


def shlosser_classes(k: np.ndarray, c: np.ndarray, pi: float) -> float:
    """K: the non-empty population classes, Shlosser's estimator as ARX computes it."""
    q2 = pi * pi
    var1 = float((k * q2 * (1 - q2) ** (k - 1) * c).sum())
    var2 = float(((1 - pi) ** k * c * (1 + pi) ** k - 1).sum())
    var3 = float(((1 - pi) ** k * c).sum())
    var4 = float((k * pi * (1 - pi) ** (k - 1) * c).sum())
    return float(c.sum()) + float(c[k == 1].sum()) * (var1 / var2) * (var3 / var4) ** 2


def snb_uniques(k: np.ndarray, c: np.ndarray, pi: float) -> float:
    """SNB: population uniques = K · β^α, (α, β) from snb_fit."""
    big_k, a, b = snb_fit(k, c, pi)
    return big_k * b ** a


def snb_fit(k: np.ndarray, c: np.ndarray, pi: float) -> tuple[float, float, float]:
    """(K, α, β): α and β such that the model's expected c_1 and c_2 over K classes,
    E[c_1] = K·π·(β/(1-d))^α·(α·d/(1-d) + 1) and
    E[c_2] = K·α·β^α·π²·(1-β)/2·(1-d)^(α+2)·(2-(1-α)·d), d = (1-π)(1-β) (as ARX's ModelSNB),
    match the sample's; α, β NaN when no start reaches such a root with α > 0, 0 < β < 1."""
    big_k = shlosser_classes(k, c, pi)
    c1, c2, f = float(c[k == 1].sum()), float(c[k == 2].sum()), pi

    def value(x: np.ndarray) -> np.ndarray:
        a, b = x
        d = (1 - f) * (1 - b)
        return np.array([big_k * f * (b / (1 - d)) ** a * (a * d / (1 - d) + 1) - c1,
                         big_k * a * b ** a * f * f * (1 - b) / 2 * (1 - d) ** (a + 2) * (2 - (1 - a) * d) - c2])

    def equations(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v, h = value(x), 1e-7 * np.maximum(1.0, np.abs(x))
        jac = np.column_stack([(value(x + np.eye(2)[i] * h[i]) - v) / h[i] for i in range(2)])
        return v, jac

    with np.errstate(all="ignore"):
        for start in _SNB_STARTS:  # the first start from which Newton reaches a root with 0 < β < 1
            a, b = _newton(equations, np.array(start))
            if 0 < b < 1 and a > 0 and np.all(np.abs(value(np.array([a, b]))) <= 1e-6 * max(c1, c2, 1.0)):
                return big_k, float(a), float(b)
    return big_k, math.nan, math.nan


#: Starting points (α, β) of the SNB fit, tried in turn.
_SNB_STARTS = ((1.0, 0.5), (0.5, 0.9), (2.0, 0.1), (0.1, 0.99))
