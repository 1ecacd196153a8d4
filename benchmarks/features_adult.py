"""Zhang et al. 2017 Table 5 on Adult: AUC of a linear SVM (5-fold CV) on each method's projection.

Adult (32,560 rows) is loaded and binarized in SQL by benchmarks/adult_bins.toml (19 binary
attributes, Sec. 5.1); then for k = 5, 8, 11 every method selects features (SQL statistics,
published view, SQL re-check) and scikit-learn's LinearSVC (squared hinge = L2 loss, C = 1:
the paper tunes C on a validation set, we do not) is scored by ROC AUC over stratified 5-fold
CV on the selected columns. The paper's Table 5 is printed beside ours. With PostgreSQL
binaries installed the selections are repeated there and compared with DuckDB's.

    python benchmarks/features_adult.py [--no-postgres]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
from common import engines
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.svm import LinearSVC

import anonsql
from anonsql import sql
from anonsql.engine import connect
from anonsql.features.job import binarize, select_features
from anonsql.features.spec import parse_spec

SPEC = Path(__file__).with_name("adult_bins.toml")
KS = (5, 8, 11)
#: (label, method, privacy, mode)
RUNS = [("Maximal", "maximal", "ac", "stop"), ("HamDist", "hamdist", "ac", "stop"),
        ("DistCnt", "distcnt", "ac", "stop"), ("CM Greedy", "cm", "ac", "stop"),
        ("k-anonymity HamDist", "hamdist", "kanon", "stop"), ("k-anonymity DistCnt", "distcnt", "kanon", "stop"),
        ("HamDist (skip)", "hamdist", "ac", "skip"), ("DistCnt (skip)", "distcnt", "ac", "skip")]
#: Table 5 of the paper: AUC (selected feature count) for k = 5, 8, 11.
PAPER = {"Maximal": [(0.74, 8), (0.74, 8), (0.75, 7)], "HamDist": [(0.77, 9), (0.77, 9), (0.76, 8)],
         "DistCnt": [(0.78, 10), (0.78, 10), (0.76, 8)], "CM Greedy": [(0.71, 5), (0.71, 5), (0.71, 5)],
         "k-anonymity HamDist": [(0.72, 8), (0.72, 8), (0.72, 8)],
         "k-anonymity DistCnt": [(0.73, 8), (0.70, 6), (0.70, 6)], "Full-Feature-Set": [(0.82, 19)] * 3}


def auc(engine, table: str, cols: list[str], seed: int) -> float:
    """Mean ROC AUC of LinearSVC over stratified 5-fold CV on `cols` of `table`."""
    if not cols:
        return 0.5
    frame = engine.fetch_df("SELECT * FROM " + sql.TableName(table).expr.sql(engine.dialect))
    x = frame[cols].to_numpy(np.float64)
    y = (frame["income"].astype(str).str.strip() == ">50K").to_numpy()
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=seed)
    return float(cross_val_score(LinearSVC(C=1.0), x, y, cv=folds, scoring="roc_auc").mean())


def run(db: str, seed: int, with_auc: bool) -> dict:
    eng = connect(db, create=True)
    anonsql.load_dataset(eng, "adult", replace=True)
    b = binarize(eng, "adult", parse_spec(SPEC.read_text(), str(SPEC)), "adult_bin", keep=["income"], replace=True)
    out = {"rows": b.rows, "features": len(b.columns), "density": round(b.density, 3), "results": {}}
    if with_auc:
        out["results"]["Full-Feature-Set"] = [{"k": k, "auc": round(auc(eng, "adult_bin", b.columns, seed), 3),
                                               "sfc": len(b.columns)} for k in KS]
    for label, method, privacy, mode in RUNS:
        rows = []
        for k in KS:
            r = select_features(eng, "adult_bin", "income", k, method=method, privacy=privacy, mode=mode,
                                out=f"pub_{method}_{privacy}_{mode}_{k}", replace=True)
            row = {"k": k, "sfc": len(r.selected), "ac": r.ac, "kanon": r.kanon, "hamdist": round(r.hamdist, 4),
                   "distcnt": round(r.distcnt, 4), "selected": r.selected}
            if with_auc:
                row["auc"] = round(auc(eng, r.out, r.selected, seed), 3)
            rows.append(row)
        out["results"][label] = rows
    eng.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-postgres", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, engines(tmp, with_postgres=not args.no_postgres) as dbs:
        duck = run(dbs["duckdb"], args.seed, with_auc=True)
        table = {label: [{"k": k, "ours": f"{r['auc']:.2f} ({r['sfc']})",
                          "paper": (f"{PAPER[label][i][0]:.2f} ({PAPER[label][i][1]})" if label in PAPER else None)}
                         for i, (k, r) in enumerate(zip(KS, rows))]
                 for label, rows in duck["results"].items()}
        report = {"setting": {k: duck[k] for k in ("rows", "features", "density")}, "table5": table,
                  "duckdb": duck["results"]}
        if "postgres" in dbs:
            pg = run(dbs["postgres"], args.seed, with_auc=False)
            report["postgres_same_selection"] = all(
                [r["selected"] for r in pg["results"][label]] == [r["selected"] for r in duck["results"][label]]
                for label in pg["results"])
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
