"""Scale of the features job (Zhang et al. 2017) on wide sparse binary tables, DuckDB (issue 11).

A synthetic table of `rows` x 5,000 binary columns at 1% density, class drawn with a signal on
the first 50 columns (the same table as before: the row blocks are drawn from one generator, so
its first 10,000 rows are the 10,000-row table). For each size, Greedy HamDist and Greedy
DistCnt in both modes (the paper's 'stop' and 'skip'), whole job and per stage, by:

* this checkout, in this process;
* the baseline, in the same run: the implementation of a git commit (default HEAD: the code
  before this checkout's changes) extracted with `git archive` to a temporary directory and
  imported through PYTHONPATH in a subprocess, each run under a time limit (`--old-timeout`).

Where both finish, the selected features, AC, k, HamDist, DistCnt and the skipped count must be
identical (`same_results`). The machine may be shared: os.getloadavg() is recorded at the start
and the end; under load the absolute seconds are inflated, the ratios less so.

    python benchmarks/features_scale.py [--rows 10000,100000] [--cols 5000] [--out FILE]

One JSON document on stdout (and in --out); progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from anonsql.engine import connect
from anonsql.features.job import select_features

REPO = Path(__file__).resolve().parent.parent
RUNS = [(method, mode) for method in ("hamdist", "distcnt") for mode in ("stop", "skip")]

# One run of the job in a fresh process that imports the baseline's anonsql: prints its figures as JSON.
RUN_ONE = """
import json, sys, time
from anonsql.engine import connect
from anonsql.features.job import select_features
db, method, mode, k, out = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
eng = connect(db)
start = time.perf_counter()
r = select_features(eng, "wide", "cls", k, method=method, mode=mode, out=out, replace=True)
total = time.perf_counter() - start
import anonsql
print(json.dumps({"total_s": total, "seconds": r.seconds, "selected": r.selected, "ac": r.ac, "kanon": r.kanon,
                  "hamdist": r.hamdist, "distcnt": r.distcnt, "skipped": r.skipped, "module": anonsql.__file__}))
"""


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def make_table(path: str, rows: int, cols: int, density: float, seed: int) -> None:
    """Drawn in blocks of 10,000 rows (a 10^5 x 5,000 float draw at once would take 4 GB); the
    block draws continue one stream, so the table is the one a single draw would give."""
    rng = np.random.default_rng(seed)
    x = np.concatenate([(rng.random((min(10_000, rows - lo), cols)) < density).astype(np.int8)
                        for lo in range(0, rows, 10_000)])
    signal = x[:, : min(50, cols)].sum(axis=1)
    label = np.where(rng.random(rows) < 0.2 + 0.3 * (signal > 0), "pos", "neg")
    con = duckdb.connect(path)
    frame = pa.Table.from_arrays([pa.array(x[:, j]) for j in range(cols)] + [pa.array(label)],
                                 names=[f"f{j}" for j in range(cols)] + ["cls"])
    con.register("frame", frame)
    con.execute("CREATE TABLE wide AS SELECT * FROM frame")
    con.close()


def baseline_tree(ref: str, where: Path) -> tuple[Path, str]:
    """`ref`'s anonsql package with its SQL files as anonsql._sql, importable from `where`."""
    commit = subprocess.run(["git", "rev-parse", ref], cwd=REPO, capture_output=True, text=True,
                            check=True).stdout.strip()
    archive = subprocess.run(["git", "archive", commit, "anonsql", "sql"], cwd=REPO, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    (where / "sql").rename(where / "anonsql" / "_sql")  # found before any installed anonsql._sql
    (where / "anonsql" / "_sql" / "__init__.py").touch()
    return where, commit


def figures(total: float, seconds: dict, selected: list, ac: int, kanon: int, hamdist: float, distcnt: float,
            skipped: int) -> dict:
    return {"total_s": round(total, 3), **{f"{k}_s": round(v, 3) for k, v in seconds.items()},
            "result": {"selected": selected, "ac": ac, "kanon": kanon, "hamdist": hamdist, "distcnt": distcnt,
                       "skipped": skipped}}


def run_new(db: str, method: str, mode: str, k: int) -> dict:
    eng = connect(db)
    start = time.perf_counter()
    r = select_features(eng, "wide", "cls", k, method=method, mode=mode, out=f"new_{method}_{mode}", replace=True)
    total = time.perf_counter() - start
    eng.close()
    return figures(total, r.seconds, r.selected, r.ac, r.kanon, r.hamdist, r.distcnt, r.skipped)


def run_old(tree: Path, db: str, method: str, mode: str, k: int, timeout: float) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")])}
    try:
        done = subprocess.run([sys.executable, "-c", RUN_ONE, db, method, mode, str(k), f"old_{method}_{mode}"],
                              capture_output=True, text=True, env=env, cwd=tree, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"finished": False, "note": f"did not finish in {timeout:.0f} s (stopped)"}
    if done.returncode != 0:
        return {"finished": False, "note": "failed: " + done.stderr.strip().splitlines()[-1]}
    r = json.loads(done.stdout.strip().splitlines()[-1])
    assert r["module"].startswith(str(tree)), r["module"]  # the baseline, not this checkout
    return {"finished": True, **figures(r["total_s"], r["seconds"], r["selected"], r["ac"], r["kanon"], r["hamdist"],
                                        r["distcnt"], r["skipped"])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="10000,100000")
    ap.add_argument("--cols", type=int, default=5000)
    ap.add_argument("--density", type=float, default=0.01)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--old-ref", default="HEAD", help="git commit of the baseline implementation")
    ap.add_argument("--old-timeout", type=float, default=300.0, help="seconds per baseline run")
    ap.add_argument("--out", help="also write the JSON document here")
    args = ap.parse_args()
    doc: dict = {"benchmark": "features_scale", "loadavg_start": os.getloadavg(), "cpus": os.cpu_count(),
                 "cols": args.cols, "density": args.density, "k": args.k, "seed": args.seed,
                 "targets": "distcnt stop and skip: <= 3 s at 10^4 rows, <= 30 s at 10^5 rows (issue 11)",
                 "sizes": []}
    with tempfile.TemporaryDirectory() as tmp:
        tree, doc["baseline_commit"] = baseline_tree(args.old_ref, Path(tmp))
        for rows in [int(r) for r in args.rows.split(",")]:
            db = f"{tmp}/wide_{rows}.duckdb"
            say(f"table: {rows:,} rows x {args.cols:,} columns")
            make_table(db, rows, args.cols, args.density, args.seed)
            size: dict = {"rows": rows, "runs": []}
            for method, mode in RUNS:
                new = run_new(db, method, mode, args.k)
                say(f"  {method} {mode}: new {new['total_s']} s")
                old = run_old(tree, db, method, mode, args.k, args.old_timeout)
                say(f"  {method} {mode}: old {old.get('total_s', old.get('note'))}")
                entry = {"method": method, "mode": mode, "new": new, "old": old}
                if old["finished"]:
                    entry["same_results"] = new["result"] == old["result"]
                    entry["speedup"] = round(old["total_s"] / new["total_s"], 1)
                size["runs"].append(entry)
            doc["sizes"].append(size)
            Path(db).unlink()
    doc["loadavg_end"] = os.getloadavg()
    doc["summary"] = [{"rows": s["rows"], **{f"{r['method']}_{r['mode']}": {"new_s": r["new"]["total_s"],
                                                                          "old_s": r["old"].get("total_s")}
                                             for r in s["runs"]}} for s in doc["sizes"]]
    text = json.dumps(doc, indent=1)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
