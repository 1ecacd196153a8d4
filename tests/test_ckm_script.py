"""The cell key method's --emit-sql script and --dry-run: a dry run writes nothing and says what
it would write; the script never holds the secret (nor its padded keys, nor a record key); run as
written (the padded keys bound by the reviewer) it builds the table the job builds, which the
audit re-derives and the script's own check finds no fault in; on DuckDB and PostgreSQL."""

from __future__ import annotations

import pytest

import anonsql
from anonsql.catalog import find_table
from anonsql.cli import main
from anonsql.data.loading import write_frame
from anonsql.errors import AnonsqlError
from anonsql.identifiers import read_key

from .conftest import table_rows
from .test_ckm import SECRET, _frame, _hmac_keys


def _statements(part: str) -> list[str]:
    """The statements of a script part, comments dropped."""
    bodies = ("\n".join(line for line in s.splitlines() if not line.startswith("--")).strip()
              for s in part.split(";\n"))
    return [b for b in bodies if b]


def _run(engine, text: str, params: dict | None = None) -> list:
    """Run a script as a reviewer would: its transaction, then its verification queries' rows."""
    body, checks = text.split("COMMIT;")
    engine.execute("BEGIN")
    for statement in _statements(body.split("BEGIN;")[1]):
        engine.execute(statement, {k: v for k, v in (params or {}).items() if f"{k}" in statement})
    engine.execute("COMMIT")
    return [engine.fetch_all(q, {k: v for k, v in (params or {}).items() if f"{k}" in q})
            for q in _statements(checks)]


def test_dry_run_writes_nothing_and_the_script_holds_no_secret(db, engine, tmp_path, monkeypatch, capsys):
    frame = _frame()
    write_frame(engine, frame, "census")
    monkeypatch.setenv("ANONSQL_PSEUDONYM_KEY", SECRET)
    script = tmp_path / "run.sql"
    r = anonsql.ckm_table(db, "census", "region,sex,age", record_key="pid", out="pub", emit_sql=str(script),
                          execute=False)
    assert not r.checks and r.emitted_sql == str(script)
    assert "would write pub" in r.summary() and "pub_ptable" in r.summary() and "unchanged" in r.summary()
    for name in ("pub", "pub_ptable", "pub_ckm_spec"):
        assert find_table(engine, name) is None
    text = script.read_text()
    assert "CREATE TABLE" in text and "pub_ptable" in text and "bind $ipad and $opad" in text
    key = read_key(None)
    rkeys = _hmac_keys(frame.pid.tolist(), SECRET)
    leaks = [SECRET, key.ipad.hex(), key.opad.hex(), key.ipad.hex().upper(), repr(key.ipad)[2:40],
             *[f"{k:08x}" for k in rkeys], *[str(k) for k in rkeys]]
    assert not [s for s in leaks if s in text]
    # the CLI: --dry-run with --emit-sql, the summary says what it would write; --dry-run alone refused
    code = main(["tables", "--db", db, "--table", "census", "--dims", "region,sex", "--method", "ckm",
                 "--record-key", "pid", "--out", "pub", "--emit-sql", str(tmp_path / "cli.sql"), "--dry-run"])
    assert code == 0 and "would write pub" in capsys.readouterr().out
    assert SECRET not in (tmp_path / "cli.sql").read_text()
    assert find_table(engine, "pub") is None
    assert main(["tables", "--db", db, "--table", "census", "--dims", "region,sex", "--method", "ckm",
                 "--record-key", "pid", "--dry-run"]) == 2
    with pytest.raises(AnonsqlError, match="dry run needs --emit-sql"):
        anonsql.ckm_table(db, "census", "region,sex", record_key="pid", execute=False)
    with pytest.raises(AnonsqlError, match="--emit-sql"):
        anonsql.ckm_table(db, "census", "region,sex", record_key="pid", emit_sql=str(tmp_path / "no" / "x.sql"))
    assert find_table(engine, "census_ckm") is None


@pytest.mark.parametrize("keys", ["column", "hmac"])
def test_the_script_builds_the_table_the_job_builds(db, engine, tmp_path, monkeypatch, keys):
    frame = _frame()
    write_frame(engine, frame.assign(rk=(frame.pid % 97) / 97.0), "census")
    monkeypatch.setenv("ANONSQL_PSEUDONYM_KEY", SECRET)
    how = dict(record_key_column="rk") if keys == "column" else dict(record_key="pid")
    job = anonsql.ckm_table(db, "census", "region,sex,age", D=2, V=1.0, js=2, out="job", **how)
    script = tmp_path / "run.sql"
    anonsql.ckm_table(db, "census", "region,sex,age", D=2, V=1.0, js=2, out="pub", emit_sql=str(script),
                      execute=False, **how)
    key = read_key(None)
    params = {"ipad": key.ipad, "opad": key.opad} if keys == "hmac" else None
    assert _run(engine, script.read_text(), params) == [[]]  # the script's check: no faulty cell
    assert job.ok and table_rows(engine, "pub") == table_rows(engine, "job")
    assert table_rows(engine, "pub_ptable") == table_rows(engine, "job_ptable")
    assert anonsql.audit_table(db, "pub").ok
    # the check finds a changed cell
    engine.execute("UPDATE pub SET value = value + 1 WHERE grouping_id = 7")
    assert len(_run_checks(engine, script.read_text(), params)) == 1


def _run_checks(engine, text: str, params: dict | None) -> list:
    checks = text.split("COMMIT;")[1]
    return [row for q in _statements(checks)
            for row in engine.fetch_all(q, {k: v for k, v in (params or {}).items() if k in q})]


def test_a_job_run_with_emit_sql_writes_the_table_and_the_script(db, engine, tmp_path):
    frame = _frame()
    write_frame(engine, frame.assign(rk=(frame.pid % 89) / 89.0), "census")
    script = tmp_path / "run.sql"
    assert main(["tables", "--db", db, "--table", "census", "--dims", "region,sex", "--method", "ckm",
                 "--record-key-column", "rk", "--sum", "pid", "--out", "pub", "--emit-sql", str(script),
                 "--json"]) == 0
    assert find_table(engine, "pub") is not None and "publish_sum.sql" in script.read_text()
    assert _run_checks(engine, script.read_text(), None) == []

