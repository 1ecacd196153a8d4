"""The bad-input matrix (issue 18): for every command family, bad input exits 2 with exactly one
error line on stderr (the last line; progress lines of a run that got going may precede it), no
traceback, and leaves every table of the database as it was."""

from __future__ import annotations

import json
import os

import pytest

from anonsql import catalog
from anonsql.cli import main
from anonsql.engine import connect

from .conftest import table_rows

T = ["--table", "t"]
KANON = ["kanon", *T, "--qi", "zip,sex", "--class", "cls", "--k", "2"]
PROTECT = ["protect", *T, "--key", "id", "--target", "cls", "--rows", "1"]
NBC = ["--class", "cls", "--attrs", "zip,sex"]


def _files(tmp_path):
    bad_bytes = tmp_path / "latin1.csv"
    bad_bytes.write_bytes(b"id,column\n\xff\xfe,cls\n")
    deep = tmp_path / "deep.json"
    deep.write_text("{" * 5000 + "}" * 5000)
    spec_types = tmp_path / "spec.toml"
    spec_types.write_text('[[binary]]\nname = 1\ncolumn = ["zip"]\nequals = {a = 1}\n')
    spec_nan = tmp_path / "nan.toml"
    spec_nan.write_text('[[binary]]\nname = "x"\ncolumn = "id"\nlower = nan\nupper = 3\n')
    return {"latin1": str(bad_bytes), "deep": str(deep), "spec_types": str(spec_types), "spec_nan": str(spec_nan),
            "nodir": str(tmp_path / "missing" / "r.json"), "dir": str(tmp_path)}


CASES = {
    # family: list of (case id, argv after the command's --db)
    "check": [
        ("missing table", ["check", "--table", "nope", "--qi", "zip", "--k", "2"]),
        ("unknown column", ["check", *T, "--qi", "zip,nope", "--k", "2"]),
        ("k zero", ["check", *T, "--qi", "zip", "--k", "0"]),
        ("duplicate column", ["check", *T, "--qi", "zip,zip", "--k", "2"]),
        ("show negative", ["check", *T, "--qi", "zip", "--k", "2", "--show", "-1"]),
        ("k not a number", ["check", *T, "--qi", "zip", "--k", "two"]),
    ],
    "profile": [("class with NULL", ["profile", "--table", "nullcls", "--class", "c"])],
    "bin": [("not numeric", ["bin", *T, "--bin", "zip=width:2", "--out", "b"]),
            ("bad spec", ["bin", *T, "--bin", "id=width:0", "--out", "b"]),
            ("over the source", ["bin", *T, "--bin", "id=width:2", "--out", "t"])],
    "kanon": [
        ("k larger than the table", [*KANON[:-1], "100"]),
        ("negative seed", [*KANON, "--seed", "-1"]),
        ("unknown cost", [*KANON, "--cost", "nope"]),
        ("alpha zero", [*KANON, "--alpha", "0"]),
        ("class is a QI", ["kanon", *T, "--qi", "zip,cls", "--class", "cls", "--k", "2"]),
        ("out over the source", [*KANON, "--out", "t"]),
        ("out and in place", [*KANON, "--out", "x", "--in-place"]),
        ("report folder missing", [*KANON, "--report", "{nodir}"]),
        ("emit-sql is a folder", [*KANON, "--emit-sql", "{dir}"]),
        ("dry run without script", [*KANON, "--dry-run"]),
        ("empty QI list", ["kanon", *T, "--qi", "", "--class", "cls", "--k", "2"]),
        ("unknown class column", ["kanon", *T, "--qi", "zip", "--class", "nope", "--k", "2"]),
    ],
    "evaluate": [("unknown classifier", ["evaluate", "--original", "t", "--anonymized", "t", "--qi", "zip",
                                         "--class", "cls", "--classifiers", "svm"]),
                 ("folds one", ["evaluate", "--original", "t", "--anonymized", "t", "--qi", "zip", "--class", "cls",
                                "--folds", "1"])],
    "nbc": [
        ("rho not above 1", ["nbc", "check", *T, *NBC, "--rho", "1"]),
        ("rho text", ["nbc", "publish", *T, *NBC, "--rho", "abc", "--out", "p"]),
        ("duplicated class in prior", ["nbc", "publish", *T, *NBC, "--prior", "y=1,y=7", "--r", "2", "--out", "p"]),
        ("verify missing published", ["nbc", "verify", *T, *NBC, "--published", "nope"]),
        ("views unknown attribute", ["nbc", "views", *T, "--class", "cls", "--attrs", "zip,nope"]),
    ],
    "protect": [
        ("unknown method", [*PROTECT, "--method", "nope"]),
        ("negative seed", [*PROTECT, "--seed", "-1"]),
        ("unknown key value", ["protect", *T, "--key", "id", "--target", "cls", "--rows", "999"]),
        ("cells not UTF-8", ["protect", *T, "--key", "id", "--cells", "{latin1}"]),
        ("report folder missing", [*PROTECT, "--report", "{nodir}"]),
        ("empty rows", ["protect", *T, "--key", "id", "--target", "cls", "--rows", ""]),
    ],
    "taxonomy": [("nested too deep", ["taxonomy", "load", "--name", "x", "--file", "{deep}"]),
                 ("not UTF-8", ["taxonomy", "load", "--name", "x", "--file", "{latin1}"])],
    "features": [
        ("not binary", ["features", *T, "--class", "cls", "--k", "2"]),
        ("unknown method", ["features", *T, "--class", "cls", "--k", "2", "--method", "nope"]),
        ("spec of wrong types", ["binarize", *T, "--spec", "{spec_types}", "--out", "b"]),
        ("spec with NaN bound", ["binarize", *T, "--spec", "{spec_nan}", "--out", "b"]),
        ("spec not UTF-8", ["binarize", *T, "--spec", "{latin1}", "--out", "b"]),
    ],
}

