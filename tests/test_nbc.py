"""Mozafari & Zaniolo (2009): golden examples, property tests, and the SQL job on both engines."""

import dataclasses
import json
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anonsql
from anonsql import api, catalog, cli
from anonsql.errors import AnonsqlError, VerificationError
from anonsql.nbc import breach
from anonsql.nbc import equivalence as eq
from anonsql.nbc import job as nbc_job
from anonsql.nbc import verify as nbc_verify
from anonsql.nbc.est import est
from anonsql.nbc.transform import publish_safe, root_exponent, step1, step2, step3, validate
from anonsql.nbc.views import Viewset, amplification, is_safe, k_sind, smallest_rho
from anonsql.report import Check

from .conftest import table_rows

# Figure 1: classes [50K, 70K] (70K has precedence); Adr values [P, W]; Age values [30, 40].
V1 = Viewset([2, 5], [[[1, 1], [1, 4]], [[1, 1], [1, 4]]])
V2 = Viewset([2, 3], [[[1, 1], [1, 2]], [[1, 1], [1, 2]]])


def full(view):
    return np.concatenate(list(eq.chunks(view)))


def equivalent(a, b):
    """Definition 2 by enumerating ΠA_i, independent of the meet in the middle."""
    return not eq.differences_on(a, b, full(a))


def figure1_views(view):
    """The paper's dict form of a Figure 1 viewset, for the breach enumerator."""
    labels, adr, age = ["50K", "70K"], ["P", "W"], [30, 40]
    P = dict(zip(labels, view.P))
    N = [{(vals[t], labels[c]): view.N[i][t][c] for t in range(2) for c in range(2)}
         for i, vals in enumerate((adr, age))]
    return P, N


# ---------- golden: Section 1 / Figure 1 ----------

def test_figure1_breach_v1_88_and_v2_78_percent():
    b1 = breach(*figure1_views(V1), {0: "W", 1: 40})
    assert b1.worlds == 10 and b1.posterior["70K"] == Fraction(22, 25)  # 88 %
    assert b1.prior["70K"] == Fraction(1, 2) and b1.class_share["70K"] == Fraction(5, 7)  # 50 % / 71 %
    b2 = breach(*figure1_views(V2), {0: "W", 1: 40})
    assert b2.worlds == 6 and b2.posterior["70K"] == Fraction(7, 9)  # 78 %


def test_figure1_both_classifiers_predict_50k_for_p30_and_are_equivalent():
    tau = np.array([[0, 0]])  # <P, 30>
    # 5·(1/5)(1/5) < 2·(1/2)(1/2): 50K (index 0) strictly beats 70K
    assert eq.relation(V1, tau, 0, 1)[0] and eq.relation(V2, tau, 0, 1)[0]
    assert equivalent(V1, V2)


def test_breach_refuses_inconsistent_views_and_too_many_worlds():
    P, N = figure1_views(V1)
    with pytest.raises(AnonsqlError, match="P_c says"):
        breach({**P, "70K": 6}, N, {0: "W"})
    big = Viewset([40, 40], [[[20, 20], [20, 20]]] * 3)
    labels = ["a", "b"]
    with pytest.raises(AnonsqlError, match="tiny tables"):
        breach(dict(zip(labels, big.P)),
               [{(t, labels[c]): big.N[i][t][c] for t in range(2) for c in range(2)} for i in range(3)], {0: 0})


# ---------- Corollary 4 ----------

def test_smallest_rho_is_max_ratio_to_the_n():
    assert amplification(V1) == 4 and smallest_rho(V1) == 16
    assert is_safe(V1, Fraction(16)) and not is_safe(V1, Fraction(159, 10))
    assert smallest_rho(Viewset([1, 2], [[[0, 2], [1, 0]]])) is None  # a zero: no rho
    assert k_sind(V1) == 2


# ---------- golden: Section 6.2.2, preserving ties ----------

TIE = Viewset([100, 100], [[[4, 2], [96, 98]], [[4, 8], [96, 92]]])  # N^1_t: 4 vs 2, N^2_t': 4 vs 8


def test_tie_example_fixed_precision_flips_it_but_step2_does_not():
    tau = np.array([[0, 0]])
    assert not eq.relation(TIE, tau, 0, 1)[0]  # 4·4 = 2·8: tie, class 2 wins
    # The paper's failure: square roots to 10^-2 give 2·2 = 4 > 1.41·2.83 = 3.9903 (class 1 wins).
    def two(x):
        return Decimal(x).sqrt().quantize(Decimal("0.01"), rounding="ROUND_DOWN")

    assert two(4) * two(4) > two(2) * two(8)
    # Step 2 with class-dependent offsets keeps the tie for the higher class at any precision.
    for bits in (4, 8, 16):
        s2 = step2(TIE, 2, bits)
        assert not eq.relation(s2, tau, 0, 1)[0]
        x1 = s2.N[0][0][0] * s2.N[1][0][0] / s2.P[0]
        x2 = s2.N[0][0][1] * s2.N[1][0][1] / s2.P[1]
        assert x2 > x1


