"""Hintoglu (2011) Chapter 5 on Car Evaluation and Wisconsin Breast Cancer, beside the thesis.

Prints one JSON object: Table 5.2 (mean ms per suppression of our in-memory algorithms, with
NRD in the same run as the baseline and the thesis's C++ figures beside), Table 5.3 (percent
of successful suppressions against naive Bayes, ID3 and a linear SVM), the average direct
distance ordering of Figure 5.1, the hybrids of Section 5.3, the enhanced variants of
Figure 5.7, and one end-to-end SQL job on DuckDB. As in Section 5.1, each sampled tuple gets
one confidential value in a random attribute whose domain has more than 2 values, each
suppressed alone on the original data; a suppression succeeds iff the tuple is not deleted
and the classifier misses the value (Section 5.2).

On Breast Cancer the generalization variants (Chapter 4: decp-g, incp-g, dropp-g, hid3-g,
and e-decp-g / e-dropp-g for Figure 5.7) run beside their deletion counterparts on the same
cells, along the taxonomy BREAST_TAXONOMY (the thesis does not print its own) for the nine
1-10 attributes; Car is skipped for them, as in the thesis (footnote 4: domains too small).
Direct distance, sum of KL distances and sum of conditional entropy are computed in memory
for both strategies with the job's conventions.

    python benchmarks/protect_experiments.py [--cells 100] [--seed 0] [--realizations 1]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pandas as pd

import anonsql
from anonsql.data.loading import write_frame
from anonsql.engine import connect
from anonsql.protect import metrics
from anonsql.protect.deletion import Cell, Microdata, SeededChance
from anonsql.protect.generalization import METHODS_G, GeneralizedMicrodata, id3_g_predicts
from anonsql.protect.job import protect_table
from anonsql.protect.naive_bayes import NU
from anonsql.protect.suppress import DELETION, suppress_cells, suppress_cells_g
from anonsql.stats import encode
from anonsql.taxonomy.model import Taxonomy
from anonsql.taxonomy.store import load_taxonomy

THESIS = {
    "table_5_2_ms": {"breast-cancer": {"decp": 0.129, "incp": 0.127, "dropp": 0.131, "hid3": 0.129},
                     "car": {"decp": 0.036, "incp": 0.036, "dropp": 0.037, "hid3": 0.036}},
    "table_5_3_percent": {
        "breast-cancer": {"nb": {"decp": 100, "incp": 100, "dropp": 100, "hid3": 84},
                          "id3": {"decp": 77, "incp": 75, "dropp": 90, "hid3": 100},
                          "svm": {"decp": 41, "incp": 41, "dropp": 89, "hid3": 86}},
        "car": {"nb": {"decp": 100, "incp": 100, "dropp": 100, "hid3": 65},
                "id3": {"decp": 86, "incp": 84, "dropp": 85, "hid3": 100},
                "svm": {"decp": 65, "incp": 56, "dropp": 88, "hid3": 80}}},
    "figure_5_1_order_least_first": ["hid3", "dropp", "incp", "decp"],
    "section_5_3": "hybrids 100% against NB and ID3; direct distance hid3+dropp < hid3+incp < hid3+decp",
    "figure_5_7": "enhanced variants reduce side effects by nearly 50% (Breast Cancer)",
}
BASIC = ["decp", "incp", "dropp", "hid3"]
HYBRID = ["hid3+decp", "hid3+incp", "hid3+dropp"]
GENERALIZED = ["decp-g", "incp-g", "dropp-g", "hid3-g"]
#: Our taxonomy for the 1-10 Breast Cancer attributes (height 3).
BREAST_TAXONOMY = Taxonomy.from_nested("scale10", {"1-10": {"1-5": {"1-2": [1, 2], "3-5": [3, 4, 5]},
                                                            "6-10": {"6-7": [6, 7], "8-10": [8, 9, 10]}}})


def load(name: str) -> tuple[pd.DataFrame, np.ndarray, list[int]]:
    """The bundled data set (Breast Cancer without its non-unique sample id), coded."""
    eng = connect(":memory:")
    anonsql.load_dataset(eng, name, "t")
    frame = eng.fetch_df('SELECT * FROM "t"')
    eng.close()
    frame = frame.drop(columns=[c for c in ("id",) if c in frame])
    pairs = [encode(frame[c]) for c in frame.columns]
    return frame, np.column_stack([c for c, _ in pairs]).astype(np.int64), [len(v) for _, v in pairs]


def sample_cells(X: np.ndarray, domains: list[int], n: int, rng: np.random.Generator) -> list[Cell]:
    rows = rng.choice(len(X), size=min(n, len(X)), replace=False)
    cells = []
    for r in sorted(rows):
        cols = [j for j, d in enumerate(domains) if d > 2 and X[r, j] != NU]
        j = int(rng.choice(cols))
        cells.append(Cell(int(r), j, int(X[r, j])))
    return cells


def svm_predicts(X: np.ndarray, domains: list[int], cell: Cell, preds: list[int],
                 known: np.ndarray | None = None) -> bool:
    """A linear SVM (scikit-learn LinearSVC, one-vs-rest) on one-hot predictors, ν = all
    zeros, trained on D - d_i; the thesis used SVM-Struct with a linear kernel. `known` marks
    the rows whose target is usable as a label (default: not ν; for the -G methods: a leaf,
    while generalized predictor values are categories of their own)."""
    from sklearn.svm import LinearSVC

    def onehot(rows: np.ndarray) -> np.ndarray:
        return np.hstack([(rows[:, [a]] == np.arange(domains[a])).astype(float) for a in preds])

    train = (X[:, cell.target] != NU) if known is None else known.copy()
    train[cell.row] = False
    y = X[train, cell.target]
    if len(np.unique(y)) < 2:
        return bool(y[0] == cell.value) if len(y) else False
    model = LinearSVC(C=1.0, dual=False).fit(onehot(X[train]), y)
    return int(model.predict(onehot(X[[cell.row]]))[0]) == cell.value


def single_cell_runs(X, domains, cells, methods, seed) -> dict:
    """Each cell suppressed alone on the original data with each method."""
    out = {}
    n = X.shape[1]
    preds = {j: [a for a in range(n) if a != j] for j in range(n)}
    for m in [*methods, "nrd"]:
        chance = SeededChance(seed)
        times, dd, ok = [], [], {"nb": 0, "id3": 0, "svm": 0}
        deleted = needed = 0
        for c in cells:
            p = Microdata(X.copy(), domains, preds)
            p.hide(c.row, c.target, [])
            if m == "nrd" or ("hid3" in m and p.id3_predicts(c)) or ("hid3" not in m and p.nb_predicts(c)):
                needed += 1
            start = time.perf_counter()
            res = DELETION[m](p, c, chance)
            times.append(time.perf_counter() - start)
            dd.append(len(res.changes) + 1)
            if res.status == "deleted":
                deleted += 1
                continue
            ok["nb"] += not p.nb_predicts(c)
            ok["id3"] += not p.id3_predicts(c)
            if m in BASIC:  # Table 5.3 only
                ok["svm"] += not svm_predicts(p.X, domains, c, preds[c.target])
        if m not in BASIC:
            del ok["svm"]
        out[m] = {"ms_per_suppression": 1000 * float(np.mean(times)),
                  "success_percent": {k: round(100 * v / len(cells), 1) for k, v in ok.items()},
                  "avg_direct_distance": float(np.mean(dd)), "deleted_tuples": deleted,
                  "needed_suppression": needed, "cells": len(cells)}
    return out


def generalized_problem(frame: pd.DataFrame, X: np.ndarray, domains: list[int]):
    """Breast Cancer coded for the -G methods: the 1-10 attributes by BREAST_TAXONOMY node,
    the class as before; plus the map from each column's value code to its node."""
    tax = BREAST_TAXONOMY
    taxes, Xg, to_node = [], X.copy(), []
    for j, c in enumerate(frame.columns):
        values = encode(frame[c])[1]
        if all(tax.find(int(v)) is not None for v in values):
            node = np.array([tax.index(int(v)) for v in values] + [NU])  # code -1 maps to ν
            Xg[:, j] = node[X[:, j]]
            taxes.append(tax)
            to_node.append(node)
        else:
            taxes.append(None)
            to_node.append(None)
    return Xg, [len(tax) if t else d for t, d in zip(taxes, domains)], taxes, to_node


