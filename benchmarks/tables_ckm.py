"""Safe tables by the cell key method (issue 34): its one statement against the plain CUBE, and
Adult's education x occupation x race beside suppression.

    python benchmarks/tables_ckm.py [--rows 10000000] [--repeat 3]

Prints JSON (DuckDB): a 4-D table of `--rows` rows (dimensions of 60, 40, 20 and 14 values) with
all margins: the plain GROUP BY CUBE written as a table (CREATE TABLE AS, the baseline) and the
CKM statement (sql/ckm/publish.sql: the same CUBE with summed record keys, the range join to the
ptable, the perturbed counts) with record keys as a column of whole numbers in [0, 2^32), each
the best of `--repeat` runs in the same process, and their ratio (target <= 1.5); the same with
keys as a float column in [0, 1) and (one run) derived by HMAC-SHA256 from a unit key; the whole
job's seconds by stage (the publication, then the independent recount). Then Adult's cube with
all margins: CKM (D=3, V=1.5, js=2, record keys by HMAC of the row number) cells changed and mean
absolute deviation, beside the share suppression (minimum count 4) hides. Then, when its binaries
are installed, the same 4-D cube on a throwaway PostgreSQL of `--postgres-rows` rows (default
10^7): its plain CUBE and the CKM statement (target <= 3x), best of `--postgres-repeat` runs. The machine is shared:
os.getloadavg() is recorded.
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

from common import TempPostgres, best_of, find_bindir  # noqa: E402

import anonsql  # noqa: E402
from anonsql.catalog import get_table  # noqa: E402
from anonsql.ckm import rewrite  # noqa: E402
from anonsql.ckm.keys import RecordKeys  # noqa: E402
from anonsql.ckm.ptable import KEY_UNITS, ptable  # noqa: E402
from anonsql.engine import connect  # noqa: E402
from anonsql.identifiers import read_key  # noqa: E402
from anonsql.sql import TableName  # noqa: E402
from anonsql.tables.spec import Spec  # noqa: E402

SIZES = (60, 40, 20, 14)
DIMS = [f"d{j}" for j in range(len(SIZES))]
SECRET = "benchmark-secret-not-for-production"


def make_rows(engine, rows: int) -> None:
    cols = ", ".join(f"'v' || CAST(CAST(FLOOR(random() * {s}) AS INTEGER) AS VARCHAR) AS d{j}"
                     for j, s in enumerate(SIZES))
    engine.execute("SELECT setseed(0.25)")
    engine.execute(f"CREATE OR REPLACE TABLE big AS SELECT {cols}, random() AS rk, "
                   f"CAST(FLOOR(random() * {KEY_UNITS}) AS BIGINT) AS rk_units, i AS pid FROM range({rows}) t(i)")


def make_rows_postgres(engine, rows: int) -> None:
    """The same kind of rows on PostgreSQL (its own random(), generate_series)."""
    cols = ", ".join(f"'v' || CAST(CAST(FLOOR(random() * {s}) AS INTEGER) AS VARCHAR) AS d{j}"
                     for j, s in enumerate(SIZES))
    engine.execute("SELECT setseed(0.25)")
    engine.execute("DROP TABLE IF EXISTS big")
    engine.execute(f"CREATE TABLE big AS SELECT {cols}, CAST(FLOOR(random() * {KEY_UNITS}) AS BIGINT) AS rk_units "
                   f"FROM generate_series(1, {rows}) AS t(i)")
    engine.execute("ANALYZE big")


def postgres_cube(url: str, rows: int, repeat: int) -> dict:
    """The 4-D cube on PostgreSQL: the plain CUBE and the CKM statement (integer keys), best of `repeat`."""
    engine = connect(url)
    try:
        make_rows_postgres(engine, rows)
        engine.execute("DROP TABLE IF EXISTS noisy_ptable")
        rewrite.write_ptable(engine, ptable(3, 1.5, 2), TableName("noisy_ptable").expr)
        plain = best_of(lambda: plain_cube(engine), repeat)
        ckm = best_of(lambda: ckm_statement(engine, RecordKeys("rk_units", units=True)), repeat)
        cells = engine.fetch_all("SELECT COUNT(*) FROM plain")[0][0]
    finally:
        engine.close()
    return {"rows": rows, "cells": cells, "plain_cube_seconds": round(plain, 3), "ckm_statement_seconds": round(ckm, 3),
            "ratio": round(ckm / plain, 3), "target_ratio": 3.0}


def plain_cube(engine) -> None:
    dims = ", ".join(DIMS)
    engine.execute("DROP TABLE IF EXISTS plain")
    engine.execute(f"CREATE TABLE plain AS SELECT {dims}, GROUPING({dims}) AS grouping_id, COUNT(*) AS value "
                   f"FROM big GROUP BY CUBE ({dims})")


def ckm_statement(engine, keys: RecordKeys) -> None:
    source = get_table(engine, "big")
    spec = Spec(DIMS, [list(range(len(DIMS)))], "cube")
    table = ptable(3, 1.5, 2)
    engine.execute("DROP TABLE IF EXISTS noisy")
    engine.execute(*rewrite.publish_sql(engine.dialect, source, spec, keys, table, TableName("noisy").expr,
                                        TableName("noisy_ptable").expr))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--postgres-rows", type=int, default=10_000_000, help="0: no PostgreSQL")
    parser.add_argument("--postgres-repeat", type=int, default=None, help="runs on PostgreSQL (default: --repeat)")
    args = parser.parse_args()
    out: dict = {"engine": "duckdb", "rows": args.rows, "sizes": SIZES,
                 "loadavg_before": [round(x, 2) for x in os.getloadavg()]}
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "bench.duckdb")
        engine = connect(db, create=True)
        make_rows(engine, args.rows)
        engine.execute("DROP TABLE IF EXISTS noisy_ptable")
        rewrite.write_ptable(engine, ptable(3, 1.5, 2), TableName("noisy_ptable").expr)
        units, column = RecordKeys("rk_units", units=True), RecordKeys("rk")
        os.environ["ANONSQL_PSEUDONYM_KEY"] = SECRET
        hashed = RecordKeys("pid", read_key(None))
        plain = best_of(lambda: plain_cube(engine), args.repeat)
        ckm = best_of(lambda: ckm_statement(engine, units), args.repeat)
        floats = best_of(lambda: ckm_statement(engine, column), args.repeat)
        hmac = best_of(lambda: ckm_statement(engine, hashed), 1)
        cells = engine.fetch_all("SELECT COUNT(*) FROM plain")[0][0]
        engine.close()
        out["cube_4d"] = {"cells": cells, "plain_cube_seconds": round(plain, 3),
                          "ckm_statement_seconds": round(ckm, 3), "ratio": round(ckm / plain, 3), "target_ratio": 1.5,
                          "record_keys": "integer column (units of 2^-32)",
                          "ckm_statement_float_keys_seconds": round(floats, 3),
                          "ratio_float_keys": round(floats / plain, 3),
                          "ckm_statement_hmac_keys_seconds_one_run": round(hmac, 3)}
        start = time.perf_counter()
        r = anonsql.ckm_table(db, "big", DIMS, record_key_column="rk_units", D=3, V=1.5, js=2, out="job",
                              replace=True)
        out["cube_4d"]["job"] = {"ok": r.ok, "seconds_total": round(time.perf_counter() - start, 3),
                                 "seconds_by_stage": {k: round(v, 3) for k, v in r.seconds.items()},
                                 "utility": r.utility}

        anonsql.load_dataset(db, "adult", replace=True)
        engine = connect(db)
        engine.execute("CREATE OR REPLACE TABLE adult_keyed AS SELECT *, ROW_NUMBER() OVER () AS pid FROM adult")
        engine.close()
        dims = ["education", "occupation", "race"]
        r = anonsql.ckm_table(db, "adult_keyed", dims, record_key="pid", D=3, V=1.5, js=2, compare_min_count=4,
                              out="adult_ckm", replace=True)
        out["adult_education_occupation_race"] = {
            "ok": r.ok, "ckm": {"D": 3, "V": 1.5, "js": 2, **r.utility, "published_rows": r.cells},
            "suppression_min_count": 4, "suppression_hidden_share": round(r.suppressed_share or 0, 4),
            "issue_reported_suppression_hidden_share": 0.355,
            "seconds_by_stage": {k: round(v, 3) for k, v in r.seconds.items()}}
        if args.postgres_rows and find_bindir():
            with TempPostgres() as url:
                out["postgres_cube_4d"] = postgres_cube(url, args.postgres_rows, args.postgres_repeat or args.repeat)
    out["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
