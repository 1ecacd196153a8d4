"""Kameya & Hayashi (2016) bottom-up cell suppression, on arrays (anonsql.kanon).

Golden examples with Γ computed by hand from eqs. 1, 2, 10-12; the corner cases the paper
leaves open; the telescoping invariant sum(Γ_mar) = KL (eqs. 7-8); and the compiled loop
against the plain reference loop, on random tables and on Adult.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonsql.kanon import COSTS, algorithm, anonymize, fast, kl_divergence, reference
from anonsql.kanon.model import prepare

L = math.log


def table(rows):
    """(codes, classes, counts) from [((y_1, ..., y_M), c, n), ...]; None is ⊥."""
    codes = np.array([[-1 if v is None else v for v in y] for y, _, _ in rows], dtype=np.int32)
    return codes, np.array([c for _, c, _ in rows]), np.array([n for _, _, n in rows])


def groups_are_k_anonymous(result, classes, counts, k):
    """Every final QI pattern holds >= k records, summed over classes (Section 2.2)."""
    totals: dict[tuple, int] = {}
    for pattern, n in zip(map(tuple, result.final_codes.tolist()), counts.tolist()):
        totals[pattern] = totals.get(pattern, 0) + n
    return min(totals.values()) >= k


# --- golden example 1: four tuples, one class, costs disagree and tie -------------------------
# t = (0,0) n=1 violates k=2; candidates r1 = (0,1) n=4, r2 = (1,0) n=4, r3 = (1,1) n=3.
# N = 12, p̂(c) = 1; both attributes: N(0) = 5, N(1) = 7, p̂(0) = 6/14 = 3/7, p̂(1) = 4/7.
SQUARE = [((0, 0), 0, 1), ((0, 1), 0, 4), ((1, 0), 0, 4), ((1, 1), 0, 3)]
# eq. 10, one differing attribute: t's value 0 (N=5, w=1), partner's value 1 (N=7, w=n'), D=12, |V|=2
MAR_R1 = 3 / 7 * L(6 / 5) + 4 / 7 * L(8 / 4) + L((12 - 5 + 2) / 14)  # = Γ_mar(t, r2), symmetric
MAR_R3 = 2 * (3 / 7 * L(6 / 5) + 4 / 7 * L(8 / 5) + L((12 - 4 + 2) / 14))  # both attributes
INFO_R1 = -(L(3 / 7) + 4 * L(4 / 7))  # eq. 2
INFO_R3 = -2 * (L(3 / 7) + 3 * L(4 / 7))


def test_square_hand_computed_costs():
    assert MAR_R3 < MAR_R1  # mar prefers suppressing both cells against the 3-record tuple
    assert MAR_R1 * 5 < MAR_R3 * 8  # hybrid (eq. 12, Γ_mar > 0: Γ_mar * Γ_ham) does not
    codes, classes, counts = table(SQUARE)
    expected = {  # cost: (Γ of the merge, pattern t ends with)
        "ham": (5.0, (0, -1)),  # Γ_ham(t,r1) = Γ_ham(t,r2) = 1+4 = 5 < 8: tie, smaller key r1 wins
        "info": (INFO_R1, (0, -1)),  # ties the same way (r1 and r2 are symmetric)
        "mar": (MAR_R3, (-1, -1)),
        "hybrid": (MAR_R1 * 5, (0, -1)),
    }
    for cost, (gamma, pattern) in expected.items():
        r = anonymize(codes, classes, counts, [2, 2], k=2, cost=cost)
        assert r.iterations == 1
        assert r.gammas[0] == pytest.approx(gamma, rel=1e-12)
        assert tuple(r.final_codes[0]) == pattern
    mar = anonymize(codes, classes, counts, [2, 2], k=2, cost="mar")
    assert mar.final_codes.tolist() == [[-1, -1], [0, 1], [1, 0], [-1, -1]]
    assert mar.suppressed_cells == 2 * 1 + 2 * 3
    assert mar.kl_divergence == pytest.approx(MAR_R3, rel=1e-12)  # eq. 8 telescopes to eq. 7


def test_tie_goes_to_smallest_key_whatever_the_input_order():
    codes, classes, counts = table(SQUARE)
    for perm in ([3, 2, 1, 0], [2, 0, 3, 1], [1, 3, 0, 2]):
        r = anonymize(codes[perm], classes[perm], counts[perm], [2, 2], k=2, cost="ham")
        back = np.empty_like(r.final_codes)
        back[perm] = r.final_codes
        # r1 = (0,1) precedes r2 = (1,0) in the canonical (lexicographic) order
        assert back.tolist() == [[0, -1], [0, -1], [1, 0], [1, 1]]


# --- golden example 2: ⊥ in the input, two classes, u equal to t's pattern ---------------------
# class 0: t = (0,⊥) n=1 (violates k=2), r1 = (0,1) n=2, r2 = (1,⊥) n=2; class 1: (1,1) n=3.
# p̂(c0) = (5+1)/(8+2) = 0.6. Class 0, attribute 1: N(0)=3, N(1)=2, D=5 -> p̂ = 4/7, 3/7;
# attribute 2: N(0)=0, N(1)=2, D=2 (⊥ left out) -> p̂ = 1/4, 3/4.
NULLS = [((0, None), 0, 1), ((0, 1), 0, 2), ((1, None), 0, 2), ((1, 1), 1, 3)]
MAR_NULL_R1 = 0.6 * (3 / 4 * L(3 / 1) + L((2 - 2 + 2) / (2 + 2)))  # w_2(t) = 0: no a_t term
MAR_NULL_R2 = 0.6 * (4 / 7 * L(4 / 3) + 3 / 7 * L(3 / 1) + L((5 - 3 + 2) / 7))
INFO_NULL_R1 = -(2 * L(3 / 4))  # log p̂(⊥|c) = 0


def test_nulls_in_input_hand_computed():
    assert MAR_NULL_R2 < MAR_NULL_R1
    codes, classes, counts = table(NULLS)
    ham = anonymize(codes, classes, counts, [2, 2], k=2, cost="ham")
    # Γ_ham(t,r1) = 0 + 2 (t's ⊥ is not suppressed again) < Γ_ham(t,r2) = 1 + 2
    assert ham.gammas.tolist() == [2.0]
    # u = (0,⊥) is t's own pattern: r1 joins it (Alg. 3 removes t and r1, then adds u)
    assert ham.final_codes.tolist() == [[0, -1], [0, -1], [1, -1], [1, 1]]
    assert ham.suppressed_cells == 2
    info = anonymize(codes, classes, counts, [2, 2], k=2, cost="info")
    assert info.gammas[0] == pytest.approx(INFO_NULL_R1, rel=1e-12)
    mar = anonymize(codes, classes, counts, [2, 2], k=2, cost="mar")
    assert mar.gammas[0] == pytest.approx(MAR_NULL_R2, rel=1e-12)
    assert mar.final_codes.tolist() == [[-1, -1], [0, 1], [-1, -1], [1, 1]]
    assert mar.kl_divergence == pytest.approx(MAR_NULL_R2, rel=1e-12)


def test_kl_divergence_by_hand():
    # attribute counts of golden example 1 before / after the mar merge (one class)
    before = [np.array([[5], [7]]), np.array([[5], [7]])]
    after = [np.array([[4], [4]]), np.array([[4], [4]])]
    one = 3 / 7 * L((3 / 7) / (5 / 10)) + 4 / 7 * L((4 / 7) / (5 / 10))
    assert kl_divergence(before, after, np.array([12]), 1.0) == pytest.approx(2 * one, rel=1e-12)
    assert kl_divergence(before, before, np.array([12]), 1.0) == 0.0
    # α = 0 and a value gone from the class: q̂ = 0 where p̂ > 0
    assert kl_divergence([np.array([[1], [1]])], [np.array([[1], [0]])], np.array([2]), 0.0) == math.inf


# --- the random pick ------------------------------------------------------------------------------
def test_violating_tuple_is_drawn_by_rank_from_the_documented_stream():
    # two violating tuples, one per class, each with one same-class partner; Γ_ham differs
    rows = [((0, 0), 0, 1), ((0, 1), 0, 5), ((1, 1), 1, 1), ((1, 0), 1, 2)]
    codes, classes, counts = table(rows)
    for seed in range(6):
        first = np.random.default_rng(seed).random(8)[0]
        # violating keys in canonical order: (0,0)c0 = key 0, (1,1)c1 = key 3
        picked = [0, 3][int(first * 2)]
        r = anonymize(codes, classes, counts, [2, 2], k=2, cost="ham", seed=seed)
        assert r.gammas[0] == {0: 1 + 5, 3: 1 + 2}[picked]


# --- corner cases ---------------------------------------------------------------------------------
def test_lone_tuple_of_a_class_is_suppressed_alone_then_another_class_gives_way():
    # class 1 holds a single record: no same-class partner exists (corner case a)
    rows = [((0, 0), 0, 3), ((1, 1), 0, 3), ((1, 0), 1, 1)]
    codes, classes, counts = table(rows)
    for cost in COSTS:
        r = anonymize(codes, classes, counts, [2, 2], k=2, cost=cost)
        assert (r.iterations, r.solo_suppressions, r.cross_class_suppressions) == (2, 1, 1)
        # (1,0)c1 -> (⊥,⊥) alone (N = 1 < 2), then the cheapest class-0 tuple is fully
        # suppressed: (0,0) and (1,1) cost the same by symmetry, the smaller key (0,0) gives way
        assert r.final_codes.tolist() == [[-1, -1], [1, 1], [-1, -1]]
        assert groups_are_k_anonymous(r, classes, counts, 2)
    ham = anonymize(codes, classes, counts, [2, 2], k=2, cost="ham")
    assert ham.gammas.tolist() == [2.0, 6.0]  # eq. 1 against an empty all-⊥ tuple
    mar = anonymize(codes, classes, counts, [2, 2], k=2, cost="mar")
    assert mar.gammas.sum() == pytest.approx(mar.kl_divergence, rel=1e-12)


def test_k_one_and_already_anonymous_tables_change_nothing():
    for k, rows in ((1, SQUARE), (3, [((0, 0), 0, 3), ((0, 0), 1, 1), ((1, None), 0, 4)])):
        codes, classes, counts = table(rows)
        r = anonymize(codes, classes, counts, [2, 2], k=k, cost="mar")
        assert r.iterations == 0 and r.suppressed_cells == 0 and r.kl_divergence == 0.0
        assert np.array_equal(r.final_codes, codes)


def test_merging_in_one_class_can_make_another_class_violate():
    # (0,0) is shared by c0 (n=1) and c1 (n=1): N((0,0)) = 2 = k, so neither violates at first.
    # (1,1)c0 violates and its only partner is (0,0)c0; after the merge (0,0)c1 is alone.
    rows = [((0, 0), 0, 1), ((0, 0), 1, 1), ((1, 1), 0, 1), ((0, 1), 1, 1)]
    codes, classes, counts = table(rows)
    for cost in COSTS:
        r = anonymize(codes, classes, counts, [2, 2], k=2, cost=cost)
        assert groups_are_k_anonymous(r, classes, counts, 2)
        assert r.iterations >= 2


def test_column_that_is_entirely_null():
    rows = [((None, 0), 0, 1), ((None, 1), 0, 2), ((None, 1), 1, 1), ((None, 0), 1, 3)]
    codes, classes, counts = table(rows)
    for cost in COSTS:
        fast = anonymize(codes, classes, counts, [0, 2], k=3, cost=cost)
        ref = anonymize(codes, classes, counts, [0, 2], k=3, cost=cost, reference=True)
        assert np.array_equal(fast.final_codes, ref.final_codes)
        assert groups_are_k_anonymous(fast, classes, counts, 3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 13}, "exceeds the N = 12 records"),
        ({"k": 2, "cost": "euclid"}, "unknown cost"),
        ({"k": 2, "alpha": 0.0}, "cannot use alpha = 0.0"),
        ({"k": 2, "alpha": -1.0}, "cannot use alpha = -1.0"),
    ],
)
def test_bad_arguments(kwargs, message):
    codes, classes, counts = table(SQUARE)
    with pytest.raises(ValueError, match=message):
        anonymize(codes, classes, counts, [2, 2], **kwargs)


def test_bad_arrays():
    codes, classes, counts = table(SQUARE)
    with pytest.raises(ValueError, match="distinct"):
        anonymize(np.vstack([codes, codes[:1]]), np.r_[classes, 0], np.r_[counts, 1], [2, 2], k=2)
    with pytest.raises(ValueError, match="QI codes"):
        anonymize(codes, classes, counts, [2, 1], k=2)
    with pytest.raises(ValueError, match="every class"):
        anonymize(codes, classes + 1, counts, [2, 2], k=2)
    with pytest.raises(ValueError, match=">= 1"):
        anonymize(codes, classes, counts - 1, [2, 2], k=2)
    assert anonymize(codes, classes, counts, [2, 2], k=2, cost="info", alpha=0.0).iterations == 1


def test_compiled_loop_is_built():
    # without it anonymize() falls back to the reference loop (with a RuntimeWarning) and the
    # comparisons below compare the reference with itself
    assert algorithm._fast is not None, "anonsql.kanon._core is not built: run `pip install -e .`"


def test_progress_and_missing_extension_fallback(monkeypatch):
    codes, classes, counts = table(SQUARE)
    calls = []
    r = anonymize(codes, classes, counts, [2, 2], k=2, progress=lambda i, v: calls.append((i, v)))
    assert calls == [(0, 1)]  # iteration 0, one violating tuple

    def stop(iteration, violating):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):  # the callback can abort the compiled loop
        anonymize(codes, classes, counts, [2, 2], k=2, progress=stop)
    monkeypatch.setattr(algorithm, "_fast", None)
    monkeypatch.setattr(algorithm, "_FAST_MISSING", "not built", raising=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        slow = anonymize(codes, classes, counts, [2, 2], k=2)
    assert any("reference loop" in str(w.message) for w in caught)
    assert np.array_equal(slow.final_codes, r.final_codes)


# --- properties on random tables -------------------------------------------------------------------
@st.composite
def count_tables(draw):
    n_attrs = draw(st.integers(1, 4))
    sizes = [draw(st.integers(1, 4)) for _ in range(n_attrs)]
    n_rows = draw(st.integers(1, 40))
    with_nulls = draw(st.booleans())
    rows = {}
    for _ in range(n_rows):
        y = tuple(draw(st.integers(-1 if with_nulls else 0, s - 1)) for s in sizes)
        rows[(y, draw(st.integers(0, 2)))] = draw(st.sampled_from([1, 1, 1, 2, 3, 7, 20]))
    classes = pd.factorize(np.array([c for _, c in rows]))[0]
    codes = np.array([y for y, _ in rows], dtype=np.int32).reshape(len(rows), n_attrs)
    counts = np.array(list(rows.values()))
    k = draw(st.integers(1, min(int(counts.sum()), 12)))
    return codes, classes, counts, sizes, k


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(count_tables(), st.sampled_from(COSTS), st.sampled_from([1.0, 0.5, 2.0]), st.integers(0, 2**31))
def test_compiled_loop_matches_reference_and_output_is_k_anonymous(tab, cost, alpha, seed):
    codes, classes, counts, sizes, k = tab
    fast = anonymize(codes, classes, counts, sizes, k=k, cost=cost, alpha=alpha, seed=seed)
    ref = anonymize(codes, classes, counts, sizes, k=k, cost=cost, alpha=alpha, seed=seed, reference=True)
    assert np.array_equal(fast.final_codes, ref.final_codes)
    assert np.array_equal(fast.gammas, ref.gammas)
    assert (fast.iterations, fast.solo_suppressions, fast.cross_class_suppressions, fast.groups) == (
        ref.iterations, ref.solo_suppressions, ref.cross_class_suppressions, ref.groups)
    assert groups_are_k_anonymous(fast, classes, counts, k)
    # only suppression happened: every cell is kept or becomes ⊥
    assert ((fast.final_codes == codes) | (fast.final_codes == -1)).all()
    assert fast.iterations < 2 * len(counts)
    assert fast.suppressed_cells == int((((fast.final_codes == -1) & (codes >= 0)).sum(axis=1) * counts).sum())
    if cost == "ham":  # eq. 1 counts exactly the newly suppressed cells
        assert fast.gammas.sum() == fast.suppressed_cells
    if cost == "mar":  # eq. 8 telescopes: the ΔKL of all steps add up to KL(p̂, q̂_final) of eq. 7
        assert fast.gammas.sum() == pytest.approx(fast.kl_divergence, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("cost", ["mar", "ham"])
def test_compiled_loop_matches_reference_with_many_classes_and_a_wide_attribute(cost):
    """400 classes x a 1,000-value QI: the kernel's per-(class, band, value) presence table would
    outweigh its tries (C x bands x values > 7 T M + 2^20), so it runs without it; same decisions."""
    rng = np.random.default_rng(7)
    rows = {(int(rng.integers(1000)), int(rng.integers(3)), int(rng.integers(400))) for _ in range(1500)}
    table = np.array(sorted(rows))
    codes, classes = table[:, :2].astype(np.int32), np.unique(table[:, 2], return_inverse=True)[1]
    counts = rng.choice([1, 1, 2, 5, 30], size=len(table))
    sizes = np.array([int(codes[:, 0].max()) + 1, 3])
    fast = anonymize(codes, classes, counts, sizes, k=3, cost=cost)
    ref = anonymize(codes, classes, counts, sizes, k=3, cost=cost, reference=True)
    bands = int(np.ceil(np.log2(counts.sum()))) + 1  # _core.c: room for doubling(rows) + 1 bands
    assert (classes.max() + 1) * bands * (sizes.sum() + 2) > 7 * len(counts) * 2 + 2**20  # presence is off here
    assert np.array_equal(fast.final_codes, ref.final_codes) and np.array_equal(fast.gammas, ref.gammas)
    assert groups_are_k_anonymous(fast, classes, counts, 3)


# --- Adult (Section 4), k = 10 ----------------------------------------------------------------------
QI = ["age", "workclass", "education", "marital_status", "occupation", "race", "sex", "native_country"]


@pytest.fixture(scope="module")
def adult():
    """The paper's preprocessing: 8 QIs, age in 5-year bins with [80,95), rows with '?' dropped."""
    path = Path(__file__).resolve().parents[1] / "fixtures" / "adult.csv.gz"
    df = pd.read_csv(path, skipinitialspace=True, na_values="?").dropna(subset=QI + ["income"])
    df["age"] = pd.cut(df["age"], bins=list(range(15, 85, 5)) + [95], right=False)
    codes, sizes = [], []
    for col in QI:
        c, uniques = pd.factorize(df[col])
        codes.append(c)
        sizes.append(len(uniques))
    records = pd.DataFrame(np.column_stack(codes + [pd.factorize(df["income"])[0]]))
    grouped = records.groupby(list(records.columns)).size().reset_index(name="n").to_numpy()
    return grouped[:, :8].astype(np.int32), grouped[:, 8], grouped[:, 9], np.array(sizes)


