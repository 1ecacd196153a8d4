"""Secondary cell suppression: hide enough further cells that no primary cell can be recomputed.

1. Linear stage (exact): while a primary cell is a linear combination of the published cells
   (linear.certificates), suppress the corners of its cheapest hypercube (one table with all
   margins, `cube`) or else the cheapest published cell of its certificate.
2. LP stage: the attacker's min and max of each primary cell (attack.Attacker, one persistent
   HiGHS model), for counts then over whole numbers (rounded inward, and a MILP at an end where
   the LP's optimum is fractional: Attacker.whole), must meet the protection; if not, suppress
   its cheapest hypercube (`cube`) or else the cheapest published cell that pins the failing
   bound (by the LP's certificate), and re-audit that cell.
   Suppressing only relaxes the attacker's LP, so a cell found safe stays safe: each primary
   is audited until safe, then never again (one safe already with primary suppression alone,
   the baseline audit, is not audited again at all).
   With cube margins (a taxonomy's nodes included: corners then move between sibling leaves,
   hypercube.alternatives) a hypercube is its own certificate (hypercube.hidden_box: the shift along
   its corners keeps every total, over whole numbers too), so no solver runs for a primary whose
   hypercube is hidden already, nor after its hypercube repair; and where the LP protects a count
   but only a MILP over the whole table could tell whether the whole numbers do (seconds to
   minutes at 10^5 cells), its hypercube is suppressed instead (counted: integer_unproven). The
   job's independent attack (verify.attack) still checks every primary over the reals and the
   whole numbers.
3. Clean-up (anonsql.tables.redundant, on small tables): a secondary that every primary can do
   without is published again, the most expensive first; the bounds are then audited afresh.
4. Unions (with `unions`, anonsql.tables.unions): the cells it names join the pattern until no
   union of a dominance primary's suppressed companions is dominated; suppressing more only
   widens every interval, so no primary is audited again.

Cheapest = a `preferred` cell first (last period's suppressed cells with --previous, as
GaussSuppression's incremental suppression lowers their cost), an inner cell before a margin
(fewer summed dimensions first), a non-empty cell before an empty one (an empty secondary
protects one side only), then the smaller value, then the cell number: the same input always
gives the same pattern. An empty cell is never a
secondary unless the protection allows it (--allow-empty-secondaries): the attacker who knows
the policy then knows every hidden cell is non-empty (Protection.floor). Forced cells (z: --publish,
and the structural zeros the attacker knows are empty) are published whatever it costs: never
a secondary; a primary that only they could protect is an error.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import AnonsqlError
from ..progress import tick
from .attack import Attacker, Bounds
from .cells import Grid
from .hypercube import hidden_box, hypercube
from .linear import certificates
from .protection import Protection
from .redundant import release
from .sparse import sp

#: The exact stage is skipped when its dense system (totals x unknowns) is larger than this: its
#: elimination would outlast the LP stage, which protects on its own.
LINEAR_LIMIT = 1_000_000


@dataclass
class Outcome:
    """The pattern: status per cell (s safe, u primary, x secondary, z forced), why, and the attacker's bounds:
    of every hidden cell at the end with `bounds_all`, else of each primary when it was last
    audited (later suppressions can only widen them)."""

    status: np.ndarray
    reason: list[str]
    lower: np.ndarray  # over whole numbers for counts
    upper: np.ndarray
    lp_lower: np.ndarray  # the LP's (reals), of each primary
    lp_upper: np.ndarray
    pinned_primary_only: int = 0  # primaries the attacker pins when only the primaries are hidden
    exposed_primary_only: int = 0  # ... or bounds short of their protection (the integer interval included)
    linear_secondaries: int = 0
    pinned_after_linear: int = 0  # primaries the LP still pins after the linear stage
    lp_secondaries: int = 0
    redundant: int = 0  # secondaries published again by the clean-up (anonsql.tables.redundant)
    union_secondaries: int = 0  # added so that no union of a dominance primary's hidden companions is dominated
    certified: int = 0  # primaries protected by a hypercube of hidden cells, found without an LP
    integer_unproven: int = 0  # audits where a hypercube stood in for the MILP (cube margins; see audit)
    integer_exposed: int = 0  # audits where the LP protected a primary and only the whole numbers exposed it
    linear_skipped: bool = False  # the system was too large for the exact stage (the LP stage alone protects)
    seconds: dict[str, float] = field(default_factory=dict)


def protect(grid: Grid, reasons: Sequence[tuple[str, str] | str | None], protection: Protection, *,
            cube: bool = False, forced: Sequence[int] = (), zeros: Sequence[int] = (),
            levels: np.ndarray | None = None, bounds_all: bool = False, label: Callable[[int], str] = str,
            progress: Callable[[str], None] | None = None, preferred: np.ndarray | None = None,
            unions: Callable[[np.ndarray, np.ndarray], list[tuple[int, int]]] | None = None) -> Outcome:
    """Primary cells (reason not None: (rule, details) or a text) plus the secondaries that protect
    them, never a `forced` cell nor a structural zero (`zeros`, published as forced); `levels` is
    each cell's upper protection level from the magnitude rules, `preferred` the cells chosen first
    as secondaries, `unions` the union repair (status, barred) -> [(cell, primary it protects)]
    (see module docstring)."""
    say = progress or (lambda _m: None)
    n = len(grid.codes)
    members, finest_cell = grid.members(), grid.finest_cell()
    inner = grid.summed == 0
    upper_level = np.zeros(n) if levels is None else levels
    chosen_first = np.zeros(n, bool) if preferred is None else preferred
    rank = np.empty(n, np.int64)
    rank[np.lexsort((np.arange(n), grid.value, grid.value == 0, grid.summed, ~chosen_first))] = np.arange(n)
    status = np.array(["u" if r else "s" for r in reasons], dtype="<U1")
    why = [(r[1] if isinstance(r, tuple) else r) or "safe" for r in reasons]
    for c in zeros:
        status[c], why[c] = "z", "structural zero (--structural-zeros)"
    for c in forced:
        if status[c] == "u":
            given = reasons[c]
            rule = given[0] if isinstance(given, tuple) else "see the private audit"
            raise AnonsqlError(f"cell {label(c)} cannot be forced (--publish): it fails a primary rule ({rule})")
        status[c], why[c] = "z", why[c] if status[c] == "z" else "forced (--publish)"
    barred = (status == "z") | ((grid.value == 0) & (not protection.allow_empty))  # never a secondary
    hidden = _hidden(status)  # kept up to date by suppress()
    primaries = sorted(np.flatnonzero(status == "u").tolist(), key=lambda c: rank[c])
    out = Outcome(status, why, np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan))

    def fails(p: int, b: Bounds) -> tuple[bool, bool]:
        return protection.fails(grid.value[p], b.lower, b.upper, upper_level[p])

    def needs(p: int) -> list[tuple[float, float]]:
        """How far `p` must be able to move (down, up), one pair of which a hypercube must allow."""
        v = float(grid.value[p])
        down = protection.level / 100 * abs(v)
        up = max(down, float(upper_level[p]))
        if protection.small and v >= 1:  # a small count: the interval must reach 0 or n
            return [(max(down, v), up), (down, max(up, protection.small - v))]
        return [(down, up)]

    def corners(p: int) -> np.ndarray | None:
        return hypercube(grid, p, hidden, barred, needs(p), protection.floor, chosen_first) if cube else None

    def certified(p: int, b: Bounds) -> bool:
        """Whether a hypercube of hidden cells protects `p` (hypercube.hidden_box: no LP needed; with cube
        margins only); its bounds are then those of the last audit `b` widened to what the box guarantees."""
        box = hidden_box(grid, p, hidden, needs(p), protection.floor) if cube else None
        if box is None:
            return False
        v = float(grid.value[p])
        lp = b.lp or (b.lower, b.upper)
        out.lower[p], out.upper[p] = min(b.lower, v - box[0]), max(b.upper, v + box[1])
        out.lp_lower[p], out.lp_upper[p] = min(lp[0], v - box[0]), max(lp[1], v + box[1])
        out.certified += 1
        return True

    started = time.perf_counter()
    attacker = Attacker(members, finest_cell, grid.value, status == "u", protection.floor)
    audited = {p: attacker.bounds(p) for p in primaries}
    out.pinned_primary_only = sum(b.upper - b.lower <= 1e-7 * max(1.0, abs(grid.value[p])) for p, b in audited.items())
    out.exposed_primary_only = sum(any(fails(p, b)) for p, b in audited.items())
    out.seconds["primary-only audit"] = time.perf_counter() - started
    say(f"  primary suppression alone: {out.pinned_primary_only} of {len(primaries)} primary cells pinned")

    def suppress(cell: int, stage: str, protects: int) -> None:
        status[cell], hidden[cell] = "x", True
        why[cell] = f"secondary ({stage}): protects {label(protects)}"
        attacker.suppress(cell)

    def cheapest(target: int, rows: np.ndarray) -> int:
        cells, near = _pins(members, finest_cell, status, barred, target, rows)
        if not len(cells):
            raise AnonsqlError(f"primary cell {label(target)} cannot be protected without suppressing a forced "
                               "cell (--publish, --structural-zeros) or an empty one: force fewer cells, or "
                               "--allow-empty-secondaries")
        return int(cells[np.lexsort((rank[cells], near, ~chosen_first[cells]))[0]])

    started = time.perf_counter()
    out.linear_skipped = int((~inner).sum()) * int(_free(finest_cell, status).sum()) > LINEAR_LIMIT
    while not out.linear_skipped:
        found = _linear_round(members, finest_cell, status, inner, primaries)
        if not found:
            break
        for p, rows in found:
            if _hidden(status[rows]).any():  # already broken by a secondary of this round
                continue
            box = corners(p)
            for cell in [cheapest(p, rows)] if box is None or not len(box) else box.tolist():
                suppress(cell, "linear", p)
                out.linear_secondaries += 1
    out.seconds["linear"] = time.perf_counter() - started
    say(f"  linear stage: {out.linear_secondaries} secondary cells")

    def audit(p: int) -> Bounds | None:
        """The attacker's bounds of `p`: the LP's, then, for counts the LP leaves protected, over whole numbers
        (a MILP at each end where the LP's optimum is fractional); counted when only the integers expose it.
        With cube margins a hypercube is suppressed instead of a MILP (a MILP over a table of 10^5 cells
        takes seconds to minutes, the hypercube certifies the whole numbers too): None then."""
        b = attacker.bounds(p)
        if not protection.integer or any(fails(p, b)):
            return b
        # a fractional end needs the MILP unless the cell passes even with it moved in as far as it can go
        # (to the true value) while the other end is exact (both fractional: both needed, as both at v pin it)
        v, level, frac = float(grid.value[p]), float(upper_level[p]), b.fractional
        ends = (frac[1] or any(protection.fails(v, v, b.upper, level)),
                frac[0] or any(protection.fails(v, b.lower, v, level)))
        box = corners(p) if (frac[0] and ends[0]) or (frac[1] and ends[1]) else None
        if box is not None and len(box):
            for cell in box.tolist():
                suppress(cell, "whole numbers", p)
                out.lp_secondaries += 1
            out.integer_unproven += 1
            if certified(p, b):
                return None
        b = attacker.whole(p, b, ends)
        out.integer_exposed += any(fails(p, b))
        return b

    started = time.perf_counter()
    for done, p in enumerate(primaries, 1):
        tick(say, "tables: primaries repaired", done, len(primaries),
             f"  repair: {done:,}/{len(primaries):,} primary cells protected")
        b, first = audited[p], True
        if any(fails(p, b)) or (protection.integer and any(b.fractional)):
            if certified(p, b) or (again := audit(p)) is None:
                continue
            b = again  # unsafe with primary suppression alone: audited again after the linear stage
        while any(bad := fails(p, b)):
            out.pinned_after_linear += first
            first = False
            rows = np.union1d(b.pin_lower if bad[0] else [], b.pin_upper if bad[1] else []).astype(np.int64)
            box = corners(p)
            for cell in [cheapest(p, rows)] if box is None or not len(box) else box.tolist():
                suppress(cell, "LP", p)
                out.lp_secondaries += 1
            if (box is not None and len(box) and certified(p, b)) or (again := audit(p)) is None:
                break
            b = again
        else:
            out.lower[p], out.upper[p] = b.lower, b.upper
            out.lp_lower[p], out.lp_upper[p] = b.lp or (b.lower, b.upper)
    out.seconds["LP"] = time.perf_counter() - started
    say(f"  LP stage: {out.pinned_after_linear} primary cells still pinned, {out.lp_secondaries} more secondaries")

    started = time.perf_counter()
    released = release(grid, status, protection, upper_level, primaries, np.argsort(-rank, kind="stable"))
    if released:
        out.redundant = len(released)
        for c in released:
            why[c] = "safe"
        attacker = Attacker(members, finest_cell, grid.value, _hidden(status), protection.floor)
        for p in primaries:
            b = attacker.bounds(p)
            out.lp_lower[p], out.lp_upper[p] = b.lower, b.upper
            b = attacker.whole(p, b) if protection.integer else b
            out.lower[p], out.upper[p] = b.lower, b.upper
    out.seconds["clean-up"] = time.perf_counter() - started
    say(f"  clean-up: {out.redundant} secondaries published again (every primary keeps its protection)")

    started = time.perf_counter()
    while unions is not None and (more := unions(status.copy(), barred)):
        for cell, p in more:
            suppress(cell, "dominated union", p)
            out.union_secondaries += 1
    if unions is not None:
        out.seconds["unions"] = time.perf_counter() - started
        say(f"  unions: {out.union_secondaries} more secondaries so that no union of hidden cells is dominated")

    for cell in np.flatnonzero(_hidden(status)) if bounds_all else []:
        c = int(cell)
        b = attacker.bounds(c)
        out.lower[c], out.upper[c] = protection.whole(b.lower, b.upper)  # alike for every hidden cell
    return out


def _hidden(status: np.ndarray) -> np.ndarray:
    """Suppressed cells: primary (u) or secondary (x)."""
    return (status == "u") | (status == "x")


def _free(finest_cell: np.ndarray, status: np.ndarray) -> np.ndarray:
    """Finest cells the attacker does not see."""
    return (finest_cell < 0) | _hidden(status[np.maximum(finest_cell, 0)])


def _linear_round(members: sp.csr_matrix, finest_cell: np.ndarray, status: np.ndarray, inner: np.ndarray,
                  primaries: Sequence[int]) -> list[tuple[int, np.ndarray]]:
    """Each primary that the published totals give back exactly, with its certificate (the totals)."""
    cols = np.flatnonzero(_free(finest_cell, status))
    rows = np.flatnonzero(~_hidden(status) & ~inner & (members[:, cols].getnnz(axis=1) > 0))
    system = members[rows][:, cols].toarray()
    targets = members[list(primaries)][:, cols].toarray()
    return [(p, rows[cert]) for p, cert in zip(primaries, certificates(system, targets)) if cert is not None]


def _pins(members: sp.csr_matrix, finest_cell: np.ndarray, status: np.ndarray, barred: np.ndarray, target: int,
          rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The published cells, not `barred`, whose suppression breaks a certificate of `target`: its totals `rows`
    and the published finest cells inside them or inside the target; each with the size of the
    smallest certificate total it comes from (the target's own size for its members), so a
    secondary is sought near the primary before it is sought in a grand total."""
    sizes = np.diff(members.indptr)
    cells, near = [rows], [sizes[rows]]
    for holder in [target, *rows.tolist()]:
        inside = finest_cell[members.indices[members.indptr[holder]:members.indptr[holder + 1]]]
        inside = inside[inside >= 0]
        cells.append(inside)
        near.append(np.full(len(inside), sizes[holder]))
    c, n = np.concatenate(cells), np.concatenate(near)
    keep = (status[c] == "s") & ~barred[c]
    return c[keep], n[keep]
