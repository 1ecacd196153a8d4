"""Time the whole `kanon` job (SQL statistics + loop + rewrite + verify) on Adult and on
Adult-like tables of 10^4..10^6 rows, against the plain reference loop in the same run.

    python benchmarks/kanon_speed.py [--max-rows 1000000] [--no-postgres] [--no-reference]

Prints JSON. The baseline is the reference implementation of the loop (a straightforward
vectorized numpy one, anonsql.kanon.anonymize(reference=True)), timed on the same arrays.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from common import KH_CLASS, KH_QI, adult_kh_frame, engines, load_frame, synthetic_adult  # noqa: E402

import anonsql  # noqa: E402
from anonsql import catalog, kanon, stats  # noqa: E402
from anonsql.engine import connect  # noqa: E402


def job(db: str, table: str, k: int, cost: str) -> dict:
    start = time.perf_counter()
    r = anonsql.k_anonymize(db, table, KH_QI, KH_CLASS, k, cost=cost, seed=0, out=f"{table}_out", replace=True)
    total = time.perf_counter() - start
    return {"seconds": round(total, 3), "stages": {s: round(v, 3) for s, v in r.seconds.items()},
            "groups": r.groups, "iterations": r.iterations, "suppressed_ratio": round(r.suppressed_ratio, 4),
            "kl_divergence": float(f"{r.kl_divergence:.4g}"), "ok": r.ok}


def reference_loop(db: str, table: str, k: int, cost: str) -> dict:
    eng = connect(db)
    groups = stats.qi_class_counts(eng, catalog.get_table(eng, table), KH_QI, KH_CLASS)
    eng.close()
    args = (groups.codes, groups.classes, groups.counts, groups.domain_sizes)
    start = time.perf_counter()
    ref = kanon.anonymize(*args, k=k, cost=cost, seed=0, reference=True)
    seconds = time.perf_counter() - start
    fast = kanon.anonymize(*args, k=k, cost=cost, seed=0)
    return {"reference_loop_seconds": round(seconds, 3),
            "same_result_as_reference": bool(np.array_equal(ref.final_codes, fast.final_codes))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-rows", type=int, default=1_000_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--cost", default="mar")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-reference", action="store_true", help="skip the slow reference loop")
    args = parser.parse_args()
    sizes = [n for n in (10_000, 100_000, 1_000_000) if n <= args.max_rows]
    tables = {"adult": adult_kh_frame()} | {f"synthetic_{n}": synthetic_adult(n, seed=0) for n in sizes}
    out = {"benchmark": "kanon whole job", "k": args.k, "cost": args.cost, "results": []}
    with tempfile.TemporaryDirectory() as tmp, engines(tmp, not args.no_postgres) as dbs:
        for name, frame in tables.items():
            row = {"table": name, "rows": len(frame)}
            for engine, db in dbs.items():
                load_frame(db, frame, name)
                row[engine] = job(db, name, args.k, args.cost)
            if name == "adult" and not args.no_reference:
                row |= reference_loop(dbs["duckdb"], name, args.k, args.cost)
                row["speedup_whole_job_vs_reference_loop"] = round(
                    row["reference_loop_seconds"] / row["duckdb"]["seconds"], 1)
            print(json.dumps(row), file=sys.stderr)
            out["results"].append(row)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
