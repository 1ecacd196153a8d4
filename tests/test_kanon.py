"""The kanon job end to end on both engines: SQL statistics, loop, one UPDATE, SQL verification."""

import hashlib
import hmac
import json

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anonsql
from anonsql import catalog, sql
from anonsql.cli import main
from anonsql.data.loading import write_frame
from anonsql.errors import AnonsqlError, VerificationError
from anonsql.kanon import job as kanon_job
from anonsql.kanon.rewrite import SuppressionPlan

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
        "k-anonymity": "kanon/violations_of_groups", "same rows": "common/qi_class_counts",
        "same class counts": "common/qi_class_counts", "only NULLs added": "common/attr_class_counts",
        "suppressed cells as decided": "common/attr_class_counts",
        "non-QI columns unchanged": "common/multiset_difference"}
    assert any("column 'id' is unique in t2" in n and "--pseudonymize" in n for n in r.warnings)  # a direct identifier
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


@pytest.mark.parametrize("b, differ", [
    ([("x", 1, None), ("x", 1, None), ("y", 2, "z")], 0),  # same multiset in another order, NULL = NULL
    ([("y", 2, "z"), ("x", 1, None), ("x", 1, "w")], 2),  # one row changed: missing once, extra once
    ([("y", 2, "z"), ("x", 1, None)], 1),  # a duplicate lost
    ([("y", 2, "z"), ("x", 1, None), ("x", 1, None), ("x", 1, None)], 1),  # a duplicate gained
])
def test_non_qi_comparison_counts_rows_without_a_twin(engine, make_table, b, differ):
    """The copy's non-QI check (common/multiset_difference) equals EXCEPT ALL both ways summed, also
    when the user's columns are named like its internal alias."""
    names = ["side", "SIDE_1", "d"]
    make_table("a", dict(zip(names, map(list, zip(("x", 1, None), ("y", 2, "z"), ("x", 1, None))))))
    make_table("b", dict(zip(names, map(list, zip(*b)))))
    assert sql.unused_ident("side", names).name == "side_2"
    text, params = sql.render("common/multiset_difference", engine.dialect, a=sql.TableName("a").expr,
                              b=sql.TableName("b").expr, col=sql.columns(names), side=sql.unused_ident("side", names))
    assert engine.fetch_all(text, params) == [(differ,)]


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


def test_failed_verification_rolls_everything_back(db, engine, make_table, monkeypatch, capsys, key_file):
    make_table("t", TOY)
    before = table_rows(engine, "t")
    _break_verification(monkeypatch)
    for kwargs in (dict(out="t2"), dict(in_place=True), dict(in_place=True, drop="id", changes="ch"),
                   dict(out="t2", pseudonymize="id", key_file=key_file)):
        with pytest.raises(VerificationError, match="verification failed.*k-anonymity: injected failure") as err:
            anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, **kwargs)
        assert [c.name for c in err.value.checks if not c.passed] == ["k-anonymity"]
        assert table_rows(engine, "t") == before
        assert catalog.find_table(engine, "t2") is None and catalog.find_table(engine, "ch") is None
    for where in (["--out", "t2"], ["--in-place"]):
        code = main(["kanon", "--db", db, "--table", "t", "--qi", "zip,sex", "--class", "cls", "--k", "2",
                     "--quiet", *where])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1
        assert err.startswith("anonsql kanon: error: verification failed, nothing was changed")
        assert table_rows(engine, "t") == before and catalog.find_table(engine, "t2") is None


