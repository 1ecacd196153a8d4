"""The kanon job end to end on both engines: SQL statistics, loop, one UPDATE, SQL verification."""

import json

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anonsql
from anonsql import catalog
from anonsql.cli import main
from anonsql.data.loading import write_frame
from anonsql.errors import AnonsqlError, VerificationError
from anonsql.kanon import job as kanon_job

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
    assert r.ok and r.out == "t2" and r.rows == 12 and r.qi_cells == 24
    assert {c.name: c.query for c in r.checks} == {
        "k-anonymity": "common/violations_summary", "same rows": "common/row_count",
        "same class counts": "common/class_counts", "only NULLs added": "common/attr_class_counts",
        "suppressed cells as decided": "common/attr_class_counts", "non-QI columns unchanged": "common/rows_not_in"}
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
    assert r.ok and r.in_place and r.out == "t"
    assert "non-QI columns unchanged" not in {c.name for c in r.checks}  # no copy to compare with
    after = table_rows(engine, "t")
    assert after != before and only_nulls_added(before, after, {1, 2})
    assert anonsql.check(db, "t", "zip,sex", 3).ok


def _break_verification(monkeypatch):
    """Make the kanon checks record one failing check (as if the output were not k-anonymous)."""
    real = kanon_job.verify.suppression

    def broken(engine, report, *args, **kwargs):
        suppressed = real(engine, report, *args, **kwargs)
        report.check("k-anonymity", False, "common/violations_summary", "injected failure")
        return suppressed

    monkeypatch.setattr(kanon_job.verify, "suppression", broken)


def test_failed_verification_rolls_everything_back(db, engine, make_table, monkeypatch, capsys):
    make_table("t", TOY)
    before = table_rows(engine, "t")
    _break_verification(monkeypatch)
    for kwargs in (dict(out="t2"), dict(in_place=True)):
        with pytest.raises(VerificationError, match="verification failed.*k-anonymity: injected failure") as err:
            anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, **kwargs)
        assert [c.name for c in err.value.checks if not c.passed] == ["k-anonymity"]
        assert table_rows(engine, "t") == before
        assert catalog.find_table(engine, "t2") is None
    for where in (["--out", "t2"], ["--in-place"]):
        code = main(["kanon", "--db", db, "--table", "t", "--qi", "zip,sex", "--class", "cls", "--k", "2",
                     "--quiet", *where])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1
        assert err.startswith("anonsql kanon: error: verification failed, nothing was changed")
        assert table_rows(engine, "t") == before and catalog.find_table(engine, "t2") is None


def _statements(text):
    """The statements of a script, comment lines dropped."""
    for statement in text.split(";\n"):
        body = "\n".join(line for line in statement.splitlines() if not line.startswith("--")).strip()
        if body:
            yield body


def test_emit_sql_dry_run_changes_nothing_and_the_script_reproduces_the_run(db, engine, make_table, tmp_path):
    make_table("t", TOY)
    script = tmp_path / "run.sql"
    r = anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, out="t2", emit_sql=str(script), execute=False)
    assert not r.ok and not r.checks and catalog.find_table(engine, "t2") is None
    assert any("nothing in the database changed" in n for n in r.notes)
    text = script.read_text()
    assert "ORIGINAL quasi-identifier values" in text and text.count("\nUPDATE ") == 1
    assert '"suppress_zip"' in text and '"suppress_sex"' in text and "s_0" not in text  # the real columns
    body, checks = text.split("COMMIT;")
    assert "k-anonymity: must return groups = 0" in checks and "row count: must return 12" in checks
    assert checks.count("EXCEPT ALL") == 2
    for statement in _statements(body + "COMMIT;"):
        engine.execute(statement)
    scripted = table_rows(engine, "t2")
    anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, out="t3")
    assert scripted == table_rows(engine, "t3")
    # the reviewer's queries, run on the scripted output, return what their comments promise
    assert [engine.fetch_all(q, {}) for q in _statements(checks)] == [[(0, 0)], [(12,)], [(0,)], [(0,)]]
    # with --replace the script first drops the existing output
    anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, out="t2", replace=True, emit_sql=str(script), execute=False)
    for statement in _statements(script.read_text().split("COMMIT;")[0] + "COMMIT;"):
        engine.execute(statement)
    assert table_rows(engine, "t2") == scripted


def test_emit_sql_script_names_awkward_columns(db, engine, make_table, tmp_path):
    make_table("t", {"suppress_a": TOY["zip"], "a": TOY["sex"], "a b": TOY["cls"]})
    script = tmp_path / "run.sql"
    anonsql.k_anonymize(db, "t", "a,suppress_a", "a b", 2, in_place=True, emit_sql=str(script), execute=False)
    text = script.read_text()
    assert '"_suppress_a"' in text and '"suppress_suppress_a"' in text
    assert "EXCEPT ALL" not in text  # in place: no source left to compare with
    before = table_rows(engine, "t")
    for statement in _statements(text.split("COMMIT;")[0] + "COMMIT;"):
        engine.execute(statement)
    assert table_rows(engine, "t") != before and anonsql.check(db, "t", "a,suppress_a", 2).ok


