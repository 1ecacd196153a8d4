"""The dbt package (integrations/dbt_anonsql, issue 37): each generic test's verdict, and the
number of violating groups it returns, equal anonsql's own measure of the same table, on DuckDB
and on the suite's PostgreSQL, over quoted and reserved names, NULLs, empty and one-row tables.
dbt runs in-process (dbtRunner) on a small project written to a temporary folder; the package is
linked into it as `dbt deps` would install a `local:` entry. Skipped when dbt is not installed
(`pip install -e '.[dbt]'`)."""

from __future__ import annotations

import json
import math
import os
import urllib.parse
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import anonsql
from anonsql.catalog import get_table
from anonsql.data import risk
from anonsql.data.loading import write_frame
from anonsql.engine import connect
from anonsql.identifiers import scan, unlisted

dbt_main = pytest.importorskip("dbt.cli.main", reason="dbt is not installed (pip install -e '.[dbt]')")

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "integrations" / "dbt_anonsql"

#: Test tables: reserved and mixed-case names, NULL quasi-identifiers and sensitive values.
PEOPLE = {
    "age": [30, 30, 30, 40, 40, 50, 50, 50, 50, None, None, 60],
    "select": ["M", "M", "M", None, None, "F", "F", "F", "F", "F", "F", "M"],
    "Zip Code": ["a", "a", "a", "b", "b", "c", "c", "c", "c", None, None, "d"],
    "diagnosis": ["flu", "cold", "flu", "flu", "flu", "flu", "cold", None, "asthma", "cold", "cold", "flu"],
    "salary": [10, 20, 30, 10, 10, 40, 40, 50, 60, None, 20, 90],
    "email": ["a@x.org", "b@x.org", "c@x.org", "d@x.org", "e@x.org", "f@x.org", "g@x.org", "h@x.org", "i@x.org",
              "j@x.org", None, "k@x.org"],
    "PatientId": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    "visit": [1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6, 7],
}
TABLES = {
    "people": PEOPLE,
    "order": {k: v[:0] for k, v in PEOPLE.items()},  # a reserved name, empty
    "one": {k: v[:1] for k, v in PEOPLE.items()},
    "nulls": {"age": [None] * 4, "select": [None] * 4, "Zip Code": [None] * 4,
              "diagnosis": ["flu", None, "cold", None], "salary": [1, 2, None, None],
              "email": ["x", "y", "x", "y"], "PatientId": [1, 1, 2, 2], "visit": [1, 2, 3, 4]},
}
KINDS = {"age": "integer", "select": "text", "Zip Code": "text", "diagnosis": "text", "salary": "integer",
         "email": "text", "PatientId": "integer", "visit": "integer"}
QI_SETS = (["age", "select"], ["Zip Code"], ["age", "select", "Zip Code"])


def cases() -> list[tuple[str, str, dict[str, Any]]]:
    """(table, test, arguments): every test over every table, with limits on both sides of the data."""
    out: list[tuple[str, str, dict[str, Any]]] = []
    for table in TABLES:
        for qi in QI_SETS:
            out += [(table, "k_anonymity", {"quasi_identifiers": qi, "k": k}) for k in (1, 2, 4)]
        out += [(table, "l_diversity", {"quasi_identifiers": ["age", "select"], "sensitive": "diagnosis", "l": lv})
                for lv in (1, 2)]
        out += [(table, "l_diversity", {"quasi_identifiers": ["Zip Code"], "sensitive": "diagnosis", "l": lv,
                                        "kind": "entropy"}) for lv in (1, 1.5)]
        out += [(table, "t_closeness", {"quasi_identifiers": ["select"], "sensitive": s, "t": t})
                for s in ("diagnosis", "salary") for t in (0.2, 0.6)]
        out += [(table, "min_group_size", {"dimensions": ["select"], "n": 3}),
                (table, "min_group_size", {"dimensions": ["select"], "n": 3, "entity_key": "PatientId"}),
                (table, "min_group_size", {"dimensions": ["age"], "n": 2, "entity_key": "visit"}),
                (table, "min_group_size", {"dimensions": ["select"], "n": 40, "count_column": "salary"}),
                (table, "no_direct_identifiers", {"columns": ["diagnosis", "salary", "email", "PatientId", "visit"]}),
                (table, "no_direct_identifiers", {"columns": ["diagnosis"]}),
                (table, "no_direct_identifiers", {})]  # every column not declared a quasi-identifier
        out.append((table, "k_anonymity", {"k": 2}))  # the quasi-identifiers from the columns' meta
    return out


