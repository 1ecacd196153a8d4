"""Every column type family as a quasi-identifier (check, kanon) and an nbc attribute (issue 18,
defect 5): values are coded by the database, so NaN, ±inf, HUGEINT and DECIMAL(38) keep their
exact identity and NULL is a value of its own; types without an equality are refused in one line."""

from __future__ import annotations

import pytest

import anonsql
from anonsql import catalog

# family: (DuckDB type, PostgreSQL type, three distinct values as SQL literals of that type)
FAMILIES = {
    "integer": ("BIGINT", "bigint", ["1", "2", "3"]),
    "huge integer": ("HUGEINT", "numeric(39,0)",
                     ["170141183460469231731687303715884105727", "170141183460469231731687303715884105726", "1"]),
    "double with NaN and inf": ("DOUBLE", "double precision", ["'NaN'", "'Infinity'", "'-Infinity'"]),
    "double near": ("DOUBLE", "double precision", ["0.1", "0.30000000000000004", "0.3"]),
    "decimal(38)": ("DECIMAL(38,10)", "numeric(38,10)",
                    ["1234567890123456789012345678.0123456789", "1234567890123456789012345678.0123456788", "0"]),
    "text": ("VARCHAR", "text", ["'a'", "'b'", "'é'"]),
    "date": ("DATE", "date", ["'2020-01-01'", "'2020-01-02'", "'1999-12-31'"]),
    "timestamp": ("TIMESTAMP", "timestamp", ["'2020-01-01 10:00'", "'2020-01-01 10:00:01'", "'2021-01-01'"]),
    "timestamptz": ("TIMESTAMPTZ", "timestamptz",
                    ["'2020-01-01 10:00+00'", "'2020-01-01 11:00+00'", "'2021-01-01 00:00+00'"]),
    "time": ("TIME", "time", ["'10:00'", "'11:00'", "'12:00'"]),
    "interval": ("INTERVAL", "interval", ["'1 day'", "'2 days'", "'3 hours'"]),
    "uuid": ("UUID", "uuid", ["'6ba7b810-9dad-11d1-80b4-00c04fd430c8'", "'6ba7b811-9dad-11d1-80b4-00c04fd430c8'",
                              "'00000000-0000-0000-0000-000000000000'"]),
    "blob": ("BLOB", "bytea", ["'\\xAA'", "'\\xAB'", "'\\x00'"]),
    "list": ("INTEGER[]", "integer[]", ["[1, 2]", "[2]", "[]"]),
    "struct / jsonb": ("STRUCT(a INTEGER)", "jsonb", ["{'a': 1}", "{'a': 2}", "{'a': 3}"]),
    "enum / inet": ("ENUM('x', 'y', 'z')", "inet", ["'x'", "'y'", "'z'"]),
}
PG_LITERALS = {"list": ["'{1,2}'", "'{2}'", "'{}'"], "struct / jsonb": ["'{\"a\": 1}'", "'{\"a\": 2}'", "'{\"a\": 3}'"],
               "enum / inet": ["'1.2.3.4'", "'1.2.3.5'", "'10.0.0.1'"], "blob": ["'\\xaa'", "'\\xab'", "'\\x00'"]}
REFUSED = {"duckdb": [], "postgres": ["json", "xml", "point"]}


def _make(engine, family: str) -> None:
    """t(q, r, c): q of the family (v0 x4, v1 x3, v2 x1, NULL x1), r a second QI, c the class."""
    duck, pg, values = FAMILIES[family]
    typ, values = (duck, values) if engine.dialect == "duckdb" else (pg, PG_LITERALS.get(family, values))
    pattern = [0, 0, 0, 0, 1, 1, 1, 2, None]  # v0 x4, v1 x3, v2 x1, NULL x1
    rows = [f"(CAST({'NULL' if i is None else values[i]} AS {typ}), {r % 2}, '{'yn'[r % 3 == 0]}')"
            for r, i in enumerate(pattern)]
    engine.execute(f"CREATE TABLE t (q {typ}, r INTEGER, c VARCHAR)")
    engine.execute("INSERT INTO t VALUES " + ", ".join(rows))


@pytest.mark.parametrize("family", list(FAMILIES))
def test_every_type_family_works_as_qi_and_attribute(db, engine, family):
    _make(engine, family)
    assert engine.fetch_all("SELECT COUNT(DISTINCT q) FROM t") == [(3,)]
    result = anonsql.check(db, "t", ["q"], k=2)
    assert result.violating_groups == 2 and result.violating_rows == 2  # v2 and NULL, each alone
    report = anonsql.k_anonymize(db, "t", ["q", "r"], "c", 2, out="t_k")
    assert report.ok and anonsql.check(db, "t_k", ["q", "r"], k=2).ok
    assert report.groups == len({(p, r % 2, r % 3 == 0) for r, p in enumerate([0, 0, 0, 0, 1, 1, 1, 2, None])})
    assert anonsql.k_anonymize(db, "t", ["q", "r"], "c", 2, in_place=True).ok
    _fresh(engine)
    _make(engine, family)
    views = anonsql.nbc_views(db, "t", "c", ["q", "r"])
    assert views.P == {"n": 3, "y": 6}
    assert views.domain_sizes["q"] == 3 and views.null_cells["q"] == 1  # three values, NULL ignored


def _fresh(engine) -> None:
    for name in ("t", "t_k"):
        table = catalog.find_table(engine, name)
        if table is not None:
            catalog.drop_table(engine, table.expr)


@pytest.mark.parametrize("typ", ["json", "xml", "point"])
def test_types_without_equality_are_refused_in_one_line(db, engine, typ):
    if engine.dialect != "postgres":
        pytest.skip("DuckDB groups every one of its types")
    literal = {"json": "'{\"a\": 1}'", "xml": "'<a/>'", "point": "'(1,2)'"}[typ]
    engine.execute(f"CREATE TABLE t AS SELECT CAST({literal} AS {typ}) AS q, i AS r, 'y' AS c "
                   "FROM generate_series(1, 4) AS s(i)")
    for run in (lambda: anonsql.k_anonymize(db, "t", ["q", "r"], "c", 2, out="t_k"),
                lambda: anonsql.nbc_views(db, "t", "c", ["q", "r"])):
        with pytest.raises(anonsql.AnonsqlError, match=f"column 'q' of t has type {typ}"):
            run()
    assert catalog.find_table(engine, "t_k") is None
