"""kanon at warehouse scale: the whole job (one process, start to exit) on Adult-like tables of
10^4 .. 10^8 rows, each beside the DuckDB GROUP BY floor over the same columns measured in the same
run, the job as a multiple of it, and the peak memory of the job's process.

    python benchmarks/kanon_scale.py [--sizes 1e4,1e5,1e6,1e7] [--postgres 1e6] [--cross-check 1e5,3e6]
                                     [--cross-check-qi age,workclass,...] [--reference-limit 900]
                                     [--in-place] > benchmarks/results/kanon_scale.json

Rows: the class drawn from Adult's class frequencies, then each of the 8 QIs of Kameya & Hayashi
drawn from Adult's class-conditional frequencies (benchmarks/common.synthetic_adult, vectorised
here so 10^7 rows build in seconds; above 10^7 in chunks of 10^7 rows, chunk i drawn with seed i);
mar, k = 10, seed 0. `--cross-check` runs the compiled loop
and the plain reference loop (anonsql.kanon.reference) on the same count table and compares the
decisions, with the reference given `--reference-limit` seconds (it is O(iterations x tuples):
over all 8 QIs it does not finish 10^6 rows in 40 minutes). `--cross-check-qi` runs the cross
check over fewer of the QIs (the same rows: 3x10^6 rows over 6 QIs are ~50,000 tuples, whose
counts, and so their Γ, are those of a large table); each cross check reports the distinct
tuples and how small |Γ| got (smallest nonzero, median, share below 1e-12: the order of the
issue's old absolute pruning tolerance M·1e-12, under which the compiled loop pruned nothing).
The machine's load average is recorded with every figure: the benchmark shares its cores.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from common import KH_CLASS, KH_QI, adult_kh_frame  # noqa: E402

QI_SQL = ", ".join(f'"{c}"' for c in KH_QI)

# One job in a fresh process: wall time start to exit, stage times and peak RSS of that process
# (benchmarks/rss.py: its own VmHWM; ru_maxrss would carry this benchmark's gigabytes of rows).
JOB = f"""
import json, sys, time
start = time.perf_counter()
import anonsql
db, table, mode = sys.argv[1], sys.argv[2], sys.argv[3]
where = dict(in_place=True) if mode == "in_place" else dict(out=table + "_k10", replace=True)
r = anonsql.k_anonymize(db, table, {KH_QI!r}, {KH_CLASS!r}, 10, cost="mar", seed=0, **where)
seconds = time.perf_counter() - start
sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
from rss import peak_rss_mb  # after the clock; the standard library only
print(json.dumps({{"seconds": seconds, "stages": r.seconds, "groups": r.groups, "iterations": r.iterations,
                  "ok": r.ok, "suppressed_ratio": r.suppressed_ratio, "peak_rss_mb": peak_rss_mb()}}))
"""


def adult_like(rows: int, seed: int = 0) -> pd.DataFrame:
    """synthetic_adult's distribution, drawn with one inverse-CDF lookup per column and class."""
    rng = np.random.default_rng(seed)
    base = adult_kh_frame()
    prior = base[KH_CLASS].value_counts(normalize=True).sort_index()
    labels = rng.choice(len(prior), size=rows, p=prior.to_numpy())
    out = {KH_CLASS: pd.Categorical.from_codes(labels, prior.index.astype(str))}
    for col in KH_QI:
        values = sorted(base[col].dropna().astype(str).unique())
        codes = np.empty(rows, dtype=np.int32)
        for c, name in enumerate(prior.index):
            freq = base.loc[base[KH_CLASS] == name, col].astype(str).value_counts(normalize=True)
            cdf = np.cumsum([freq.get(v, 0.0) for v in values])
            mask = labels == c
            codes[mask] = np.minimum(np.searchsorted(cdf / cdf[-1], rng.random(int(mask.sum())), side="right"),
                                     len(values) - 1)
        out[col] = pd.Categorical.from_codes(codes, values)
    return pd.DataFrame(out)[KH_QI + [KH_CLASS]]


