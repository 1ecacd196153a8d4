"""Scale of the features job (Zhang et al. 2017) on wide sparse binary tables, DuckDB.

A synthetic table of 10,000 rows x up to 5,000 binary columns at 1% density (the issue's
setting), class drawn with a signal on the first 50 columns. For each width: the seconds of
the SQL statistics (mask words + column sums), of the selection and of the SQL verification
for Greedy HamDist and Greedy DistCnt in both modes (paper 'stop' and 'skip'). Baseline in
the same run: one full scan summing every column (the least any statistic over d columns
costs), so the statistics' cost is also given as a multiple of it.

    python benchmarks/features_scale.py [--rows 10000] [--cols 500,1000,2000,5000] [--k 5]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

import duckdb
import numpy as np

from anonsql import sql
from anonsql.engine import connect
from anonsql.features.job import select_features


def make_table(path: str, rows: int, cols: int, density: float, seed: int) -> None:
    """Write the sparse table straight through DuckDB (a 5,000-column frame is fine in Arrow)."""
    rng = np.random.default_rng(seed)
    x = (rng.random((rows, cols)) < density).astype(np.int8)
    signal = x[:, : min(50, cols)].sum(axis=1)
    label = np.where(rng.random(rows) < 0.2 + 0.3 * (signal > 0), "pos", "neg")
    con = duckdb.connect(path)
    import pyarrow as pa
    arrays = [pa.array(x[:, j]) for j in range(cols)] + [pa.array(label)]
    frame = pa.Table.from_arrays(arrays, names=[f"f{j}" for j in range(cols)] + ["cls"])
    con.register("frame", frame)
    con.execute("CREATE TABLE wide AS SELECT * FROM frame")
    con.close()


def full_scan_seconds(db: str, cols: int) -> float:
    eng = connect(db)
    text, params = sql.render("features/class_sums", eng.dialect, tbl=sql.TableName("wide").expr,
                              cls=sql.column("cls"), col=sql.columns([f"f{j}" for j in range(min(cols, 400))]))
    start = time.perf_counter()
    for lo in range(0, cols, 400):
        eng.fetch_all(text, params)  # one chunk's scan, repeated as many times as chunks
    eng.close()
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--cols", default="500,1000,2000,5000")
    ap.add_argument("--density", type=float, default=0.01)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    results = []
    for cols in [int(c) for c in args.cols.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            db = f"{tmp}/wide.duckdb"
            make_table(db, args.rows, cols, args.density, args.seed)
            entry = {"rows": args.rows, "cols": cols, "density": args.density, "k": args.k,
                     "baseline_scan_s": round(full_scan_seconds(db, cols), 3), "runs": []}
            eng = connect(db)
            for method in ("hamdist", "distcnt"):
                for mode in ("stop", "skip"):
                    start = time.perf_counter()
                    r = select_features(eng, "wide", "cls", args.k, method=method, mode=mode,
                                        out=f"pub_{method}_{mode}")
                    total = time.perf_counter() - start
                    entry["runs"].append({
                        "method": method, "mode": mode, "total_s": round(total, 3),
                        **{f"{k}_s": round(v, 3) for k, v in r.seconds.items()},
                        "statistics_vs_scan": round(r.seconds["statistics"] / max(entry["baseline_scan_s"], 1e-9), 2),
                        "selected": len(r.selected), "ac": r.ac, "hamdist": round(r.hamdist, 4),
                        "distcnt": round(r.distcnt, 4), "skipped": r.skipped})
            eng.close()
            results.append(entry)
            print(json.dumps(entry), flush=True)
    print(json.dumps({"summary": [{"cols": e["cols"], **{f"{r['method']}_{r['mode']}_s": r["total_s"]
                                                          for r in e["runs"]}} for e in results]}))


if __name__ == "__main__":
    main()
