"""protect on a large table (issue 16): 10 confidential cells of a synthetic table with 8
categorical columns, wall time and peak memory (each run in its own process), on DuckDB and
PostgreSQL; today's implementation (HEAD, `git archive` into a temporary package imported by a
subprocess: benchmarks/common.py old_tree) runs beside the working tree's at --old-rows.

    python benchmarks/protect_scale.py [--rows 1000000] [--pg-rows 1000000] [--old-rows 20000]
        [--method dropp] [--old-ref HEAD] [--out benchmarks/results/protect_scale.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from common import TempPostgres, finish, load_frame, measure_in, old_tree  # noqa: E402
from rss import peak_rss_mb  # noqa: E402


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


def run_one(db: str, method: str, n: int) -> dict:
    """One protect run in this process (with the `anonsql` it imports): seconds and peak RSS."""
    import anonsql
    rows = [str(1 + r * (n // 10)) for r in range(10)]
    start = time.perf_counter()
    r = anonsql.protect_table(db, "t", "patient_id", target="diagnosis", rows=rows, method=method, replace=True)
    return {"seconds": round(time.perf_counter() - start, 2), "peak_rss_mb": peak_rss_mb(), "ok": r.ok,
            "changed_cells": r.changed_cells,
            "stages": {k: round(v, 2) for k, v in r.seconds.items()} if isinstance(r.seconds, dict) else r.seconds,
            "anonsql": str(Path(anonsql.__file__).parent)}


def measure(db: str, method: str, n: int, tree: Path | None = None) -> dict:
    """`run_one` in a fresh process importing `anonsql` from `tree` (None: the working tree)."""
    return measure_in(tree, __file__, "--run", db, "--method", method, "--rows", str(n))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--pg-rows", type=int, default=1_000_000)
    ap.add_argument("--old-rows", type=int, default=20_000)
    ap.add_argument("--method", default="dropp")
    ap.add_argument("--old-ref", default="HEAD", help="the committed implementation to compare with")
    ap.add_argument("--no-postgres", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--only-duckdb-rows", type=int, help="one DuckDB size, new beside old (for profiling)")
    ap.add_argument("--run", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.run:
        print(json.dumps(run_one(args.run, args.method, args.rows)))
        return
    old = old_tree(args.old_ref)
    tmp = tempfile.mkdtemp(prefix="anonsql_scale_")
    result: dict = {"load_average_at_start": [round(x, 2) for x in os.getloadavg()],
              "benchmark": "protect_scale", "old_ref": args.old_ref, "method": args.method, "cells": 10, "columns": 8,
                    "targets": {"duckdb_1e6_seconds": 30, "duckdb_1e6_peak_mb": 1024, "postgres": "within 3x"},
                    "runs": []}
    sizes = [("duckdb", args.old_rows, True)] + ([("duckdb", args.rows, False)] if args.rows > args.old_rows else [])
    if args.only_duckdb_rows:
        sizes = [("duckdb", args.only_duckdb_rows, True)]
    for engine_name, rows, with_old in sizes:
        db = f"{tmp}/t{rows}.duckdb"
        load_frame(db, frame(rows), "t")
        entry = {"engine": engine_name, "rows": rows, "new": measure(db, args.method, rows)}
        if with_old:
            entry["old"] = measure(db, args.method, rows, old)
        result["runs"].append(entry)
        print(json.dumps(entry), file=sys.stderr)
    if not (args.no_postgres or args.only_duckdb_rows):
        with TempPostgres() as url:
            for rows, with_old in [(args.old_rows, True)] + ([(args.pg_rows, False)] if args.pg_rows > args.old_rows
                                                             else []):
                load_frame(url, frame(rows), "t")
                entry = {"engine": "postgres", "rows": rows, "new": measure(url, args.method, rows)}
                if with_old:
                    entry["old"] = measure(url, args.method, rows, old)
                result["runs"].append(entry)
                print(json.dumps(entry), file=sys.stderr)
    finish(result, args.out)


if __name__ == "__main__":
    main()
