"""In-place runs hold the source stable for their whole life (issue 18, defect 8): on PostgreSQL
the statistics, rewrite and checks share one transaction opened with a table lock, so a run
blocked by another session says so on stderr, and a concurrent INSERT waits for the commit."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from anonsql.engine import connect

RUN = "import sys; from anonsql.cli import main; sys.exit(main(sys.argv[1:]))"
KANON = ["kanon", "--table", "t", "--qi", "zip,sex", "--class", "cls", "--k", "3", "--in-place"]


def _blocked_sessions(holder) -> int:
    """Sessions of this server queued behind a lock (pg_stat_activity's wait_event_type); the
    holder's open transaction would otherwise keep reading its first snapshot of the view."""
    holder.fetch_all("SELECT pg_stat_clear_snapshot()")
    return int(holder.fetch_all("SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")[0][0])


@pytest.fixture
def pg(db, make_table):
    if not db.startswith("postgresql"):
        pytest.skip("DuckDB's file lock already refuses a second writer in one line")
    make_table("t", {"id": [1, 2, 3, 4, 5, 6, 7, 8], "zip": ["a", "a", "b", "b", "c", "c", "d", None],
                     "sex": ["m", "f", "m", "f", "m", "m", "f", "f"], "cls": ["y", "n", "y", "n", "y", "y", "n", "n"]})
    return db


def test_a_run_waiting_for_a_lock_says_so_and_then_finishes(pg):
    holder = connect(pg)
    try:
        with holder.transaction():
            holder.execute('LOCK TABLE "t" IN ROW EXCLUSIVE MODE')  # what an open INSERT holds
            run = subprocess.Popen([sys.executable, "-c", RUN, KANON[0], "--db", pg, *KANON[1:]],
                                   stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=os.environ.copy())
            # wait until the run really queues behind the lock: a fixed sleep let a loaded machine start
            # Python after the holder had let go, and the run then had nothing to wait for
            deadline = time.monotonic() + 120
            while not _blocked_sessions(holder) and run.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            assert run.poll() is None and _blocked_sessions(holder)  # still waiting
            time.sleep(3)  # past a whole attempt (engine.postgres.LOCK_ATTEMPT, 1 s): the run says it waits
        out, err = run.communicate(timeout=120)
    finally:
        holder.close()
    assert run.returncode == 0, err
    assert "waiting for a lock on t" in err


def test_a_concurrent_insert_waits_until_the_run_commits(pg, monkeypatch):
    import anonsql
    from anonsql.kanon import job

    writer = connect(pg)
    inserted: list[float] = []
    finished: list[float] = []
    real = job.anonymize

    def slow_loop(*args, **kwargs):  # the INSERT arrives while the run is between statistics and rewrite
        thread.start()
        time.sleep(2)
        return real(*args, **kwargs)

    def insert():
        writer.execute("INSERT INTO t VALUES (9, 'z', 'm', 'y')")
        inserted.append(time.monotonic())

    thread = threading.Thread(target=insert)
    monkeypatch.setattr(job, "anonymize", slow_loop)
    try:
        report = anonsql.k_anonymize(pg, "t", "zip,sex", "cls", 3, in_place=True)
        finished.append(time.monotonic())
        thread.join(timeout=60)
    finally:
        writer.close()
    assert report.ok and inserted and inserted[0] >= finished[0] - 0.5  # the INSERT went through after the commit
    check = connect(pg)
    try:
        assert check.fetch_all("SELECT COUNT(*) FROM t") == [(9,)]
    finally:
        check.close()


def test_a_duckdb_file_held_by_another_process_says_so(tmp_path, capsys):
    """DuckDB's lock error advised a `-readonly` flag anonsql has not (issue 36): now one line
    saying the file is in use by another process, with its PID, and to retry when it ends."""
    from anonsql.cli import main

    db = tmp_path / "held.duckdb"
    connect(str(db), create=True).close()
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; con = duckdb.connect(sys.argv[1]); "
                               "print('holding', flush=True); time.sleep(60)", str(db)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        code = main(["show", "--db", str(db), "--table", "t"])
        err = capsys.readouterr().err
    finally:
        holder.kill()
        holder.wait()
    assert code == 2 and err.count("\n") == 1, err
    assert f"cannot open DuckDB database {db}: the file is in use by another process (" in err
    assert f", PID {holder.pid}); retry when that process has ended" in err and "readonly" not in err


def _hold(db) -> subprocess.Popen:
    """A second process holding the DuckDB file's lock until it is killed (it says 'holding' first)."""
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; con = duckdb.connect(sys.argv[1]); "
                               "print('holding', flush=True); time.sleep(600)", str(db)],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    return holder


def test_wait_opens_the_file_once_its_holder_ends(tmp_path):
    """--wait SECONDS (issue 36): the command says which process holds the file and waits; when
    that process ends, the command opens the file and runs."""
    db = tmp_path / "held.duckdb"
    with connect(str(db), create=True) as eng:
        eng.execute("CREATE TABLE t AS SELECT 1 AS a")
    holder = _hold(db)
    waiter = subprocess.Popen([sys.executable, "-c", "import sys; from anonsql.cli import main; sys.exit(main())",
                               "show", "--db", str(db), "--table", "t", "--json", "--wait", "600"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert waiter.stderr is not None
        line = waiter.stderr.readline()  # said once, before it waits
        assert line.startswith(f"waiting up to 600 s for DuckDB database {db}: the file is in use by another "
                               "process (") and f"PID {holder.pid})" in line, line
    finally:
        holder.kill()
        holder.wait()
    out, err = waiter.communicate(timeout=600)
    assert waiter.returncode == 0, err
    assert "a" in out and "1" in out


def test_wait_runs_out_in_one_line(tmp_path, capsys):
    """A holder that does not end: after --wait SECONDS, one error line, exit 2."""
    from anonsql.cli import main

    db = tmp_path / "held.duckdb"
    connect(str(db), create=True).close()
    holder = _hold(db)
    try:
        code = main(["show", "--db", str(db), "--table", "t", "--wait", "0.3", "--quiet"])
        err = capsys.readouterr().err
    finally:
        holder.kill()
        holder.wait()
    assert code == 2 and err.count("\n") == 1, err  # --quiet: no waiting line, only the error
    assert err.startswith(f"anonsql show: error: cannot open DuckDB database {db}: the file is in use by another "
                          "process (")
    assert f"PID {holder.pid}); still in use after waiting 0.3 s" in err
