"""Time `anonsql attack linkage` on a k-anonymized table (kanon, k = 10, on 8 QIs and on 3) against a
GROUP BY over the same QIs of the source, in the same run (issue 35: linkage on 10^6 rows <= 2x a
GROUP BY). The linkage probes every attacker class once per ⊥ pattern in the published table, so
the ratio grows with the patterns (reported). Prints JSON (and saves it with --out).

    python benchmarks/attack_linkage.py [--rows 1000000] [--postgres] [--out benchmarks/results/attack_linkage.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import KH_CLASS, KH_QI, best_of, engines, finish, load_frame, synthetic_adult  # noqa: E402

import anonsql  # noqa: E402
from anonsql import sql  # noqa: E402
from anonsql.attack.stats import null_patterns  # noqa: E402
from anonsql.catalog import get_table  # noqa: E402
from anonsql.engine import connect  # noqa: E402


def group_by(db: str, table: str, qi: list[str]) -> None:
    """The floor: one GROUP BY over the QIs of the source (the class sizes), fetched."""
    engine = connect(db)
    try:
        text, params = sql.render("data/class_size_histogram", engine.dialect, tbl=get_table(engine, table).expr,
                                  qi=sql.columns(qi))
        engine.fetch_all(text, params)
    finally:
        engine.close()


def patterns(db: str, qi: list[str]) -> int:
    """The ⊥ patterns in the published table: the linkage's branches."""
    engine = connect(db)
    try:
        return len(null_patterns(engine, get_table(engine, "published"), qi))
    finally:
        engine.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the synthetic table")
    parser.add_argument("--postgres", action="store_true", help="also on PostgreSQL (when its binaries are installed)")
    parser.add_argument("--out", help="also save the JSON here")
    args = parser.parse_args()
    frame = synthetic_adult(args.rows, seed=0)
    frame.insert(0, "id", range(len(frame)))
    results = []
    with tempfile.TemporaryDirectory() as tmp, engines(tmp, with_postgres=args.postgres) as dbs:
        for engine, db in dbs.items():
            load_frame(db, frame, "source")
            for qi in (KH_QI, KH_QI[-3:-1] + KH_QI[:1]):
                k = anonsql.k_anonymize(db, "source", qi, KH_CLASS, 10, out="published", cost="mar", seed=0,
                                        replace=True)
                floor = best_of(lambda db=db, qi=qi: group_by(db, "source", qi))
                reports: list = []
                seconds = best_of(lambda db=db, qi=qi, out=reports: out.append(
                    anonsql.linkage_attack(db, "published", "source", qi, key="id")))
                link = reports[-1].linkage
                row = {"engine": engine, "rows": args.rows, "qi": qi, "published_suppressed_ratio":
                       round(k.suppressed_ratio, 4), "patterns": patterns(db, qi),
                       "attacker_classes": sum(b.classes for b in link.by_candidates),
                       "group_by_seconds": round(floor, 4), "linkage_seconds": round(seconds, 4),
                       "linkage_over_group_by": round(seconds / floor, 2), "attackers": link.attackers,
                       "unique_matches": link.unique_matches, "realized_correct": link.realized_correct,
                       "expected_correct": round(link.expected_correct, 1)}
                results.append(row)
                print(json.dumps(row), file=sys.stderr)
    finish({"benchmark": "attack linkage vs a GROUP BY over the QIs (kanon k = 10 output)",
            "results": results}, args.out)


if __name__ == "__main__":
    main()
