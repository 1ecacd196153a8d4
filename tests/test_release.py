"""Releases declared in one TOML file: spec errors name the line, plan changes nothing, run is all
or nothing (a failed gate or check leaves every table as it was), the artefacts, reproducibility,
and `release verify` noticing a changed input. The example spec runs on both engines."""

from __future__ import annotations

import builtins
import json
import shutil
from pathlib import Path

import pytest

import anonsql
from anonsql import api
from anonsql.catalog import find_table, get_table
from anonsql.cli import main
from anonsql.errors import AnonsqlError, VerificationError
from anonsql.release import html
from anonsql.release import spec as spec_mod
from tests.conftest import table_rows

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "release" / "adult.toml"


def _adult_with_id(engine) -> None:
    """The bundled Adult plus `id`, the row's rank over all its values (Adult has no key)."""
    api.load_dataset(engine, "adult", "adult_raw")
    cols = ", ".join(f'"{c}"' for c in get_table(engine, "adult_raw").column_names)
    engine.execute(f"CREATE TABLE adult AS SELECT ROW_NUMBER() OVER (ORDER BY {cols}) AS id, {cols} FROM adult_raw")


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    """The command line in-process: exit code, stdout, stderr."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _figures(manifest: dict) -> dict:
    """The manifest without its timings (the only figures allowed to differ between runs) and the
    private script's hash (a --replace run's script also drops the tables it replaces)."""
    artefacts = {k: v for k, v in manifest["artefacts"].items() if k != "private/release.sql"}
    return {**{k: v for k, v in manifest.items() if k != "seconds"}, "artefacts": artefacts}


@pytest.mark.slow
def test_example_release_plan_run_verify(engine, db, tmp_path, capsys):
    _adult_with_id(engine)
    spec = tmp_path / "adult.toml"
    shutil.copy(EXAMPLE, spec)
    plan = anonsql.release_plan(spec, engine)
    assert [s.kind for s in plan.steps] == ["bin", "kanon", "nbc", "tables"]
    assert plan.gate_tables == ["adult_k10"] and plan.baseline == "adult" and not plan.existing_outputs
    assert plan.error_baselines == {"adult_k10": "adult_binned"}  # the classifiers compare within the binned domain
    assert plan.working == ["adult_binned"] and plan.private == ["adult_sex_race_private_audit"]
    assert find_table(engine, "adult_k10") is None  # plan changes nothing

    report = anonsql.release_run(spec, engine)
    assert report.ok and {c.name for c in report.checks} >= {"gate: 10-anonymity of adult_k10"}
    out = tmp_path / "adult.release"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["input"]["rows"] == 32_560 and manifest["seeds"] == {"step 2 (kanon)": 0}
    assert manifest["anonsql"] == anonsql.__version__ and len(manifest["spec"]["sha256"]) == 64
    assert all(g["passed"] and g["query"].startswith("sql/") and g["sql"] for g in manifest["gates"])
    assert set(manifest["outputs"]) == {"adult_k10", "adult_nbc_class", "adult_nbc_attr",
                                        "adult_sex_race", "adult_sex_race_private_audit"}
    assert find_table(engine, "adult_binned") is None  # the working table was dropped
    assert manifest["figures"]["after"]["class_sizes"][0][0] >= 10
    script = (out / "private" / "release.sql").read_text()
    assert script.count("BEGIN;") == 1 and script.count("COMMIT;") == 1 and "-- ===== step 4: tables" in script
    bin_part = script[script.index("-- ===== step 1"):script.index("-- ===== step 2")]
    assert "CREATE TABLE" in bin_part and "[10,20)" not in bin_part  # width bins: a formula, no cut points
    page = (out / "report.html").read_text()
    assert "data:image/png;base64," in page and 'class="gates"' in page and "adult_sex_race" in page

    verified = anonsql.release_verify(spec, engine)
    assert verified.ok and not verified.changed
    assert any(n.startswith("step 3 (nbc): no standalone re-check (its input adult_binned was a working table")
               for n in verified.notes)
    assert any(c.name.startswith("adult_k10: keeps 10-anonymity over") for c in verified.checks)

    # reproducible: the same spec on the same input gives the same tables and manifest figures
    first = {t: table_rows(engine, t) for t in manifest["outputs"]}
    again = anonsql.release_run(spec, engine, replace=True)
    assert again.ok
    assert {t: table_rows(engine, t) for t in manifest["outputs"]} == first
    assert _figures(json.loads((out / "manifest.json").read_text())) == _figures(manifest)

    # new input: verify says the fingerprint changed (exit 1 on the command line)
    engine.execute("UPDATE adult SET hours_per_week = hours_per_week + 1 WHERE id = 1")
    code, out, _ = _cli(capsys, "release", "verify", str(spec), "--db", db, "--quiet")
    assert code == 1, out
    assert "input fingerprint matches the manifest FAILS, CHANGED" in out and "CHANGED since the release: adult" in out


SMALL = """
[source]
table = "people"
key = "id"
qi = ["zip", "age"]
class = "disease"

