"""The algorithm's entry: check the count table, draw the random numbers, run a loop (compiled or reference)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from types import ModuleType

import numpy as np

from . import reference as _reference
from .diversity import Model
from .model import KanonResult, finish, prepare
from .restore import restore as give_back

_fast: ModuleType | None
try:
    from . import fast as _compiled

    _fast = _compiled
except ImportError as exc:  # the C extension was not built (source tree without `pip install -e .`)
    _fast = None
    _FAST_MISSING = str(exc)


def anonymize(codes, classes, counts, domain_sizes, *, k: int, cost: str = "mar", alpha: float = 1.0,
              seed: int = 0, progress=None, reference: bool = False, sensitive: Sequence[np.ndarray] = (),
              models: Sequence[Model] = (), restore: bool = False) -> KanonResult:
    """k-anonymise a count table by bottom-up cell suppression (Kameya & Hayashi 2016, Alg. 1-3).

    Input: `codes` (T, M) QI value codes 0..|V_j|-1, -1 for NULL (⊥); `classes` (T,) class codes;
    `counts` (T,) N(y,c) >= 1; `domain_sizes` (M,) |V_j|, the non-null values of column j. Rows
    (y, c) must be distinct; their order does not matter (see below). p̂ (Section 2.1) comes from
    these arrays with pseudo count `alpha`; `cost` is one of COSTS: "ham" (eq. 1), "info" (eq. 2),
    "mar" (eqs. 9-11), "hybrid" (eq. 12). Γ is evaluated with the counts of the current dataset
    D^(l) (Section 3.3). The caller validates k >= 1, cost and alpha (anonsql.validate);
    ValueError for what the loop cannot run on: k > N, an unknown cost, alpha = 0 with a cost
    in NEEDS_POSITIVE_ALPHA, malformed arrays.

    Reproducibility. Rows are first sorted lexicographically by (y_1..y_M, c), ⊥ first; a tuple
    of S is named by its key, the smallest sorted position among the input rows it holds.
    `numpy.random.default_rng(seed).random(2T)` is drawn once; iteration l picks the violating
    tuple (N(y) < k, N(y) summed over classes) of rank floor(draws[l] * n_violating) in key
    order (at most 2T-1 iterations: each lowers |S| + #{tuples with a non-null cell}).
    Ties in argmin Γ go to the smallest key. So the result depends only on the set of rows,
    k, cost, alpha and seed.

    Corner cases the paper leaves open (Section 2.3 assumes a same-class partner exists):
    (a) the picked t has no other tuple of its class in S: t is suppressed alone to
    (⊥..⊥, c), with Γ that of merging t with an empty all-⊥ tuple (w_j(t') = 0 in eq. 10);
    if t already is (⊥..⊥, c), the tuple of another class whose lone full suppression has the
    smallest Γ (ties: smallest key) is suppressed to all-⊥ instead, which adds its rows to
    N(⊥..⊥); both terminate since k <= N. (b) k = 1 or an already k-anonymous table: no
    iteration, nothing changes. (c) ⊥ in the input is a value of its own for N(y) and
    SUPPRESS, has p̂(⊥|c) = 1, and is left out of N(x_j, c) and N(¬⊥_j, c).

    `reference=True` runs the plain numpy loop instead of the compiled one; both return
    identical results (tested). `progress(iteration, n_violating)` is called every 1024
    iterations by the compiled loop.

    Attribute disclosure (issue 32): `models` (anonsql.kanon.diversity) on the histograms
    `sensitive[s]` (T, V_s + 1) of each row's sensitive values are constraints of the same
    loop: a tuple also violates when its class E (all tuples of pattern y) fails a model, and
    merges go on until every class meets k and every model. A model the whole table fails is
    refused first (AnonsqlError). Where the cheapest merge (argmin Γ) would leave a class failing a
    model, the cheapest merge whose class meets every model is taken instead (ties: the smallest
    key), if any. Both loops do this alike; `KanonResult.loop` names the one that ran.

    `restore=True` gives blanked cells back after the loop while every class keeps k and every
    model (anonsql.kanon.restore; `KanonResult.restored_cells`): not the paper's, an option beside it.
    """
    prepared = prepare(codes, classes, counts, domain_sizes, k=k, cost=cost, alpha=alpha, sensitive=sensitive,
                       models=models)
    draws = np.random.default_rng(seed).random(2 * len(prepared.counts))  # Generator(PCG64(SeedSequence(seed)))
    if not reference and _fast is None:
        warnings.warn(f"anonsql.kanon: compiled loop unavailable ({_FAST_MISSING}); using the reference loop, "
                      "~20-50x slower. Build it with `pip install -e .`.", RuntimeWarning, stacklevel=2)
    if reference or _fast is None:
        final, gammas, solo, cross, groups = _reference.run(prepared, draws)
    else:
        final, gammas, solo, cross, groups = _fast.run(prepared, draws, progress)
    restored = 0
    if restore:
        final, restored = give_back(prepared.codes, final, prepared.counts, prepared.k, prepared.sensitive,
                                    prepared.models, prepared.sensitive_tables, prepared.count_logs)
        groups = len(np.unique(np.column_stack([final, prepared.classes]), axis=0))
    result = finish(prepared, final, gammas, len(gammas), seed, solo, cross, groups)
    result.restored_cells = restored
    result.loop = "reference" if reference or _fast is None else "compiled"
    return result
