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
from anonsql.engine import connect
from tests.pgserver import TempPostgres, find_bindir
from anonsql.data.loading import write_frame

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
