"""protect on a large table (issue 16): 10 confidential cells of a synthetic table with 8
categorical columns, wall time and peak memory (each run in its own process), on DuckDB and
PostgreSQL; today's (HEAD) algorithm modules are run beside the new ones at the sizes given
by --old-rows (where they finish).

    python benchmarks/protect_scale.py [--rows 1000000] [--pg-rows 1000000] [--old-rows 20000]
        [--method dropp] [--out benchmarks/results/protect_scale.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from common import TempPostgres, load_frame  # noqa: E402


def frame(rows: int, seed: int = 0) -> pd.DataFrame:
    """patient_id and 8 categorical columns; diagnosis depends on three symptoms plus noise."""
    rng = np.random.default_rng(seed)
    cols = {f"s{j}": rng.integers(0, 3 + j, size=rows) for j in range(7)}
    dx = (cols["s0"] + cols["s1"] + cols["s2"]) % 5
    noise = rng.random(rows) < 0.3
    cols["diagnosis"] = np.where(noise, rng.integers(0, 5, size=rows), dx)
    out = pd.DataFrame({"patient_id": np.arange(1, rows + 1)})
    for c, v in cols.items():
        out[c] = pd.Series(v).map(lambda x, c=c: f"{c}_{x}")
    return out


def run_one(db: str, method: str, old: bool, n: int) -> dict:
    """One protect run in this process: seconds and peak RSS."""
    from anonsql.protect import job
    if old:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import importlib

        from protect_speed import old_package
        name = old_package()
        d = importlib.import_module(f"{name}.deletion")
        s = importlib.import_module(f"{name}.suppress")
        g = importlib.import_module(f"{name}.generalization")
        job.Microdata, job.GeneralizedMicrodata = d.Microdata, g.GeneralizedMicrodata
        job.SeededChance, job.protect_cells = d.SeededChance, lambda *a, progress=None, **k: s.protect_cells(*a, **k)
    import anonsql
    rows = [str(1 + r * (n // 10)) for r in range(10)]
    start = time.perf_counter()
    r = anonsql.protect_table(db, "t", "patient_id", target="diagnosis", rows=rows, method=method, replace=True,
                              top_k=2 if old else None)
    return {"seconds": round(time.perf_counter() - start, 2), "peak_rss_mb": resource.getrusage(
        resource.RUSAGE_SELF).ru_maxrss // 1024, "ok": r.ok, "changed_cells": r.changed_cells,
        "stages": {k: round(v, 2) for k, v in r.seconds.items()} if isinstance(r.seconds, dict) else r.seconds}


def measure(db: str, method: str, n: int, old: bool = False) -> dict:
    out = subprocess.run([sys.executable, __file__, "--run", db, "--method", method, "--rows", str(n)]
                         + (["--old"] if old else []),
                         capture_output=True, text=True)
    if out.returncode:
        return {"error": out.stderr.strip().splitlines()[-1:]}
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--pg-rows", type=int, default=1_000_000)
    ap.add_argument("--old-rows", type=int, default=20_000)
    ap.add_argument("--method", default="dropp")
    ap.add_argument("--no-postgres", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--run")
    ap.add_argument("--old", action="store_true")
    args = ap.parse_args()
    if args.run:
        print(json.dumps(run_one(args.run, args.method, args.old, args.rows)))
        return
    tmp = tempfile.mkdtemp(prefix="anonsql_scale_")
    result: dict = {"load_average_at_start": [round(x, 2) for x in os.getloadavg()],
              "benchmark": "protect_scale", "method": args.method, "cells": 10, "columns": 8,
                    "targets": {"duckdb_1e6_seconds": 30, "duckdb_1e6_peak_mb": 1024, "postgres": "within 3x"},
                    "runs": []}
    sizes = [("duckdb", args.old_rows, True), ("duckdb", args.rows, False)]
    for engine_name, rows, with_old in sizes:
        db = f"{tmp}/t{rows}.duckdb"
        load_frame(db, frame(rows), "t")
        entry = {"engine": engine_name, "rows": rows, "new": measure(db, args.method, rows)}
        if with_old:
            entry["old"] = measure(db, args.method, rows, old=True)
        result["runs"].append(entry)
        print(json.dumps(entry), file=sys.stderr)
    if not args.no_postgres:
        with TempPostgres() as url:
            for rows, with_old in ((args.old_rows, True), (args.pg_rows, False)):
                load_frame(url, frame(rows), "t")
                entry = {"engine": "postgres", "rows": rows, "new": measure(url, args.method, rows)}
                if with_old:
                    entry["old"] = measure(url, args.method, rows, old=True)
                result["runs"].append(entry)
                print(json.dumps(entry), file=sys.stderr)
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    result["note_load"] = ("the machine is shared with other helpers: the 1/5/15-minute load averages "
                           "(os.getloadavg) are recorded at start and end; figures are inflated by contention")
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
