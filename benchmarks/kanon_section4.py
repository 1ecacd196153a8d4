"""Reproduce Kameya & Hayashi (2016) Section 4 on the bundled Adult: k = 2, 5, 10, ..., 50,
the four costs, several seeds. Writes a CSV and the plots of Figures 1-2, prints JSON means.

    python benchmarks/kanon_section4.py [--seeds 3] [--out benchmarks/out] [--no-tree]

Figure 1: KL divergence (eq. 7) and suppressed-cell ratio vs k. Figure 2: naive Bayes and
decision-tree error (stratified 10-fold CV, trained on the anonymized rows, tested on the
original rows) vs k, with the original table's error as a line. The tree is scikit-learn's
entropy tree, standing in for the paper's C4.5.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import KH_CLASS, KH_QI  # noqa: E402

import anonsql  # noqa: E402
from anonsql.engine import connect  # noqa: E402

KS = [2, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50]
COSTS = ["ham", "info", "mar", "hybrid"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--out", default="benchmarks/out")
    parser.add_argument("--no-tree", action="store_true", help="naive Bayes only (much faster)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    classifiers = "nb" if args.no_tree else "nb,tree"
    eng = connect(":memory:")
    anonsql.load_dataset(eng, "adult-kh", "adult")
    rows = []
    baseline = None
    for k in KS:
        for cost in COSTS:
            for seed in range(args.seeds):
                r = anonsql.k_anonymize(eng, "adult", KH_QI, KH_CLASS, k, cost=cost, seed=seed, out="anon",
                                        replace=True)
                ev = anonsql.evaluate_classifiers(eng, "adult", "anon", KH_QI, KH_CLASS, folds=10, seed=0,
                                                  classifiers=classifiers)
                baseline = {c: v.baseline_error for c, v in ev.classifiers.items()}
                row = {"k": k, "cost": cost, "seed": seed, "suppressed_ratio": r.suppressed_ratio,
                       "kl_divergence": r.kl_divergence, "iterations": r.iterations,
                       "seconds": sum(r.seconds.values())}
                row |= {f"{c}_error": v.error for c, v in ev.classifiers.items()}
                rows.append(row)
                print(json.dumps(row), file=sys.stderr)
    with open(out / "kanon_section4.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    means = _means(rows)
    _plots(means, baseline, out)
    print(json.dumps({"benchmark": "Kameya & Hayashi Sec. 4 on adult-kh", "seeds": args.seeds,
                      "baseline_error": baseline, "means": means}, indent=1))


def _means(rows: list[dict]) -> dict:
    groups = defaultdict(list)
    for r in rows:
        groups[(r["cost"], r["k"])].append(r)
    metrics = [m for m in rows[0] if m not in ("k", "cost", "seed")]
    return {cost: {str(k): {m: round(sum(r[m] for r in groups[(cost, k)]) / len(groups[(cost, k)]), 6)
                            for m in metrics} for k in KS} for cost in COSTS}


def _plots(means: dict, baseline: dict, out: Path) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed (pip install 'anonsql[plots]'): no plots", file=sys.stderr)
        return
    for name, panels in (("figure1", [("kl_divergence", "KL divergence"), ("suppressed_ratio", "suppressed cells")]),
                         ("figure2", [(f"{c}_error", f"{c} error") for c in baseline])):
        fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4))
        for ax, (metric, label) in zip(axes if len(panels) > 1 else [axes], panels):
            for cost in COSTS:
                ax.plot(KS, [means[cost][str(k)][metric] for k in KS], marker="o", label=cost)
            if metric.endswith("_error"):
                ax.axhline(baseline[metric[:-6]], color="black", linestyle="--", label="original")
            ax.set_xlabel("k")
            ax.set_ylabel(label)
            ax.legend()
        fig.tight_layout()
        fig.savefig(out / f"kanon_section4_{name}.png", dpi=100)
        plt.close(fig)


if __name__ == "__main__":
    main()
