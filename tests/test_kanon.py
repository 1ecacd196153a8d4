"""The kanon job end to end on both engines: SQL statistics, loop, one UPDATE, SQL verification."""

import json

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anonsql
from anonsql import catalog, verify
from anonsql.cli import main
from anonsql.errors import AnonsqlError
from anonsql.loading import write_frame

from .conftest import table_rows

KH_QI = ["age", "workclass", "education", "marital_status", "occupation", "race", "sex", "native_country"]

TOY = {  # 12 rows, 2 QIs + an id and a class; ⊥ already present in one cell
    "id": list(range(1, 13)),
    "zip": ["1", "1", "1", "2", "2", "2", "3", "3", None, "4", "4", "4"],
    "sex": ["m", "m", "f", "f", "f", "m", "m", "f", "f", "m", "m", "m"],
    "cls": ["a", "a", "a", "b", "b", "b", "a", "a", "b", "b", "b", "a"],
}


def only_nulls_added(before, after, qi_pos):
    """Row by row (aligned by id): every changed cell is a QI cell that became NULL."""
    for b, a in zip(before, after):
        for j, (x, y) in enumerate(zip(b, a)):
            if x != y and not (j in qi_pos and y is None):
                return False
    return True


def test_copy_is_k_anonymous_and_source_untouched(db, engine, make_table):
    make_table("t", TOY)
    before = table_rows(engine, "t")
    r = anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, out="t2")
    assert r.verified and r.out == "t2" and r.rows == 12 and r.qi_cells == 24
    assert table_rows(engine, "t") == before
    after = table_rows(engine, "t2")
    assert len(after) == 12 and only_nulls_added(before, after, {1, 2})
    assert anonsql.check(db, "t2", "zip,sex", 2).ok
    nulls_before = sum(v is None for row in before for v in row[1:3])
    nulls_after = sum(v is None for row in after for v in row[1:3])
    assert r.suppressed_cells == nulls_after - nulls_before > 0
    assert r.suppressed_ratio == pytest.approx(r.suppressed_cells / 24)
    assert r.cost == "mar" and r.kl_divergence == pytest.approx(r.gamma_sum, abs=1e-12)
    assert set(r.seconds) == {"statistics", "loop", "rewrite", "verify"}


def test_in_place_rewrites_the_source(db, engine, make_table):
    make_table("t", TOY)
    before = table_rows(engine, "t")
    r = anonsql.k_anonymize(db, "t", ["zip", "sex"], "cls", 3, in_place=True, cost="ham")
    assert r.verified and r.in_place and r.out == "t"
    after = table_rows(engine, "t")
    assert after != before and only_nulls_added(before, after, {1, 2})
    assert anonsql.check(db, "t", "zip,sex", 3).ok


def test_failed_verification_rolls_everything_back(db, engine, make_table, monkeypatch):
    make_table("t", TOY)
    before = table_rows(engine, "t")
    real = verify.suppression

    def broken(*args, **kwargs):
        check = real(*args, **kwargs)
        check.problems.append("injected failure")
        return check

    monkeypatch.setattr(verify, "suppression", broken)
    for kwargs in (dict(out="t2"), dict(in_place=True)):
        with pytest.raises(AnonsqlError, match="verification failed.*injected failure"):
            anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, **kwargs)
        assert table_rows(engine, "t") == before
        assert catalog.find_table(engine, "t2") is None


def test_emit_sql_dry_run_changes_nothing_and_the_script_reproduces_the_run(db, engine, make_table, tmp_path):
    make_table("t", TOY)
    script = tmp_path / "run.sql"
    r = anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, out="t2", emit_sql=str(script), execute=False)
    assert not r.verified and catalog.find_table(engine, "t2") is None
    text = script.read_text()
    assert text.count("*/ UPDATE ") == 1 and "ORIGINAL quasi-identifier values" in text
    for statement in text.split(";\n"):
        body = "\n".join(l for l in statement.splitlines() if not l.startswith("--")).strip()
        if body:
            engine.execute(body)
    scripted = table_rows(engine, "t2")
    anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, out="t3")
    assert scripted == table_rows(engine, "t3")


def test_awkward_names_in_a_schema(db, engine, make_table):
    engine.execute('CREATE SCHEMA "my s"')
    make_table('"my s"."the table"', {"select": TOY["zip"], "a b": TOY["sex"], 'a"b': TOY["cls"]})
    r = anonsql.k_anonymize(db, '"my s"."the table"', ["select", "a b"], 'a"b', 2, out='"my s"."out put"')
    assert r.verified and r.out == "my s.out put"
    assert anonsql.check(db, '"my s"."out put"', ["select", "a b"], 2).ok


def test_k_one_changes_nothing(db, engine, make_table):
    make_table("t", TOY)
    r = anonsql.k_anonymize(db, "t", "zip,sex", "cls", 1, out="t1")
    assert r.verified and r.suppressed_cells == 0 and r.iterations == 0
    assert table_rows(engine, "t1") == table_rows(engine, "t")


def test_class_smaller_than_k_still_reaches_k(db, engine, make_table):
    make_table("t", {"q": ["x", "y", "z", "x", "y", "w"], "c": ["a", "a", "a", "a", "a", "rare"]})
    r = anonsql.k_anonymize(db, "t", "q", "c", 3, out="t3")
    assert r.verified and anonsql.check(db, "t3", "q", 3).ok


