"""evaluate (naive Bayes + tree, 10 folds) on a large table (issue 16): wall time and peak
memory in a fresh process per size. The anonymized table is the original with 10% of the QI
cells NULL. Today's implementation (HEAD, `git archive` into a temporary package imported by a
subprocess: benchmarks/common.py old_tree) runs beside the working tree's at every size up to
--old-rows, with the load averages before each; same_errors compares every error figure.

    python benchmarks/evaluate_speed.py [--rows 1000000] [--old-rows 100000]
        [--out benchmarks/results/evaluate_speed.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from common import finish, load_frame, measure_in, old_tree  # noqa: E402
from protect_scale import frame  # noqa: E402
from rss import peak_rss_mb  # noqa: E402

QI = [f"s{j}" for j in range(7)]


def run_one(db: str) -> dict:
    """One run in this process, with the `anonsql` it imports (the working tree's or HEAD's)."""
    import anonsql.api
    start = time.perf_counter()
    r = anonsql.api.evaluate_classifiers(db, "t", "a", qi=QI, class_column="diagnosis", key="patient_id", folds=10)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"seconds": round(time.perf_counter() - start, 2),
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),  # the process's CPU, less inflated by load
            "stage_seconds": {k: round(v, 2) for k, v in r.seconds.items()},
            "peak_rss_mb": peak_rss_mb(),  # its own VmHWM: ru_maxrss would carry the parent's
            "errors": {c.classifier: [c.error, c.baseline_error, c.fold_errors, c.baseline_fold_errors]
                       for c in r.classifiers.values()}}


def measure(db: str, tree: Path | None = None) -> dict:
    """`run_one` in a fresh process importing `anonsql` from `tree` (None: the working tree)."""
    return measure_in(tree, __file__, "--run", db)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--old-rows", type=int, default=100_000)
    ap.add_argument("--out")
    ap.add_argument("--run")
    args = ap.parse_args()
    if args.run:
        print(json.dumps(run_one(args.run)))
        return
    tmp = tempfile.mkdtemp(prefix="anonsql_eval_")
    result: dict = {"load_average_at_start": [round(x, 2) for x in os.getloadavg()],
                    "benchmark": "evaluate_speed", "folds": 10, "classifiers": ["nb", "tree"],
                    "targets": {"seconds": 60, "peak_mb": 1024}, "runs": []}
    for rows in dict.fromkeys((100_000, args.rows)):
        f = frame(rows)
        db = f"{tmp}/e{rows}.duckdb"
        load_frame(db, f, "t")
        rng = np.random.default_rng(1)
        for c in QI:
            f.loc[rng.random(rows) < 0.1, c] = None
        load_frame(db, f, "a")
        entry = {"rows": rows, "load_average_before": [round(x, 2) for x in os.getloadavg()], "new": measure(db)}
        if rows <= args.old_rows:
            entry["load_average_before_old"] = [round(x, 2) for x in os.getloadavg()]
            entry["old"] = measure(db, old_tree())
            entry["same_errors"] = entry["old"].get("errors") == entry["new"].get("errors")
        result["runs"].append(entry)
        print(json.dumps(entry), file=sys.stderr)
    finish(result, args.out)


if __name__ == "__main__":
    main()