def test_steps_1_and_3_keep_the_classifier_and_make_realistic_views():
    v = Viewset([3, 7], [[[0, 5], [3, 2]], [[2, 0], [1, 7]]])
    s1 = step1(v)
    assert all(x > 0 for x in s1.values()) and equivalent(v, s1)
    s3 = step3(s1)
    for i in range(2):
        for c in range(2):
            assert sum(row[c] for row in s3.N[i]) == s3.P[c]  # Statement 9a
    assert equivalent(v, s3)
    # Statement 9b: X is unchanged exactly
    def x(w, t, c):
        return w.P[c] ** (1 - 2) * w.N[0][t[0]][c] * w.N[1][t[1]][c]

    assert all(x(s1, t, c) == x(s3, t, c) for t in [(0, 0), (0, 1), (1, 0), (1, 1)] for c in (0, 1))


def test_step1_bound_needs_the_p_factor_of_eq2():
    # P = [2, 100]; A_1 = {a, b}: class 0 has N_a = 0; A_2 = {x}. Figure 3's literal bound
    # m_1/M_0 · M^1_0 = 5000/4 · 2 = 2500 lets s = 1250 make X_(a,x),0 = 1250 > X_(a,x),1 = 50.
    V = Viewset([2, 100], [[[0, 50], [2, 50]], [[2, 100]]])
    literal = Viewset(V.P, [[[1250, 50], [2, 50]], [[2, 100]]])
    assert not equivalent(V, literal)
    s1 = step1(V)
    assert 0 < s1.N[0][0][0] < 50 and equivalent(V, s1)


def test_step2_exponent_is_the_least_k_of_figure_4():
    w, rho, n = Fraction(1000), Fraction(2), 3
    k = root_exponent(w, rho, n)
    assert rho ** k >= w ** (n * (2 * n + 3)) > rho ** (k - 1)


def test_safe_views_are_published_unchanged():
    r = publish_safe(V1, Fraction(16), None)
    assert r.identity and r.view is V1


# ---------- property: random small tables ----------

@st.composite
def tables(draw):
    n = draw(st.integers(1, 3))
    C = draw(st.integers(2, 4))
    sizes = [draw(st.integers(1, 4)) for _ in range(n)]
    rows = draw(st.lists(st.tuples(*[st.integers(0, s - 1) for s in sizes], st.integers(0, C - 1)),
                         min_size=C, max_size=40))
    rows += [tuple([0] * n) + (c,) for c in range(C)]  # every class has a row
    P = [sum(r[-1] == c for r in rows) for c in range(C)]
    N = [[[sum(r[i] == t and r[-1] == c for r in rows) for c in range(C)] for t in range(s)]
         for i, s in enumerate(sizes)]
    return Viewset(P, N)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.sampled_from([Fraction(11, 10), Fraction(3, 2), Fraction(2), Fraction(50)]))
def test_published_views_are_rho_safe_and_nbc_equivalent(view, rho):
    r = publish_safe(view, rho, lambda w: equivalent(view, w))
    assert is_safe(r.view, rho)
    assert equivalent(view, r.view)
    assert all(isinstance(x, int) and x > 0 for x in r.view.values()) or r.identity
    for i in range(view.n):
        for c in range(view.classes):
            assert sum(row[c] for row in r.view.N[i]) == r.view.P[c] or r.identity


@settings(max_examples=15, deadline=None)
@given(tables())
def test_provable_precision_alone_is_equivalent(view):
    r = publish_safe(view, Fraction(2), None)  # no oracle: sufficient_bits only
    assert is_safe(r.view, Fraction(2)) and equivalent(view, r.view)


def test_bad_viewsets():
    with pytest.raises(AnonsqlError, match="fewer than 2"):
        validate(Viewset([3], [[[3]]]))
    with pytest.raises(AnonsqlError, match="no non-NULL value"):
        validate(Viewset([3, 2], [[[3, 0], [0, 0]]]))


# ---------- the SQL job, both engines ----------

TOY = {
    "adr": ["W", "W", "W", "W", "P", "W", "P", "W", None],
    "age": [40, 40, 40, 40, 30, 40, 30, 30, 40],
    "sal": ["70K", "70K", "70K", "70K", "70K", "50K", "50K", "70K", "50K"],
}


