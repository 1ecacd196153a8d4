"""The CLI: exit codes 0/1/2, --json, one-line errors that leave the database unchanged,
--version, the generated reference in docs/cli.md, broken pipes and Ctrl-C."""

import json
from pathlib import Path

import pytest

from anonsql import api, catalog
from anonsql.cli import main
from anonsql.cli.reference import reference

from .conftest import table_rows
from .test_profile import SMALL


def run(capsys, *argv):
    """Run the CLI in-process: main() returns the exit code and never raises."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def small(make_table):
    make_table("t", SMALL)
    make_table("nullcls", {"a": [1, 2], "c": ["x", None]})


def test_check_exit_codes_and_json(capsys, db, small):
    code, out, _ = run(capsys, "check", "--db", db, "--table", "t", "--qi", "zip,sex", "--k", "2")
    assert code == 1 and "NOT 2-anonymous" in out and "zip=3, sex=NULL, size=1" in out and "None" not in out
    code, out, _ = run(capsys, "check", "--db", db, "--table", "t", "--qi", "sex,zip", "--k", "1", "--json")
    assert code == 0 and json.loads(out)["ok"] is True


def test_profile_json(capsys, db, small):
    code, out, _ = run(capsys, "profile", "--db", db, "--table", "t", "--qi", "zip,sex", "--class", "cls", "--json")
    data = json.loads(out)
    assert code == 0 and data["k"] == 1 and data["class_distribution"] == {"n": 4, "y": 4}
    code, out, _ = run(capsys, "profile", "--db", db, "--table", "t", "--qi", "zip,sex", "--class", "cls")
    assert "current k (the smallest equivalence class): 1" in out


def test_load_and_dataset(capsys, db, tmp_path, engine):
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1, ?\n")
    code, out, _ = run(capsys, "load", str(path), "--db", db, "--table", "x", "--na", "?", "--json")
    assert code == 0 and json.loads(out)["rows"] == 1
    assert table_rows(engine, "x") == [(1, None)]
    code, out, _ = run(capsys, "dataset", "car", "--db", db)
    assert code == 0 and "1,728 rows into car" in out
    path.write_text("zip;code\n01548;12345678901234567890\n")
    code, out, _ = run(capsys, "load", str(path), "--db", db, "--table", "y", "--delimiter", ";",
                       "--types", "code=text", "--encoding", "latin-1")
    assert code == 0 and "zip (text), code (text)" in out
    assert table_rows(engine, "y") == [("01548", "12345678901234567890")]


BAD = [
    (["check", "--table", "nope", "--qi", "a", "--k", "2"], "table not found: nope"),
    (["check", "--table", "t", "--qi", "zip,nope", "--k", "2"], "unknown column 'nope'"),
    (["kanon", "--table", "empty", "--qi", "a", "--k", "2"], "is empty"),  # check and profile report it
    (["check", "--table", "t", "--qi", "zip", "--k", "0"], "Invalid value for '--k': 0 is not in the range x>=1"),
    (["check", "--table", "t", "--qi", "zip", "--k", "ten"], "'ten' is not a valid integer"),
    (["check", "--table", "t", "--qi", "zip", "--k", "2", "--json", "--show", "-1"], "-1 is not in the range x>=0"),
    (["profile", "--table", "nullcls", "--class", "c"], "class column 'c' has 1 NULL"),
    (["load", "/no/such.csv", "--table", "new"], "CSV file not found"),
    (["load", "pyproject.toml", "--table", "new", "--types", "a=money"], "bad type for 'a'"),
    (["bin", "--table", "t", "--bin", "age=width:2", "--bin", "age=width:3", "--out", "new"], "two --bin specs"),
    (["profile", "--table", "t", "--sensitive", "cls"], "--sensitive needs --qi"),
    (["dataset", "nope"], "'nope' is not one of 'adult', 'adult-test', 'adult-kh', 'car', 'breast-cancer'"),
    (["bin", "--table", "t", "--bin", "age=width:2", "--out", "t"], "would overwrite the source table t"),
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


def test_version_and_help(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("anonsql, version ")
    code, out, _ = run(capsys, "kanon", "--help")
    assert code == 0 and "--emit-sql" in out and "example:" in out


def test_usage_error_is_one_line(capsys):
    code, _, err = run(capsys, "check", "--qi", "a")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("anonsql check: error: Missing option '--db'") and "(see anonsql check --help)" in err
    code, _, err = run(capsys, "nonsense")
    assert code == 2 and "No such command 'nonsense'" in err and len(err.strip().splitlines()) == 1


def _commands(command=None, path=()):
    """(path, command) for every command of the CLI, depth first."""
    import click

    from anonsql.cli import cli

    command = command or cli
    yield path, command
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            yield from _commands(command.get_command(ctx, name), (*path, name))


def test_every_command_help_shows_its_options_and_is_in_the_reference(capsys):
    """--help of every command runs and names each of its options, and docs/cli.md has a section
    for it: a check on content, not on click's layout (which moves between click releases)."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text()
    for path, command in _commands():
        code, out, _ = run(capsys, *path, "--help")
        assert code == 0, path
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("-") and not getattr(param, "hidden", False):
                    assert opt in out, (path, opt)
        assert f"## `{' '.join(('anonsql', *path))}`" in doc, path


