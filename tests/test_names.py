"""Awkward names reach every engine as identifiers: `%`, quotes, semicolons, spaces, keywords."""

import pytest

import anonsql
from anonsql import catalog

from .conftest import table_rows

NAMES = {"zip": 'zip%code', "sex": 'se"x;', "cls": "select", "id": "row id 100%"}


@pytest.fixture
def awkward(make_table):
    make_table("t%1;", {NAMES["id"]: [1, 2, 3, 4, 5, 6], NAMES["zip"]: ["a", "a", "b", "b", "c", "c"],
                        NAMES["sex"]: ["m", "f", "m", "f", "m", "m"], NAMES["cls"]: ["y", "n", "y", "n", "y", "y"]})


def test_check_profile_and_kanon_on_awkward_names(db, engine, awkward):
    qi = [NAMES["zip"], NAMES["sex"]]
    result = anonsql.check(db, '"t%1;"', qi, k=2)
    assert not result.ok and result.violating_rows == 4
    profile = anonsql.profile(db, '"t%1;"', qi=qi, class_column=NAMES["cls"])
    assert profile.k == 1 and profile.class_distribution == {"n": 2, "y": 4}
    report = anonsql.k_anonymize(db, '"t%1;"', qi, NAMES["cls"], k=2, out='"out%;"')
    assert report.ok and anonsql.check(db, '"out%;"', qi, k=2).ok
    assert len(table_rows(engine, '"out%;"')) == 6 and catalog.find_table(engine, '"t%1;"') is not None


def test_nbc_views_and_containment_on_awkward_names(db, make_table, awkward):
    views = anonsql.nbc_views(db, '"t%1;"', NAMES["cls"], [NAMES["zip"], NAMES["sex"]])
    assert views.P == {"n": 2, "y": 4}
    make_table("b%;", {"k'ey;": [1, 2, 3, 4], 'f"1%': [1, 1, 0, 0], "f 2;": [1, 0, 1, 0], "select": ["a", "b", "a", "b"]})
    ac = anonsql.containment(db, '"b%;"', class_column="select", key="k'ey;")
    assert ac.ac == 1 and ac.attrs == ['f"1%', "f 2;"]
