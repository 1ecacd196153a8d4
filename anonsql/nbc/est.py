"""EST (Figure 7): r-closeness w.r.t. a prior F, by tie resolution, split, SafetyTransform, merge.

The result is returned only when the final viewset is proven (exactly) NBC-equivalent to
the input over all of ΠA_i and its prior-normalised counts P_c/F_c, N^i_{t,c}/F_c satisfy
condition (10) with ρ = r: the merged view is then the merge of a uniform-prior r-safe split
(Definition 6), which is the premise of Statement 11's argument in Section 7.2. Statement 14
is only a fast sufficient test (it picks θ when it holds); as in Figure 7 the run fails only
at the merge. Before any work, a requested r below `least_r` (no NBC-equivalent publication
can reach it) fails with that least r.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import reduce
from itertools import combinations

from . import equivalence as eq
from .transform import publish_safe, step1, step2, step3, step4, validate
from .views import Number, Viewset, smallest_rho

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


def normalised(view: Viewset, weights: Sequence[int]) -> Viewset:
    """P_c/F_c and N^i_{t,c}/F_c: one sub-label of the split (Definition 6)."""
    return Viewset([Fraction(p, w) for p, w in zip(view.P, weights)],
                   [[[Fraction(x, w) for x, w in zip(row, weights)] for row in attr] for attr in view.N])


def achieved_r(view: Viewset, weights: Sequence[int]) -> Fraction | None:
    """The r-closeness a viewset proves for prior F: the least r for which condition (10) holds
    on its prior-normalised counts (Statement 11 via Corollary 4), exactly; None with a zero."""
    return smallest_rho(normalised(view, weights))


def _constant(view: Viewset, c: int, wins: bool) -> Viewset:
    """A viewset of the same shape on which class c beats every other class everywhere
    (`wins`) or ties with all of them (so the higher class wins, Section 6.1)."""
    return Viewset([1] * view.classes, [[[2 if wins and o == c else 1 for o in range(view.classes)]
                                         for _ in attr] for attr in view.N])


def least_r(view: Viewset, weights: Sequence[int]) -> Fraction:
    """A lower bound on the r of any NBC-equivalent publication, from the original rankings.

    Take the attacker's posterior at τ to be the published classifier's (X_{τ,c} normalised,
    the ratios of Statement 11). Where c beats c' (c < c'), any equivalent publication keeps
    X'_c > X'_c'; where c' wins (ties included) X'_c' >= X'_c. With two classes the winner's
    posterior is >= 1/2, so Definition 5 needs r >= 1/(2 F_win) and r >= 2 F_lose (F normalised);
    with more classes r^2 >= F_lose/F_win. Which pairs occur anywhere on ΠA_i is decided exactly
    (equivalence.py against a viewset on which one class always wins or always ties)."""
    total = sum(weights)
    F = [Fraction(w, total) for w in weights]
    best = Fraction(1)
    for c, c2 in combinations(range(view.classes), 2):
        for winner, loser, other in ((c, c2, _constant(view, c2, False)), (c2, c, _constant(view, c, True))):
            if eq.pair_difference(view, other, c, c2) is None:
                continue  # the winner never beats the loser
            if view.classes == 2:
                best = max(best, 1 / (2 * F[winner]), 2 * F[loser])
            else:
                best = max(best, Fraction(math.sqrt(F[loser] / F[winner])).limit_denominator(10**9))
    return best


def _split_theta(weights: list[int], details: dict) -> int:
    """Without Statement 14: the least θ with S_M^θ > F~ (Lemma 12's condition for the split)."""
    if max(weights) == 1 or details["S_M"] <= 1:
        return 1
    return max(1, math.floor(math.log(details["F_tilde"]) / math.log(details["S_M"])) + 1)


def est(view: Viewset, prior: Sequence[Fraction], r: Fraction,
        equivalent: Callable[[Viewset, Viewset], bool], root: str = "paper") -> EstResult:
    """Figure 7. `equivalent(a, b)` must decide Definition 2 over all of ΠA_i exactly."""
    validate(view)
    weights = prior_weights(prior)
    if sum(weights) > MAX_SUB_LABELS:
        return EstResult(False, f"the prior needs {sum(weights)} sub-labels (F_c = {weights}), more than "
                         f"{MAX_SUB_LABELS}; give it as smaller integer ratios", None, weights, {})
    least = least_r(view, weights)
    ok14, details = statement14(view, weights, r)
    details.update(statement14=ok14, least_r=float(least), least_r_exact=str(least))
    if r <= least and least > 1:
        return EstResult(False, f"no NBC-equivalent publication is r-close to this prior for r = {r}: the "
                         f"original classifier's rankings need r > {float(least):.6g} (the least achievable r)",
                         None, weights, details)
    # 1: resolve ties toward the higher class (Step 2's offsets with k = 1, after zero removal).
    resolved = step2(step1(view), 1, TIE_BITS)
    # 2: raise to θ (eq. (21)'s when Statement 14 holds, else Lemma 12's S_M^θ > F~), then
    #    split class c into F_c sub-labels of 1/F_c of its counts each (Definition 6).
    theta = _theta(view.n, weights, r, details) if ok14 else _split_theta(weights, details)
    owners = [c for c, w in enumerate(weights) for _ in range(w)]
    split = Viewset([resolved.P[c] ** theta / weights[c] for c in owners],
                    [[[row[c] ** theta / weights[c] for c in owners] for row in attr] for attr in resolved.N])
    # 3: SafetyTransform on the sub-labels, as if their prior were uniform, at the least precision
    #    whose merge (4) is NBC-equivalent to the input (sub-labels of one class tie exactly, so
    #    the split itself is no useful yardstick).

    # 4: merge (Definition 6): F_c times the smallest count of c's sub-labels; then Steps 3-4
    # again, since a per-value minimum breaks Σ_t N^i_{t,c} = P_c (the checks below decide).
    def merge(values: Sequence[Number]) -> list[Number]:
        return [weights[c] * min(v for o, v in zip(owners, values) if o == c) for c in range(view.classes)]

    def merged_of(w: Viewset, bits: int) -> Viewset:
        return step4(step3(Viewset(merge(w.P), [[merge(row) for row in attr] for attr in w.N])), bits)

    inner = publish_safe(split, r, lambda w: equivalent(view, merged_of(w, TIE_BITS)), keep_safe=False, root=root)
    merged = merged_of(inner.view, inner.bits)
    achieved = achieved_r(merged, weights)
    details.update(theta=theta, k=inner.k, bits=inner.bits, sub_labels=len(owners),
                   achieved_r=None if achieved is None else float(achieved))
    if not equivalent(view, merged):
        return EstResult(False, f"merging is not NBC-preserving for this data and prior (Figure 7 step 4, "
                         f"Lemma 12); the least achievable r is {float(least):.6g}", None, weights, details)
    if achieved is None or achieved > r:
        return EstResult(False, f"the merged counts reach r = {float(achieved or 0):.6g} only, above the requested "
                         f"{r} (Figure 7 step 4); the least achievable r is {float(least):.6g}", None, weights,
                         details)
    return EstResult(True, None, merged, weights, details)