def information_loss(X0: np.ndarray, X1: np.ndarray) -> dict:
    """Direct distance, sum of KL distances and sum of conditional entropy between two coded
    tables, with the job's conventions (ν leaves the distribution; a label's own unchanged
    cells count in its conditional entropy)."""
    m, dd, skld, sce = len(X0), int((X0 != X1).sum()), 0.0, 0.0
    for j in range(X0.shape[1]):
        a, b = X0[:, j], X1[:, j]
        before = {int(v): int(n) for v, n in zip(*np.unique(a[a != NU], return_counts=True))}
        after = {int(v): int(n) for v, n in zip(*np.unique(b[b != NU], return_counts=True))}
        skld += metrics.kl_distance(before, after, m)
        changed = a != b
        for new in np.unique(b[changed]):
            into = changed & (b == new)
            joint = {int(v): int(n) for v, n in zip(*np.unique(a[into], return_counts=True))}
            total = int((b == new).sum())
            if new != NU:
                joint[("kept", int(new))] = total - int(into.sum())
            sce += metrics.conditional_entropy(joint, total, m)
    return {"direct_distance": dd, "sum_kl_distance": skld, "sum_conditional_entropy": sce}


def strategy_runs(frame, X, domains, cells, seed) -> dict:
    """Each cell alone on the original data, deletion vs generalization counterparts: ms per
    suppression, success against the method's classifiers, deleted tuples, coin keeps, and
    the information loss of the published table (the cell itself included)."""
    Xg, gdomains, taxes, to_node = generalized_problem(frame, X, domains)
    n = X.shape[1]
    preds = {j: [a for a in range(n) if a != j] for j in range(n)}
    out = {}
    for m in [*BASIC, *GENERALIZED]:
        chance = SeededChance(seed)
        times, loss, ok = [], [], {"nb": 0, "id3": 0, "svm": 0}
        deleted = coin = 0
        for c in cells:
            if m in METHODS_G:
                gc = Cell(c.row, c.target, int(to_node[c.target][c.value]))
                p = GeneralizedMicrodata(Xg.copy(), gdomains, preds, taxonomies=taxes)
                p.X[gc.row, gc.target] = BREAST_TAXONOMY.generalize(gc.value, 1)
                start = time.perf_counter()
                res = METHODS_G[m](p, gc, chance)
                times.append(time.perf_counter() - start)
                loss.append(information_loss(Xg, p.X))
                if res.status != "deleted":
                    ok["nb"] += not p.g_predicts(gc)
                    ok["id3"] += not id3_g_predicts(p, gc)
                    leaves = np.isin(p.X[:, gc.target], BREAST_TAXONOMY.leaves_under(0))
                    ok["svm"] += not svm_predicts(p.X, gdomains, gc, preds[gc.target], known=leaves)
            else:
                p = Microdata(X.copy(), domains, preds)
                p.hide(c.row, c.target, [])
                start = time.perf_counter()
                res = DELETION[m](p, c, chance)
                times.append(time.perf_counter() - start)
                loss.append(information_loss(X, p.X))
                if res.status != "deleted":
                    ok["nb"] += not p.nb_predicts(c)
                    ok["id3"] += not p.id3_predicts(c)
                    ok["svm"] += not svm_predicts(p.X, domains, c, preds[c.target])
            deleted += res.status == "deleted"
            coin += res.status == "coin_kept"
        out[m] = {"ms_per_suppression": round(1000 * float(np.mean(times)), 3),
                  "success_percent": {k: round(100 * v / len(cells), 1) for k, v in ok.items()},
                  "deleted_tuples": deleted, "coin_kept": coin,
                  **{"avg_" + k: round(float(np.mean([x[k] for x in loss])), 4) for k in loss[0]}}
    return out