@pytest.mark.parametrize("cost", ["ham", "mar"])
def test_trie_order_changes_speed_only(adult, cost, monkeypatch):
    if algorithm._fast is None:
        pytest.skip("compiled loop not built (see test_compiled_loop_is_built)")
    codes, classes, counts, sizes = adult
    default = anonymize(codes, classes, counts, sizes, k=10, cost=cost)
    for order in (np.arange(8), np.arange(8)[::-1].copy(), np.array([3, 7, 0, 5, 1, 6, 2, 4])):
        monkeypatch.setattr(algorithm._fast, "trie_order", lambda problem, order=order: order.astype(np.int64))
        other = anonymize(codes, classes, counts, sizes, k=10, cost=cost)
        assert np.array_equal(other.final_codes, default.final_codes)
        assert np.array_equal(other.gammas, default.gammas)


def test_adult_shape(adult):
    codes, classes, counts, sizes = adult
    assert (len(counts), counts.sum(), len(set(classes))) == (13_330, 30_161, 2)
    assert sizes.tolist() == [14, 7, 16, 7, 14, 5, 2, 40]


@pytest.mark.slow
@pytest.mark.parametrize("cost", COSTS)
def test_adult_compiled_loop_matches_reference(adult, cost):
    codes, classes, counts, sizes = adult
    fast = anonymize(codes, classes, counts, sizes, k=10, cost=cost)
    ref = anonymize(codes, classes, counts, sizes, k=10, cost=cost, reference=True)
    assert np.array_equal(fast.final_codes, ref.final_codes)
    assert np.array_equal(fast.gammas, ref.gammas)
    assert groups_are_k_anonymous(fast, classes, counts, 10)
    # Fig. 1 shape, and an independent implementation: mar ~45% suppressed, KL ~0.006;
    # ham ~22%, KL ~0.37; info and hybrid in between on suppression, KL close to mar's
    ratio, kl = fast.suppressed_ratio, fast.kl_divergence
    expected = {"ham": ((0.18, 0.26), (0.30, 0.42)), "info": ((0.30, 0.42), (0.02, 0.06)),
                "mar": ((0.42, 0.50), (0.004, 0.008)), "hybrid": ((0.34, 0.44), (0.004, 0.008))}[cost]
    assert expected[0][0] < ratio < expected[0][1]
    assert expected[1][0] < kl < expected[1][1]
    if cost == "mar":
        assert fast.gammas.sum() == pytest.approx(kl, rel=1e-9)


