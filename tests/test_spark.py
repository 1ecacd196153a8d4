"""Spark SQL (issue 12, first part): the read-only jobs give DuckDB's results cell by cell, the
dialect differences are fixed where sqlglot passes them through, tables persist across
processes, Spark Connect works, and the write mechanism (transaction journal, staged output)
leaves nothing behind on failure. One SparkSession for the whole test session (conftest)."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys

import duckdb  # noqa: F401  (the package sets up the scans of Arrow-backed pandas frames `put` registers)
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import anonsql
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
    """The same table on each engine, through the public path (write_frame: on Spark staged, checked, renamed)."""
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


@pytest.mark.parametrize("classifier", ["nb", "tree"])
def test_evaluate_same_as_duckdb(both, classifier):
    if classifier == "tree":
        pytest.importorskip("sklearn")
    same(api.evaluate_classifiers(e, "people", "people_anon", QI, CLASS, key="id", folds=4, seed=1,
                                  classifiers=[classifier]) for e in both)


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


# -- a crash at any moment leaves every output under its name, old or new (issue 29) ------------------

class _Killed(BaseException):
    """SIGKILL in-process: from the kill on, the engine runs nothing (no undo runs), the run unwinds."""


def _kill_at(monkeypatch, engine, moment: str, nth: int = 1) -> None:
    """The `nth` time the staged commit passes the fault hook's `moment` (anonsql.catalog._commit),
    the engine stops running statements and the run unwinds: the catalog then holds what a SIGKILL
    at that moment leaves."""
    passed = []

    def hook(stage: str) -> None:
        passed.extend([stage] if stage == moment else [])
        if len(passed) == nth and stage == moment:
            monkeypatch.setattr(engine, "execute", lambda *args, **kwargs: None)
            raise _Killed

    monkeypatch.setattr(catalog, "fault_hook", hook)


def _copy(engine, out: sql.TableName, column: str) -> None:
    engine.execute(*sql.render("common/create_table_as", engine.dialect, out=out.expr, item=[sql.column(column)],
                               src=sql.TableName("people").expr))


# (moment of the kill, how many times the hook passed it first, the tables then under their names,
#  the columns the outputs hold once a command opened them: "id" the old one, "Age" the new)
KILLS = [("block", 1, {"crash_a"}, ["id", None]),            # verifying: not committed, the old stays
         ("ready", 1, {"crash_a"}, ["Age", "Age"]),          # all verified, renaming begun: finished
         ("swap", 1, set(), ["Age", "Age"]),                 # crash_a moved aside, its name free
         ("swap", 2, {"crash_a"}, ["Age", "Age"])]           # crash_a placed, crash_b not yet


@pytest.mark.parametrize("moment, nth, named, after", KILLS, ids=[f"{k[0]}-{k[1]}" for k in KILLS])
def test_a_killed_commit_leaves_each_output_under_its_name(both, monkeypatch, moment, nth, named, after):
    """Two outputs published together (as nbc's), one replacing a table, one new: killed inside the
    block or at any moment of the renames, the next command that opens either name finds it with
    its old or its new rows (never neither, never a mix of tables half done), and no working table
    is left."""
    _, spark = both
    a, b = sql.TableName("crash_a"), sql.TableName("crash_b")
    _copy(spark, a, "id")
    with monkeypatch.context() as m:
        _kill_at(m, spark, moment, nth)
        with pytest.raises(_Killed), \
                catalog.staged_outputs(spark, [(a, catalog.get_table(spark, "crash_a")), (b, None)]) as stages:
            for stage in stages:
                _copy(spark, stage, "Age")
            if moment == "block":
                m.setattr(spark, "execute", lambda *args, **kwargs: None)
                raise _Killed
    _, names = spark.table_names(None)
    assert {n for n in names if n.startswith("crash_") and "__" not in n} == named  # the window was hit
    assert [n for n in names if "__anonsql_" in n]  # the crash left working tables
    found = [catalog.find_table(spark, name) for name in ("crash_a", "crash_b")]
    assert [t.column_names[0] if t else None for t in found] == after
    assert [n for n in spark.table_names(None)[1] if "__anonsql_" in n] == []
    for t in found:
        if t is not None:
            assert len(table_rows(spark, t.name)) == len(people())
            catalog.drop_table(spark, t.expr)


def test_a_table_moved_aside_by_an_undone_commit_gets_its_name_back(both):
    """A commit that failed and was killed while putting things back left the old table aside and
    no verified one: the next command that opens the name restores the old table; `cleanup` lists
    what it did and finds nothing more."""
    _, spark = both
    _copy(spark, sql.TableName("crash_c"), "id")
    catalog.rename_table(spark, sql.TableName("crash_c"), "crash_c__anonsql_old_0123456789ab")
    _copy(spark, sql.TableName("crash_d__anonsql_stage_0123456789ab"), "Age")  # its stale staging table
    report = api.cleanup(spark)
    assert report.ok and "default" in report.schemas
    assert report.actions == ["default.crash_c: restored from crash_c__anonsql_old_0123456789ab "
                              "(a crashed run had moved it aside)",
                              "default.crash_d: dropped crash_d__anonsql_stage_0123456789ab, left by a run that "
                              "did not commit"]
    assert catalog.get_table(spark, "crash_c").column_names == ["id"]
    assert catalog.find_table(spark, "crash_d") is None
    assert api.cleanup(spark).actions == []
    catalog.drop_table(spark, sql.TableName("crash_c").expr)


# A run killed by SIGKILL inside the rename window of `kanon --replace`, in a process of its own
# (argv: the Spark URL, the moment): the old output is a 2-anonymous car table, the new one 10-.
KILLED_RUN = """
import os, sys
from anonsql import api
url, moment = sys.argv[1], sys.argv[2]
qi = ["buying", "maint", "doors", "persons"]
api.load_dataset(url, "car", "car", replace=True)
api.k_anonymize(url, "car", qi, "class", 2, out="car_k", replace=True)
os.environ["ANONSQL_KILL_AFTER"] = moment
api.k_anonymize(url, "car", qi, "class", 10, out="car_k", replace=True)
"""
# What a later process sees: the catalog as the crash left it, then the output as a command opens it,
# then the catalog again.
OPENED = """
import json, sys
from anonsql import api, catalog
from anonsql.engine import connect
from tests.conftest import table_rows
spark = connect(sys.argv[1])
before = spark.table_names(None)[1]
table = catalog.find_table(spark, "car_k")
rows = sorted(map(repr, table_rows(spark, "car_k"))) if table else None
print(json.dumps({"before": before, "rows": rows, "after": spark.table_names(None)[1]}))
"""


def test_kanon_replace_killed_inside_the_rename_window(spark_url, tmp_path):
    """kill -9 of `kanon --replace` between moving the old output aside and renaming the new one
    into place: a later process finds the output under its name, with the new rows (the run had
    verified them), DuckDB's 10-anonymous table cell by cell; then a run killed before its commit
    leaves a staging table that `anonsql cleanup` drops, the old output kept."""
    url = f"spark:local[2]?warehouse={tmp_path / 'wh'}"
    env = {k: v for k, v in os.environ.items() if k != "ANONSQL_KILL_AFTER"}
    killed = subprocess.run([sys.executable, "-c", KILLED_RUN, url, "swap"], capture_output=True, text=True,
                            cwd=tmp_path, env=env)
    assert killed.returncode == -9, killed.stderr[-3000:]
    opened = subprocess.run([sys.executable, "-c", OPENED, url], capture_output=True, text=True, cwd=tmp_path,
                            env={**env, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert opened.returncode == 0, opened.stderr[-3000:]
    seen = json.loads(opened.stdout.splitlines()[-1])
    assert "car_k" not in seen["before"] and any("car_k__anonsql_old_" in n for n in seen["before"])
    duck = str(tmp_path / "d.duckdb")
    api.load_dataset(duck, "car", "car")
    api.k_anonymize(duck, "car", ["buying", "maint", "doors", "persons"], "class", 10, out="car_k")
    from anonsql.engine import connect as open_db

    engine = open_db(duck)
    try:
        assert seen["rows"] == sorted(map(repr, table_rows(engine, "car_k")))
    finally:
        engine.close()
    assert [n for n in seen["after"] if "__anonsql_" in n] == []

    killed = subprocess.run([sys.executable, "-c", KILLED_RUN, url, "verify"], capture_output=True, text=True,
                            cwd=tmp_path, env=env)
    assert killed.returncode == -9, killed.stderr[-3000:]
    cleaned = cli("cleanup", "--db", url, "--json", cwd=tmp_path)
    assert cleaned.returncode == 0, cleaned.stderr[-3000:]
    actions = json.loads(cleaned.stdout)["actions"]
    assert len(actions) == 1 and actions[0].startswith("default.car_k: dropped car_k__anonsql_stage_"), actions


# -- the same release-like sequence, the same fingerprints on DuckDB, PostgreSQL and Spark (issue 29) --

@pytest.fixture
def postgres(pg_server_url):
    """A PostgreSQL engine on a fresh schema (as conftest's `db` fixture makes one)."""
    import uuid

    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = connect(pg_server_url)
    admin.execute(f"CREATE SCHEMA {schema}")
    engine = connect(f"{pg_server_url}?options=-csearch_path%3D{schema}")
    yield engine
    engine.close()
    admin.execute(f"DROP SCHEMA {schema} CASCADE")
    admin.close()


FINGERPRINTED = ["fp_k", "fp_nbc_class", "fp_nbc_attr", "fp_tab", "fp_tab_private_audit"]


def _release_like(engine) -> dict[str, tuple[int, str]]:
    """kanon, nbc publish and tables on `people` (integer, text and float columns, NULLs): the
    fingerprint (sql/release/fingerprint.sql) of every table written, and the types of the counts."""
    from anonsql.release.stats import fingerprint

    api.k_anonymize(engine, "people", QI, CLASS, 5, out="fp_k", replace=True)
    api.nbc_publish(engine, "people", CLASS, NBC_ATTRS, 2, "fp_nbc", replace=True)
    api.safe_table(engine, "fp_k", dims=["Age", "zip code"], min_count=3, out="fp_tab", replace=True)
    tables = {name: catalog.get_table(engine, name) for name in FINGERPRINTED}
    assert {tables[n].column("count").kind for n in ("fp_nbc_class", "fp_nbc_attr")} == {"integer"}
    return {name: dataclasses.astuple(fingerprint(engine, table)) for name, table in tables.items()}


def test_fingerprints_of_the_same_release_agree_across_engines(both, postgres):
    """The same kanon, nbc publish and tables steps on DuckDB, PostgreSQL and Spark write tables
    whose fingerprints are equal: numbers are compared by value, whatever each engine prints (25
    and 25.0, 1e+20 and 1.0E20): counts are exact integers, a double is its exact value."""
    duck, spark = both
    put(postgres, "people", people())
    prints = [_release_like(e) for e in (duck, postgres, spark)]
    assert prints[1] == prints[0]
    assert prints[2] == prints[0]
    for name in FINGERPRINTED:
        spark.execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName(name).expr))


