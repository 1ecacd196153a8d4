"""The options every command shares (anonsql.cli.options.shared), walked over click's command tree,
and their effect on commands that used to refuse them (issue 36)."""

import json

import click
import pytest

from anonsql import catalog
from anonsql.cli import options

from .conftest import table_rows
from .test_cli import _commands, run
from .test_profile import SMALL

#: Commands that only read: the shared options (--json, --quiet, --report) and no more.
READ_ONLY = {("profile",), ("check",), ("ac",), ("evaluate",), ("nbc", "views"), ("nbc", "check"),
             ("nbc", "verify"), ("nbc", "breach"), ("taxonomy", "show"), ("hierarchy", "show"),
             ("tables", "audit"), ("tables", "ptable"),
             ("release", "plan"), ("dbt", "export"),
             ("dbt", "build"),  # dbt writes the models; anonsql takes the shared options, dbt's own arguments
             ("release", "verify"), ("cleanup",), ("show",), ("sql",), ("risk",),
             ("attack", "linkage"), ("attack", "difference"), ("attack", "refine")}
#: Commands that bring tables in from outside (a file, a bundled data set, a spec's own script): --replace.
LOADERS = {("load",), ("dataset",), ("taxonomy", "load"), ("release", "run")}
#: Commands that rewrite a table into a new one: --emit-sql, --dry-run and --replace too.
WRITING = {("bin",), ("kanon",), ("protect",), ("tables",), ("binarize",), ("features",), ("nbc", "publish")}


def _runnable():
    """(path, command) of every command that runs (a group runs when it has a callback of its own)."""
    for path, command in _commands():
        if path and (not isinstance(command, click.Group) or command.invoke_without_command):
            yield path, command


def test_every_command_takes_the_shared_options_and_every_writer_the_writing_ones():
    seen = set()
    for path, command in _runnable():
        seen.add(path)
        names = {p.name for p in command.params}
        assert len(names) == len(command.params), (path, "an option declared twice (e.g. --quiet by common() and "
                                                         "again by hand)")
        assert set(options.SHARED) <= names, (path, set(options.SHARED) - names)
        assert sum(path in kind for kind in (READ_ONLY, LOADERS, WRITING)) == 1, \
            f"classify {' '.join(path)} as read-only, loader or writing in this test"
        if path in WRITING:
            assert set(options.WRITING) <= names, (path, set(options.WRITING) - names)
        if path in LOADERS:
            assert "replace" in names, path
    assert seen >= WRITING | LOADERS, (WRITING | LOADERS) - seen


@pytest.fixture
def small(make_table):
    make_table("t", SMALL)


def test_read_only_commands_take_quiet_and_report(capsys, db, small, tmp_path):
    """check, profile and taxonomy show refused --quiet before (No such option)."""
    report = tmp_path / "r.json"
    code, out, err = run(capsys, "check", "--db", db, "--table", "t", "--qi", "sex", "--k", "1", "--quiet",
                         "--report", str(report))
    assert code == 0, err
    assert json.loads(report.read_text())["k"] >= 1 and out
    code, out, err = run(capsys, "profile", "--db", db, "--table", "t", "--quiet", "--json")
    assert code == 0 and json.loads(out)["rows"] == len(SMALL["sex"]), err


def test_bin_emit_sql_and_dry_run(capsys, db, small, engine, tmp_path):
    """bin writes a table: --emit-sql writes its script, --dry-run changes nothing; the script,
    run as written, gives the table the command gives."""
    script = tmp_path / "bin.sql"
    code, _, err = run(capsys, "bin", "--db", db, "--table", "t", "--bin", "age=width:10", "--out", "binned",
                       "--emit-sql", str(script), "--dry-run", "--quiet")
    assert code == 0, err
    assert catalog.find_table(engine, "binned") is None
    text = script.read_text()
    assert 'CREATE TABLE "binned"' in text and "n must be" in text
    code, _, err = run(capsys, "bin", "--db", db, "--table", "t", "--bin", "age=width:10", "--out", "binned")
    assert code == 0, err
    made = table_rows(engine, "binned")
    engine.execute('DROP TABLE "binned"')
    body = text.split("-- Verification")[0]
    for statement in (s.strip() for s in body.split(";")):
        if statement and not all(line.startswith("--") or not line.strip() for line in statement.splitlines()):
            engine.execute(statement)
    assert table_rows(engine, "binned") == made


def test_dry_run_of_bin_needs_emit_sql(capsys, db, small, engine):
    code, _, err = run(capsys, "bin", "--db", db, "--table", "t", "--bin", "age=width:10", "--out", "binned",
                       "--dry-run")
    assert code == 2 and "--dry-run needs --emit-sql" in err and len(err.strip().splitlines()) == 1
    assert catalog.find_table(engine, "binned") is None


def test_the_quick_starts_kanon_warns_about_id_once(capsys, db, make_table):
    """One warning per finding, in one place: the summary in text mode (it was also on stderr);
    stderr with --json, where the summary is data."""
    make_table("t", {"id": list(range(12)), "zip": ["1", "2"] * 6, "sex": ["F", "M", "M"] * 4,
                     "cls": ["a", "b", "b", "a"] * 3})
    base = ["kanon", "--db", db, "--table", "t", "--qi", "zip,sex", "--class", "cls", "--k", "2", "--out", "t2"]
    code, out, err = run(capsys, *base)
    assert code == 0 and (out + err).count("column 'id' is unique") == 1 and "WARNING: column 'id'" in out
    code, out, err = run(capsys, *base, "--replace", "--json")
    assert code == 0 and err.count("WARNING: column 'id' is unique") == 1
    assert json.loads(out)["warnings"][0].startswith("column 'id' is unique")


def test_kanons_binning_advice_is_said_once(capsys, db, make_table, monkeypatch):
    """The near-unique quasi-identifier's advice is a note of the summary; stderr no longer repeats it."""
    from anonsql.kanon import stats

    monkeypatch.setattr(stats, "MANY_VALUES", 3)
    make_table("t", {"age": [20, 21, 22, 23, 24, 25] * 2, "sex": ["F", "M"] * 6, "cls": ["a", "b", "b"] * 4})
    code, out, err = run(capsys, "kanon", "--db", db, "--table", "t", "--qi", "age,sex", "--class", "cls", "--k", "2",
                         "--out", "t2")
    assert code == 0 and (out + err).count("quasi-identifier 'age' has 6 distinct values") == 1
    assert "note: quasi-identifier 'age'" in out
