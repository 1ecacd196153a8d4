"""anonsql's sqlglot dialects (anonsql.engine.dialects): what each engine gets for the DuckDB text."""

from __future__ import annotations

import pytest
import sqlglot

from anonsql import sql
from anonsql.engine import dialects


def spark(text: str) -> str:
    return sqlglot.parse_one(text, read="duckdb").sql(dialect=dialects.get("spark"))


@pytest.mark.parametrize(("duckdb", "expected"), [
    # a fraction cast to an integer rounds in DuckDB, truncates in Spark: rounded first
    ("SELECT CAST(2.5 AS INTEGER)", "SELECT CAST(ROUND(2.5) AS INT)"),
    ("SELECT CAST(-2.5 AS INTEGER)", "SELECT CAST(ROUND(-2.5) AS INT)"),
    ("SELECT CAST(x / 2 AS BIGINT)", "SELECT CAST(BROUND(x / 2) AS BIGINT)"),
    ("SELECT CAST(CAST(x / 2 AS INT) / 3 AS INT)", "SELECT CAST(BROUND(CAST(BROUND(x / 2) AS INT) / 3) AS INT)"),
    # ... unless it is integral already, or not a number cast to an integer
    ("SELECT CAST(FLOOR(x) AS INT), CAST(COUNT(*) AS BIGINT), CAST(3 AS INT), CAST('3' AS INT)",
     "SELECT CAST(FLOOR(x) AS INT), CAST(COUNT(*) AS BIGINT), CAST(3 AS INT), CAST('3' AS INT)"),
    ("SELECT CAST(x / 2 AS DOUBLE)", "SELECT CAST(x / 2 AS DOUBLE)"),
    # sqlglot's own rewrite: a temporary table AS SELECT is a temporary view
    ("CREATE TEMPORARY TABLE d AS SELECT 1 AS a", "CREATE TEMPORARY VIEW d AS SELECT 1 AS a"),
    ("SELECT SUM(CAST(n AS BIGNUM))", "SELECT SUM(CAST(n AS DECIMAL(38, 0)))"),
    ("SELECT GROUPING(a, b), GROUPING(a)", "SELECT GROUPING_ID(a, b), GROUPING(a)"),
])
def test_spark_computes_what_the_duckdb_text_computes(duckdb, expected):
    assert spark(duckdb) == expected


def test_the_rewrites_leave_the_callers_tree_alone():
    tree = sqlglot.parse_one("SELECT CAST(x / 2 AS INT), GROUPING(a, b) FROM t GROUP BY ROLLUP (a, b)", read="duckdb")
    before = tree.sql("duckdb")
    tree.sql(dialect=dialects.get("spark"))
    assert tree.sql("duckdb") == before


@pytest.mark.parametrize("name", ["duckdb", "postgres"])
def test_duckdb_and_postgres_write_sqlglots_own_dialects(name):
    text = "SELECT CAST(x / 2 AS INT), GROUPING(a, b) FROM t GROUP BY ROLLUP (a, b)"
    tree = sqlglot.parse_one(text, read="duckdb")
    assert tree.sql(dialect=dialects.get(name)) == tree.sql(dialect=name)


def test_the_sql_layer_writes_through_the_engines_dialect():
    """sql.bind and sql.text (the routes of every statement) generate with anonsql's dialect."""
    text, _ = sql.bind(sqlglot.parse_one("SELECT CAST($v / 2 AS INT) AS h", read="duckdb"), "spark", {"v": 3})
    assert "BROUND(" in text
    assert sql.text(sqlglot.parse_one("GROUPING(a, b)", read="duckdb"), "spark") == "GROUPING_ID(a, b)"
    assert "BROUND(" not in sql.bind(sqlglot.parse_one("SELECT CAST($v / 2 AS INT)", read="duckdb"), "duckdb",
                                     {"v": 3})[0]