def expected(engine, table: str, test: str, args: dict[str, Any]) -> int:
    """How many groups (columns, for identifiers) violate the test by anonsql's own measure."""
    tab = get_table(engine, table)
    if test == "k_anonymity":
        qi = args.get("quasi_identifiers", ["age", "select"])  # the meta roles of sources_yml
        return anonsql.check(engine, table, qi, args["k"]).violating_groups
    if test == "min_group_size" and not {"entity_key", "count_column"} & set(args):
        return anonsql.check(engine, table, args["dimensions"], args["n"]).violating_groups
    frame = pd.DataFrame(TABLES[table]).astype(object)
    if test == "min_group_size" and "count_column" in args:  # sums of the counts, all-NULL groups unpublished
        counts = frame.groupby(args["dimensions"], dropna=False)[args["count_column"]]
        sums = counts.sum(min_count=1)[counts.count() > 0]
        return int(((sums > 0) & (sums < args["n"])).sum())
    if test == "min_group_size":  # distinct entities per group, a NULL key one entity: counted by pandas
        sizes = frame.groupby(args["dimensions"], dropna=False)[args["entity_key"]].nunique(dropna=False)
        return int((sizes < args["n"]).sum())
    if test == "no_direct_identifiers":
        return len(scan(engine, tab, args.get("columns") or unlisted(tab.column_names, ["age", "select"])))
    if not TABLES[table]["age"]:
        return 0  # anonsql check: an empty table holds every check
    d = risk.diversity(engine, tab, args["quasi_identifiers"], args["sensitive"],
                       l_required=args.get("l") if args.get("kind", "distinct") == "distinct" else None,
                       t_allowed=args.get("t"))
    if test == "t_closeness":
        assert anonsql.check(engine, table, args["quasi_identifiers"], 1, t_closeness={args["sensitive"]: args["t"]}
                             ).ok == (d.classes_above_t == 0)
        return d.classes_above_t
    if args.get("kind") == "entropy":  # the verdict only: check reports the table's entropy l, not per class
        return 0 if math.log(d.entropy_l) >= math.log(args["l"]) - 1e-9 else -1
    assert anonsql.check(engine, table, args["quasi_identifiers"], 1, l_diversity={args["sensitive"]: args["l"]}
                         ).ok == (d.classes_below_l == 0)
    return d.classes_below_l


def _yaml_value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_yaml_value(v) for v in value) + "]"
    return f'"{value}"' if isinstance(value, str) else str(value)


def profile(db: str, folder: Path) -> dict[str, Any]:
    """The dbt target of an anonsql `db`: a DuckDB file, or the suite's PostgreSQL URL with its
    search_path schema."""
    if not db.startswith("postgresql://"):
        return {"type": "duckdb", "path": db, "schema": "main", "threads": 1}
    url = urllib.parse.urlparse(db)
    options = urllib.parse.parse_qs(url.query).get("options", [""])[0]
    schema = options.split("search_path=")[-1] if "search_path=" in options else "public"
    return {"type": "postgres", "host": url.hostname, "port": url.port, "user": url.username,
            "password": url.password or "", "dbname": url.path.lstrip("/"), "schema": schema, "threads": 1}