@pytest.mark.parametrize("columns", [["id", "zip", "sex", "cls"], ["zip", "sex", "cls"]], ids=["id", "class-only"])
@pytest.mark.parametrize("corruption, failing", [
    ("INSERT INTO t2 (zip, sex, cls) VALUES ('9', 'x', 'a')", {"k-anonymity", "same rows", "only NULLs added"}),
    ("UPDATE t2 SET cls = 'c' WHERE cls = 'a'", {"same class counts", "non-QI columns unchanged"}),
    ("DELETE FROM t2 WHERE cls = 'a'", {"same rows", "same class counts", "non-QI columns unchanged"}),
])
def test_a_corrupted_output_fails_the_checks_it_breaks(db, engine, make_table, monkeypatch, columns, corruption,
                                                     failing):
    """The checks read one recount of the WRITTEN table (its N(y, c) grouped in SQL): an output changed
    after the write-back fails them, also where the class is the only non-QI column (its multiset
    is then N(c), not a second query)."""
    make_table("t", {c: TOY[c] for c in columns})
    write = SuppressionPlan.execute

    def write_then_corrupt(plan, engine_, key=None):
        write(plan, engine_, key)
        engine_.execute(corruption)

    monkeypatch.setattr(SuppressionPlan, "execute", write_then_corrupt)
    with pytest.raises(VerificationError) as err:
        anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, out="t2")
    assert failing <= {c.name for c in err.value.checks if not c.passed}
    assert catalog.find_table(engine, "t2") is None


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
    assert "ORIGINAL quasi-identifier values" in text and text.count("\nCREATE TABLE ") == 1
    assert "\nUPDATE " not in text  # a copy is one CREATE TABLE AS SELECT
    assert '"suppress_zip"' in text and '"suppress_sex"' in text and "s_0" not in text  # the real columns
    body, checks = text.split("COMMIT;")
    assert "k-anonymity: must return groups = 0" in checks and "row count: must return 12" in checks
    assert checks.count("UNION ALL") == 1  # the non-QI columns: one multiset comparison
    for statement in _statements(body + "COMMIT;"):
        engine.execute(statement)
    scripted = table_rows(engine, "t2")
    anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, out="t3")
    assert scripted == table_rows(engine, "t3")
    # the reviewer's queries, run on the scripted output, return what their comments promise
    assert [engine.fetch_all(q, {}) for q in _statements(checks)] == [[(0, 0)], [(12,)], [(0,)]]
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
    assert "UNION ALL" not in text  # in place: no source left to compare with
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
    assert code == 0 and "2-anonymous" in out and "check: k-anonymity holds (sql/kanon/violations_of_groups.sql)" in out
    assert "(KL divergence, eq. 7)" in out and "trade-off: mar keeps the class-conditional distributions" in out
    data = json.loads(report.read_text())
    for key in ("k", "cost", "alpha", "seed", "rows", "qi_cells", "suppressed_cells", "suppressed_ratio",
                "kl_divergence", "iterations", "ok", "checks", "seconds"):
        assert key in data
    assert data["ok"] is True and "verified" not in data
    code = main(["kanon", "--db", db, "--table", "t", "--qi", "zip,sex", "--class", "cls", "--k", "2",
                 "--cost", "nope", "--out", "t3"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "'nope' is not one of" in err


@pytest.mark.slow
def test_adult_same_result_on_both_engines_and_mar_invariant(tmp_path, pg_server_url):
    pg = pg_server_url
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


@pytest.mark.slow
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


def test_json_stdout_parses_even_where_duckdb_would_draw_its_bar(tmp_path, monkeypatch, capfd):
    """DuckDB draws its progress bar on the process's stdout (fd 1) once a query runs longer than
    progress_bar_time (2 s by default, i.e. at ~10^7 rows). Here every connection starts with
    that time set to 1 ms (which also switches the bar on), so without anonsql turning it off
    the bar lands ahead of the JSON (checked: this test fails then); progress lines go to stderr."""
    import duckdb

    real_connect = duckdb.connect

    def connect_with_bar(*args, **kwargs):
        con = real_connect(*args, **kwargs)
        con.execute("SET progress_bar_time = 1")
        return con

    db = str(tmp_path / "bar.duckdb")
    con = real_connect(db)
    con.execute("CREATE TABLE t AS SELECT CAST(i % 97 AS VARCHAR) AS zip, CAST(i % 3 AS VARCHAR) AS sex, "
                "CAST(i % 2 AS VARCHAR) AS cls FROM range(300000) r(i)")
    con.close()
    capfd.readouterr()  # only the command's output below
    monkeypatch.setattr(duckdb, "connect", connect_with_bar)
    code = main(["kanon", "--db", db, "--table", "t", "--qi", "zip,sex", "--class", "cls", "--k", "5", "--json"])
    out, err = capfd.readouterr()
    assert code == 0, err
    assert json.loads(out)["ok"] is True
    assert "statistics:" in err


# ---------------------------------------------------------------- issue 14: identifiers, changes, no class

KEY = "a secret key of the steward, 0123"


@pytest.fixture
def key_file(tmp_path):
    path = tmp_path / "pseudonym.key"
    path.write_text(KEY + "\n")
    return str(path)


def hmac_hex(value):
    return hmac.new(KEY.encode(), str(value).encode(), hashlib.sha256).hexdigest()


def with_extra(engine, make_table):
    make_table("t", {**TOY, "admitted": [f"2020-01-{d:02d}" for d in range(1, 13)]})
    return table_rows(engine, "t")


def test_drop_and_pseudonymize_direct_identifiers(db, engine, make_table, monkeypatch, tmp_path, key_file):
    before = with_extra(engine, make_table)
    r = anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, out="t2", drop="admitted", pseudonymize="id",
                            key_file=key_file)
    assert r.ok and r.dropped == ["admitted"] and r.pseudonymized == ["id"]
    assert {c.name for c in r.checks} >= {"non-QI columns unchanged", "dropped columns gone",
                                          "no original value left in the pseudonymized columns"}
    assert catalog.get_table(engine, "t2").column_names == ["id", "zip", "sex", "cls"]
    after = sorted(table_rows(engine, "t2"))
    assert sorted(row[0] for row in after) == sorted(hmac_hex(row[0]) for row in before)  # HMAC-SHA256(K, id)
    assert not any("unique" in n for n in r.warnings)  # nothing identifying left unmentioned
    text = r.summary() + r.to_json()
    assert KEY not in text and "pseudonymized (keyed HMAC-SHA256): id" in text
    # the same key from the environment gives the same pseudonyms; no key is one error line
    monkeypatch.setenv("ANONSQL_PSEUDONYM_KEY", KEY)
    anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, out="t3", pseudonymize="id")
    assert sorted(row[0] for row in table_rows(engine, "t3")) == sorted(row[0] for row in after)
    monkeypatch.delenv("ANONSQL_PSEUDONYM_KEY")
    with pytest.raises(AnonsqlError, match="needs a secret key: give --key-file FILE or set ANONSQL_PSEUDONYM_KEY"):
        anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, out="t4", pseudonymize="id")
    for kwargs, match in ((dict(drop="zip"), "is a quasi-identifier"), (dict(drop="cls"), "is the class column"),
                          (dict(drop="id", pseudonymize="id", key_file=key_file), "both --drop and"),
                          (dict(key_file=key_file), "--key-file is the key of --pseudonymize")):
        with pytest.raises(AnonsqlError, match=match):
            anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, out="t4", **kwargs)
    assert catalog.find_table(engine, "t4") is None and table_rows(engine, "t") == before
    # the script names the steps but never holds the key
    script = tmp_path / "run.sql"
    anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, out="t5", drop="admitted", pseudonymize="id",
                        key_file=key_file, emit_sql=str(script), execute=False)
    text = script.read_text()
    assert "HMAC-SHA256" in text and "the key is NOT in this script" in text
    assert "DROP COLUMN" not in text and '"t"."admitted"' not in text  # a copy leaves it out of its CTAS
    assert KEY not in text and KEY.encode().hex() not in text