def enhanced_g_runs(frame, X, domains, seed) -> dict:
    """Figure 5.7 for e-DECP-G / e-DROPP-G: side effects (cells changed besides the
    confidential ones) against DECP-G / DROPP-G on the same cell sets as `enhanced_runs`."""
    Xg, gdomains, taxes, to_node = generalized_problem(frame, X, domains)
    rng = np.random.default_rng(seed)
    n = X.shape[1]
    preds = {j: [a for a in range(n) if a != j] for j in range(n)}
    wide = [j for j, t in enumerate(taxes) if t is not None]
    result = {"decp-g": [], "dropp-g": []}
    for size in (10, 20, 40):
        decp_cells, dropp_cells = enhanced_groups(X, wide, size, rng, Xg, to_node)
        for plain, cells in (("decp-g", decp_cells), ("dropp-g", dropp_cells)):
            row = {"cells": len(cells)}
            for label, method in (("plain", plain), ("enhanced", "e-" + plain)):
                p = GeneralizedMicrodata(Xg.copy(), gdomains, preds, taxonomies=taxes)
                res = suppress_cells_g(p, cells, method, SeededChance(seed))
                row[label + "_changed"] = int((p.X != Xg).sum()) - len(cells)
                row[label + "_deleted"] = sum(r.status == "deleted" for r in res)
            result[plain].append(row)
    for k in list(result):
        plain = sum(r["plain_changed"] for r in result[k])
        enh = sum(r["enhanced_changed"] for r in result[k])
        result[k + "_side_effect_reduction_percent"] = round(100 * (1 - enh / plain), 1) if plain else None
    return result