def write_project(folder: Path, target: dict[str, Any], files: dict[str, str]) -> Path:
    """A dbt project in `folder` using the package (linked where `dbt deps` installs a `local:`
    entry), its profile pointing at `target`, plus `files` (relative path -> text)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dbt_project.yml").write_text(
        "name: anonsql_test\nversion: '1.0'\nconfig-version: 2\nprofile: anonsql_test\n")
    lines = ["anonsql_test:", "  target: dev", "  outputs:", "    dev:"]
    lines += [f"      {k}: {_yaml_value(v)}" for k, v in target.items()]
    (folder / "profiles.yml").write_text("\n".join(lines) + "\n")
    (folder / "dbt_packages").mkdir(exist_ok=True)
    (folder / "dbt_packages" / "dbt_anonsql").symlink_to(PACKAGE, target_is_directory=True)
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def run_dbt(folder: Path, *args: str):
    """`dbt ARGS` in-process on the project in `folder`: {node name: (status, failures)}."""
    result = dbt_main.dbtRunner().invoke([*args, "--project-dir", str(folder), "--profiles-dir", str(folder),
                                          "--log-path", str(folder / "logs"), "--target-path",
                                          str(folder / "target"), "--quiet"])
    assert result.exception is None, result.exception
    return {r.node.name: (str(r.status), r.failures) for r in result.result.results}


def sources_yml(schema: str, tests: dict[str, list[str]]) -> str:
    """One source per test table, the quasi-identifiers age and select declared by column meta,
    and each case a named generic test of its table."""
    out = ["version: 2", "sources:", "  - name: raw", f"    schema: {schema}", "    tables:"]
    for table in TABLES:
        out += [f'      - name: "{table}"', "        columns:",
                '          - name: age', "            meta: {anonsql: {role: qi}}",
                '          - name: "select"', "            meta: {anonsql: {role: qi}}",
                "        data_tests:"]
        out += tests.get(table, []) or ["          []"]
    return "\n".join(out) + "\n"


@pytest.fixture
def loaded(db):
    """The test tables written on `db`'s engine."""
    engine = connect(db)
    for name, data in TABLES.items():
        frame = pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in data.items()}).convert_dtypes()
        write_frame(engine, frame, name, kinds={c: KINDS[c] for c in frame.columns})
    yield engine
    engine.close()


@pytest.mark.slow  # dbt parses the project, then runs it: 6 to 25 s on 2 cores
def test_verdicts_equal_anonsql(db, loaded, tmp_path):
    """Over 30+ cases per engine (100), each dbt test fails exactly when anonsql finds violations, and
    returns as many rows as anonsql counts violating groups (entropy l: the verdict only)."""
    all_cases = cases()
    assert len(all_cases) >= 30
    want = {f"case_{i}": expected(loaded, *case) for i, case in enumerate(all_cases)}
    assert any(want.values()) and not all(want.values())  # the cases hold on both sides
    target = profile(db, tmp_path)
    if target["type"] == "duckdb":
        loaded.close()  # dbt-duckdb opens the file itself
    tests: dict[str, list[str]] = {}
    for i, (table, test, args) in enumerate(all_cases):
        arguments = ", ".join(f'"{k}": {_yaml_value(v)}' for k, v in args.items())
        tests.setdefault(table, []).append(f"          - dbt_anonsql.{test}:\n              name: case_{i}\n"
                     f"              arguments: {{{arguments}}}")
    folder = write_project(tmp_path / "project", target, {"models/sources.yml": sources_yml(target["schema"], tests)})
    got = run_dbt(folder, "test")
    assert set(got) == set(want)
    for name, count in want.items():
        status, failures = got[name]
        assert status == ("pass" if count == 0 else "fail"), (name, all_cases[int(name[5:])], status, count)
        if count > 0:
            assert failures == count, (name, all_cases[int(name[5:])], failures, count)


def test_missing_columns_is_one_clear_error(db, loaded, tmp_path):
    """A test with neither arguments nor meta roles fails to compile with a line naming what to give."""
    target = profile(db, tmp_path)
    if target["type"] == "duckdb":
        loaded.close()
    yml = (f"version: 2\nsources:\n  - name: raw\n    schema: {target['schema']}\n    tables:\n"
           "      - name: one\n        data_tests:\n          - dbt_anonsql.l_diversity:\n"
           "              arguments: {l: 2}\n")
    folder = write_project(tmp_path / "project", target, {"models/sources.yml": yml})
    result = dbt_main.dbtRunner().invoke(["test", "--project-dir", str(folder), "--profiles-dir", str(folder),
                                          "--log-path", str(folder / "logs"), "--quiet"])
    [r] = result.result.results
    assert str(r.status) == "error" and "give quasi_identifiers or declare columns" in r.message



