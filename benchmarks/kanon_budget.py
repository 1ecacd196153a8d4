"""Issue 31's budget: today's code against an older commit, in the same run, on the same tables.

* kanon's whole job (benchmarks/kanon_scale.py's job and generator: mar, k = 10, 8 QIs) on DuckDB
  at 10^7 rows and on PostgreSQL at 10^6 (a throwaway server), old and new alternately;
* the README's Adult kanon as a whole process (the console script's `run()`), CPU seconds of the
  child, old and new alternately.

The old code is `git archive REF` (benchmarks/common.old_tree) with its C kernel compiled by the
flags pyproject.toml gives (-O2 -ffp-contract=off); the new code is the working tree, its kernel
compiled the same way into a copy, so the two differ only in their sources. Prints JSON.

    python benchmarks/kanon_budget.py [--old 510795b] [--repeat 3] [--start-repeat 9] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kanon_scale  # noqa: E402
from common import ROOT, engines, finish, old_env, old_tree  # noqa: E402

START_ARGS = ["kanon", "--table", "adult", "--qi", "age,workclass,education,marital_status,occupation,race,sex,"
              "native_country", "--class", "income", "--k", "10", "--cost", "mar", "--seed", "0", "--out",
              "adult_k10", "--replace", "--quiet"]
RUN = "from anonsql.cli import run; run()"


def compiled(tree: Path) -> Path:
    """`tree` with anonsql/kanon/_core compiled in place (pyproject's flags)."""
    source = tree / "anonsql" / "kanon" / "_core.c"
    target = source.with_name("_core" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-ffp-contract=off", f"-I{sysconfig.get_paths()['include']}",
                    f"-I{np.get_include()}", str(source), "-o", str(target)], check=True)
    return tree


def new_tree() -> Path:
    """The working tree's sources laid out as old_tree lays out a commit's."""
    tmp = Path(tempfile.mkdtemp(prefix="anonsql_new_"))
    shutil.copytree(ROOT / "anonsql", tmp / "anonsql", symlinks=False,
                    ignore=shutil.ignore_patterns("*.so", "__pycache__", "_sql", "_fixtures"))
    for data, package in (("sql", "_sql"), ("fixtures", "_fixtures")):
        shutil.copytree(ROOT / data, tmp / "anonsql" / package)
        (tmp / "anonsql" / package / "__init__.py").touch()
    return tmp


def jobs(trees: dict[str, Path], repeat: int) -> dict:
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp, engines(tmp, True) as dbs:
        plan = [("duckdb_1e7", f"{tmp}/scale.duckdb", "adult_1e7")]
        kanon_scale.build(plan[0][1], 10**7, "adult_1e7")
        if "postgres" in dbs:
            kanon_scale.load(dbs["postgres"], kanon_scale.adult_like(10**6), "adult_1e6")
            plan.append(("postgres_1e6", dbs["postgres"], "adult_1e6"))
        for name, url, table in plan:
            runs: dict[str, list[float]] = {"old": [], "new": []}
            for r in range(repeat):
                for which in ("old", "new") if r % 2 == 0 else ("new", "old"):
                    os.environ.update(old_env(trees[which]))
                    row = kanon_scale.job(url, table, 900)
                    runs[which].append(row.get("seconds", float("nan")))
            out[name] = {w: {"runs": v, "median": statistics.median(v)} for w, v in runs.items()}
            out[name]["new_over_old_median"] = round(out[name]["new"]["median"] / out[name]["old"]["median"], 3)
    return out


def start(trees: dict[str, Path], repeat: int) -> dict:
    runs: dict[str, list[float]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory() as tmp:
        for which, tree in trees.items():  # each its own file; a warm-up run writes bytecode
            env = old_env(tree)
            subprocess.run([sys.executable, "-c", RUN, "dataset", "adult-kh", "--db", f"{tmp}/{which}.duckdb",
                            "--table", "adult"], env=env, check=True, capture_output=True)
            subprocess.run([sys.executable, "-c", RUN, *START_ARGS, "--db", f"{tmp}/{which}.duckdb"], env=env,
                           check=True, capture_output=True)
        for r in range(repeat):
            for which in ("old", "new") if r % 2 == 0 else ("new", "old"):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                subprocess.run([sys.executable, "-c", RUN, *START_ARGS, "--db", f"{tmp}/{which}.duckdb"],
                               env=old_env(trees[which]), check=True, capture_output=True)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                runs[which].append(round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 3))
    return {w: {"cpu_seconds": v, "min": min(v), "median": statistics.median(v)} for w, v in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", default="510795b", help="the commit compared against (default: issue 31's)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each job, old and new alternately")
    parser.add_argument("--start-repeat", type=int, default=9)
    parser.add_argument("--out")
    args = parser.parse_args()
    trees = {"old": compiled(old_tree(args.old)), "new": compiled(new_tree())}
    result = {"benchmark": f"issue 31's budget: kanon whole job and Adult start, {args.old} against the working tree",
              "old": args.old, "load_average_before": os.getloadavg(),
              "adult_start": start(trees, args.start_repeat), "jobs": jobs(trees, args.repeat)}
    finish(result, args.out)


if __name__ == "__main__":
    main()