def test_docs_cli_reference_is_current():
    """docs/cli.md is rendered from the commands' declarations by anonsql.cli.reference (not by
    click's help formatter, so a newer click cannot make it stale): python -m anonsql.cli.reference."""
    path = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
    assert path.read_text() == reference(), "docs/cli.md is stale: python -m anonsql.cli.reference > docs/cli.md"


@pytest.mark.parametrize("interrupt, message", [
    (BrokenPipeError, "the output was closed early (broken pipe)"),
    (KeyboardInterrupt, "interrupted; an unfinished run is rolled back"),
])
def test_broken_pipe_and_ctrl_c_are_one_line(capsys, monkeypatch, tmp_path, interrupt, message):
    def fail(*_args, **_kwargs):
        raise interrupt()

    monkeypatch.setattr(api, "profile", fail)
    code, _, err = run(capsys, "profile", "--db", str(tmp_path / "x.duckdb"), "--table", "t")
    assert code == 2 and err.strip() == f"anonsql profile: error: {message}"


def test_secrets_are_redacted_in_errors(capsys):
    code, _, err = run(capsys, "check", "--db", "postgresql://u@127.0.0.1:1/db?password=secret123",
                       "--table", "t", "--qi", "a", "--k", "2")
    assert code == 2 and "secret123" not in err and "password=***" in err


def test_report_path_is_checked_before_any_work(capsys, db, small, tmp_path):
    code, _, err = run(capsys, "kanon", "--db", db, "--table", "t", "--qi", "zip", "--class", "cls", "--k", "2",
                       "--report", str(tmp_path / "missing" / "r.json"))
    assert code == 2 and "does not exist" in err and len(err.strip().splitlines()) == 1


def test_every_command_is_listed_under_the_module_that_defines_it():
    """Root.MODULES (which module to import for a command) agrees with the modules' COMMANDS."""
    import importlib

    from anonsql.cli.app import Root

    defined = {c.name: m for m in set(Root.MODULES.values())
               for c in importlib.import_module(f"anonsql.cli.{m}").COMMANDS}
    assert defined == Root.MODULES


