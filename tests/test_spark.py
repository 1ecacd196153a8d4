"""Spark SQL (issue 12, first part): the read-only jobs give DuckDB's results cell by cell, the
dialect differences are fixed where sqlglot passes them through, tables persist across
processes, Spark Connect works, and the write mechanism (transaction journal, staged output)
leaves nothing behind on failure. One SparkSession for the whole test session (conftest)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from anonsql import api, catalog, sql
from anonsql.engine import connect
from anonsql.errors import AnonsqlError, VerificationError
from tests.conftest import table_rows

# Awkward identifiers: a keyword, a space, a quote, mixed case. (Spark table names are letters,
# digits and _ only, so only the columns are awkward.)
QI = ["Age", "zip code", "ratio"]
CLASS = "select"


def people(n: int = 240, seed: int = 7) -> pa.Table:
    """Integer, text and float QIs with NULLs (and -0.0 beside 0.0), a key, a class."""
    rng = np.random.default_rng(seed)
    age = rng.choice([20, 30, 40, 50], n).astype(object)
    age[rng.random(n) < 0.1] = None
    zipc = rng.choice(["100", "200", 'q"x'], n).astype(object)
    zipc[rng.random(n) < 0.1] = None
    ratio = rng.choice([0.5, 1e20, 2.25], n).astype(object)
    ratio[rng.random(n) < 0.1] = None
    cls = np.where(rng.random(n) < 0.4, "yes", "no")
    return pa.table({"id": pa.array(range(1, n + 1), pa.int64()), "Age": pa.array(list(age), pa.int64()),
                     "zip code": pa.array(list(zipc), pa.string()), "ratio": pa.array(list(ratio), pa.float64()),
                     CLASS: pa.array(list(cls), pa.string())})


def blanked(data: pa.Table, seed: int = 3) -> pa.Table:
    """An 'anonymized' copy: some QI cells suppressed to NULL, keys and classes kept."""
    frame = data.to_pandas()
    rng = np.random.default_rng(seed)
    for col in QI:
        frame.loc[rng.random(len(frame)) < 0.2, col] = None
    return pa.Table.from_pandas(frame, schema=data.schema, preserve_index=False)


def put(engine, name: str, data: pa.Table) -> None:
    if engine.dialect == "spark":
        engine.write_arrow(sql.TableName(name).expr.sql("spark"), data)
    else:
        from anonsql.data.loading import write_frame

        kinds = {"id": "integer", "Age": "integer", "zip code": "text", "ratio": "float", CLASS: "text"}
        write_frame(engine, data.to_pandas(types_mapper=pd.ArrowDtype), name, kinds=kinds)


@pytest.fixture(scope="module")
def both(spark_engine, tmp_path_factory):
    """The same two tables on DuckDB and on Spark."""
    duck = connect(str(tmp_path_factory.mktemp("duck") / "t.duckdb"), create=True)
    data = people()
    for engine in (duck, spark_engine):
        put(engine, "people", data)
        put(engine, "people_anon", blanked(data))
    yield duck, spark_engine
    duck.close()
    for name in ("people", "people_anon"):
        spark_engine.execute(*sql.render("common/drop_temp_table", "spark", tbl=sql.TableName(name).expr))


def same(reports) -> None:
    duck, spark = (r.to_dict() for r in reports)
    for d in (duck, spark):
        d.pop("seconds")
    assert spark == duck


def test_profile_same_as_duckdb(both):
    same(api.profile(e, "People", qi=QI, class_column=CLASS) for e in both)


@pytest.mark.parametrize("k", [2, 5, 40])
def test_check_same_as_duckdb(both, k):
    same(api.check(e, "people", QI, k) for e in both)


def test_evaluate_same_as_duckdb(both):
    same(api.evaluate_classifiers(e, "people", "people_anon", QI, CLASS, key="id", folds=4, seed=1,
                                  classifiers=["nb"]) for e in both)


def test_table_lookup_is_case_insensitive_and_reports_spark_types(both):
    _, spark = both
    table = catalog.get_table(spark, "PEOPLE")
    assert (table.name, [c.kind for c in table.columns]) == ("people", ["integer", "integer", "text", "float", "text"])
    assert catalog.find_table(spark, "no_such_table") is None
    assert catalog.find_table(spark, "a b") is None  # not a Spark name: cannot exist


# -- dialect: what sqlglot passes through unchanged -------------------------------------------------

def test_integer_casts_round_like_duckdb(both):
    duck, spark = both
    text = "SELECT CAST(2.5 AS INTEGER), CAST(-2.5 AS INTEGER), CAST(r AS INTEGER), CAST(r * 3 AS BIGINT) " \
           "FROM (SELECT CAST($x AS DOUBLE) AS r)"
    from sqlglot import parse_one

    for x in (2.5, 3.5, -0.5, 7.0):
        rows = [e.fetch_all(*sql.bind(parse_one(text, read="duckdb"), e.dialect, {"x": x})) for e in both]
        assert rows[0] == rows[1], x


def test_parameters_stay_values(both):
    for e in both:
        text, params = sql.bind(sql.sqlglot.parse_one("SELECT $v AS v", read="duckdb"), e.dialect, {"v": "a\\b'c:d"})
        assert e.fetch_all(text, params) == [("a\\b'c:d",)]


def test_temporary_table_is_a_view_computed_once(spark_engine):
    spark_engine.execute(*sql.bind(sql.sqlglot.parse_one(
        "CREATE TEMPORARY TABLE tmp_once AS SELECT rand() AS r FROM range(5)", read="duckdb"), "spark", {}))
    first = spark_engine.fetch_all("SELECT SUM(r) FROM tmp_once")
    assert spark_engine.fetch_all("SELECT SUM(r) FROM tmp_once") == first  # not re-run
    spark_engine.execute("DROP TABLE IF EXISTS tmp_once")


def test_doubles_print_differently_so_they_are_no_keys(both):
    duck, spark = both
    assert duck.fetch_all("SELECT CAST(CAST(1e20 AS DOUBLE) AS VARCHAR)") == [("1e+20",)]
    assert spark.fetch_all("SELECT CAST(CAST(1e20 AS DOUBLE) AS STRING)") == [("1.0E20",)]
    with pytest.raises(AnonsqlError, match="ratio of people is floating-point and cannot be a row key"):
        catalog.exact_text(catalog.get_table(spark, "people"), ["id", "ratio"], "a row key")


# -- writing: the journal of transaction() and the staged output ------------------------------------

def test_failed_block_drops_what_it_created_and_refuses_what_it_cannot_undo(both):
    _, spark = both
    with pytest.raises(RuntimeError), spark.transaction():
        spark.execute(*sql.render("common/copy_table", "spark", out=sql.TableName("made").expr,
                                  src=sql.TableName("people").expr))
        raise RuntimeError("job failed")
    assert catalog.find_table(spark, "made") is None
    with pytest.raises(AnonsqlError, match="UPDATE is not available on Spark"):
        spark.execute('UPDATE people SET `Age` = NULL')
    with pytest.raises(AnonsqlError, match="DROP of the existing table `people` could not be undone"), \
            spark.transaction():
        catalog.drop_table(spark, sql.TableName("people").expr)
    assert catalog.find_table(spark, "people") is not None


@pytest.mark.parametrize("engine_name", ["duckdb", "spark"])
@pytest.mark.parametrize("fail", [False, True])
def test_staged_output(both, engine_name, fail):
    """A verified output replaces the old one; a failed verification leaves everything as it was."""
    engine = both[engine_name == "spark"]
    out = sql.TableName("staged_out")
    engine.execute(*sql.render("common/drop_temp_table", engine.dialect, tbl=out.expr))
    engine.execute(*sql.render("common/create_table_as", engine.dialect, out=out.expr, item=[sql.column("id")],
                               src=sql.TableName("people").expr))
    before = table_rows(engine, "staged_out")
    try:
        with engine.transaction(), catalog.staged_output(engine, out, catalog.get_table(engine, "staged_out")) as t:
            engine.execute(*sql.render("common/create_table_as", engine.dialect, out=t.expr,
                                       item=[sql.column("Age")], src=sql.TableName("people").expr))
            if fail:
                raise VerificationError([])
    except VerificationError:
        assert fail
    after = catalog.get_table(engine, "staged_out")
    assert after.column_names == (["id"] if fail else ["Age"])
    assert (table_rows(engine, "staged_out") == before) == fail
    leftovers = [n for n in _tables(engine) if "__anonsql_" in n]
    assert leftovers == []
    engine.execute(*sql.render("common/drop_table", engine.dialect, tbl=out.expr))


def _tables(engine) -> list[str]:
    if engine.dialect == "spark":
        return [r[1] for r in engine.fetch_all("SHOW TABLES")]
    return [r[0] for r in engine.fetch_all("SELECT table_name FROM information_schema.tables")]


# -- across processes, and Spark Connect -------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# A Spark Connect server: a classic session with the Connect plugin, on the given warehouse (Hive
# metastore) and port; it says "ready" and serves until its stdin closes.
CONNECT_SERVER = """
import sys
from pyspark.sql import SparkSession
warehouse, port = sys.argv[1], sys.argv[2]
(SparkSession.builder.master("local[2]")
 .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
 .config("spark.connect.grpc.binding.port", port)
 .config("spark.ui.enabled", "false")
 .config("spark.sql.warehouse.dir", warehouse)
 .config("spark.hadoop.javax.jdo.option.ConnectionURL",
         f"jdbc:derby:;databaseName={warehouse}/metastore_db;create=true")
 .enableHiveSupport().getOrCreate())