def test_pseudonymize_a_column_with_nulls_passes_its_check(db, engine, make_table, key_file):
    # a NULL stays NULL under HMAC and is no original value left (sql/common/values_shared.sql):
    # the check used to count it and fail every run on a column with a missing value
    make_table("t", {**TOY, "id": [None, *range(2, 13)]})
    r = anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, out="t2", pseudonymize="id", key_file=key_file)
    assert r.ok and r.pseudonymized == ["id"]
    ids = [row[0] for row in table_rows(engine, "t2")]
    assert ids.count(None) == 1 and not {str(i) for i in range(2, 13)} & set(ids)


def test_cli_pseudonymize_in_place_and_warns_about_identifiers(db, engine, make_table, capsys, monkeypatch):
    with_extra(engine, make_table)
    base = ["kanon", "--db", db, "--table", "t", "--qi", "zip,sex", "--class", "cls", "--k", "2"]
    assert main([*base, "--out", "t2"]) == 0
    captured = capsys.readouterr()
    assert "WARNING: column 'id' is unique in t2" in captured.out and "column 'admitted' is unique" in captured.out
    monkeypatch.setenv("ANONSQL_PSEUDONYM_KEY", KEY)
    assert main([*base, "--in-place", "--pseudonymize", "id,admitted", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert KEY not in out and "is unique" not in out
    assert sorted(r[0] for r in table_rows(engine, "t")) == sorted(hmac_hex(i) for i in range(1, 13))


def test_changes_relation_and_per_column_counts(db, engine, make_table, capsys):
    make_table("t", TOY)
    r = anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, out="t2", changes="ch")
    assert r.ok and r.changes == "ch"
    ch = table_rows(engine, "ch")
    assert {row[2] for row in ch} <= {"zip", "sex"} and sum(row[4] for row in ch) == r.suppressed_cells
    # per column: cells newly blanked, and the source's own NULLs told apart
    nulls = {j: sum(row[j] is None for row in table_rows(engine, "t2")) for j in (1, 2)}
    assert r.original_nulls_by_column == {"zip": 1, "sex": 0}
    assert r.suppressed_by_column == {"zip": nulls[1] - 1, "sex": nulls[2]}
    assert r.suppressed_by_column == {c: sum(row[4] for row in ch if row[2] == c) for c in ("zip", "sex")}
    # each change names its group by number and by the original values of the source's rows
    assert len({row[0] for row in ch}) == r.changed_groups == len({row[1] for row in ch})
    for _, values, column, value, n in ch:
        group = json.loads(values)
        rows = [row for row in table_rows(engine, "t")
                if [None if v is None else str(v) for v in row[1:4]] == [group[c] for c in ("zip", "sex", "cls")]]
        assert group[column] == value and len(rows) == n
    text = r.summary()
    assert "zip: " in text and "already empty (NULL) in the source" in text and "PRIVATE" in text
    with pytest.raises(AnonsqlError, match="--changes table ch already exists"):
        anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, out="t3", changes="ch")
    assert catalog.find_table(engine, "t3") is None


