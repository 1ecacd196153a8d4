"""A release's gates and publication, on the shape of the "medical appointment no-show" data (a
synthetic, seeded stand-in: a PatientId with repeats, sensitive flags, a few QIs): the gates
compare the source with every published row-level table, only declared tables are published
(working tables are dropped, private ones kept apart), and each row-level step keeps the
guarantees the earlier steps established, or the whole release rolls back naming the step."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import anonsql
from anonsql import api
from anonsql.catalog import find_table, get_table
from anonsql.cli import main
from anonsql.data.loading import write_frame
from anonsql.errors import AnonsqlError, VerificationError
from anonsql.release import guarantees
from anonsql.release import spec as spec_mod
from anonsql.report import Report
from tests.conftest import table_rows
from tests.test_release import _error

QI = ["Gender", "Age", "Neighbourhood"]


def _noshow(n: int = 1200, seed: int = 7) -> pd.DataFrame:
    """Appointments: AppointmentID unique; PatientId repeats (93% distinct: patients with several
    appointments); Gender, Age, Neighbourhood the QIs; Hipertension, Diabetes, ... sensitive flags."""
    rng = np.random.default_rng(seed)
    patients = rng.integers(10**13, 10**14, size=int(n * 0.93))
    ids = np.concatenate([patients, rng.choice(patients, n - len(patients), replace=False)])
    rng.shuffle(ids)
    return pd.DataFrame({
        "AppointmentID": np.arange(5_600_000, 5_600_000 + n), "PatientId": ids,
        "Gender": rng.choice(["F", "M"], n, p=[0.65, 0.35]), "Age": rng.integers(0, 96, n),
        "Neighbourhood": rng.choice([f"BAIRRO {i:02d}" for i in range(40)], n),
        "Scholarship": rng.integers(0, 2, n), "Hipertension": (rng.random(n) < 0.2).astype(int),
        "Diabetes": (rng.random(n) < 0.07).astype(int), "Alcoholism": (rng.random(n) < 0.03).astype(int),
        "SMS_received": rng.integers(0, 2, n), "No_show": rng.choice(["No", "Yes"], n, p=[0.8, 0.2])})


@pytest.fixture
def noshow(engine) -> pd.DataFrame:
    frame = _noshow()
    write_frame(engine, frame, "noshow")
    return frame


HEAD = """
[source]
table = "noshow"
key = "AppointmentID"
qi = ["Gender", "Age", "Neighbourhood"]
class = "No_show"
sensitive = ["Hipertension", "Diabetes"]

[[steps]]
kind = "drop"
columns = ["PatientId"]
out = "noshow_noid"
{drop}
[[steps]]
kind = "bin"
columns = {{ Age = "width:20" }}
out = "noshow_binned"

[[steps]]
kind = "kanon"
k = 5
out = "noshow_k5"
{kanon}
"""
PROTECT = """
[[steps]]
kind = "protect"
{protect}
out = "noshow_pub"
"""
GATES = """
[gates]
folds = 2
{gates}