def sql_job_g(frame: pd.DataFrame, seed: int, n: int) -> dict:
    """The protect job with decp-g on DuckDB: taxonomy stored, labels written, checked by SQL."""
    eng = connect(":memory:")
    frame = frame.copy()
    frame.insert(0, "row_id", np.arange(1, len(frame) + 1))
    write_frame(eng, frame.convert_dtypes(), "t")
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump({BREAST_TAXONOMY.labels[0]: _nested(BREAST_TAXONOMY, 0)}, fh)
    load_taxonomy(eng, "scale10", file=fh.name)
    target = frame.columns[1]
    rows = [str(r) for r in np.random.default_rng(seed).choice(frame["row_id"], size=n, replace=False)]
    attrs = [c for c in frame.columns[1:] if c != "class"]
    start = time.perf_counter()
    r = protect_table(eng, "t", "row_id", target=target, rows=rows, method="decp-g", seed=seed,
                      taxonomies={c: "scale10" for c in attrs})
    total = time.perf_counter() - start
    eng.close()
    return {"cells": n, "method": "decp-g", "target": target, "seconds_total": round(total, 3),
            "seconds": {k: round(v, 3) for k, v in r.seconds.items()}, "ok": r.ok,
            "changed_cells": r.changed_cells, "deleted_tuples": r.deleted_tuples, "metrics": r.metrics}


def _nested(tax: Taxonomy, node: int):
    """The nested (JSON) form of a taxonomy's subtree."""
    return {tax.labels[c]: _nested(tax, c) for c in tax.children[node]} or None