# --- the C kernel boundary: wrong buffers raise a clear error, never crash ----------------------
def kernel_arguments():
    """Valid keyword arguments of fast.kernel for SQUARE, k = 2 (built the way fast.run builds them)."""
    codes, classes, counts = table(SQUARE)
    prepared = prepare(codes, classes, counts, [2, 2], k=2, cost="mar", alpha=1.0)
    captured = {}

    def capture(**kwargs):
        captured.update(kwargs)
        return 0, 0, 0, 0, 0

    real = fast.kernel
    fast.kernel = capture
    try:
        fast.run(prepared, np.random.default_rng(0).random(8))
    finally:
        fast.kernel = real
    return captured


def test_kernel_runs_on_valid_buffers():
    args = kernel_arguments()
    iterations, solo, cross, groups, _evaluations = fast.kernel(**args)
    assert iterations == 1 and groups == 3


@pytest.mark.parametrize(
    ("name", "bad", "error", "message"),
    [
        ("classes", lambda a: a.astype(np.int32), TypeError, "classes must have dtype int64, got int32"),
        ("codes", lambda a: a.astype(np.int64), TypeError, "codes must have dtype int32"),
        ("counts", lambda a: a[:-1], ValueError, r"counts must have shape \(4,\)"),
        ("phat", lambda a: np.repeat(a, 2)[::2], ValueError, "phat must be C-contiguous"),
        ("final", lambda a: np.zeros((4, 4), np.int32)[:, :2], ValueError, "final must be C-contiguous"),
        ("gammas", lambda a: a[:-1].copy(), ValueError, "gammas must have shape"),
        ("draws", lambda a: list(a), ValueError, "draws must be a 1-d numpy array"),
        ("order", lambda a: np.zeros_like(a), ValueError, "order must be a permutation"),
        ("voff", lambda a: a + 1, ValueError, "voff must start at 0"),
        ("codes", lambda a: a + 5, ValueError, "codes of attribute j"),
        ("classes", lambda a: a + 3, ValueError, "class codes must be 0..0"),
        ("a_base", lambda a: 10**6, ValueError, "past the end of log_table"),
        ("cost", lambda a: "euclid", ValueError, "unknown cost"),
    ],
)
def test_kernel_refuses_wrong_buffers(name, bad, error, message):
    args = kernel_arguments()
    args[name] = bad(args[name])
    with pytest.raises(error, match=message):
        fast.kernel(**args)


