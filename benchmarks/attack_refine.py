"""Time `anonsql attack refine` (issue 35) with its peak memory, on Adult's example release
(examples/release/adult.toml: kanon k = 10 over the binned table, and the safe table of sex by race
of the same rows) and on a release of the same shape over 10^6 synthetic Adult-like rows; each
beside the floor measured in the same run, one GROUP BY of the published table over the columns
the attack reads (sql/attack/refine_groups.sql). Each attack runs in a fresh process, which
reports its own peak RSS (benchmarks/rss.py). Prints JSON (and saves it with --out).

    python benchmarks/attack_refine.py [--rows 1000000] [--out benchmarks/results/attack_refine.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import KH_CLASS, KH_QI, ROOT, best_of, finish, load_frame, measure_in, synthetic_adult  # noqa: E402

import anonsql  # noqa: E402
from anonsql import sql  # noqa: E402
from anonsql.catalog import get_table  # noqa: E402
from anonsql.engine import connect  # noqa: E402


def child(db: str, published: str, tables: str) -> None:
    """In a fresh process: the attack (kanon's rule with the tables), its figures and this process's peak RSS."""
    from rss import peak_rss_mb

    start = time.perf_counter()
    r = anonsql.refine_attack(db, published, tables, method="kanon", qi=KH_QI, class_column=KH_CLASS)
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": round(seconds, 3), "stages": {k: round(v, 3) for k, v in r.seconds.items()},
                      "peak_rss_mb": peak_rss_mb(), "cells": r.cells, "exposed": r.exposed, "certain": r.certain,
                      "solver": r.solver}))


def group_by(db: str, published: str, dims: list[str]) -> None:
    """The floor: the attack's one GROUP BY of the published table, fetched."""
    engine = connect(db)
    try:
        cols = list(dict.fromkeys([*dims, *KH_QI, KH_CLASS]))
        text, params = sql.render("attack/refine_groups", engine.dialect, tbl=get_table(engine, published).expr,
                                  col=sql.columns(cols))
        engine.fetch_all(text, params)
    finally:
        engine.close()


def measure(name: str, db: str, published: str, tables: str, dims: list[str]) -> dict:
    attack = measure_in(None, __file__, "--child", db, published, tables)
    floor = best_of(lambda: group_by(db, published, dims))
    row = {"release": name, "published": published, "tables": tables, **attack,
           "group_by_seconds": round(floor, 4)}
    if "seconds" in attack:
        row["attack_over_group_by"] = round(attack["seconds"] / floor, 1)
    print(json.dumps(row), file=sys.stderr)
    return row


def adult_release(tmp: str) -> str:
    """Adult's example release, run as written (its spec copied beside a fresh database)."""
    db = f"{tmp}/adult.duckdb"
    engine = connect(db, create=True)
    anonsql.load_dataset(engine, "adult", "adult_raw")  # the row key as docs/release.md adds it
    engine.execute("CREATE TABLE adult AS SELECT ROW_NUMBER() OVER () AS id, * FROM (SELECT * FROM adult_raw "
                   "ORDER BY ALL)")
    engine.close()
    spec = Path(tmp) / "adult.toml"
    shutil.copy(ROOT / "examples" / "release" / "adult.toml", spec)
    anonsql.release_run(spec, db)
    return db


def synthetic_release(tmp: str, rows: int) -> str:
    """The same shape over `rows` synthetic rows: kanon k = 10 over the 8 QIs, sex by race counted."""
    db = f"{tmp}/synthetic.duckdb"
    load_frame(db, synthetic_adult(rows, seed=0), "source")
    anonsql.k_anonymize(db, "source", KH_QI, KH_CLASS, 10, cost="mar", seed=0, out="published", replace=True)
    anonsql.safe_table(db, "source", "sex,race", min_count=5, out="sex_race", replace=True)
    return db


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the synthetic release")
    parser.add_argument("--out", help="also save the JSON here")
    parser.add_argument("--child", nargs=3, metavar=("DB", "PUBLISHED", "TABLES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        results.append(measure("examples/release/adult.toml", adult_release(tmp), "adult_k10", "adult_sex_race",
                               ["sex", "race"]))
        results.append(measure(f"synthetic, {args.rows:,} rows", synthetic_release(tmp, args.rows), "published",
                               "sex_race", ["sex", "race"]))
    finish({"benchmark": "attack refine (kanon rule + the release's safe table) vs the GROUP BY it reads",
            "results": results}, args.out)


if __name__ == "__main__":
    main()
