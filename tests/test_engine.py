"""The Engine protocol on both engines: parameters, fetch shapes, transactions, connect errors."""

import numpy as np
import pytest

import anonsql
from anonsql import catalog, sql
from anonsql.engine import connect
from anonsql.errors import AnonsqlError, DatabaseError

from .conftest import table_rows


def test_dialect_and_bound_parameters(engine, make_table):
    make_table("t", {"a": [1, 2, 3]})
    text, params = sql.render("common/violations_summary", engine.dialect, tbl=catalog.get_table(engine, "t").expr,
                              qi=sql.columns(["a"]), k=2)
    assert engine.dialect in ("duckdb", "postgres")
    assert engine.fetch_all(text, params) == [(3, 3)]
    df = engine.fetch_df(text, params)
    assert list(df.columns) == ["groups", "rows"] and int(df["rows"][0]) == 3
    assert engine.fetch_arrow(text, params).num_rows == 1


def test_fetch_columns_by_position_with_nulls_and_bulk_insert_of_numpy_columns(engine, make_table):
    """fetch_columns: one numpy array per column by position (a repeated name stays its own column),
    None for NULL; insert_rows takes numpy arrays by name (the kanon decisions' route, no pandas)."""
    make_table("t", {"a": [1, 2], "s": ["x", None]})
    tbl = catalog.get_table(engine, "t").expr.sql(engine.dialect)
    a, s, a2 = engine.fetch_columns(f"SELECT a, s, a + 10 AS a FROM {tbl} ORDER BY 1")
    assert a.astype(int).tolist() == [1, 2] and a2.astype(int).tolist() == [11, 12] and s.tolist() == ["x", None]
    assert [len(c) for c in engine.fetch_columns(f"SELECT a, s FROM {tbl} WHERE a > 5")] == [0, 0]
    engine.insert_rows(tbl, '"a", "s"', {"a": np.array([3, 4]), "s": np.array([None, "z"], dtype=object)})
    assert table_rows(engine, "t") == [(1, "x"), (2, None), (3, None), (4, "z")]


def test_transaction_rolls_back_on_error(engine, make_table):
    make_table("t", {"a": [1]})
    tbl = catalog.get_table(engine, "t").expr.sql(engine.dialect)
    with pytest.raises(RuntimeError):
        with engine.transaction():
            engine.execute(f"INSERT INTO {tbl} VALUES (2)")
            raise RuntimeError("boom")
    assert table_rows(engine, "t") == [(1,)]
    with engine.transaction():
        engine.execute(f"INSERT INTO {tbl} VALUES (2)")
    assert table_rows(engine, "t") == [(1,), (2,)]


def test_failed_statement_is_a_database_error(engine):
    with pytest.raises(DatabaseError):
        engine.execute("SELECT * FROM no_such_table_here")


def test_awkward_identifiers_round_trip(engine, db, make_table):
    make_table("Marital Status", {"select": ["a", "b"], "a b": ["x", None], 'a"b': [1, 2]})
    tab = catalog.get_table(engine, "Marital Status")
    assert tab.column_names == ["select", "a b", 'a"b']
    result = anonsql.check(db, "Marital Status", ["select", "a b", 'a"b'], 1)
    assert result.ok


def test_table_in_a_schema(engine, db, make_table):
    engine.execute('CREATE SCHEMA "Other Schema"')
    make_table('"Other Schema".t', {"select": ["a", "a", "b"]})
    result = anonsql.check(db, '"Other Schema".t', "select", 2)
    assert (result.ok, result.violating_rows) == (False, 1)
    assert catalog.find_table(engine, "t") is None  # not in the current schema


def test_names_resolve_case_insensitively_when_unambiguous(engine, make_table):
    make_table("Adult", {"Age": [1]})
    tab = catalog.get_table(engine, "adult")
    assert tab.name == "Adult" and tab.column("AGE").name == "Age"
    with pytest.raises(AnonsqlError, match="unknown column 'agee'"):
        tab.column("agee")


