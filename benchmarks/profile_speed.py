"""Time `anonsql profile` (8 QIs + class) on Adult and on a 1,000,000-row table, DuckDB vs
PostgreSQL. Prints JSON; the ratio compares the engines in the same run.

    python benchmarks/profile_speed.py [--rows 1000000]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import KH_CLASS, KH_QI, adult_kh_frame, best_of, engines, load_frame, synthetic_adult  # noqa: E402

import anonsql  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the synthetic table")
    args = parser.parse_args()
    tables = {"adult": adult_kh_frame(), f"synthetic_{args.rows}": synthetic_adult(args.rows, seed=0)}
    results = []
    with tempfile.TemporaryDirectory() as tmp, engines(tmp) as dbs:
        for name, frame in tables.items():
            row = {"table": name, "rows": len(frame)}
            for engine, db in dbs.items():
                load_frame(db, frame, name)
                row[f"{engine}_seconds"] = round(
                    best_of(lambda db=db, name=name: anonsql.profile(db, name, qi=KH_QI, class_column=KH_CLASS)), 4)
            if "postgres_seconds" in row:
                row["postgres_over_duckdb"] = round(row["postgres_seconds"] / row["duckdb_seconds"], 2)
            results.append(row)
            print(json.dumps(row), file=sys.stderr)
    print(json.dumps({"benchmark": "profile", "qi": len(KH_QI), "results": results}, indent=2))


if __name__ == "__main__":
    main()
