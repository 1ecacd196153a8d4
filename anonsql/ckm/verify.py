"""The CKM table re-checked before success, apart from how it was written: every cell counted
afresh from the source (sql/ckm/recount.sql over the cells' query sql/ckm/cells.sql: a new scan,
with the cells defined once) and joined to the published table both ways; the ptable lookup and
the noise's arithmetic redone in numpy on the ptable rebuilt from its parameters (never read back
from the written table), and the published value required: no count in 1..js-1, |noise| <= D, a
cell missing only where its value is 0, the stored ptable the one its parameters give
(fingerprint). Over taxonomy levels (--hierarchy) the recount is of the leaf cells only, from the
source's own rows (no join to the taxonomy), added up each node's leaves in pandas along the
taxonomy read back from its store, and joined to the published rows there."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import sql
from ..catalog import Table
from ..engine import Engine
from ..report import Report
from ..tables.spec import Spec
from ..taxonomy.model import Taxonomy
from ..taxonomy.stats import read_taxonomies
from .keys import RecordKeys
from .ptable import KEY_UNITS, Ptable
from .rewrite import Magnitude, cell_bindings, labels, render


@dataclass
class Recount:
    """Every cell of the source and/or the published table: grouping id, true count n (0: not a
    cell of the source), cell key, published count (0: not published); a magnitude table's also
    its true total, mean and top-k contributions and its published total."""

    gid: np.ndarray
    n: np.ndarray
    ck: np.ndarray
    published: np.ndarray
    total: np.ndarray | None = None
    mean: np.ndarray | None = None
    top: np.ndarray | None = None
    value: np.ndarray | None = None


def lookup(table: Ptable, n: np.ndarray, ck: np.ndarray) -> np.ndarray:
    """The noise of cells of counts n >= 1 and cell keys ck (units of 2^-32): the entry of row
    min(n, top) whose interval [lo, hi) holds ck."""
    lo, _ = table.intervals()
    order = np.lexsort((lo, table.i))
    start = table.i[order] * KEY_UNITS + lo[order]
    at = np.searchsorted(start, np.minimum(n, table.top) * KEY_UNITS + ck, side="right") - 1
    return table.v[order][at]


def recount(engine: Engine, source: Table, out: Table, spec: Spec, keys: RecordKeys,
            magnitude: Magnitude | None = None) -> Recount:
    """sql/ckm/recount.sql (or recount_sum.sql): every cell of either side, counted afresh from the source."""
    if spec.hierarchy:
        return _recount_tree(engine, source, out, spec, keys, magnitude)
    binds = dict(cell_bindings(engine.dialect, source, spec, keys, magnitude), out=out.expr, label=labels(spec.dims),
                 key=sql.group_key(sql.columns(spec.dims)))
    if spec.measure:
        rows = engine.fetch_all(*render("ckm/recount_sum", engine.dialect, **binds))
        ints = np.array([[int(r[0]), int(r[2] or 0), int(r[3] or 0), int(r[4] or 0)] for r in rows], np.int64)
        floats = np.array([[float(r[j] or 0) for j in (5, 6, 7, 8)] for r in rows], float).reshape(-1, 4)
        ints = ints.reshape(-1, 4)
        return Recount(ints[:, 0], ints[:, 1], ints[:, 2], ints[:, 3], *floats.T)
    rows = engine.fetch_all(*render("ckm/recount", engine.dialect, **binds))
    arr = np.array([[int(r[0]), int(r[2] or 0), int(r[3] or 0), int(r[4] or 0)] for r in rows], np.int64)
    arr = arr.reshape(-1, 4)
    return Recount(arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3])


def _recount_tree(engine: Engine, source: Table, out: Table, spec: Spec, keys: RecordKeys,
                  magnitude: Magnitude | None) -> Recount:
    """Every cell of either side over taxonomy levels: the leaf cells counted by SQL from the source
    (sql/ckm/cells.sql, a magnitude table's contributors by sql/ckm/contributions.sql), each node
    the sum of its leaves here, the cell key the sum of their keys mod 2^32."""
    d, dims = engine.dialect, spec.dims
    binds = dict(cell_bindings(d, source, spec, keys, magnitude, leaves=True), label=labels(dims))
    trees = read_taxonomies(engine, spec.hierarchy)
    cell = [*dims, "gid"]
    if magnitude is None:
        leaf = pd.DataFrame(engine.fetch_all(*render("ckm/cells", d, **binds)), columns=[*cell, "n", "ck"])
        cells = _roll_up(leaf, trees, cell, ["n", "ck"])
    else:
        leaf = pd.DataFrame(engine.fetch_all(*render("ckm/contributions", d, **binds)),
                            columns=[*cell, "who", "n", "ck", "x"])
        shares = _roll_up(leaf, trees, [*cell, "who"], ["n", "ck", "x"]).sort_values("x", ascending=False)
        shares["top"] = shares.x.where(shares.groupby(cell, dropna=False).cumcount() < magnitude.top_k, 0.0)
        cells = shares.groupby(cell, dropna=False, as_index=False).agg(
            n=("n", "sum"), ck=("ck", "sum"), total=("x", "sum"), mean=("x", "mean"), top=("top", "sum"))
    cells["ck"] %= KEY_UNITS
    shown = ["value", "frequency"] if magnitude is not None else ["value"]
    published = pd.DataFrame(engine.fetch_all(*sql.render("ckm/read_table", d, tbl=out.expr)),
                             columns=[*cell, *shown])
    both = cells.merge(published, on=cell, how="outer")
    number = both.fillna({c: 0 for c in ["n", "ck", *shown]})
    count = number.frequency if magnitude is not None else number.value
    base = [np.asarray(x, np.int64) for x in (number.gid, number.n, number.ck, count)]
    if magnitude is None:
        return Recount(*base)
    floats = [np.asarray(number[c].fillna(0), float) for c in ("total", "mean", "top", "value")]
    return Recount(*base, *floats)


def _roll_up(leaf: pd.DataFrame, trees: dict[str, Taxonomy], by: list[str], sums: list[str]) -> pd.DataFrame:
    """Leaf cells -> every taxonomy node's cells: each leaf's row repeated for the leaf and every
    node above it (the taxonomy's lineage), then summed by `by`."""
    for dim, tree in trees.items():
        up = pd.DataFrame([(tree.labels[v], tree.labels[a]) for v in range(len(tree)) if not tree.children[v]
                           for a in tree.lineage[v]], columns=[dim, "ckm_node"])
        leaf = leaf.merge(up, on=dim).drop(columns=dim).rename(columns={"ckm_node": dim})
    return leaf.groupby(by, dropna=False, as_index=False)[sums].sum()


def checks(report: Report, cells: Recount, table: Ptable, stored: str | None = None,
           magnitude: Magnitude | None = None) -> None:
    """Record the checks of a recount against the ptable (`stored`: the written ptable's fingerprint;
    `magnitude`: a magnitude table's noise)."""
    p = table.params
    real = cells.n > 0
    noise = np.zeros(len(cells.n), np.int64)
    noise[real] = lookup(table, cells.n[real], cells.ck[real])
    expected = np.where(real, cells.n + noise, 0)
    shown = expected != 0  # what the table publishes (a count published as 0 is left out)
    wrong = int((expected != cells.published).sum())
    query = "ckm/recount_sum" if magnitude is not None else "ckm/recount"
    report.check("every published count is the recount plus its cell key's noise", wrong == 0, query,
                 f"{len(cells.n):,} cells" if not wrong else f"{wrong:,} of {len(cells.n):,} cells differ")
    scale = cells.mean if magnitude is not None and magnitude.scale == "mean" else cells.top
    if magnitude is not None and cells.total is not None and cells.value is not None and scale is not None:
        want = np.where(shown, cells.total + magnitude.m * scale * noise, 0.0)
        off = int((np.abs(want - cells.value) > 1e-9 * np.maximum(1.0, np.abs(want))).sum())
        report.check("every published total is the recount plus m * scale * noise", off == 0, query,
                     f"{int(shown.sum()):,} cells" if not off else f"{off:,} cells differ")
    small = int(((cells.published >= 1) & (cells.published < p.js)).sum())
    report.check(f"no published count in 1..{p.js - 1}", small == 0, query,
                 "" if not small else f"{small:,} cells")
    far = int((np.abs(cells.published - cells.n) > p.D).sum())
    report.check(f"|noise| <= D = {p.D}", far == 0, query, "" if not far else f"{far:,} cells")
    zero = int(((cells.n == 0) & (cells.published != 0)).sum())
    report.check("an empty cell stays 0", zero == 0, query, "" if not zero else f"{zero:,} cells")
    if stored is not None:
        report.check("the stored ptable is the one its parameters give", stored == table.fingerprint(),
                     "ckm/read_table", f"fingerprint {table.fingerprint()[:16]}")