print("ready", flush=True)
sys.stdin.read()
"""


def cli(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from anonsql.cli import main; raise SystemExit(main())", *args],
                          capture_output=True, text=True, cwd=cwd, env={**os.environ, "PYTHONWARNINGS": "ignore"})


def test_tables_persist_across_processes_and_spark_connect_reads_them(spark_url, tmp_path):
    """Process 1 (`anonsql load`) writes a catalog table in a warehouse; process 2, a Spark
    Connect server, opens that warehouse; process 3 (`anonsql profile --db sc://...`) reads the
    table through it, with DuckDB's results."""
    warehouse = tmp_path / "wh"
    csv = tmp_path / "p.csv"
    people().to_pandas().to_csv(csv, index=False)
    load = cli("load", "--db", f"spark:local[2]?warehouse={warehouse}", str(csv), "--table", "people", cwd=tmp_path)
    assert load.returncode == 0, load.stderr[-2000:]
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-c", CONNECT_SERVER, str(warehouse), str(port)], cwd=tmp_path,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        read = cli("profile", "--db", f"sc://localhost:{port}", "--table", "people", "--qi", ",".join(QI),
                   "--class", CLASS, "--json", cwd=tmp_path)
    finally:
        server.communicate("", timeout=120)  # closing stdin ends the server
    assert read.returncode == 0, read.stderr[-3000:]
    remote = json.loads(read.stdout)
    duck = str(tmp_path / "d.duckdb")
    api.load_csv(duck, str(csv), "people")
    local = api.profile(duck, "people", qi=QI, class_column=CLASS).to_dict()
    for d in (remote, local):
        d.pop("seconds")
    assert remote == local


