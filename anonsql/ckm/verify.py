"""The CKM table re-checked before success, apart from how it was written: every cell recounted
from the source with its cell key (sql/ckm/recount.sql), the ptable lookup redone in numpy on the
ptable rebuilt from its parameters (never read back from the written table), and the published
value required: no count in 1..js-1, |noise| <= D, a cell missing only where its value is 0,
the stored ptable the one its parameters give (fingerprint)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import sql
from ..catalog import Table
from ..engine import Engine
from ..report import Report
from ..tables.spec import Spec
from .keys import RecordKeys
from .ptable import KEY_UNITS, Ptable
from .rewrite import cell_bindings, labels, render


@dataclass
class Recount:
    """Every cell of the source and/or the published table: grouping id, true count n (0: not a
    cell of the source), cell key, published value (0: not published)."""

    gid: np.ndarray
    n: np.ndarray
    ck: np.ndarray
    published: np.ndarray


def lookup(table: Ptable, n: np.ndarray, ck: np.ndarray) -> np.ndarray:
    """The noise of cells of counts n >= 1 and cell keys ck (units of 2^-32): the entry of row
    min(n, top) whose interval [lo, hi) holds ck."""
    lo, _ = table.intervals()
    order = np.lexsort((lo, table.i))
    start = table.i[order] * KEY_UNITS + lo[order]
    at = np.searchsorted(start, np.minimum(n, table.top) * KEY_UNITS + ck, side="right") - 1
    return table.v[order][at]


def recount(engine: Engine, source: Table, out: Table, spec: Spec, keys: RecordKeys) -> Recount:
    """sql/ckm/recount.sql: every cell of either side, counted afresh from the source."""
    cols = sql.columns(spec.dims)
    rows = engine.fetch_all(*render(
        "ckm/recount", engine.dialect, out=out.expr, key=sql.group_key([e.this for e in labels(spec.dims)]),
        out_key=sql.group_key(cols), **cell_bindings(engine.dialect, source, spec, keys)))
    arr = np.array([[int(r[0]), int(r[2] or 0), int(r[3] or 0), int(r[4] or 0)] for r in rows], np.int64)
    arr = arr.reshape(-1, 4)
    return Recount(arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3])


def checks(report: Report, cells: Recount, table: Ptable, stored: str | None = None) -> None:
    """Record the checks of a recount against the ptable (`stored`: the written ptable's fingerprint)."""
    p = table.params
    real = cells.n > 0
    expected = np.zeros(len(cells.n), np.int64)
    expected[real] = cells.n[real] + lookup(table, cells.n[real], cells.ck[real])
    wrong = int((expected != cells.published).sum())
    report.check("every published count is the recount plus its cell key's noise", wrong == 0, "ckm/recount",
                 f"{len(cells.n):,} cells" if not wrong else f"{wrong:,} of {len(cells.n):,} cells differ")
    small = int(((cells.published >= 1) & (cells.published < p.js)).sum())
    report.check(f"no published count in 1..{p.js - 1}", small == 0, "ckm/recount",
                 "" if not small else f"{small:,} cells")
    far = int((np.abs(cells.published - cells.n) > p.D).sum())
    report.check(f"|noise| <= D = {p.D}", far == 0, "ckm/recount", "" if not far else f"{far:,} cells")
    zero = int(((cells.n == 0) & (cells.published != 0)).sum())
    report.check("an empty cell stays 0", zero == 0, "ckm/recount", "" if not zero else f"{zero:,} cells")
    if stored is not None:
        report.check("the stored ptable is the one its parameters give", stored == table.fingerprint(),
                     "ckm/read_table", f"fingerprint {table.fingerprint()[:16]}")
