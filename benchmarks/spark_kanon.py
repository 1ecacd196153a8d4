"""Spark local[N] beside DuckDB in the same run: session start, the kanon count table N(y, c)
(sql/common/qi_class_counts.sql, the distributed stage) and the whole kanon job, on Adult-like
tables of 10^6 and 10^7 rows.

    python benchmarks/spark_kanon.py [--rows 1000000 10000000] [--master local[2]] [--k 10]

The rows are generated once per size (benchmarks/common.synthetic_adult, one seed per block of
10^6 rows) into Parquet files, and each engine creates its table FROM those files (DuckDB
read_parquet, Spark parquet.`dir`): nothing of the table passes through Spark's driver. Both
engines must build the same count table (compared row by row) and blank the same cells.

Prints JSON and saves it, after every step so a long run keeps what finished, as ONE document
to benchmarks/results/spark_kanon.json, with os.getloadavg() at the start, after each size and
at the end (the machine is shared: absolute times are inflated, compare the two engines).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from common import KH_CLASS, KH_QI, synthetic_adult  # noqa: E402

import anonsql  # noqa: E402
from anonsql import catalog, sql, stats  # noqa: E402
from anonsql.engine import connect  # noqa: E402
from anonsql.errors import AnonsqlError  # noqa: E402

BLOCK = 1_000_000  # rows generated (and written to one Parquet file) per seed
RESULT = Path(__file__).resolve().parent / "results" / "spark_kanon.json"


def write_parquet(rows: int, directory: Path) -> float:
    """`rows` Adult-like rows as Parquet files part-<seed>.parquet; returns the seconds taken."""
    start = time.perf_counter()
    directory.mkdir(parents=True)
    for seed in range((rows + BLOCK - 1) // BLOCK):
        frame = synthetic_adult(min(BLOCK, rows - seed * BLOCK), seed=seed)
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), directory / f"part-{seed:03d}.parquet")
    return time.perf_counter() - start


def load(engine, table: str, directory: Path) -> float:
    """CREATE TABLE <table> AS SELECT * FROM the Parquet files, on the engine; returns seconds."""
    name = sql.TableName(table).expr.sql(engine.dialect)
    source = (f"read_parquet('{directory}/*.parquet')" if engine.dialect == "duckdb"
              else f"parquet.`{directory}`")
    start = time.perf_counter()
    engine.execute(f"CREATE TABLE {name} AS SELECT * FROM {source}")
    return time.perf_counter() - start


def count_table(engine, table: str) -> tuple[float, list[tuple]]:
    """Seconds of the product's count table N(y, c) (anonsql.stats.qi_class_counts: the GROUP BY
    that runs distributed on Spark, with its value coding), and the count table again by a plain
    GROUP BY of this script, as sorted text rows, for comparing the two engines."""
    tab = catalog.get_table(engine, table)
    start = time.perf_counter()
    stats.qi_class_counts(engine, tab, KH_QI, KH_CLASS)
    seconds = time.perf_counter() - start
    cols = ", ".join(sql.ident(c).sql(engine.dialect) for c in [*KH_QI, KH_CLASS])
    rows = engine.fetch_arrow(f"SELECT {cols}, COUNT(*) AS n FROM {tab.expr.sql(engine.dialect)} GROUP BY {cols}")
    return seconds, sorted(tuple(map(str, r.values())) for r in rows.to_pylist())


def kanon_run(engine, table: str, k: int) -> dict:
    """The whole job (wall seconds), its stages and the cells it blanked."""
    start = time.perf_counter()
    try:
        report = anonsql.k_anonymize(engine, table, KH_QI, KH_CLASS, k, seed=0, out=f"{table}_out", replace=True)
    except (AnonsqlError, MemoryError) as exc:
        return {"error": str(exc), "seconds": round(time.perf_counter() - start, 3)}
    return {"seconds": round(time.perf_counter() - start, 3),
            "stages": {name: round(sec, 3) for name, sec in report.seconds.items()},
            "suppressed_cells": report.suppressed_cells}


def driver_memory(engine, table: str, k: int, tuples: int) -> dict:
    """What the driver holds per distinct (QI, class) tuple: a second kanon run on `engine` under
    tracemalloc (Python objects and numpy arrays: the count table's arrays and the loop's state,
    the same code on every engine), and the count table as Arrow (the batches the JVM collects and
    hands to Python on Spark). Taken after the timed runs: tracemalloc slows Python down."""
    tracemalloc.start()
    kanon_run(engine, table, k)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    tab = catalog.get_table(engine, table)
    cols = ", ".join(sql.ident(c).sql(engine.dialect) for c in [*KH_QI, KH_CLASS])
    arrow = engine.fetch_arrow(f"SELECT {cols}, COUNT(*) AS n FROM {tab.expr.sql(engine.dialect)} GROUP BY {cols}")
    return {"tuples": tuples, "python_peak_bytes": peak, "python_bytes_per_tuple": round(peak / tuples),
            "arrow_count_table_bytes_per_tuple": round(arrow.nbytes / tuples)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="anonsql-spark-bench-"))
    result: dict = {"master": args.master, "k": args.k, "cpu_count": os.cpu_count(),
                    "load_average_start": os.getloadavg(), "sizes": [],
                    "note": "shared 2-core machine, other sessions running: absolute seconds are inflated; "
                            "compare the engines within one size"}
    start = time.perf_counter()
    spark = connect(f"spark:{args.master}?warehouse={work / 'warehouse'}&catalog=in-memory")
    spark.fetch_all("SELECT 1")
    result["session_start_seconds"] = round(time.perf_counter() - start, 2)
    result["spark_driver_memory"] = spark._spark.conf.get("spark.driver.memory", "1g (default)")
    duck = connect(str(work / "bench.duckdb"), create=True)
    for rows in args.rows:
        table = f"adult_{rows}"
        size: dict = {"rows": rows, "load_average_before": os.getloadavg()}
        result["sizes"].append(size)
        size["generate_parquet_seconds"] = round(write_parquet(rows, work / table), 2)
        size["load_seconds"] = {e.dialect: round(load(e, table, work / table), 2) for e in (duck, spark)}
        save(result)
        (d_sec, d_rows), (s_sec, s_rows) = count_table(duck, table), count_table(spark, table)
        size.update(distinct_qi_class_tuples=len(d_rows), same_count_table=d_rows == s_rows,
                    count_table_seconds={"duckdb": round(d_sec, 3), "spark": round(s_sec, 3)}, kanon={})
        del d_rows, s_rows
        for engine in (duck, spark):
            size["kanon"][engine.dialect] = kanon_run(engine, table, args.k)
            save(result)
        size["same_suppressed_cells"] = size["kanon"]["duckdb"].get("suppressed_cells") \
            == size["kanon"]["spark"].get("suppressed_cells")
        size["load_average_after"] = os.getloadavg()
        if rows == args.rows[0]:
            result["driver_memory"] = driver_memory(duck, table, args.k, size["distinct_qi_class_tuples"])
        for engine in (duck, spark):
            for name in (table, f"{table}_out"):
                engine.execute(*sql.render("common/drop_temp_table", engine.dialect, tbl=sql.TableName(name).expr))
        save(result)
    duck.close()
    result["load_average_end"] = os.getloadavg()
    save(result)
    print(json.dumps(result, indent=2))


def save(result: dict) -> None:
    RESULT.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
