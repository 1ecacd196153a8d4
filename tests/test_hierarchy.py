"""Generalization hierarchies (issue 33): parsing, every kind's labels in SQL against the Python
oracle (anonsql.hierarchy.model.Hierarchy.label) on both engines, NULL as ⊥, values outside a
hierarchy and wrong column types refused in one line, and `anonsql hierarchy show`."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from anonsql import sql
from anonsql.catalog import get_table
from anonsql.errors import AnonsqlError
from anonsql.hierarchy import level_expr, parse, parse_all, resolve
from anonsql.taxonomy.store import load_taxonomy

from .test_cli import run
from .test_taxonomy import SEVERITY_TOML

ROWS = [  # x, f, d, ts, z, s
    (37, 37.5, "2016-05-10", "2016-05-10 23:59:00", "12345", "4"),
    (4, -3.25, "2016-01-01", "2015-12-31 00:00:01", "1", "3"),
    (-7, 0.0, "2016-12-31", "2016-07-04 12:00:00", "98", "1"),
    (None, None, None, None, None, None),
]


@pytest.fixture
def values(engine):
    """One table holding every kind's column type, a NULL row (⊥) included."""
    engine.execute("CREATE TABLE v (x INTEGER, f DOUBLE PRECISION, d DATE, ts TIMESTAMP, z VARCHAR(10), "
                   "s VARCHAR(10))")
    for row in ROWS:
        literals = ", ".join("NULL" if v is None else repr(v) if not isinstance(v, str) else
                             f"DATE '{v}'" if i == 2 else f"TIMESTAMP '{v}'" if i == 3 else f"'{v}'"
                             for i, v in enumerate(row))
        engine.execute(f"INSERT INTO v VALUES ({literals})")
    return get_table(engine, "v")


def _labels(engine, table, h):
    """Each level's labels of the column, by SQL, beside the source values, ordered by x's row."""
    items = ", ".join(level_expr(h, level).sql(engine.dialect) for level in range(h.top + 1))
    col = sql.column(h.column).sql(engine.dialect)
    return engine.fetch_all(f"SELECT {col}, {items} FROM v ORDER BY x NULLS LAST")


@pytest.mark.parametrize("spec", ["x=interval:5,10,20,40", "f=interval:2,4", "d=date:day,month,quarter,year",
                                  "ts=date:day,month,quarter,year", "d=date:week", "ts=date:day,week",
                                  "z=prefix:3,1", "s=taxonomy:severity"])
def test_every_kind_labels_in_sql_as_the_oracle(engine, values, tmp_path, spec):
    (tmp_path / "s.toml").write_text(SEVERITY_TOML)
    load_taxonomy(engine, "severity", file=str(tmp_path / "s.toml"))
    [h] = resolve(engine, values, [parse(spec)])
    rows = _labels(engine, values, h)
    assert len(rows) == len(ROWS)
    for source, *labels in rows:
        if source is None:  # NULL is ⊥ at every level
            assert labels == [None] * (h.top + 1)
            continue
        assert labels[0] == source and labels[-1] is None
        assert labels[1:-1] == [h.label(source, level) for level in range(1, h.top)], (spec, source)


def test_a_timestamp_drops_its_time_of_day_first(engine, values):
    [h] = resolve(engine, values, [parse("ts=date:month,year")])
    assert h.steps == ("day", "month", "year") and h.label(dt.datetime(2016, 5, 10, 23, 59), 1) == "2016-05-10"
    [h] = resolve(engine, values, [parse("d=date:month,year")])
    assert h.steps == ("month", "year")


def test_labels_as_the_issue_spells_them():
    assert parse("age=interval:5,10,20,40").label(37, 3) == "[20,40)"
    assert parse("age=interval:10").label(37, 1) == "[30,40)"
    assert parse("zip=prefix:3,1").label("12345", 1) == "123**" and parse("zip=prefix:3,1").label("12345", 2) == "1****"
    visit = parse("visit=date:month,quarter,year")
    day = dt.date(2016, 5, 10)
    assert [visit.label(day, level) for level in range(5)] == ["2016-05-10", "2016-05", "2016-Q2", "2016", None]


@pytest.mark.parametrize("text", ["age", "age=interval", "age=interval:0", "age=interval:10,5", "age=interval:5,12",
                                  "age=width:5", "zip=prefix:1,3", "d=date:year,month", "d=date:week,month",
                                  "d=date:fortnight", "s=taxonomy:", "s=taxonomy:a,b", "=interval:5",
                                  "x=prefix:" + ",".join(str(n) for n in range(40, 0, -1))])
def test_bad_specs_are_one_error(text):
    with pytest.raises(AnonsqlError) as err:
        parse(text)
    assert "\n" not in str(err.value)


def test_a_column_given_twice_is_refused():
    with pytest.raises(AnonsqlError, match="two hierarchies"):
        parse_all(["x=interval:5", "x=interval:10"])


@pytest.mark.parametrize("spec,message", [
    ("z=interval:5", "is text; a interval hierarchy needs"), ("x=prefix:2", "needs a text column"),
    ("x=date:year", "needs a date or timestamp column"), ("s=taxonomy:nowhere", "no taxonomy"),
])
def test_wrong_column_types_are_refused(engine, values, spec, message):
    with pytest.raises(AnonsqlError, match=message):
        resolve(engine, values, [parse(spec)])


def test_values_outside_the_hierarchy_are_refused(engine, values, tmp_path):
    (tmp_path / "s.toml").write_text(SEVERITY_TOML)
    load_taxonomy(engine, "severity", file=str(tmp_path / "s.toml"))
    engine.execute("INSERT INTO v VALUES (1, CAST('NaN' AS DOUBLE PRECISION), NULL, NULL, 'a', '7')")
    with pytest.raises(AnonsqlError, match=r"1 row\(s\) of column 's' hold a value outside the hierarchy, e.g. '7'"):
        resolve(engine, values, [parse("s=taxonomy:severity")])
    with pytest.raises(AnonsqlError, match="column 'f' hold a value outside the hierarchy, e.g. '(?i:nan)'"):
        resolve(engine, values, [parse("f=interval:2")])


def test_hierarchy_show_cli(capsys, db, engine, values):
    code, out, err = run(capsys, "hierarchy", "show", "--db", db, "--table", "v", "--hierarchy", "x=interval:10,20",
                         "--hierarchy", "Z=prefix:3")
    assert code == 0, err
    assert "level 1: ranges of width 10, e.g. [30,40) (text): 3 distinct values over 3 rows, [-10,0) .. [30,40)" in out
    assert "level 2: ranges of width 20" in out and "level 3: * (suppressed: NULL): 0 distinct values" in out
    assert "z:" in out and "level 1: the first 3 characters" in out
    code, out, _ = run(capsys, "hierarchy", "show", "--db", db, "--table", "v", "--hierarchy", "d=date:month",
                       "--json")
    levels = json.loads(out)["levels"]["d"]
    assert [lv["labels"] for lv in levels] == [3, 3, 0] and levels[1]["first"] == "2016-01"
    code, _, err = run(capsys, "hierarchy", "show", "--db", db, "--table", "v", "--hierarchy", "x=interval:10,15")
    assert code == 2 and err.count("\n") == 1 and "larger multiple" in err