def test_kernel_refuses_read_only_output_and_positional_arguments():
    args = kernel_arguments()
    args["final"].flags.writeable = False
    with pytest.raises(ValueError, match="final is an output and must be writable"):
        fast.kernel(**args)
    with pytest.raises(TypeError):
        fast.kernel(*kernel_arguments().values())  # keyword arguments only


def test_compiled_core_checks_buffer_sizes_itself():
    """Even bypassing the wrapper, a short buffer is a ValueError from the C code, not a crash."""
    a = kernel_arguments()
    n_tuples, n_attrs = a["codes"].shape
    positional = [a["codes"], a["classes"][:-1], a["counts"], a["voff"], a["attr_counts"], a["phat"],
                  a["log_phat"], a["class_prior"], a["log_table"], a["a_base"], a["v_base"], a["order"],
                  a["draws"], n_tuples, n_attrs, len(a["class_prior"]), 2, 2, 1.0, a["final"], a["gammas"], None,
                  0, 0, np.zeros((n_tuples, 0), np.int64), *(np.zeros(0, np.int64) for _ in range(3)),
                  *(np.zeros(0) for _ in range(4))]  # no attribute-disclosure models
    with pytest.raises(ValueError, match="buffer b_cls has 24 bytes, expected 32"):
        fast._core.run(*positional)
    with pytest.raises(TypeError):
        fast._core.run(*positional[:5])


