"""Spark local[N] beside DuckDB in the same run: session start, the kanon count table N(y, c)
(sql/common/qi_class_counts.sql, the distributed stage) and the whole kanon job, on Adult-like
tables of 10^5..10^7 rows.

    python benchmarks/spark_kanon.py [--rows 100000 1000000] [--master local[2]] [--k 10]

Prints JSON. The baseline is DuckDB on the same rows. The kanon job on Spark is reported as
"not yet" until the kanon room writes through anonsql.catalog.staged_output (issue 12).
"""

from __future__ import annotations

import argparse
import json
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


def kanon_seconds(engine, table: str, k: int) -> float | str:
    start = time.perf_counter()
    try:
        anonsql.k_anonymize(engine, table, KH_QI, KH_CLASS, k, seed=0, out=f"{table}_out", replace=True)
    except AnonsqlError as exc:
        return f"not yet: {exc}"
    return round(time.perf_counter() - start, 3)


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
    result: dict = {"master": args.master, "session_start_seconds": round(time.perf_counter() - start, 2), "sizes": []}
    duck_path = str(work / "bench.duckdb")
    for rows in args.rows:
        frame = synthetic_adult(rows)
        table = f"adult_{rows}"
        load_frame(duck_path, frame, table)
        duck = connect(duck_path)
        spark.write_arrow(sql.TableName(table).expr.sql("spark"), pa.Table.from_pandas(frame, preserve_index=False))
        d_sec, d_groups = count_table_seconds(duck, table)
        s_sec, s_groups = count_table_seconds(spark, table)
        result["sizes"].append({
            "rows": rows, "distinct_qi_class_tuples": d_groups, "same_count_table": d_groups == s_groups,
            "count_table_seconds": {"duckdb": round(d_sec, 3), "spark": round(s_sec, 3)},
            "kanon_seconds": {"duckdb": kanon_seconds(duck, table, args.k),
                              "spark": kanon_seconds(spark, table, args.k)},
        })
        duck.close()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