MATRIX = [pytest.param(argv, id=f"{family}: {case}") for family, cases in CASES.items() for case, argv in cases]


@pytest.fixture
def tables(make_table, engine):
    make_table("t", {"id": [1, 2, 3, 4, 5, 6], "zip": ["a", "a", "b", "b", "c", None],
                     "sex": ["m", "f", "m", "f", "m", "m"], "cls": ["y", "n", "y", "n", "y", "y"]})
    make_table("nullcls", {"a": [1, 2], "c": ["x", None]})


def _snapshot(engine) -> dict[str, list]:
    """Every table of the test database and its rows: compared before and after."""
    names = [r[0] for r in engine.fetch_all(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1")]
    return {n: table_rows(engine, json.dumps(n)) for n in names}


@pytest.mark.parametrize("argv", MATRIX)
def test_bad_input_exits_2_with_one_line_and_changes_nothing(capsys, db, engine, tables, tmp_path, argv):
    files = _files(tmp_path)
    argv = [a.format(**files) for a in argv]
    before = _snapshot(engine)
    code = main([*argv[:1], "--db", db, *argv[1:]] if argv[0] not in ("nbc", "taxonomy")
                else [*argv[:2], "--db", db, *argv[2:]])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    errors = [line for line in lines if ": error: " in line]
    assert len(errors) == 1 and lines[-1] == errors[0] and lines[-1].startswith("anonsql "), err
    assert "Traceback" not in err and "--quiet" not in argv, err  # any earlier lines are progress
    assert _snapshot(engine) == before
    assert catalog.find_table(engine, "b") is None and catalog.find_table(engine, "p_class") is None


@pytest.mark.parametrize("call", ["kanon", "protect", "features", "binarize", "nbc"])
def test_api_checks_the_script_path_before_any_work(db, engine, tables, tmp_path, call):
    """A bad --emit-sql path fails up front through the API too, not after the commit."""
    import anonsql

    spec = tmp_path / "spec.toml"
    spec.write_text('[[binary]]\nname = "a"\ncolumn = "zip"\nequals = "a"\n')
    bad = str(tmp_path / "missing" / "s.sql")
    runs = {
        "kanon": lambda: anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, emit_sql=bad),
        "protect": lambda: anonsql.protect_table(db, "t", "id", target="cls", rows="1", emit_sql=bad),
        "features": lambda: anonsql.select_features(db, "t", "cls", 2, emit_sql=bad),
        "binarize": lambda: anonsql.binarize(db, "t", str(spec), "b", emit_sql=bad),
        "nbc": lambda: anonsql.nbc_publish(db, "t", "cls", "zip,sex", 2, "p", emit_sql=bad),
    }
    before = _snapshot(engine)
    with pytest.raises(anonsql.AnonsqlError, match="does not exist"):
        runs[call]()
    assert _snapshot(engine) == before


NOSHOW = "PatientId,Gender,Age,No-show\n29872499824296,F,62,No\n558997776694438,M,56,No\n"


@pytest.mark.parametrize("argv", [KANON, ["check", *T, "--qi", "zip", "--k", "2"], PROTECT,
                                  ["load", "{csv}", "--table", "t"]], ids=["kanon", "check", "protect", "load"])
def test_db_that_is_not_a_duckdb_database_exits_2_and_creates_nothing(tmp_path, capsys, argv):
    """Issue 29: DuckDB opened a CSV given as --db as an empty in-memory database, and a run's
    output vanished after a success; now one line says what the file is and how to load it."""
    csv = tmp_path / "noshow.csv"
    csv.write_text(NOSHOW)
    argv = [a.format(csv=csv) for a in argv]
    code = main([argv[0], "--db", str(csv), *argv[1:], *(["--out", "z"] if argv[0] == "kanon" else [])])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.strip().splitlines() == [f"anonsql {argv[0]}: error: {csv} is not a DuckDB database; load it with "
                                        f"`anonsql load {csv} --db <file>.duckdb --table <name>`"]
    assert os.listdir(tmp_path) == ["noshow.csv"] and csv.read_text() == NOSHOW


def test_a_missing_database_file_is_created_only_by_load(tmp_path, capsys):
    csv, db = tmp_path / "noshow.csv", tmp_path / "noshow.duckdb"
    csv.write_text(NOSHOW)
    assert main(["kanon", "--db", str(db), "--table", "t", "--qi", "Gender", "--k", "2", "--out", "z"]) == 2
    _, err = capsys.readouterr()
    assert err.strip().splitlines() == [f"anonsql kanon: error: DuckDB database file not found: {db} (only "
                                        "`anonsql load` and `anonsql dataset` create one)"]
    assert not db.exists()
    assert main(["load", str(csv), "--db", str(db), "--table", "t"]) == 0
    assert db.exists()
    assert main(["kanon", "--db", str(db), "--table", "t", "--qi", "Gender", "--k", "2", "--out", "z", "--quiet"]) == 0
    engine = connect(str(db))
    try:
        assert table_rows(engine, "z") == [(29872499824296, None, 62, "No"), (558997776694438, None, 56, "No")]
    finally:
        engine.close()
