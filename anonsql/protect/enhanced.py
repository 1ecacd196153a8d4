"""e-DECP and e-DROPP (Hintoglu 2011, Section 3.3): many confidential cells, fewer side effects.

Preconditions: e-DECP takes cells of one attribute that share one confidential value
(Figure 3.7), e-DROPP cells of one tuple (Figure 3.8); `anonsql.protect.suppress` splits any
set of cells into such groups. Cells the group run leaves predicted are handed back as
'suppressed' and caught by the driver's re-check, which runs plain DECP / DROPP on them.
Both functions get the group's cells already hidden and the coin flip already made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from math import inf

import numpy as np

from .deletion import NOT_NEEDED, SUPPRESSED, Cell, Chance, Microdata, Outcome, scores_and_guess
from .naive_bayes import NU, is_predicted


def _pending(p: Microdata, cells: Sequence[Cell], chance: Chance) -> tuple[list[Outcome], dict[int, int]]:
    """Verify the need for suppression (eq. 3.10/3.11) and draw each cell's v_rnbg."""
    outs, pending = [Outcome(NOT_NEEDED) for _ in cells], {}
    for i, c in enumerate(cells):
        scores, rnbg = scores_and_guess(p, c, chance)
        if is_predicted(scores, c.value):
            outs[i] = Outcome(SUPPRESSED, [], rnbg)
            if rnbg is not None:  # none: left to the driver's re-check (DECP/DROPP delete it)
                pending[i] = rnbg
    return outs, pending


def still_above(above: Callable[[Cell, int, int], bool], cells: Sequence[Cell],
                pending: dict[int, int]) -> dict[int, int]:
    """The pending cells whose p(conf|d) is still above p(v_rnbg|d) by `above` (the naive
    Bayes of Def. 2.2, or of Def. 4.1 for the -g methods, compared exactly)."""
    return {i: g for i, g in pending.items() if above(cells[i], cells[i].value, g)}


def _hide_for(p: Microdata, row: int, col: int, pending: dict[int, int], outs: list[Outcome]) -> None:
    """Hide one cell on behalf of the group: it counts as a side effect of every cell still
    pending (so per-cell side effects of a group overlap; the run's total is the changes)."""
    p.hide(row, col, [])
    for i in pending:
        outs[i].changes.append((row, col))


def e_decp(p: Microdata, cells: Sequence[Cell], chance: Chance) -> list[Outcome]:
    """Figure 3.7: maximum impact values sorted by primary impact (cells whose tuple holds
    the value) descending, then secondary impact (tuples of the confidential class holding
    it) ascending; each hidden down to one instance, as in DECP. Values with primary impact 0
    change no cell's probability, so they are not candidates (the figure lists them last)."""
    t, conf = cells[0].target, cells[0].value
    if not all(c.target == t and c.value == conf for c in cells):
        raise ValueError("e-DECP takes cells of one attribute sharing one value")
    outs, pending = _pending(p, cells, chance)
    primary: dict[tuple[int, int], int] = {}
    for i in pending:
        row = p.row(cells[i].row)
        for a in p.attrs[t]:
            if row[a] != NU:
                primary[(a, int(row[a]))] = primary.get((a, int(row[a])), 0) + 1
    counts = p.counts(t)  # N(conf, x_a): the tuples of the confidential class holding the value
    secondary = {(a, v): counts.pairs[a][v][conf] for a, v in primary}
    order = sorted(primary, key=lambda av: (-primary[av], secondary[av], av))
    for a, v in order:
        if not pending:
            break
        ids = p.select({t: conf, a: v})[0]
        # the figure hides the next tuple's value while more than one is left and a cell is
        # still above its v_rnbg; each hide lowers only N(conf, v_a), so a pending cell holding
        # v stays above for `drops_above` hides, any other for all of them (counted upfront)
        lasts = {}
        for i, g in pending.items():
            row = p.row(cells[i].row).tolist()
            lasts[i] = counts.drops_above(row, conf, g, a) if row[a] == v else inf
        hides = int(min(len(ids), max(secondary[(a, v)] - 1, 0), max(lasts.values())))
        for j, r in enumerate(ids[:hides]):
            p.hide(r, a, [])
            for i, last in lasts.items():
                if j < last:  # a side effect of every cell pending when it was hidden
                    outs[i].changes.append((r, a))
        pending = {i: g for i, g in pending.items() if lasts[i] > hides}
    return outs


def e_dropp(p: Microdata, cells: Sequence[Cell], chance: Chance) -> list[Outcome]:
    """Figure 3.8: the tuple's non-confidential values sorted by their DROPP impact ratio
    (Def. 3.6) averaged over the cells, hidden in that order until no cell is predicted."""
    row = cells[0].row
    if not all(c.row == row for c in cells):
        raise ValueError("e-DROPP takes cells of one tuple")
    outs, pending = _pending(p, cells, chance)
    codes = p.row(row)
    confidential = {c.target for c in cells}
    impacts: dict[int, list[float]] = {}
    for i, g in pending.items():
        t, conf = cells[i].target, cells[i].value
        pairs, own = p.counts(t).pairs, int(codes[t])
        for a in p.attrs[t]:
            x = int(codes[a])
            if a in confidential or x == NU:
                continue
            # tuples of D - d_i holding x, of class conf and of class g: N(v, x_a), d_i taken out
            num, den = pairs[a][x][conf] - (own == conf), pairs[a][x][g] - (own == g)
            impacts.setdefault(a, []).append(float(Fraction(num, den)) if den else float("inf"))
    order = sorted(impacts, key=lambda a: (-float(np.mean(impacts[a])), a))
    for a in order:
        if not pending:
            break
        _hide_for(p, row, a, pending, outs)
        pending = still_above(p.above, cells, pending)
    return outs