[outputs]
dir = "out"
"""


def _spec(tmp_path: Path, *, protect: str | None = 'target = "Hipertension"\nrows = "5600001,5600005"',
          gates: str = "k = 5", drop: str = "", kanon: str = "") -> Path:
    text = HEAD.format(drop=drop, kanon=kanon) + (PROTECT.format(protect=protect) if protect is not None else "") + \
        GATES.format(gates=gates)
    path = tmp_path / "noshow.toml"
    path.write_text(text)
    return path


def _tables(engine) -> list[str]:
    return sorted(r[0] for r in engine.fetch_all("SELECT table_name FROM information_schema.tables "
                                                   "WHERE table_schema = current_schema()"))


def _null_share(engine, table: str, qi: list[str]) -> tuple[int, float]:
    """QI cells NULL in `table`, and their share of its QI cells, counted here in plain SQL."""
    nulls = sum(engine.fetch_all(f'SELECT COUNT(*) - COUNT("{c}") FROM {table}')[0][0] for c in qi)
    rows = engine.fetch_all(f"SELECT COUNT(*) FROM {table}")[0][0]
    return nulls, nulls / (rows * len(qi))


# --- 1. gates against the source ---------------------------------------------------------------

def test_suppression_gate_measures_against_the_source(engine, noshow, tmp_path):
    """On main the baseline was the last step's input (the kanon output), so a protect step after
    kanon made the release pass max_suppressed = 0.10 with 'suppressed QI cells 0.00%'."""
    report = anonsql.release_run(_spec(tmp_path, gates="max_suppressed = 1"), engine)
    nulls, share = _null_share(engine, "noshow_pub", QI)
    assert 0.3 < share < 0.6  # kanon blanked about 45% of the QI cells (the source has none NULL)
    proof = report.proofs["noshow_pub"]
    assert proof.before.table == "noshow" and proof.suppressed_share == pytest.approx(share)
    assert proof.before.risk.max_risk == 1.0 and proof.after.risk.max_risk <= 0.2
    line = next(s for s in report.lines() if "prosecutor risk" in s)
    assert line == f"  noshow_pub: prosecutor risk 1 -> {proof.after.risk.max_risk:.3g}; suppressed QI cells " \
                   f"{share:.2%} (before: noshow)"

    before = _tables(engine)
    with pytest.raises(VerificationError) as info:
        anonsql.release_run(_spec(tmp_path, gates="max_suppressed = 0.10"), engine, replace=True)
    assert f"gate: suppressed share of QI cells <= 0.1 in noshow_pub: {nulls:,} cells, {share:.2%} (before: noshow)" \
        in str(info.value)
    assert _tables(engine) == before


def test_baseline_stays_an_option(engine, noshow, tmp_path):
    """[gates] baseline = the kanon output measures only the QI cells protect hid after it."""
    spec = _spec(tmp_path, gates='max_suppressed = 0.10\nbaseline = "noshow_k5"')
    assert anonsql.release_plan(spec, engine).baseline == "noshow_k5"
    report = anonsql.release_run(spec, engine)
    hidden = engine.fetch_all("SELECT COUNT(*) FROM noshow_pub_changes WHERE column_name IN "
                              "('Gender', 'Age', 'Neighbourhood') AND new_value IS NULL")[0][0]
    assert report.ok and report.proofs["noshow_pub"].suppressed_share == pytest.approx(hidden / (1200 * 3))
    assert report.proofs["noshow_pub"].before.table == "noshow_k5"


# --- 2. declared publication --------------------------------------------------------------------

def test_only_the_last_step_is_published_by_default(engine, noshow, tmp_path):
    """On main every step's output stayed and was listed as published, among them noshow_binned,
    a copy still holding every other column in clear."""
    spec = _spec(tmp_path)
    plan = anonsql.release_plan(spec, engine)
    assert (plan.published, plan.working, plan.private) == (
        ["noshow_pub"], ["noshow_noid", "noshow_binned", "noshow_k5"], ["noshow_pub_changes"])
    assert {"  published: noshow_pub",
            "  working tables (dropped after the gates): noshow_noid, noshow_binned, noshow_k5",
            "  private tables (kept, ORIGINAL values: never publish): noshow_pub_changes"} <= set(plan.lines())
    assert plan.baseline == "noshow" and plan.error_baselines == {"noshow_pub": "noshow_binned"}
    report = anonsql.release_run(spec, engine)
    assert (report.published, report.working, report.private) == (plan.published, plan.working, plan.private)
    assert _tables(engine) == ["noshow", "noshow_pub", "noshow_pub_changes"]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert set(manifest["outputs"]) == {"noshow_pub", "noshow_pub_changes"}
    for table in ("noshow_pub", "noshow_pub_changes"):
        assert manifest["outputs"][table]["rows"] == len(table_rows(engine, table))
    assert "PatientId" not in get_table(engine, "noshow_pub").column_names


def test_gates_run_on_every_published_table(engine, noshow, tmp_path):
    """publish = true on the drop step too: its output (not k-anonymous) fails the k gate by name."""
    before = _tables(engine)
    with pytest.raises(VerificationError) as info:
        anonsql.release_run(_spec(tmp_path, drop="publish = true", kanon="publish = true", protect=None), engine)
    message = str(info.value)
    assert "gate: 5-anonymity of noshow_noid" in message and "noshow_k5" not in message
    assert _tables(engine) == before
    spec = _spec(tmp_path, kanon="publish = true", protect='target = "Hipertension"\nrows = "5600001"\npublish = true',
                 gates="k = 5\nmax_risk = 0.2")
    report = anonsql.release_run(spec, engine)
    assert report.published == ["noshow_k5", "noshow_pub"] and set(report.proofs) == {"noshow_k5", "noshow_pub"}
    gates = [c.name for c in report.checks if c.name.startswith("gate:")]
    assert {"gate: 5-anonymity of noshow_k5", "gate: 5-anonymity of noshow_pub",
            "gate: prosecutor risk <= 0.2 in noshow_k5", "gate: prosecutor risk <= 0.2 in noshow_pub"} <= set(gates)
    assert _tables(engine) == ["noshow", "noshow_k5", "noshow_pub", "noshow_pub_changes"]


def test_publish_must_be_a_bool_naming_its_line(tmp_path):
    text = _spec(tmp_path, kanon='publish = "yes"').read_text()
    line = text.splitlines().index('publish = "yes"') + 1
    assert _error(text, tmp_path) == f"{tmp_path / 'bad.toml'}:{line}: step 3 (kanon) publish must be true or " \
                                          "false, got 'yes'"
    text = _spec(tmp_path, protect=None, kanon="publish = false").read_text()
    line = text.splitlines().index("publish = false") + 1
    assert _error(text, tmp_path).startswith(f"{tmp_path / 'bad.toml'}:{line}: no step is published")


def test_bad_publish_on_the_command_line(db, tmp_path, capsys):
    spec = _spec(tmp_path, kanon="publish = 1")
    code = main(["release", "plan", str(spec), "--db", db])
    out, err = capsys.readouterr()
    assert code == 2 and not out and err.count("\n") == 1 and "publish must be true or false, got 1" in err


# --- 3. guarantees survive composition ----------------------------------------------------------

def _breaking_cells(engine) -> list[list[str]]:
    """Two rows whose hidden Neighbourhood breaks a class of exactly 5 in the kanon output (that
    chain run alone, with the same seed)."""
    api.bin_columns(engine, "noshow", ["Age=width:20"], "probe_binned")
    api.k_anonymize(engine, "probe_binned", QI, "No_show", 5, out="probe_k5", drop=["PatientId"])
    keys = engine.fetch_all('SELECT MIN(t."AppointmentID") FROM probe_k5 AS t WHERE t."Neighbourhood" IS NOT NULL '
                            'GROUP BY t."Gender", t."Age", t."Neighbourhood" HAVING COUNT(*) = 5 '
                            "ORDER BY 1 LIMIT 2")
    for table in ("probe_k5", "probe_binned"):
        engine.execute(f"DROP TABLE {table}")
    assert len(keys) == 2
    return [[str(k), "Neighbourhood"] for (k,) in keys]


def test_protect_after_kanon_cannot_break_k(engine, db, noshow, tmp_path, capsys):
    """On main protect hid these cells, two rows left 5-anonymity, and the release still passed
    (no k gate in the spec); nothing re-proved kanon's k on protect's output."""
    cells = json.dumps(_breaking_cells(engine))
    before = _tables(engine)
    spec = _spec(tmp_path, protect=f"cells = {cells}", gates="")
    with pytest.raises(VerificationError) as info:
        anonsql.release_run(spec, engine)
    assert "step 4 (protect): keeps 5-anonymity over Gender, Age, Neighbourhood (from step 3 (kanon))" \
        in str(info.value)
    assert "classes holding" in str(info.value)
    assert _tables(engine) == before
    code = main(["release", "run", str(spec), "--db", db, "--quiet"])
    out, err = capsys.readouterr()
    *warned, last = err.splitlines()
    assert code == 2 and not out and "step 4 (protect): keeps 5-anonymity" in last
    assert all(w.startswith("WARNING: ") for w in warned)  # privacy warnings: never silenced by --quiet
    assert _tables(engine) == before


def test_protect_given_qi_and_k_keeps_them(engine, noshow, tmp_path):
    """protect's qi / k (branch h-protect) suppress further QI cells so the hidden ones keep k."""
    cells = json.dumps(_breaking_cells(engine))
    spec = _spec(tmp_path, protect=f'cells = {cells}\nqi = ["Gender", "Age", "Neighbourhood"]\nk = 5', gates="k = 5")
    try:
        report = anonsql.release_run(spec, engine)
    except TypeError as exc:
        if "qi" not in str(exc):
            raise
        pytest.skip("anonsql.api.protect_table has no qi / k yet (branch h-protect adds them)")
    assert report.ok
    assert any(c.name.startswith("step 4 (protect): keeps 5-anonymity") and c.passed for c in report.checks)


