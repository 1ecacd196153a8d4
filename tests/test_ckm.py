"""The cell key method: ptable golden properties (and an independent solver), a hand-computed
2x2 table, HMAC record keys recomputed in Python, the same cell in two tables, the audit, bad
input and the failure path, on DuckDB and PostgreSQL."""

from __future__ import annotations

import hashlib
import hmac
import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

import anonsql
from anonsql.ckm import verify as ckm_verify
from anonsql.ckm.ptable import KEY_UNITS, ptable
from anonsql.ckm.utility import utility
from anonsql.cli import main
from anonsql.data.loading import write_frame
from anonsql.errors import AnonsqlError, VerificationError
from anonsql.identifiers import read_key

from .conftest import table_rows

SECRET = "a-secret-of-some-length-0123"
PARAMS = [(2, 1.0, 1, None), (3, 1.5, 2, None), (5, 3.0, 2, None), (4, 2.0, 3, 0.5), (3, 1.5, 2, 0.4),
          (1, 0.5, 0, None), (3, 2.5, 3, None), (6, 4.0, 1, 0.3)]


@pytest.mark.parametrize("D,V,js,pstay", PARAMS)
def test_ptable_rows_are_distributions_with_zero_mean_and_variance_v(D, V, js, pstay):
    t = ptable(D, V, js, pstay)
    assert t.row(0)[0].tolist() == [0] and t.row(0)[1].tolist() == [1.0]  # zero stays zero
    for i in range(1, t.top + 1):
        v, p = t.row(i)
        assert (p > 0).all() and abs(p.sum() - 1) < 1e-12
        assert abs(p @ v) < 1e-9
        assert (np.abs(v) <= D).all() and (i + v >= 0).all()
        assert not ((i + v >= 1) & (i + v < js)).any()  # no count in 1..js-1
        reached = p @ (v.astype(float) ** 2)
        assert reached == pytest.approx(t.variance[i], abs=1e-12)
        if abs(reached - V) > 1e-9:  # out of the row's reach: the closest end, a two-point law
            allowed = np.array([u for u in range(max(-i, -D), D + 1) if i + u == 0 or i + u >= js])
            ends = (-allowed.min() * allowed.max(), -allowed[allowed < 0].max() * allowed[allowed > 0].min())
            assert len(v) == 2 and min(abs(reached - e) for e in ends) < 1e-9
            assert str(i) in {str(k) for k, _ in enumerate(t.variance)}
    full = t.row(t.top)[0]
    assert full.tolist() == list(range(-D, D + 1))  # the last row: every noise, for every larger count
    assert t.variance[-1] == pytest.approx(V, abs=1e-9)
    if pstay is not None:
        assert t.row(t.top)[1][full == 0][0] >= pstay - 1e-12


@pytest.mark.parametrize("D,V,js", [(3, 1.5, 2), (5, 3.0, 1), (4, 2.0, 3)])
def test_ptable_rows_have_the_largest_entropy_an_independent_solver_finds(D, V, js):
    t = ptable(D, V, js)
    for i in range(1, t.top + 1):
        v, p = t.row(i)
        if abs(t.variance[i] - V) > 1e-9 or len(v) <= 3:  # out of reach, or fixed by the constraints alone
            continue
        x = v.astype(float)
        cons = [{"type": "eq", "fun": lambda q: q.sum() - 1}, {"type": "eq", "fun": lambda q, x=x: q @ x},
                {"type": "eq", "fun": lambda q, x=x: q @ (x * x) - V}]
        best = minimize(lambda q: float(np.sum(q * np.log(q))), np.full(len(x), 1 / len(x)), method="SLSQP",
                        bounds=[(1e-12, 1)] * len(x), constraints=cons, options={"ftol": 1e-14, "maxiter": 500})
        assert best.success
        assert np.abs(best.x - p).max() < 1e-4
        assert -np.sum(p * np.log(p)) >= -best.fun - 1e-9


