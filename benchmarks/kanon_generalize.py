"""Generalize, then suppress (issue 33) beside suppression-only kanon, on ARX's Adult set-up.

    python benchmarks/kanon_generalize.py [--adult /work/shared/data/adult.data] [--queries 1000]
                                          > benchmarks/results/kanon_generalize.json
    python benchmarks/kanon_generalize.py --scale 100000,300000 > benchmarks/results/kanon_generalize_scale.json

Rows: UCI Adult `adult.data` without the rows holding `?` (30,162 rows, an id column added;
benchmarks/kanon_arx.adult). QIs as ARX's BenchmarkCube: sex, age, race, marital status,
education, native country, workclass; class income; DuckDB; seed 0; k = 5 and 10; suppression
limit 5% (`--max-suppressed-records 0.05`). Hierarchies, ARX's standard Adult ones:

- age `interval:5,10,20,40` (then *);
- sex, race: the value, then * (no hierarchy given: kanon's two-level ladder);
- marital status: spouse present / spouse not present, then * (`MARITAL`);
- education: 4 school groups, then primary / secondary / higher education, then * (`EDUCATION`);
- native country: the continent, then * (`COUNTRY`); workclass: Government / Non-Government /
  Unemployed, then * (`WORKCLASS`); each loaded as a stored taxonomy (`taxonomy:NAME`).

Each set-up runs suppression-only kanon, kanon --hierarchy (global recoding, then suppression) and
kanon --hierarchy --local-recoding (the blanks then given back as labels at the node's level or
above), the last also with a 20% suppression limit (a finer node, more blanks to give back), under
cost ham and mar. Figures, computed here from the output table, aligned with the input by id:
- `loss_metric`: ARX's LM: a cell published as label L loses (input values under L - 1) /
  (input values of the column - 1) (the values under L: every input value the hierarchy puts under
  it, read off the input at every level, `hierarchy_leaves`), a blank cell 1, a kept value 0; mean
  over the QI cells (suppression only: the blank share);
- `suppressed_share`: QI cells NULL in the output and not in the input, over the QI cells;
- `range_query_error`: median relative error of `--queries` random count queries per subset size
  1..3 (kanon_arx's queries: per attribute a random non-empty value set S); a row's estimate per
  attribute is the share of the input values under its published label that S holds (a kept value:
  0 or 1; a blank: the share of the column's non-blank output cells whose label S meets that way);
- `nb_error`: naive Bayes over the QIs, stratified 10-fold, trained on the output and tested on
  the input as published at the same level (the recoded input: test rows need the published
  domain), beside the raw-data baseline;
- the search: the chosen level per QI, its LM, nodes evaluated, scans and nodes per second;
- `seconds`: the whole kanon job.

ARX 3.7 (the issue, optimal full-domain search, LM, 5%): LM 0.280 (k = 5) and 0.358 (k = 10),
naive Bayes error 0.210 / 0.208 (on its own NB set-up). The issue's manual anonsql figures
(`bin age=width:10` + `kanon --cost ham`): 0.151 / 0.214, NB 0.186 / 0.187.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kanon_arx import CUBE_QI, adult, adult_db, arguments, kanon, leaves, range_query_error  # noqa: E402

import anonsql  # noqa: E402
from anonsql import sql  # noqa: E402
from anonsql.catalog import get_table  # noqa: E402
from anonsql.hierarchy import level_expr, parse_all, resolve  # noqa: E402

AGE = "interval:5,10,20,40"
MARITAL = {"*": {"spouse present": ["Married-civ-spouse", "Married-AF-spouse"],
                 "spouse not present": ["Divorced", "Never-married", "Separated", "Widowed", "Married-spouse-absent"]}}
EDUCATION = {"*": {
    "Higher education": {"Undergraduate": ["Bachelors", "Some-college"], "Graduate": ["Masters", "Doctorate"],
                         "Professional Education": ["Prof-school", "Assoc-acdm", "Assoc-voc"]},
    "Secondary education": {"High School": ["9th", "10th", "11th", "12th", "HS-grad"]},
    "Primary education": {"Primary School": ["Preschool", "1st-4th", "5th-6th", "7th-8th"]}}}
COUNTRY = {"*": {
    "North America": ["United-States", "Puerto-Rico", "Canada", "Outlying-US(Guam-USVI-etc)", "Cuba", "Honduras",
                      "Jamaica", "Mexico", "Dominican-Republic", "Haiti", "Guatemala", "Nicaragua", "El-Salvador",
                      "Trinadad&Tobago"],
    "South America": ["Ecuador", "Columbia", "Peru"],
    "Europe": ["England", "Germany", "Greece", "Italy", "Poland", "Portugal", "Ireland", "France", "Hungary",
               "Scotland", "Yugoslavia", "Holand-Netherlands"],
    "Asia": ["Cambodia", "India", "Japan", "China", "Iran", "Philippines", "Vietnam", "Laos", "Taiwan", "Thailand",
             "Hong"],
    "Africa": ["South"]}}
WORKCLASS = {"*": {"Non-Government": ["Private", "Self-emp-not-inc", "Self-emp-inc"],
                   "Government": ["Federal-gov", "Local-gov", "State-gov"],
                   "Unemployed": ["Without-pay", "Never-worked"]}}
TAXONOMIES = {"marital_status": MARITAL, "education": EDUCATION, "native_country": COUNTRY, "workclass": WORKCLASS}
HIERARCHIES = {"age": AGE, **{col: f"taxonomy:adult_{col}" for col in TAXONOMIES}}
ARX = {"5": {"loss_metric": 0.280, "nb_error": 0.210}, "10": {"loss_metric": 0.358, "nb_error": 0.208}}
MANUAL = {"5": {"loss_metric": 0.151, "nb_error": 0.186}, "10": {"loss_metric": 0.214, "nb_error": 0.187}}


def loss_metric(before: pd.DataFrame, after: pd.DataFrame, qi: list[str],
                hierarchy: dict[str, dict[str, set[str]]]) -> float:
    """ARX's LM (module docstring): mean over the QI cells."""
    cells = []
    for col in qi:
        domain = before[col].astype(str).nunique()
        under = {label: len(values) for label, values in {**leaves(before[col], after[col]),
                                                          **hierarchy.get(col, {})}.items()}
        label = after[col].astype(str)
        lost = np.where(after[col].isna(), 1.0, (label.map(under).fillna(1).to_numpy() - 1) / max(domain - 1, 1))
        cells.append(lost)
    return float(np.mean(cells))


