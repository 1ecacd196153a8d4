"""evaluate (naive Bayes + tree, 10 folds) on a large table (issue 16): wall time and peak
memory in a fresh process per size. The anonymized table is the original with 10% of the QI
cells NULL. Today's tree (float64 one-hot, one weighted row per (fold, QI vector, class)
combination, no merging across training folds) runs beside the new one at --old-rows.

    python benchmarks/evaluate_speed.py [--rows 1000000] [--old-rows 100000]
        [--out benchmarks/results/evaluate_speed.json]
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from common import load_frame  # noqa: E402
from protect_scale import frame  # noqa: E402

QI = [f"s{j}" for j in range(7)]


def run_one(db: str, old: bool) -> dict:
    import anonsql.api
    from anonsql.evaluate import tree
    if old:
        def one_hot(codes, domain):  # HEAD's float64 one-hot
            blocks = []
            for j, size in enumerate(domain):
                block = np.zeros((len(codes), size), dtype=np.float64)
                code = codes[:, j]
                known = code >= 0
                block[known.nonzero()[0], code[known]] = 1.0
                block[~known] = np.nan
                blocks.append(block)
            return np.hstack(blocks)
        tree.one_hot = one_hot
        tree.merged = lambda codes, classes, counts: (codes, classes, counts.astype(np.float64))
    start = time.perf_counter()
    r = anonsql.api.evaluate_classifiers(db, "t", "a", qi=QI, class_column="diagnosis", key="patient_id", folds=10)
    return {"seconds": round(time.perf_counter() - start, 2),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
            "errors": {c.classifier: [c.error, c.baseline_error] for c in r.classifiers.values()}}


def measure(db: str, old: bool = False) -> dict:
    out = subprocess.run([sys.executable, __file__, "--run", db] + (["--old"] if old else []),
                         capture_output=True, text=True)
    if out.returncode:
        return {"error": out.stderr.strip().splitlines()[-1:]}
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--old-rows", type=int, default=100_000)
    ap.add_argument("--out")
    ap.add_argument("--run")
    ap.add_argument("--old", action="store_true")
    args = ap.parse_args()
    if args.run:
        print(json.dumps(run_one(args.run, args.old)))
        return
    tmp = tempfile.mkdtemp(prefix="anonsql_eval_")
    result: dict = {"load_average_at_start": [round(x, 2) for x in os.getloadavg()],
              "benchmark": "evaluate_speed", "folds": 10, "classifiers": ["nb", "tree"],
                    "targets": {"seconds": 60, "peak_mb": 1024}, "runs": []}
    for rows in (args.old_rows, args.rows):
        f = frame(rows)
        db = f"{tmp}/e{rows}.duckdb"
        load_frame(db, f, "t")
        rng = np.random.default_rng(1)
        for c in QI:
            f.loc[rng.random(rows) < 0.1, c] = None
        load_frame(db, f, "a")
        entry = {"rows": rows, "new": measure(db)}
        if rows == args.old_rows:
            entry["old"] = measure(db, old=True)
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
