"""Adult, whole process start to exit (issue 11: <= 0.5 s, i.e. >= 20x the plain reference loop).

Runs the README's kanon command on Adult (mar, k = 10) through the installed console script,
as a user types it, beside baselines measured in the same run:

* the plain reference loop as a whole process: a Python process that imports anonsql, counts
  N(y, c) in SQL and runs `kanon.anonymize(reference=True)` (no rewrite, no checks: it
  favours the baseline);
* the floors a start cannot go below: an empty interpreter, one importing the libraries
  the kanon command needs (duckdb, numpy, click, sqlglot), and `floor_process`, which also does
  the least any in-database run must: open the file, fetch N(y, c) by one GROUP BY, write the
  output by one CREATE TABLE AS SELECT in a transaction, close (DuckDB checkpoints at close);
  what anonsql adds beyond it is the loop, the dictionaries, the checks and the glue.

The commands run alternately, --repeat times (the reference --reference-repeat times, in the
first rounds), and each figure is the least of its runs (the machine may be shared: a burst of
load inflates one run, not the comparison); bytecode is written by a warm-up run first, as an
installed package has it. Prints JSON; saves it with --out.

    python benchmarks/kanon_start.py [--repeat 7] [--reference-repeat 2] [--out benchmarks/results/kanon_start.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import KH_CLASS, KH_QI, adult_kh_frame, finish, load_frame  # noqa: E402

#: The console script pip installs next to this interpreter (not a version manager's shim).
SCRIPT = str(Path(sys.executable).parent / "anonsql")

REFERENCE = """
import sys
from anonsql import catalog, kanon, stats
from anonsql.engine import connect
eng = connect(sys.argv[1])
groups = stats.qi_class_counts(eng, catalog.get_table(eng, "adult"), sys.argv[2].split(","), sys.argv[3])
eng.close()
kanon.anonymize(groups.codes, groups.classes, groups.counts, groups.domain_sizes, k=10, cost="mar", seed=0,
                reference=True)
"""

FLOOR = """
import sys
import duckdb, numpy, click
con = duckdb.connect(sys.argv[1])
con.execute("SELECT " + sys.argv[2] + ", " + sys.argv[3] + ", COUNT(*) FROM adult GROUP BY ALL").fetchnumpy()
con.begin()
con.execute("CREATE OR REPLACE TABLE adult_floor AS SELECT * FROM adult")
con.commit()
con.close()
"""


def seconds(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Wall-clock seconds of one process, and its standard output; a failure stops the benchmark."""
    start = time.perf_counter()
    out = subprocess.run(command, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if out.returncode:
        raise SystemExit(f"{' '.join(command[:3])} ... failed: {out.stderr.strip().splitlines()[-1:]}")
    return elapsed, out.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--reference-repeat", type=int, default=2, help="runs of the reference (~15 s each); 0: none")
    parser.add_argument("--out")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    result: dict = {"benchmark": "kanon on Adult, whole process", "k": 10, "cost": "mar", "script": SCRIPT,
                    "load_average_at_start": [round(x, 2) for x in os.getloadavg()]}
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "adult.duckdb")
        load_frame(db, adult_kh_frame(), "adult")
        commands = {
            "python": [sys.executable, "-c", "pass"],
            "imports": [sys.executable, "-c", "import duckdb, numpy, click, sqlglot"],
            "anonsql_kanon": [SCRIPT, "kanon", "--db", db, "--table", "adult", "--qi", ",".join(KH_QI),
                              "--class", KH_CLASS, "--k", "10", "--cost", "mar", "--seed", "0",
                              "--out", "adult_k10", "--replace", "--json"],
            "floor_process": [sys.executable, "-c", FLOOR, db, ", ".join(KH_QI), KH_CLASS],
            "reference_loop_process": [sys.executable, "-c", REFERENCE, db, ",".join(KH_QI), KH_CLASS],
        }
        envs = {name: env for name in commands}
        seconds(commands["anonsql_kanon"], env)  # warm-up: bytecode written, file cache warm
        best = dict.fromkeys(commands, float("inf"))
        stages: dict = {}
        for i in range(args.repeat):
            for name, command in commands.items():
                if name == "reference_loop_process" and i >= args.reference_repeat:
                    continue
                elapsed, stdout = seconds(command, envs[name])
                if elapsed < best[name]:
                    best[name] = elapsed
                    if name == "anonsql_kanon":
                        stages = json.loads(stdout)["seconds"]
        result["seconds"] = {name: round(v, 3) for name, v in best.items() if v < float("inf")}
        result["anonsql_kanon_stages"] = {s: round(v, 3) for s, v in stages.items()}
        result["beyond_imports"] = round(best["anonsql_kanon"] - best["imports"], 3)
        result["beyond_floor_process"] = round(best["anonsql_kanon"] - best["floor_process"], 3)
        if args.reference_repeat:
            result["speedup_vs_reference_process"] = round(best["reference_loop_process"] / best["anonsql_kanon"], 1)
    result["targets"] = {"anonsql_kanon_seconds": 0.5, "speedup_vs_reference_process": 20}
    finish(result, args.out)


if __name__ == "__main__":
    main()
