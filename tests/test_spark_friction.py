"""Issue 36 on Spark: the dates (zoned timestamps, `--types x=date` on times of day, calendar
bins), `show` and `sql`, and one pseudonym for both Unicode spellings of a value give DuckDB's
results, or refuse in one documented line (docs/spark.md). One SparkSession (conftest)."""

from __future__ import annotations

import hashlib
import hmac
import unicodedata

import pytest

import anonsql
from anonsql import catalog, sql
from anonsql.engine import connect
from anonsql.errors import AnonsqlError
from tests.conftest import table_rows

KEY = "a test key of enough length"


@pytest.fixture
def duck(tmp_path):
    engine = connect(str(tmp_path / "d.duckdb"), create=True)
    yield engine
    engine.close()


def _drop(engine, *names: str) -> None:
    for name in names:
        if catalog.find_table(engine, name) is not None:
            engine.execute(*sql.render("common/drop_table", engine.dialect, tbl=sql.TableName(name).expr))


def _rows(engine, name: str) -> list[tuple]:
    return sorted((tuple(str(v) if v is not None else None for v in r) for r in table_rows(engine, name)), key=str)


def test_zoned_timestamps_and_calendar_bins_same_as_duckdb(duck, spark_engine, tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("day,at,utc\n2024-02-29,2024-02-29 23:59:59,2024-02-29T23:59:59Z\n"
                    "2024-11-04,2024-11-04 00:00:00,2024-11-04T00:00:00+00:00\n,,\n")
    loaded = [anonsql.load_csv(e, str(path), "c", replace=True).columns for e in (duck, spark_engine)]
    assert loaded[0] == loaded[1] == {"day": "date", "at": "timestamp", "utc": "timestamptz"}
    try:
        for unit in ("week", "month", "quarter", "year"):
            bins = [anonsql.bin_columns(e, "c", [f"day={unit}", f"at={unit}", f"utc={unit}"], "b", replace=True).bins
                    for e in (duck, spark_engine)]
            assert bins[0] == bins[1], unit
            assert _rows(duck, "b") == _rows(spark_engine, "b"), unit
    finally:
        _drop(spark_engine, "c", "b")


def test_a_date_type_on_times_of_day_refuses_on_spark_too(spark_engine, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("at\n2024-03-01 10:30\n2024-03-02\n")
    with pytest.raises(AnonsqlError, match=r"^--types at=date: 1 value\(s\) of column 'at' hold a time of day"):
        anonsql.load_csv(spark_engine, str(path), "t", types="at=date")
    assert catalog.find_table(spark_engine, "t") is None


def test_show_and_sql_same_as_duckdb(duck, spark_engine, tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("id,sex,age\n1,f,30\n2,m,41\n3,,52\n")
    for e in (duck, spark_engine):
        anonsql.load_csv(e, str(path), "people", replace=True)
    try:
        shown = [anonsql.show_table(e, "people") for e in (duck, spark_engine)]
        assert [s.columns for s in shown] == [["id", "sex", "age"]] * 2
        assert sorted(shown[0].rows) == sorted(shown[1].rows) and not shown[1].more
        query = "SELECT sex, COUNT(*) AS n FROM people GROUP BY sex ORDER BY n, sex"
        read = [anonsql.read_query(e, query) for e in (duck, spark_engine)]
        assert read[0].columns == read[1].columns and sorted(read[0].rows, key=str) == sorted(read[1].rows, key=str)
        with pytest.raises(AnonsqlError, match="DELETE refused"):
            anonsql.read_query(spark_engine, "DELETE FROM people")
        assert len(table_rows(spark_engine, "people")) == 3
    finally:
        _drop(spark_engine, "people")


def test_two_spellings_get_one_pseudonym_on_spark(duck, spark_engine, tmp_path, monkeypatch):
    """Spark normalizes through ICU4J's Normalizer.compose (sql/common/text_nfc_spark.sql): the
    same pseudonyms as DuckDB, both spellings of José one."""
    path = tmp_path / "n.csv"
    names = ["Jos\u00e9", "Jose\u0301", "Ann"] * 4
    path.write_text("name,zip,cls\n" + "".join(f"{n},{100 + i % 2},{'ab'[i % 2]}\n" for i, n in enumerate(names)),
                    encoding="utf-8")
    monkeypatch.setenv("ANONSQL_PSEUDONYM_KEY", KEY)
    try:
        for e in (duck, spark_engine):
            anonsql.load_csv(e, str(path), "n", replace=True)
            assert len({r[0] for r in table_rows(e, "n")}) == 3  # both spellings loaded as typed
            assert anonsql.k_anonymize(e, "n", "zip", "cls", 2, out="n2", pseudonymize="name", replace=True).ok
        pseudonyms = [sorted(r[0] for r in table_rows(e, "n2")) for e in (duck, spark_engine)]
        nfc = {n: hmac.new(KEY.encode(), unicodedata.normalize("NFC", n).encode(), hashlib.sha256).hexdigest()
               for n in names}
        assert pseudonyms[0] == pseudonyms[1] == sorted(nfc[n] for n in names)
        assert len(set(pseudonyms[1])) == 2
    finally:
        _drop(spark_engine, "n", "n2")
