"""Inputs, statistics and results shared by both loops of Kameya & Hayashi (2016).

Everything here is arrays in, arrays out: `prepare` validates the caller's count table
and derives the paper's estimates (Section 2.1) once; `kl_divergence` is eq. 7.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..ordering import lexicographic_order
from .diversity import Model, check_whole_table

#: The suppression costs of the paper: eq. 1, eq. 2, eq. 9-11 and eq. 12.
COSTS = ("ham", "info", "mar", "hybrid")
COST_IDS = {name: i for i, name in enumerate(COSTS)}

#: Costs built on eq. 10, which is infinite at α = 0 once a value vanishes from a class:
#: they need a pseudo count α > 0 (the others take α >= 0).
NEEDS_POSITIVE_ALPHA = ("mar", "hybrid")

#: Code of a suppressed (or originally missing) cell, the paper's ⊥.
NULL = -1


@dataclass
class KanonResult:
    """What ANONYMIZE decided, per input row, plus the figures a report needs.

    `final_codes[i]` is the QI pattern that input row i (its N(y,c) records) ends up with,
    -1 where suppressed; the caller turns (codes[i], classes[i]) -> final_codes[i] into one
    set-based UPDATE. `gammas` holds Γ of every step in order (a merge of Algorithm 1 or
    one of the corner-case suppressions documented in `anonymize`), `iterations` their number.
    `suppressed_cells` counts newly ⊥ cells with multiplicity N(y,c), out of `total_cells`
    (N x M); `kl_divergence` is eq. 7 between the original and the result, same α;
    `solo_suppressions` / `cross_class_suppressions` count the two corner-case steps;
    `groups` is |S| at the end (distinct (pattern, class) tuples).
    """

    final_codes: np.ndarray
    iterations: int
    gammas: np.ndarray
    suppressed_cells: int
    kl_divergence: float
    cost: str
    k: int
    alpha: float
    seed: int
    solo_suppressions: int = 0
    cross_class_suppressions: int = 0
    total_cells: int = 0
    groups: int = 0
    loop: str = "compiled"  # which loop ran: "compiled" or "reference" (anonsql.kanon.algorithm)
    restored_cells: int = 0  # cells the --restore pass gave back after the loop (anonsql.kanon.restore)

    @property
    def suppressed_ratio(self) -> float:
        """Share of QI cells (rows x QIs) that this run turned into ⊥."""
        return self.suppressed_cells / self.total_cells if self.total_cells else 0.0


@dataclass
class PreparedTable:
    """A validated count table in canonical row order plus the estimates of Section 2.1.

    Canonical order = lexicographic on (y_1..y_M, c) with ⊥ (-1) first; `order[i]` is the
    caller's row at canonical position i. A tuple of S is named by its *key*, the smallest
    canonical index among the input rows it holds, which is what every tie rule uses.
    """

    codes: np.ndarray  # (T, M) int32, canonical order
    classes: np.ndarray  # (T,) int64
    counts: np.ndarray  # (T,) int64, N(y,c)
    domain_sizes: np.ndarray  # (M,) int64, |V_j|
    n_classes: int  # |C|
    order: np.ndarray  # canonical position -> caller row
    k: int
    cost: str
    alpha: float
    attr_counts: list[np.ndarray]  # per j: (|V_j|, |C|) int64, N(x_j, c) of the original
    log_phat: list[np.ndarray]  # per j: (|V_j|, |C|) log p̂(x_j | c)
    phat: list[np.ndarray]  # per j: (|V_j|, |C|) p̂(x_j | c)
    class_prior: np.ndarray  # (|C|,) p̂(c)
    log_table: np.ndarray  # (rows, width): log(i + offset) of the integer counts i
    a_row: int  # log(N + α)  = log_table[a_row, N + a_shift]
    a_shift: int
    v_rows: np.ndarray  # (M,) log(D + α|V_j|) = log_table[v_rows[j], D + v_shift[j]]
    v_shift: np.ndarray
    # per sensitive column s: (T, V_s + 1) int64, N(y, c, v), the rows of tuple (y, c) with value v (⊥ last)
    sensitive: list[np.ndarray] = field(default_factory=list)
    models: tuple[Model, ...] = ()  # the attribute-disclosure models every class must meet besides k
    sensitive_tables: list[np.ndarray] = field(default_factory=list)  # per s: the whole table's histogram
    count_logs: np.ndarray | None = None  # ln i for the counts 0..N, read by the models (entropy) in both loops

    @property
    def n_rows(self) -> int:
        """N, the number of records."""
        return int(self.counts.sum())


def class_prior(class_counts: np.ndarray, alpha: float) -> np.ndarray:
    """p̂(c) = (N(c) + α) / (N + α|C|) (Section 2.1)."""
    class_counts = np.asarray(class_counts, dtype=np.float64)
    return (class_counts + alpha) / (class_counts.sum() + alpha * len(class_counts))


def conditional(attr_counts: np.ndarray, alpha: float) -> np.ndarray:
    """p̂(x_j | c) = (N(x_j,c) + α) / (N(¬⊥_j,c) + α|V_j|) for one attribute (Section 2.1).

    Classes with no non-null value and α = 0 have no estimate; they get 0 (no term in eq. 7).
    """
    attr_counts = np.asarray(attr_counts, dtype=np.float64)
    denom = attr_counts.sum(axis=0) + alpha * attr_counts.shape[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        p = (attr_counts + alpha) / denom
    return np.where(denom > 0, p, 0.0)


def kl_divergence(orig_attr_counts, anon_attr_counts, class_counts, alpha: float = 1.0) -> float:
    """KL(p̂, q̂) of eq. 7 under the naive Bayes factorisation, from count arrays.

    `orig_attr_counts[j]` / `anon_attr_counts[j]` are (|V_j|, |C|) arrays of N(x_j, c) over
    the non-null values of attribute j before / after anonymisation; `class_counts` is N(c)
    (suppression never touches the class, so p̂(c) = q̂(c), appendix). Terms with p̂ = 0 are 0;
    a value whose q̂ became 0 while p̂ > 0 (only possible with α = 0) makes the result inf.
    """
    prior = class_prior(class_counts, alpha)
    total = 0.0
    for orig, anon in zip(orig_attr_counts, anon_attr_counts, strict=True):
        p = conditional(orig, alpha)
        q = conditional(anon, alpha)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(p > 0, p * (np.log(p) - np.log(q)), 0.0)
        total += float((prior * terms.sum(axis=0)).sum())
    return total


def attribute_counts(codes: np.ndarray, classes: np.ndarray, counts: np.ndarray, domain_sizes, n_classes: int):
    """N(x_j, c) per attribute j as (|V_j|, |C|) int64 arrays, ⊥ cells left out."""
    out = []
    for j, size in enumerate(domain_sizes):
        col = codes[:, j]
        keep = col >= 0
        flat = col[keep].astype(np.int64) * n_classes + classes[keep]
        sums = np.bincount(flat, weights=counts[keep], minlength=int(size) * n_classes)
        out.append(sums.astype(np.int64).reshape(int(size), n_classes))
    return out


def _log_tables(alpha: float, domain_sizes: np.ndarray, width: int):
    """Tables of log(i + α) and log(i + α|V_j|) for integer counts 0 <= i <= N.

    Both loops read every logarithm of eqs. 2 and 10 from these tables, so the reference
    and the compiled loop add bitwise-identical numbers and tie the same way. When α is an
    integer all offsets are integers and one table log(x) serves them all.
    """
    offsets = [alpha] + [alpha * float(v) for v in domain_sizes]
    with np.errstate(divide="ignore"):
        if float(alpha).is_integer():
            top = width + int(max(offsets))
            table = np.arange(top + 1, dtype=np.float64)[None, :]
            rows = [0] * len(offsets)
            shifts = [int(o) for o in offsets]
        else:
            distinct = sorted(set(offsets))
            table = np.arange(width + 1, dtype=np.float64)[None, :] + np.array(distinct)[:, None]
            rows = [distinct.index(o) for o in offsets]
            shifts = [0] * len(offsets)
        np.log(table, out=table)  # in place: one N-long array, not two (10^7 rows: 0.17 -> 0.02 s)
    return table, rows[0], shifts[0], np.array(rows[1:], dtype=np.int64), np.array(shifts[1:], dtype=np.int64)


def prepare(codes, classes, counts, domain_sizes, *, k: int, cost: str, alpha: float,
            sensitive: Sequence[np.ndarray] = (), models: Sequence[Model] = ()) -> PreparedTable:
    """Check the count table, sort it canonically and derive p̂ (Section 2.1).

    `sensitive[s]` (T, V_s + 1) holds each row's sensitive-value histogram for the `models`
    (anonsql.kanon.diversity); its row sums must be the counts.

    The caller validated k, cost and alpha (anonsql.validate); this refuses only what the loop
    cannot run on: malformed arrays, k above N (no grouping reaches it), a Γ that does not exist.
    """
    if cost not in COST_IDS:
        raise ValueError(f"unknown cost '{cost}': choose one of {', '.join(COSTS)}")
    alpha = float(alpha)
    if not np.isfinite(alpha) or alpha < 0 or (alpha == 0 and cost in NEEDS_POSITIVE_ALPHA):
        raise ValueError(f"cost '{cost}' cannot use alpha = {alpha} (see NEEDS_POSITIVE_ALPHA)")
    codes = np.asarray(codes)
    classes = np.asarray(classes)
    counts = np.asarray(counts)
    domain_sizes = np.asarray(domain_sizes)
    if codes.ndim != 2 or codes.shape[1] == 0:
        raise ValueError("codes must be a 2-d array (T distinct tuples x M >= 1 QI columns)")
    n_tuples, n_attrs = codes.shape
    if classes.shape != (n_tuples,) or counts.shape != (n_tuples,):
        raise ValueError("classes and counts must have one entry per row of codes")
    if domain_sizes.shape != (n_attrs,):
        raise ValueError("domain_sizes must have one entry per QI column")
    for name, arr in (("codes", codes), ("classes", classes), ("counts", counts), ("domain_sizes", domain_sizes)):
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"{name} must hold integers")
    codes = codes.astype(np.int32, copy=False)
    classes = classes.astype(np.int64, copy=False)
    counts = counts.astype(np.int64, copy=False)
    domain_sizes = domain_sizes.astype(np.int64, copy=False)
    if n_tuples == 0:
        raise ValueError("the count table is empty")
    if (counts < 1).any():
        raise ValueError("counts N(y,c) must be >= 1")
    if (classes < 0).any():
        raise ValueError("class codes must be >= 0")
    if (domain_sizes < 0).any() or (codes < NULL).any() or (codes >= domain_sizes[None, :]).any():
        raise ValueError("QI codes must be -1 (NULL) or 0..domain_sizes[j]-1")
    n = int(counts.sum())
    k = int(k)
    if k > n:
        raise ValueError(f"k = {k} exceeds the N = {n} records of the count table: no grouping reaches it")

    n_classes = int(classes.max()) + 1
    order = lexicographic_order([*codes.T, classes], [*domain_sizes, n_classes])
    codes, classes, counts = codes[order], classes[order], counts[order]
    if n_tuples > 1:
        same = (codes[1:] == codes[:-1]).all(axis=1) & (classes[1:] == classes[:-1])
        if same.any():
            raise ValueError("rows (y, c) of the count table must be distinct")
    if not np.bincount(classes, minlength=n_classes).all():  # not np.unique: it imports numpy.ma (~8 ms of a start)
        raise ValueError("class codes must be 0..|C|-1 with every class present")
    hists = [h[order] for h in _sensitive(sensitive, models, n_tuples)]
    if any((h.sum(axis=1) != counts).any() for h in hists):
        raise ValueError("each sensitive histogram row must sum to the row's count N(y,c)")
    check_whole_table(models, [h.sum(axis=0) for h in hists])
    attr = attribute_counts(codes, classes, counts, domain_sizes, n_classes)
    phat = [conditional(a, alpha) for a in attr]
    with np.errstate(divide="ignore"):
        log_phat = [np.log(p) for p in phat]
    prior = class_prior(np.bincount(classes, weights=counts, minlength=n_classes), alpha)
    table, a_row, a_shift, v_rows, v_shift = _log_tables(alpha, domain_sizes, n)
    return PreparedTable(
        codes=np.ascontiguousarray(codes), classes=classes, counts=counts, domain_sizes=domain_sizes,
        n_classes=n_classes, order=order, k=k, cost=cost, alpha=alpha, attr_counts=attr,
        log_phat=log_phat, phat=phat, class_prior=prior, log_table=table, a_row=a_row,
        a_shift=a_shift, v_rows=v_rows, v_shift=v_shift, sensitive=hists, models=tuple(models),
        sensitive_tables=[h.sum(axis=0) for h in hists], count_logs=_count_logs(n) if models else None,
    )


def _count_logs(n: int) -> np.ndarray:
    """ln i for i = 0..n (ln 0 = -inf, never read: 0 ln 0 is 0)."""
    with np.errstate(divide="ignore"):
        return np.log(np.arange(n + 1, dtype=np.float64))


def _sensitive(sensitive: Sequence[np.ndarray], models: Sequence[Model], n_tuples: int) -> list[np.ndarray]:
    """The sensitive histograms as (T, V_s + 1) int64 arrays, checked against the models."""
    hists = [np.asarray(h) for h in sensitive]
    for h in hists:
        if h.ndim != 2 or h.shape[0] != n_tuples or h.shape[1] == 0 or not np.issubdtype(h.dtype, np.integer) \
                or (h < 0).any():
            raise ValueError("sensitive histograms must be (T, V+1) arrays of counts >= 0, one row per tuple")
    if any(not 0 <= m.column < len(hists) for m in models):
        raise ValueError("a model names a sensitive column without a histogram")
    return [h.astype(np.int64) for h in hists]


def finish(prepared: PreparedTable, final_codes: np.ndarray, gammas, iterations: int, seed: int,
           solo: int, cross: int, groups: int) -> KanonResult:
    """Map canonical results back to the caller's row order and compute the report figures."""
    new_null = (final_codes < 0) & (prepared.codes >= 0)
    suppressed = int((new_null.sum(axis=1) * prepared.counts).sum())
    anon = attribute_counts(final_codes, prepared.classes, prepared.counts, prepared.domain_sizes, prepared.n_classes)
    class_counts = np.bincount(prepared.classes, weights=prepared.counts, minlength=prepared.n_classes)
    kl = kl_divergence(prepared.attr_counts, anon, class_counts, prepared.alpha)
    out = np.empty_like(final_codes)
    out[prepared.order] = final_codes
    return KanonResult(
        final_codes=out, iterations=int(iterations), gammas=np.asarray(gammas, dtype=np.float64),
        suppressed_cells=suppressed, kl_divergence=kl, cost=prepared.cost, k=prepared.k,
        alpha=prepared.alpha, seed=seed, solo_suppressions=solo, cross_class_suppressions=cross,
        total_cells=prepared.n_rows * prepared.codes.shape[1], groups=groups,
    )