KANON_MODEL = """{{ config(materialized='anonsql_kanon', k=3, l_diversity=2, seed=0) }}
select * from {{ source('raw', 'people') }}
"""
SAFE_MODEL = """{{ config(materialized='anonsql_safe_table', dims=['select', 'Zip Code'], min_count=3) }}
select * from {{ source('raw', 'people') }}
"""
MODELS_YML = """version: 2
models:
  - name: people_k3
    columns:
      - {name: age, meta: {anonsql: {role: qi}}}
      - {name: select, meta: {anonsql: {role: qi}}}
      - {name: Zip Code, meta: {anonsql: {role: qi}}}
      - {name: diagnosis, meta: {anonsql: {role: sensitive}}}
      - {name: PatientId, meta: {anonsql: {role: identifier}}}
    data_tests:
      - dbt_anonsql.k_anonymity: {name: model_k3, arguments: {k: 3}}
      - dbt_anonsql.l_diversity: {name: model_l2, arguments: {l: 2}}
  - name: people_safe
    data_tests:
      - dbt_anonsql.min_group_size:
          name: safe_3
          arguments: {dimensions: [select, Zip Code, grouping_id], n: 3, count_column: value}
      - dbt_anonsql.min_group_size:
          name: safe_100
          config: {severity: warn}
          arguments: {dimensions: [select, Zip Code, grouping_id], n: 100, count_column: value}
"""


def build_project(db: str, folder: Path) -> Path:
    """A project whose source `people` fails k-anonymity (a warning, so that `dbt build` goes on to
    the models downstream) and whose models fix it."""
    target = profile(db, folder)
    raw = sources_yml(target["schema"], {"people": [
        "          - dbt_anonsql.k_anonymity: {name: raw_k3, config: {severity: warn},"
        " arguments: {quasi_identifiers: [age, select, Zip Code], k: 3}}"]})
    return write_project(folder / "project", target, {
        "models/sources.yml": raw, "models/people_k3.sql": KANON_MODEL, "models/people_safe.sql": SAFE_MODEL,
        "models/models.yml": MODELS_YML})


@pytest.mark.slow  # dbt parses the project, then runs it: 6 to 25 s on 2 cores
def test_kanon_model_passes_what_the_raw_table_fails(tmp_path):
    """One `dbt build` on DuckDB: the raw table fails k_anonymity (warns), the anonsql_kanon model is built
    by anonsql (the identifier dropped, 3-anonymous and 2-diverse by anonsql check too) and passes
    k_anonymity and l_diversity; the safe table equals anonsql's own run and passes min_group_size
    over its counts; no private input is left."""
    pytest.importorskip("highspy", reason="anonsql_safe_table needs the tables extra")
    db = str(tmp_path / "warehouse.duckdb")
    frame = pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in PEOPLE.items()}).convert_dtypes()
    with connect(db, create=True) as engine:
        write_frame(engine, frame, "people", kinds={c: KINDS[c] for c in frame.columns})
    got = run_dbt(build_project(db, tmp_path), "build")
    assert got["raw_k3"][0] == "warn" and got["raw_k3"][1] > 0
    assert got["model_k3"][0] == "pass" and got["model_l2"][0] == "pass"
    assert got["people_k3"][0] == "success" and got["people_safe"][0] == "success"
    with connect(db) as engine:
        names = {t.lower() for (t,) in engine.fetch_all("SELECT table_name FROM information_schema.tables")}
        assert not [n for n in names if "anonsql_private_input" in n]
        assert "patientid" not in {c.name.lower() for c in get_table(engine, "people_k3").columns}
        assert anonsql.check(engine, "people_k3", ["age", "select", "Zip Code"], 3, l_diversity={"diagnosis": 2}).ok
        anonsql.safe_table(engine, "people", ["select", "Zip Code"], min_count=3, out="people_safe_direct")
        rows = "SELECT * FROM {} ORDER BY 1, 2, 3, 4"
        assert engine.fetch_all(rows.format("people_safe")) == engine.fetch_all(rows.format("people_safe_direct"))
        [(published, smallest)] = engine.fetch_all("SELECT COUNT(*), MIN(value) FROM people_safe WHERE value > 0")
    # the published cells count 3 or more; every one of them is below 100
    assert smallest >= 3 and got["safe_3"][0] == "pass" and got["safe_100"] == ("warn", published)


