"""A release step's script: the job's report carries it (the reviewable --emit-sql script, built on
demand), and for the jobs without one (the release's drop, bin) it is the writing statements the
engine ran for the step, which the engine's tracer hook (Engine.tracer) hands over."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import anonsql
from anonsql import api
from anonsql.catalog import drop_table, get_table
from anonsql.data import binning
from anonsql.data.loading import write_frame
from anonsql.release import steps
from tests.test_release_gates import _noshow

QI = ["Gender", "Age", "Neighbourhood"]
#: The engine's methods that run one statement given as text (insert_rows takes names and data).
RUNS = ("execute", "fetch_all", "fetch_df", "fetch_arrow", "fetch_columns")


def _asked(engine, monkeypatch) -> list[tuple]:
    """Records what callers ask the engine to run, around its public methods (the outermost call
    only: an engine method may call another): ("sql", text, params) or ("insert", table, columns)
    as the engine quotes them."""
    from anonsql.engine.base import target_names

    asked: list[tuple] = []
    depth = [0]

    def spy(name, method):
        def run(*args, **kwargs):
            if not depth[0]:
                asked.append(("insert", *target_names(args[0], args[1], engine.dialect)) if name == "insert_rows" else
                             ("sql", args[0], args[1] if len(args) > 1 else kwargs.get("params")))
            depth[0] += 1
            try:
                return method(*args, **kwargs)
            finally:
                depth[0] -= 1
        return run

    for name in (*RUNS, "insert_rows"):
        monkeypatch.setattr(engine, name, spy(name, getattr(engine, name)))
    return asked


def _traced_in_order(asked: list[tuple], traced: list[tuple]) -> list[tuple]:
    """The statements asked that the tracer did not see, in the order asked (the traced ones
    must hold them all, in that order; an engine may run statements of its own between)."""
    missing, at = [], 0
    for kind, a, b in asked:
        for i in range(at, len(traced)):
            text, params = traced[i]
            if (text, params) == (a, b) if kind == "sql" else (a in text and b in text):
                at = i + 1
                break
        else:
            missing.append((kind, a, b))
    return missing


def test_a_tracer_sees_every_statement_of_a_kanon_run(engine, monkeypatch):
    write_frame(engine, _noshow(300), "visits")
    asked = _asked(engine, monkeypatch)
    traced: list[tuple] = []
    with engine.tracer(lambda text, params: traced.append((text, params))):
        report = api.k_anonymize(engine, "visits", QI, "No_show", 3, out="visits_k3")
    assert report.ok and report.script is None  # no script asked for: none built
    writes = [a for a in asked if a[0] == "sql" and "CREATE TABLE" in a[1].upper()]
    assert writes and any(a[2] for a in asked) and any(a[0] == "insert" for a in asked)  # a run worth tracing
    assert _traced_in_order(asked, traced) == []
    assert len(traced) >= len(asked)
    before = len(traced)
    engine.fetch_all("SELECT 1")  # outside the block: no tracer
    assert len(traced) == before


def test_tracers_nest_and_each_sees_the_statements_of_its_block(engine):
    outer: list[str] = []
    inner: list[str] = []
    with engine.tracer(lambda text, params: outer.append(text)):
        engine.fetch_all("SELECT 1 AS a")
        with engine.tracer(lambda text, params: inner.append(text)):
            engine.fetch_all("SELECT 2 AS b")
        engine.fetch_all("SELECT 3 AS c")
    assert outer == ["SELECT 1 AS a", "SELECT 2 AS b", "SELECT 3 AS c"] and inner == ["SELECT 2 AS b"]


def test_a_report_carries_its_script_and_emit_sql_writes_it_from_there(engine, tmp_path):
    write_frame(engine, _noshow(300), "visits")
    (tmp_path / "bins.toml").write_text('[[binary]]\nname = "old"\ncolumn = "Age"\nlower = 40\n')
    runs = {
        "kanon": lambda emit: api.k_anonymize(engine, "visits", QI, "No_show", 3, out="v_k3", replace=True,
                                              emit_sql=emit),
        "protect": lambda emit: api.protect_table(engine, "visits", "AppointmentID", target="Hipertension",
                                                  rows="5600001,5600005", out="v_safe", replace=True, emit_sql=emit),
        "nbc": lambda emit: api.nbc_publish(engine, "visits", "No_show", ["Gender", "Neighbourhood"], 2, "v_nbc",
                                            replace=True, emit_sql=emit),
        "tables": lambda emit: api.safe_table(engine, "visits", ["Gender", "Neighbourhood"], out="v_counts",
                                              replace=True, emit_sql=emit),
        "binarize": lambda emit: api.binarize(engine, "visits", str(tmp_path / "bins.toml"), "v_bin",
                                              key="AppointmentID", class_column="No_show", replace=True, emit_sql=emit),
    }
    for job, run in runs.items():
        path = tmp_path / f"{job}.sql"
        report = run(str(path))
        assert report.script and path.read_text(encoding="utf-8") == report.script, job
        assert "script" not in report.to_dict() and "script" not in json.loads(report.to_json()), job
        assert "script" not in report.public_dict(), job


def _drop_bin_spec(tmp_path: Path) -> Path:
    path = tmp_path / "idbin.toml"
    path.write_text('[source]\ntable = "visits"\nkey = "AppointmentID"\nqi = ["Gender", "Age", "Neighbourhood"]\n'
                    'class = "No_show"\n\n'
                    '[[steps]]\nkind = "drop"\ncolumns = ["PatientId"]\nout = "visits_noid"\n\n'
                    '[[steps]]\nkind = "bin"\ncolumns = { Age = "width:20" }\nout = "visits_binned"\n\n'
                    '[outputs]\ndir = "out"\n')
    return path


class _ExecuteRecorder:
    """The route the tracer replaced (main's release Recorder): the engine, with the statements
    its `execute` is called with recorded; everything else passed through."""

    def __init__(self, engine):
        self._engine, self.calls = engine, []

    def execute(self, text, params=None):
        self.calls.append((text, params))
        self._engine.execute(text, params)

    def __getattr__(self, name):
        return getattr(self._engine, name)


def test_the_drop_and_bin_steps_scripts_are_the_statements_they_executed(engine, tmp_path):
    """The release's drop and bin steps get the script the execute-wrapping route gave them: the
    same writing statements, in the same order."""
    write_frame(engine, _noshow(300), "visits")
    report = anonsql.release_run(_drop_bin_spec(tmp_path), engine)
    drop_script, bin_script = (s.script for s in report.steps)
    assert report.scripts == [drop_script, bin_script]
    assert "CREATE" in drop_script.upper() and "CASE" in bin_script.upper()
    # the same two jobs again, through the old route, on the same names
    drop_table(engine, get_table(engine, "visits_binned").expr)
    rec = _ExecuteRecorder(engine)
    steps._drop(rec, "visits", ["PatientId"], "visits_noid", False)
    dropped = list(rec.calls)
    binning.bin_table(rec, "visits_noid", ["Age=width:20"], "visits_binned", replace=False)
    for calls, script in ((dropped, drop_script), (rec.calls[len(dropped):], bin_script)):
        expected = steps.Writes()
        for text, params in calls:
            expected(text, params)
        assert expected.statements
        assert expected.script(engine.dialect, script.splitlines()[0].removeprefix("-- ")) == script


@pytest.mark.parametrize("name", ["release_plan", "release_run", "release_verify"])
def test_the_package_exports_the_release_functions_from_the_release(name):
    from anonsql.release import entry

    assert getattr(anonsql, name) is getattr(entry, name) and not hasattr(api, name)