def test_connect_errors_are_one_line(tmp_path):
    with pytest.raises(AnonsqlError, match="not found"):
        connect(str(tmp_path / "missing.duckdb"))
    with pytest.raises(AnonsqlError, match="unsupported database URL scheme 'mysql'"):
        connect("mysql://u@h/db")
    with pytest.raises(AnonsqlError, match="cannot connect to PostgreSQL"):
        connect("postgresql://nobody@127.0.0.1:1/db")
    with pytest.raises(AnonsqlError, match="cannot connect to PostgreSQL") as info:
        connect("postgresql://u:secret@[bad")
    assert "secret" not in str(info.value)


def test_db_must_name_a_duckdb_database(tmp_path):
    """No silent in-memory database (issue 29): a file that is not a DuckDB database is refused,
    even where a missing one would be created; an empty name too; ':memory:' spelled out opens."""
    csv, parquet, empty = tmp_path / "noshow.csv", tmp_path / "x.parquet", tmp_path / "empty.duckdb"
    csv.write_text("a,b\n1,2\n")
    parquet.write_bytes(b"PAR1" + bytes(64))
    empty.touch()
    for create in (False, True):
        with pytest.raises(AnonsqlError, match=f"^{csv} is not a DuckDB database; load it with `anonsql load {csv} "):
            connect(str(csv), create=create)
        with pytest.raises(AnonsqlError, match=f"^{parquet} is not a DuckDB database: give a DuckDB file"):
            connect(str(parquet), create=create)
        with pytest.raises(AnonsqlError, match="is not a DuckDB database"):
            connect(str(empty), create=create)
        with pytest.raises(AnonsqlError, match="no database given"):
            connect("", create=create)
    assert csv.read_text() == "a,b\n1,2\n" and parquet.stat().st_size == 68 and empty.stat().st_size == 0
    with pytest.raises(AnonsqlError, match="not found: .*only `anonsql load` and `anonsql dataset` create one"):
        connect(str(tmp_path / "new.duckdb"))
    assert not (tmp_path / "new.duckdb").exists()
    connect(str(tmp_path / "new.duckdb"), create=True).close()
    connect(str(tmp_path / "new.duckdb")).close()  # now it is one


def test_memory_spelled_out_holds_a_session_of_work():
    engine = connect(":memory:")
    try:
        anonsql.load_dataset(engine, "adult-kh", "adult")
        assert anonsql.k_anonymize(engine, "adult", "age,sex", "income", 10, out="adult_k10").ok
        assert anonsql.check(engine, "adult_k10", "age,sex", 10).ok
        report = anonsql.k_anonymize(engine, "adult", "age,sex", "income", 10, in_place=True)
        assert report.ok and anonsql.check(engine, "adult", "age,sex", 10).ok
        assert any("the database is in memory" in n for n in report.notes), report.notes
    finally:
        engine.close()


def test_postgres_work_mem_raised_only_where_nobody_chose_it(db):
    """The server's default 4 MB makes the count tables spill to disk: a session raises it to
    256 MB, but a value the connection asked for (options=-c work_mem=...) is kept."""
    if not db.startswith("postgresql://"):
        pytest.skip("a PostgreSQL setting")
    from anonsql.engine.postgres import PostgresEngine

    engine = PostgresEngine(db)
    assert engine.fetch_all("SHOW work_mem") == [("256MB",)]
    engine.close()
    sep = "&" if "?" in db else "?"
    engine = PostgresEngine(f"{db}{sep}options=-c%20work_mem%3D8MB")
    assert engine.fetch_all("SHOW work_mem") == [("8MB",)]
    engine.close()


def test_duckdb_session_settings(tmp_path):
    """A database anonsql opens has no progress bar (it would land on stdout ahead of --json)
    and hands freed memory back in the background (the statistics' ~0.2 GB would otherwise
    stay with the process through the loops and fits that follow); a caller's own open
    connection is left as it was."""
    import duckdb

    engine = connect(str(tmp_path / "s.duckdb"), create=True)
    settings = "SELECT current_setting('enable_progress_bar'), current_setting('allocator_background_threads')"
    assert engine.fetch_all(settings) == [(False, True)]
    engine.close()
    con = duckdb.connect(str(tmp_path / "own.duckdb"))
    before = con.execute(settings).fetchall()
    connect(con).close()
    assert con.execute(settings).fetchall() == before
    con.close()