def test_views_check_publish_verify(db, engine, make_table):
    make_table("t", TOY)
    before = table_rows(engine, "t")
    v = api.nbc_views(engine, "t", "sal", "adr,age", counts=True)
    assert v.classes == ["50K", "70K"] and v.P == {"50K": 3, "70K": 6}
    assert v.null_cells == {"adr": 1, "age": 0} and v.rows == 9
    assert {(r["attribute"], r["value"], r["class"]): r["count"] for r in v.N}[("adr", "W", "70K")] == 5
    assert v.smallest_rho == 25 and v.smallest_rho_exact == "25"  # adr W: 5 vs 1, n = 2
    assert not api.nbc_check(engine, "t", "sal", "adr,age", "24.9").ok
    checked = api.nbc_check(engine, "t", "sal", "adr,age", 25)
    assert checked.ok and [c.name for c in checked.checks] == ["condition (10) for rho"]
    r = api.nbc_publish(engine, "t", "sal", "adr,age", "1.5", "pub")
    assert r.achieved_rho <= 1.5 and r.equivalence_checked_on == "full product"
    assert [c.name for c in r.checks] == [nbc_verify.SAFETY, nbc_verify.SUMS, nbc_verify.EQUIVALENCE]
    assert table_rows(engine, "t") == before
    cls_rows = table_rows(engine, "pub_class")
    attr_rows = table_rows(engine, "pub_attr")
    assert [(c, w) for c, _, _, w, _ in cls_rows] == [("50K", 1), ("70K", 1)] and len(attr_rows) == 8
    assert all(int(n) > 0 for *_, n, _ in attr_rows)
    ver = api.nbc_verify(engine, "t", "sal", "adr,age", "pub")
    assert ver.ok and ver.tuples_checked == 4 and ver.published_smallest_rho <= 1.5
    with pytest.raises(AnonsqlError, match="already exists"):
        api.nbc_publish(engine, "t", "sal", "adr,age", "1.5", "pub")
    assert api.nbc_publish(engine, "t", "sal", "adr,age", 3, "pub", replace=True).achieved_rho <= 3
    # Safe for rho = 30 already, but the NULL in adr leaves Σ_t N^adr_t,c < P_c: all four steps run.
    r = api.nbc_publish(engine, "t", "sal", "adr,age", 30, "pub", replace=True)
    assert not r.identity


def test_safe_complete_views_are_published_unchanged(db, engine, make_table):
    make_table("t", {k: v[:8] for k, v in TOY.items()})  # no NULL
    r = api.nbc_publish(engine, "t", "sal", "adr,age", 100, "pub")
    assert r.identity and r.k == 1 and r.achieved_rho == r.original_smallest_rho
    assert sorted(int(n) for _, n, *_ in table_rows(engine, "pub_class")) == [2, 6]


def test_verify_prints_the_offending_tuple(db, engine, make_table):
    make_table("t", TOY)
    api.nbc_publish(engine, "t", "sal", "adr,age", 2, "pub")
    engine.execute('UPDATE pub_attr SET "count" = "count" * 1000 WHERE "class" = \'50K\' AND "value" = \'P\'')
    ver = api.nbc_verify(engine, "t", "sal", "adr,age", "pub")
    assert not ver.ok and "adr=P" in ver.differences[0]
    assert cli.main(["nbc", "verify", "--db", db, "--table", "t", "--class", "sal", "--attrs", "adr,age",
                     "--published", "pub"]) == 1


def test_precedence_decides_ties_and_is_reported(db, engine, make_table):
    # n = 1, X = N: at a = x the classes tie (1 vs 1); at y, p wins 3 to 1 (ratio 3 > rho 2).
    make_table("t", {"a": ["x", "x", "y", "y", "y", "y"], "c": ["p", "q", "p", "p", "p", "q"]})
    r = api.nbc_publish(engine, "t", "c", "a", 2, "pub", precedence="q,p")
    assert r.classes == ["q", "p"] and not r.identity
    assert api.nbc_verify(engine, "t", "c", "a", "pub", precedence="q,p").ok
    ver = api.nbc_verify(engine, "t", "c", "a", "pub")  # default: q (last in sort order) wins ties
    assert not ver.ok and ver.differences[0].startswith("tuple (a=x)")


def _failing_safety(*args, **kwargs):
    return [Check(nbc_verify.SAFETY, False, "nbc/check_safety", "injected failure")]


def test_failed_verification_rolls_back_everything(db, engine, make_table, monkeypatch, capsys):
    make_table("t", {k: v[:8] for k, v in TOY.items()})  # safe for rho 100: small synthetic rows
    api.nbc_publish(engine, "t", "sal", "adr,age", 2, "old")  # what a --replace run would replace
    names = ["t", "old_class", "old_attr"]
    before = [table_rows(engine, name) for name in names]
    monkeypatch.setattr(nbc_verify, "safety", _failing_safety)
    with pytest.raises(VerificationError, match="condition \\(10\\) for rho: injected failure") as failure:
        api.nbc_publish(engine, "t", "sal", "adr,age", 100, "pub", synthetic=True)
    assert [c.name for c in failure.value.checks if not c.passed] == [nbc_verify.SAFETY]
    assert all(catalog.find_table(engine, f"pub{s}") is None for s in ("_class", "_attr", "_rows"))
    with pytest.raises(VerificationError):
        api.nbc_publish(engine, "t", "sal", "adr,age", 3, "old", replace=True)
    args = ["nbc", "publish", "--db", db, "--table", "t", "--class", "sal", "--attrs", "adr,age", "--rho", "3",
            "--out", "old", "--replace", "--quiet"]
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("anonsql nbc publish: error: verification failed") and "\n" not in err
    assert [table_rows(engine, name) for name in names] == before


