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
    (["name=width:5"], "binning needs a numeric column"),
    (["age=width:0"], "bad bin spec"),
    (["age=widths:5"], "bad bin spec"),
    (["nope=width:5"], "unknown column 'nope'"),
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