def postgres_people(pg_server_url: str, schema: str) -> str:
    """The test table people in a fresh schema of the suite's PostgreSQL: its URL with that search_path."""
    with connect(pg_server_url) as engine:
        engine.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        engine.execute(f"CREATE SCHEMA {schema}")
    db = f"{pg_server_url}?options=-csearch_path%3D{schema}"
    with connect(db) as engine:
        frame = pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in PEOPLE.items()}).convert_dtypes()
        write_frame(engine, frame, "people", kinds={c: KINDS[c] for c in frame.columns})
    return db


def schema_tables(engine) -> list[str]:
    return sorted(t for (t,) in engine.fetch_all("SELECT table_name FROM information_schema.tables WHERE "
                                                  "table_schema = current_schema()"))


def test_materializations_refuse_under_plain_dbt_where_dbt_runs_no_python(pg_server_url, tmp_path):
    """dbt-postgres runs no Python in dbt's process: under a plain `dbt run` both materializations
    stop with one line naming `anonsql dbt build`, before writing anything."""
    pytest.importorskip("dbt.adapters.postgres", reason="dbt-postgres is not installed")
    db = postgres_people(pg_server_url, f"dbt_{os.getpid()}")
    folder = build_project(db, tmp_path)
    result = dbt_main.dbtRunner().invoke(["run", "--project-dir", str(folder), "--profiles-dir", str(folder),
                                          "--log-path", str(folder / "logs"), "--quiet"])
    messages = {r.node.name: r.message for r in result.result.results}
    for name, kind in (("people_k3", "anonsql_kanon"), ("people_safe", "anonsql_safe_table")):
        [line] = [t for t in messages[name].splitlines() if "runs no Python" in t]  # one line, then dbt's stack
        assert f"materialized='{kind}'" in line
        assert line.endswith("dbt-postgres runs no Python in dbt's process, where anonsql runs; build the project "
                             "with `anonsql dbt build`")
    with connect(db) as engine:
        assert schema_tables(engine) == ["people"]


def anonsql_dbt_build(capsys, folder: Path, *dbt_args: str) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """`anonsql dbt build --json --quiet` on the project in `folder`: exit code, the JSON report, and
    dbt's run results by node name."""
    from anonsql.cli import main

    code = main(["dbt", "build", "--json", "--quiet", "--project-dir", str(folder), "--profiles-dir", str(folder),
                 "--log-path", str(folder / "logs"), "--target-path", str(folder / "target"), *dbt_args])
    out, err = capsys.readouterr()
    results = json.loads((folder / "target" / "run_results.json").read_text())["results"]
    assert out.startswith("{"), (code, out[-3000:], err[-3000:])  # with --json, dbt says nothing on stdout
    return code, json.loads(out), {r["unique_id"].split(".")[2]: r for r in results}


