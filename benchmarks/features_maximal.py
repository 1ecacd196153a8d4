"""Maximal frequent itemsets M_k (Zhang et al. 2017, Alg. 1 line 1): our miner vs PyPI libraries.

Candidates: anonsql.features.maximal (numpy Eclat over the distinct rows with their counts),
pyfim (Borgelt's C FIM library: eclat and fpgrowth with target 'm') and mlxtend's fpmax (pure
Python on a pandas frame). Each must return the same M_k; seconds are the best of 3. Data:
Adult binarized by benchmarks/adult_bins.toml (k = 5, 8, 11) and random sparse tables.
Libraries not installed are reported as missing; `--libs DIR` adds a pip --target directory.

    pip install --target /tmp/fimlibs pyfim mlxtend
    python benchmarks/features_maximal.py --libs /tmp/fimlibs
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from common import best_of

import anonsql
from anonsql.engine import connect
from anonsql.features import BinaryCounts, maximal_itemsets
from anonsql.features.job import binarize
from anonsql.features.spec import parse_spec
from anonsql.features.stats import mask_counts, two_classes

SPEC = Path(__file__).with_name("adult_bins.toml")


def adult_counts() -> BinaryCounts:
    eng = connect(":memory:")
    anonsql.load_dataset(eng, "adult")
    b = binarize(eng, "adult", parse_spec(SPEC.read_text()), "adult_bin", keep=["income"])
    table = anonsql.catalog.get_table(eng, "adult_bin")
    data = mask_counts(eng, table, b.columns, "income", two_classes(eng, table, "income")[0])
    eng.close()
    return data


def random_counts(rows: int, cols: int, density: float, seed: int) -> BinaryCounts:
    rng = np.random.default_rng(seed)
    x = rng.random((rows, cols)) < density
    return BinaryCounts.from_rows(x, rng.integers(0, 2, rows), 1)


def rows_of(data: BinaryCounts) -> np.ndarray:
    """The row-by-row 0/1 matrix (libraries take transactions, not weighted distinct rows)."""
    return np.repeat(data.masks, data.counts, axis=0)


def miners():
    found = {"anonsql": lambda data, k: maximal_itemsets(data, k, miner="anonsql")}
    try:
        import fim

        def pyfim(algo):
            def mine(data, k):
                tracts = [np.flatnonzero(r).tolist() for r in rows_of(data)]
                return [tuple(sorted(s)) for s, _ in algo(tracts, target="m", supp=-k, report="a")]
            return mine
        found["pyfim.eclat"] = pyfim(fim.eclat)
        found["pyfim.fpgrowth"] = pyfim(fim.fpgrowth)
    except ImportError:
        found["pyfim"] = None
    try:
        from mlxtend.frequent_patterns import fpmax

        def mlx(data, k):
            rows = rows_of(data)
            frame = pd.DataFrame(rows, columns=list(range(rows.shape[1])))
            res = fpmax(frame, min_support=k / len(rows))
            return [tuple(sorted(s)) for s in res["itemsets"]]
        found["mlxtend.fpmax"] = mlx
    except ImportError:
        found["mlxtend.fpmax"] = None
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--libs", help="a pip --target directory holding pyfim / mlxtend")
    args = ap.parse_args()
    if args.libs:
        sys.path.insert(0, args.libs)
    cases = [("adult", adult_counts(), k) for k in (5, 8, 11)]
    cases += [("random 2000x40 @10%", random_counts(2000, 40, 0.10, 0), 5),
              ("random 10000x200 @3%", random_counts(10_000, 200, 0.03, 1), 5)]
    results = []
    for name, data, k in cases:
        entry = {"data": name, "k": k, "rows": int(data.counts.sum()), "distinct_rows": len(data.counts)}
        reference = None
        for label, mine in miners().items():
            if mine is None:
                entry[label] = "not installed"
                continue
            sets = sorted(set(mine(data, k)))
            reference = sets if reference is None else reference
            seconds = best_of(lambda mine=mine, data=data, k=k: mine(data, k))
            entry[label] = {"seconds": round(seconds, 4), "maximal_sets": len(sets),
                            "same_as_anonsql": sets == reference}
        results.append(entry)
        print(json.dumps(entry), flush=True)


if __name__ == "__main__":
    main()