def test_a_double_is_fingerprinted_by_its_exact_value_on_spark(spark_engine):
    """sql/common/float_key.sql on Spark against Python's decomposition (tests/test_fingerprint.py
    checks DuckDB and PostgreSQL)."""
    from anonsql.data.loading import write_frame
    from tests.test_fingerprint import DOUBLES, exact, float_keys

    write_frame(spark_engine, pa.table({"x": pa.array(DOUBLES)}).to_pandas(types_mapper=pd.ArrowDtype), "doubles",
                kinds={"x": "float"})
    assert float_keys(spark_engine, "doubles") == sorted(map(exact, DOUBLES))
    spark_engine.execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName("doubles").expr))


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



def test_load_and_dataset_replace_on_spark(both, tmp_path, monkeypatch):
    """--replace writes a staging table and renames it over the old one only once its rows are
    checked: a load that fails half way (a bad --types cast, a wrong row count) leaves the old
    table as it was and no staging table behind."""
    from anonsql.data import datasets

    duck, spark = both
    csv = tmp_path / "p.csv"
    people().to_pandas().to_csv(csv, index=False)
    for e in both:
        api.load_dataset(e, "car", "loaded", replace=True)
        api.load_csv(e, str(csv), "loaded", replace=True)  # replaces the car table
    assert table_rows(spark, "loaded") == table_rows(duck, "loaded")
    before = table_rows(spark, "loaded")
    with pytest.raises(AnonsqlError, match="cannot load CSV .*check --types"):
        api.load_csv(spark, str(csv), "loaded", replace=True, types="zip code=integer")
    for name in ("car", "adult-kh"):  # written by INSERT, and derived by SQL from a temporary table
        spec = datasets.DATASETS[name]
        monkeypatch.setitem(datasets.DATASETS, name, dataclasses.replace(spec, rows=spec.rows + 1))
        with pytest.raises(VerificationError, match="the published number of rows"):
            api.load_dataset(spark, name, "loaded", replace=True)
    assert table_rows(spark, "loaded") == before
    assert [n for n in _tables(spark) if "__anonsql_" in n] == []
    with pytest.raises(AnonsqlError, match="already exists"):
        api.load_csv(spark, str(csv), "loaded")
    spark.execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName("loaded").expr))