def test_cli_dry_run_writes_the_script_and_exits_0(db, engine, make_table, tmp_path, capsys):
    make_table("t", TOY)
    base = ["kanon", "--db", db, "--table", "t", "--qi", "zip,sex", "--class", "cls", "--k", "2", "--quiet"]
    assert main([*base, "--dry-run"]) == 2
    assert "--dry-run needs --emit-sql" in capsys.readouterr().err
    assert main([*base, "--emit-sql", "-", "--dry-run"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("-- anonsql kanon: t -> t_k2") and "dry run" in captured.err
    assert catalog.find_table(engine, "t_k2") is None
    assert main([*base, "--alpha", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "alpha (the pseudo count) for cost 'mar' must be a finite number > 0" in err


def test_awkward_names_in_a_schema(db, engine, make_table):
    engine.execute('CREATE SCHEMA "my s"')
    make_table('"my s"."the table"', {"select": TOY["zip"], "a b": TOY["sex"], 'a"b': TOY["cls"]})
    r = anonsql.k_anonymize(db, '"my s"."the table"', ["select", "a b"], 'a"b', 2, out='"my s"."out put"')
    assert r.ok and r.out == "my s.out put"
    assert anonsql.check(db, '"my s"."out put"', ["select", "a b"], 2).ok


def test_k_one_changes_nothing(db, engine, make_table):
    make_table("t", TOY)
    r = anonsql.k_anonymize(db, "t", "zip,sex", "cls", 1, out="t1")
    assert r.ok and r.suppressed_cells == 0 and r.iterations == 0
    assert table_rows(engine, "t1") == table_rows(engine, "t")


def test_class_smaller_than_k_still_reaches_k(db, engine, make_table):
    make_table("t", {"q": ["x", "y", "z", "x", "y", "w"], "c": ["a", "a", "a", "a", "a", "rare"]})
    r = anonsql.k_anonymize(db, "t", "q", "c", 3, out="t3")
    assert r.ok and anonsql.check(db, "t3", "q", 3).ok


@pytest.mark.parametrize("kwargs, match", [
    (dict(cost="hamming"), "unknown cost 'hamming'"),
    (dict(k=0), "k must be an integer >= 1"),
    (dict(k=13), "larger than the table"),
    (dict(alpha=-1), "alpha"),
    (dict(alpha=0), r"alpha \(the pseudo count\) for cost 'mar' must be a finite number > 0, got 0"),
    (dict(alpha=float("nan"), cost="ham"), "must be a finite number >= 0"),
    (dict(seed=-1), "seed must be an integer >= 0"),
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
    assert code == 0 and "2-anonymous" in out and "check: k-anonymity holds (sql/common/violations_summary.sql)" in out
    assert "KL divergence between original and output (eq. 7)" in out
    data = json.loads(report.read_text())
    for key in ("k", "cost", "alpha", "seed", "rows", "qi_cells", "suppressed_cells", "suppressed_ratio",
                "kl_divergence", "iterations", "ok", "checks", "seconds"):
        assert key in data
    assert data["ok"] is True and "verified" not in data
    code = main(["kanon", "--db", db, "--table", "t", "--qi", "zip,sex", "--class", "cls", "--k", "2",
                 "--cost", "nope", "--out", "t3"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "'nope' is not one of" in err


def test_adult_same_result_on_both_engines_and_mar_invariant(tmp_path, request):
    pg = request.getfixturevalue("pg_server_url")
    tables = []
    for db in (str(tmp_path / "a.duckdb"), pg):
        anonsql.load_dataset(db, "adult-kh", "adult_kanon", replace=True)
        r = anonsql.k_anonymize(db, "adult_kanon", KH_QI, "income", 10, cost="mar", seed=0,
                          out="adult_kanon_k10", replace=True)
        assert r.ok and r.rows == 30161 and r.groups == 13330
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
    assert r.ok and anonsql.check(db, "o", "a,b,c", k).ok
    before = sorted(before, key=lambda row: row[0])
    after = sorted(after, key=lambda row: row[0])
    assert only_nulls_added(before, after, {1, 2, 3})


def test_near_unique_quasi_identifier_is_warned_about(db, make_table):
    make_table("t", {"wide": [str(i) for i in range(1200)] * 2, "c": ["a", "b"] * 1200})
    r = anonsql.k_anonymize(db, "t", "wide", "c", 2, out="o")
    assert r.ok and any("'wide' has 1,200 distinct values" in n for n in r.notes)


def test_numeric_quasi_identifiers_with_nulls(db, engine, make_table):
    make_table("t", {"id": list(range(10)), "age": [30, 30, 31, 31, None, 45, 45, 46, 46, None],
                     "score": [1.5, 1.5, 2.25, 2.25, 1.5, None, 0.1, 0.1, 3.0, 3.0],
                     "c": ["a", "a", "a", "b", "b", "b", "a", "a", "b", "b"]})
    before = table_rows(engine, "t")
    r = anonsql.k_anonymize(db, "t", "age,score", "c", 2, out="o", cost="info")
    assert r.ok and anonsql.check(db, "o", "age,score", 2).ok
    assert only_nulls_added(sorted(before), sorted(table_rows(engine, "o")), {1, 2})
