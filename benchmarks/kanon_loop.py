"""Seconds of the Kameya & Hayashi loop (anonsql.kanon): reference vs compiled, and scaling. Prints JSON.

Adult (the paper's 8 QIs, k = 10): both loops for each cost, their ratio, and whether they
decided identically. Synthetic tables of 10^4..10^6 rows: each Adult QI resampled independently
within each class from Adult's class-conditional frequencies (seeded), so the count table grows
like real data would; the reference loop only where it finishes in reasonable time.

    python benchmarks/kanon_loop.py [--sizes 10000 100000 1000000] [--costs ham info mar hybrid]
                                    [--baseline /tmp/old/dist/anonsql/kanon/_core.cpython-311-x86_64-linux-gnu.so]

--baseline times another build of the compiled loop beside the installed one, interleaved in the
same run, and checks that both decide identically (on a shared machine only a ratio measured that
way means anything). One of an older commit: `git worktree add /tmp/old <commit> && pip wheel
--no-deps -w /tmp/old/dist /tmp/old && cd /tmp/old/dist && unzip *.whl 'anonsql/kanon/_core*'`.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

QI = ["age", "workclass", "education", "marital_status", "occupation", "race", "sex", "native_country"]
ADULT = Path(__file__).resolve().parents[1] / "fixtures" / "adult.csv.gz"


def adult_frame() -> pd.DataFrame:
    """Adult as in Section 4: 8 QIs, age in 5-year bins with [80,95), rows with '?' dropped."""
    df = pd.read_csv(ADULT, skipinitialspace=True, na_values="?").dropna(subset=QI + ["income"])
    df["age"] = pd.cut(df["age"], bins=list(range(15, 85, 5)) + [95], right=False)
    return df


def count_table(columns: list[np.ndarray], classes: np.ndarray):
    """(codes, classes, counts) of the distinct (QI tuple, class) combinations."""
    uniq, counts = np.unique(np.column_stack(columns + [classes]), axis=0, return_counts=True)
    return uniq[:, :-1].astype(np.int32), uniq[:, -1].astype(np.int64), counts.astype(np.int64)


def adult_arrays(df: pd.DataFrame):
    cols, sizes = [], []
    for q in QI:
        codes, uniques = pd.factorize(df[q])
        cols.append(codes)
        sizes.append(len(uniques))
    return (*count_table(cols, pd.factorize(df["income"])[0]), np.array(sizes))


def synthetic_arrays(df: pd.DataFrame, rows: int, seed: int = 0):
    """`rows` records: class ~ p(c), each QI ~ p(x_j | c) of Adult, independently (seeded)."""
    rng = np.random.default_rng(seed)
    income, _ = pd.factorize(df["income"])
    prior = np.bincount(income) / len(income)
    classes = rng.choice(len(prior), size=rows, p=prior)
    cols, sizes = [], []
    for q in QI:
        codes, uniques = pd.factorize(df[q])
        col = np.empty(rows, dtype=np.int32)
        for c in range(len(prior)):
            freq = np.bincount(codes[income == c], minlength=len(uniques)) / (income == c).sum()
            mask = classes == c
            col[mask] = rng.choice(len(uniques), size=int(mask.sum()), p=freq)
        cols.append(col)
        sizes.append(len(uniques))
    return (*count_table(cols, classes), np.array(sizes))


def timed(fn, repeat: int = 1):
    """(best wall seconds over `repeat` runs, last result)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def load_kernel(path: str):
    """The compiled loop built at `path` (a _core .so), as a module."""
    spec = importlib.util.spec_from_file_location("_core", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def kernel(module):
    """anonsql.kanon runs `module`'s loop inside the block (None: the installed one)."""
    from anonsql.kanon import fast  # noqa: PLC0415

    installed = fast._core
    fast._core = module or installed
    try:
        yield
    finally:
        fast._core = installed


def against_baseline(baseline, fn, repeat: int) -> tuple[float, float, object, object]:
    """(best seconds installed, best seconds baseline, last results), runs interleaved."""
    best, base_best, out, base_out = float("inf"), float("inf"), None, None
    for _ in range(repeat):
        seconds, out = timed(fn)
        best = min(best, seconds)
        with kernel(baseline):
            seconds, base_out = timed(fn)
        base_best = min(base_best, seconds)
    return best, base_best, out, base_out


def fast_run(baseline, fn, repeat: int) -> tuple[float, object, dict]:
    """(best seconds of the installed loop, its result, the baseline's figures beside it: {} without
    one); with a baseline the two run interleaved `repeat` times, without it `repeat` runs."""
    if not baseline:
        fast_s, fast = timed(fn, repeat=repeat)
        return fast_s, fast, {}
    fast_s, base_s, fast, base = against_baseline(baseline, fn, repeat)
    same = np.array_equal(fast.final_codes, base.final_codes) and np.array_equal(fast.gammas, base.gammas)
    return fast_s, fast, {"baseline_seconds": round(base_s, 4), "ratio_to_baseline": round(fast_s / base_s, 3),
                          "identical_to_baseline": bool(same)}


def summary(result) -> dict:
    return {"iterations": result.iterations, "suppressed_ratio": round(result.suppressed_ratio, 5),
            "kl_divergence": result.kl_divergence, "groups": result.groups}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--costs", nargs="+", default=["ham", "info", "mar", "hybrid"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--reference-max-tuples", type=int, default=15_000,
                        help="run the reference loop on synthetic tables with at most this many tuples")
    parser.add_argument("--baseline", help="another build of anonsql/kanon/_core (a .so) to time beside this one")
    args = parser.parse_args()
    baseline = load_kernel(args.baseline) if args.baseline else None

    start = time.perf_counter()
    from anonsql.kanon import anonymize  # noqa: PLC0415 (timed: the compiled loop has no start-up cost)
    import_seconds = time.perf_counter() - start

    out = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__},
           "import_seconds": round(import_seconds, 4), "k": args.k, "adult": {}, "synthetic": []}
    df = adult_frame()
    codes, classes, counts, sizes = adult_arrays(df)
    out["adult"]["tuples"] = len(counts)
    out["adult"]["rows"] = int(counts.sum())
    for cost in args.costs:
        run = dict(k=args.k, cost=cost)
        fast_s, fast, versus = fast_run(baseline, functools.partial(anonymize, codes, classes, counts, sizes, **run),
                                        repeat=5 if baseline else 3)
        ref_s, ref = timed(lambda run=run: anonymize(codes, classes, counts, sizes, reference=True, **run))
        same = np.array_equal(fast.final_codes, ref.final_codes) and np.array_equal(fast.gammas, ref.gammas)
        out["adult"][cost] = {
            "fast_seconds": round(fast_s, 4), "reference_seconds": round(ref_s, 3),
            "speedup": round(ref_s / fast_s, 1), "identical": bool(same), **versus, **summary(fast),
        }
        print(f"adult {cost}: {out['adult'][cost]}", file=sys.stderr, flush=True)

    for rows in args.sizes:
        start = time.perf_counter()
        s_codes, s_classes, s_counts, s_sizes = synthetic_arrays(df, rows)
        entry = {"rows": rows, "tuples": len(s_counts), "generate_seconds": round(time.perf_counter() - start, 3)}
        for cost in args.costs:
            run = dict(k=args.k, cost=cost)
            fast_s, fast, versus = fast_run(
                baseline, functools.partial(anonymize, s_codes, s_classes, s_counts, s_sizes, **run),
                repeat=2 if baseline else 1)
            figures = {"fast_seconds": round(fast_s, 3), **versus, **summary(fast)}
            if len(s_counts) <= args.reference_max_tuples:
                ref_s, ref = timed(functools.partial(anonymize, s_codes, s_classes, s_counts, s_sizes, reference=True,
                                                     **run))
                figures["reference_seconds"] = round(ref_s, 3)
                figures["speedup"] = round(ref_s / fast_s, 1)
                figures["identical"] = bool(np.array_equal(fast.final_codes, ref.final_codes))
            else:
                figures["reference_seconds"] = f"skipped: {len(s_counts)} tuples > --reference-max-tuples, too slow"
            entry[cost] = figures
            print(f"synthetic {rows} {cost}: {figures}", file=sys.stderr, flush=True)
        out["synthetic"].append(entry)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