# -- writing jobs: the same output tables as DuckDB, cell by cell ------------------------------------

def same_output(both, job, out: str) -> None:
    """Run `job(engine)` on both engines: same report (but seconds), same rows, no staging leftovers."""
    same(job(e) for e in both)
    same_output_table(both, out)


@pytest.mark.parametrize("class_column", [CLASS, None])
def test_kanon_same_as_duckdb(both, class_column):
    """CREATE TABLE AS SELECT with CASE over the broadcast decisions (Spark) gives what copy +
    UPDATE ... FROM gives (DuckDB), NULL QIs, float and awkward QIs included; --replace twice."""
    for k in (3, 9) if class_column else (5,):  # twice: the second --replace's an existing output
        same_output(both, lambda e, k=k: api.k_anonymize(e, "people", QI, class_column, k, out="people_k",
                                                         replace=True), "people_k")
    both[1].execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName("people_k").expr))


@pytest.mark.parametrize("class_column, models", [
    (CLASS, {"l_diversity": f"{CLASS}=2", "t_closeness": {CLASS: 0.2}}),  # the class as the sensitive column
    (None, {"entropy_l": {CLASS: 1.9}, "recursive_cl": f"{CLASS}=3,2"}),  # another column, through the one-class view
])
def test_kanon_diversity_same_as_duckdb(both, class_column, models):
    """kanon enforcing l-diversity and t-closeness (issue 32): the same decisions and SQL checks as DuckDB."""
    same_output(both, lambda e: api.k_anonymize(e, "people", QI, class_column, 5, out="people_kl", replace=True,
                                                **models), "people_kl")
    both[1].execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName("people_kl").expr))


