"""Safe aggregate tables (issue 13): the Adult cube and two synthetic tables of ~10^5 cells.

    python benchmarks/tables_adult.py [--no-postgres] [--no-large] [--case NAME ...] [--old REF [--old-timeout S]]

Prints JSON, per engine: for Adult, education x occupation x race with all margins and
minimum count 4, the baseline of the same run -- primary suppression alone, how many primary
cells the attacker's LP pins (the issue measured 155 of 345), and how many it exposes (pinned,
inside [1, n-1] over whole numbers, or short of a rule's protection level; issue 30) -- next to
the protected table:
secondary cells (exact stage, LP stage), suppressed share, seconds per stage and for the whole
job (target <= 10 s, 0 pinned: the job's own independent attack must pass). Then a 2-D table
(316 x 316) and a 3-D table (46 x 46 x 46) of ~10^5 cells with margins, 1 % of the inner cells
below the minimum count (target <= 60 s each); the baseline there is the SQL of the cells alone
(one GROUP BY GROUPING SETS scan). The machine is shared: os.getloadavg() is recorded before and
after each engine's runs. With --old REF the same cases also run on DuckDB with the code of git
REF (benchmarks.common.old_tree, in a subprocess, each case stopped after --old-timeout seconds:
recorded as unfinished), under "old".
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

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import engines, old_env, old_tree  # noqa: E402

import anonsql  # noqa: E402
from anonsql.catalog import get_table  # noqa: E402
from anonsql.data.loading import write_frame  # noqa: E402
from anonsql.engine import connect  # noqa: E402
from anonsql.tables import Rules, Spec  # noqa: E402
from anonsql.tables.stats import gather  # noqa: E402

ADULT_DIMS = ["education", "occupation", "race"]


def synthetic(shape: tuple[int, ...], seed: int = 0) -> pd.DataFrame:
    """Rows whose counts per inner cell are 3 + Poisson(4), with 1 % of the cells at 1 or 2."""
    rng = np.random.default_rng(seed)
    counts = 3 + rng.poisson(4, size=shape)
    small = rng.random(shape) < 0.01
    counts[small] = rng.integers(1, 3, size=int(small.sum()))
    idx = np.repeat(np.arange(counts.size), counts.ravel())
    coords = np.unravel_index(idx, shape)
    return pd.DataFrame({f"d{j}": np.char.add("v", coords[j].astype(str)).astype(object) for j in range(len(shape))})


def run_job(db: str, table: str, dims: list[str], min_count: int, out: str) -> dict:
    start = time.perf_counter()
    r = anonsql.safe_table(db, table, dims, min_count=min_count, out=out, replace=True)
    total = time.perf_counter() - start
    return {"ok": r.ok, "cells": r.cells, "statuses": r.statuses, "primary_cells": r.statuses["u"],
            "pinned_with_primary_suppression_alone": r.pinned_primary_only,
            "exposed_with_primary_suppression_alone": r.exposed_primary_only, "reasons": r.reasons,
            "secondary_cells": r.statuses["x"], "secondary_exact_stage": r.linear_secondaries,
            "pinned_after_exact_stage": r.pinned_after_linear, "secondary_lp_stage": r.lp_secondaries,
            "integer_exposed": r.integer_exposed, "integer_unproven_hypercubes": getattr(r, "integer_unproven", None),
            "certified_by_hidden_hypercube": getattr(r, "certified", None),
            "suppressed_share_of_cells": round(r.suppressed_share, 4),
            "suppressed_share_of_value": round(r.suppressed_value_share, 4),
            "smallest_primary_interval": r.smallest_width,
            "pinned_after_protection": 0 if r.ok else None,
            "seconds_by_stage": {k: round(v, 3) for k, v in r.seconds.items()}, "seconds_total": round(total, 3)}


def cells_sql_seconds(db: str, table: str, dims: list[str]) -> float:
    """The baseline: the SQL of the cells alone (domains, GROUPING SETS, no protection)."""
    engine = connect(db)
    try:
        start = time.perf_counter()
        gather(engine, get_table(engine, table), Spec(dims, [list(range(len(dims)))], rules=Rules()))
        return round(time.perf_counter() - start, 3)
    finally:
        engine.close()


def _plain(value: object) -> object:
    """numpy scalars as Python numbers."""
    return value.item() if isinstance(value, np.generic) else str(value)


CASES = ["adult_education_occupation_race", "2d_316x316", "3d_46x46x46"]


def old_case(tree: Path, case: str, timeout: float) -> dict:
    """One case on DuckDB with the code in `tree`, or how long it ran unfinished."""
    start = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, __file__, "--no-postgres", "--case", case], env=old_env(tree),
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"unfinished_after_seconds": round(time.perf_counter() - start)}
    if out.returncode:
        return {"error": out.stderr.strip().splitlines()[-1:]}
    return json.loads(out.stdout)["duckdb"][case]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-large", action="store_true", help="only the Adult cube")
    parser.add_argument("--case", action="append", choices=CASES, help="only these cases (repeatable)")
    parser.add_argument("--old", metavar="REF", help="also run the cases on DuckDB with the code of git REF")
    parser.add_argument("--old-timeout", type=float, default=900.0, help="seconds before an old case counts as "
                        "unfinished")
    args = parser.parse_args()
    cases = args.case or (CASES[:1] if args.no_large else CASES)
    results: dict = {}
    shapes = {"2d_316x316": ((316, 316), 1), "3d_46x46x46": ((46, 46, 46), 2)}
    large = {name: synthetic(*shapes[name]) for name in cases if name in shapes}
    with tempfile.TemporaryDirectory() as tmp, engines(tmp, not args.no_postgres) as dbs:
        for engine_name, db in dbs.items():
            res: dict = {"loadavg_before": [round(x, 2) for x in os.getloadavg()]}
            if CASES[0] in cases:
                anonsql.load_dataset(db, "adult", replace=True)
                res[CASES[0]] = run_job(db, "adult", ADULT_DIMS, 4, "adult_cube")
                res[CASES[0]]["baseline_cells_sql_seconds"] = cells_sql_seconds(db, "adult", ADULT_DIMS)
            for name, frame in large.items():
                engine = connect(db, create=True)
                write_frame(engine, frame, name, replace=True)
                engine.close()
                dims = list(frame.columns)
                res[name] = run_job(db, name, dims, 3, f"{name}_pub")
                res[name]["rows"] = len(frame)
                res[name]["baseline_cells_sql_seconds"] = cells_sql_seconds(db, name, dims)
            res["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
            results[engine_name] = res
            print(json.dumps({engine_name: res}, default=_plain), file=sys.stderr, flush=True)
    if args.old:
        tree = old_tree(args.old)
        results["old"] = {"ref": args.old, "engine": "duckdb", "loadavg_before": [round(x, 2) for x in os.getloadavg()]}
        for case in cases:
            results["old"][case] = old_case(tree, case, args.old_timeout)
            print(json.dumps({"old": {case: results["old"][case]}}, default=_plain), file=sys.stderr, flush=True)
        results["old"]["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(results, indent=2, default=_plain))


if __name__ == "__main__":
    main()