def test_steps_keep_dropped_and_pseudonymized_columns(engine, noshow, tmp_path, monkeypatch):
    monkeypatch.setenv("ANONSQL_PSEUDONYM_KEY", "a test key of at least sixteen characters")
    report = anonsql.release_run(_spec(tmp_path, drop="", kanon='pseudonymize = ["Scholarship"]'), engine)
    kept = {c.name: c.passed for c in report.checks if ": keeps " in c.name}
    assert kept == {"step 2 (bin): keeps PatientId dropped (from step 1 (drop))": True,
                    "step 3 (kanon): keeps PatientId dropped (from step 1 (drop))": True,
                    "step 4 (protect): keeps PatientId dropped (from step 1 (drop))": True,
                    "step 4 (protect): keeps 5-anonymity over Gender, Age, Neighbourhood (from step 3 (kanon))": True,
                    "step 4 (protect): keeps Scholarship pseudonymized (no original value) (from step 3 (kanon))": True}
    verified = anonsql.release_verify(_spec(tmp_path, drop="", kanon='pseudonymize = ["Scholarship"]'), engine)
    assert verified.ok
    assert {c.name for c in verified.checks if ": keeps " in c.name} == {
        "noshow_pub: keeps PatientId dropped (from step 1 (drop))",
        "noshow_pub: keeps 5-anonymity over Gender, Age, Neighbourhood (from step 3 (kanon))",
        "noshow_pub: keeps Scholarship pseudonymized (no original value) (from step 3 (kanon))"}


