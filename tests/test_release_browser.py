"""The release report opens in a real browser: headless Chromium renders the example release's page,
its DOM dump shows the tables and the embedded plots, and its screenshot is a real picture.
Skipped without Chromium (Debian package `chromium`), a failure under CI=true."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

import anonsql
from anonsql.engine import connect

from .test_release import EXAMPLE, _adult_with_id

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    """The example release run on DuckDB; its HTML report."""
    folder = tmp_path_factory.mktemp("release")
    spec = folder / "adult.toml"
    shutil.copy(EXAMPLE, spec)
    engine = connect(str(folder / "adult.duckdb"), create=True)
    try:
        _adult_with_id(engine)
        anonsql.release_run(spec, engine)
    finally:
        engine.close()
    return folder / "adult.release" / "report.html"


def _browser(binary: str, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([binary, *FLAGS, f"--user-data-dir={tmp / 'profile'}", *args], capture_output=True,
                          text=True, timeout=120, check=True)


def test_report_renders_in_chromium(page, tmp_path, chromium):
    binary = chromium
    dom = _browser(binary, tmp_path, "--dump-dom", page.as_uri()).stdout
    for section in ("Gates", "What was published", "Risk before and after", "Equivalence class sizes",
                    "Suppressed cells per column", "Classifier error before and after", "Attacks on what is published",
                    "Definitions"):
        assert f"<h2>{section}</h2>" in dom
    # the three figures of the proof and the attacks' risk by class size (release/html.py)
    assert dom.count("<table") >= 7 and dom.count('src="data:image/png;base64,') == 4
    assert "adult_k10" in dom and "pass" in dom and "FAIL" not in dom

    shot = tmp_path / "report.png"
    _browser(binary, tmp_path, f"--screenshot={shot}", "--window-size=1200,2400", page.as_uri())
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1200, 2400)
    assert len(data) > 50_000  # a rendered page of tables and plots, not a blank one
