"""The dbt package on dbt-spark in session mode (issue 37): the generic tests' SQL (their default__
forms and the spark__ pieces: Spark's literal escapes, DOUBLE and STRING, RLIKE) give on a local
Spark the verdicts and violating-group counts anonsql gives on DuckDB for the same rows, and the
materializations refuse in one line (anonsql runs its jobs on dbt-duckdb and dbt-postgres; dbt-spark
runs Python models only on Databricks clusters, so anonsql.dbt's helpers cannot run there either). dbt runs in a
subprocess: its session-mode SparkSession (a JVM with its own warehouse) stays out of the suite's
one Spark session. Skipped without dbt-spark (`pip install -e '.[dbt]'`), Java or pyspark."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import anonsql
from anonsql.catalog import get_table
from anonsql.data import risk
from anonsql.engine import connect
from anonsql.identifiers import scan, unlisted
from tests.conftest import spark_missing
from tests.test_dbt import PACKAGE, write_project

pytest.importorskip("dbt.adapters.spark", reason="dbt-spark is not installed (pip install -e '.[dbt]')")

pytestmark = [pytest.mark.spark, pytest.mark.slow]  # dbt starts a local Spark (a JVM): 50 to 75 s on 2 cores

SEED = PACKAGE / "example" / "seeds" / "patients.csv"
QI = ["age", "sex", "zip"]
#: name -> (test, arguments): each generic test with limits on both sides of the data.
CASES = {
    "k3": ("k_anonymity", {"k": 3}), "k1": ("k_anonymity", {"k": 1}),
    "l2": ("l_diversity", {"l": 2}), "l1": ("l_diversity", {"l": 1}),
    "t06": ("t_closeness", {"t": 0.6}), "t1": ("t_closeness", {"t": 1}),
    "zip3": ("min_group_size", {"dimensions": ["zip"], "n": 3}),
    "sex3": ("min_group_size", {"dimensions": ["sex"], "n": 3}),
    "ids": ("no_direct_identifiers", {}), "ids_dx": ("no_direct_identifiers", {"columns": ["diagnosis"]}),
}
SCHEMA = """version: 2
seeds:
  - name: patients
    columns:
      - {name: age, meta: {anonsql: {role: qi}}}
      - {name: sex, meta: {anonsql: {role: qi}}}
      - {name: zip, meta: {anonsql: {role: qi}}}
      - {name: diagnosis, meta: {anonsql: {role: sensitive}}}
    data_tests:
"""
KANON = ("{{ config(materialized='anonsql_kanon', qi=['age', 'sex', 'zip'], k=3) }}\n"
         "select * from {{ ref('patients') }}\n")


def expected(name: str) -> int:
    """Violating groups (columns, for identifiers) of a case by anonsql on DuckDB, the seed loaded as dbt does."""
    test, args = CASES[name]
    with connect(":memory:") as engine:
        anonsql.load_csv(engine, str(SEED), "patients", types={"zip": "text"})
        tab = get_table(engine, "patients")
        if test == "k_anonymity":
            return anonsql.check(engine, "patients", QI, args["k"]).violating_groups
        if test == "min_group_size":
            return anonsql.check(engine, "patients", args["dimensions"], args["n"]).violating_groups
        if test == "no_direct_identifiers":
            return len(scan(engine, tab, args.get("columns") or unlisted(tab.column_names, QI)))
        d = risk.diversity(engine, tab, QI, "diagnosis", l_required=args.get("l"), t_allowed=args.get("t"))
        return d.classes_below_l if test == "l_diversity" else d.classes_above_t


def test_generic_tests_on_dbt_spark_equal_anonsql(tmp_path):
    reason = spark_missing()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(reason + " -- CI must run the Spark tests, not skip them")
        pytest.skip(reason)
    want = {name: expected(name) for name in CASES}
    assert any(want.values()) and not all(want.values())  # the cases hold on both sides
    tests = [f"      - dbt_anonsql.{test}: {{name: {name}, config: {{severity: warn}}, arguments: {json.dumps(args)}}}"
             for name, (test, args) in CASES.items()]
    target = {"type": "spark", "method": "session", "host": "NA", "schema": "default", "threads": 1}
    folder = write_project(tmp_path / "project", target, {
        "models/schema.yml": SCHEMA + "\n".join(tests) + "\n", "models/patients_k3.sql": KANON,
        "seeds/patients.csv": SEED.read_text()})
    (folder / "dbt_project.yml").write_text((folder / "dbt_project.yml").read_text() + (
        "seeds:\n  anonsql_test:\n    patients:\n      +column_types: {zip: string}\n"
        f"models:\n  anonsql_test:\n    +location_root: {tmp_path / 'warehouse'}\n"))
    env = {**os.environ, "PYSPARK_SUBMIT_ARGS": f"--conf spark.sql.warehouse.dir={tmp_path / 'warehouse'} "
           f"--conf spark.ui.enabled=false --driver-java-options -Dderby.system.home={tmp_path} pyspark-shell"}
    run = subprocess.run([sys.executable, "-m", "dbt.cli.main", "build", "--project-dir", str(folder),
                          "--profiles-dir", str(folder), "--log-path", str(folder / "logs"), "--target-path",
                          str(folder / "target")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    results = {r["unique_id"].split(".")[2]: r
               for r in json.loads((folder / "target" / "run_results.json").read_text())["results"]}
    assert results["patients"]["status"] == "success", run.stdout[-3000:]
    for name, count in want.items():
        assert (results[name]["status"], results[name]["failures"]) == ("warn" if count else "pass", count), name
    [line] = [t for t in results["patients_k3"]["message"].splitlines() if "anonsql runs" in t]
    assert results["patients_k3"]["status"] == "error" and line.strip() == (
        "materialized='anonsql_kanon' on default.patients_k3: anonsql runs its jobs on dbt-duckdb and dbt-postgres, "
        "not on dbt-spark")
