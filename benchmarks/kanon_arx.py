"""kanon beside ARX on ARX's own cell-suppression benchmark (issue 32), on the same rows.

    python benchmarks/kanon_arx.py [--adult /work/shared/data/adult.data] [--queries 1000]
                                   > benchmarks/results/kanon_arx.json

Rows: UCI Adult `adult.data` without the rows holding `?` (30,162 rows; an id column added as the
row key). Set-ups, each run under every cost (ham, info, mar, hybrid), seed 0, DuckDB:

- "cube": BenchmarkCube's 7 QIs (sex, age, race, marital status, education, native country,
  workclass), class income, k = 5 and distinct 3-diversity on occupation (`--l-diversity
  occupation=3`); ARX 3.7: 9.27% suppressed, LM 0.0976, median range-query error 0.415, naive
  Bayes error 0.1889 (the issue's table).
- "8qi-k5", "8qi-k10": the 8 QIs of Kameya & Hayashi (occupation a QI too), k = 5 / 10, no l;
  ARX: 14.1% / 18.0% of the QI cells suppressed.

Each run also with `--restore` (`--restore both`, the default here): the pass after the loop that gives
blanked cells back while every class keeps k and the l-diversity (anonsql.kanon.restore); its rows
say `"restore": true` and how many cells it gave back.

Figures per run, each computed here by one implementation from the output table:
- `suppressed_share` (QI cells newly NULL / QI cells) overall and per QI;
- `granularity_loss`: ARX's LM as the issue defines it: per QI column the mean over rows of the share
  of the column's input values a cell still admits (kept 1/N, blank 1), rescaled as
  (mean - mean 1/N) / (1 - mean 1/N), averaged over the QIs. With suppression only (a cell is
  either kept or blank) this is each column's blank share, so it equals `suppressed_share`;
- `range_query_error`: the median relative error of `--queries` random count queries per attribute
  subset size 1..3 (deviation: BenchmarkCube draws 1,000 per subset of the QIs; here every query
  draws its subset of 1-3 QIs at random). A query asks, per attribute of its subset, for a random
  non-empty set S_j of the column's values (each value in with probability 1/2); the true count is
  read on the input, the estimate on the output where a blank cell counts with the likelihood of
  the queried values from the output's own frequencies (the share of the column's non-blank output
  cells whose value is in S_j), a row contributing the product over the subset (deviation: the sum
  of these expectations, where the issue's wording has a row count once its product reaches 1/|S|);
  queries whose true count is 0 are skipped;
- `nb_error`: naive Bayes over the run's QIs, stratified 10-fold, trained on the output and tested
  on the input (anonsql.evaluate_classifiers, the error Kameya & Hayashi report), beside the
  raw-data baseline (deviation: ARX's figure may use other attributes and its own folds);
- `seconds`: the whole kanon job (statistics, loop, write-back, SQL checks), and its stages;
- `classes_below_l`: classes of the output with fewer than 3 occupations (by SQL, `check`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np
import pandas as pd

import anonsql
from anonsql.data.loading import write_frame

CUBE_QI = ["sex", "age", "race", "marital_status", "education", "native_country", "workclass"]
KH_QI = ["age", "workclass", "education", "marital_status", "occupation", "race", "sex", "native_country"]
COSTS = ("ham", "info", "mar", "hybrid")
ARX = {"cube": {"suppressed_share": 0.0927, "granularity_loss": 0.0976, "range_query_error": 0.415,
                "nb_error": 0.1889, "seconds": [1.7, 3.3]},
       "8qi-k5": {"suppressed_share": 0.141}, "8qi-k10": {"suppressed_share": 0.180}}


def adult(path: str) -> pd.DataFrame:
    """adult.data without the rows holding `?`, names in snake_case, an id column first."""
    names = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
             "relationship", "race", "sex", "capital_gain", "capital_loss", "hours_per_week", "native_country",
             "income"]
    frame = pd.read_csv(path, names=names, skipinitialspace=True, dtype=str)
    frame = frame[frame["age"] != "age"]  # a header row, where the copy carries one
    frame = frame[~(frame == "?").any(axis=1)].reset_index(drop=True)
    frame["age"] = frame["age"].astype(int)
    frame.insert(0, "id", np.arange(1, len(frame) + 1))
    return frame[["id", *KH_QI, "income"]]


def granularity_loss(before: pd.DataFrame, after: pd.DataFrame, qi: list[str]) -> float:
    """ARX's LM as the issue defines it (module docstring), averaged over the QIs."""
    losses = []
    for col in qi:
        n = before[col].nunique()
        cell = np.where(after[col].isna(), 1.0, 1.0 / n)
        floor = 1.0 / n
        losses.append((cell.mean() - floor) / (1 - floor) if n > 1 else 0.0)
    return float(np.mean(losses))


def leaves(before: pd.Series, after: pd.Series) -> dict[str, set[str]]:
    """Published label -> the input values published under it (read off the aligned rows)."""
    kept = after.notna()
    frame = pd.DataFrame({"label": after[kept].astype(str), "value": before[kept].astype(str)})
    return {label: set(values) for label, values in frame.groupby("label")["value"]}


