"""ms per suppression of protect's algorithms (issue 16), new beside today's (HEAD) in the same run.

Today's implementation is `git show BASE:anonsql/protect/...` (BASE: 12d2f1f, the last commit
before issue 16's work) copied into a temporary package;
both run the same cells (each suppressed alone on the original data, as Section 5.1 samples
them) on Car and Breast Cancer, and must make the same decisions (checked: same status and
changes per cell). With --top-k 2 (the old default) the draws match; the new default draws
among every admissible value. Prints JSON; saves it with --out.

    python benchmarks/protect_speed.py [--cells 30] [--seed 0] [--out benchmarks/results/protect_speed.json]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from protect_experiments import BREAST_TAXONOMY, load, sample_cells  # noqa: E402

from anonsql.protect import deletion, enhanced, generalization  # noqa: E402

MODULES = ["naive_bayes", "id3", "deletion", "enhanced", "taxonomy", "partial_counts", "generalization", "suppress"]
METHODS = ["decp", "incp", "dropp", "hid3", "hid3+dropp"]
METHODS_G = ["decp-g", "incp-g", "dropp-g", "hid3-g"]
TARGET_MS = {"hid3": 5.0, "hid3-g": 5.0}  # the targets: <= 1 ms, HID3 and HID3-G <= 5 ms


#: The last commit before issue 16's changes to anonsql/protect: "today's implementation".
BASE = "12d2f1f"


def old_package() -> str:
    """BASE's pure algorithm modules as the package `old_protect` in a temporary directory."""
    tmp = Path(tempfile.mkdtemp(prefix="anonsql_old_"))
    pkg = tmp / "old_protect"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for m in MODULES:
        text = subprocess.run(["git", "show", f"{BASE}:anonsql/protect/{m}.py"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout
        (pkg / f"{m}.py").write_text(text.replace("from ..", "from anonsql."))
    sys.path.insert(0, str(tmp))
    return "old_protect"


def runners(pkg) -> dict:
    """method -> (Microdata class, run function) for one implementation."""
    d, g = pkg["deletion"], pkg["generalization"]
    out = {m: (d.Microdata, {"decp": d.decp, "incp": d.incp, "dropp": d.dropp, "hid3": d.hid3}.get(m)) for m in METHODS}
    out["hid3+dropp"] = (d.Microdata, None)
    for m in METHODS_G:
        out[m] = (g.GeneralizedMicrodata, g.METHODS_G[m])
    return out


def hybrid(d, p, cell, chance):
    """hid3 then dropp, as the driver's hybrid (enough for timing)."""
    changes = []
    for step in (d.hid3, d.dropp):
        out = step(p, cell, chance)
        changes += out.changes
    return changes


def time_method(pkg, name, X, domains, preds, cells, seed, top_k, taxes=None) -> tuple[float, list]:
    """Mean ms per suppression and each cell's (status, changes)."""
    d = pkg["deletion"]
    cls, run = runners(pkg)[name]
    chance = d.SeededChance(seed)
    times, decisions = [], []
    for c in cells:
        if taxes is None:
            p = cls(X.copy(), domains, preds, k=top_k)
            p.hide(c.row, c.target, [])
        else:
            p = cls(X.copy(), domains, preds, k=top_k, taxonomies=taxes)
            p.X[c.row, c.target] = BREAST_TAXONOMY.generalize(c.value, 1)
        start = time.perf_counter()
        if run is None:
            out = hybrid(d, p, c, chance)
            decisions.append(("hybrid", out))
        else:
            res = run(p, c, chance)
            decisions.append((res.status, res.changes))
        times.append(time.perf_counter() - start)
    return 1000 * float(np.mean(times)), decisions


def dataset(name: str, cells_n: int, seed: int, old, new, top_k) -> dict:
    frame, X, domains = load(name)
    n = X.shape[1]
    preds = {j: [a for a in range(n) if a != j] for j in range(n)}
    cells = sample_cells(X, domains, cells_n, np.random.default_rng(seed))
    out = {}
    for m in METHODS:
        ms_old, dec_old = time_method(old, m, X, domains, preds, cells, seed, 2)
        ms_new, dec_new = time_method(new, m, X, domains, preds, cells, seed, 2)
        ms_default, _ = time_method(new, m, X, domains, preds, cells, seed, top_k)
        out[m] = {"ms_old": round(ms_old, 3), "ms_new": round(ms_new, 3), "ms_new_default_rnbg": round(ms_default, 3),
                  "speedup": round(ms_old / ms_new, 1), "same_decisions": dec_old == dec_new,
                  "target_ms": TARGET_MS.get(m, 1.0)}
    if name == "breast-cancer":
        gcols = [j for j in range(n) if domains[j] == 10]
        taxes = [BREAST_TAXONOMY if j in gcols else None for j in range(n)]
        Xg = X.copy()
        gdomains = list(domains)
        for j in gcols:  # values 1..10 coded 0..9 -> taxonomy node of the label
            labels = sorted(frame.drop(columns=[c for c in ("id",) if c in frame]).iloc[:, j].dropna().unique())
            codes = np.array([BREAST_TAXONOMY.index(str(int(v))) for v in labels])
            Xg[:, j] = np.where(X[:, j] >= 0, codes[np.maximum(X[:, j], 0)], -1)
            gdomains[j] = len(BREAST_TAXONOMY)
        gcells = [deletion.Cell(c.row, c.target, int(Xg[c.row, c.target])) for c in cells if c.target in gcols]
        for m in METHODS_G:
            ms_old, dec_old = time_method(old, m, Xg, gdomains, preds, gcells, seed, 2, taxes)
            ms_new, dec_new = time_method(new, m, Xg, gdomains, preds, gcells, seed, 2, taxes)
            out[m] = {"ms_old": round(ms_old, 3), "ms_new": round(ms_new, 3), "speedup": round(ms_old / ms_new, 1),
                      "same_decisions": dec_old == dec_new, "target_ms": TARGET_MS.get(m, 1.0)}
    return {"rows": len(X), "cells": len(cells), "methods": out}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out")
    args = ap.parse_args()
    name = old_package()
    old = {m: importlib.import_module(f"{name}.{m}") for m in ("deletion", "enhanced", "generalization")}
    new = {"deletion": deletion, "enhanced": enhanced, "generalization": generalization}
    result = {"load_average_at_start": [round(x, 2) for x in os.getloadavg()],
              "benchmark": "protect_speed", "cells": args.cells, "seed": args.seed,
              "note": "ms_old/ms_new: top-k 2 (old default) on both; ms_new_default_rnbg: the new default "
                      "(draw among all admissible values)",
              "datasets": {d: dataset(d, args.cells, args.seed, old, new, None) for d in ("car", "breast-cancer")}}
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    result["note_load"] = ("the machine is shared with other helpers: the 1/5/15-minute load averages "
                           "(os.getloadavg) are recorded at start and end; figures are inflated by contention")
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