def test_kanon_ctas_path_on_duckdb_same_as_update(both):
    """A copy (one CREATE TABLE AS SELECT, Spark's path too) writes what an in-place UPDATE writes."""
    duck, _ = both
    api.k_anonymize(duck, "people", QI, CLASS, 5, out="by_ctas", replace=True)
    duck.execute(*sql.render("common/copy_table", "duckdb", out=sql.TableName("by_update").expr,
                             src=sql.TableName("people").expr))
    api.k_anonymize(duck, "by_update", QI, CLASS, 5, in_place=True)
    assert table_rows(duck, "by_ctas") == table_rows(duck, "by_update")


def test_kanon_drop_and_pseudonymize_same_as_duckdb(both, monkeypatch):
    """--drop and --pseudonymize inside Spark's one CREATE TABLE AS SELECT: the same output as
    DuckDB cell by cell, the pseudonyms the same HMAC-SHA256 hex texts."""
    monkeypatch.setenv("ANONSQL_PSEUDONYM_KEY", "a test key of enough length")
    for kwargs in (dict(drop=["id"]), dict(pseudonymize=["id"])):
        same_output(both, lambda e, kw=kwargs: api.k_anonymize(e, "people", QI, CLASS, 5, out="people_kp",
                                                               replace=True, **kw), "people_kp")
    assert all(len(row[0]) == 64 for row in table_rows(both[1], "people_kp"))  # hex digests, not ids
    both[1].execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName("people_kp").expr))
    with pytest.raises(AnonsqlError, match="--pseudonymize on spark takes text and integer columns: 'ratio'"):
        api.k_anonymize(both[1], "people", ["Age", "zip code"], CLASS, 5, out="people_kq", pseudonymize=["ratio"])
    assert catalog.find_table(both[1], "people_kq") is None


def test_kanon_emit_sql_on_spark(both, tmp_path):
    """A dry run on Spark writes the script in Spark SQL: the same steps as DuckDB's, the
    decisions broadcast, the database unchanged."""
    scripts = []
    for e in both:
        path = tmp_path / f"{e.dialect}.sql"
        r = api.k_anonymize(e, "people", QI, CLASS, 5, out="people_ke", emit_sql=str(path), execute=False,
                            drop=["id"])
        assert not r.checks and catalog.find_table(e, "people_ke") is None
        scripts.append(path.read_text())
    duck, spark = scripts
    assert "/*+ BROADCAST(" in spark and "`zip code`" in spark and "CREATE TEMPORARY VIEW" in spark
    # Spark has no transactions: no BEGIN/COMMIT, and the file says it is for review, not to run
    assert "BEGIN;" not in spark and "COMMIT;" not in spark and "BEGIN;" in duck
    from anonsql.rewrite import SPARK_NOTE

    assert all(line in spark.splitlines()[:12] for line in SPARK_NOTE)
    assert [line for line in spark.splitlines() if line.startswith("-- ") and line not in SPARK_NOTE] == \
        [line for line in duck.splitlines() if line.startswith("-- ")]


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


# -- nbc: every verb, and publish's tables cell by cell ----------------------------------------------

NBC_ATTRS = ["Age", "zip code"]  # integer and text with NULLs, awkward names (a float's label is its text)
TOY = pa.table({"adr": ["W", "W", "W", "W", "P", "W", "P", "W", None], "age": [40, 40, 40, 40, 30, 40, 30, 30, 40],
                "sal": ["70K", "70K", "70K", "70K", "70K", "50K", "50K", "70K", "50K"]})  # tests/test_nbc.py's


@pytest.fixture(scope="module")
def toy(both):
    """The Figure 1-like table of tests/test_nbc.py on both engines, and toy8, its first 8 rows
    (no NULL: views breach can enumerate, safe for rho 100 and so published unchanged)."""
    duck, spark = both
    from anonsql.data.loading import write_frame

    for name, data in (("toy", TOY), ("toy8", TOY.slice(0, 8))):
        write_frame(duck, data.to_pandas(types_mapper=pd.ArrowDtype), name)
        write_frame(spark, data.to_pandas(types_mapper=pd.ArrowDtype), name)
    yield both
    for name in ("toy", "toy8"):
        spark.execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName(name).expr))


def _drop_published(spark, out: str) -> None:
    for suffix in ("_class", "_attr", "_rows"):
        spark.execute(*sql.render("common/drop_temp_table", "spark", tbl=sql.TableName(out + suffix).expr))


def test_nbc_read_verbs_same_as_duckdb(toy):
    same(api.nbc_views(e, "people", CLASS, NBC_ATTRS, counts=True) for e in toy)
    for rho in (3, 10**6):
        same(api.nbc_check(e, "people", CLASS, NBC_ATTRS, rho) for e in toy)
    same(api.nbc_breach(e, "toy8", "sal", "adr,age", "adr=W,age=40") for e in toy)