[[steps]]
kind = "drop"
columns = ["name"]
out = "people_noname"

[[steps]]
kind = "kanon"
k = 2
out = "people_k2"

[gates]
k = 2
folds = 2
{gate}

[outputs]
dir = "out"
"""


@pytest.fixture
def people(make_table):
    make_table("people", {"id": [1, 2, 3, 4, 5, 6], "name": list("abcdef"),
                          "zip": ["100", "100", "100", "200", "200", "300"],
                          "age": ["20", "20", "30", "30", "30", "40"],
                          "disease": ["flu", "cold", "flu", "flu", "cold", "flu"]})


def _spec(tmp_path: Path, gate: str = "") -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL.replace("{gate}", gate))
    return path


def _tables(engine) -> list[str]:
    return sorted(r[0] for r in engine.fetch_all("SELECT table_name FROM information_schema.tables "
                                                   "WHERE table_schema = current_schema()"))


def test_small_release_drops_identifiers(engine, people, tmp_path):
    report = anonsql.release_run(_spec(tmp_path), engine)
    assert report.ok
    assert "name" not in get_table(engine, "people_k2").column_names
    script = (tmp_path / "out" / "private" / "release.sql").read_text()
    assert "CREATE TABLE" in script[script.index("-- ===== step 1"):script.index("-- ===== step 2")]
    assert (tmp_path / "out" / "manifest.json").exists()


def test_failed_gate_changes_nothing(engine, people, tmp_path):
    before = _tables(engine)
    with pytest.raises(VerificationError, match="l_diversity|2-diversity of disease"):
        anonsql.release_run(_spec(tmp_path, "l_diversity = {disease = 2}\nmax_risk = 0.01"), engine)
    assert _tables(engine) == before  # neither people_noname nor people_k2 survived
    assert table_rows(engine, "people")[0][:2] == (1, "a")
    assert not (tmp_path / "out").exists()  # not even an empty release folder


def test_failed_step_check_rolls_back_everything(engine, db, people, tmp_path, monkeypatch, capsys):
    from anonsql.kanon import verify as kanon_verify

    real = kanon_verify.suppression

    def broken(engine, report, *args, **kwargs):
        result = real(engine, report, *args, **kwargs)
        report.check("k-anonymity", False, "common/violations_summary", "injected")
        return result

    monkeypatch.setattr(kanon_verify, "suppression", broken)
    before = _tables(engine)
    code, out, err = _cli(capsys, "release", "run", str(_spec(tmp_path)), "--db", db, "--quiet")
    assert code == 2 and not out
    assert err.count("\n") == 1 and err.startswith("anonsql release run: error:"), err
    assert _tables(engine) == before


def test_existing_outputs_need_replace(engine, people, tmp_path):
    spec = _spec(tmp_path)
    anonsql.release_run(spec, engine)
    with pytest.raises(AnonsqlError, match="already exist: people_k2 .*--replace"):  # people_noname: dropped
        anonsql.release_run(spec, engine)


# --- the spec: one clear error naming the line --------------------------------------------------

def _error(text: str, tmp_path: Path) -> str:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(AnonsqlError) as info:
        spec_mod.load(path)
    return str(info.value)


def test_spec_unknown_key_names_its_line(tmp_path):
    text = SMALL.replace("{gate}", "").replace("k = 2\nout = \"people_k2\"", "k = 2\nkk = 3\nout = \"people_k2\"")
    message = _error(text, tmp_path)
    line = text.splitlines().index("kk = 3") + 1
    assert message.startswith(f"{tmp_path / 'bad.toml'}:{line}: unknown key 'kk' in step 2 (kanon); known:")


def test_spec_wrong_type_names_its_line(tmp_path):
    text = SMALL.replace("{gate}", "max_risk = \"low\"")
    line = text.splitlines().index('max_risk = "low"') + 1
    assert f":{line}: [gates] max_risk must be a number, got 'low'" in _error(text, tmp_path)


@pytest.mark.parametrize("change, expected", [
    (("kind = \"drop\"", "kind = \"shred\""), "kind must be one of drop, bin, kanon"),
    (("[outputs]", "[output]"), "unknown section [output]"),
    (("k = 2\nout", "k = 2\ninput = \"nowhere\"\nout"), "input 'nowhere' is neither 'source' nor"),
    (("out = \"people_k2\"", "out = \"people_noname\""), "output 'people_noname' is written by two steps"),
    (("[gates]", "[gates\n"), "not valid TOML"),
    (("dir = \"out\"", "dir = \"out\"\nscript = \"../leak.sql\""), "[outputs] script must be a plain file name"),
    (("dir = \"out\"", "dir = \"out\"\nreport = \"manifest.json\""), "report must be a plain file name of its own"),
])
def test_spec_errors(tmp_path, change, expected):
    assert expected in _error(SMALL.replace("{gate}", "").replace(*change), tmp_path)


def _line(text: str, wanted: str) -> int:
    return text.splitlines().index(wanted) + 1


def test_spec_errors_always_name_file_and_line(tmp_path):
    """Every spec error starts `file:line:` (issue 36): a syntax error at tomllib's line, a missing
    section or step at line 1 (the file as a whole)."""
    text = SMALL.replace("{gate}", "").replace("[gates]", "[gates\n")
    assert _error(text, tmp_path).startswith(f"{tmp_path / 'bad.toml'}:{_line(text, '[gates')}: not valid TOML: ")
    assert _error('[source]\ntable = "t"\n', tmp_path).startswith(f"{tmp_path / 'bad.toml'}:1: no [[steps]]")


def test_protect_rows_are_keys_in_a_stewards_words(tmp_path):
    """rows are the protected rows' key values: the spec said they 'must be a list of column
    names' (issue 36), and never echoes them (they name confidential rows)."""
    step = '[[steps]]\nkind = "protect"\ntarget = "disease"\nrows = {bad}\nout = "p"\n'
    text = SMALL.replace("{gate}", "").replace("[gates]", step.format(bad="[[5600001]]") + "\n[gates]")
    message = _error(text, tmp_path)
    assert message.startswith(f"{tmp_path / 'bad.toml'}:{_line(text, 'rows = [[5600001]]')}: step 3 (protect) rows "
                              "must be the key values of the rows to protect (the key column's values, not column "
                              "names), e.g. rows = [2, 7]"), message
    assert "5600001" not in message and "column names (or" not in message
    good = SMALL.replace("{gate}", "").replace("[gates]", step.format(bad="[2, 7]") + "\n[gates]")
    (tmp_path / "good.toml").write_text(good)
    assert spec_mod.load(tmp_path / "good.toml").steps[2].options["rows"] == ["2", "7"]