@pytest.mark.parametrize("cost, words", [("ham", "ham blanks the fewest cells"),
                                         ("mar", "mar keeps the class-conditional distributions (KL")])
def test_summary_says_what_the_cost_traded(db, make_table, cost, words):
    make_table("t", TOY)
    text = anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, out="t2", cost=cost).summary()
    assert "trade-off: " + words in text and "(KL divergence, eq. 7)" in text


def test_no_class_column_is_one_class(db, engine, make_table, capsys):
    make_table("t", {k: v for k, v in TOY.items() if k != "cls"})
    before = table_rows(engine, "t")
    r = anonsql.k_anonymize(db, "t", "zip,sex", None, 3, out="t3")
    assert r.ok and r.class_column is None and "same class counts" not in {c.name for c in r.checks}
    assert anonsql.check(db, "t3", "zip,sex", 3).ok
    assert only_nulls_added(sorted(before), sorted(table_rows(engine, "t3")), {1, 2})
    # the same as a class column holding one value (the paper's costs with C = 1)
    make_table("t1", {**{k: v for k, v in TOY.items() if k != "cls"}, "c": ["x"] * 12})
    same = anonsql.k_anonymize(db, "t1", "zip,sex", "c", 3, out="t13")
    assert [row[:3] for row in sorted(table_rows(engine, "t13"))] == sorted(table_rows(engine, "t3"))
    assert same.kl_divergence == pytest.approx(r.kl_divergence) and same.suppressed_cells == r.suppressed_cells
    assert main(["kanon", "--db", db, "--table", "t", "--qi", "zip,sex", "--k", "2", "--in-place", "--quiet"]) == 0
    assert "no class column: one class (C = 1)" in capsys.readouterr().out
    assert anonsql.check(db, "t", "zip,sex", 2).ok
    assert not [n for n in engine.fetch_all("SELECT table_name FROM information_schema.tables") if "one_class" in n[0]]


