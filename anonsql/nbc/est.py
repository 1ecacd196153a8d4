"""EST (Figure 7): r-closeness w.r.t. a prior F, by tie resolution, split, SafetyTransform, merge.

The result is returned only when the final viewset is proven (exactly) NBC-equivalent to
the input over all of ΠA_i and its prior-normalised counts P_c/F_c, N^i_{t,c}/F_c satisfy
condition (10) with ρ = r: the merged view is then the merge of a uniform-prior r-safe split
(Definition 6), which is the premise of Statement 11's argument in Section 7.2. Otherwise it
FAILs with the reason, Statement 14's condition being checked first.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import reduce

from .transform import publish_safe, step1, step2, step3, step4, validate
from .views import Number, Viewset, is_safe

#: The split makes Σ_c F_c classes, and Definition 2 is checked for every pair of them.
MAX_SUB_LABELS = 64
#: Step 1 of EST: the relative offset unit 2^-bits that breaks ties (via Step 2 with k = 1).
TIE_BITS = 64


def prior_weights(prior: Sequence[Fraction]) -> list[int]:
    """F(c) = 𝔽·F_c with integers F_c (Section 7.2, Split): divide by the rationals' gcd."""
    den = reduce(math.lcm, (f.denominator for f in prior), 1)
    ints = [int(f * den) for f in prior]
    g = reduce(math.gcd, ints)
    return [x // g for x in ints]


@dataclass
class EstResult:
    ok: bool
    reason: str | None
    view: Viewset | None
    weights: list[int]
    details: dict = field(default_factory=dict)


def statement14(view: Viewset, weights: list[int], r: Fraction) -> tuple[bool, dict]:
    """The θ → ∞ form of eq. (21): F̃ <= S_M^(log r / ((2n²+3n)·log(M/m))), with S_M = M1/M2
    the two largest N^i_{t,c}, M the largest count and m the smallest once zeros are removed
    (read as: the smallest positive count)."""
    n = view.n
    counts = sorted((x for attr in view.N for row in attr for x in row), reverse=True)
    vals = [x for x in view.values() if x > 0]
    M, m = max(vals), min(vals)
    s_m = Fraction(counts[0]) / counts[1] if len(counts) > 1 and counts[1] > 0 else Fraction(1)
    f = max(weights)
    lhs = math.log(f) * (2 * n * n + 3 * n) * math.log(M / m)
    rhs = math.log(s_m) * math.log(r)
    details = {"F_tilde": f, "S_M": float(s_m), "M": float(M), "m": float(m),
               # log10 of the smallest r eq. (21) admits (None: no r does, S_M = 1 < F~)
               "log10_smallest_r_by_statement14": 0.0 if f == 1 else None if s_m == 1 else
               lhs / math.log(s_m) / math.log(10)}
    return f == 1 or lhs <= rhs, details


def _theta(n: int, weights: list[int], r: Fraction, details: dict) -> int:
    """The least integer θ meeting eq. (21); it exists when the θ → ∞ limit holds strictly.
    (21) in logs: c·b·(θ·a + b) < log r·(θ·s - b), c = 2n²+3n, a = log(M/m), b = log F~, s = log S_M."""
    if max(weights) == 1:
        return 1
    c, a, b = 2 * n * n + 3 * n, math.log(details["M"] / details["m"]), math.log(details["F_tilde"])
    s, lr = math.log(details["S_M"]), math.log(r)
    slope = s * lr - c * a * b
    return max(1, math.floor((c * b * b + b * lr) / slope) + 1) if slope > 0 else 1


def prior_safe(view: Viewset, weights: list[int], r: Fraction) -> bool:
    """Condition (10) with ρ = r on P_c/F_c and N^i_{t,c}/F_c (one sub-label of the split)."""
    return is_safe(Viewset([Fraction(p, w) for p, w in zip(view.P, weights)],
                           [[[Fraction(x, w) for x, w in zip(row, weights)] for row in attr] for attr in view.N]), r)


def est(view: Viewset, prior: Sequence[Fraction], r: Fraction,
        equivalent: Callable[[Viewset, Viewset], bool]) -> EstResult:
    """Figure 7. `equivalent(a, b)` must decide Definition 2 over all of ΠA_i exactly."""
    validate(view)
    weights = prior_weights(prior)
    if sum(weights) > MAX_SUB_LABELS:
        return EstResult(False, f"the prior needs {sum(weights)} sub-labels (F_c = {weights}), more than "
                         f"{MAX_SUB_LABELS}; give it as smaller integer ratios", None, weights, {})
    ok, details = statement14(view, weights, r)
    if not ok:
        return EstResult(False, f"Statement 14 fails: F~ = {details['F_tilde']} exceeds S_M^(log r/((2n^2+3n) "
                         f"log(M/m))) with S_M = {details['S_M']:.6g}, M/m = {details['M'] / details['m']:.6g}; "
                         "the data deviate too much from the prior for this r", None, weights, details)
    # 1: resolve ties toward the higher class (Step 2's offsets with k = 1, after zero removal).
    resolved = step2(step1(view), 1, TIE_BITS)
    # 2: raise to the least θ meeting eq. (21) (so S_M^θ > F~, Lemma 12), then split class c
    #    into F_c sub-labels of 1/F_c of its counts each (Definition 6).
    theta = _theta(view.n, weights, r, details)
    owners = [c for c, w in enumerate(weights) for _ in range(w)]
    split = Viewset([resolved.P[c] ** theta / weights[c] for c in owners],
                    [[[row[c] ** theta / weights[c] for c in owners] for row in attr] for attr in resolved.N])
    # 3: SafetyTransform on the sub-labels, as if their prior were uniform.
    inner = publish_safe(split, r, lambda w: equivalent(split, w), keep_safe=False)

    # 4: merge (Definition 6): F_c times the smallest count of c's sub-labels; then Steps 3-4
    # again, since a per-value minimum breaks Σ_t N^i_{t,c} = P_c (the checks below decide).
    def merge(values: Sequence[Number]) -> list[Number]:
        return [weights[c] * min(v for o, v in zip(owners, values) if o == c) for c in range(view.classes)]
    merged = step4(step3(Viewset(merge(inner.view.P), [[merge(row) for row in attr] for attr in inner.view.N])),
                   inner.bits)
    details.update(theta=theta, k=inner.k, bits=inner.bits, sub_labels=len(owners))
    if not equivalent(view, merged):
        return EstResult(False, "merging is not NBC-preserving for this data and prior (Lemma 12)", None,
                         weights, details)
    if not prior_safe(merged, weights, r):
        return EstResult(False, "the merged counts miss r-closeness's condition", None, weights, details)
    return EstResult(True, None, merged, weights, details)