@pytest.mark.parametrize("rows, rho, synthetic", [(9, "1.5", False), (8, "100", True)])
def test_emitted_script_runs_and_ends_with_the_checks(db, engine, make_table, tmp_path, rows, rho, synthetic):
    make_table("t", {k: v[:rows] for k, v in TOY.items()})  # 9 rows: 30-digit counts; 8: safe, published as is
    path = tmp_path / "publish.sql"
    dry = api.nbc_publish(engine, "t", "sal", "adr,age", rho, "pub", synthetic=synthetic, emit_sql=str(path),
                          execute=False)
    assert not dry.ok and not dry.checks and dry.notes and catalog.find_table(engine, "pub_class") is None
    script = path.read_text()
    body, checks = script.split("COMMIT;")
    assert "INSERT INTO" in body and '"pub_attr"' in body and "-- Verification" in checks
    queries = [q.strip() for q in checks.split(";\n") if q.strip()]
    assert "bad_values" in queries[0] and len(queries) == 1 + 2 * synthetic and script.rstrip().endswith(";")
    if engine.dialect != "duckdb":
        return  # the script is in the engine's dialect; running it is tested on DuckDB
    engine.execute(body + "COMMIT;")
    assert engine.fetch_all(queries[0])[0] == (0, 0, 0, 0, 2, 2)
    api.nbc_publish(engine, "t", "sal", "adr,age", rho, "real", synthetic=synthetic)
    for suffix in ("_class", "_attr", "_rows")[: 2 + synthetic]:
        assert table_rows(engine, "pub" + suffix) == table_rows(engine, "real" + suffix)
    assert api.nbc_verify(engine, "t", "sal", "adr,age", "pub").ok


@pytest.mark.parametrize("kwargs, message", [
    (dict(rho=1), "rho must be > 1"),
    (dict(rho="0.5"), "rho must be > 1"),
    (dict(rho="abc"), "rho must be a number"),
    (dict(attrs=""), "no attributes"),
    (dict(attrs="adr,nope"), "unknown column"),
    (dict(class_column="adr", attrs="age"), "NULL"),
    (dict(precedence="70K"), "every class exactly once"),
    (dict(out=""), "--out is required"),
])
def test_bad_input_is_one_error_and_writes_nothing(db, engine, make_table, kwargs, message):
    make_table("t", TOY)
    args = dict(class_column="sal", attrs="adr,age", rho=2, out="pub") | kwargs
    with pytest.raises(AnonsqlError, match=message):
        api.nbc_publish(engine, "t", args["class_column"], args["attrs"], args["rho"], args["out"],
                            precedence=args.get("precedence"))
    assert catalog.find_table(engine, "pub_class") is None


def test_single_class_and_all_null_attribute_are_errors(db, engine, make_table):
    make_table("one", {"a": ["x", "y"], "c": ["p", "p"]})
    with pytest.raises(AnonsqlError, match="fewer than 2"):
        api.nbc_views(engine, "one", "c", "a")
    make_table("t", {"a": ["x", None, "y"], "c": ["p", "q", "p"]})
    with pytest.raises(AnonsqlError, match="no non-NULL value"):
        api.nbc_views(engine, "t", "c", "a")