@pytest.mark.parametrize("section, line, column", [
    ("[source]", 'qi = ["zip", "age"]', "zipp"), ("[source]", 'class = "disease"', "diseas"),
    ("[source]", 'key = "id"', "idd"),
])
def test_an_unknown_column_in_source_names_file_and_line(engine, db, people, tmp_path, capsys, section, line,
                                                         column):
    """A bad column in [source] named neither file nor line (issue 36): now one error line,
    `file:line: unknown column ... its columns: ...`, exit 2, nothing changed."""
    bad = line.replace(line.split('"')[1], column)
    text = SMALL.replace("{gate}", "").replace(line, bad)
    path = tmp_path / "bad.toml"
    path.write_text(text)
    before = _tables(engine)
    for command in ("plan", "run"):
        code, out, err = _cli(capsys, "release", command, str(path), "--db", db, "--quiet")
        assert code == 2 and err.count("\n") == 1, err
        assert f"error: {path}:{_line(text, bad)}: unknown column '{column}' in table " in err and "its columns:" in err
    assert _tables(engine) == before


def test_a_failing_step_names_its_entry(engine, db, people, tmp_path, capsys):
    """A step's bad option found against the database (a bin of a missing column) names the line
    of its [[steps]] entry."""
    text = SMALL.replace("{gate}", "").replace('kind = "drop"\ncolumns = ["name"]',
                                               'kind = "bin"\ncolumns = {weight = "width:10"}')
    path = tmp_path / "bad.toml"
    path.write_text(text)
    code, _, err = _cli(capsys, "release", "run", str(path), "--db", db, "--quiet")
    assert code == 2 and f"error: {path}:{_line(text, '[[steps]]')}: unknown column 'weight'" in err, err
    assert _tables(engine) == ["people"]


def test_page_without_matplotlib_says_so(engine, people, tmp_path, monkeypatch):
    report = anonsql.release_run(_spec(tmp_path, "max_suppressed = 1"), engine)
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    page = html.page(report, spec_mod.load(_spec(tmp_path, "max_suppressed = 1")))
    assert "Plots need matplotlib" in page and "<img" not in page
    assert "suppressed share of QI cells" in page and page.count("<table") >= 4
    assert all(f"<dt>{name}</dt>" in page for name in html.DEFINITIONS)


def test_cli_plan(engine, db, people, tmp_path, capsys):
    code, out, _ = _cli(capsys, "release", "plan", str(_spec(tmp_path)), "--db", db)
    assert code == 0, out
    assert "2. kanon people_noname -> people_k2" in out and "nothing was changed" in out
    assert find_table(engine, "people_k2") is None
