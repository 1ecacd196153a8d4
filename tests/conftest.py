"""Shared fixtures: every engine test runs on DuckDB and on a real PostgreSQL server.

The PostgreSQL server is a throwaway one started for the session (initdb + pg_ctl on a
temp dir, as `nobody` when running as root). Without the server binaries the PostgreSQL
cases are skipped with the reason, except under CI (CI=true), where that is a failure.
"""

from __future__ import annotations

import os
import uuid

import pandas as pd
import pytest

from anonsql import sql
from anonsql.data.loading import write_frame
from anonsql.engine import connect
from tests.pgserver import TempPostgres, find_bindir

ENGINES = ["duckdb", "postgres"]


@pytest.fixture(scope="session")
def pg_server_url():
    if find_bindir() is None:
        reason = "PostgreSQL server binaries (initdb, pg_ctl) not installed; .ci/run installs them"
        if os.environ.get("CI"):
            pytest.fail(reason + " -- CI must run the PostgreSQL tests, not skip them")
        pytest.skip(reason)
    server = TempPostgres()
    url = server.start()
    yield url
    server.stop()


def spark_missing() -> str | None:
    """Why the Spark tests cannot run here (no Java, no pyspark), or None."""
    import importlib.util
    import shutil

    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "Java not installed (Spark needs Java 17+); .ci/run installs openjdk-17-jre-headless"
    if importlib.util.find_spec("pyspark") is None:
        return "pyspark not installed: pip install 'anonsql[spark]'"
    return None


@pytest.fixture(scope="session")
def chromium() -> str:
    """The headless Chromium binary the release report is rendered in. Skipped without it, a
    failure under CI=true."""
    import shutil

    found = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser")) if p), None)
    if found is None:
        reason = "headless Chromium not installed (Debian: apt-get install chromium); .ci/run installs it"
        if os.environ.get("CI"):
            pytest.fail(reason + " -- CI must run the browser test, not skip it")
        pytest.skip(reason)
    return found


@pytest.fixture(scope="session")
def spark_url(tmp_path_factory):
    """`spark:local[2]` over a fresh warehouse, tables in memory: ONE SparkSession for the whole test session (the
    engine keeps one per process). Skipped without Java or pyspark, a failure under CI=true."""
    reason = spark_missing()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(reason + " -- CI must run the Spark tests, not skip them")
        pytest.skip(reason)
    # The in-memory catalog spares the Hive metastore's start (the persistence test uses Hive).
    return f"spark:local[2]?warehouse={tmp_path_factory.mktemp('spark') / 'warehouse'}&catalog=in-memory"


@pytest.fixture(scope="session")
def spark_engine(spark_url):
    eng = connect(spark_url)
    yield eng
    eng.close()


#: The marker a test gets from a fixture it uses (directly or through another fixture), so that
#: `pytest -m "not spark and not browser"` is the quick loop (pyproject.toml registers them).
MARKED_BY_FIXTURE = {"pg_server_url": "postgres", "spark_url": "spark", "chromium": "browser"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test by the servers it starts: `postgres` (the throwaway PostgreSQL, also the
    PostgreSQL case of `db`), `spark` (a local Spark, with its JVM), `browser` (headless Chromium)."""
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("db") == "postgres":
            used.add("pg_server_url")  # db's PostgreSQL case asks for the server at run time
        for fixture, marker in MARKED_BY_FIXTURE.items():
            if fixture in used:
                item.add_marker(getattr(pytest.mark, marker))


@pytest.fixture(params=ENGINES)
def db(request, tmp_path):
    """An empty database on each engine: a DuckDB file path, or a PostgreSQL URL whose
    search_path is a fresh schema (so each test starts empty and cleans up after)."""
    if request.param == "duckdb":
        path = str(tmp_path / "test.duckdb")
        connect(path, create=True).close()
        yield path
        return
    base = request.getfixturevalue("pg_server_url")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = connect(base)
    admin.execute(f"CREATE SCHEMA {schema}")
    yield f"{base}?options=-csearch_path%3D{schema}"
    admin.execute(f"DROP SCHEMA {schema} CASCADE")
    admin.close()


@pytest.fixture
def engine(db):
    eng = connect(db)
    yield eng
    eng.close()


@pytest.fixture
def make_table(engine):
    """Create a table from a dict of columns (None = NULL) on the test's engine."""

    def make(name: str, data: dict[str, list]) -> None:
        frame = pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in data.items()})
        write_frame(engine, frame.convert_dtypes(), name)

    return make


def table_rows(engine, name: str) -> list[tuple]:
    """All rows of a table, sorted (None last), for comparisons across engines."""
    text = f"SELECT * FROM {sql.TableName.parse(name).expr.sql(engine.dialect)}"
    return sorted(engine.fetch_all(text), key=lambda r: tuple((v is None, str(v)) for v in r))
