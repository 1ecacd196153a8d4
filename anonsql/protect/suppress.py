"""The algorithm driver: protect several confidential cells with any method until none is
predicted (`protect_cells` picks `suppress_cells` for deletion, `suppress_cells_g` for the
generalization methods).

All confidential cells are hidden first, then each is suppressed in turn. A later step can
re-expose an earlier cell (its classifier changes when other cells are hidden), so the
exposed cells are visited again, up to `max_runs` times each, and a cell still predicted
after that is deleted (the thesis's fallback). The |V| = 2 coin flip is made once per cell,
right after the need for suppression is verified (Section 3.4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..progress import tick
from .deletion import (
    COIN_KEPT,
    DELETED,
    NOT_NEEDED,
    SUPPRESSED,
    Cell,
    Chance,
    Microdata,
    Outcome,
    decp,
    dropp,
    hid3,
    incp,
    nrd,
)
from .enhanced import e_decp, e_dropp
from .generalization import ENHANCED_G, METHODS_G, GeneralizedMicrodata, classify, id3_g_predicts, train_g
from .naive_bayes import most_probable

Method = Callable[[Microdata, Cell, Chance], Outcome]

#: Round-robin limit of a hybrid run (Section 5.3 says "until both classifiers miss"; the
#: thesis gives no bound, a cell still predicted after this many rounds is deleted).
HYBRID_ROUNDS = 10


def hybrid(nb_method: Method) -> Method:
    """HID3 then the NB method, round robin, until neither ID3 nor NB predicts the cell."""

    def run(p: Microdata, cell: Cell, chance: Chance) -> Outcome:
        changes: list[tuple[Any, int]] = []
        status, rnbg = NOT_NEEDED, None
        for _ in range(HYBRID_ROUNDS):
            if not (p.id3_predicts(cell) or p.nb_predicts(cell)):
                return Outcome(status, changes, rnbg)
            for step in (hid3, nb_method):
                out = step(p, cell, chance)
                if out.status == DELETED:
                    p.revert(out.changes)
                    return p.delete(cell, changes)
                changes += out.changes
                if out.status == SUPPRESSED:
                    status, rnbg = SUPPRESSED, out.next_best if out.next_best is not None else rnbg
        if p.id3_predicts(cell) or p.nb_predicts(cell):
            return p.delete(cell, changes)
        return Outcome(status, changes, rnbg)

    return run


#: The single-cell deletion methods of Chapter 3 and the NRD baseline.
DELETION: dict[str, Method] = {
    "decp": decp, "incp": incp, "dropp": dropp, "hid3": hid3, "nrd": nrd,
    "hid3+decp": hybrid(decp), "hid3+incp": hybrid(incp), "hid3+dropp": hybrid(dropp),
}

#: The classifiers each method protects against (the independent check tests these).
CLASSIFIERS: dict[str, tuple[str, ...]] = {
    "decp": ("nb",), "incp": ("nb",), "dropp": ("nb",), "hid3": ("id3",), "nrd": (),
    "hid3+decp": ("id3", "nb"), "hid3+incp": ("id3", "nb"), "hid3+dropp": ("id3", "nb"),
    "e-decp": ("nb",), "e-dropp": ("nb",),
    **{name: ("id3",) if name == "hid3-g" else ("nb",) for name in (*METHODS_G, *ENHANCED_G)},
}

#: Enhanced methods (Section 3.3): the group run, the plain method for the re-check, and how
#: cells are grouped so that each group meets the precondition.
ENHANCED = {
    "e-decp": (e_decp, "decp", lambda c: (c.target, c.value)),
    "e-dropp": (e_dropp, "dropp", lambda c: c.row),
}
#: The generalization methods (Chapter 4), driven by `suppress_cells_g`.
GENERALIZING: tuple[str, ...] = (*METHODS_G, *ENHANCED_G)
#: Every method name a protect run accepts (the CLI offers the same tuple).
METHODS: tuple[str, ...] = (*DELETION, *ENHANCED, *GENERALIZING)


def predictions(p: Microdata, cell: Cell) -> dict[str, list[int]]:
    """What NB and ID3 trained on D - d_i predict for the cell now: the most probable value
    codes (several on a NB tie)."""
    return {"nb": most_probable(p.scores(cell)), "id3": [p.tree(cell).predict(p.row(cell.row))]}


def exposed(p: Microdata, cell: Cell, classifiers: Sequence[str]) -> bool:
    """True when one of `classifiers` predicts the cell's value (NB: strictly, eq. 3.8)."""
    return any(p.nb_predicts(cell) if c == "nb" else p.id3_predicts(cell) for c in classifiers)


@dataclass
class CellResult:
    cell: Cell
    status: str = NOT_NEEDED
    before: dict[str, list[int]] = field(default_factory=dict)
    after: dict[str, list[int]] = field(default_factory=dict)
    changes: list[tuple[Any, int]] = field(default_factory=list)  # side effects, all runs
    next_best: int | None = None
    runs: int = 0


def _quiet(_message: str) -> None:
    """No progress report."""