@pytest.mark.parametrize("table, cls, attrs, kwargs", [
    ("people", CLASS, NBC_ATTRS, dict(rho="1.5")),
    ("people", CLASS, NBC_ATTRS, dict(rho=4, root="least", precedence="yes,no")),
    ("toy", "sal", "adr,age", dict(rho=100, synthetic=True)),  # 30-digit counts, and the rows table
    ("toy", "sal", "adr,age", dict(prior="50K=1,70K=3", r=10**20)),  # EST
    ("toy8", "sal", "adr,age", dict(rho=100)),  # already safe: published unchanged
])
def test_nbc_publish_same_as_duckdb(toy, table, cls, attrs, kwargs):
    """Staged CREATE TABLE + INSERT on Spark gives DuckDB's published tables and report, twice
    (the second a --replace); verify (and breach on toy8's) read them back alike."""
    suffixes = ("_class", "_attr", "_rows") if kwargs.get("synthetic") else ("_class", "_attr")
    for _ in range(2):
        same(api.nbc_publish(e, table, cls, attrs, out="pub", replace=True, **kwargs) for e in toy)
        for suffix in suffixes:
            same_output_table(toy, "pub" + suffix)
    same(api.nbc_verify(e, table, cls, attrs, "pub", precedence=kwargs.get("precedence")) for e in toy)
    if table == "toy8":
        same(api.nbc_breach(e, "toy8", "sal", "adr,age", "adr=P", published="pub") for e in toy)
    _drop_published(toy[1], "pub")


def same_output_table(both, out: str) -> None:
    duck, spark = both
    assert table_rows(spark, out) == table_rows(duck, out)
    assert [c.name for c in catalog.get_table(spark, out).columns] == \
        [c.name for c in catalog.get_table(duck, out).columns]
    assert [n for n in _tables(spark) if "__anonsql_" in n] == []


def test_nbc_failed_publish_leaves_the_old_tables_on_spark(toy, monkeypatch):
    """A failed check, a failed rename half way through the renames, and counts too long for
    Spark's exact integers: the previous publication survives whole, nothing new is left."""
    from anonsql.nbc import verify as nbc_verify
    from tests.test_nbc import _failing_safety

    _, spark = toy
    api.nbc_publish(spark, "toy", "sal", "adr,age", 2, "old")
    before = [table_rows(spark, f"old{s}") for s in ("_class", "_attr")]
    rename = catalog.rename_table

    def failing_rename(engine, table, to):
        if to == "old_attr" and "__anonsql_ready_" in table.name:  # the second table's move into place
            raise AnonsqlError("injected rename failure")
        return rename(engine, table, to)

    with monkeypatch.context() as m:
        m.setattr(catalog, "rename_table", failing_rename)
        with pytest.raises(AnonsqlError, match="injected rename failure"):
            api.nbc_publish(spark, "toy", "sal", "adr,age", 3, "old", replace=True)
    with monkeypatch.context() as m:
        m.setattr(nbc_verify, "safety", _failing_safety)
        with pytest.raises(VerificationError, match="injected failure"):
            api.nbc_publish(spark, "toy", "sal", "adr,age", 3, "old", replace=True, synthetic=True)
    with monkeypatch.context() as m:
        m.setattr(type(spark), "exact_digits", 5)
        with pytest.raises(AnonsqlError, match="spark's exact integers .* nothing written"):
            api.nbc_publish(spark, "toy", "sal", "adr,age", 3, "old", replace=True)
    assert [table_rows(spark, f"old{s}") for s in ("_class", "_attr")] == before
    assert catalog.find_table(spark, "old_rows") is None
    assert [n for n in _tables(spark) if "__anonsql_" in n] == []
    _drop_published(spark, "old")


# -- features, binarize, ac: the same tables and reports as DuckDB ------------------------------------

FEATURE_SPEC = """
[[binary]]
name = "young"
column = "Age"
upper = 30
[[binary]]
name = "Age 30-45"
column = "Age"
lower = 30
upper = 45
[[binary]]
name = "big ratio"
column = "ratio"
lower = 1
[[binary]]
name = "zip"
column = "zip code"
in = ["100", 'q"x']
[[binary]]
name = "from"
column = "zip code"
equals = "200"
"""


FEATURES = [f"f{j}" for j in range(66)] + ["from", "a b", 'q"x', "Mixed"]