def range_query_error(before: pd.DataFrame, after: pd.DataFrame, qi: list[str], queries: int, seed: int = 0,
                      hierarchy: dict[str, dict[str, set[str]]] | None = None) -> float:
    """Median relative error of random count queries (module docstring); a published label stands for
    the input values under it (`leaves`, or `hierarchy[col]` where given: every input value the
    hierarchy puts under it), each with an equal share (benchmarks/kanon_generalize.py)."""
    rng = np.random.default_rng(seed)
    columns = {}
    for col in qi:
        domain = pd.Index(before[col].astype(str).unique())
        under = {**leaves(before[col], after[col]), **(hierarchy or {}).get(col, {})}
        labels = pd.Index(sorted(under))
        member = np.zeros((len(labels), len(domain)))  # label -> its input values, each 1/|leaves|
        for i, label in enumerate(labels):
            member[i, domain.get_indexer(list(under[label]))] = 1.0 / len(under[label])
        out = np.where(after[col].isna(), -1, labels.get_indexer(after[col].astype(str)))
        columns[col] = (domain.get_indexer(before[col].astype(str)), out, member)
    errors = []
    for size in (1, 2, 3):
        for _ in range(queries):
            subset = rng.choice(len(qi), size=size, replace=False)
            truth = np.ones(len(before), bool)
            estimate = np.ones(len(before))
            for j in subset:
                codes_in, out, member = columns[qi[j]]
                chosen = rng.random(member.shape[1]) < 0.5
                if not chosen.any():
                    chosen[rng.integers(member.shape[1])] = True
                truth &= chosen[codes_in]
                share = member @ chosen  # per label: the share of its input values the query holds
                kept = out >= 0
                blank = share[out[kept]].mean() if kept.any() else 0.0
                estimate *= np.where(kept, share[np.maximum(out, 0)], blank)
            if truth.sum():
                errors.append(abs(float(estimate.sum()) - int(truth.sum())) / int(truth.sum()))
    return float(np.median(errors))


def kanon(db: str, qi: list[str], k: int, cost: str, out: str, **options) -> tuple[anonsql.Report, float,
                                                                                       pd.DataFrame]:
    """The kanon job on table adult (class income, seed 0) into `out`: its report, its seconds and
    the output's rows in id order."""
    start = time.perf_counter()
    report = anonsql.k_anonymize(db, "adult", qi, "income", k, cost=cost, seed=0, out=out, replace=True, **options)
    seconds = time.perf_counter() - start
    engine = anonsql.connect(db)
    try:
        after = engine.fetch_df(f'SELECT * FROM "{out}" ORDER BY id')
    finally:
        engine.close()
    return report, seconds, after


def run(db: str, frame: pd.DataFrame, name: str, qi: list[str], k: int, l_div: str | None, cost: str,
        queries: int, restore: bool = False) -> dict:
    out = f"{name.replace('-', '_')}_{cost}"
    report, seconds, after = kanon(db, qi, k, cost, out, restore=restore,
                                   **({"l_diversity": l_div} if l_div else {}))
    before = frame.sort_values("id").reset_index(drop=True)
    per_qi = {c: float(after[c].isna().mean()) for c in qi}
    nb = anonsql.evaluate_classifiers(db, "adult", out, qi, "income", key="id", folds=10, seed=0,
                                      classifiers="nb").classifiers["nb"]
    below = _below_l(db, out, qi)
    return {"setup": name, "cost": cost, "restore": restore, "restored_cells": report.restored_cells,
            "k": k, "l_diversity": l_div, "ok": report.ok,
            "suppressed_share": float(np.mean(list(per_qi.values()))), "suppressed_by_qi": per_qi,
            "granularity_loss": granularity_loss(before, after, qi),
            "range_query_error": range_query_error(before, after, qi, queries),
            "nb_error": nb.error, "nb_baseline_error": nb.baseline_error,
            "classes_below_3_diverse": below, "seconds": seconds, "stages": report.seconds,
            "iterations": report.iterations}


def _below_l(db: str, table: str, qi: list[str]) -> int:
    """Classes over `qi` holding fewer than 3 distinct occupations (NULL one of them), by SQL."""
    engine = anonsql.connect(db)
    try:
        cols = ", ".join(f'"{c}"' for c in qi)
        return int(engine.fetch_all(f'SELECT COUNT(*) FROM (SELECT 1 FROM "{table}" GROUP BY {cols} '
                                    'HAVING COUNT(DISTINCT COALESCE("occupation", \'<null>\')) < 3) AS e')[0][0])
    finally:
        engine.close()


def arguments(doc: str) -> argparse.ArgumentParser:
    """The options of the Adult benchmarks: the data file and the queries per subset size."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--adult", default="/work/shared/data/adult.data")
    parser.add_argument("--queries", type=int, default=1000, help="random queries per subset size (1, 2, 3)")
    return parser


def adult_db(folder: str, frame: pd.DataFrame) -> str:
    """A new DuckDB file in `folder` holding `frame` as table adult."""
    db = os.path.join(folder, "adult.duckdb")
    engine = anonsql.connect(db, create=True)
    write_frame(engine, frame, "adult")
    engine.close()
    return db


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--costs", default=",".join(COSTS))
    parser.add_argument("--restore", choices=("no", "yes", "both"), default="both",
                        help="run each cost without and/or with --restore (the pass after the loop)")
    args = parser.parse_args()
    restores = {"no": (False,), "yes": (True,), "both": (False, True)}[args.restore]
    frame = adult(args.adult)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        db = adult_db(tmp, frame)
        for cost in args.costs.split(","):
            for restore in restores:
                for name, qi, k, l_div in (("cube", CUBE_QI, 5, "occupation=3"), ("8qi-k5", KH_QI, 5, None),
                                           ("8qi-k10", KH_QI, 10, None)):
                    results.append(run(db, frame, name, qi, k, l_div, cost, args.queries, restore))
                    print(json.dumps({k: v for k, v in results[-1].items() if k != "suppressed_by_qi"}),
                          file=sys.stderr)
    print(json.dumps({"rows": len(frame), "arx": ARX, "load_average": os.getloadavg(), "results": results},
                     indent=2))


if __name__ == "__main__":
    main()
