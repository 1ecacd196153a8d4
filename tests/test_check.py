"""check: k-anonymity with NULL as its own value, against an independent pandas count."""

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anonsql
from anonsql.data.loading import write_frame
from anonsql.errors import AnonsqlError

from .test_profile import SMALL


def test_violations_and_smallest_groups(db, make_table):
    make_table("t", SMALL)
    r = anonsql.check(db, "t", "zip,sex", 2)
    assert (r.ok, r.violating_groups, r.violating_rows) == (False, 1, 1)
    assert r.shown_groups == [{"zip": "3", "sex": None, "size": 1}]
    r = anonsql.check(db, "t", ["zip", "sex"], 3)
    assert (r.violating_groups, r.violating_rows) == (3, 5)
    assert [g["size"] for g in r.shown_groups] == [1, 2, 2]
    assert not anonsql.check(db, "t", "sex", 3).ok  # m x3, f x4, but ⊥ x1 stands alone

def test_report_is_falsy_when_not_k_anonymous_and_prints_null(db, make_table):
    make_table("t", SMALL)
    r = anonsql.check(db, "t", "zip,sex", 2)
    assert bool(r) is False and bool(anonsql.check(db, "t", "zip,sex", 1)) is True
    assert "zip=3, sex=NULL, size=1" in r.summary() and "None" not in r.summary()
    assert anonsql.__version__ and anonsql.__version__ != "0+unknown"


def test_null_is_its_own_value_not_a_wildcard(db, make_table):
    make_table("t", {"a": ["x", "x", None, None]})
    assert anonsql.check(db, "t", "a", 2).ok
    assert not anonsql.check(db, "t", "a", 3).ok


def test_k_one_always_holds_and_k_above_rows_never(db, make_table):
    make_table("t", SMALL)
    assert anonsql.check(db, "t", "zip,sex,age", 1).ok
    r = anonsql.check(db, "t", "cls", 9)
    assert not r.ok and r.violating_rows == 8


@pytest.mark.parametrize("k", [0, -1, 2.5, "3", True, None])
def test_bad_k(db, make_table, k):
    make_table("t", SMALL)
    with pytest.raises(AnonsqlError, match="k must be an integer >= 1"):
        anonsql.check(db, "t", "zip", k)


def test_no_qi_is_an_error(db, make_table):
    make_table("t", SMALL)
    with pytest.raises(AnonsqlError, match="no quasi-identifier"):
        anonsql.check(db, "t", "", 2)


cells = st.one_of(st.none(), st.sampled_from(["a", "b", "c"]))


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(cells, cells), min_size=1, max_size=30), k=st.integers(1, 6))
def test_matches_pandas_groupby_with_nulls_kept(tmp_path_factory, rows, k):
    db = str(tmp_path_factory.mktemp("h") / "h.duckdb")
    frame = pd.DataFrame(rows, columns=["p", "q"], dtype=object)
    eng = anonsql.connect(db, create=True)
    write_frame(eng, frame, "t")
    eng.close()
    sizes = frame.groupby(["p", "q"], dropna=False).size()
    r = anonsql.check(db, "t", "p,q", k, show=0)
    assert r.violating_groups == int((sizes < k).sum())
    assert r.violating_rows == int(sizes[sizes < k].sum())
    assert r.ok == bool((sizes >= k).all())
