"""Safe tables at scale (issue 30): a 3-level geography x 3 other dimensions with all margins,
minimum count 3, on DuckDB; the rows generated inside DuckDB (no DataFrame), the geography a
stored taxonomy (World > region > province > municipality, `--hierarchy geo=geography`).

    python benchmarks/tables_scale.py [--size NAME ...] [--timeout S] [--out FILE]

Each size runs in its own process (peak RSS of that process alone: benchmarks/rss.py), stopped
after --timeout seconds (recorded as unfinished). Printed per size, as JSON: published cells,
rows, whole-job seconds and seconds per stage, the audit's share (the attacker's programs: the
primary-only audit, the repair loop's audits and the independent verification), peak RSS, and
the baseline of the same run: the SQL of the cells alone (one GROUPING SETS scan, no protection).
Sizes: geography 5 x 5 x 10 (281 nodes, 250 municipalities) times the other dimensions' values
(+1 for each margin): tiny 3x3x4 (~2*10^4 cells), 1e5 6x6x8, 3e5 9x9x10, 1e6 13x14x16.
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

from common import finish, old_env  # noqa: E402

GEO = (5, 5, 10)  # regions, provinces per region, municipalities per province
SIZES = {"tiny": (3, 3, 4), "1e5": (6, 6, 8), "3e5": (9, 9, 10), "1e6": (13, 14, 16)}

#: The rows: one per unit, 3 + (0..7) units per inner cell, one cell in a hundred with 1 or 2 (the primaries).
ROWS_SQL = """
SELECT setseed(0.42);
CREATE OR REPLACE TABLE cells AS
SELECT 'm' || m AS geo, 'a' || a AS a, 'b' || b AS b, 'c' || c AS c,
       CASE WHEN random() < 0.01 THEN 1 + floor(random() * 2) ELSE 3 + floor(random() * 8) END::INTEGER AS n
FROM range({m}) t1(m), range({a}) t2(a), range({b}) t3(b), range({c}) t4(c);
CREATE OR REPLACE TABLE units AS SELECT geo, a, b, c FROM cells, range(n) r(i) ORDER BY geo, a, b, c;
DROP TABLE cells;
CREATE OR REPLACE TABLE geography AS
SELECT 'World' AS value, NULL AS parent
UNION ALL SELECT 'r' || r, 'World' FROM range({regions}) t(r)
UNION ALL SELECT 'p' || p, 'r' || (p // {provinces}) FROM range({regions} * {provinces}) t(p)
UNION ALL SELECT 'm' || m, 'p' || (m // {municipalities}) FROM range({m}) t(m);
"""


def child(size: str) -> dict:
    """One size in this process: generate, protect, measure."""
    import duckdb
    from rss import peak_rss_mb

    import anonsql
    from anonsql.catalog import get_table
    from anonsql.engine import connect
    from anonsql.tables import Rules, Spec
    from anonsql.tables.stats import gather

    a, b, c = SIZES[size]
    regions, provinces, municipalities = GEO
    with tempfile.TemporaryDirectory() as tmp:
        db = f"{tmp}/scale.duckdb"
        con = duckdb.connect(db)
        for statement in ROWS_SQL.format(m=regions * provinces * municipalities, a=a, b=b, c=c, regions=regions,
                                         provinces=provinces, municipalities=municipalities).split(";"):
            if statement.strip():
                con.execute(statement)
        rows = con.execute("SELECT count(*) FROM units").fetchone()[0]
        con.close()
        anonsql.taxonomy_load(db, "geography", table="geography")
        dims = ["geo", "a", "b", "c"]
        start = time.perf_counter()
        r = anonsql.safe_table(db, "units", dims, min_count=3, hierarchy="geo=geography", out="pub")
        total = time.perf_counter() - start
        engine = connect(db)
        start = time.perf_counter()
        spec = Spec(dims, [list(range(len(dims)))], rules=Rules(), hierarchy={"geo": "geography"})
        gather(engine, get_table(engine, "units"), spec)
        baseline = time.perf_counter() - start
        engine.close()
    stages = {k: round(v, 3) for k, v in r.seconds.items()}
    audit = sum(v for k, v in r.seconds.items() if k in ("secondary: primary-only audit", "secondary: LP", "verify"))
    return {"ok": r.ok, "cells": r.cells, "rows": rows, "statuses": r.statuses, "certified": r.certified,
            "integer_unproven": r.integer_unproven, "integer_exposed": r.integer_exposed,
            "seconds_total": round(total, 3), "seconds_by_stage": stages,
            "audit_share_of_time": round(audit / total, 3) if total else None,
            "peak_rss_mb": peak_rss_mb(), "baseline_cells_sql_seconds": round(baseline, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", action="append", choices=list(SIZES), help="only these sizes (repeatable)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds before a size counts as unfinished")
    parser.add_argument("--out", help="also save the JSON here")
    parser.add_argument("--child", choices=list(SIZES), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return
    result: dict = {"geography": GEO, "min_count": 3, "load_average_at_start": [round(x, 2) for x in os.getloadavg()]}
    for size in args.size or list(SIZES):
        start = time.perf_counter()
        try:
            out = subprocess.run([sys.executable, __file__, "--child", size], env=old_env(None), capture_output=True,
                                 text=True, timeout=args.timeout)
            result[size] = json.loads(out.stdout) if out.returncode == 0 else \
                {"error": out.stderr.strip().splitlines()[-1:]}
        except subprocess.TimeoutExpired:
            result[size] = {"unfinished_after_seconds": round(time.perf_counter() - start)}
        print(json.dumps({size: result[size]}), file=sys.stderr, flush=True)
    finish(result, args.out)


if __name__ == "__main__":
    main()