def suppress_cells(p: Microdata, cells: Sequence[Cell], method: str, chance: Chance, *,
                   max_runs: int = 3, progress: Callable[[str], None] = _quiet) -> list[CellResult]:
    """Hide every cell in `cells` and protect it with `method` (a DELETION or ENHANCED name);
    X is modified in place; `progress` hears one line per cell done."""
    enhanced = ENHANCED.get(method)
    run, classifiers = DELETION[enhanced[1] if enhanced else method], CLASSIFIERS[method]
    hidden: list[tuple[Any, int]] = []
    for c in cells:
        p.hide(c.row, c.target, hidden)
    results = [CellResult(c) for c in cells]
    for r in results:
        r.before = predictions(p, r.cell)
        if p.domains[r.cell.target] == 2 and exposed(p, r.cell, classifiers) and not chance.suppress():
            r.status = COIN_KEPT
    pending = [r for r in results if r.status != COIN_KEPT]
    _drive(p, results, pending, run, enhanced, chance, lambda c: exposed(p, c, classifiers), max_runs, progress)
    for r in results:
        r.after = predictions(p, r.cell)
    return results


def _drive(p, results: list, pending: list, run, enhanced, chance, still_exposed, max_runs: int,
           progress: Callable[[str], None]) -> None:
    """Run the method on every pending cell (an enhanced method on its groups), then run the
    plain method again on each cell a classifier still predicts, up to `max_runs` times,
    and finally delete its tuple (NRD), so that no cell is left predicted."""
    done = 0
    if enhanced:
        group_run, _, key = enhanced
        groups: dict = {}
        for r in pending:
            groups.setdefault(key(r.cell), []).append(r)
        for group in groups.values():
            for r, out in zip(group, group_run(p, [r.cell for r in group], chance)):
                _merge(r, out)
            done += len(group)
            tick(progress, "protect: cells", done, len(pending), f"  protect: {done}/{len(pending)} cell(s) done")
    else:
        for r in pending:
            _merge(r, run(p, r.cell, chance))
            done += 1
            tick(progress, "protect: cells", done, len(pending),
                 f"  protect: {done}/{len(pending)} cell(s) done ({r.status.replace('_', ' ')})")
    while True:
        again = [r for r in results if r.status in (SUPPRESSED, NOT_NEEDED) and still_exposed(r.cell)]
        if not again:
            return
        progress(f"  protect: {len(again)} cell(s) exposed again by later changes, running them again")
        for r in again:
            _merge(r, (run if r.runs < max_runs else nrd)(p, r.cell, chance))


def _merge(r: CellResult, out: Outcome) -> None:
    """Fold one run's outcome into the cell's record."""
    r.runs += 1
    r.changes += out.changes
    if out.next_best is not None:
        r.next_best = out.next_best
    if out.status != NOT_NEEDED or r.status == NOT_NEEDED:
        r.status = out.status


def predictions_g(p: GeneralizedMicrodata, cell: Cell, classifiers: Sequence[str]) -> dict[str, list[int]]:
    """What the -G methods' classifiers pick for a generalized cell now: NB's most probable
    candidate(s) (Def. 4.1), ID3's class; nothing once its tuple is deleted."""
    if p.row(cell.row)[cell.target] < 0:
        return {c: [] for c in classifiers}
    out = {}
    if "nb" in classifiers:
        scores = p.g_scores(cell)
        out["nb"] = [v for v, s in scores.items() if s == max(scores.values())]
    if "id3" in classifiers:
        out["id3"] = [classify(train_g(p, cell), p.row(cell.row), p.taxonomies)]
    return out


def exposed_g(p: GeneralizedMicrodata, cell: Cell, classifiers: Sequence[str]) -> bool:
    """True when one of `classifiers` still picks the cell's true value (NB: strictly, eq. 4.9)."""
    return any(p.g_predicts(cell) if c == "nb" else id3_g_predicts(p, cell) for c in classifiers)


def suppress_cells_g(p: GeneralizedMicrodata, cells: Sequence[Cell], method: str, chance: Chance, *,
                     max_runs: int = 3, progress: Callable[[str], None] = _quiet) -> list[CellResult]:
    """`suppress_cells` for the -G methods (Chapter 4): every confidential value starts one
    level up its taxonomy (the analogue of hiding them all first), each cell (or, for
    e-DECP-G / e-DROPP-G, each group) is run in turn, and cells whose candidates' naive Bayes
    (Def. 4.1; ID3 for HID3-G) still picks the true value are run again with the plain
    method, up to `max_runs` times, then deleted."""
    enhanced = ENHANCED_G.get(method)
    run, classifiers = METHODS_G[enhanced[1] if enhanced else method], CLASSIFIERS[method]
    for c in cells:
        p.set(c.row, c.target, p.tax(c.target).generalize(c.value, 1))
    results = [CellResult(c) for c in cells]
    for r in results:
        r.before = predictions_g(p, r.cell, classifiers)
    _drive(p, results, results, run, enhanced, chance, lambda c: exposed_g(p, c, classifiers), max_runs, progress)
    for r in results:
        if p.row(r.cell.row)[r.cell.target] < 0:  # its tuple was deleted for another cell
            r.status = DELETED
        r.after = predictions_g(p, r.cell, classifiers)
    return results


def protect_cells(data: Microdata, cells: Sequence[Cell], method: str, chance: Chance, *,
                  max_runs: int = 3, progress: Callable[[str], None] = _quiet) -> list[CellResult]:
    """Protect `cells` with `method` (one of METHODS; X is modified in place): the generalizing
    methods need GeneralizedMicrodata, whose taxonomies code the columns."""
    if method in GENERALIZING:
        if not isinstance(data, GeneralizedMicrodata):
            raise ValueError(f"{method} generalizes: it needs GeneralizedMicrodata")
        return suppress_cells_g(data, cells, method, chance, max_runs=max_runs, progress=progress)
    if method not in CLASSIFIERS:
        raise ValueError(f"unknown method {method!r}")
    return suppress_cells(data, cells, method, chance, max_runs=max_runs, progress=progress)
