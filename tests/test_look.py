"""`anonsql show` and `anonsql sql` (a quick look, read-only) and engines as context managers
(issue 36), on DuckDB and PostgreSQL."""

import json

import pytest

import anonsql
from anonsql.errors import AnonsqlError

from .conftest import table_rows
from .test_cli import run

DATA = {"id": [1, 2, 3], "sex": ["f", "m", None], "age": [30, 41, 52]}


@pytest.fixture
def people(make_table):
    make_table("people", DATA)


def test_show_prints_the_first_rows_as_a_table(capsys, db, people):
    code, out, err = run(capsys, "show", "--db", db, "--table", "people", "--limit", "2")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["id", "sex", "age"] and set(lines[1]) <= {"-", " "}
    assert len(lines) == 5 and lines[-1] == "(2 rows of people; more exist beyond --limit 2)"
    code, out, _ = run(capsys, "show", "--db", db, "--table", "people", "--json")
    data = json.loads(out)
    assert data["columns"] == ["id", "sex", "age"] and data["more"] is False
    assert sorted(data["rows"], key=lambda r: r[0]) == [list(r) for r in zip(*DATA.values())]


def test_null_is_shown_as_null(db, people):
    report = anonsql.show_table(db, "people")
    assert "NULL" in "\n".join(report.lines()) and len(report.rows) == 3 and not report.more


def test_sql_runs_a_query(capsys, db, people):
    query = "SELECT sex, COUNT(*) AS n FROM people GROUP BY sex ORDER BY n, sex"
    code, out, err = run(capsys, "sql", "--db", db, query, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["columns"] == ["sex", "n"] and sorted(map(tuple, data["rows"]), key=str) == sorted(
        [("f", 1), ("m", 1), (None, 1)], key=str)
    code, out, _ = run(capsys, "sql", "--db", db, "SELECT id FROM people ORDER BY id", "--limit", "1")
    assert code == 0 and out.splitlines()[2].strip() == "1" and "more exist beyond --limit 1" in out


@pytest.mark.parametrize("query, refused", [
    ("DELETE FROM people", "DELETE refused"),
    ("INSERT INTO people VALUES (4, 'f', 1)", "INSERT refused"),
    ("DROP TABLE people", "DROP refused"),
    ("UPDATE people SET age = 0", "UPDATE refused"),
    ("CREATE TABLE x AS SELECT * FROM people", "CREATE refused"),
    ("WITH d AS (DELETE FROM people RETURNING *) SELECT * FROM d", "DELETE refused"),
    ("SELECT 1; DELETE FROM people", "give one query, not 2 statements"),
    ("SELEC nonsense FROM", "cannot parse the query"),
])
def test_sql_refuses_writes_in_one_line_and_changes_nothing(capsys, db, engine, people, query, refused):
    before = table_rows(engine, "people")
    code, out, err = run(capsys, "sql", "--db", db, query)
    assert code == 2 and refused in err and len(err.strip().splitlines()) == 1 and out == ""
    assert table_rows(engine, "people") == before


def test_select_into_is_refused_on_postgres(pg_server_url):
    """PostgreSQL's SELECT ... INTO creates a table: a write."""
    with pytest.raises(AnonsqlError, match="INTO refused"):
        anonsql.read_query(pg_server_url, "SELECT * INTO copy_of_people FROM people")


def test_engines_are_context_managers(db, people):
    with anonsql.connect(db) as engine:
        assert engine.fetch_all('SELECT COUNT(*) FROM "people"')[0][0] == 3
    with pytest.raises(Exception, match="(?i)closed"):  # its connection refuses further work
        engine.fetch_all("SELECT 1")


def test_docs_api_maps_every_command_to_its_function():
    """docs/api.md's table names every command once, each with a function that exists."""
    import importlib
    import re
    from pathlib import Path

    from .test_cli_options import _runnable

    text = (Path(__file__).resolve().parent.parent / "docs" / "api.md").read_text()
    table = dict(re.findall(r"^\| `anonsql ([a-z ]+)` \| `([a-z_.]+)`", text, flags=re.M))
    assert set(table) == {" ".join(path) for path, _ in _runnable()}
    for command, function in table.items():
        module, _, name = function.rpartition(".")
        assert callable(getattr(importlib.import_module(module), name)), command


@pytest.mark.parametrize("argv, message", [
    (["show", "--table", "nope"], "table not found: nope"),
    (["show", "--table", "people", "--limit", "-1"], "-1 is not in the range x>=0"),
    (["sql", "SELECT * FROM nope"], "nope"),
])
def test_bad_input_is_one_line_exit_2(capsys, db, engine, people, argv, message):
    before = table_rows(engine, "people")
    code, out, err = run(capsys, argv[0], "--db", db, *argv[1:])
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and out == ""
    assert table_rows(engine, "people") == before
