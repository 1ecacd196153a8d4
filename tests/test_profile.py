"""profile: exact figures on a hand-made table, NULL as its own value, same answer on both engines."""

import pytest

import anonsql
from anonsql.errors import AnonsqlError

SMALL = {
    "zip": ["1", "1", "1", "2", "2", None, None, "3"],
    "sex": ["m", "m", "m", "f", "f", "f", "f", None],
    "age": [30, 30, 31, 40, 40, None, None, 50],
    "cls": ["y", "n", "y", "n", "n", "y", "y", "n"],
}


def test_profile_figures(db, make_table):
    make_table("t", SMALL)
    p = anonsql.profile(db, "t", qi="zip,sex", class_column="cls")
    assert p.rows == 8
    assert [(c.name, c.type, c.distinct, c.nulls) for c in p.columns] == [
        ("zip", "text", 3, 2), ("sex", "text", 2, 1), ("age", "integer", 4, 2), ("cls", "text", 2, 0)]
    # classes: (1,m)x3, (2,f)x2, (⊥,f)x2, (3,⊥)x1 -- the NULL rows form classes of their own
    assert (p.k, p.equivalence_classes) == (1, 4)
    assert p.rows_in_classes_smaller_than == {2: 1, 5: 8, 10: 8, 20: 8, 50: 8, 100: 8}
    assert p.class_distribution == {"n": 4, "y": 4}


def test_profile_without_qi_or_class(db, make_table):
    make_table("t", SMALL)
    p = anonsql.profile(db, "t")
    assert p.k is None and p.class_distribution == {} and p.rows == 8


@pytest.mark.parametrize("kwargs, match", [
    (dict(table="nope"), "table not found: nope"),
    (dict(table="t", qi="zip,nope"), "unknown column 'nope'"),
    (dict(table="t", class_column="age"), "class column 'age' has 2 NULL"),
    (dict(table="t", qi="zip,cls", class_column="cls"), "also listed as a quasi-identifier"),
    (dict(table="t", qi="zip,zip"), "column listed twice"),
])
def test_profile_bad_input(db, engine, make_table, kwargs, match):
    make_table("t", SMALL)
    kwargs = dict(kwargs)
    table = kwargs.pop("table")
    with pytest.raises(AnonsqlError, match=match):
        anonsql.profile(db, table, **kwargs)


def test_an_empty_table_is_reported_not_refused(db, engine, make_table):
    """profile and check report an empty table (they refused it): its columns, k-anonymity holding
    vacuously, and a note saying why."""
    make_table("empty", {"a": [1], "c": ["x"]})
    engine.execute('DELETE FROM "empty"')
    p = anonsql.profile(db, "empty", qi="a", class_column="c", sensitive="c")
    assert p.rows == 0 and [(c.name, c.distinct, c.nulls) for c in p.columns] == [("a", 0, 0), ("c", 0, 0)]
    assert p.k is None and p.notes == ["table empty is empty: no class, risk or class balance to measure"]
    r = anonsql.check(db, "empty", "a", 5, l_diversity="c=2")
    assert r.ok and r.notes == ["table empty is empty: no row to re-identify, so every check holds"]


@pytest.mark.slow
def test_same_answer_on_both_engines(tmp_path, pg_server_url):
    pg = pg_server_url
    duck = str(tmp_path / "d.duckdb")
    qi = ["age", "workclass", "education", "marital_status", "occupation", "race", "sex", "native_country"]
    results = []
    for db in (duck, pg):
        anonsql.load_dataset(db, "adult-kh", "adult_same", replace=True)
        results.append(anonsql.profile(db, "adult_same", qi=qi, class_column="income").to_dict())
        results.append(anonsql.check(db, "adult_same", qi, 10, show=5).to_dict())
    assert results[0] == results[2] and results[1] == results[3]
    assert results[0]["k"] == 1 and results[1]["ok"] is False