def test_ptable_matches_the_values_r_ptable_publishes():
    """R's ptable package (1.0.0), its vignette's create_cnt_ptable(D = 2, V = 1) (js = 0, nothing
    blocked), printed by str(ptab): the row of every count >= 2 (R's last class) has p(i -> i - 2) =
    0.0638, p_stay 0.383, mean 0, variance 1, sum 1, to the digits printed. Its row 1 differs on
    purpose: R's default monotony constraint (mono = TRUE) holds p(1 -> 0) = p(1 -> 1) = 0.3665 and
    reaches variance 0.932 < V; without it the maximum-entropy row reaches V = 1 exactly."""
    for js in (0, 1):  # R's js 0 and ours 1 both block nothing
        t = ptable(2, 1.0, js)
        for i in (2, 3, 50):
            v, p = t.row(i)
            assert v.tolist() == [-2, -1, 0, 1, 2]
            assert round(float(p[0]), 4) == 0.0638 and round(float(p[2]), 3) == 0.383
            assert round(float(p @ v), 12) == 0 and round(float(p @ v.astype(float) ** 2), 3) == 1.0
            assert round(float(p.sum()), 12) == 1
        v, p = t.row(1)
        assert v.tolist() == [-1, 0, 1, 2] and t.variance[1] == pytest.approx(1.0, abs=1e-9)  # R: 0.932 (mono)


def test_ptable_intervals_share_the_cell_keys_by_probability():
    t = ptable(3, 1.5, 2)
    lo, hi = t.intervals()
    for i in range(t.top + 1):
        at = t.i == i
        assert lo[at][0] == 0 and hi[at][-1] == KEY_UNITS and (lo[at][1:] == hi[at][:-1]).all()
        assert np.abs((hi[at] - lo[at]) / KEY_UNITS - t.p[at]).max() <= 1 / KEY_UNITS
    assert ptable(3, 1.5, 2).fingerprint() == t.fingerprint() != ptable(3, 1.6, 2).fingerprint()


def test_bad_ptable_parameters_are_one_clear_error():
    for args, msg in [((0, 1.0), "--ckm-d"), ((3, 0.0), "--ckm-v"), ((2, 1.0, 4), "--ckm-js 4"),
                      ((3, 1.0, 1, 1.0), "--ckm-pstay")]:
        with pytest.raises(AnonsqlError, match=msg):
            ptable(*args)


# A 2x2 table a x b, its record keys chosen (dyadic, so exact in units of 2^-32); the cell (y, w) is empty.
# With D=1, V=0.5, js=0 every row of the ptable is p(-1) = p(1) = 0.25, p(0) = 0.5 (mean 0 forces the
# symmetry, V the mass), so a cell key in [0, .25) means -1, [.25, .75) means 0, [.75, 1) means +1.
HAND = pd.DataFrame({"a": ["x", "x", "x", "y", "y", "y"], "b": ["u", "u", "w", "u", "u", "u"],
                     "rk": [0.5, 0.25, 0.75, 0.125, 0.5, 0.625]})
# (a, b, grouping_id) -> published count, by hand: n and the cell key (sum of keys mod 1) of each cell
HAND_EXPECTED = {
    ("x", "u", 0): 3,  # n 2, keys .5 + .25 = .75 -> +1
    ("x", "w", 0): 2,  # n 1, .75 -> +1
    ("y", "u", 0): 3,  # n 3, 1.25 -> .25 -> 0
    ("x", "Total", 1): 3,  # n 3, 1.5 -> .5 -> 0
    ("y", "Total", 1): 3,  # n 3, .25 -> 0
    ("Total", "u", 2): 4,  # n 5, 2.0 -> 0 -> -1
    ("Total", "w", 2): 2,  # n 1, .75 -> +1
    ("Total", "Total", 3): 7,  # n 6, 2.75 -> .75 -> +1
}