@pytest.mark.slow  # dbt parses the project, then runs it: 6 to 25 s on 2 cores
def test_anonsql_dbt_build_makes_the_models_on_postgres(pg_server_url, tmp_path, capsys):
    """`anonsql dbt build` on the suite's PostgreSQL: the raw table fails k_anonymity with anonsql
    check's violating groups, anonsql writes the anonsql_kanon model (identifier dropped), which passes
    k_anonymity and l_diversity in the same build as anonsql check says, and the safe table equal to
    anonsql's own run; no private input is left."""
    pytest.importorskip("dbt.adapters.postgres", reason="dbt-postgres is not installed")
    pytest.importorskip("highspy", reason="anonsql_safe_table needs the tables extra")
    db = postgres_people(pg_server_url, f"dbtb_{os.getpid()}")
    code, report, got = anonsql_dbt_build(capsys, build_project(db, tmp_path))
    assert code == 0 and report["success"] and sorted(report["jobs"]) == [
        f'"dbtb_{os.getpid()}"."people_k3"', f'"dbtb_{os.getpid()}"."people_safe"']
    assert got["people_k3"]["status"] == "success" and got["people_safe"]["status"] == "success"
    assert got["model_k3"]["status"] == "pass" and got["model_l2"]["status"] == "pass"
    assert got["safe_3"]["status"] == "pass"
    with connect(db) as engine:
        qi = ["age", "select", "Zip Code"]
        raw = anonsql.check(engine, "people", qi, 3)
        assert got["raw_k3"]["status"] == "warn" and got["raw_k3"]["failures"] == raw.violating_groups > 0
        assert anonsql.check(engine, "people_k3", qi, 3, l_diversity={"diagnosis": 2}).ok
        assert "patientid" not in {c.name.lower() for c in get_table(engine, "people_k3").columns}
        assert not [t for t in schema_tables(engine) if "private_input" in t]
        anonsql.safe_table(engine, "people", ["select", "Zip Code"], min_count=3, out="people_safe_direct")
        rows = "SELECT * FROM {} ORDER BY 1, 2, 3, 4"
        assert engine.fetch_all(rows.format("people_safe")) == engine.fetch_all(rows.format("people_safe_direct"))


@pytest.mark.slow  # dbt parses the project, then runs it: 6 to 25 s on 2 cores
def test_anonsql_dbt_build_failing_job_leaves_nothing(pg_server_url, tmp_path, capsys):
    """A job anonsql refuses (a quasi-identifier the model lacks): the model errs with anonsql's one
    line, exit 1, and neither the model's relation nor its private input is left."""
    pytest.importorskip("dbt.adapters.postgres", reason="dbt-postgres is not installed")
    db = postgres_people(pg_server_url, f"dbtf_{os.getpid()}")
    folder = build_project(db, tmp_path)
    (folder / "models" / "people_safe.sql").unlink()
    (folder / "models" / "people_k3.sql").write_text(KANON_MODEL.replace("k=3", "k=3, qi=['age', 'no_such']"))
    code, report, got = anonsql_dbt_build(capsys, folder, "--select", "people_k3")
    assert code == 1 and not report["success"] and report["jobs"] == []
    assert got["people_k3"]["status"] == "error" and "no_such" in got["people_k3"]["message"]
    with connect(db) as engine:
        assert schema_tables(engine) == ["people"]