@pytest.fixture(scope="module")
def binary(both):
    """`feat`: 120 rows x 70 0/1 features (two mask words; integer and float columns, awkward
    names), a key and a two-valued class, on both engines."""
    rng = np.random.default_rng(11)
    names = FEATURES
    x = (rng.random((120, len(names))) < 0.3).astype(np.int64)
    x[:, 3] = x[:, 0]  # equal columns, so that ties are decided by column order alike
    cols = {n: pa.array(x[:, j] if j % 9 else x[:, j].astype(np.float64)) for j, n in enumerate(names)}
    data = pa.table({"id": pa.array(range(120), pa.int64()), **cols,
                     CLASS: pa.array(np.where(x[:, 1] + rng.random(120) > 0.8, "yes", "no"))})
    duck, spark = both
    from anonsql.data.loading import write_frame

    write_frame(duck, data.to_pandas(types_mapper=pd.ArrowDtype), "feat")
    write_frame(spark, data.to_pandas(types_mapper=pd.ArrowDtype), "feat")
    yield both
    spark.execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName("feat").expr))


def test_binarize_same_as_duckdb(both, tmp_path):
    """Intervals on integer and float columns with NULLs, values of a text column, awkward names;
    twice (the second a --replace of the first output)."""
    spec = tmp_path / "spec.toml"
    spec.write_text(FEATURE_SPEC)
    for _ in range(2):
        same_output(both, lambda e: api.binarize(e, "people", str(spec), "people_bin", class_column=CLASS, key="id",
                                                 replace=True), "people_bin")
    both[1].execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName("people_bin").expr))


@pytest.mark.parametrize("method, mode, privacy", [("distcnt", "stop", "ac"), ("distcnt", "skip", "ac"),
                                                   ("hamdist", "skip", "kanon"), ("maximal", "stop", "ac"),
                                                   ("cm", "skip", "ac")])
def test_features_same_as_duckdb(binary, method, mode, privacy):
    """The published projection and the report (selection, AC, HamDist, DistCnt) cell by cell."""
    for _ in range(2):  # the second run --replace's the first output
        same_output(binary, lambda e: api.select_features(e, "feat", CLASS, 3, key="id", method=method, mode=mode,
                                                          privacy=privacy, out="feat_pub", replace=True), "feat_pub")
    binary[1].execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName("feat_pub").expr))


def test_features_long_input_same_as_duckdb(binary):
    """A long (key, item) table pivoted to a staging table in SQL, selected, the staging table dropped."""
    duck, spark = binary
    pairs = pa.table({"id": pa.array([i for i in range(120) for j in range(4) if (i * j) % 7 < 3], pa.int64()),
                      "item": pa.array([f"w{j}" for i in range(120) for j in range(4) if (i * j) % 7 < 3])})
    from anonsql.data.loading import write_frame

    write_frame(duck, pairs.to_pandas(types_mapper=pd.ArrowDtype), "feat_items")
    write_frame(spark, pairs.to_pandas(types_mapper=pd.ArrowDtype), "feat_items")
    same_output(binary, lambda e: api.select_features(e, "feat", CLASS, 2, items="feat_items", key="id",
                                                      item_column="item", mode="skip", out="feat_long"), "feat_long")
    assert catalog.find_table(spark, "feat_long__items") is None
    for name in ("feat_long", "feat_items"):
        spark.execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName(name).expr))


@pytest.mark.parametrize("kwargs", [dict(class_column=CLASS, key="id"), dict(attrs=FEATURES),
                                    dict(class_column=CLASS, attrs=["f1", "from", "a b", 'q"x'])])
def test_ac_same_as_duckdb(binary, kwargs):
    same(api.containment(e, "feat", **kwargs) for e in binary)


def test_features_failed_verification_leaves_nothing_on_spark(binary, monkeypatch, tmp_path):
    """A failed re-check: the old output survives a --replace, no new table, no staging table; --view refused."""
    from tests.test_features import _fail_verification

    _, spark = binary
    api.select_features(spark, "feat", CLASS, 3, key="id", out="feat_old")
    before = table_rows(spark, "feat_old")
    spec = tmp_path / "spec.toml"
    spec.write_text(FEATURE_SPEC)
    with pytest.raises(AnonsqlError, match="--view is not available on spark"):
        api.select_features(spark, "feat", CLASS, 3, key="id", out="feat_view", view=True)
    _fail_verification(monkeypatch)
    with pytest.raises(VerificationError, match=r"AC >= k\): AC\(D\) = 1, k = 3"):
        api.select_features(spark, "feat", CLASS, 3, key="id", method="hamdist", out="feat_old", replace=True)
    with pytest.raises(VerificationError, match="row count kept"):
        api.binarize(spark, "people", str(spec), "feat_new")
    assert table_rows(spark, "feat_old") == before
    assert catalog.find_table(spark, "feat_new") is None and catalog.find_table(spark, "feat_view") is None
    assert [n for n in _tables(spark) if "__anonsql_" in n] == []
    spark.execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName("feat_old").expr))


# -- protect (Hintoglu 2011): the same published and changes tables as DuckDB, cell by cell ---------