#: Tables above this many rows are drawn and loaded in chunks of it (chunk i with seed i), so 10^8
#: rows never sit in one DataFrame; up to 10^7 a table is adult_like(n, seed=0) as before.
CHUNK = 10**7


def build(db: str, rows: int, table: str) -> None:
    """An Adult-like table of `rows` rows in `db`, drawn and loaded CHUNK rows at a time."""
    for i, start in enumerate(range(0, rows, CHUNK)):
        load(db, adult_like(min(CHUNK, rows - start), seed=i), table, append=i > 0)


def load(db: str, frame: pd.DataFrame, table: str, append: bool = False) -> None:
    """The frame as a table of VARCHAR columns (DuckDB file, or PostgreSQL through COPY);
    `append` adds its rows to the existing table (DuckDB)."""
    import anonsql
    from anonsql.data.loading import write_frame

    if db.startswith("postgresql://"):
        eng = anonsql.connect(db)
        write_frame(eng, frame.astype(str), table, replace=True)
        eng.close()
        return
    import duckdb

    con = duckdb.connect(db)
    con.register("frame", frame)
    cols = ", ".join(f'CAST("{c}" AS VARCHAR) AS "{c}"' for c in frame.columns)
    con.execute(f'INSERT INTO "{table}" SELECT {cols} FROM frame' if append
                else f'CREATE OR REPLACE TABLE "{table}" AS SELECT {cols} FROM frame')
    con.close()


def floor(db: str, table: str) -> float:
    """DuckDB's GROUP BY over the job's columns (QIs and class), materialised: the least any job
    reading N(y, c) must pay. Best of 3."""
    import duckdb

    con = duckdb.connect(db)
    times = []
    for _ in range(3):
        start = time.perf_counter()
        con.execute(f'CREATE OR REPLACE TEMP TABLE g AS SELECT {QI_SQL}, "{KH_CLASS}", COUNT(*) AS n '
                    f'FROM "{table}" GROUP BY ALL')
        times.append(time.perf_counter() - start)
    con.close()
    return min(times)


def copy_table(db: str, table: str, to: str) -> float:
    """CREATE TABLE AS SELECT * (the copy an UPDATE-based write-back starts from), seconds."""
    import duckdb

    con = duckdb.connect(db)
    start = time.perf_counter()
    con.execute(f'CREATE OR REPLACE TABLE "{to}" AS SELECT * FROM "{table}"')
    seconds = time.perf_counter() - start
    con.close()
    return seconds


def job(db: str, table: str, timeout: float, mode: str = "copy") -> dict:
    """The job in a fresh process: a copy (one CREATE TABLE AS SELECT), or `in_place` (one UPDATE)."""
    try:
        done = subprocess.run([sys.executable, "-c", JOB, db, table, mode], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"finished": False, "timeout_seconds": timeout}
    if done.returncode:
        return {"finished": False, "error": done.stderr.strip().splitlines()[-1:]}
    row = json.loads(done.stdout)
    row["seconds"] = round(row["seconds"], 3)
    row["stages"] = {k: round(v, 3) for k, v in row["stages"].items()}
    row["peak_rss_mb"] = round(row["peak_rss_mb"])
    return row | {"finished": True}


CROSS = f"""
import json, sys, time
import numpy as np
from anonsql import catalog, kanon, stats
from anonsql.engine import connect
eng = connect(sys.argv[1])
qi = json.loads(sys.argv[3])
g = stats.qi_class_counts(eng, catalog.get_table(eng, sys.argv[2]), qi, {KH_CLASS!r})
eng.close()
args = (g.codes, g.classes, g.counts, g.domain_sizes)
start = time.perf_counter()
fast = kanon.anonymize(*args, k=10, cost="mar", seed=0)
compiled = time.perf_counter() - start
size = np.abs(fast.gammas)
print(json.dumps({{"qi": qi, "tuples": len(g.counts), "compiled_loop_seconds": round(compiled, 3),
                  "iterations": fast.iterations,
                  "abs_gamma_smallest_nonzero": float(size[size > 0].min()) if (size > 0).any() else None,
                  "abs_gamma_median": float(np.median(size)) if len(size) else None,
                  "abs_gamma_share_below_1e-12": round(float(np.mean(size < 1e-12)), 4) if len(size) else None}}),
      flush=True)
start = time.perf_counter()
ref = kanon.anonymize(*args, k=10, cost="mar", seed=0, reference=True)
print(json.dumps({{"reference_loop_seconds": round(time.perf_counter() - start, 3),
                  "same_decisions": bool(np.array_equal(ref.final_codes, fast.final_codes)),
                  "same_gammas": bool(np.array_equal(ref.gammas, fast.gammas))}}), flush=True)
"""


