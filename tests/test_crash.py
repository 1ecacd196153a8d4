"""Fault injection (issue 18): kill -9 an in-place run right after each stage of its job; the
source must be exactly as it was, on both engines (the rewrite and the checks share one
transaction, so a process that dies before COMMIT leaves nothing behind)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from anonsql.report import KILL_AFTER

from .conftest import table_rows

RUN = "import sys; from anonsql.cli import main; sys.exit(main(sys.argv[1:]))"

JOBS = {
    "kanon": (["kanon", "--table", "t", "--qi", "zip,sex", "--class", "cls", "--k", "3", "--in-place"],
              ["statistics", "loop", "rewrite", "verify"]),
    "protect": (["protect", "--table", "t", "--key", "id", "--target", "cls", "--rows", "1,4", "--in-place"],
                ["algorithm", "rewrite", "verify"]),
}
CASES = [pytest.param(job, stage, id=f"{job}-{stage}") for job, (_, stages) in JOBS.items() for stage in stages]


@pytest.fixture
def source(make_table):
    make_table("t", {"id": [1, 2, 3, 4, 5, 6, 7, 8], "zip": ["a", "a", "b", "b", "c", "c", "d", None],
                     "sex": ["m", "f", "m", "f", "m", "m", "f", "f"],
                     "cls": ["y", "n", "y", "n", "y", "y", "n", "n"]})


@pytest.mark.parametrize("job, stage", CASES)
def test_a_run_killed_after_any_stage_leaves_the_source_intact(db, engine, source, job, stage):
    before = table_rows(engine, "t")
    if db.endswith(".duckdb"):
        engine.close()  # DuckDB allows one writing process per file
    argv, _ = JOBS[job]
    env = {**os.environ, KILL_AFTER: stage}
    done = subprocess.run([sys.executable, "-c", RUN, argv[0], "--db", db, "--quiet", *argv[1:]],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stderr  # killed by SIGKILL at that stage, not finished
    from anonsql.engine import connect

    fresh = connect(db)
    try:
        assert table_rows(fresh, "t") == before
    finally:
        fresh.close()


@pytest.mark.parametrize("job", list(JOBS))
def test_without_the_hook_the_same_run_changes_the_source(db, engine, source, job):
    """The control: the runs the crash tests kill do rewrite the source when left alone."""
    before = table_rows(engine, "t")
    if db.endswith(".duckdb"):
        engine.close()
    argv, _ = JOBS[job]
    env = {k: v for k, v in os.environ.items() if k != KILL_AFTER}
    done = subprocess.run([sys.executable, "-c", RUN, argv[0], "--db", db, "--quiet", *argv[1:]],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    from anonsql.engine import connect

    fresh = connect(db)
    try:
        assert table_rows(fresh, "t") != before
    finally:
        fresh.close()