def test_a_class_without_values_in_an_attribute_is_named(db, engine, make_table, capsys):
    """nbc publish names the class and the attribute (it said 'class #1 ... attribute #0')."""
    from anonsql.cli import main

    make_table("t", {"a": ["x", None, "y", None], "b": ["u", "v", "u", "v"], "c": ["p", "q", "p", "q"]})
    code = main(["nbc", "publish", "--db", db, "--table", "t", "--class", "c", "--attrs", "b,a", "--rho", "2",
                 "--out", "pub", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "class 'q' has no non-NULL value in attribute 'a'" in err[0] and "#" not in err[0]
    assert catalog.find_table(engine, "pub_class") is None


def test_car_four_classes(db, engine):
    anonsql.load_dataset(db, "car")
    cols = [c for c in catalog.get_table(engine, "car").column_names]
    cls, attrs = cols[-1], cols[:-1]
    v = api.nbc_views(engine, "car", cls, attrs)
    assert len(v.classes) == 4 and v.smallest_rho is None  # zero counts in Car Evaluation
    r = api.nbc_publish(engine, "car", cls, attrs, 2, "car_nbc")
    assert r.achieved_rho <= 2 and r.equivalence_checked_on == "full product"
    assert api.nbc_verify(engine, "car", cls, attrs, "car_nbc").ok


def test_breach_on_the_figure1_table(db, engine, make_table):
    # T_1 of Figure 1(a): 4 x <W,40,70K>, <P,30,70K>, <W,40,50K>, <P,30,50K>
    make_table("t1", {"adr": ["W", "W", "W", "W", "P", "W", "P"], "age": [40, 40, 40, 40, 30, 40, 30],
                      "sal": ["70K"] * 5 + ["50K"] * 2})
    b = api.nbc_breach(engine, "t1", "sal", "adr,age", "adr=W,age=40")
    assert b.worlds == 10 and b.posterior_exact["70K"] == "22/25" and b.prior["70K"] == 0.5
    with pytest.raises(AnonsqlError, match="--known"):
        api.nbc_breach(engine, "t1", "sal", "adr,age", "zip=1")


# ---------- EST (Figure 7) ----------

def test_statement14_only_accepts_est_publishes_where_it_fails(db, engine, make_table):
    # 70K (prior 3 of 4) wins every tuple: r = 1.3 is reachable although Statement 14 fails.
    make_table("t", TOY)
    r = api.nbc_publish(engine, "t", "sal", "adr,age", out="est", prior="50K=1,70K=3", r="1.3")
    assert r.est["statement14"] is False and r.achieved_r <= 1.3
    ver = api.nbc_verify(engine, "t", "sal", "adr,age", "est")
    assert ver.ok and ver.checked_on == "full product" and ver.achieved_r == pytest.approx(r.achieved_r)
    assert ver.prior_weights == {"50K": 1, "70K": 3}


def test_est_below_the_least_achievable_r_fails_with_it_and_writes_nothing(db, engine, make_table):
    # The Adult situation in small: the minority class (prior 1 of 4) wins some tuple (a = y),
    # so its posterior there is >= 1/2 = 2 x its prior: no equivalent publication has r < 2.
    make_table("t", {"a": ["x"] * 26 + ["y"] * 14, "c": ["p"] * 25 + ["q"] + ["p"] * 5 + ["q"] * 9})
    with pytest.raises(AnonsqlError, match=r"FAIL: no NBC-equivalent .* need r > 2 \(the least achievable r\)"):
        api.nbc_publish(engine, "t", "c", "a", out="est", prior={"p": 3, "q": 1}, r="1.3")
    assert catalog.find_table(engine, "est_class") is None


def test_est_55_row_example_publishes_at_r_2(db, engine, make_table):
    # Issue 17: P = (a: 47, b: 8); x0 (34, 4), x1 (13, 4); y0 (15, 2), y1 (14, 3), y2 (18, 3).
    y = ["y0"] * 15 + ["y1"] * 14 + ["y2"] * 18 + ["y0"] * 2 + ["y1"] * 3 + ["y2"] * 3
    c = ["a"] * 34 + ["a"] * 13 + ["b"] * 4 + ["b"] * 4
    x = ["x0"] * 34 + ["x1"] * 13 + ["x0"] * 4 + ["x1"] * 4
    make_table("t", {"x": x, "y": y, "c": c})
    views = api.nbc_views(engine, "t", "c", "x,y", counts=True)
    assert views.P == {"a": 47, "b": 8}
    r = api.nbc_publish(engine, "t", "c", "x,y", out="est", prior="a=2,b=1", r=2)
    assert r.est["statement14"] is False and 1 < r.achieved_r <= 2
    assert api.nbc_verify(engine, "t", "c", "x,y", "est").ok


def test_est_publishes_r_close_views_when_possible(db, engine, make_table):
    # n = 1: x has 25 vs 1, y 5 vs 9 (Viewset P = [30, 10]); prior 3:1, a loose r.
    make_table("t", {"a": ["x"] * 26 + ["y"] * 14, "c": ["p"] * 25 + ["q"] + ["p"] * 5 + ["q"] * 9})
    r = api.nbc_publish(engine, "t", "c", "a", out="est", prior={"p": 3, "q": 1}, r=10**20)
    assert r.method == "EST" and r.prior_weights == {"p": 3, "q": 1}
    assert r.est["theta"] >= 1 and r.est["sub_labels"] == 4
    assert api.nbc_verify(engine, "t", "c", "a", "est").ok
    assert [row[3] for row in table_rows(engine, "est_class")] == [3, 1]


def test_est_fails_only_at_the_merge():
    # Figure 7 runs to the merge; a merge that the exact check rejects is the only late FAIL.
    V = Viewset([30, 10], [[[25, 1], [5, 9]]])
    calls = []
    res = est(V, [Fraction(3), Fraction(1)], Fraction(10**8), lambda a, b: calls.append(a) or False)
    assert not res.ok and res.view is None and "not NBC-preserving" in res.reason
    assert "least achievable r is 2" in res.reason and all(a is V for a in calls)


def test_est_refuses_priors_needing_too_many_sub_labels():
    res = est(V1, [Fraction(1, 1000), Fraction(999, 1000)], Fraction(2), lambda a, b: equivalent(a, b))
    assert not res.ok and "1000 sub-labels" in res.reason


def test_est_with_uniform_prior_is_safety_transform_checked_like_it():
    V = Viewset([30, 10], [[[25, 1], [5, 9]]])
    res = est(V, [Fraction(1), Fraction(1)], Fraction(2), lambda a, b: equivalent(a, b))
    assert res.ok and is_safe(res.view, Fraction(2)) and equivalent(V, res.view)


@pytest.mark.parametrize("kwargs, message", [
    (dict(prior="50K=1"), "every class exactly once"),
    (dict(prior="50K=0,70K=1"), "must be > 0"),
    (dict(prior="50K=x,70K=1"), "not a number"),
    (dict(prior="50K=1,70K=1", r=1), "r must be > 1"),
    (dict(prior="50K=1,70K=1", r=2, rho=2), "not both"),
    (dict(r=2), "needs --prior"),
    (dict(r=None), "give --rho"),
])
def test_bad_prior_is_one_error(db, engine, make_table, kwargs, message):
    make_table("t", TOY)
    args = dict(rho=None, r=2) | kwargs
    with pytest.raises(AnonsqlError, match=message):
        api.nbc_publish(engine, "t", "sal", "adr,age", args.pop("rho"), "est", **args)


# ---------- CLI: `anonsql nbc ...` ----------

def test_cli_views_check_publish_verify_breach(db, engine, make_table, capsys):
    make_table("t1", {"adr": ["W", "W", "W", "W", "P", "W", "P"], "age": [40, 40, 40, 40, 30, 40, 30],
                      "sal": ["70K"] * 5 + ["50K"] * 2})
    base = ["--db", db, "--table", "t1", "--class", "sal", "--attrs", "adr,age"]
    assert cli.main(["nbc", "views", *base]) == 0
    out = capsys.readouterr().out
    assert "raw counts: seeing them can raise an attacker's odds on a person's class by up to 16 times, so they are " \
           "safe to publish as they are only for --rho >= 16 (smallest rho of Corollary 4, exactly 16)" in out
    assert cli.main(["nbc", "check", *base, "--rho", "2"]) == 1
    assert cli.main(["nbc", "publish", *base, "--rho", "2", "--out", "p"]) == 0
    assert "published p_class and p_attr" in capsys.readouterr().out
    assert cli.main(["nbc", "verify", *base, "--published", "p", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    assert cli.main(["nbc", "publish", *base, "--rho", "2", "--out", "q", "--emit-sql", "-", "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("-- anonsql nbc publish") and "database unchanged" in err
    assert catalog.find_table(engine, "q_class") is None
    assert cli.main(["nbc", "breach", *base, "--known", "adr=W,age=40"]) == 0
    assert "posterior 88.00%" in capsys.readouterr().out


def test_cli_bad_input_exits_2_with_one_line(db, engine, make_table, capsys):
    make_table("t", TOY)
    base = ["--db", db, "--table", "t", "--class", "sal", "--attrs", "adr,age", "--out", "p", "--quiet"]
    for extra in (["--rho", "1"], ["--prior", "50K=3,70K=1", "--r", "1.3"], []):
        assert cli.main(["nbc", "publish", *base, *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("anonsql nbc publish: error:") and "\n" not in err
    assert catalog.find_table(engine, "p_class") is None


def test_large_products_use_the_provable_precision_and_table_tuples(db, engine, make_table, monkeypatch):
    make_table("t", TOY)
    monkeypatch.setattr(eq, "HALF_LIMIT", 1)
    r = api.nbc_publish(engine, "t", "sal", "adr,age", 2, "pub")
    assert r.equivalence_checked_on == "table tuples" and r.bits > 24
    ver = api.nbc_verify(engine, "t", "sal", "adr,age", "pub")
    assert ver.ok and ver.checked_on == "table tuples" and ver.tuples_checked == 3  # W40, P30, W30
    with pytest.raises(AnonsqlError, match="FAIL: EST proves NBC-equivalence over all of"):
        api.nbc_publish(engine, "t", "sal", "adr,age", out="est", prior="50K=1,70K=1", r=2)


def test_synthetic_rows_have_the_published_views(db, engine, make_table):
    make_table("t", {k: v[:8] for k, v in TOY.items()})  # already safe for rho 100: P = (2, 6)
    r = api.nbc_publish(engine, "t", "sal", "adr,age", 100, "pub", synthetic=True)
    assert r.out_rows == "pub_rows" and r.checks[-1].name == "synthetic rows have the published views"
    rows = table_rows(engine, "pub_rows")
    published = {(a, x, c): int(n) for a, x, c, n, _ in table_rows(engine, "pub_attr")}
    P = {c: int(n) for c, n, *_ in table_rows(engine, "pub_class")}
    assert len(rows) == sum(P.values()) == 8
    for j, attr in enumerate(["adr", "age"]):
        for (a, x, c), n in published.items():
            if a == attr:
                assert sum(1 for row in rows if row[j] == x and row[2] == c) == n
    # the rows train the same classifier as the source: their own views verify against it
    api.nbc_publish(engine, "pub_rows", "sal", "adr,age", 100, "again")
    assert api.nbc_verify(engine, "t", "sal", "adr,age", "again").ok


def test_synthetic_refuses_astronomical_row_counts(db, engine, make_table, monkeypatch):
    make_table("t", TOY)
    monkeypatch.setattr(nbc_job, "SYNTHETIC_ROW_LIMIT", 5)
    with pytest.raises(AnonsqlError, match="--synthetic would write"):
        api.nbc_publish(engine, "t", "sal", "adr,age", 30, "pub", synthetic=True)
    assert catalog.find_table(engine, "pub_class") is None and catalog.find_table(engine, "pub_rows") is None


# ---------- issue 17: any table, exact storage, least distortion ----------

def near_deterministic(rows=3000, seed=7):
    """2 classes, `d` equal to the class on ~97 % of rows (zero counts N(d, c) = 0) and ten
    noisy attributes: ΠA_i = 3·4^2·5^8 > 10^7, far beyond enumeration in a test."""
    rng = np.random.default_rng(seed)
    cls = rng.choice(["no", "yes"], size=rows, p=[0.7, 0.3])
    d = np.where(rng.random(rows) < 0.97, np.char.add("only_", cls), "mixed")
    cols = {"d": list(d)}
    for j in range(10):
        k = 4 if j < 2 else 5
        shift = (cls == "yes").astype(int) * (j % 3)
        cols[f"a{j}"] = [f"v{x}" for x in (rng.integers(0, k, rows) + shift) % k]
    cols["c"] = list(cls)
    return cols


def test_near_deterministic_attribute_publishes_at_rho_1_5_on_the_full_product(db, engine, make_table):
    make_table("t", near_deterministic())
    attrs = ",".join(["d"] + [f"a{j}" for j in range(10)])
    v = api.nbc_views(engine, "t", "c", attrs)
    assert v.zero_counts > 0 and v.smallest_rho is None
    r = api.nbc_publish(engine, "t", "c", attrs, "1.5", "pub")
    assert r.ok and r.achieved_rho <= 1.5 and r.equivalence_checked_on == "full product"
    ver = api.nbc_verify(engine, "t", "c", attrs, "pub")
    assert ver.ok and ver.checked_on == "full product" and ver.tuples_checked == 3 * 4**2 * 5**8


def test_figure1_table_publishes_at_its_smallest_rho_16(db, engine, make_table):
    # T_1 of Figure 1: (10) holds with equality (4/1)^2 = 16; the SQL check accepts it exactly.
    make_table("t1", {"adr": ["W", "W", "W", "W", "P", "W", "P"], "age": [40, 40, 40, 40, 30, 40, 30],
                      "sal": ["70K"] * 5 + ["50K"] * 2})
    assert api.nbc_check(engine, "t1", "sal", "adr,age", 16).smallest_rho == 16
    r = api.nbc_publish(engine, "t1", "sal", "adr,age", 16, "pub")
    assert r.ok and r.identity and r.achieved_rho == 16
    assert not api.nbc_check(engine, "t1", "sal", "adr,age", "15.99").ok


def test_sql_safety_check_is_exact_at_the_bound_and_rejects_just_above(db, engine, make_table):
    make_table("t1", {"adr": ["W", "W", "W", "W", "P", "W", "P"], "age": [40, 40, 40, 40, 30, 40, 30],
                      "sal": ["70K"] * 5 + ["50K"] * 2})
    api.nbc_publish(engine, "t1", "sal", "adr,age", 16, "pub")
    tables = [catalog.get_table(engine, f"pub{s}").expr for s in ("_class", "_attr")]
    assert all(c.passed for c in nbc_verify.safety(engine, *tables, Fraction(16), 2, 2))
    below = Fraction(16) - Fraction(1, 10**30)  # within any float margin, still unsafe
    assert not nbc_verify.safety(engine, *tables, below, 2, 2)[0].passed


def test_counts_beyond_38_digits_are_stored_exactly(db, engine, make_table, monkeypatch):
    make_table("t", near_deterministic(rows=600))
    monkeypatch.setattr(eq, "HALF_LIMIT", 1)  # the provable precision: long integers
    r = api.nbc_publish(engine, "t", "c", ",".join(["d"] + [f"a{j}" for j in range(10)]), "1.5", "pub")
    assert r.ok and r.max_digits > 38
    longest = max(len(str(n)) for _, n, *_ in table_rows(engine, "pub_class"))
    assert longest == r.max_digits


def test_counts_are_stored_as_exact_integers_not_text(db, engine, make_table, monkeypatch):
    """Issue 29: the published counts have a number type, BIGINT while they fit, else the engine's
    wider exact integer type; the logs DOUBLE."""
    make_table("t", TOY)
    api.nbc_publish(engine, "t", "sal", "adr,age", 2, "pub")
    for suffix in ("_class", "_attr"):
        table = catalog.get_table(engine, f"pub{suffix}")
        assert (table.column("count").kind, table.column("log_count").kind) == ("integer", "float")
    make_table("t2", near_deterministic(rows=600))
    monkeypatch.setattr(eq, "HALF_LIMIT", 1)  # long integers
    r = api.nbc_publish(engine, "t2", "c", ",".join(["d"] + [f"a{j}" for j in range(4)]), "1.5", "wide")
    assert r.max_digits > 19
    kind = catalog.get_table(engine, "wide_class").column("count").kind
    assert kind == ("decimal" if r.max_digits <= 38 or engine.dialect == "postgres" else "bignum")


def test_least_distortion_uses_a_smaller_root_and_still_meets_rho(db, engine):
    anonsql.load_dataset(db, "car")
    cols = list(catalog.get_table(engine, "car").column_names)
    paper = api.nbc_publish(engine, "car", cols[-1], cols[:-1], 5, "paper")
    least = api.nbc_publish(engine, "car", cols[-1], cols[:-1], 5, "least", root="least")
    assert least.k < paper.k and paper.achieved_rho < least.achieved_rho <= 5
    assert api.nbc_verify(engine, "car", cols[-1], cols[:-1], "least").ok
    with pytest.raises(AnonsqlError, match="unknown root"):
        api.nbc_publish(engine, "car", cols[-1], cols[:-1], 5, "x", root="smallest")


def test_the_documented_sql_classifies_like_the_nbc(db, engine, make_table):
    make_table("t", TOY)
    api.nbc_publish(engine, "t", "sal", "adr,age", 2, "pub")
    v = api.nbc_views(engine, "t", "sal", "adr,age", counts=True)
    view = Viewset(list(v.P.values()), [[[next(x["count"] for x in v.N if (x["attribute"], x["value"], x["class"])
                                               == (a, val, c)) for c in v.classes] for val in vals]
                                        for a, vals in (("adr", ["P", "W"]), ("age", ["30", "40"]))])
    for (adr, age), tau in ((("P", "30"), (0, 0)), (("W", "40"), (1, 1)), (("W", "30"), (1, 0))):
        query = ('SELECT p."class", (1 - 2) * p."log_count" + SUM(a."log_count") AS score '
                 'FROM pub_class AS p JOIN pub_attr AS a ON a."class" = p."class" '
                 f"WHERE (a.\"attribute\" = 'adr' AND a.\"value\" = '{adr}') "
                 f"OR (a.\"attribute\" = 'age' AND a.\"value\" = '{age}') "
                 'GROUP BY p."class", p."log_count", p."precedence" ORDER BY score DESC, p."precedence" DESC LIMIT 1')
        best = engine.fetch_all(query)[0][0]
        wins = "50K" if eq.exact_gt(view, tau, 0, 1) else "70K"
        assert best == wins


def test_views_speak_plain_words_first():
    """rho printed as 14776336/6561 (issue 36): now its decimal and what it means come first, the
    paper's notation after; a zero count says what it lets an attacker do."""
    report = nbc_job.ViewsReport(table="t", class_column="c", attrs=["a"], classes=["x", "y"], rows=10,
                                 P={"x": 4, "y": 6}, domain_sizes={"a": 2}, null_cells={"a": 0}, zero_counts=0,
                                 smallest_rho=14776336 / 6561, smallest_rho_exact="14776336/6561", k_sind=4)
    lines = report.lines()
    plain = next(line for line in lines if line.startswith("raw counts:"))
    assert "by up to 2,252 times" in plain and "only for --rho >= 2,252" in plain
    assert plain.index("2,252") < plain.index("Corollary 4") < plain.index("exactly 14776336/6561")
    assert lines[-1].startswith("indistinguishability: 4, the rows of the smallest class")
    zero = dataclasses.replace(report, zero_counts=1, smallest_rho=None, smallest_rho_exact=None)
    assert "raw counts: a count of zero lets an attacker rule a class out" in "\n".join(zero.lines())