@pytest.mark.parametrize("argv, message", [
    (["--project-dir", "no_such_project"], "dbt build did not run: Path 'no_such_project' does not exist."),
    (["--no-such-dbt-flag"], "dbt build did not run: No such option '--no-such-dbt-flag'."),
])
def test_anonsql_dbt_build_bad_input_is_one_line_exit_2(tmp_path, monkeypatch, capsys, argv, message):
    """What dbt refuses before it builds anything: one line naming dbt's reason, exit 2, no file written."""
    from anonsql.cli import main

    monkeypatch.chdir(tmp_path)
    code = main(["dbt", "build", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.strip().splitlines() == [f"anonsql dbt build: error: {message}"]
    assert not any(tmp_path.iterdir())


SPEC = """[release]
name = "people"

[source]
table = "people"
qi = ["age", "select", "Zip Code"]
sensitive = ["diagnosis"]

[[steps]]
kind = "kanon"
k = 3
l_diversity = {diagnosis = 2}
drop = ["PatientId", "email", "salary", "visit"]
out = "people_k3"
publish = true

[[steps]]
kind = "tables"
input = "source"
dims = ["select", "Zip Code"]
min_count = 3
out = "people_safe"
publish = true

[gates]
k = 3
l_diversity = {diagnosis = 2}
max_risk = 0.34
max_suppressed = 0.9
"""


def export(capsys, *argv: str) -> tuple[int, str, str]:
    from anonsql.cli import main

    code = main(["dbt", "export", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow  # dbt parses the project, then runs it: 6 to 25 s on 2 cores
def test_exported_schema_builds_the_release_in_dbt(tmp_path, capsys):
    """`anonsql dbt export` of a release: its schema.yml, dropped into a dbt project whose models
    select the source, builds the kanon step's table with anonsql_kanon and the tables step's with
    anonsql_safe_table, and its tests (k = 3 from k and max_risk, l = 2, no direct identifiers)
    pass in the same dbt build, as anonsql check says of the same table."""
    pytest.importorskip("highspy", reason="anonsql_safe_table needs the tables extra")
    spec = tmp_path / "people.toml"
    spec.write_text(SPEC)
    code, yml, err = export(capsys, str(spec))
    assert code == 0 and "3 dbt_anonsql tests on 2 models" in err and "max_suppressed" in err
    db = str(tmp_path / "warehouse.duckdb")
    frame = pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in PEOPLE.items()}).convert_dtypes()
    with connect(db, create=True) as engine:
        write_frame(engine, frame, "people", kinds={c: KINDS[c] for c in frame.columns})
    source = "select * from {{ source('raw', 'people') }}\n"
    folder = write_project(tmp_path / "project", profile(db, tmp_path), {
        "models/schema.yml": yml, "models/sources.yml": sources_yml("main", {}),
        "models/people_k3.sql": source, "models/people_safe.sql": source})
    got = run_dbt(folder, "build")
    tests = {name: status for name, (status, _) in got.items() if name.startswith("dbt_anonsql_")}
    assert len(tests) == 3 and set(tests.values()) == {"pass"}, got
    assert {got["people_k3"][0], got["people_safe"][0]} == {"success"}
    with connect(db) as engine:
        assert anonsql.check(engine, "people_k3", ["age", "select", "Zip Code"], 3, l_diversity={"diagnosis": 2}).ok
        assert not scan(engine, get_table(engine, "people_k3"), ["diagnosis"])
        assert {c.name for c in get_table(engine, "people_k3").columns} == {"age", "select", "Zip Code", "diagnosis"}


def test_export_maps_max_risk_to_k_and_says_what_dbt_cannot_check(tmp_path, capsys):
    """max_risk 0.2 asks |E| >= 5: a stricter k_anonymity than k = 3; every gate dbt cannot check is named."""
    spec = tmp_path / "people.toml"
    spec.write_text(SPEC.replace("max_risk = 0.34", "max_risk = 0.2\nmax_nb_error_loss = 0.1"))
    out = tmp_path / "schema.yml"
    code, stdout, err = export(capsys, str(spec), "--out", str(out), "--json")
    report = json.loads(stdout)
    assert code == 0 and report["out"] == str(out) and report["not_in_dbt"] == ["max_suppressed", "max_nb_error_loss"]
    text = out.read_text()
    assert '"k": 5' in text and '"k": 3' not in text and "# gates no dbt test checks: max_suppressed" in text


@pytest.mark.parametrize("text, message", [
    (None, "does-not-exist.toml"),
    (SPEC.replace("k = 3\nl_diversity", "k = \"three\"\nl_diversity", 1),
     "people.toml:11: step 1 (kanon) k must be a whole number"),
    ("[release]\nname = \"x\"\n\n[source]\ntable = \"people\"\nqi = [\"age\"]\n\n[[steps]]\nkind = \"tables\"\n"
     "tables = \"select*age\"\nout = \"t\"\n",
     "people.toml:1: nothing to export to dbt"),
])
def test_export_bad_input_is_one_line_exit_2(tmp_path, capsys, text, message):
    """A missing or wrong spec (the file and line first), a release with nothing dbt can test or
    build: one line, exit 2, no file written."""
    spec = tmp_path / ("people.toml" if text else "does-not-exist.toml")
    if text:
        spec.write_text(text)
    out = tmp_path / "schema.yml"
    code, stdout, err = export(capsys, str(spec), "--out", str(out))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and stdout == "", err
    assert not out.exists()


def test_export_keeps_an_existing_file_without_replace(tmp_path, capsys):
    spec = tmp_path / "people.toml"
    spec.write_text(SPEC)
    out = tmp_path / "schema.yml"
    out.write_text("mine\n")
    code, _, err = export(capsys, str(spec), "--out", str(out))
    assert code == 2 and "give --replace" in err and out.read_text() == "mine\n"
    assert export(capsys, str(spec), "--out", str(out), "--replace")[0] == 0 and "k_anonymity" in out.read_text()


@pytest.mark.slow  # dbt parses the project, then runs it: 6 to 25 s on 2 cores
def test_package_readme_example_runs_as_written(tmp_path, monkeypatch, capsys):
    """The package README's example, run as written in a copy of the package (its project reads
    the package as `local: ..`): `dbt` commands in-process, `anonsql` ones (dbt build among them)
    by the CLI, each must succeed; the count of small classes the README quotes is the raw table's, by anonsql check."""
    import re
    import shlex
    import shutil

    from anonsql.cli import main

    pytest.importorskip("dbt.adapters.duckdb", reason="dbt-duckdb is not installed")
    readme = (PACKAGE / "README.md").read_text()
    [block] = re.findall(r"^```sh\n(.*?)^```", readme, flags=re.S | re.M)
    copy = tmp_path / "dbt_anonsql"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages", "*.duckdb*"))
    monkeypatch.chdir(copy)
    ran = []
    for argv in (shlex.split(line, comments=True) for line in block.splitlines()):
        if argv[0] == "cd":
            monkeypatch.chdir(argv[1])
        elif argv[0] == "dbt":
            result = dbt_main.dbtRunner().invoke([*argv[1:], "--quiet"])
            assert result.success, (argv, result.exception)
        else:
            assert argv[0] == "anonsql" and main(argv[1:]) == 0, (argv, capsys.readouterr())
        ran.append(argv[0])
    assert ran == ["cd", "dbt", "anonsql", "anonsql", "anonsql"]
    small = int(re.search(r"not 3-anonymous \((\d+) classes smaller", readme).group(1))
    assert anonsql.check("example.duckdb", "patients", ["age", "sex", "zip"], 3).violating_groups == small


@pytest.mark.slow  # dbt parses the project, then runs it
def test_kanon_model_configs_reach_anonsql(tmp_path):
    """The model's config, not its meta, decides: qi, k, class, drop and pseudonymize (keyed by a
    key file) reach anonsql's k_anonymize: the model is 2-anonymous over the configured QIs, the
    dropped columns are gone and no original id is left in the pseudonymized column."""
    db = str(tmp_path / "warehouse.duckdb")
    frame = pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in PEOPLE.items()}).convert_dtypes()
    with connect(db, create=True) as engine:
        write_frame(engine, frame, "people", kinds={c: KINDS[c] for c in frame.columns})
    key = tmp_path / "pseudonym.key"
    key.write_text("a secret key of the steward's\n")
    model = ("{{ config(materialized='anonsql_kanon', qi=['age', 'Zip Code'], k=2, class='visit', "
             f"drop=['email', 'salary'], pseudonymize=['PatientId'], key_file='{key}') }}}}\n"
             "select * from {{ source('raw', 'people') }}\n")
    folder = write_project(tmp_path / "project", profile(db, tmp_path), {
        "models/sources.yml": sources_yml("main", {}), "models/people_k2.sql": model})
    assert run_dbt(folder, "run")["people_k2"][0] == "success"
    with connect(db) as engine:
        assert anonsql.check(engine, "people_k2", ["age", "Zip Code"], 2).ok
        assert not anonsql.check(engine, "people_k2", ["age", "Zip Code"], 3).ok  # k came from the config
        columns = [c.name for c in get_table(engine, "people_k2").columns]
        assert sorted(columns) == sorted(["age", "select", "Zip Code", "diagnosis", "PatientId", "visit"])
        ids = {str(i) for (i,) in engine.fetch_all('SELECT "PatientId" FROM people_k2')}
        assert len(ids) == len(PEOPLE["PatientId"]) and not ids & {str(i) for i in PEOPLE["PatientId"]}
