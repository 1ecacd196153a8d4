"""Time and peak memory of `anonsql load` on a generated hospital CSV (10^6 rows by default):
the DuckDB-reader loader of this checkout against the baseline of the pandas/csv-module loader
it replaced (taken from git, `--baseline-rev`, run in the same process layout), and DuckDB's own
`read_csv_auto` as the floor. Each load runs in a fresh subprocess, so its peak RSS is its own.
Prints JSON.

    python benchmarks/load_speed.py [--rows 1000000] [--baseline-rev 444f8c3] [--no-postgres]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import engines  # noqa: E402

# One load, measured inside a child process: wall seconds and peak RSS (benchmarks/rss.py: the
# child's own VmHWM; ru_maxrss would carry the parent's). argv[5]: the benchmarks directory.
_CHILD = r"""
import json, sys, time, importlib.util
mode, csv_path, db = sys.argv[1:4]
import anonsql
from anonsql.engine import connect
start = time.perf_counter()
if mode == "new":
    anonsql.load_csv(db, csv_path, "hospital", replace=True)
elif mode == "duckdb_read_csv_auto":
    import duckdb
    con = duckdb.connect(db)
    con.execute("CREATE OR REPLACE TABLE hospital AS SELECT * FROM read_csv_auto(?)", [csv_path])
    con.close()
else:
    spec = importlib.util.spec_from_file_location("anonsql.data.old_loading", sys.argv[4])
    old = importlib.util.module_from_spec(spec); sys.modules[spec.name] = old; spec.loader.exec_module(old)
    frame = old.read_csv(csv_path, ())
    eng = connect(db, create=True)
    old.write_frame(eng, frame, "hospital", replace=True)
    eng.close()
seconds = time.perf_counter() - start
sys.path.insert(0, sys.argv[5])
from rss import peak_rss_mb
peak_mb = peak_rss_mb()
print(json.dumps({"seconds": round(seconds, 2), "peak_mb": peak_mb}))
"""


def hospital_csv(path: Path, rows: int, seed: int = 0) -> None:
    """A steward's table: ids, ZIPs with leading zeros, 20-digit codes, dates, categories."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "patient_id": np.arange(1, rows + 1),
        "zip": [f"{z:05d}" for z in rng.integers(500, 99_999, rows)],
        "birth_year": rng.integers(1930, 2010, rows),
        "sex": rng.choice(["F", "M"], rows),
        "ethnicity": rng.choice(["A", "B", "C", "D", "E"], rows),
        "admit_date": (pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 1500, rows), unit="D")).strftime(
            "%Y-%m-%d"),
        "claim_code": [f"{c:020d}" for c in rng.integers(10**17, 9 * 10**18, rows)],
        "diagnosis": rng.choice([f"D{i:02d}" for i in range(40)], rows),
        "cost": np.round(rng.gamma(2.0, 800.0, rows), 2),
    })
    frame.to_csv(path, index=False)


def run(mode: str, csv_path: Path, db: str, old_module: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, mode, str(csv_path), db, str(old_module),
                          str(Path(__file__).resolve().parent)],
                         capture_output=True, text=True, cwd=ROOT)
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--baseline-rev", default="444f8c3", help="git revision of the old loader")
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp, engines(tmp, with_postgres=not args.no_postgres) as dbs:
        csv_path, old_module = Path(tmp) / "hospital.csv", Path(tmp) / "old_loading.py"
        hospital_csv(csv_path, args.rows)
        old_module.write_text(subprocess.run(["git", "show", f"{args.baseline_rev}:anonsql/data/loading.py"],
                                             capture_output=True, text=True, check=True, cwd=ROOT).stdout
                              .replace("from .. import", "from anonsql import")
                              .replace("from ..", "from anonsql."))
        for engine, db in dbs.items():
            modes = ["baseline", "new"] + (["duckdb_read_csv_auto"] if engine == "duckdb" else [])
            row: dict = {"engine": engine, "rows": args.rows, "csv_mb": round(csv_path.stat().st_size / 2**20)}
            for mode in modes:
                row[mode] = run(mode, csv_path, db, old_module)
            if "seconds" in row["baseline"] and "seconds" in row["new"]:
                row["speedup"] = round(row["baseline"]["seconds"] / row["new"]["seconds"], 1)
                row["memory_ratio"] = round(row["baseline"]["peak_mb"] / row["new"]["peak_mb"], 1)
            results.append(row)
            print(json.dumps(row), file=sys.stderr)
    print(json.dumps({"benchmark": "load", "results": results}, indent=2))


if __name__ == "__main__":
    main()
