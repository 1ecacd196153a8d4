"""In place means gone (issue 29): after `kanon --in-place` / `protect --in-place` the original
values are not recoverable from the database files anonsql controls. DuckDB: the file is
rebuilt, and a canary value the run removed is found in its bytes before and nowhere after;
PostgreSQL: the table is rewritten (new relfilenode) and re-analyzed (pg_stats forgets the
canary), and the summary says what stays out of reach."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import uuid

import pandas as pd
import pytest

import anonsql
from anonsql.cli import main
from anonsql.data.loading import write_frame
from anonsql.engine import connect
from anonsql.engine.base import Scrubbed
from anonsql.engine.duckdb import DuckDBEngine

from .conftest import table_rows

#: Long unique strings nothing else in a database file could spell by chance.
ZIP_CANARY = f"zip-canary-{uuid.uuid4().hex}{uuid.uuid4().hex}"
NAME_CANARY = f"name-canary-{uuid.uuid4().hex}{uuid.uuid4().hex}"


def records() -> pd.DataFrame:
    """12 rows: the canary zip is on one row only, so 2-anonymity blanks it; `name` is a direct
    identifier, dropped by the runs below, one of its values the other canary."""
    zips = ["10", "10", "20", "20", "30", "30", "40", "40", "50", "50", "60", ZIP_CANARY]
    names = [f"person {i}" for i in range(11)] + [NAME_CANARY]
    return pd.DataFrame({"id": range(1, 13), "zip": zips, "sex": ["m", "f"] * 6, "name": names,
                         "cls": ["y", "n", "y", "y", "n", "n", "y", "n", "y", "y", "n", "y"]}).convert_dtypes()


IN_PLACE = {
    "kanon": lambda db: anonsql.k_anonymize(db, "t", "zip", "cls", 2, in_place=True, drop="name"),
    "protect": lambda db: anonsql.protect_table(db, "t", "id", target="cls", rows="3", in_place=True, drop="name"),
}
#: The canaries each run removes: kanon blanks the zip and drops the name; protect drops the name.
GONE = {"kanon": [ZIP_CANARY, NAME_CANARY], "protect": [NAME_CANARY]}


@pytest.fixture
def duck(tmp_path) -> str:
    """A DuckDB file holding `t`, no connection left open."""
    path = str(tmp_path / "canary.duckdb")
    engine = connect(path, create=True)
    write_frame(engine, records(), "t")
    engine.close()
    return path


def file_bytes(path: str) -> bytes:
    """The database file and its WAL, as a reader of the disk sees them."""
    return b"".join(open(p, "rb").read() for p in (path, path + ".wal") if os.path.exists(p))


def leftovers(path: str) -> list[str]:
    folder, base = os.path.split(path)
    return sorted(n for n in os.listdir(folder) if n.startswith(base) and n != base)


@pytest.mark.parametrize("job", list(IN_PLACE))
def test_duckdb_in_place_leaves_no_removed_value_in_the_file(duck, job):
    before = file_bytes(duck)
    assert all(c.encode() in before for c in GONE[job])  # readable before: the search can see them
    report = IN_PLACE[job](duck)
    assert report.ok and any("rebuilt" in n for n in report.notes), report.notes
    assert report.seconds["scrub"] > 0  # its cost shows in the summary's timings
    after = file_bytes(duck)
    assert [c for c in GONE[job] if c.encode() in after] == []
    assert leftovers(duck) == []  # neither the rebuild's file nor a WAL left beside it
    engine = connect(duck)  # the rebuilt file is the database, with the run's result in it
    try:
        rows = table_rows(engine, "t")
        assert len(rows) == 12 and all(len(r) == 4 for r in rows)  # name dropped
        assert all(c not in map(str, r) for r in rows for c in GONE[job])
    finally:
        engine.close()


def test_without_the_rebuild_the_values_stay_in_the_file(duck, monkeypatch):
    """The defect the rebuild closes, and proof the byte search finds what is left: the same run
    with scrub() doing nothing leaves the blanked and dropped values readable in the file."""
    monkeypatch.setattr(DuckDBEngine, "scrub", lambda self, table: Scrubbed())
    assert IN_PLACE["kanon"](duck).ok
    after = file_bytes(duck)
    assert ZIP_CANARY.encode() in after and NAME_CANARY.encode() in after


def test_cli_in_place_says_the_file_was_rebuilt(duck, capsys):
    code = main(["kanon", "--db", duck, "--table", "t", "--qi", "zip", "--class", "cls", "--k", "2", "--in-place",
                 "--drop", "name", "--quiet"])
    out, _ = capsys.readouterr()
    assert code == 0 and f"{duck} rebuilt from a fresh copy" in out
    assert ZIP_CANARY.encode() not in file_bytes(duck)


def test_the_rebuild_keeps_every_other_object_and_the_file_mode(duck):
    engine = connect(duck)
    engine.execute("CREATE SCHEMA other")
    engine.execute("CREATE TABLE other.kept AS SELECT range AS n, 'v' || range AS s FROM range(1000)")
    engine.execute("CREATE SEQUENCE seq START 5")
    engine.execute("CREATE VIEW t_view AS SELECT id, zip FROM t")
    engine.fetch_all("SELECT nextval('seq')")
    kept = table_rows(engine, "other.kept")
    engine.close()
    os.chmod(duck, 0o640)
    assert IN_PLACE["kanon"](duck).ok
    assert stat.S_IMODE(os.stat(duck).st_mode) == 0o640
    engine = connect(duck)
    try:
        assert table_rows(engine, "other.kept") == kept
        assert engine.fetch_all("SELECT id, zip FROM t_view ORDER BY id") == engine.fetch_all(
            "SELECT id, zip FROM t ORDER BY id")
        assert engine.fetch_all("SELECT nextval('seq')") == [(6,)]
    finally:
        engine.close()


def test_another_connection_of_the_process_keeps_the_file_and_says_so(duck):
    """DuckDB shares one database between the connections of a process: another one would go on
    writing to the old file, so the file is not rebuilt, and the report warns that the values
    may still be in it (they are)."""
    other = connect(duck)
    try:
        report = IN_PLACE["kanon"](duck)
        assert report.ok and not any("rebuilt from" in n for n in report.notes)
        assert any("was not rebuilt (1 other connection(s)" in w for w in report.warnings), report.warnings
        assert ZIP_CANARY not in map(str, sum(table_rows(other, "t"), ()))  # the run itself committed
    finally:
        other.close()
    assert ZIP_CANARY.encode() in file_bytes(duck)


def test_a_caller_connection_is_not_rebuilt_and_the_report_says_so(duck):
    import duckdb

    con = duckdb.connect(duck)
    try:
        report = anonsql.k_anonymize(con, "t", "zip", "cls", 2, in_place=True)
    finally:
        con.close()
    assert report.ok and any("the connection is the caller's" in w for w in report.warnings), report.warnings


def test_a_failed_rebuild_leaves_the_file_whole_with_the_change_committed(duck, monkeypatch):
    import anonsql.engine.duckdb as duckdb_engine

    def full_disk(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(duckdb_engine.os, "replace", full_disk)
    report = IN_PLACE["kanon"](duck)
    assert report.ok and any("was not rebuilt (" in w and "No space left" in w for w in report.warnings)
    assert leftovers(duck) == []  # the half-made copy removed
    engine = connect(duck)
    try:
        rows = table_rows(engine, "t")
        assert len(rows) == 12 and ZIP_CANARY not in map(str, sum(rows, ()))
    finally:
        engine.close()


KILLED_AT_SWAP = """
import os, signal, sys
import anonsql.engine.duckdb as e
e.os.replace = lambda src, dst: os.kill(os.getpid(), signal.SIGKILL)
from anonsql.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_run_killed_at_the_swap_leaves_the_committed_file_and_the_next_run_cleans_up(duck):
    argv = ["kanon", "--db", duck, "--table", "t", "--qi", "zip", "--class", "cls", "--k", "2", "--in-place", "--quiet"]
    done = subprocess.run([sys.executable, "-c", KILLED_AT_SWAP, *argv], capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stderr
    assert leftovers(duck) == [os.path.basename(duck) + ".anonsql-rebuild"]  # the copy, not yet swapped in
    engine = connect(duck)
    try:
        rows = table_rows(engine, "t")
        assert len(rows) == 12 and ZIP_CANARY not in map(str, sum(rows, ()))  # committed before the swap
    finally:
        engine.close()
    assert main(argv) == 0
    assert leftovers(duck) == [] and ZIP_CANARY.encode() not in file_bytes(duck)


@pytest.mark.parametrize("job", list(IN_PLACE))
def test_postgres_in_place_rewrites_the_table_and_forgets_its_statistics(db, engine, job):
    if not db.startswith("postgresql://"):
        pytest.skip("PostgreSQL's heap and pg_statistic")
    write_frame(engine, records(), "t")
    engine.execute("ANALYZE t")
    stats = ("SELECT string_agg(concat(most_common_vals::text, histogram_bounds::text), ' ') FROM pg_stats "
             "WHERE schemaname = current_schema() AND tablename = 't'")
    filenode = "SELECT pg_relation_filenode('t')"
    node = engine.fetch_all(filenode)
    assert all(c in engine.fetch_all(stats)[0][0] for c in GONE[job])  # sampled before
    report = IN_PLACE[job](db)
    assert report.ok and any("VACUUM (FULL, ANALYZE) rewrote" in n for n in report.notes), report.notes
    assert any("the WAL" in w and "backups" in w and "replicas" in w for w in report.warnings), report.warnings
    assert engine.fetch_all(filenode) != node  # a new heap: the old one, with the old row versions, is gone
    sampled = engine.fetch_all(stats)[0][0] or ""
    assert [c for c in GONE[job] if c in sampled] == []


def test_postgres_in_a_caller_transaction_is_not_rewritten_and_says_so(db, engine):
    if not db.startswith("postgresql://"):
        pytest.skip("a PostgreSQL transaction")
    import psycopg

    write_frame(engine, records(), "t")
    with psycopg.connect(db) as con:  # not autocommit: the run joins the caller's transaction
        report = anonsql.k_anonymize(con, "t", "zip", "cls", 2, in_place=True)
        con.commit()
    assert report.ok and any("was not rewritten (the connection is in a transaction" in w for w in report.warnings)
    assert any("the WAL" in w for w in report.warnings)
