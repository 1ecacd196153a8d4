"""`anonsql cleanup` (issue 29): on Spark it puts right what killed runs left (tests/test_spark.py
kills runs and cleans up after them); DuckDB and PostgreSQL write in transactions, so it has
nothing to do there and says so. A --db it cannot open is one error line, exit 2."""

from __future__ import annotations

import json

from anonsql import cli


def test_cleanup_says_transactions_leave_nothing(db, capsys):
    assert cli.main(["cleanup", "--db", db, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["actions"] == [] and report["schemas"] == []
    assert "writes in transactions" in report["notes"][0]


def test_cleanup_of_a_database_it_cannot_open_is_one_error_line(capsys):
    assert cli.main(["cleanup", "--db", "mysql://somewhere/db"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("anonsql cleanup: error: unsupported database URL scheme 'mysql'")
