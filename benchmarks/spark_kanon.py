"""Spark local[N] beside DuckDB in the same run: session start, the kanon count table N(y, c)
(sql/common/qi_class_counts.sql, the distributed stage) and the whole kanon job, on Adult-like
tables of 10^5..10^7 rows.

    python benchmarks/spark_kanon.py [--rows 100000 1000000] [--master local[2]] [--k 10]

Prints JSON and saves it to benchmarks/results/spark_kanon.json (with the load average). The
baseline is DuckDB on the same rows; the kanon job's stages (statistics, loop, rewrite, verify)
are timed on both, and the two outputs must blank the same number of cells.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pyarrow as pa  # noqa: E402
from common import KH_CLASS, KH_QI, best_of, load_frame, synthetic_adult  # noqa: E402

import anonsql  # noqa: E402
from anonsql import catalog, sql, stats  # noqa: E402
from anonsql.engine import connect  # noqa: E402
from anonsql.errors import AnonsqlError  # noqa: E402


def count_table_seconds(engine, table: str) -> tuple[float, int]:
    tab = catalog.get_table(engine, table)
    groups = []
    seconds = best_of(lambda: groups.append(stats.qi_class_counts(engine, tab, KH_QI, KH_CLASS)), repeat=2)
    return seconds, len(groups[-1].counts)


def kanon_run(engine, table: str, k: int) -> dict:
    """The whole job (wall seconds), its stages and the cells it blanked."""
    start = time.perf_counter()
    try:
        report = anonsql.k_anonymize(engine, table, KH_QI, KH_CLASS, k, seed=0, out=f"{table}_out", replace=True)
    except AnonsqlError as exc:
        return {"error": str(exc)}
    return {"seconds": round(time.perf_counter() - start, 3),
            "stages": {name: round(sec, 3) for name, sec in report.seconds.items()},
            "suppressed_cells": report.suppressed_cells}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="anonsql-spark-bench-"))
    start = time.perf_counter()
    spark = connect(f"spark:{args.master}?warehouse={work / 'warehouse'}&catalog=in-memory")
    spark.fetch_all("SELECT 1")
    result: dict = {"master": args.master, "k": args.k, "load_average_before": os.getloadavg(),
                    "session_start_seconds": round(time.perf_counter() - start, 2), "sizes": []}
    duck_path = str(work / "bench.duckdb")
    for rows in args.rows:
        frame = synthetic_adult(rows)
        table = f"adult_{rows}"
        load_frame(duck_path, frame, table)
        duck = connect(duck_path)
        spark.write_arrow(sql.TableName(table).expr.sql("spark"), pa.Table.from_pandas(frame, preserve_index=False))
        d_sec, d_groups = count_table_seconds(duck, table)
        s_sec, s_groups = count_table_seconds(spark, table)
        runs = {"duckdb": kanon_run(duck, table, args.k), "spark": kanon_run(spark, table, args.k)}
        result["sizes"].append({
            "rows": rows, "distinct_qi_class_tuples": d_groups, "same_count_table": d_groups == s_groups,
            "count_table_seconds": {"duckdb": round(d_sec, 3), "spark": round(s_sec, 3)},
            "kanon": runs, "same_suppressed_cells": runs["duckdb"].get("suppressed_cells")
            == runs["spark"].get("suppressed_cells"), "load_average": os.getloadavg(),
        })
        duck.close()
        spark.execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName(table).expr))
        spark.execute(*sql.render("common/drop_table", "spark", tbl=sql.TableName(f"{table}_out").expr))
        save(result)  # after each size: a long 10^7 run keeps what finished
    print(json.dumps(result, indent=2))


def save(result: dict) -> None:
    (Path(__file__).resolve().parent / "results" / "spark_kanon.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