@pytest.fixture(scope="module")
def hintoglu(both, tmp_path_factory):
    """Table 1.2 (`records`) and Table 4.1 (`records41`, with its two taxonomies stored by
    `taxonomy load`) on both engines."""
    from anonsql.data.loading import write_frame
    from anonsql.taxonomy.store import load_taxonomy
    from tests.fixtures_hintoglu import TABLE_1_2
    from tests.test_generalize import write_records

    files = tmp_path_factory.mktemp("taxonomies")
    for e in both:
        def make(name, data, e=e):  # a column of numbers and labels (Table 4.1's nausea) holds text
            frame = pd.DataFrame({k: pd.Series([str(x) for x in v] if len({type(x) for x in v}) > 1 else v,
                                               dtype=object) for k, v in data.items()}).convert_dtypes()
            write_frame(e, frame, "records41" if name == "records" and "nausea" in data else name, replace=True)

        make("records", TABLE_1_2)
        write_records(make, files)
        for name, file in (("severity", "severity.json"), ("diagnoses", "diagnoses.toml")):
            load_taxonomy(e, name, file=files / file, replace=True)
    yield both
    for name in ("records", "records41", "anonsql_taxonomies"):
        both[1].execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName(name).expr))


def test_taxonomy_load_and_show_same_as_duckdb(hintoglu, tmp_path):
    """The store on Spark: a new store staged, read back, renamed over the old; --replace keeps
    the other taxonomies; a stored name needs --replace."""
    from anonsql.taxonomy.store import load_taxonomy, show_taxonomy

    for name in ("severity", "diagnoses"):
        same(show_taxonomy(e, name) for e in hintoglu)
    (tmp_path / "severity.json").write_text('{"Any": {"Low": [1, 2], "Mid-High": [3, {"High": [4, 5]}]}}')
    same(load_taxonomy(e, "severity", file=tmp_path / "severity.json", replace=True) for e in hintoglu)
    with pytest.raises(AnonsqlError, match="already stored"):
        load_taxonomy(hintoglu[1], "severity", file=tmp_path / "severity.json")
    assert table_rows(hintoglu[1], "anonsql_taxonomies") == table_rows(hintoglu[0], "anonsql_taxonomies")
    assert [n for n in _tables(hintoglu[1]) if "__anonsql_" in n] == []


@pytest.mark.parametrize("table, kwargs", [
    ("records", dict(method="dropp", rows=["2"])),
    ("records", dict(method="decp", rows=["2", "4", "9"], seed=3)),
    ("records", dict(method="incp", rows=["2", "6"])),
    ("records", dict(method="hid3", rows=["2", "6"])),
    ("records", dict(method="e-dropp", cells=[("2", "diagnosis"), ("2", "palpitation")])),
    ("records", dict(method="nrd", rows=["2"], delete_rows=True)),
    ("records41", dict(method="decp-g", rows=["18"])),
    ("records41", dict(method="dropp-g", rows=["18", "6"])),
    ("records41", dict(method="hid3-g", rows=["18"])),
])
def test_protect_same_as_duckdb(hintoglu, table, kwargs):
    """ONE CREATE TABLE AS SELECT over the broadcast decisions keyed by `id` (Spark) publishes
    what copy + UPDATE ... FROM publishes (DuckDB): same report, output and changes table, cell
    by cell; --replace of both; the -g methods write taxonomy labels into integer columns."""
    from tests.test_generalize import TAXONOMIES

    args = dict(kwargs, target=None if "cells" in kwargs else "diagnosis", out="pub", replace=True)
    if table == "records41":
        args["taxonomies"] = TAXONOMIES
    for _ in range(2):  # the second run replaces the output and its changes table
        same_output(hintoglu, lambda e: api.protect_table(e, table, "id", **args), "pub")
    duck, spark = hintoglu
    assert table_rows(spark, "pub_changes") == table_rows(duck, "pub_changes")
    for name in ("pub", "pub_changes"):
        spark.execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName(name).expr))


def test_protect_refusals_and_failed_verification_on_spark(hintoglu, monkeypatch, tmp_path):
    """--in-place and --drop are refused in one line; --emit-sql writes the Spark script; a failed
    re-check leaves the old output, its changes table and no staging table."""
    from tests.test_protect import _fail_verification

    _, spark = hintoglu
    with pytest.raises(AnonsqlError, match="--in-place is not available on spark"):
        api.protect_table(spark, "records", "id", target="diagnosis", rows=["2"], in_place=True)
    with pytest.raises(AnonsqlError, match="--drop and --pseudonymize of protect are not available on spark"):
        api.protect_table(spark, "records", "id", target="diagnosis", rows=["2"], drop=["zipcode"], out="pub")
    script = tmp_path / "protect.sql"
    api.protect_table(spark, "records", "id", target="diagnosis", rows=["2"], out="pub", emit_sql=str(script))
    assert "CREATE TABLE `pub` AS\nSELECT /*+ BROADCAST(x) */" in script.read_text()
    before = [table_rows(spark, n) for n in ("pub", "pub_changes")]
    _fail_verification(monkeypatch)
    with pytest.raises(VerificationError, match="injected failure"):
        api.protect_table(spark, "records", "id", target="diagnosis", rows=["6"], out="pub", replace=True)
    assert [table_rows(spark, n) for n in ("pub", "pub_changes")] == before
    assert [n for n in _tables(spark) if "__anonsql_" in n] == []
    for name in ("pub", "pub_changes"):
        spark.execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName(name).expr))