def test_pruning_stays_exact_where_merge_costs_are_tiny():
    """5 x 10^6 rows in 200 heavy tuples plus 1,500 light violating ones over the same values:
    the counts N(x_j, c) are ~6 x 10^5, so eq. 10's terms are ~1e-6 and their sum Γ ~1e-12 or
    less (first orders cancel). The old absolute allowance (M x 1e-12, times p̂(c)) exceeds |Γ| of
    most steps here, so it pruned nothing; the allowance derived in _core.c (relative to the
    magnitudes involved) still prunes almost every candidate, and the decisions and every Γ
    equal the reference loop's bit for bit."""
    rng = np.random.default_rng(1)
    n_attrs, n_values, n_classes = 6, 4, 2
    combos = rng.permutation(n_values ** n_attrs)[:1700]
    codes = np.stack([(combos // n_values ** j) % n_values for j in range(n_attrs)], axis=1)
    classes = rng.integers(0, n_classes, size=len(codes))
    counts = np.concatenate([rng.integers(24_000, 26_000, size=200), rng.integers(1, 3, size=1500)])
    prepared = prepare(codes, classes, counts, np.full(n_attrs, n_values), k=5, cost="mar", alpha=1.0)
    draws = np.random.default_rng(0).random(2 * len(prepared.counts))
    evaluations = {}
    real = fast.kernel

    def counting(**kwargs):
        out = real(**kwargs)
        evaluations["n"] = out[4]
        return out

    fast.kernel = counting
    try:
        final, gammas, *_ = fast.run(prepared, draws)
    finally:
        fast.kernel = real
    ref_final, ref_gammas, *_ = reference.run(prepared, draws)
    old_allowance = n_attrs * 1e-12 * prepared.class_prior.min()
    share = np.mean(np.abs(gammas) < old_allowance)
    assert share > 0.9  # the regime where the old constant pruned nothing
    assert evaluations["n"] < 0.01 * len(gammas) * len(codes)  # ... and the derived bound prunes
    assert np.array_equal(final, ref_final) and np.array_equal(gammas, ref_gammas)


@pytest.mark.parametrize("cost", COSTS)
def test_compiled_loop_matches_reference_with_counts_in_every_band(cost):
    """Counts spread log-uniformly over 1..2x10^4, many tuples in each doubling ({1}, {2}, {3,4},
    ..., {8193..16384}); in _core.c's count bands: the narrow ones up to 16, bounded from per-value
    lines, then (fewer than 30,000 tuples in all) one tail band from 17 up, bounded by eq. 10's
    closed-form minimum; every band is searched by its bounds, not scanned leaf by leaf. The
    violating tuples (k = 60) fall in the bands up to 64, their partners anywhere. Same decisions
    and Γ as the reference loop, bit for bit."""
    rng = np.random.default_rng(11)
    n_attrs, n_values = 5, 5
    combos = rng.permutation(n_values ** n_attrs)[:1200]
    codes = np.stack([(combos // n_values ** j) % n_values for j in range(n_attrs)], axis=1).astype(np.int32)
    codes[rng.random(codes.shape) < 0.05] = -1
    classes = rng.integers(0, 2, size=len(codes))
    codes = np.unique(np.column_stack([codes, classes]), axis=0)
    classes, codes = codes[:, -1], np.ascontiguousarray(codes[:, :-1])
    counts = np.exp(rng.uniform(0, np.log(2e4), size=len(codes))).astype(np.int64)
    bands = [(1, 1), *(((1 << (e - 1)) + 1, 1 << e) for e in range(1, 15))]
    assert all(((lo <= counts) & (counts <= hi)).sum() >= 20 for lo, hi in bands)
    fast_run = anonymize(codes, classes, counts, np.full(n_attrs, n_values), k=60, cost=cost)
    ref = anonymize(codes, classes, counts, np.full(n_attrs, n_values), k=60, cost=cost, reference=True)
    assert fast_run.iterations > 300
    assert np.array_equal(fast_run.final_codes, ref.final_codes) and np.array_equal(fast_run.gammas, ref.gammas)
    assert groups_are_k_anonymous(fast_run, classes, counts, 60)


def test_search_started_from_a_tuple_of_its_own_band_still_gives_ties_to_the_smallest_key():
    """_core.c starts the search for t* from the exact Γ of a tuple near t in t's own count band.
    Here t = (0,0,⊥) (n = 2, band {2}) is the only violating tuple (k = 3; class 1's
    twins of the other patterns keep them at N(y) >= 6); that start is s = (1,0,⊥) (n = 2),
    Γ_ham = 2 + 2 = 4. Band {1} holds four tuples, enough to be searched by its bounds rather than
    leaf by leaf, and w = (0,1,1) there ties: (2 + 1) + (0 + 1) = 4 with a smaller key. w must win,
    met after s: neither the bound test (subtree bound 4 = best, smaller key below) nor the leaf
    test may keep the first tuple found."""
    rows = [((0, 0, None), 0, 2), ((1, 0, None), 0, 2),
            ((0, 1, 1), 0, 1), ((1, 1, 0), 0, 1), ((1, 1, 1), 0, 1), ((1, 0, 1), 0, 1)]
    rows += [(y, 1, 5) for y, _, _ in rows[1:]]
    codes, classes, counts = table(rows)
    sizes = [2, 2, 2]
    r = anonymize(codes, classes, counts, sizes, k=3, cost="ham")
    ref = anonymize(codes, classes, counts, sizes, k=3, cost="ham", reference=True)
    assert r.iterations == 1 and r.gammas.tolist() == [4.0]
    assert r.final_codes[:3].tolist() == [[0, -1, -1], [1, 0, -1], [0, -1, -1]]  # t merged with w, not s
    assert np.array_equal(r.final_codes, ref.final_codes) and np.array_equal(r.gammas, ref.gammas)


def _core_tail_start(counts, tail_pop=30_000, fine_bands=4):
    """_core.c band_partition: the smallest count of the tail band for these live counts."""
    doubling = np.where(counts <= 1, 0, np.ceil(np.log2(np.maximum(counts, 1))).astype(int))
    hist = np.bincount(doubling, minlength=64)
    tail, pop = 63, hist[63]
    while tail > fine_bands + 1 and pop + hist[tail - 1] < tail_pop:
        pop += hist[tail - 1]
        tail -= 1
    return (1 << (tail - 1)) + 1


@pytest.mark.slow
@pytest.mark.parametrize("cost", ["mar", "ham"])
def test_compiled_loop_matches_reference_with_doubling_bands_below_the_tail(cost):
    """33,000 tuples, 31,500 of them heavy (17..3x10^4): more than the 30,000 tuples _core.c lets
    into its tail band, so {17..32} stays a doubling band of its own below a tail from 33 up. The
    violating tuples have counts at the band edges (1, 2, 3, 9, 16, 17); their merges make counts
    in {5..8}, a band empty at the start, and move tuples across edges into the doubling bands and
    the tail. Same decisions and Γ as the reference loop, bit for bit."""
    rng = np.random.default_rng(5)
    n_attrs, n_values = 6, 6
    combos = rng.permutation(n_values ** n_attrs)[:33_000]
    codes = np.stack([(combos // n_values ** j) % n_values for j in range(n_attrs)], axis=1).astype(np.int32)
    classes = rng.integers(0, 2, size=len(codes))
    heavy = np.exp(rng.uniform(np.log(17), np.log(3e4), size=31_500)).astype(np.int64)
    counts = np.concatenate([heavy, rng.choice([1, 1, 2, 3, 9, 16, 17], size=1_500)])
    rng.shuffle(counts)
    assert _core_tail_start(counts) == 33 and ((counts >= 17) & (counts <= 32)).sum() > 2_000
    assert not ((counts >= 5) & (counts <= 8)).any()
    sizes = np.full(n_attrs, n_values)
    fast_run = anonymize(codes, classes, counts, sizes, k=20, cost=cost)
    ref = anonymize(codes, classes, counts, sizes, k=20, cost=cost, reference=True)
    assert fast_run.iterations > 1_000
    assert np.array_equal(fast_run.final_codes, ref.final_codes) and np.array_equal(fast_run.gammas, ref.gammas)
    assert groups_are_k_anonymous(fast_run, classes, counts, 20)
