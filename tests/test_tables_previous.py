"""Stable patterns: the same table gives the same pattern on every run and on every engine, and
with --previous a new period keeps last period's suppressed cells where it can (GaussSuppression's
incremental suppression), the report counting the cells that changed."""

from __future__ import annotations

import uuid

import numpy as np
import pandas as pd
import pytest

import anonsql
from anonsql.cli import main
from anonsql.data.loading import write_frame
from anonsql.engine import connect
from anonsql.errors import AnonsqlError

from .conftest import table_rows

# Period 1: one primary, (r0, s0) = 2; the cheapest rectangle is (r0,s1), (r1,s0), (r1,s1) (9 + 7 + 6).
# Period 2: (r1, s1) grows to 16, so on its own the run picks a rectangle through column s2
# (8 + 7 + 10 or 8 + 12 + 5 = 25 < 32); last period's rectangle still protects (r0, s0).
PERIOD_1 = np.array([[2, 9, 8], [7, 6, 10], [12, 11, 5]])
PERIOD_2 = np.array([[2, 9, 8], [7, 16, 10], [12, 11, 5]])


def _rows(counts: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame([(f"r{i}", f"s{j}") for (i, j), n in np.ndenumerate(counts) for _ in range(int(n))],
                        columns=["region", "sector"])


def _suppressed(engine, name: str) -> set[tuple]:
    """The published table's hidden cells, as the public reads them."""
    return {(r[0], r[1], r[2]) for r in table_rows(engine, name) if r[5] == "suppressed"}


def test_the_same_data_keeps_the_same_pattern(db, engine):
    write_frame(engine, _rows(PERIOD_1), "firms")
    first = anonsql.safe_table(db, "firms", "region,sector", min_count=3, out="p1")
    again = anonsql.safe_table(db, "firms", "region,sector", min_count=3, out="p2", previous="p1")
    assert again.ok and again.pattern_changes == {"suppressed": 0, "published": 0} and again.previous
    assert _suppressed(engine, "p1") == _suppressed(engine, "p2") and len(_suppressed(engine, "p1")) == 4
    assert again.statuses == first.statuses
    audit = anonsql.safe_table(db, "firms", "region,sector", min_count=3, out="p3", previous="p1_private_audit")
    assert audit.pattern_changes == {"suppressed": 0, "published": 0}


def test_a_new_period_changes_fewer_cells_with_previous(db, engine):
    write_frame(engine, _rows(PERIOD_1), "period1")
    write_frame(engine, _rows(PERIOD_2), "period2")
    anonsql.safe_table(db, "period1", "region,sector", min_count=3, out="p1")
    alone = anonsql.safe_table(db, "period2", "region,sector", min_count=3, out="p2_alone")
    kept = anonsql.safe_table(db, "period2", "region,sector", min_count=3, out="p2_kept", previous="p1")
    assert alone.ok and kept.ok
    before, without, with_previous = (_suppressed(engine, t) for t in ("p1", "p2_alone", "p2_kept"))
    assert len(before ^ with_previous) < len(before ^ without)
    assert sum(kept.pattern_changes.values()) == len(before ^ with_previous)  # the report counts what changed
    assert kept.pattern_changes["suppressed"] == len(with_previous - before)
    assert any("against the previous pattern" in line for line in kept.lines())


def test_previous_must_be_a_published_table_of_the_same_shape(db, engine, capsys):
    write_frame(engine, _rows(PERIOD_1), "firms")
    anonsql.safe_table(db, "firms", "region", min_count=3, out="by_region")
    with pytest.raises(AnonsqlError, match="not a table published by 'anonsql tables' over region, sector"):
        anonsql.safe_table(db, "firms", "region,sector", out="p", previous="by_region")
    with pytest.raises(AnonsqlError, match="table not found: nowhere"):
        anonsql.safe_table(db, "firms", "region,sector", out="p", previous="nowhere")
    code = main(["tables", "--db", db, "--table", "firms", "--dims", "region,sector", "--out", "p",
                 "--previous", "firms", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--previous" in err
    assert anonsql.catalog.find_table(connect(db), "p") is None


def _cube(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 400
    return pd.DataFrame({"a": rng.choice([f"a{i}" for i in range(5)], n), "b": rng.choice(["b0", "b1", "b2", "b3"], n),
                         "c": rng.choice(["c0", "c1", "c2"], n, p=[0.6, 0.3, 0.1])})


def _published_and_statuses(engine, name: str) -> tuple[list, list]:
    return table_rows(engine, name), [(*r[:3], r[7]) for r in table_rows(engine, f"{name}_private_audit")]


def test_the_pattern_is_identical_across_reruns_and_engines(tmp_path, pg_server_url):
    results = []
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = connect(pg_server_url)
    admin.execute(f"CREATE SCHEMA {schema}")
    try:
        for db in (str(tmp_path / "a.duckdb"), f"{pg_server_url}?options=-csearch_path%3D{schema}"):
            engine = connect(db, create=True) if db.endswith(".duckdb") else connect(db)
            try:
                write_frame(engine, _cube(7), "people")
                for out in ("run1", "run2"):
                    r = anonsql.safe_table(engine, "people", "a,b,c", min_count=5, out=out, bounds=True)
                    assert r.ok and r.statuses["x"] > 0
                    results.append(_published_and_statuses(engine, out))
            finally:
                engine.close()
    finally:
        admin.execute(f"DROP SCHEMA {schema} CASCADE")
        admin.close()
    assert all(result == results[0] for result in results[1:])


def test_a_release_tables_step_takes_previous(db, engine, tmp_path):
    write_frame(engine, _rows(PERIOD_1), "period1")
    write_frame(engine, _rows(PERIOD_2), "period2")
    anonsql.safe_table(db, "period1", "region,sector", min_count=3, out="p1")
    spec = tmp_path / "period2.toml"
    spec.write_text('[source]\ntable = "period2"\nqi = ["region", "sector"]\n\n[[steps]]\nkind = "tables"\n'
                    'dims = ["region", "sector"]\nprevious = "p1"\nout = "p2"\n\n[outputs]\ndir = "out"\n')
    report = anonsql.release_run(spec, engine)
    assert report.ok and _suppressed(engine, "p2") == _suppressed(engine, "p1")
    spec.write_text(spec.read_text().replace('previous = "p1"', "previous = 1"))
    with pytest.raises(AnonsqlError, match="previous"):
        anonsql.release_run(spec, engine, replace=True)