def test_hand_computed_two_by_two_table(db, engine):
    write_frame(engine, HAND, "t")
    r = anonsql.ckm_table(db, "t", "a,b", record_key_column="rk", D=1, V=0.5, js=0, out="pub")
    assert r.ok and r.cells == 8
    got = {(a, b, g): v for a, b, g, v in table_rows(engine, "pub")}
    assert got == HAND_EXPECTED  # the empty (y, w) stays 0: no row
    assert r.utility["max_abs_deviation"] == 1 and r.utility["changed_share"] == pytest.approx(5 / 8)
    assert anonsql.audit_table(db, "pub").ok
    # the same keys as whole numbers in units of 2^-32 (an integer column) publish the same table
    write_frame(engine, HAND.assign(units=(HAND.rk * KEY_UNITS).astype("int64")).drop(columns="rk"), "t_units")
    r = anonsql.ckm_table(db, "t_units", "a,b", record_key_column="units", D=1, V=0.5, js=0, out="pub_units")
    assert r.record_keys == "column-units" and table_rows(engine, "pub_units") == table_rows(engine, "pub")
    assert anonsql.audit_table(db, "pub_units").ok


# The same 2x2 table as a magnitude table: measure x and contributor w per row. With m = 0.1 and the
# largest contribution as the scale (top_k 1), each total moves by 0.1 * x_(1) * v (v as above).
HAND_SUM = HAND.assign(x=[10.0, 20.0, 5.0, 7.0, 1.0, 2.0], w=["p", "q", "p", "q", "q", "r"])
HAND_SUM_EXPECTED = {
    ("x", "u", 0): (32.0, 3),  # 30, contributions p 10, q 20: + 0.1 * 20 * (+1)
    ("x", "w", 0): (5.5, 2),  # 5 (p): + 0.1 * 5
    ("y", "u", 0): (10.0, 3),  # v = 0
    ("x", "Total", 1): (35.0, 3),
    ("y", "Total", 1): (10.0, 3),
    ("Total", "u", 2): (37.2, 4),  # 40, q 28 the largest: - 0.1 * 28
    ("Total", "w", 2): (5.5, 2),
    ("Total", "Total", 3): (47.8, 7),  # 45, q 28: + 2.8
}


def test_hand_computed_magnitude_table(db, engine):
    write_frame(engine, HAND_SUM, "t")
    r = anonsql.ckm_table(db, "t", "a,b", record_key_column="rk", D=1, V=0.5, js=0, measure="x", contributor="w",
                          m=0.1, out="pub")
    assert r.ok and r.measure == "x" and r.top_k == 1
    got = {(a, b, g): (round(v, 9), f) for a, b, g, v, f in table_rows(engine, "pub")}
    assert got == HAND_SUM_EXPECTED
    assert anonsql.audit_table(db, "pub").ok
    r = anonsql.ckm_table(db, "t", "a,b", record_key_column="rk", D=1, V=0.5, js=0, measure="x", contributor="w",
                          m=0.1, scale="mean", out="pub_mean")
    got = {(a, b, g): v for a, b, g, v, _ in table_rows(engine, "pub_mean")}
    assert got[("Total", "u", 2)] == pytest.approx(40 - 0.1 * 40 / 3)  # 3 contributors, mean 40 / 3
    assert got[("x", "u", 0)] == pytest.approx(30 + 0.1 * 15)
    r = anonsql.ckm_table(db, "t", "a,b", record_key_column="rk", D=1, V=0.5, js=0, measure="x", contributor="w",
                          m=0.1, top_k=2, out="pub_top2")
    got = {(a, b, g): v for a, b, g, v, _ in table_rows(engine, "pub_top2")}
    assert got[("Total", "Total", 3)] == pytest.approx(45 + 0.1 * (28 + 15))
    with pytest.raises(AnonsqlError, match="needs a magnitude table"):
        anonsql.ckm_table(db, "t", "a,b", record_key_column="rk", contributor="w")
    with pytest.raises(AnonsqlError, match="not numeric"):
        anonsql.ckm_table(db, "t", "a", record_key_column="rk", measure="w")
    with pytest.raises(AnonsqlError, match="--ckm-top-k"):
        anonsql.ckm_table(db, "t", "a", record_key_column="rk", measure="x", top_k=0)


