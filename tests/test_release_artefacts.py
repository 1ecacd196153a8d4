"""A release's artefacts (issue 29): public ones never hold a changed row's key or a changed cell's
original value, private ones sit under private/; the set is all or nothing (staged, moved into
place after the commit, hashed in the manifest, checked by `release verify`, completed by a
re-run after a crash between commit and move); the report lists only published tables and shows
every privacy warning. On DuckDB and PostgreSQL."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import anonsql
from anonsql.catalog import get_table
from anonsql.cli import main
from anonsql.errors import AnonsqlError, VerificationError
from anonsql.report import KILL_AFTER

from .conftest import table_rows

QI = ["zip", "age", "sex"]

#: A no-show-like shape: a text row key, three quasi-identifiers, a sensitive diagnosis; kanon,
#: protect of two rows' diagnosis, a safe table of counts. Every value is a token that occurs
#: nowhere else (no figure, no base64 PNG holds a '-'), so a grep cannot hit by chance. protect
#: reads the source: on kanon's output its ID3 prediction fails on a node whose attributes are
#: all suppressed (a protect bug, reported apart).
SPEC = """
[source]
table = "visits"
key = "pid"
qi = ["zip", "age", "sex"]
class = "diagnosis"
sensitive = ["diagnosis"]

[[steps]]
kind = "kanon"
k = 3
out = "visits_k3"
publish = true

[[steps]]
kind = "protect"
input = "source"
target = "diagnosis"
rows = "{rows}"
out = "visits_safe"
publish = true

[[steps]]
kind = "tables"
input = "source"
dims = ["zip", "sex"]
out = "visits_counts"
publish = true

[gates]
max_suppressed = {max_suppressed}
folds = 2

[outputs]
dir = "out"
"""


def _visits(n: int = 60, seed: int = 7) -> dict[str, list]:
    rng = random.Random(seed)
    return {"pid": [f"key-{i:03d}q" for i in range(n)],
            "zip": [rng.choice(["zip-north", "zip-south", "zip-east"]) for _ in range(n)],
            "age": [rng.choice(["age-20s", "age-30s", "age-40s", "age-50s"]) for _ in range(n)],
            "sex": [rng.choice(["sex-f", "sex-m"]) for _ in range(n)],
            "diagnosis": [rng.choice(["diag-alpha", "diag-beta", "diag-gamma"]) for _ in range(n)]}


@pytest.fixture
def visits(make_table):
    make_table("visits", _visits())


def _spec(tmp_path: Path, rows: str = "key-004q,key-011q", max_suppressed: float = 1) -> Path:
    """The spec in its own folder, tmp_path/rel/ (the DuckDB file sits in tmp_path)."""
    path = tmp_path / "rel" / "visits.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(SPEC.replace("{rows}", rows).replace("{max_suppressed}", str(max_suppressed)))
    return path


def _out(tmp_path: Path) -> Path:
    return tmp_path / "rel" / "out"


def _listing(tmp_path: Path) -> list[str]:
    """What the spec's folder holds (the release folder, any staging folder, the spec)."""
    return sorted(p.name for p in (tmp_path / "rel").iterdir())


def _frame(engine, table: str) -> pd.DataFrame:
    return pd.DataFrame(table_rows(engine, table), columns=get_table(engine, table).column_names)


def _secrets(engine) -> set[str]:
    """Every changed row's key and every original value of a changed cell: protect's from its
    private changes table, kanon's by comparing its output with the source, row by row."""
    changes = _frame(engine, "visits_safe_changes")
    found = {str(k) for k in changes["key"]} | {str(v) for v in changes["old_value"].dropna()}
    source, k3 = (_frame(engine, t).set_index("pid").sort_index() for t in ("visits", "visits_k3"))
    for col in QI:
        blanked = k3[col].isna() & source[col].notna()
        found |= set(source.index[blanked]) | set(source.loc[blanked, col])
    return found


def _files(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.is_file()}


