"""kanon with distinct l-diversity beside plain k-anonymity on the same table (issue 32's target:
the whole job <= 2x plain, peak memory <= 1.5x plain, at 10^7 rows x 8 QIs, one sensitive column, l = 3).

    python benchmarks/kanon_diversity_scale.py [--sizes 1e6,3e6] [--l 3] > benchmarks/results/kanon_diversity_scale.json

Rows: benchmarks/kanon_scale.py's Adult-like table (8 QIs of Kameya & Hayashi, class income), plus a
sensitive column `diagnosis` of 10 values drawn independently of the rest with Zipf weights 1/i
(the most common value 34% of rows, the rarest 3.4%: small classes often hold fewer than 3 of them).
Both jobs run in fresh processes on the same DuckDB file, mar, k = 10, seed 0, one after the other:
plain, then `--l-diversity diagnosis=3`. Per job: wall seconds start to exit, CPU seconds of the
process (user + system, every thread: the machine is shared, the wall clock also measures the
other processes), the job's stages, peak RSS (benchmarks/rss.py), and the ratios l / plain.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import duckdb  # noqa: E402
import numpy as np  # noqa: E402
from common import KH_CLASS, KH_QI  # noqa: E402
from kanon_scale import adult_like  # noqa: E402

SENSITIVE = "diagnosis"

JOB = f"""
import json, resource, sys, time
start = time.perf_counter()
import anonsql
db, table, level = sys.argv[1], sys.argv[2], int(sys.argv[3])
extra = {{"l_diversity": {{{SENSITIVE!r}: level}}}} if level > 1 else {{}}
r = anonsql.k_anonymize(db, table, {KH_QI!r}, {KH_CLASS!r}, 10, cost="mar", seed=0, out=table + "_out",
                        replace=True, **extra)
seconds = time.perf_counter() - start
use = resource.getrusage(resource.RUSAGE_SELF)
sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
from rss import peak_rss_mb
print(json.dumps({{"seconds": round(seconds, 3), "cpu_seconds": round(use.ru_utime + use.ru_stime, 3),
                  "stages": {{k: round(v, 3) for k, v in r.seconds.items()}}, "groups": r.groups,
                  "iterations": r.iterations, "ok": r.ok, "suppressed_ratio": round(r.suppressed_ratio, 5),
                  "peak_rss_mb": peak_rss_mb()}}))
"""


def build(db: str, rows: int, table: str) -> None:
    """kanon_scale's Adult-like table plus the sensitive column (seed 1), as VARCHAR columns."""
    frame = adult_like(rows)
    weights = 1.0 / np.arange(1, 11)
    frame[SENSITIVE] = np.array([f"d{i}" for i in range(10)])[
        np.random.default_rng(1).choice(10, size=rows, p=weights / weights.sum())]
    con = duckdb.connect(db)
    con.register("frame", frame)
    cols = ", ".join(f'CAST("{c}" AS VARCHAR) AS "{c}"' for c in frame.columns)
    con.execute(f'CREATE OR REPLACE TABLE "{table}" AS SELECT {cols} FROM frame')
    con.close()


def job(db: str, table: str, level: int, timeout: float) -> dict:
    try:
        done = subprocess.run([sys.executable, "-c", JOB, db, table, str(level)], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"finished": False, "timeout_seconds": timeout}
    if done.returncode:
        return {"finished": False, "error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout) | {"finished": True}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1e6,3e6")
    parser.add_argument("--l", type=int, default=3)
    parser.add_argument("--job-timeout", type=float, default=1800.0)
    args = parser.parse_args()
    out = {"benchmark": f"kanon mar k = 10, 8 QIs: plain vs --l-diversity {SENSITIVE}={args.l} (DuckDB)",
           "cpus": os.cpu_count(), "targets": {"seconds_x_plain": 2.0, "peak_rss_x_plain": 1.5}, "results": []}
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(float(s)) for s in args.sizes.split(",") if s]:
            db, table = f"{tmp}/div_{n}.duckdb", f"adult_{n}"
            build(db, n, table)
            row: dict = {"rows": n, "load_average": os.getloadavg()[0]}
            row["plain"] = job(db, table, 1, args.job_timeout)
            row[f"l{args.l}"] = job(db, table, args.l, args.job_timeout)
            plain, div = row["plain"], row[f"l{args.l}"]
            if plain.get("finished") and div.get("finished"):
                row["x_plain"] = {key: round(div[key] / plain[key], 2)
                                  for key in ("seconds", "cpu_seconds", "peak_rss_mb")}
                row["x_plain"]["loop"] = round(div["stages"]["loop"] / plain["stages"]["loop"], 2)
            row["load_average_after"] = os.getloadavg()[0]
            print(json.dumps(row), file=sys.stderr, flush=True)
            out["results"].append(row)
            os.remove(db)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
