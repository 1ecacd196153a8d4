"""The cell key method on Spark: the same published counts as DuckDB, cell by cell (record keys by
HMAC of a unit key and from an integer column), the same magnitude table (totals to 1e-12: float
sums), the same cells over taxonomy levels (--hierarchy), and the audit passes there too."""

from __future__ import annotations

import pytest

from anonsql import api, sql
from anonsql.catalog import find_table
from anonsql.data.loading import write_frame
from anonsql.engine import connect
from tests.conftest import table_rows
from tests.test_ckm import HAND_SUM, SECRET, _frame
from tests.test_ckm_hierarchy import TOML


@pytest.fixture(scope="module")
def pair(spark_engine, tmp_path_factory):
    duck = connect(str(tmp_path_factory.mktemp("duck") / "t.duckdb"), create=True)
    frames = {"census": _frame(200), "hand": HAND_SUM.assign(units=(HAND_SUM.rk * 2**32).astype("int64"))}
    for engine in (duck, spark_engine):
        for name, frame in frames.items():
            write_frame(engine, frame, name)
    yield duck, spark_engine
    duck.close()
    for name in (*frames, *(f"{t}{s}" for t in ("census_ckm", "hand_ckm", "hand_sum") for s in ("", "_ptable",
                                                                                              "_ckm_spec"))):
        if find_table(spark_engine, name) is not None:  # a test left out (-k) wrote none of its tables
            spark_engine.execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName(name).expr))


def test_ckm_same_values_as_duckdb(pair, monkeypatch):
    monkeypatch.setenv("ANONSQL_PSEUDONYM_KEY", SECRET)
    for engine in pair:
        assert api.ckm_table(engine, "census", "region,sex,age", record_key="pid", D=3, V=1.5, js=2, replace=True).ok
        assert api.ckm_table(engine, "hand", "a,b", record_key_column="units", D=1, V=0.5, js=0, replace=True).ok
        assert api.ckm_table(engine, "hand", "a,b", record_key_column="units", D=1, V=0.5, js=0, measure="x",
                             contributor="w", m=0.1, top_k=2, out="hand_sum", replace=True).ok
        assert api.audit_table(engine, "census_ckm").ok
    duck, spark = pair
    for out in ("census_ckm", "hand_ckm", "census_ckm_ptable"):
        assert table_rows(spark, out) == table_rows(duck, out)
    rows = [table_rows(e, "hand_sum") for e in pair]
    assert [r[:3] + r[4:] for r in rows[0]] == [r[:3] + r[4:] for r in rows[1]]  # labels, id, count
    assert [r[3] for r in rows[1]] == pytest.approx([r[3] for r in rows[0]], rel=1e-12)  # totals (float sums)


def test_ckm_over_taxonomy_levels_same_values_as_duckdb(pair, monkeypatch, tmp_path):
    from anonsql.taxonomy.store import load_taxonomy

    monkeypatch.setenv("ANONSQL_PSEUDONYM_KEY", SECRET)
    (tmp_path / "regions.toml").write_text(TOML)
    frame = _frame(200).assign(region=lambda f: f.region.map({"n": "fr", "s": "de", "e": "us", "w": "mx"}))
    try:
        for engine in pair:
            write_frame(engine, frame, "census_tree")
            load_taxonomy(engine, "regions", file=tmp_path / "regions.toml", replace=True)
            assert api.ckm_table(engine, "census_tree", "region,sex", record_key="pid", hierarchy="region=regions",
                                 D=3, V=1.5, js=2, out="tree_ckm", replace=True).ok
            assert api.ckm_table(engine, "census_tree", "region,sex", record_key="pid", hierarchy="region=regions",
                                 measure="pid", top_k=2, out="tree_sum", replace=True).ok
            assert api.audit_table(engine, "tree_ckm").ok
        duck, spark = pair
        rows = table_rows(spark, "tree_ckm")
        assert rows == table_rows(duck, "tree_ckm") and {r[0] for r in rows} >= {"World", "Europe", "North", "mx"}
        sums = [table_rows(e, "tree_sum") for e in pair]
        assert [r[:3] + r[4:] for r in sums[0]] == [r[:3] + r[4:] for r in sums[1]]
        assert [r[3] for r in sums[1]] == pytest.approx([r[3] for r in sums[0]], rel=1e-12)
    finally:
        for name in ("census_tree", "anonsql_taxonomies", *(f"{t}{s}" for t in ("tree_ckm", "tree_sum")
                                                            for s in ("", "_ptable", "_ckm_spec"))):
            pair[1].execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName(name).expr))


def test_ckm_emit_sql_dry_run_on_spark_writes_nothing(pair, monkeypatch, tmp_path):
    monkeypatch.setenv("ANONSQL_PSEUDONYM_KEY", SECRET)
    spark = pair[1]
    r = api.ckm_table(spark, "census", "region,sex", record_key="pid", out="census_dry",
                      emit_sql=str(tmp_path / "run.sql"), execute=False)
    text = (tmp_path / "run.sql").read_text()
    assert not r.checks and "SPARK" in text and "sql/ckm/publish.sql" in text and SECRET not in text
    assert find_table(spark, "census_dry") is None and find_table(spark, "census_dry_ptable") is None
