"""bin: numeric columns become range labels in a new table; NULL stays NULL; bad specs fail."""

import pytest

import anonsql
from anonsql import catalog
from anonsql.errors import AnonsqlError

from .conftest import table_rows

DATA = {"id": [1, 2, 3, 4, 5, 6, 7, 8], "age": [17, 19, 20, 34, None, 35, 36, 90],
        "pay": [1, 1, 1, 2, 5, 7, 9, None], "name": list("abcdefgh")}


def test_width_and_quantile_bins(db, engine, make_table):
    make_table("t", DATA)
    r = anonsql.bin_columns(db, "t", ["age=width:10", "pay=quantiles:3"], "b")
    rows = {row[0]: row for row in table_rows(engine, "b")}
    assert [rows[i][1] for i in range(1, 9)] == ["[10,20)", "[10,20)", "[20,30)", "[30,40)", None,
                                                 "[30,40)", "[30,40)", "[90,100)"]
    # tiles of the 7 non-NULL pay values start at 1, 2 and 7: bins [1,2), [2,7), [7,9]
    assert [rows[i][2] for i in range(1, 9)] == ["[1,2)", "[1,2)", "[1,2)", "[2,7)", "[2,7)", "[7,9]", "[7,9]", None]
    assert [rows[i][3] for i in range(1, 9)] == list("abcdefgh")
    assert r.bins["pay"] == ["[1,2)", "[2,7)", "[7,9]", None]
    assert [c.name for c in catalog.get_table(engine, "b").columns] == ["id", "age", "pay", "name"]


@pytest.mark.parametrize("specs, match", [
    (["name=width:5"], "binning needs a numeric or date column"),
    (["age=width:0"], "bad bin spec"),
    (["age=widths:5"], "bad bin spec"),
    (["nope=width:5"], "unknown column 'nope'"),
    (["age=month"], "column 'age' is integer: a month bin needs a date or timestamp column"),
    (["age=month:2"], "bad bin spec"),
    ([], "nothing to bin"),
])
def test_bad_specs(db, engine, make_table, specs, match):
    make_table("t", DATA)
    with pytest.raises(AnonsqlError, match=match):
        anonsql.bin_columns(db, "t", specs, "b")
    assert catalog.find_table(engine, "b") is None


def test_existing_output_needs_replace(db, make_table):
    make_table("t", DATA)
    anonsql.bin_columns(db, "t", ["age=width:10"], "b")
    with pytest.raises(AnonsqlError, match="already exists"):
        anonsql.bin_columns(db, "t", ["age=width:5"], "b")
    assert anonsql.bin_columns(db, "t", ["age=width:5"], "b", replace=True).bins["age"][0] == "[15,20)"


def test_labels_sort_by_range_and_odd_values_keep_their_own(db, engine, make_table):
    """Issue 14 finding 10 and issue 18 defects 5 and 9: numeric order, NaN/inf, one spec per column."""
    engine.execute("CREATE TABLE f (x DOUBLE PRECISION)")
    engine.execute("INSERT INTO f VALUES (2), (9), (10), (25), (CAST('NaN' AS DOUBLE PRECISION)), "
                   "(CAST('Infinity' AS DOUBLE PRECISION)), (CAST('-Infinity' AS DOUBLE PRECISION)), (NULL)")
    r = anonsql.bin_columns(db, "f", ["x=width:5"], "b")
    assert r.bins["x"] == ["-inf", "[0,5)", "[5,10)", "[10,15)", "[25,30)", "inf", "NaN", None]
    r = anonsql.bin_columns(db, "f", ["x=quantiles:2"], "q")
    assert r.bins["x"] == ["-inf", "[2.0,10.0)", "[10.0,25.0]", "inf", "NaN", None]
    with pytest.raises(AnonsqlError, match="column 'x' has two --bin specs"):
        anonsql.bin_columns(db, "f", ["x=width:5", "X=quantiles:2"], "c")
    assert catalog.find_table(engine, "c") is None


def test_dates_bin_by_days(tmp_path, db, engine):
    path = tmp_path / "d.csv"
    path.write_text("born\n2020-01-01\n2020-01-09\n2020-01-20\n\n")
    anonsql.load_csv(db, str(path), "d")
    r = anonsql.bin_columns(db, "d", ["born=width:7"], "w")
    assert r.bins["born"] == ["[2019-12-26,2020-01-02)", "[2020-01-09,2020-01-16)", "[2020-01-16,2020-01-23)", None]
    r = anonsql.bin_columns(db, "d", ["born=quantiles:2"], "q")
    assert r.bins["born"] == ["[2020-01-01,2020-01-20)", "[2020-01-20,2020-01-20]", None]


def test_dates_and_timestamps_bin_by_calendar_periods(tmp_path, db, engine):
    """week (from Monday), month, quarter, year on a date, a timestamp and a timestamp with a
    time zone (issue 36: bin refused timestamps and cut dates in day widths from 1970 only)."""
    path = tmp_path / "c.csv"
    path.write_text("day,at,utc\n2024-02-29,2024-02-29 23:59:59,2024-02-29T23:59:59Z\n"
                    "2024-11-04,2024-11-04 00:00:00,2024-11-04T00:00:00+00:00\n,,\n")
    assert anonsql.load_csv(db, str(path), "c").columns == {"day": "date", "at": "timestamp", "utc": "timestamptz"}
    expected = {"week": ["[2024-02-26,2024-03-04)", "[2024-11-04,2024-11-11)", None],
                "month": ["[2024-02-01,2024-03-01)", "[2024-11-01,2024-12-01)", None],
                "quarter": ["[2024-01-01,2024-04-01)", "[2024-10-01,2025-01-01)", None],
                "year": ["[2024-01-01,2025-01-01)", None]}
    for unit, labels in expected.items():
        r = anonsql.bin_columns(db, "c", [f"day={unit}", f"at={unit}", f"utc={unit}"], f"b_{unit}")
        assert r.bins == {"day": labels, "at": labels, "utc": labels}, unit
    assert sorted(table_rows(engine, "b_year"), key=str) == [
        ("[2024-01-01,2025-01-01)",) * 3, ("[2024-01-01,2025-01-01)",) * 3, (None, None, None)]