def _hmac_keys(units: list, secret: str) -> np.ndarray:
    return np.array([int(hmac.new(secret.encode(), str(u).encode(), hashlib.sha256).hexdigest()[:8], 16)
                     for u in units], np.int64)


def _frame(rows: int = 400, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"region": rng.choice(["n", "s", "e", "w"], rows), "sex": rng.choice(["f", "m"], rows),
                         "age": rng.choice(["0-17", "18-64", "65+"], rows, p=[0.1, 0.8, 0.1]),
                         "pid": rng.permutation(rows) + 1000})


def test_hmac_record_keys_and_noise_recomputed_in_python(db, engine, tmp_path):
    frame = _frame()
    write_frame(engine, frame, "census")
    key = tmp_path / "ckm.key"
    key.write_text(SECRET + "\n")
    r = anonsql.ckm_table(db, "census", "region,sex,age", record_key="pid", key_file=str(key), D=3, V=1.5, js=2,
                          compare_min_count=3)
    assert r.ok and r.out.endswith("census_ckm") and r.suppressed_share is not None
    t = ptable(3, 1.5, 2)
    frame["r"] = _hmac_keys(frame.pid.tolist(), SECRET)
    expected = {}
    dims = ["region", "sex", "age"]
    for mask in range(8):  # every grouping set of the cube, grouping id bit 2-j: dimension j summed
        fixed = [d for j, d in enumerate(dims) if not mask >> (2 - j) & 1]
        groups = frame.groupby(fixed) if fixed else [((), frame)]
        for labels, g in groups:
            labels = labels if isinstance(labels, tuple) else (labels,)
            n, ck = len(g), int(g.r.sum()) % KEY_UNITS
            value = n + int(ckm_verify.lookup(t, np.array([n]), np.array([ck]))[0])
            cell = dict(zip(fixed, labels))
            if value:
                expected[(*[cell.get(d, "Total") for d in dims], mask)] = value
    got = {tuple(row[:4]): row[4] for row in table_rows(engine, "census_ckm")}
    assert got == expected
    assert all(v == 0 or v >= 2 for v in got.values())
    # the key is never stored: not in the spec table, not in the report
    stored = json.dumps(table_rows(engine, "census_ckm_ckm_spec")) + r.to_json()
    assert SECRET not in stored and "hmac-sha256" in stored


def test_the_same_cell_in_two_tables_and_reruns_has_the_same_value(db, engine, monkeypatch):
    write_frame(engine, _frame(), "census")
    monkeypatch.setenv("ANONSQL_PSEUDONYM_KEY", SECRET)
    anonsql.ckm_table(db, "census", "region,sex", record_key="pid", D=2, V=1.0, js=2, out="one")
    anonsql.ckm_table(db, "census", "region,age", record_key="pid", D=2, V=1.0, js=2, out="two")
    anonsql.ckm_table(db, "census", tables="region*sex,region*age", margins="rollup", record_key="pid", D=2, V=1.0,
                      js=2, out="linked")
    # region's totals and the grand total (the other dimensions summed), by region's label
    one = {r: v for r, other, _, v in table_rows(engine, "one") if other == "Total"}
    two = {r: v for r, other, _, v in table_rows(engine, "two") if other == "Total"}
    linked = {row[0]: row[4] for row in table_rows(engine, "linked") if row[1] == row[2] == "Total"}
    assert len(one) == 5 and one == two == linked
    before = table_rows(engine, "one")
    anonsql.ckm_table(db, "census", "region,sex", record_key="pid", D=2, V=1.0, js=2, out="one", replace=True)
    assert table_rows(engine, "one") == before