def cross_check(db: str, table: str, limit: float, qi: list[str]) -> dict:
    """Compiled and reference loops on the count table of `table` over `qi`, in a fresh process."""
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen([sys.executable, "-c", CROSS, db, table, json.dumps(qi)], stdout=out,
                                stderr=subprocess.DEVNULL)
        try:
            proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        out.seek(0)
        row: dict = {}
        for line in out:
            row |= json.loads(line)
    if "same_decisions" not in row:
        row["reference_finished"] = False
        row["reference_limit_seconds"] = limit
    return row


def sizes(text: str) -> list[int]:
    return [int(float(s)) for s in text.split(",") if s]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1e4,1e5,1e6,1e7")
    parser.add_argument("--postgres", default="1e6", help="sizes also run on PostgreSQL ('' for none)")
    parser.add_argument("--cross-check", default="1e5,3e6", help="sizes where compiled and reference are compared")
    parser.add_argument("--cross-check-qi", default=",".join(KH_QI),
                        help="the QIs of the cross check (default all 8; fewer QIs, fewer tuples, same rows)")
    parser.add_argument("--reference-limit", type=float, default=900.0)
    parser.add_argument("--job-timeout", type=float, default=900.0)
    parser.add_argument("--in-place", action="store_true",
                        help="also time copy + in-place UPDATE against the copy's one CREATE TABLE AS SELECT")
    args = parser.parse_args()
    out = {"benchmark": "kanon whole job at scale (mar, k = 10, 8 QIs, DuckDB unless noted)", "cpus": os.cpu_count(),
           "results": []}
    pg_sizes, cross_sizes = set(sizes(args.postgres)), set(sizes(args.cross_check))
    with tempfile.TemporaryDirectory() as tmp:
        pg = None
        if pg_sizes:
            from common import engines
            pg = engines(tmp, True)
            dbs = pg.__enter__()
        for n in sorted(set(sizes(args.sizes)) | cross_sizes):
            db = f"{tmp}/scale_{n}.duckdb"
            table = f"adult_{n}"
            build(db, n, table)
            row: dict = {"rows": n, "load_average": os.getloadavg()[0]}
            if n in set(sizes(args.sizes)):
                row["duckdb_group_by_floor_seconds"] = round(floor(db, table), 3)
                row["duckdb"] = job(db, table, args.job_timeout)
                if row["duckdb"].get("finished"):
                    row["duckdb"]["x_floor"] = round(row["duckdb"]["seconds"] / row["duckdb_group_by_floor_seconds"], 1)
                if args.in_place:  # the other write-back on a copy of the table: copy + one UPDATE
                    row["duckdb_copy_table_seconds"] = round(copy_table(db, table, table + "_ip"), 3)
                    row["duckdb_in_place"] = job(db, table + "_ip", args.job_timeout, "in_place")
            if n in pg_sizes and pg is not None and "postgres" in dbs:
                load(dbs["postgres"], adult_like(n), table)
                row["postgres"] = job(dbs["postgres"], table, args.job_timeout)
                if row["postgres"].get("finished") and row.get("duckdb", {}).get("finished"):
                    row["postgres_x_duckdb"] = round(row["postgres"]["seconds"] / row["duckdb"]["seconds"], 2)
            if n in cross_sizes:
                row["cross_check"] = cross_check(db, table, args.reference_limit, args.cross_check_qi.split(","))
            row["load_average_after"] = os.getloadavg()[0]
            print(json.dumps(row), file=sys.stderr, flush=True)
            out["results"].append(row)
            os.remove(db)
        if pg is not None:
            pg.__exit__(None, None, None)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