def hierarchy_leaves(db: str) -> dict[str, dict[str, set[str]]]:
    """Per hierarchy column, each label of each level below * -> the input values under it (read from
    the input with the labels' SQL), so a label given to a few rows (local recoding) still stands for
    all the values under its node."""
    engine = anonsql.connect(db)
    try:
        table = get_table(engine, "adult")
        found: dict[str, dict[str, set[str]]] = {}
        for h in resolve(engine, table, parse_all(HIERARCHIES)):
            labels = [sql.exp.alias_(level_expr(h, level), f"l_{level}") for level in range(1, h.top)]
            text = sql.exp.select(sql.column(h.column), *labels).distinct().from_(table.expr).sql(engine.dialect)
            for value, *above in engine.fetch_all(text):
                for label in above:
                    found.setdefault(h.column, {}).setdefault(str(label), set()).add(str(value))
    finally:
        engine.close()
    return found


def recoded_input(db: str, levels: dict[str, int], name: str) -> str:
    """The input as published at the chosen levels, without suppression: the naive Bayes test rows."""
    engine = anonsql.connect(db)
    try:
        table = get_table(engine, "adult")
        hierarchies = {h.column: h for h in resolve(engine, table, parse_all(HIERARCHIES))}
        items = []
        for c in table.column_names:
            h, level = hierarchies.get(c), levels.get(c, 0)
            items.append(sql.column(c) if not level else
                         sql.exp.alias_(level_expr(h, level) if h else sql.fragment("hierarchy/suppressed"), c))
        engine.execute(*sql.render("common/drop_temp_table", engine.dialect, tbl=sql.TableName(name).expr))
        engine.execute(*sql.render("common/create_table_as", engine.dialect, out=sql.TableName(name).expr,
                                   src=table.expr, item=items))
    finally:
        engine.close()
    return name


GLOBAL = {"hierarchy": HIERARCHIES, "max_suppressed_records": 0.05}
#: name in the output table -> (the method's name, kanon's options)
METHODS = {"s": ("suppression only", {}), "g": ("generalize, then suppress", GLOBAL),
           "l": ("generalize, suppress, local recoding", {**GLOBAL, "local_recoding": True}),
           "l20": ("generalize, suppress, local recoding, suppression limit 20%",
                   {**GLOBAL, "local_recoding": True, "max_suppressed_records": 0.2})}