def test_cli_publishes_and_audits_and_a_changed_value_fails_the_audit(db, engine, tmp_path, capsys):
    write_frame(engine, HAND, "t")
    assert main(["tables", "--db", db, "--table", "t", "--dims", "a,b", "--cube", "--method", "ckm",
                 "--record-key-column", "rk", "--ckm-d", "1", "--ckm-v", "0.5", "--ckm-js", "0",
                 "--compare-suppression", "--out", "pub"]) == 0
    out = capsys.readouterr().out
    assert "cell key method" in out and "beside suppression on the same table" in out
    plain = anonsql.safe_table(db, "t", "a,b", min_count=3, out="plain")  # what --compare-suppression ran
    hidden = round(plain.suppressed_share * plain.cells)
    rows = {re.split(r"\s{2,}", line.strip())[0]: re.split(r"\s{2,}", line.strip())[1:] for line in out.splitlines()}
    assert rows["suppression, min count 3"] == [str(plain.cells), f"{hidden} hidden", f"{plain.suppressed_share:.1%}",
                                                "-"]
    assert rows["ckm, non-empty cells"] == ["8", "5 changed", "62.5%", "0.625"]  # HAND_EXPECTED: 5 of 8 moved by 1
    grid = plain.cells
    assert rows["ckm, whole grid"] == [str(grid), "5 changed", f"{5 / grid:.1%}", f"{5 / grid:.3f}"]
    assert main(["tables", "audit", "--db", db, "--published", "pub"]) == 0
    engine.execute("UPDATE pub SET value = value + 1 WHERE grouping_id = 3")
    assert main(["tables", "audit", "--db", db, "--published", "pub"]) == 1
    assert "differ" in capsys.readouterr().out


def test_bad_input_is_one_clear_error_and_changes_nothing(db, engine, tmp_path, monkeypatch):
    write_frame(engine, HAND.assign(pid=range(6), bad=[0.1, 0.2, 1.5, 0.3, 0.4, 0.5], word=list("abcdef"),
                                    big=[0, 1, 2, 3, 4, 2**32], frequency=list("xxyyzz"),
                                    unit=[1, 2, 3, None, 5, 6]), "t")
    monkeypatch.delenv("ANONSQL_PSEUDONYM_KEY", raising=False)
    short = tmp_path / "short.key"
    short.write_text("tiny")
    good = tmp_path / "good.key"
    good.write_text(SECRET)
    before = table_rows(engine, "t")
    cases = [(dict(), "needs record keys"), (dict(record_key="pid", record_key_column="rk"), "one of them"),
             (dict(record_key="pid"), "needs a secret key"), (dict(record_key="pid", key_file=str(short)), "too short"),
             (dict(record_key_column="bad"), "no key in"),
             (dict(record_key="unit", key_file=str(good)), "is NULL on 1"),
             (dict(record_key_column="word"), "must hold record keys"),
             (dict(record_key_column="big"), r"no key in \[0, 2\^32\)"),
             (dict(record_key_column="rk", D=0), "--ckm-d"), (dict(record_key_column="rk", js=5, D=2), "--ckm-js"),
             (dict(record_key_column="rk", pstay=1.0), "--ckm-pstay")]
    for kwargs, msg in cases:
        with pytest.raises(AnonsqlError, match=msg) as refused:
            anonsql.ckm_table(db, "t", "a,b", **kwargs)
        assert "\n" not in str(refused.value)
    with pytest.raises(AnonsqlError, match="cannot be a dimension"):
        anonsql.ckm_table(db, "t", "a,rk", record_key_column="rk")
    with pytest.raises(AnonsqlError, match="collide with the cell key method's columns"):
        anonsql.ckm_table(db, "t", "a,frequency", record_key_column="rk")
    assert main(["tables", "--db", db, "--table", "t", "--dims", "a", "--method", "ckm"]) == 2
    assert main(["tables", "--db", db, "--table", "t", "--dims", "a", "--method", "ckm", "--record-key-column", "rk",
                 "--hierarchy", "a=tree"]) == 2
    assert main(["tables", "--db", db, "--table", "t", "--dims", "a", "--record-key-column", "rk"]) == 2
    assert table_rows(engine, "t") == before and anonsql.catalog.find_table(engine, "t_ckm") is None