# -- safe aggregate tables, bin, release: staged on Spark; one error line ----------------------------

def test_safe_table_same_as_duckdb(both):
    """GROUPING over several dimensions is Spark's GROUPING_ID; both tables staged, renamed together."""
    pytest.importorskip("highspy")
    same_output(both, lambda e: api.safe_table(e, "people", ["Age", "zip code"], out="people_safe", replace=True),
                "people_safe")
    same_output_table(both, "people_safe_private_audit")
    same(api.audit_table(e, "people_safe") for e in both)


def test_safe_table_unions_and_previous_same_as_duckdb(both):
    """The union check's working table (an emulated temporary table on Spark) and --previous."""
    pytest.importorskip("highspy")
    from anonsql.data.loading import write_frame
    from tests.test_tables_previous import PERIOD_1, PERIOD_2, _rows
    from tests.test_tables_unions import FIRMS

    for e in both:
        write_frame(e, pd.DataFrame(FIRMS, columns=["region", "firm", "turnover"]), "firms_u")
        write_frame(e, _rows(PERIOD_1), "period_1")
        write_frame(e, _rows(PERIOD_2), "period_2")
    same_output(both, lambda e: api.safe_table(e, "firms_u", "region", measure="turnover", contributor="firm",
                                               min_count=1, dominance="1,80", out="firms_pub", replace=True),
                "firms_pub")
    same_output(both, lambda e: api.safe_table(e, "period_1", "region,sector", out="period_1_pub", replace=True),
                "period_1_pub")
    same_output(both, lambda e: api.safe_table(e, "period_2", "region,sector", out="period_2_pub", replace=True,
                                               previous="period_1_pub"), "period_2_pub")


def test_safe_table_failed_verification_leaves_the_old_tables_on_spark(both, monkeypatch):
    pytest.importorskip("highspy")
    from anonsql.tables import verify as tables_verify

    _, spark = both
    api.safe_table(spark, "people", ["Age", "zip code"], out="people_st", replace=True)
    before = (table_rows(spark, "people_st"), table_rows(spark, "people_st_private_audit"))
    real = tables_verify.published

    def broken(engine, report, *args):
        truth = real(engine, report, *args)
        report.check("published values equal the SQL recount", False, "tables/recount", "injected failure")
        return truth

    monkeypatch.setattr(tables_verify, "published", broken)
    with pytest.raises(VerificationError, match="injected failure"):
        api.safe_table(spark, "people", ["Age", "zip code"], out="people_st", replace=True, min_count=5)
    assert (table_rows(spark, "people_st"), table_rows(spark, "people_st_private_audit")) == before
    assert [n for n in _tables(spark) if "__anonsql_" in n] == []


def test_bin_same_as_duckdb(both):
    same_output(both, lambda e: api.bin_columns(e, "people", ["Age=width:20"], out="people_bin", replace=True),
                "people_bin")
    same_output(both, lambda e: api.bin_columns(e, "people", ["Age=quantiles:2"], out="people_bin", replace=True),
                "people_bin")


def test_release_run_is_refused_on_spark_in_one_line(both, tmp_path):
    _, spark = both
    spec = tmp_path / "r.toml"
    spec.write_text('[source]\ntable = "people"\nkey = "id"\nqi = ["Age"]\nclass = "select"\n\n'
                    '[[steps]]\nkind = "kanon"\nk = 2\nout = "people_rel"\n\n[gates]\nk = 2\n')
    with pytest.raises(AnonsqlError, match="release run needs transactions"):
        anonsql.release_run(str(spec), spark)
    assert catalog.find_table(spark, "people_rel") is None


# A failing query in a fresh process (pyspark binds its loggers' stream when a session starts).
FAILING_QUERY = """
import sys
from anonsql.engine import connect
from anonsql.errors import DatabaseError
engine = connect(sys.argv[1])
try:
    engine.fetch_all("SELECT GROUPING(a, b) FROM VALUES (1, 2) AS v(a, b) GROUP BY a, b")
except DatabaseError as exc:
    print("refused:", str(exc).splitlines()[0])
"""


def test_a_failed_query_is_one_error_not_a_logged_java_trace(spark_url, tmp_path):
    """pyspark 4 logs a failed query as a JSON line with its Java trace on stderr; anonsql
    silences it: the error reaches the user once, through DatabaseError (one line in the CLI)."""
    url = f"spark:local[1]?warehouse={tmp_path / 'wh'}&catalog=in-memory"
    run = subprocess.run([sys.executable, "-c", FAILING_QUERY, url], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert run.returncode == 0 and run.stdout.startswith("refused:"), run.stderr[-2000:]
    assert "QueryContextLogger" not in run.stderr and "at org.apache" not in run.stderr