@pytest.mark.parametrize("argv", [["kanon", "--help"], ["features", "--help"], ["release", "--help"], ["--help"]])
def test_a_command_imports_only_what_it_uses(argv):
    """A fast start (issue 11): a command's help imports none of pandas, scipy, scikit-learn,
    matplotlib (checked in a fresh interpreter, not by timing). `anonsql --help` lists every
    command, so it loads every CLI module, whose choices (data sets, classifiers, margins,
    the synthetic row limit) are plain constants that load no job."""
    import subprocess
    import sys

    code = ("import contextlib, io, sys\nfrom anonsql.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()): main({argv!r})\n"
            "print(','.join(sorted(m for m in ('pandas', 'scipy', 'sklearn', 'matplotlib', 'highspy', 'pyspark')"
            " if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_help_without_the_tables_extra_and_one_line_where_tables_are_used(tmp_path):
    """Without scipy (the `tables` extra) `anonsql --help` still lists every command, and the
    tables command says which extra to install in one line, exit 2."""
    import subprocess
    import sys

    code = ("import contextlib, io, sys\nsys.modules['scipy'] = sys.modules['scipy.sparse'] = None\n"
            "from anonsql.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out: main(['--help'])\n"
            "print('tables' in out.getvalue())\n"
            f"sys.exit(main(['tables', '--db', {str(tmp_path / 't.duckdb')!r}, '--table', 't', '--dims', 'a', "
            "'--out', 'o']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "True"
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "anonsql tables: error: safe aggregate tables need scipy and highspy: pip install 'anonsql[tables]'"]


def test_a_kanon_run_on_duckdb_imports_neither_pandas_nor_arrow(tmp_path):
    """A fast start (issue 11) for a whole run: counts come back as numpy columns and the decisions
    go in as numpy columns (Engine.fetch_columns / insert_rows), so the CLI never pays pandas'
    or pyarrow's import, nor sqlglot's Spark dialect, which only a Spark engine generates
    (checked in a fresh interpreter, not by timing)."""
    import subprocess
    import sys

    import duckdb

    db = str(tmp_path / "t.duckdb")
    with duckdb.connect(db) as con:
        con.execute("CREATE TABLE t AS SELECT i % 7 AS a, i % 3 AS b, IF(i % 2 = 0, 'x', 'y') AS c "
                    "FROM range(200) r(i)")
    argv = ["kanon", "--db", db, "--table", "t", "--qi", "a,b", "--class", "c", "--k", "5", "--changes", "ch",
            "--json"]
    code = ("import contextlib, io, json, sys\nfrom anonsql.cli import main\nout = io.StringIO()\n"
            f"with contextlib.redirect_stdout(out): code = main({argv!r})\n"
            "print(code, json.loads(out.getvalue())['ok'], ','.join(sorted(m for m in ('pandas', 'pyarrow', 'scipy', "
            "'sklearn', 'matplotlib', 'sqlglot.dialects.spark') if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["0", "True"]


def test_load_and_check_leave_no_name_or_path_in_the_users_cache_or_home(tmp_path):
    """anonsql writes nothing beyond the databases and files a user names (issue 31: a rendered-SQL
    cache once kept table names, column names and CSV paths under ~/.cache): after `load` and
    `check` on a table whose names are themselves sensitive, no file under the user's home or
    cache directory spells the table, a column or the CSV's path."""
    import os
    import subprocess
    import sys

    home, cache, work = tmp_path / "home", tmp_path / "xdg-cache", tmp_path / "work"
    for folder in (home, cache, work):
        folder.mkdir()
    csv = work / "secret_patients.csv"
    csv.write_text("patient_zip,diagnosis_hiv_status\n" + "".join(f"{i % 3},{'yes' if i % 2 else 'no'}\n"
                                                                  for i in range(30)))
    db = str(work / "clinic.duckdb")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANONSQL_")} | {
        "HOME": str(home), "XDG_CACHE_HOME": str(cache)}
    script = "from anonsql.cli import run\nrun()\n"
    for argv in (["load", str(csv), "--db", db, "--table", "secret_patients"],
                 ["check", "--db", db, "--table", "secret_patients", "--qi", "patient_zip,diagnosis_hiv_status",
                  "--k", "2"]):
        done = subprocess.run([sys.executable, "-c", script, *argv], env=env, cwd=work, capture_output=True,
                              text=True)
        assert done.returncode == 0, done.stderr
    secrets = [b"secret_patients", b"diagnosis_hiv_status", b"patient_zip", str(csv).encode()]
    for folder in (home, cache):
        for path in folder.rglob("*"):
            if path.is_file():
                held = path.read_bytes()
                assert not any(s in held for s in secrets), path


def test_console_script_exits_as_python_does_flushing_output_and_joining_threads(tmp_path):
    """The console script (`anonsql.cli:run`) ends through sys.exit, so the interpreter's usual
    shutdown runs (issue 31): the whole JSON on stdout, the exit code of `main`, the atexit
    handlers, a still running non-daemon thread joined, and a stderr line that arrives."""
    import subprocess
    import sys

    import duckdb

    db = str(tmp_path / "t.duckdb")
    with duckdb.connect(db) as con:
        con.execute("CREATE TABLE t AS SELECT i % 7 AS a, i % 3 AS b, IF(i % 2 = 0, 'x', 'y') AS c "
                    "FROM range(200) r(i)")
    marker = tmp_path / "atexit_ran"
    joined = tmp_path / "thread_joined"
    code = ("import atexit, sys, threading, time\nfrom anonsql.cli import run\n"
            f"atexit.register(lambda: open({str(marker)!r}, 'w').write('yes'))\n"
            f"threading.Thread(target=lambda: (time.sleep(0.5), open({str(joined)!r}, 'w').write('yes'))).start()\n"
            "run()\n")
    ok = subprocess.run([sys.executable, "-c", code, "kanon", "--db", db, "--table", "t", "--qi", "a,b", "--class",
                         "c", "--k", "5", "--json"], capture_output=True, text=True)
    assert ok.returncode == 0
    assert json.loads(ok.stdout)["ok"] is True
    assert ok.stderr.splitlines()[-1].startswith("verify: k-anonymous")
    assert marker.read_text() == "yes" and joined.read_text() == "yes"
    marker.unlink()
    bad = subprocess.run([sys.executable, "-c", code, "kanon", "--db", db, "--table", "nope", "--qi", "a", "--class",
                          "c", "--k", "5"], capture_output=True, text=True)
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr.splitlines() == ["anonsql kanon: error: table not found: nope"]
    assert marker.read_text() == "yes"
    closed = subprocess.Popen([sys.executable, "-c", code, "kanon", "--db", db, "--table", "t", "--qi", "a,b",
                               "--class", "c", "--k", "5", "--out", "o2", "--json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    closed.stdout.close()  # the reader leaves before the JSON is written
    assert closed.wait() == 2
    assert closed.stderr.read().splitlines()[-1] == "anonsql kanon: error: the output was closed early (broken pipe)"