def test_public_artefacts_hold_no_key_or_original_value(engine, visits, tmp_path):
    report = anonsql.release_run(_spec(tmp_path), engine)
    assert report.ok
    secrets = _secrets(engine)
    assert {"key-004q", "key-011q"} <= secrets and any(s.startswith("diag-") for s in secrets)
    files = _files(_out(tmp_path))
    public = {name: text for name, text in files.items() if not name.startswith("private/")}
    assert set(public) == {"manifest.json", "report.html"}
    leaks = {(name, s) for name, text in public.items() for s in secrets if s in text}
    assert not leaks
    # the same facts are in the private artefacts (so the grep above can find them)
    private = files["private/changes.json"] + files["private/release.sql"]
    assert {"key-004q", "key-011q"} <= {s for s in secrets if s in private}
    manifest = json.loads(public["manifest.json"])
    protect = manifest["steps"][1]
    assert protect["figures"]["private"] == ["cells", "changes"] and "cells" not in protect["figures"]
    # the JSON of the run (--json) is the public manifest; the summary holds no row-level fact either
    assert not {s for s in secrets if s in json.dumps(report.to_dict(), default=str) + report.summary()}


def test_report_lists_published_tables_apart_from_private_ones(engine, visits, tmp_path):
    report = anonsql.release_run(_spec(tmp_path), engine)
    manifest = json.loads((_out(tmp_path) / "manifest.json").read_text())
    assert manifest["published"] == ["visits_k3", "visits_safe", "visits_counts"]
    assert manifest["private"] == {"tables": ["visits_safe_changes", "visits_counts_private_audit"],
                                   "folder": "private/"}
    page = (_out(tmp_path) / "report.html").read_text()
    published = page[page.index("<h2>What was published</h2>"):page.index("Private tables: never publish")]
    assert "visits_safe<" in published and "visits_safe_changes" not in published
    assert "visits_counts_private_audit" not in published and "visits_counts_private_audit" in page
    assert "except the <code>private/</code> subfolder" in page
    summary = report.summary()
    assert "published visits_k3, visits_safe, visits_counts" in summary.splitlines()[0]
    assert ("PRIVATE tables (original values; never publish): visits_safe_changes, visits_counts_private_audit"
            in summary)
    assert f"PRIVATE: {_out(tmp_path) / 'private'}/" in summary


def _single_valued_classes(frame: pd.DataFrame, column: str) -> int:
    """Equivalence classes over QI (NULL a value of its own) with one value of `column`."""
    distinct = frame.fillna("<null>").groupby(QI)[column].nunique()
    return int((distinct == 1).sum())


def test_attribute_disclosure_shown_everywhere(engine, visits, tmp_path):
    report = anonsql.release_run(_spec(tmp_path), engine)
    expected = [(t, _single_valued_classes(_frame(engine, t), "diagnosis")) for t in ("visits_k3", "visits_safe")]
    assert any(n for _, n in expected)  # the data has single-valued classes to flag
    wanted = [f"attribute disclosure in {t}: in {n:,} classes" for t, n in expected if n]
    for w in wanted:
        assert sum(x.startswith(w) and "every row has the same diagnosis" in x for x in report.warnings) == 1
    manifest = json.loads((_out(tmp_path) / "manifest.json").read_text())
    assert manifest["warnings"] == report.warnings
    page = (_out(tmp_path) / "report.html").read_text()
    box = page[page.index('<div class="warnings">'):page.index("<h2>Gates</h2>")]
    assert all(w in box for w in wanted)
    assert all(f"WARNING: {w}" in report.summary() for w in report.warnings)


def test_step_warnings_reach_the_release(engine, visits, tmp_path, monkeypatch):
    from anonsql.release import job as release_job

    real = release_job.run_step

    def warning_step(engine, step, **kwargs):
        result, script = real(engine, step, **kwargs)
        result.warnings.append(f"identifier-like column seen by step {step.number}")
        return result, script

    monkeypatch.setattr(release_job, "run_step", warning_step)
    report = anonsql.release_run(_spec(tmp_path), engine)
    said = [f"step {n} ({k}): identifier-like column seen by step {n}" for n, k in
            ((1, "kanon"), (2, "protect"), (3, "tables"))]
    assert [w for w in report.warnings if "identifier-like column seen" in w] == said  # beside the steps' own
    manifest = json.loads((_out(tmp_path) / "manifest.json").read_text())
    assert [s["warnings"][-1] for s in manifest["steps"]] == [w.split(": ", 1)[1] for w in said]
    page = (_out(tmp_path) / "report.html").read_text()
    assert all(w in page for w in said)


# --- all or nothing ------------------------------------------------------------------------------

