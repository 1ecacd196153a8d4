"""The dbt package (integrations/dbt_anonsql, issue 37): each generic test's verdict, and the
number of violating groups it returns, equal anonsql's own measure of the same table, on DuckDB
and on the suite's PostgreSQL, over quoted and reserved names, NULLs, empty and one-row tables.
dbt runs in-process (dbtRunner) on a small project written to a temporary folder; the package is
linked into it as `dbt deps` would install a `local:` entry. Skipped when dbt is not installed
(`pip install -e '.[dbt]'`)."""

from __future__ import annotations

import math
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
from anonsql.identifiers import scan

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
                (table, "no_direct_identifiers", {"columns": ["diagnosis", "salary", "email", "PatientId", "visit"]}),
                (table, "no_direct_identifiers", {"columns": ["diagnosis"]})]
        out.append((table, "k_anonymity", {"k": 2}))  # the quasi-identifiers from the columns' meta
    return out


def expected(engine, table: str, test: str, args: dict[str, Any]) -> int:
    """How many groups (columns, for identifiers) violate the test by anonsql's own measure."""
    tab = get_table(engine, table)
    if test == "k_anonymity":
        qi = args.get("quasi_identifiers", ["age", "select"])  # the meta roles of sources_yml
        return anonsql.check(engine, table, qi, args["k"]).violating_groups
    if test == "min_group_size" and "entity_key" not in args:
        return anonsql.check(engine, table, args["dimensions"], args["n"]).violating_groups
    if test == "min_group_size":  # distinct entities per group, a NULL key one entity: counted by pandas
        frame = pd.DataFrame(TABLES[table]).astype(object)
        sizes = frame.groupby(args["dimensions"], dropna=False)[args["entity_key"]].nunique(dropna=False)
        return int((sizes < args["n"]).sum())
    if test == "no_direct_identifiers":
        return len(scan(engine, tab, args["columns"]))
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


def test_verdicts_equal_anonsql(db, loaded, tmp_path):
    """Over 30+ cases per engine, each dbt test fails exactly when anonsql finds violations, and
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

