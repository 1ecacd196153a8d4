"""The kanon write-back matches rows to groups through the value dictionaries (by code, or on
PostgreSQL by the dictionaries' values: issue 11, issue 18): values
that are equal in SQL but print differently group AND match together, any number of QIs works
on PostgreSQL (no CONCAT of 100 arguments), and a row written between the statistics and the
write-back of a copy is refused by verification, never silently mis-coded. Both engines."""

from __future__ import annotations

import pytest

import anonsql
from anonsql import catalog
from anonsql.errors import AnonsqlError, VerificationError
from anonsql.kanon import job as kanon_job

from .conftest import table_rows

# (engines, SQL type, values of x): each list holds a group of 2 rows spelled two ways (must be
# blanked together), a group of >= 3 rows (kept) and a single row (blanked), with k = 3
EQUAL_BUT_PRINTED_APART = [
    pytest.param({"postgres"}, "NUMERIC", ["1.0", "1.00", "2", "2.0", "2.00", "3"], id="numeric-1.0-1.00"),
    pytest.param({"postgres"}, "NUMERIC(5,2)", ["1.0", "1.00", "2", "2.0", "2.00", "3"], id="numeric(5,2)"),
    pytest.param({"duckdb", "postgres"}, "DOUBLE PRECISION", ["-0", "0", "NaN", "NaN", "NaN", "1"],
                 id="double-minus-zero-nan"),
    pytest.param({"postgres"}, "INTERVAL", ["1 day", "24 hours", "2 days", "48 hours", "2 days", "3 days"],
                 id="interval-1-day-24-hours"),
]


def _engine_name(db: str) -> str:
    return "postgres" if db.startswith("postgresql") else "duckdb"


@pytest.mark.parametrize("in_place", [False, True], ids=["copy", "in-place"])
@pytest.mark.parametrize("engines, sql_type, values", EQUAL_BUT_PRINTED_APART)
def test_values_equal_in_sql_are_one_group_and_are_blanked_together(db, engine, engines, sql_type, values,
                                                                     in_place):
    if _engine_name(db) not in engines:
        pytest.skip(f"{sql_type} spelled apart is a {'/'.join(sorted(engines))} case")
    engine.execute(f"CREATE TABLE t (id INTEGER, x {sql_type}, s VARCHAR, cls VARCHAR)")
    for i, v in enumerate(values):
        engine.execute(f"INSERT INTO t VALUES ({i}, CAST('{v}' AS {sql_type}), 'm', 'a')")
    r = anonsql.k_anonymize(db, "t", "x,s", "cls", 3, out=None if in_place else "t3", in_place=in_place)
    out = "t" if in_place else "t3"
    assert r.ok and r.groups == 3 and r.changed_groups == 2 and r.suppressed_cells == 3
    assert anonsql.check(db, out, "x,s", 3).ok
    blanked = sorted(row[0] for row in table_rows(engine, out) if row[1] is None)
    assert blanked == [0, 1, 5]  # both spellings of the first value, and the single row


@pytest.mark.slow
def test_more_than_100_quasi_identifiers(db, engine, make_table):
    """PostgreSQL's CONCAT takes at most 100 arguments: kanon no longer builds a text key."""
    qi = [f"q{j}" for j in range(101)]
    make_table("t", {"id": list(range(8)), **{q: [str(i % 2) for i in range(8)] for q in qi},
                     "cls": ["a"] * 8})
    engine.execute("UPDATE t SET q100 = 'x' WHERE id = 0")  # one row unique in q100 alone
    r = anonsql.k_anonymize(db, "t", qi, "cls", 2, out="t2")
    assert r.ok and r.suppressed_cells >= 1 and anonsql.check(db, "t2", qi, 2).ok
    assert [row[101] for row in table_rows(engine, "t2") if row[0] == 0] == [None]
    assert sum(v is None for row in table_rows(engine, "t2") for v in row) == r.suppressed_cells


def test_a_row_inserted_between_statistics_and_copy_is_refused_by_verification(db, engine, make_table,
                                                                                monkeypatch):
    """A copy does not hold the source: a row written after the statistics carries a value the
    dictionaries lack (code -2, no decision) and a row count the statistics did not see, so the
    run fails at verification with nothing written, instead of blanking rows by shifted codes."""
    make_table("t", {"id": [1, 2, 3, 4, 5, 6], "zip": ["1", "1", "2", "2", "2", "3"],
                     "cls": ["a"] * 6})
    real = kanon_job.anonymize

    def loop_then_insert(*args, **kwargs):
        engine.execute("INSERT INTO t VALUES (7, '0', 'a')")  # sorts before every coded value
        return real(*args, **kwargs)

    monkeypatch.setattr(kanon_job, "anonymize", loop_then_insert)
    with pytest.raises(VerificationError) as failed:
        anonsql.k_anonymize(db, "t", "zip", "cls", 2, out="t2")
    failing = {c.name for c in failed.value.checks if not c.passed}
    assert failing and catalog.find_table(engine, "t2") is None
    assert len(table_rows(engine, "t")) == 7  # the writer's row is there, the run left nothing


def test_duckdb_in_place_refuses_a_column_named_rowid(db, engine, make_table):
    if _engine_name(db) != "duckdb":
        pytest.skip("PostgreSQL reserves ctid: no user column can hide it")
    make_table("t", {"rowid": [1, 2, 3], "zip": ["1", "1", "2"], "cls": ["a"] * 3})
    before = table_rows(engine, "t")
    with pytest.raises(AnonsqlError, match="column named rowid"):
        anonsql.k_anonymize(db, "t", "zip", "cls", 2, in_place=True)
    assert table_rows(engine, "t") == before
    assert anonsql.k_anonymize(db, "t", "zip", "cls", 2, out="t2").ok  # a copy needs no row id