def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under `folder` with its bytes and modification time (ns)."""
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*")
            if p.is_file()}


def test_failed_gate_leaves_no_folder(engine, visits, tmp_path):
    spec = _spec(tmp_path, max_suppressed=0)  # kanon blanks cells: the gate fails
    before = _listing(tmp_path)
    with pytest.raises(VerificationError, match="suppressed share of QI cells <= 0"):
        anonsql.release_run(spec, engine)
    assert _listing(tmp_path) == before  # no out/, no staging folder


def test_failed_rerun_leaves_the_previous_release_untouched(engine, visits, tmp_path):
    anonsql.release_run(_spec(tmp_path), engine)
    previous = _snapshot(_out(tmp_path))
    assert set(previous) == {"manifest.json", "report.html", "private/release.sql", "private/changes.json",
                             "private/utility.html"}
    with pytest.raises(VerificationError):
        anonsql.release_run(_spec(tmp_path, max_suppressed=0), engine, replace=True)
    with pytest.raises(AnonsqlError) as bad:  # bad input found in step 2, after step 1 ran
        anonsql.release_run(_spec(tmp_path, rows="key-999z"), engine, replace=True)
    assert "key-999z" in str(bad.value)
    assert _snapshot(_out(tmp_path)) == previous
    assert _listing(tmp_path) == ["out", "visits.toml"]


def test_manifest_hashes_every_other_artefact_and_verify_checks_them(engine, db, visits, tmp_path, capsys):
    spec = _spec(tmp_path)
    anonsql.release_run(spec, engine)
    out = _out(tmp_path)
    manifest = json.loads((out / "manifest.json").read_text())
    assert set(manifest["artefacts"]) == {"report.html", "private/release.sql", "private/changes.json",
                                         "private/utility.html"}
    import hashlib

    for rel, h in manifest["artefacts"].items():
        assert hashlib.sha256((out / rel).read_bytes()).hexdigest() == h["sha256"]
    assert main(["release", "verify", str(spec), "--db", db, "--quiet"]) == 0
    assert "artefact report.html is there and unchanged holds" in capsys.readouterr().out

    page = (out / "report.html").read_bytes()
    (out / "report.html").write_bytes(page.replace(b"visits_k3", b"visits_k4", 1))  # tampered
    assert main(["release", "verify", str(spec), "--db", db, "--quiet"]) == 1
    said = capsys.readouterr().out
    assert "artefact report.html is there and unchanged FAILS, CHANGED: sha256" in said
    assert "ARTEFACT missing or changed since the release: report.html" in said

    (out / "report.html").write_bytes(page)
    (out / "private" / "changes.json").unlink()  # removed
    assert main(["release", "verify", str(spec), "--db", db, "--quiet"]) == 1
    assert "artefact private/changes.json is there and unchanged FAILS, MISSING" in capsys.readouterr().out


RUN = "import sys; from anonsql.cli import main; sys.exit(main(sys.argv[1:]))"


def _killed_run(engine, db: str, spec: Path, stage: str, *extra: str) -> None:
    """`release run` in a child process killed (SIGKILL) right after `stage`."""
    if db.endswith(".duckdb"):
        engine.close()  # DuckDB allows one writing process per file
    done = subprocess.run([sys.executable, "-c", RUN, "release", "run", str(spec), "--db", db, "--quiet", *extra],
                          env={**os.environ, KILL_AFTER: stage}, capture_output=True, text=True, timeout=300)
    assert done.returncode == -9, done.stderr


def test_a_release_killed_after_its_commit_is_completed_by_the_rerun(engine, db, visits, tmp_path, capsys):
    spec = _spec(tmp_path)
    _killed_run(engine, db, spec, "transaction")  # the commit is the end of the transaction stage
    assert not _out(tmp_path).exists()  # the tables committed, the artefacts did not move
    assert main(["release", "verify", str(spec), "--db", db, "--quiet"]) == 2
    assert "a run was killed after its commit: `anonsql release run` completes it" in capsys.readouterr().err
    assert main(["release", "run", str(spec), "--db", db]) == 0  # no --replace: nothing runs again
    said = capsys.readouterr().out
    assert "completed: an earlier run's tables had committed" in said
    assert set(_snapshot(_out(tmp_path))) == {"manifest.json", "report.html", "private/release.sql",
                                                "private/changes.json", "private/utility.html"}
    assert _listing(tmp_path) == ["out", "visits.toml"]
    assert main(["release", "verify", str(spec), "--db", db, "--quiet"]) == 0
    assert "FAILS" not in capsys.readouterr().out


def test_a_release_killed_between_the_renames_is_completed(engine, db, visits, tmp_path, capsys):
    spec = _spec(tmp_path)
    assert main(["release", "run", str(spec), "--db", db, "--quiet"]) == 0
    first = json.loads((_out(tmp_path) / "manifest.json").read_text())
    (_out(tmp_path) / "stale.txt").write_text("left by hand in the previous release")
    _killed_run(engine, db, spec, "artefacts: previous set aside", "--replace")
    assert not _out(tmp_path).exists()  # the previous folder set aside, the new one not yet in place
    assert main(["release", "run", str(spec), "--db", db, "--quiet"]) == 0
    now = _snapshot(_out(tmp_path))
    assert set(now) == {"manifest.json", "report.html", "private/release.sql", "private/changes.json",
                        "private/utility.html"}
    assert json.loads(now["manifest.json"][0])["outputs"] == first["outputs"]
    assert _listing(tmp_path) == ["out", "visits.toml"]
    capsys.readouterr()


def test_a_staged_set_that_no_longer_matches_is_dropped_and_the_previous_release_restored(engine, db, visits,
                                                                                          tmp_path, capsys):
    spec = _spec(tmp_path)
    assert main(["release", "run", str(spec), "--db", db, "--quiet"]) == 0
    first = _snapshot(_out(tmp_path))
    _killed_run(engine, db, spec, "artefacts: previous set aside", "--replace")
    from anonsql.engine import connect

    fresh = connect(db)
    try:  # the source changes before the re-run: the staged manifest no longer describes the database
        fresh.execute("UPDATE visits SET diagnosis = 'diag-delta' WHERE pid = 'key-001q'")
    finally:
        fresh.close()
    assert main(["release", "run", str(spec), "--db", db, "--quiet"]) == 2  # outputs exist, no --replace
    assert "already exist" in capsys.readouterr().err
    assert _snapshot(_out(tmp_path)) == first and _listing(tmp_path) == ["out", "visits.toml"]


def test_a_release_killed_before_removing_the_previous_folder(engine, db, visits, tmp_path, capsys):
    spec = _spec(tmp_path)
    assert main(["release", "run", str(spec), "--db", db, "--quiet"]) == 0
    _killed_run(engine, db, spec, "artefacts: in place", "--replace")
    assert _listing(tmp_path) == [".out.previous", "out", "visits.toml"]  # the new set is in place
    assert main(["release", "verify", str(spec), "--db", db, "--quiet"]) == 0
    assert main(["release", "run", str(spec), "--db", db, "--quiet", "--replace"]) == 0
    assert _listing(tmp_path) == ["out", "visits.toml"]  # the next run removed the leftover
    capsys.readouterr()


@pytest.mark.parametrize("stage", ["step 2 (protect)", "gates", "staged artefacts"])
def test_a_release_killed_before_its_commit_leaves_nothing(engine, db, visits, tmp_path, capsys, stage):
    spec = _spec(tmp_path)
    _killed_run(engine, db, spec, stage)  # at the last stage: staged, not committed
    assert not _out(tmp_path).exists()
    from anonsql.engine import connect

    fresh = connect(db)
    try:
        assert get_table(fresh, "visits") and not anonsql.release_plan(spec, fresh).existing_outputs
    finally:
        fresh.close()
    assert main(["release", "run", str(spec), "--db", db, "--quiet"]) == 0  # runs: the staged set is discarded
    said = capsys.readouterr().out
    assert "completed" not in said
    assert "WARNING: attribute disclosure in visits_" in said  # --quiet silences progress, not warnings
    assert _listing(tmp_path) == ["out", "visits.toml"]


def test_a_release_folder_that_cannot_be_made_is_refused_before_any_work(engine, db, visits, tmp_path, capsys):
    spec = _spec(tmp_path)
    spec.write_text(spec.read_text().replace('dir = "out"', 'dir = "blocker/out"'))
    (tmp_path / "rel" / "blocker").write_text("a file where the release folder's parent should be")
    code = main(["release", "run", str(spec), "--db", db, "--quiet"])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1
    assert "cannot create the release folder" in err and "blocker is not a writable folder" in err
    assert anonsql.release_plan(spec, engine).existing_outputs == []  # no step ran
    assert _listing(tmp_path) == ["blocker", "visits.toml"]