def enhanced_groups(X: np.ndarray, wide: list[int], size: int, rng: np.random.Generator,
                    Xg: np.ndarray | None = None, to_node: list | None = None) -> tuple[list[Cell], list[Cell]]:
    """Cell sets meeting the enhanced methods' preconditions (Figure 5.7): for e-DECP, `size`
    rows holding the most frequent value of a random wide attribute; for e-DROPP, three wide
    attributes of each of size/2 tuples. With the -G coding (`Xg`, `to_node`) values are nodes."""
    j = int(rng.choice(wide))
    v = int(np.bincount(X[X[:, j] != NU, j]).argmax())
    rows = rng.choice(np.flatnonzero(X[:, j] == v), size=size, replace=False)
    coded = X if Xg is None else Xg
    decp_cells = [Cell(int(r), j, v if to_node is None else int(to_node[j][v])) for r in sorted(rows)]
    tuples = rng.choice(len(X), size=size // 2, replace=False)
    dropp_cells = [Cell(int(r), int(a), int(coded[r, a])) for r in sorted(tuples)
                   for a in rng.choice(wide, size=3, replace=False) if coded[r, a] != NU]
    return decp_cells, dropp_cells


def enhanced_runs(X, domains, seed) -> dict:
    """Figure 5.7: total changed cells, plain vs enhanced, on sets meeting the preconditions."""
    rng = np.random.default_rng(seed)
    n = X.shape[1]
    preds = {j: [a for a in range(n) if a != j] for j in range(n)}
    result = {"decp": [], "dropp": []}
    for size in (10, 20, 40):
        decp_cells, dropp_cells = enhanced_groups(X, [j for j, d in enumerate(domains) if d > 2], size, rng)
        result["decp"].append({"cells": size, **_compare(X, domains, preds, decp_cells, "decp", "e-decp", seed)})
        result["dropp"].append({"cells": len(dropp_cells),
                                **_compare(X, domains, preds, dropp_cells, "dropp", "e-dropp", seed)})
    for k in list(result):
        plain = sum(r["plain_changed"] for r in result[k])
        enh = sum(r["enhanced_changed"] for r in result[k])
        result[k + "_side_effect_reduction_percent"] = round(100 * (1 - enh / plain), 1) if plain else None
    return result


def _compare(X, domains, preds, cells, plain, enhanced, seed) -> dict:
    out = {}
    for label, method in (("plain", plain), ("enhanced", enhanced)):
        p = Microdata(X.copy(), domains, preds)
        res = suppress_cells(p, cells, method, SeededChance(seed))
        out[label + "_changed"] = int((p.X != X).sum()) - len(cells)  # side effects only
        out[label + "_deleted"] = sum(r.status == "deleted" for r in res)
    return out


def sql_job(frame: pd.DataFrame, seed: int, n: int) -> dict:
    """The whole protect job (SQL statistics, write-back, independent check) on DuckDB."""
    eng = connect(":memory:")
    frame = frame.copy()
    frame.insert(0, "row_id", np.arange(1, len(frame) + 1))
    write_frame(eng, frame.convert_dtypes(), "t")
    target = frame.columns[-1]
    rows = [str(r) for r in np.random.default_rng(seed).choice(frame["row_id"], size=n, replace=False)]
    start = time.perf_counter()
    r = protect_table(eng, "t", "row_id", target=target, rows=rows, method="dropp", seed=seed, top_k=3)
    total = time.perf_counter() - start
    eng.close()
    return {"cells": n, "method": "dropp", "target": target, "seconds_total": round(total, 3),
            "seconds": {k: round(v, 3) for k, v in r.seconds.items()}, "ok": r.ok,
            "changed_cells": r.changed_cells, "deleted_tuples": r.deleted_tuples,
            "metrics": r.metrics}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=100, help="sampled tuples per data set (default 100)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--realizations", type=int, default=1, help="runs with seeds seed..seed+r-1 (thesis: 5)")
    args = ap.parse_args()
    report: dict = {"thesis": THESIS, "settings": vars(args), "datasets": {}}
    for name in ("breast-cancer", "car"):
        frame, X, domains = load(name)
        runs = []
        for s in range(args.seed, args.seed + args.realizations):
            cells = sample_cells(X, domains, args.cells, np.random.default_rng(s))
            runs.append(single_cell_runs(X, domains, cells, BASIC + HYBRID, s))
        merged = {m: _mean([r[m] for r in runs]) for m in runs[0]}
        order = sorted(BASIC, key=lambda m: merged[m]["avg_direct_distance"])
        report["datasets"][name] = {
            "rows": len(X), "attributes": X.shape[1], "unknowns": int((X == NU).sum()),
            "table_5_2_ms_per_suppression": {m: round(merged[m]["ms_per_suppression"], 3) for m in [*BASIC, "nrd"]},
            "table_5_3_success_percent": {k: {m: merged[m]["success_percent"][k] for m in BASIC}
                                          for k in ("nb", "id3", "svm")},
            "figure_5_1_avg_direct_distance": {m: round(merged[m]["avg_direct_distance"], 3)
                                               for m in [*BASIC, "nrd"]},
            "figure_5_1_order_least_first": order,
            "figure_5_1_order_matches_thesis": order == THESIS["figure_5_1_order_least_first"],
            "section_5_3_hybrids": {m: {"success_percent": merged[m]["success_percent"],
                                        "avg_direct_distance": round(merged[m]["avg_direct_distance"], 3)}
                                    for m in HYBRID},
            "details": merged,
        }
        if name == "breast-cancer":
            report["figure_5_7_breast_cancer"] = enhanced_runs(X, domains, args.seed)
            strategies = [strategy_runs(frame, X, domains, sample_cells(X, domains, args.cells,
                                                                        np.random.default_rng(s)), s)
                          for s in range(args.seed, args.seed + args.realizations)]
            merged_g = {m: _mean([r[m] for r in strategies]) for m in strategies[0]}
            report["datasets"][name]["generalization_vs_deletion"] = {
                "taxonomy": BREAST_TAXONOMY.rows(),
                "thesis": "Section 5.2: -g success similar, direct distance slightly higher, sum KL, ACMI "
                          "and conditional entropy lower than deletion; Table 5.2 DECP-G 0.159 ms",
                "pairs": {m: {"deletion": merged_g[m], "generalization": merged_g[m + "-g"]} for m in BASIC}}
            report["figure_5_7_breast_cancer_generalization"] = enhanced_g_runs(frame, X, domains, args.seed)
            report["datasets"][name]["sql_job_duckdb_decp_g"] = sql_job_g(frame, args.seed, 5)
        report["datasets"][name]["sql_job_duckdb"] = sql_job(frame, args.seed, 20)
    print(json.dumps(report, indent=2, default=str))


def _mean(runs: list[dict]) -> dict:
    """Average the numeric leaves of several realizations."""
    first = runs[0]
    out = {}
    for k, v in first.items():
        if isinstance(v, dict):
            out[k] = _mean([r[k] for r in runs])
        else:
            out[k] = float(np.mean([r[k] for r in runs]))
    return out


if __name__ == "__main__":
    main()