def run(db: str, before: pd.DataFrame, k: int, cost: str, method: str, queries: int,
        hierarchy: dict[str, dict[str, set[str]]]) -> dict:
    out = f"adult_k{k}_{cost}_{method}"
    name, options = METHODS[method]
    generalize = bool(options)
    report, seconds, after = kanon(db, CUBE_QI, k, cost, out, **options)
    test = recoded_input(db, report.recoding["levels"], f"{out}_test") if generalize else "adult"
    nb = anonsql.evaluate_classifiers(db, test, out, CUBE_QI, "income", key="id", folds=10, seed=0,
                                      classifiers="nb").classifiers["nb"]
    blanks = [float((after[c].isna() & before[c].notna()).mean()) for c in CUBE_QI]
    return {"k": k, "cost": cost, "method": name,
            "ok": report.ok, "loss_metric": loss_metric(before, after, CUBE_QI, hierarchy),
            "suppressed_share": float(np.mean(blanks)), "range_query_error": range_query_error(
                before, after, CUBE_QI, queries, hierarchy=hierarchy),
            "nb_error": nb.error, "nb_baseline_error": nb.baseline_error,
            "search": report.recoding, "seconds": seconds, "stages": report.seconds}


def scale(rows: int) -> list[dict]:
    """The whole kanon job (statistics, loop, write-back, checks; with --hierarchy the search too) on
    `rows` synthetic Adult-like rows (benchmarks/common.synthetic_adult: Kameya & Hayashi's 8 QIs drawn
    from Adult's class-conditional frequencies, age a whole number drawn inside its 5-year range), mar,
    k = 10, seed 0, DuckDB: suppression only, then age=interval:5,10,20,40 (the other QIs: value, then *)."""
    from common import KH_QI, synthetic_adult

    frame = synthetic_adult(rows)
    low = frame["age"].map(lambda s: int(s[1:].split(",")[0]) if str(s).startswith("[") else 90)
    frame["age"] = low + np.random.default_rng(0).integers(0, 5, len(frame))
    frame.insert(0, "id", np.arange(1, len(frame) + 1))  # the key the output is read back by
    found = []
    with tempfile.TemporaryDirectory() as tmp:
        db = adult_db(tmp, frame)
        for hierarchy in (None, {"age": AGE}):
            report, seconds, _ = kanon(db, KH_QI, 10, "mar", "adult_k10", **({"hierarchy": hierarchy} if hierarchy
                                                                                else {}))
            found.append({"rows": rows, "hierarchy": hierarchy, "seconds": seconds, "stages": report.seconds,
                          "suppressed_share": report.suppressed_ratio, "search": report.recoding})
            print(json.dumps(found[-1]), file=sys.stderr)
    return found


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--scale", metavar="ROWS", help="only the whole job's seconds at these row counts, e.g. "
                        "100000,300000 (suppression only beside --hierarchy)")
    args = parser.parse_args()
    if args.scale:
        runs = [run for rows in args.scale.split(",") for run in scale(int(rows))]
        print(json.dumps({"load_average": os.getloadavg(), "results": runs}, indent=2))
        return
    frame = adult(args.adult)[["id", *CUBE_QI, "income"]]
    before = frame.sort_values("id").reset_index(drop=True)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        db = adult_db(tmp, frame)
        for col, tree in TAXONOMIES.items():
            path = Path(tmp) / f"{col}.json"
            path.write_text(json.dumps(tree))
            anonsql.taxonomy_load(db, f"adult_{col}", file=str(path))
        hierarchy = hierarchy_leaves(db)
        for k in (5, 10):
            for cost in ("ham", "mar"):
                for method in METHODS:
                    results.append(run(db, before, k, cost, method, args.queries, hierarchy))
                    print(json.dumps({k: v for k, v in results[-1].items() if k != "stages"}), file=sys.stderr)
    print(json.dumps({"rows": len(frame), "qi": CUBE_QI, "hierarchies": HIERARCHIES, "arx": ARX,
                      "manual_bin_age_width_10": MANUAL, "load_average": os.getloadavg(), "results": results},
                     indent=2))


if __name__ == "__main__":
    main()
