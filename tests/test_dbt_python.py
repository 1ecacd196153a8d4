"""The Python model helpers of the dbt package (anonsql.dbt, issue 37): in a dbt-duckdb Python model,
`kanon(dbt, session, dbt.source(...), ...)` and `safe_table(...)` run anonsql's jobs on the model's
input through dbt's own DuckDB connection and return the published rows, which dbt writes; the
generic tests then pass on them in the same `dbt build` as anonsql check says. Skipped when dbt is
not installed (`pip install -e '.[dbt]'`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import anonsql
from anonsql.catalog import get_table
from anonsql.data.loading import write_frame
from anonsql.dbt import kanon, safe_table
from anonsql.engine import connect
from anonsql.errors import AnonsqlError

dbt_main = pytest.importorskip("dbt.cli.main", reason="dbt is not installed (pip install -e '.[dbt]')")

from tests.test_dbt import KINDS, PEOPLE, profile, run_dbt, sources_yml, write_project  # noqa: E402

QI = ["age", "select", "Zip Code"]
KANON_PY = """from anonsql.dbt import kanon


def model(dbt, session):
    dbt.config(materialized="table")
    return kanon(dbt, session, dbt.source("raw", "people"), qi=["age", "select", "Zip Code"], k=3,
                 l_diversity={"diagnosis": 2}, drop=["PatientId"], seed=0)
"""
SAFE_PY = """from anonsql.dbt import safe_table


def model(dbt, session):
    dbt.config(materialized="table")
    return safe_table(dbt, session, dbt.source("raw", "people"), dims=["select", "Zip Code"], min_count=3)
"""
MODELS_YML = """version: 2
models:
  - name: people_k3_py
    columns:
      - {name: age, meta: {anonsql: {role: qi}}}
      - {name: select, meta: {anonsql: {role: qi}}}
      - {name: Zip Code, meta: {anonsql: {role: qi}}}
      - {name: diagnosis, meta: {anonsql: {role: sensitive}}}
    data_tests:
      - dbt_anonsql.k_anonymity: {name: py_k3, arguments: {k: 3}}
      - dbt_anonsql.l_diversity: {name: py_l2, arguments: {l: 2}}
      - dbt_anonsql.k_anonymity: {name: py_k100, config: {severity: warn}, arguments: {k: 100}}
  - name: people_safe_py
    data_tests:
      - dbt_anonsql.min_group_size:
          name: py_safe_3
          arguments: {dimensions: [select, Zip Code, grouping_id], n: 3, count_column: value}
