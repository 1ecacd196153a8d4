"""Shared benchmark helpers: timing, the synthetic Adult-like table, a PostgreSQL server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

import anonsql
from anonsql.data.loading import write_frame
from anonsql.engine import connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))  # the repository, for tests.pgserver (last: never ahead of an old tree)
from tests.pgserver import TempPostgres, find_bindir  # noqa: E402

KH_QI = ["age", "workclass", "education", "marital_status", "occupation", "race", "sex", "native_country"]
KH_CLASS = "income"


def old_tree(ref: str = "HEAD") -> Path:
    """The committed implementation (`git archive <ref> anonsql sql`) extracted into a temporary
    directory: a subprocess given `old_env(...)` imports it as `anonsql`, so today's code runs
    beside the working tree's in the same benchmark run."""
    tmp = Path(tempfile.mkdtemp(prefix="anonsql_old_"))
    archive = subprocess.run(["git", "archive", ref, "anonsql", "sql", "fixtures"], cwd=ROOT, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
    # the data packages as the wheel lays them out (pyproject.toml), so that the old code reads
    # its own SQL files, not the working tree's (which an editable install maps them to)
    for data, package in (("sql", "_sql"), ("fixtures", "_fixtures")):
        (tmp / data).rename(tmp / "anonsql" / package)
        (tmp / "anonsql" / package / "__init__.py").touch()
    return tmp


def old_env(tree: Path | None) -> dict[str, str]:
    """The environment of a subprocess that imports `anonsql` from `tree` (None: the working tree)."""
    first = str(tree) if tree is not None else str(ROOT)
    rest = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": first + (os.pathsep + rest if rest else "")}


def best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    """The fastest of `repeat` wall-clock runs, in seconds (the least disturbed one)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def adult_kh_frame() -> pd.DataFrame:
    """The Kameya & Hayashi Adult table (30,161 rows) as a DataFrame, via an in-memory DuckDB."""
    eng = connect(":memory:")
    anonsql.load_dataset(eng, "adult-kh", "adult")
    frame = eng.fetch_df('SELECT * FROM "adult"')
    eng.close()
    return frame


def synthetic_adult(rows: int, seed: int = 0) -> pd.DataFrame:
    """`rows` rows like Adult: the class drawn from Adult's class frequencies, then each QI
    drawn independently from Adult's class-conditional frequencies N(x_j, c) / N(c)."""
    rng = np.random.default_rng(seed)
    base = adult_kh_frame()
    classes = base[KH_CLASS].value_counts(normalize=True).sort_index()
    labels = rng.choice(classes.index.to_numpy(), size=rows, p=classes.to_numpy())
    out = {KH_CLASS: labels}
    for col in KH_QI:
        values = np.empty(rows, dtype=object)
        for c in classes.index:
            mask = labels == c
            freq = base.loc[base[KH_CLASS] == c, col].value_counts(normalize=True).sort_index()
            values[mask] = rng.choice(freq.index.to_numpy(), size=int(mask.sum()), p=freq.to_numpy())
        out[col] = values
    return pd.DataFrame(out)[KH_QI + [KH_CLASS]]


def load_frame(db: str, frame: pd.DataFrame, table: str) -> None:
    eng = connect(db, create=True)
    write_frame(eng, frame, table, replace=True)
    eng.close()


@contextmanager
def engines(tmp_dir: str, with_postgres: bool = True) -> Iterator[dict[str, str]]:
    """{'duckdb': path, 'postgres': url} -- PostgreSQL only when its binaries are installed."""
    dbs = {"duckdb": f"{tmp_dir}/bench.duckdb"}
    if not (with_postgres and find_bindir()):
        yield dbs
        return
    with TempPostgres() as url:
        dbs["postgres"] = url
        yield dbs


def finish(result: dict, out: str | None) -> None:
    """Record the load average at the end, print the one JSON document, and save it to `out`."""
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    result["note_load"] = ("the machine may be shared: the 1/5/15-minute load averages (os.getloadavg) are "
                           "recorded at start and end; figures taken under load are inflated by contention")
    text = json.dumps(result, indent=2)
    print(text)
    if out:
        Path(out).write_text(text + "\n")


def measure_in(tree: Path | None, script: str, *args: str) -> dict:
    """Run `script *args` in a fresh process importing `anonsql` from `tree` (None: the working
    tree) and return the JSON it prints, or {"error": its last stderr line}."""
    out = subprocess.run([sys.executable, script, *args], env=old_env(tree), capture_output=True, text=True)
    if out.returncode:
        return {"error": out.stderr.strip().splitlines()[-1:]}
    return json.loads(out.stdout)
