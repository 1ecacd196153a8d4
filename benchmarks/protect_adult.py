"""Whole `anonsql protect` processes on Adult (issue 36), new beside a baseline in the same run.

The issue's run: `anonsql dataset adult`, a row key `id` (the row number), then
`anonsql protect --key id --target income --rows 2,7,11 --method dropp` (target: the whole
process <= 5 s; 2 min 43 s before, ~97% in protect/stats.py's distributions). The baseline is a
committed implementation (--old, `main` by default; benchmarks/common.py old_tree), each side a
fresh `python -c` process timed from start to exit (wall and CPU seconds: on a shared machine the
CPU time is the figure load does not inflate), the JSON report kept. Both must choose the
same cells (status, predictions, changes) and report exactly the same metrics (checked; the
metrics are math.fsum's, so equal counts give equal bits). Prints JSON; saves it with --out.

    python benchmarks/protect_adult.py [--old main] [--rows 2,7,11] [--method dropp] [--skip-old]
                                       [--out benchmarks/results/protect_adult.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from common import finish, old_env, old_tree  # noqa: E402

#: a process running the CLI, naming first on stderr the anonsql it imported
RUN = ("import sys, anonsql; print(anonsql.__file__, file=sys.stderr); from anonsql.cli import main; "
       "sys.exit(main(sys.argv[1:]))")


def prepare(db: str) -> None:
    """Adult (32,560 rows) with a row key `id` (its row number), as table adult_id."""
    subprocess.run([sys.executable, "-c", RUN, "dataset", "adult", "--db", db, "--table", "adult", "--quiet"],
                   env=old_env(None), check=True, capture_output=True, cwd=Path(db).parent)
    import duckdb

    with duckdb.connect(db) as con:
        con.execute("CREATE TABLE adult_id AS SELECT row_number() OVER () AS id, * FROM adult")


def protect(tree: Path | None, db: str, out: str, rows: str, method: str) -> dict:
    """One whole protect process: wall seconds, its JSON report (the private parts included:
    the comparison needs the cells; nothing of it is saved)."""
    argv = ["protect", "--db", db, "--table", "adult_id", "--key", "id", "--target", "income", "--rows", rows,
            "--method", method, "--out", out, "--json", "--quiet"]
    start, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    # run outside the checkout: `python -c` puts the working directory first on sys.path
    done = subprocess.run([sys.executable, "-c", RUN, *argv], env=old_env(tree), capture_output=True, text=True,
                          cwd=Path(db).parent)
    seconds = time.perf_counter() - start
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_seconds = round(used.ru_utime + used.ru_stime - cpu.ru_utime - cpu.ru_stime, 2)
    if done.returncode:
        return {"seconds": seconds, "cpu_seconds": cpu_seconds, "error": done.stderr.strip().splitlines()[-1:]}
    return {"seconds": seconds, "cpu_seconds": cpu_seconds, "report": json.loads(done.stdout),
            "imported": done.stderr.strip().splitlines()[0]}


def same(old: dict, new: dict) -> dict:
    """Cells (status, predictions, side effects), changes and metrics compared exactly."""
    fields = ("key", "column", "status", "prediction_before", "prediction_after", "side_effects", "next_best_guess")
    cells = [[c.get(f) for f in fields] for c in old["cells"]] == [[c.get(f) for f in fields] for c in new["cells"]]
    return {"cells": cells, "changes": old["changes"] == new["changes"], "metrics": old["metrics"] == new["metrics"]}


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--old", default="main", help="the baseline's git ref")
    args.add_argument("--rows", default="2,7,11")
    args.add_argument("--method", default="dropp")
    args.add_argument("--skip-old", action="store_true", help="time the working tree only")
    args.add_argument("--out")
    opts = args.parse_args()
    result: dict = {"load_average_at_start": [round(x, 2) for x in os.getloadavg()], "rows": opts.rows,
                    "method": opts.method}
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "adult.duckdb")
        prepare(db)
        new = protect(None, db, "adult_new", opts.rows, opts.method)
        result["new_seconds"] = round(new["seconds"], 2)
        result["new_cpu_seconds"] = new["cpu_seconds"]
        result["new_stages"] = new.get("report", {}).get("seconds")
        result["new_imported"] = new.get("imported")
        if not opts.skip_old:
            old = protect(old_tree(opts.old), db, "adult_old", opts.rows, opts.method)
            result["old"] = opts.old
            result["old_seconds"] = round(old["seconds"], 2)
            result["old_cpu_seconds"] = old["cpu_seconds"]
            result["old_stages"] = old.get("report", {}).get("seconds")
            result["old_imported"] = old.get("imported")
            if "report" in old and "report" in new:
                result["same"] = same(old["report"], new["report"])
            else:
                result["errors"] = {"old": old.get("error"), "new": new.get("error")}
    finish(result, opts.out)


if __name__ == "__main__":
    main()
