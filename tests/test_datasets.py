"""Bundled data sets load with the documented shapes; adult-kh is the papers' preprocessing."""

import pytest

import anonsql
from anonsql import catalog

from .conftest import table_rows

KH_QI = ["age", "workclass", "education", "marital_status", "occupation", "race", "sex", "native_country"]


def test_adult_kh_matches_kameya_hayashi_section_4(db, engine):
    result = anonsql.load_dataset(db, "adult-kh", "adult")
    assert result.rows == 30161  # 30,162 in the papers; the bundled copy lacks one UCI row
    assert catalog.get_table(engine, "adult").column_names == ["id"] + KH_QI + ["income"]
    ages = {r[0] for r in engine.fetch_all('SELECT DISTINCT age FROM "adult"')}
    assert ages == {f"[{lo},{lo + 5})" for lo in range(15, 80, 5)} | {"[80,95)"}
    p = anonsql.profile(db, "adult", qi=KH_QI, class_column="income")
    assert p.class_distribution == {"<=50K": 22653, ">50K": 7508}
    assert all(c.nulls == 0 for c in p.columns)
    assert p.columns[0].distinct == 30161 and engine.fetch_all('SELECT MAX(id) FROM "adult"') == [(32560,)]
    assert catalog.find_table(engine, "adult__raw") is None  # staging table removed


@pytest.mark.parametrize("name, rows, nulls", [
    ("adult", 32560, {"workclass": 1836, "occupation": 1843, "native_country": 583}),
    ("car", 1728, {}),
    ("breast-cancer", 699, {"bare_nuclei": 16}),
])
def test_raw_datasets(db, name, rows, nulls):
    result = anonsql.load_dataset(db, name)
    assert result.rows == rows
    p = anonsql.profile(db, result.table)
    assert {c.name: c.nulls for c in p.columns if c.nulls} == nulls


def test_adult_values_are_trimmed(db, engine):
    anonsql.load_dataset(db, "adult")
    assert table_rows(engine, "adult")[0][1] in {"Private", "Self-emp-not-inc", "State-gov", "Local-gov",
                                                "Federal-gov", "Self-emp-inc", "Without-pay", "Never-worked", None}
    assert engine.fetch_all("SELECT COUNT(*) FROM \"adult\" WHERE workclass LIKE ' %'") == [(0,)]


@pytest.mark.parametrize("name", ["car", "adult-kh"])
def test_a_wrong_row_count_fails_the_load_and_leaves_nothing(db, engine, monkeypatch, name):
    """The published size is re-checked by SQL inside the load's transaction (plain and derived)."""
    import dataclasses

    from anonsql.data import datasets

    monkeypatch.setitem(datasets.DATASETS, name, dataclasses.replace(datasets.DATASETS[name], rows=5))
    with pytest.raises(anonsql.VerificationError, match="the published number of rows"):
        anonsql.load_dataset(db, name, "loaded")
    assert catalog.find_table(engine, "loaded") is None and catalog.find_table(engine, "loaded__raw") is None
    report = anonsql.load_dataset(db, "breast-cancer", "bc")
    assert report.ok and [c.name for c in report.checks] == ["every row read is in the table",
                                                             "the published number of rows"]


def test_a_users_table_named_like_scratch_survives(db, engine, make_table):
    """Issue 18 defect 1: `dataset adult-kh --table mykh` used to drop the user's `mykh__raw`."""
    make_table("mykh__raw", {"a": [1, 2]})
    anonsql.load_dataset(db, "adult-kh", "mykh")
    assert table_rows(engine, "mykh__raw") == [(1,), (2,)]
    names = {r[0] for r in engine.fetch_all("SELECT table_name FROM information_schema.tables")}
    assert not any(n.startswith("anonsql_tmp_") for n in names) and "mykh" in names