@pytest.mark.parametrize("kwargs, match", [
    (dict(cost="hamming"), "unknown cost 'hamming'"),
    (dict(k=0), "k must be an integer >= 1"),
    (dict(k=13), "larger than the table"),
    (dict(alpha=-1), "alpha"),
    (dict(qi="zip,cls"), "also listed as a quasi-identifier"),
    (dict(qi="sex", class_column="zip"), "class column 'zip' has 1 NULL"),
    (dict(qi="zip,nope"), "unknown column 'nope'"),
    (dict(out="t"), "would overwrite the source table"),
    (dict(out="other"), "already exists"),
    (dict(out="x", in_place=True), "exclude each other"),
])
def test_bad_input_changes_nothing(db, engine, make_table, kwargs, match):
    make_table("t", TOY)
    make_table("other", {"a": [1]})
    before = table_rows(engine, "t")
    args = dict(qi="zip,sex", class_column="cls", k=2) | kwargs
    with pytest.raises(AnonsqlError, match=match):
        anonsql.k_anonymize(db, "t", args.pop("qi"), args.pop("class_column"), args.pop("k"), **args)
    assert table_rows(engine, "t") == before and table_rows(engine, "other") == [(1,)]


def test_cli_report_and_exit_codes(db, make_table, tmp_path, capsys):
    make_table("t", TOY)
    report = tmp_path / "r.json"
    code = main(["kanon", "--db", db, "--table", "t", "--qi", "zip,sex", "--class", "cls", "--k", "2",
                 "--out", "t2", "--report", str(report), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0 and "2-anonymous" in out and "verified by SQL: yes" in out
    data = json.loads(report.read_text())
    for key in ("k", "cost", "alpha", "seed", "rows", "qi_cells", "suppressed_cells", "suppressed_ratio",
                "kl_divergence", "iterations", "verified", "seconds"):
        assert key in data
    code = main(["kanon", "--db", db, "--table", "t", "--qi", "zip,sex", "--class", "cls", "--k", "2",
                 "--cost", "nope", "--out", "t3"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "unknown cost" in err


def test_adult_same_result_on_both_engines_and_mar_invariant(tmp_path, request):
    pg = request.getfixturevalue("pg_server_url")
    tables = []
    for db in (str(tmp_path / "a.duckdb"), pg):
        anonsql.load_dataset(db, "adult-kh", "adult_kanon", replace=True)
        r = anonsql.k_anonymize(db, "adult_kanon", KH_QI, "income", 10, cost="mar", seed=0,
                          out="adult_kanon_k10", replace=True)
        assert r.verified and r.rows == 30161 and r.groups == 13330
        assert r.kl_divergence == pytest.approx(r.gamma_sum, rel=1e-9)
        eng = anonsql.connect(db)
        tables.append(eng.fetch_df('SELECT * FROM "adult_kanon_k10" ORDER BY id'))
        eng.close()
    pd.testing.assert_frame_equal(tables[0], tables[1], check_dtype=False)


cells = st.one_of(st.none(), st.sampled_from(["a", "b", "c", "d"]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(cells, cells, cells, st.sampled_from(["p", "q"])), min_size=2, max_size=25),
       k=st.integers(1, 5), cost=st.sampled_from(["ham", "info", "mar", "hybrid"]))
def test_property_output_is_k_anonymous_and_only_suppressed(tmp_path_factory, rows, k, cost):
    k = min(k, len(rows))
    db = str(tmp_path_factory.mktemp("p") / "p.duckdb")
    frame = pd.DataFrame([(i, *r) for i, r in enumerate(rows)], columns=["id", "a", "b", "c", "cls"], dtype=object)
    eng = anonsql.connect(db, create=True)
    write_frame(eng, frame, "t")
    r = anonsql.k_anonymize(eng, "t", "a,b,c", "cls", k, cost=cost, seed=1, out="o")
    before, after = table_rows(eng, "t"), table_rows(eng, "o")
    eng.close()
    assert r.verified and anonsql.check(db, "o", "a,b,c", k).ok
    before = sorted(before, key=lambda row: row[0])
    after = sorted(after, key=lambda row: row[0])
    assert only_nulls_added(before, after, {1, 2, 3})


def test_near_unique_quasi_identifier_is_warned_about(db, make_table):
    make_table("t", {"wide": [str(i) for i in range(1200)] * 2, "c": ["a", "b"] * 1200})
    r = anonsql.k_anonymize(db, "t", "wide", "c", 2, out="o")
    assert r.verified and any("'wide' has 1,200 distinct values" in n for n in r.notes)


def test_numeric_quasi_identifiers_with_nulls(db, engine, make_table):
    make_table("t", {"id": list(range(10)), "age": [30, 30, 31, 31, None, 45, 45, 46, 46, None],
                     "score": [1.5, 1.5, 2.25, 2.25, 1.5, None, 0.1, 0.1, 3.0, 3.0],
                     "c": ["a", "a", "a", "b", "b", "b", "a", "a", "b", "b"]})
    before = table_rows(engine, "t")
    r = anonsql.k_anonymize(db, "t", "age,score", "c", 2, out="o", cost="info")
    assert r.verified and anonsql.check(db, "o", "age,score", 2).ok
    assert only_nulls_added(sorted(before), sorted(table_rows(engine, "o")), {1, 2})
