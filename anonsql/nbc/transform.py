"""SafetyTransform (Figure 2): an NBC-equivalent viewset that satisfies condition (10).

Step 1 replaces zeros (Figure 3), Step 2 takes k-th roots (Figure 4) and approximates them
by rationals whose errors favour higher-precedence classes (Section 6.2.2, Statement 7),
Step 3 re-normalises so that Σ_t N^i_{t,c} = P_c (Figure 5), Step 4 turns the rationals
into integers (Section 6.2.4). All arithmetic is Fraction/int; the only approximation,
the k-th root, is computed in Decimal with an error bound far below the offsets used.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction

from ..errors import AnonsqlError
from .views import Viewset, is_realistic, is_safe


def validate(view: Viewset, classes: Sequence[str] = (), attrs: Sequence[str] = ()) -> None:
    """The paper's standing assumptions (Section 3): >= 2 classes, every P_c > 0, and
    every class has some count in every attribute (else Step 1's maxima are 0). `classes`
    and `attrs`, the labels and column names, name what fails (else its number)."""
    if view.classes < 2:
        raise AnonsqlError("the class column has fewer than 2 distinct labels: there is nothing to classify")
    if view.n < 1:
        raise AnonsqlError("no attributes given")
    if min(view.P) <= 0:
        raise AnonsqlError("a class has no rows (P_c = 0)")
    for i, attr in enumerate(view.N):
        for c in range(view.classes):
            if not attr or max(row[c] for row in attr) <= 0:
                cls = f"class {classes[c]!r}" if c < len(classes) else f"class #{c}"
                column = f"attribute {attrs[i]!r}" if i < len(attrs) else f"attribute #{i}"
                raise AnonsqlError(f"{cls} has no non-NULL value in {column}: every class needs a known value in "
                                   "every attribute (leave the attribute out of --attrs, or fill its NULLs)")


def _floor_log2(x: Fraction) -> int:
    e = x.numerator.bit_length() - x.denominator.bit_length()
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    return e


def step1(view: Viewset) -> Viewset:
    """Figure 3: replace each zero N^i_{t,c}, classes in descending precedence, by 0 < s < S^i_{t,c}.

    The bound S keeps X_{τ,c} (now > 0) below every positive X_{τ,c'}. The paper writes
    S = min_{c'} m_{c'}/M_c · M^i_c, leaving out the factor P_c^{1-n} of X (eq. 2); we keep
    it, S = min_{c'} (P_{c'}^{1-n} m_{c'}) / (P_c^{1-n} M_c) · M^i_c, which is the bound the
    proof of Statement 5 needs when the P_c differ. s is the largest power of two <= S/2.
    """
    n, C = view.n, view.classes
    N = [[[Fraction(x) for x in row] for row in attr] for attr in view.N]
    pw = [Fraction(p) ** (1 - n) for p in view.P]
    M = [[max(row[c] for row in attr) for attr in N] for c in range(C)]
    m = [[min(row[c] for row in attr if row[c] > 0) for attr in N] for c in range(C)]
    for c in reversed(range(C)):
        for i, attr in enumerate(N):
            for row in attr:
                if row[c] != 0:
                    continue
                low = min(pw[o] * math.prod(m[o]) for o in range(C) if o != c)
                bound = low / (pw[c] * math.prod(M[c])) * M[c][i]
                s = Fraction(2) ** (_floor_log2(bound) - 1)
                row[c] = s
                M[c][i], m[c][i] = max(M[c][i], s), min(m[c][i], s)
    return Viewset([Fraction(p) for p in view.P], N)


def root_exponent(w: Fraction, rho: Fraction, n: int) -> int:
    """Figure 4 line 2 with Figure 2's ρ^(1/(2n+3)): the least integer k >= n·log w / log ρ',
    decided exactly as ρ^k >= w^(n(2n+3))."""
    e = n * (2 * n + 3)
    if w <= 1:
        return 1
    target = w ** e
    k = max(1, math.ceil(e * math.log(w) / math.log(rho)) - 1)
    while rho ** k < target:
        k += 1
    while k > 1 and rho ** (k - 1) >= target:
        k -= 1
    return k


def _root(x: Fraction, k: int, digits: int) -> Fraction:
    """x^(1/k) to about `digits` significant digits (Decimal ln/exp are correctly rounded); exact for k = 1."""
    if k == 1:
        return x
    with localcontext() as ctx:
        ctx.prec = digits
        ln = Decimal(x.numerator).ln() - Decimal(x.denominator).ln()
        return Fraction((ln / k).exp())


def step2(view: Viewset, k: int, bits: int) -> Viewset:
    """Figure 4: k-th roots, approximated so that ties go to the higher class (Statement 7).

    With u = 2^-bits and class precedence index j: Ñ = r·(1 + (2j+1.5)u) and
    P̃ = r·(1 - (2j+1.5)u), r the root to a relative error << u. A higher class gets a
    strictly larger relative over-approximation of N and under-approximation of P, so a
    tie X_{τ,c} = X_{τ,c'} becomes X̃_{τ,c} < X̃_{τ,c'}; strict inequalities survive when u
    is small against their gap (Statement 8), which the caller checks or bounds.
    """
    u = Fraction(1, 2**bits)
    digits = math.ceil(bits * 0.30103) + 20
    roots: dict[Fraction, Fraction] = {}

    def r(x):
        if x not in roots:
            roots[x] = _root(x, k, digits)
        return roots[x]

    P = [r(p) * (1 - (2 * j + Fraction(3, 2)) * u) for j, p in enumerate(view.P)]
    N = [[[r(x) * (1 + (2 * j + Fraction(3, 2)) * u) for j, x in enumerate(row)] for row in attr]
         for attr in view.N]
    return Viewset(P, N)


def step3(view: Viewset) -> Viewset:
    """Figure 5: rescale so that Σ_t N^i_{t,c} = P_c; X_{τ,c} is unchanged (Statement 9b)."""
    n = view.n
    P, N = list(view.P), [[list(row) for row in attr] for attr in view.N]
    for c in range(view.classes):
        S = [sum(row[c] for row in attr) for attr in view.N]
        R0 = math.prod(S) / Fraction(view.P[c]) ** n
        for i, attr in enumerate(N):
            Ri = R0 * view.P[c] / S[i]
            for row in attr:
                row[c] *= Ri
        P[c] = R0 * view.P[c]
    return Viewset(P, N)


def step4(view: Viewset, bits: int) -> Viewset:
    """Section 6.2.4: integers. Scale so the smallest count is >= 2^(bits+6)·n, round P_c,
    and round each N^i_{·,c} by largest remainders so that Σ_t N^i_{t,c} = P_c still holds.
    Every count moves by < 1, a relative error far below Step 2's offsets."""
    scale = Fraction(2 ** (bits + 6) * view.n) / min(view.values())
    P = [round(p * scale) for p in view.P]
    N = [[[0] * view.classes for _ in attr] for attr in view.N]
    for i, attr in enumerate(view.N):
        for c in range(view.classes):
            exact = [row[c] * scale for row in attr]
            floors = [math.floor(x) for x in exact]
            extra = P[c] - sum(floors)
            order = sorted(range(len(attr)), key=lambda t: exact[t] - floors[t], reverse=True)
            for t in order[:extra]:
                floors[t] += 1
            for t, x in enumerate(floors):
                N[i][t][c] = x
    return Viewset(P, N)


@dataclass
class Transformed:
    """SafetyTransform's output and the choices it made (Section 6.3 lists them as free)."""

    view: Viewset  # integer counts
    k: int  # root exponent (1: the input was already safe and is published unchanged)
    bits: int  # Step 2 precision u = 2^-bits
    w: Fraction  # Figure 4's max/min ratio after Step 1
    identity: bool


#: Root exponents: Figure 4's bound (the paper's default) or the least k whose output meets rho.
ROOTS = ("paper", "least")


def _steps(v1: Viewset, k: int, bits: int) -> Viewset:
    return step4(step3(step2(v1, k, bits)), bits)


def least_root(v1: Viewset, rho: Fraction, k_max: int, bits: int) -> int:
    """The least k in [1, k_max] whose Steps 2-4 output satisfies (10) for rho (bisection; the
    ratios shrink as k grows): the "least distortion" choice, since the k-th root flattens the counts."""
    lo, hi = 1, k_max
    while lo < hi:
        mid = (lo + hi) // 2
        if is_safe(_steps(v1, mid, bits), rho):
            hi = mid
        else:
            lo = mid + 1
    return lo


def safety_transform(view: Viewset, rho: Fraction, bits: int, keep_safe: bool = True,
                     root: str = "paper") -> Transformed:
    """Figure 2 with precision `bits`; an already safe viewset is returned unchanged (Section 6.3)
    when `keep_safe` and it is realistic (no NULL-only rows to account for: Step 3 must then run).
    k starts at Figure 4's bound (root "paper") or at the least k meeting rho (root "least")
    and grows while the integers miss (10) exactly.
    """
    validate(view)
    if keep_safe and is_safe(view, rho) and is_realistic(view):
        return Transformed(view, 1, 0, Fraction(1), True)
    v1 = step1(view)
    vals = v1.values()
    w = Fraction(max(vals)) / min(vals)
    k = root_exponent(w, rho, view.n)
    if root == "least":
        k = least_root(v1, rho, k, bits)
    while True:
        out = _steps(v1, k, bits)
        if is_safe(out, rho):
            return Transformed(out, k, bits, w, False)
        k += max(1, k // 8)
        bits += 8


def sufficient_bits(view: Viewset, k: int) -> int:
    """A precision that provably keeps every inequality (Statement 8's idea, with the P terms).

    Positive scores compare as integers ∏N_c·P_c'^{n-1} vs ∏N_c'·P_c^{n-1} <= Pmax^{2n-1}, so
    a strict gap is >= Pmax^-(2n-1) relative; Step 1's replacements keep a factor >= 2. The
    k-th root leaves ln-gap >= Pmax^-(2n-1)/(2k); Step 2 moves ln X by < (2n-1)(2C+2)u and
    Step 4 by far less, on both sides of a comparison.
    """
    n, C = view.n, view.classes
    pmax = max(int(p) for p in view.P)
    return (2 * n - 1) * pmax.bit_length() + (16 * k * (2 * n - 1) * (2 * C + 2)).bit_length() + 2


#: The first precision tried by `publish_safe` (bits of Step 2's u = 2^-bits).
FIRST_BITS = 8


def publish_safe(view: Viewset, rho: Fraction, equivalent: Callable[[Viewset], bool] | None,
                 keep_safe: bool = True, root: str = "paper") -> Transformed:
    """SafetyTransform at the least precision that `equivalent` accepts.

    `equivalent` decides NBC-equivalence over all of ΠA_i exactly; the precision doubles from
    FIRST_BITS until it accepts, then bisects down to the least accepted precision. Without
    an oracle (a product too large even for equivalence.decidable) the provable
    `sufficient_bits` precision is used directly. `keep_safe=False` runs all four steps even
    on safe input (EST needs integer, realistic counts).
    """
    validate(view)
    if keep_safe and is_safe(view, rho) and is_realistic(view):
        return safety_transform(view, rho, 0)
    v1 = step1(view)
    vals = v1.values()
    cap = sufficient_bits(view, root_exponent(Fraction(max(vals)) / min(vals), rho, view.n))
    if equivalent is None:
        return safety_transform(view, rho, cap, keep_safe, root)
    failed, bits = 0, FIRST_BITS
    while True:
        bits = min(bits, cap)
        result = safety_transform(view, rho, bits, keep_safe, root)
        if bits == cap or equivalent(result.view):
            break
        failed, bits = bits, bits * 2
    while bits - failed > 1:
        mid = (failed + bits) // 2
        trial = safety_transform(view, rho, mid, keep_safe, root)
        if equivalent(trial.view):
            bits, result = mid, trial
        else:
            failed = mid
    return result


__all__ = ["ROOTS", "Transformed", "least_root", "publish_safe", "safety_transform", "step1", "step2", "step3",
           "step4", "sufficient_bits", "validate"]
