"""The cell key method on Spark: the same published counts as DuckDB, cell by cell (record keys by
HMAC of a unit key and from an integer column), and the audit passes there too."""

from __future__ import annotations

import pytest

from anonsql import api, sql
from anonsql.data.loading import write_frame
from anonsql.engine import connect
from tests.conftest import table_rows
from tests.test_ckm import HAND, SECRET, _frame


@pytest.fixture(scope="module")
def pair(spark_engine, tmp_path_factory):
    duck = connect(str(tmp_path_factory.mktemp("duck") / "t.duckdb"), create=True)
    frames = {"census": _frame(200), "hand": HAND.assign(units=(HAND.rk * 2**32).astype("int64"))}
    for engine in (duck, spark_engine):
        for name, frame in frames.items():
            write_frame(engine, frame, name)
    yield duck, spark_engine
    duck.close()
    for name in (*frames, "census_ckm", "census_ckm_ptable", "census_ckm_ckm_spec", "hand_ckm", "hand_ckm_ptable",
                 "hand_ckm_ckm_spec"):
        spark_engine.execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName(name).expr))


def test_ckm_same_values_as_duckdb(pair, monkeypatch):
    monkeypatch.setenv("ANONSQL_PSEUDONYM_KEY", SECRET)
    for engine in pair:
        assert api.ckm_table(engine, "census", "region,sex,age", record_key="pid", D=3, V=1.5, js=2, replace=True).ok
        assert api.ckm_table(engine, "hand", "a,b", record_key_column="units", D=1, V=0.5, js=0, replace=True).ok
        assert api.audit_table(engine, "census_ckm").ok
    duck, spark = pair
    for out in ("census_ckm", "hand_ckm", "census_ckm_ptable"):
        assert table_rows(spark, out) == table_rows(duck, out)