def test_failed_verification_writes_nothing(db, engine, monkeypatch):
    write_frame(engine, HAND, "t")
    real = ckm_verify.lookup
    monkeypatch.setattr(ckm_verify, "lookup", lambda t, n, ck: real(t, n, ck) + (n == 6))  # the grand total
    with pytest.raises(VerificationError, match="recount plus"):
        anonsql.ckm_table(db, "t", "a,b", record_key_column="rk", D=1, V=0.5, js=0, out="pub")
    for name in ("pub", "pub_ptable", "pub_ckm_spec"):
        assert anonsql.catalog.find_table(engine, name) is None


def test_utility_measures():
    u = utility(np.array([0, 0, 0, 1]), np.array([2, 0, 8, 10]), np.array([3, 0, 8, 10]))
    assert u.cells == 3 and u.changed_share == pytest.approx(1 / 3) and u.mean_abs_deviation == pytest.approx(1 / 3)
    assert u.relative_by_size == {"1-4": 0.5, "5-9": 0.0, "10-99": 0.0}
    p, q = np.array([2, 8]) / 10, np.array([3, 8]) / 11
    assert u.hellinger == pytest.approx(np.sqrt(0.5 * ((np.sqrt(p) - np.sqrt(q)) ** 2).sum()))


def test_a_release_tables_step_with_method_ckm_records_the_ptable_never_the_key(db, engine, tmp_path):
    write_frame(engine, _frame(), "census")
    key = tmp_path / "ckm.key"
    key.write_text(SECRET)
    spec = tmp_path / "release.toml"
    spec.write_text('[source]\ntable = "census"\nqi = ["region", "sex"]\n\n'
                    '[[steps]]\nkind = "tables"\nmethod = "ckm"\ndims = ["region", "sex"]\n'
                    f'record_key = "pid"\nkey_file = "{key}"\nckm_d = 2\nckm_v = 1.0\nckm_js = 2\nout = "counts"\n'
                    'publish = true\n\n[outputs]\ndir = "out"\n')
    report = anonsql.release_run(spec, engine)
    assert report.ok
    text = (tmp_path / "out" / "manifest.json").read_text()
    manifest = json.loads(text)
    assert manifest["published"] == ["counts", "counts_ptable", "counts_ckm_spec"]
    assert manifest["private"]["tables"] == []
    figures = manifest["steps"][0]["figures"]
    assert (figures["D"], figures["V"], figures["js"]) == (2, 1.0, 2)
    assert figures["ptable_fingerprint"] == ptable(2, 1.0, 2).fingerprint()
    texts = {p.name: p.read_text() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert any("sql/ckm/publish.sql" in t for name, t in texts.items() if name.endswith(".sql"))  # private script
    assert not [name for name, t in texts.items() if SECRET in t or read_key(str(key)).ipad.hex() in t]
    assert anonsql.release_verify(spec, engine).ok


def test_ptable_command_shows_the_rows_and_the_fingerprint(capsys):
    assert main(["tables", "ptable", "--ckm-d", "2", "--ckm-v", "1", "--ckm-js", "2", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    t = ptable(2, 1.0, 2)
    assert shown["fingerprint"] == t.fingerprint()
    assert [(r["i"], r["v"]) for r in shown["rows"]] == list(zip(t.i.tolist(), t.v.tolist()))
    assert main(["tables", "ptable", "--ckm-d", "2", "--ckm-js", "3"]) == 2