def test_each_guarantee_can_fail(engine, make_table):
    """The re-proofs refute tables that lost a guarantee (so the passing checks above mean something)."""
    make_table("src", {"id": ["1", "2", "3", "4"], "zip": ["a", "a", "b", "b"], "s": ["x", "x", "x", "y"]})
    make_table("lost", {"id": ["1", "2", "3", "4"], "zip": ["a", "a", "b", None], "s": ["x", "x", "x", "y"]})
    source, lost = get_table(engine, "src"), get_table(engine, "lost")
    G = guarantees.Guarantee
    verdicts = {g.kind: guarantees.prove(engine, lost, g, source) for g in [
        G("k", ("zip",), 2), G("l", ("zip",), 2, "s"), G("t", ("zip",), 0.1, "s"), G("dropped", ("id",)),
        G("pseudonymized", ("id",))]}
    assert {k: c.passed for k, c in verdicts.items()} == dict.fromkeys(["k", "l", "t", "dropped", "pseudonymized"],
                                                                      False)
    assert verdicts["k"].detail == "2 classes holding 2 rows have fewer than 2 rows"
    assert verdicts["dropped"].detail == "still there: id"
    assert guarantees.prove(engine, source, G("k", ("zip",), 2), source).passed
    assert guarantees.prove(engine, source, G("l", ("zip",), 1, "s"), source).passed