def test_duckdb_runs_a_one_row_group_table_on_one_thread(tmp_path):
    """A job tells the engine the size of the table it reads (Engine.expect_rows): DuckDB hands
    threads whole row groups, so a table of one row group runs its session on one thread (each
    statement then skips the idle worker's hand-offs); a bigger table keeps DuckDB's threads, and
    a caller's own connection keeps its settings whatever the size. Counting the rows
    (validate.rows) changes no setting: a validator only reads."""
    import duckdb

    import anonsql
    from anonsql import validate
    from anonsql.engine.duckdb import ROW_GROUP_ROWS

    path = str(tmp_path / "sizes.duckdb")
    con = duckdb.connect(path)
    con.execute("CREATE TABLE small AS SELECT range AS a, range % 2 AS b FROM range(10)")
    con.execute(f"CREATE TABLE big AS SELECT range AS a, range % 2 AS b FROM range({ROW_GROUP_ROWS + 1})")
    threads = con.execute("SELECT current_setting('threads')").fetchone()[0]
    con.close()
    assert threads > 1, "this machine's DuckDB default is already one thread: nothing to tell apart"
    setting = "SELECT current_setting('threads')"
    for table, expected in [("small", 1), ("big", threads)]:
        engine = connect(path)
        assert validate.rows(engine, catalog.get_table(engine, table)) in (10, ROW_GROUP_ROWS + 1)
        assert engine.fetch_all(setting) == [(threads,)], table
        anonsql.check(engine, table, ["b"], k=1)
        assert engine.fetch_all(setting) == [(expected,)], table
        engine.close()
    con = duckdb.connect(path)
    anonsql.check(con, "small", ["b"], k=1)
    assert con.execute(setting).fetchone()[0] == threads
    con.close()


def test_duckdb_commits_by_checkpoint_on_its_own_session_only(tmp_path):
    """An owned DuckDB session commits a transaction by checkpoint: its rows are in the database
    file when COMMIT returns, with no WAL left for the close to replay, and the checkpoint
    threshold is back to what it was; a caller's own connection keeps DuckDB's usual commit to
    the WAL."""
    import os

    import duckdb

    path = str(tmp_path / "commit.duckdb")
    wal, threshold = path + ".wal", "SELECT current_setting('checkpoint_threshold')"
    engine = connect(path, create=True)
    (before,) = engine.fetch_all(threshold)
    with engine.transaction():
        engine.execute("CREATE TABLE t AS SELECT range AS a FROM range(1000)")
    assert not os.path.exists(wal) or os.path.getsize(wal) == 0
    assert engine.fetch_all(threshold) == [before]
    engine.close()
    con = duckdb.connect(path)
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(1000,)]
    with connect(con).transaction():
        con.execute("CREATE TABLE t2 AS SELECT range AS a FROM range(1000)")
    assert os.path.getsize(wal) > 0
    assert con.execute(threshold).fetchall() == [before]
    con.close()


def test_duckdb_joins_as_written_turns_join_ordering_off_inside_only(tmp_path):
    """Engine.joins_as_written: on an owned DuckDB session the join_order optimizer is off inside
    the block and on again after it, also after a failed statement (outside a transaction at
    once; inside one, which then takes no SET, after its rollback); a caller's own connection
    keeps its settings; the result is the same either way."""
    import duckdb

    setting = "SELECT current_setting('disabled_optimizers')"
    query = ("SELECT t.a, d0.code, d1.code FROM t LEFT JOIN d AS d0 ON t.a = d0.v "
             "LEFT JOIN d AS d1 ON t.a + 1 = d1.v ORDER BY t.a")
    engine = connect(str(tmp_path / "own.duckdb"), create=True)
    engine.execute("CREATE TABLE t AS SELECT range AS a FROM range(20)")
    engine.execute("CREATE TABLE d AS SELECT range AS v, range * 10 AS code FROM range(5, 15)")
    planned = engine.fetch_all(query)
    with engine.joins_as_written():
        assert engine.fetch_all(setting) == [("join_order",)]
        assert engine.fetch_all(query) == planned
    assert engine.fetch_all(setting) == [("",)]
    with pytest.raises(DatabaseError), engine.joins_as_written():
        engine.execute("SELECT * FROM absent")
    assert engine.fetch_all(setting) == [("",)]
    with pytest.raises(DatabaseError), engine.transaction(), engine.joins_as_written():
        engine.execute("INSERT INTO t VALUES (99)")
        engine.execute("SELECT * FROM absent")
    assert engine.fetch_all(setting) == [("",)]
    assert engine.fetch_all("SELECT max(a) FROM t") == [(19,)]
    engine.close()
    con = duckdb.connect()
    con.execute("SET disabled_optimizers = 'filter_pushdown'")
    with connect(con).joins_as_written():
        assert con.execute(setting).fetchall() == [("filter_pushdown",)]
    assert con.execute(setting).fetchall() == [("filter_pushdown",)]
    con.close()