@pytest.mark.parametrize("in_place", [False, True], ids=["copy", "in-place"])
def test_rows_match_their_group_by_value_and_by_code_where_a_decision_names_null(db, engine, make_table,
                                                                                  in_place):
    """The write-back joins a row to its group's decision by value, and by dictionary code in a
    column where a decision names ⊥ (NULL is never equal to NULL): here a decision names zip = ⊥
    (zip by code) while sex is matched by value, where the rows with sex = ⊥ belong to a kept
    group and must match no decision. Verification recounts the blanked cells against the
    decisions ("suppressed cells as decided"), so a row matched wrongly fails the run."""
    make_table("t", {"id": list(range(1, 10)), "zip": [None, None, "1", "1", "1", "2", "2", "2", "2"],
                     "sex": ["m", "f", "m", "m", "m", "f", "f", None, None], "cls": ["a"] * 9})
    before = table_rows(engine, "t")
    r = anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, out=None if in_place else "t2", in_place=in_place,
                            changes="ch")
    assert r.ok and r.suppressed_cells >= 1
    groups = [json.loads(row[0]) for row in engine.fetch_all("SELECT DISTINCT group_values FROM ch")]
    assert any(g["zip"] is None for g in groups) and all(g["sex"] is not None for g in groups)
    after = table_rows(engine, "t" if in_place else "t2")
    assert only_nulls_added(sorted(before), sorted(after), {1, 2})
    assert [row for row in after if row[0] in (8, 9)] == [row for row in before if row[0] in (8, 9)]


def test_near_unique_warning_read_beside_the_loop_is_the_outputs(db, engine, make_table, key_file):
    """The warning is counted on the source while the loop runs (kanon.job._beside) and names the
    output: the same notes as the check run on the written output itself, for a copy (with
    --drop and --pseudonymize) and in place."""
    from anonsql import identifiers

    runs = [dict(out="o1"), dict(out="o2", drop="admitted"), dict(out="o3", pseudonymize="id", key_file=key_file),
            dict(in_place=True, drop="id")]
    for i, kwargs in enumerate(runs):
        make_table(f"s{i}", {**TOY, "admitted": [f"2020-01-{d:02d}" for d in range(1, 13)]})
        r = anonsql.k_anonymize(db, f"s{i}", "zip,sex", "cls", 2, **kwargs)
        out = catalog.get_table(engine, r.out)
        expected = identifiers.scan(engine, out, identifiers.unlisted(out.column_names,
                                                                      ["zip", "sex", *r.pseudonymized]))
        assert expected and r.warnings[:len(expected)] == expected, kwargs
        scrub = r.warnings[len(expected):]  # in place: what the scrub could not reach (catalog.in_place_run)
        assert scrub == [] if not kwargs.get("in_place") else all("WAL" in w or "rebuilt" in w for w in scrub), scrub
    assert any("column 'admitted' is unique in s3" in n for n in r.warnings)  # in place: 'id' dropped, 'admitted' left


def test_beside_returns_both_results_and_raises_either_error_once_both_are_done():
    """kanon.job._beside: the work's result and the meanwhile's; an error of either side is
    raised in the caller, only after the other side has finished (no thread left running)."""
    import threading

    done = []

    def slow(value):
        def run():
            threading.Event().wait(0.05)
            done.append(value)
            return value
        return run

    def fail():
        raise ValueError("boom")

    assert kanon_job._beside(slow("work"), lambda: "meanwhile") == ("work", "meanwhile")
    with pytest.raises(ValueError, match="boom"):
        kanon_job._beside(fail, slow("other side"))
    with pytest.raises(ValueError, match="boom"):
        kanon_job._beside(slow("loop"), fail)
    assert done == ["work", "other side", "loop"]