"""


def people_db(folder: Path) -> str:
    db = str(folder / "warehouse.duckdb")
    frame = pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in PEOPLE.items()}).convert_dtypes()
    with connect(db, create=True) as engine:
        write_frame(engine, frame, "people", kinds={c: KINDS[c] for c in frame.columns})
    return db


def python_project(db: str, folder: Path, models: dict[str, str]) -> Path:
    raw = sources_yml("main", {"people": [
        "          - dbt_anonsql.k_anonymity: {name: raw_k3, config: {severity: warn},"
        " arguments: {quasi_identifiers: [age, select, Zip Code], k: 3}}"]})
    files = {"models/sources.yml": raw, "models/models.yml": MODELS_YML}
    files.update({f"models/{name}.py": text for name, text in models.items()})
    return write_project(folder / "project", profile(db, folder), files)


def tables(db: str) -> list[str]:
    with connect(db) as engine:
        return sorted(t for (t,) in engine.fetch_all("SELECT table_name FROM information_schema.tables"))


@pytest.mark.slow  # dbt parses the project, then runs it: 6 to 25 s on 2 cores
def test_python_models_pass_what_the_raw_table_fails(tmp_path):
    """One `dbt build` on DuckDB: the raw source fails k_anonymity (warns, with anonsql check's count
    of violating groups); the Python model made by anonsql.dbt.kanon passes k_anonymity and
    l_diversity (and fails k = 100, so the tests read its rows), holds by anonsql check, has the
    identifier dropped and the rows of anonsql's own run; the safe table's equal anonsql's own
    safe table; no working table is left."""
    pytest.importorskip("highspy", reason="safe_table needs the tables extra")
    db = people_db(tmp_path)
    got = run_dbt(python_project(db, tmp_path, {"people_k3_py": KANON_PY, "people_safe_py": SAFE_PY}), "build")
    assert got["people_k3_py"][0] == "success" and got["people_safe_py"][0] == "success"
    assert got["py_k3"][0] == "pass" and got["py_l2"][0] == "pass" and got["py_safe_3"][0] == "pass"
    with connect(db) as engine:
        raw = anonsql.check(engine, "people", QI, 3)
        assert got["raw_k3"] == ("warn", raw.violating_groups) and raw.violating_groups > 0
        assert got["py_k100"] == ("warn", anonsql.check(engine, "people_k3_py", QI, 100).violating_groups)
        assert anonsql.check(engine, "people_k3_py", QI, 3, l_diversity={"diagnosis": 2}).ok
        assert "PatientId" not in {c.name for c in get_table(engine, "people_k3_py").columns}
        anonsql.k_anonymize(engine, "people", QI, None, 3, l_diversity={"diagnosis": 2}, drop=["PatientId"], seed=0,
                            out="people_k3_direct")
        anonsql.safe_table(engine, "people", ["select", "Zip Code"], min_count=3, out="people_safe_direct")
        rows = "SELECT * FROM {} ORDER BY ALL"
        assert engine.fetch_all(rows.format("people_k3_py")) == engine.fetch_all(rows.format("people_k3_direct"))
        assert engine.fetch_all(rows.format("people_safe_py")) == engine.fetch_all(rows.format("people_safe_direct"))
    assert tables(db) == sorted(["people", "people_k3_py", "people_safe_py", "people_k3_direct",
                                 "people_safe_direct", "people_safe_direct_private_audit"])


@pytest.mark.slow  # dbt parses the project, then runs it
def test_python_model_whose_job_fails_leaves_nothing(tmp_path):
    """A job anonsql refuses (a quasi-identifier the input lacks): the model errs with anonsql's
    line, and neither the model nor a working table is written."""
    db = people_db(tmp_path)
    bad = KANON_PY.replace('"Zip Code"]', '"no_such"]')
    folder = python_project(db, tmp_path, {"people_k3_py": bad})
    result = dbt_main.dbtRunner().invoke(["run", "--project-dir", str(folder), "--profiles-dir", str(folder),
                                          "--log-path", str(folder / "logs"), "--quiet"])
    [r] = result.result.results
    assert str(r.status) == "error" and "AnonsqlError" in r.message and "no_such" in r.message
    assert tables(db) == ["people"]


class _This:
    schema, identifier = "main", "m"


class _Dbt:
    this = _This()


@pytest.mark.parametrize("session, data", [
    (object(), object()),  # e.g. a SparkSession and a Spark DataFrame: dbt-spark runs Python models on Databricks
    (None, None),
])
def test_helpers_refuse_outside_dbt_duckdb_in_one_line(session, data):
    """Where dbt's Python model gets no DuckDB connection and relation, one line says where the helpers run."""
    for helper, kwargs in ((kanon, {"qi": ["age"]}), (safe_table, {"dims": ["age"]})):
        with pytest.raises(AnonsqlError) as e:
            helper(_Dbt(), session, data, **kwargs)
        [line] = str(e.value).splitlines()
        assert "runs in dbt-duckdb's Python models" in line and "Databricks" in line


def test_helpers_refuse_to_be_told_where_to_write(tmp_path):
    """The model is the output: `out`, `replace` or `in_place` is refused in one line, nothing written."""
    import duckdb

    db = people_db(tmp_path)
    con = duckdb.connect(db)
    try:
        with pytest.raises(AnonsqlError, match="the model is the output; drop in_place, out"):
            kanon(_Dbt(), con, con.query("select * from people"), qi=QI, k=3, out="x", in_place=True)
    finally:
        con.close()
    assert tables(db) == ["people"]



def test_readme_quotes_the_example_python_model():
    """The package README's Python model is the example project's, which its example build runs."""
    import re

    from tests.test_dbt import PACKAGE

    [block] = re.findall(r"^```python\n(.*?)^```", (PACKAGE / "README.md").read_text(), flags=re.S | re.M)
    assert block == (PACKAGE / "example" / "models" / "patients_k3_py.py").read_text()