def test_gates_need_a_published_row_level_table(engine, noshow, tmp_path):
    spec = tmp_path / "aggregates.toml"
    spec.write_text('[source]\ntable = "noshow"\nqi = ["Gender", "Age"]\nclass = "No_show"\n\n'
                    '[[steps]]\nkind = "kanon"\nk = 5\nout = "noshow_k5"\n\n'
                    '[[steps]]\nkind = "tables"\ninput = "noshow_k5"\ndims = ["Gender"]\nout = "by_gender"\n\n'
                    "[gates]\nk = 5\n")
    with pytest.raises(AnonsqlError, match="^the gates need a published row-level table: say publish = true on"):
        anonsql.release_plan(spec, engine)
    assert find_table(engine, "noshow_k5") is None


def test_a_gate_property_once_held_must_stay(engine, make_table, tmp_path):
    """The gates' l-diversity becomes a guarantee of the chain at the first table where it holds;
    a later step losing it fails there (tables written by hand in place of the steps' jobs)."""
    make_table("src", {"id": ["1", "2", "3", "4", "5"], "name": list("abcde"), "zip": ["a", "a", "a", "b", "b"],
                       "s": ["x", "y", "x", "x", "y"]})
    path = tmp_path / "chain.toml"
    path.write_text('[source]\ntable = "src"\nkey = "id"\nqi = ["zip"]\n\n'
                    '[[steps]]\nkind = "drop"\ncolumns = ["name"]\nout = "t1"\n\n'
                    '[[steps]]\nkind = "protect"\ntarget = "s"\nrows = "5"\nout = "t2"\n\n'
                    "[gates]\nl_diversity = { s = 2 }\n")
    spec = spec_mod.load(path)
    plan = anonsql.release_plan(path, engine)
    chains = guarantees.Chains(engine, spec, plan)
    report = Report(table="src")
    rows = {"id": ["1", "2", "3", "4", "5"], "zip": ["a", "a", "a", "b", "b"]}
    make_table("t1", {**rows, "s": ["x", "y", "x", "x", "y"]})
    chains.after(plan.steps[0], report)
    assert [g.name for g in chains.held["t1"]] == ["name dropped", "2-diversity of s over zip"]
    make_table("t2", {**rows, "s": ["x", "y", "x", "x", "x"]})  # class b lost its second value
    with pytest.raises(VerificationError, match=r"step 2 \(protect\): keeps 2-diversity of s over zip \(from step 1 "
                                                r"\(drop\), where the gate first held\): 1 classes below l"):
        chains.after(plan.steps[1], report)
    assert [c.passed for c in report.checks] == [True, False]  # name still dropped; l lost


def test_gates_table_adds_a_working_table_to_the_gated_ones(engine, noshow, tmp_path):
    spec = _spec(tmp_path, gates='k = 5\ntable = "noshow_k5"')
    report = anonsql.release_run(spec, engine)
    assert set(report.proofs) == {"noshow_pub", "noshow_k5"} and find_table(engine, "noshow_k5") is None
    assert {"gate: 5-anonymity of noshow_k5", "gate: 5-anonymity of noshow_pub"} <= {c.name for c in report.checks}
    verified = anonsql.release_verify(spec, engine)
    assert verified.ok and "gates on noshow_k5 not proved again: a working table, dropped after the release" \
        in verified.notes
    assert "step 3 (kanon): its output was a working table, dropped after the release (checked when it ran)" \
        in verified.notes
