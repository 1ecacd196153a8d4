"""The CLI: exit codes 0/1/2, --json, one-line errors that leave the database unchanged."""

import json

import pytest

from anonsql import catalog
from anonsql.cli import main

from .conftest import table_rows
from .test_evaluate import ANON, ORIG, _frame
from .test_profile import SMALL


def run(capsys, *argv):
    """Run the CLI in-process; argparse's usage errors arrive as SystemExit."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def small(make_table):
    make_table("t", SMALL)
    make_table("nullcls", {"a": [1, 2], "c": ["x", None]})


def test_check_exit_codes_and_json(capsys, db, small):
    code, out, _ = run(capsys, "check", "--db", db, "--table", "t", "--qi", "zip,sex", "--k", "2")
    assert code == 1 and "NOT 2-anonymous" in out and "zip=3, sex=None, size=1" in out
    code, out, _ = run(capsys, "check", "--db", db, "--table", "t", "--qi", "sex,zip", "--k", "1", "--json")
    assert code == 0 and json.loads(out)["ok"] is True


def test_profile_json(capsys, db, small):
    code, out, _ = run(capsys, "profile", "--db", db, "--table", "t", "--qi", "zip,sex", "--class", "cls", "--json")
    data = json.loads(out)
    assert code == 0 and data["k"] == 1 and data["class_distribution"] == {"n": 4, "y": 4}
    code, out, _ = run(capsys, "profile", "--db", db, "--table", "t", "--qi", "zip,sex", "--class", "cls")
    assert "current k (smallest equivalence class): 1" in out


def test_load_and_dataset(capsys, db, tmp_path, engine):
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1, ?\n")
    code, out, _ = run(capsys, "load", str(path), "--db", db, "--table", "x", "--na", "?", "--json")
    assert code == 0 and json.loads(out)["rows"] == 1
    assert table_rows(engine, "x") == [(1, None)]
    code, out, _ = run(capsys, "dataset", "car", "--db", db)
    assert code == 0 and "1,728 rows into car" in out


BAD = [
    (["check", "--table", "nope", "--qi", "a", "--k", "2"], "table not found: nope"),
    (["check", "--table", "t", "--qi", "zip,nope", "--k", "2"], "unknown column 'nope'"),
    (["check", "--table", "empty", "--qi", "a", "--k", "2"], "is empty"),
    (["check", "--table", "t", "--qi", "zip", "--k", "0"], "k must be an integer >= 1"),
    (["check", "--table", "t", "--qi", "zip", "--k", "ten"], "k must be an integer >= 1"),
    (["profile", "--table", "nullcls", "--class", "c"], "class column 'c' has 1 NULL"),
    (["load", "/no/such.csv", "--table", "new"], "CSV file not found"),
    (["dataset", "nope"], "invalid choice"),
]


@pytest.mark.parametrize("argv, message", BAD)
def test_bad_input_is_one_line_exit_2_and_changes_nothing(capsys, db, engine, small, make_table, argv, message):
    make_table("empty", {"a": [1]})
    engine.execute('DELETE FROM "empty"')
    before = {t: table_rows(engine, t) for t in ("t", "nullcls", "empty")}
    code, _, err = run(capsys, *argv[:1], "--db", db, *argv[1:])
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1
    assert {t: table_rows(engine, t) for t in before} == before
    assert catalog.find_table(engine, "new") is None


@pytest.mark.parametrize("url, message", [
    ("mysql://u@h/db", "unsupported database URL scheme"),
    ("postgresql://u@127.0.0.1:1/db", "cannot connect to PostgreSQL"),
])
def test_bad_url(capsys, url, message):
    code, _, err = run(capsys, "check", "--db", url, "--table", "t", "--qi", "a", "--k", "2")
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_evaluate_cli(capsys, db, make_table):
    make_table("orig", _frame(ORIG))
    make_table("anon", _frame(ANON))
    code, out, _ = run(capsys, "evaluate", "--db", db, "--original", "orig", "--anonymized", "anon",
                       "--qi", "a,b", "--class", "cls", "--folds", "2", "--classifiers", "nb", "--json")
    data = json.loads(out)
    assert code == 0 and data["key"] == "id" and data["classifiers"]["nb"]["error"] == 0.4
    code, _, err = run(capsys, "evaluate", "--db", db, "--original", "orig", "--anonymized", "anon",
                       "--qi", "a,b", "--class", "cls", "--folds", "1")
    assert code == 2 and err.strip() == "anonsql evaluate: error: folds must be an integer >= 2, got 1"