def test_in_place_is_refused_on_spark(both):
    _, spark = both
    with pytest.raises(AnonsqlError, match="--in-place is not available on spark"):
        catalog.output_table(spark, catalog.get_table(spark, "people"), None, "x", False, in_place=True)


@pytest.mark.parametrize("name", ["car", "adult-kh"])  # adult-kh: raw rows in a temporary table, then SQL
def test_dataset_same_as_duckdb(both, name):
    table = f"ds_{name.replace('-', '_')}"
    reports = [api.load_dataset(e, name, table, replace=True) for e in both]
    assert reports[1].to_dict()["rows"] == reports[0].to_dict()["rows"]
    assert table_rows(both[1], table) == table_rows(both[0], table)
    both[1].execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName(table).expr))


# -- writing jobs: the same output tables as DuckDB, cell by cell ------------------------------------

def same_output(both, job, out: str) -> None:
    """Run `job(engine)` on both engines: same report (but seconds), same rows, no staging leftovers."""
    same(job(e) for e in both)
    duck, spark = both
    assert table_rows(spark, out) == table_rows(duck, out)
    assert [c.name for c in catalog.get_table(spark, out).columns] == \
        [c.name for c in catalog.get_table(duck, out).columns]
    assert [n for n in _tables(spark) if "__anonsql_" in n] == []


@pytest.mark.parametrize("class_column", [CLASS, None])
def test_kanon_same_as_duckdb(both, class_column):
    """CREATE TABLE AS SELECT with CASE over the broadcast decisions (Spark) gives what copy +
    UPDATE ... FROM gives (DuckDB), NULL QIs, float and awkward QIs included; --replace twice."""
    for k in (3, 9) if class_column else (5,):  # twice: the second --replace's an existing output
        same_output(both, lambda e, k=k: api.k_anonymize(e, "people", QI, class_column, k, out="people_k",
                                                         replace=True), "people_k")
    both[1].execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName("people_k").expr))


def test_kanon_ctas_path_on_duckdb_same_as_update(both, monkeypatch):
    """The no-UPDATE path on DuckDB (forced) writes what its UPDATE path writes."""
    duck, _ = both
    api.k_anonymize(duck, "people", QI, CLASS, 5, out="by_update", replace=True)
    monkeypatch.setattr(type(duck), "supports_update", False)
    api.k_anonymize(duck, "people", QI, CLASS, 5, out="by_ctas", replace=True)
    assert table_rows(duck, "by_ctas") == table_rows(duck, "by_update")


def test_kanon_failed_verification_leaves_nothing_on_spark(both, monkeypatch):
    from tests.test_kanon import _break_verification

    _, spark = both
    api.k_anonymize(spark, "people", QI, CLASS, 3, out="people_kf")
    before = table_rows(spark, "people_kf")
    _break_verification(monkeypatch)
    for kwargs in (dict(out="people_kf", replace=True), dict(out="people_kg", changes="people_ch")):
        with pytest.raises(VerificationError, match="k-anonymity: injected failure"):
            api.k_anonymize(spark, "people", QI, CLASS, 5, **kwargs)
    assert table_rows(spark, "people_kf") == before  # the old output survives a failed --replace
    assert catalog.find_table(spark, "people_kg") is None and catalog.find_table(spark, "people_ch") is None
    assert [n for n in _tables(spark) if "__anonsql_" in n] == []
    spark.execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName("people_kf").expr))