def test_duckdb_catalog_query_reads_what_information_schema_reads():
    """sql/common/table_columns_duckdb.sql (duckdb_columns(), what DuckDB's information_schema
    view reads) finds the same rows as the standard sql/common/table_columns.sql: tables and
    views, any letter case, a schema given or the current one, never a temporary or an attached
    database's table."""
    import duckdb

    con = duckdb.connect()
    for statement in ['CREATE TABLE "T1" (a INT, "B" VARCHAR)', "CREATE VIEW v1 AS SELECT a, \"B\" AS bb FROM \"T1\"",
                      "CREATE SCHEMA s2", "CREATE TABLE s2.t1 (x DOUBLE, y DECIMAL(18, 3), z VARCHAR[])",
                      "CREATE TEMP TABLE t1 (z INT)", "ATTACH ':memory:' AS other", "CREATE TABLE other.t1 (q INT)",
                      'CREATE TABLE "Mixed Case" ("Col A" INT)']:
        con.execute(statement)
    cases = [("t1", None), ("T1", None), ("v1", None), ("t1", "s2"), ("T1", "S2"), ("mixed case", None),
             ("t1", "temp"), ("t1", "other"), ("absent", None)]
    for use in ["main", "s2"]:
        con.execute(f"USE {use}")
        found = []
        for name, schema in cases:
            standard, own = (con.execute(*sql.render(query, "duckdb", table_name=name, schema_name=schema)).fetchall()
                             for query in ("common/table_columns", "common/table_columns_duckdb"))
            assert own == standard, (use, name, schema)
            found.append(len(own))
        assert sum(found) >= 5  # the cases find tables, not only nothing
    con.close()


@pytest.mark.parametrize("types", ["BIGINT, BOOLEAN, DOUBLE PRECISION", "INTEGER, BOOLEAN, REAL",
                                   "VARCHAR, BOOLEAN, NUMERIC"], ids=["exact", "narrower", "converted"])
def test_bulk_insert_of_numeric_columns_into_any_column_types(engine, types, monkeypatch):
    """int64, bool and float64 columns: PostgreSQL sends them in binary where the table's types are
    exactly BIGINT, BOOLEAN, DOUBLE PRECISION (the kanon decisions), as text where they are not
    (binary COPY does not convert); the same rows arrive either way, extremes included."""
    engine.execute(f"CREATE TABLE t (id BIGINT, a {types.split(', ')[0]}, b BOOLEAN, c {types.split(', ')[2]})")
    big = 2**31 - 1 if types.startswith("INTEGER") else 2**63 - 1
    frame = {"id": np.arange(4, dtype=np.int64), "a": np.array([0, -1, big, -big], dtype=np.int64),
             "b": np.array([True, False, True, False]), "c": np.array([0.5, -0.0, 1e300 if "DOUBLE" in types else 2.5,
                                                                       -3.25])}
    sent = []
    if engine.dialect == "postgres":
        binary = type(engine)._binary_copy
        monkeypatch.setattr(type(engine), "_binary_copy", lambda self, *a: sent.append(binary(self, *a)) or sent[-1])
    engine.insert_rows('"t"', '"id", "a", "b", "c"', frame)
    assert sent == ([] if engine.dialect != "postgres" else [types.startswith("BIGINT")])
    rows = engine.fetch_all('SELECT "a", "b", "c" FROM "t" ORDER BY "id"')
    assert [(int(a), b, float(c)) for a, b, c in rows] == list(zip(frame["a"].tolist(), frame["b"].tolist(),
                                                                   frame["c"].tolist()))
