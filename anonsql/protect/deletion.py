"""Single-cell suppression by deletion (Hintoglu 2011, Chapter 3): DECP, INCP, DROPP, HID3.

Every function works on the coded microdata (ν = -1; all rows in memory, or read from the
database when needed: `rows.py`) in place, with the confidential cell already hidden, and
returns an Outcome listing the cells it turned ν.
The thesis's fallback "revert all changes and delete the tuple" reverts the run's own
changes and then hides every cell of the tuple (NRD-style deletion, Section 5.2); the caller
decides whether a deleted tuple is also removed. The |V| = 2 coin flip belongs to the caller
(`suppress_cells`), which makes it right after the need for suppression is verified.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

import numpy as np

from . import id3
from .naive_bayes import NU, Counts, is_predicted, next_best_candidates
from .rows import ArrayRows, Rows

SUPPRESSED, NOT_NEEDED, DELETED, COIN_KEPT = "suppressed", "not_needed", "deleted", "coin_kept"


class Chance(Protocol):
    """The thesis's two random choices; tests inject fixed ones (e.g. gastritis)."""

    def next_best(self, candidates: Sequence[int]) -> int: ...

    def suppress(self) -> bool: ...


class SeededChance:
    """Seeded randomness: uniform random next best guess, fair coin for |V| = 2."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def next_best(self, candidates: Sequence[int]) -> int:
        return int(candidates[int(self.rng.integers(len(candidates)))])

    def suppress(self) -> bool:
        return bool(self.rng.integers(2))


@dataclass
class Cell:
    """A confidential cell: tuple (row id), target column index, original value code."""

    row: Any  # the row's id: its index in memory, its key in the database (rows.py)
    target: int
    value: int


@dataclass
class Outcome:
    status: str
    changes: list[tuple[Any, int]] = field(default_factory=list)  # (row, column) cells turned ν
    next_best: int | None = None  # v_rnbg, when one was drawn


@dataclass
class Microdata:
    """The coded microdata and what the classifiers look at: the attributes (`attrs`) each
    target column is predicted from; `k` bounds the next best guess to the top k (Def. 3.1),
    None (the default, the thesis's Section 3.4) draws among every admissible value.

    `X` is the matrix itself (then `X` stays the live matrix) or any `rows.Rows` (the job's
    rows fetched from the database when needed); the algorithms read rows through `row` and
    `select` only. Naive Bayes reads count tables, ID3 distinct tuples, both built on first use
    and updated by `hide` / `revert` one cell at a time: change cells through them (or `set`;
    or call `recount` after changing X directly)."""

    X: Any  # np.ndarray | Rows
    domains: list[int]
    attrs: dict[int, list[int]]
    k: int | None = None

    def row(self, r: Any) -> np.ndarray:
        """Row r's codes now (live: later changes show in it)."""
        return self.rows.row(r)

    def select(self, where: dict[int, int], but: Any = None) -> tuple[list[Any], np.ndarray]:
        """The rows holding code v in column c for every (c, v) of `where`, `but` left out, in
        row order (the thesis's "next tuple"): their ids and a snapshot of their codes."""
        ids, codes = self.rows.select(where)
        if but is None:  # nothing to leave out: the selection's own snapshot, not a second copy
            return ids, codes
        keep = [n for n, r in enumerate(ids) if r != but]
        return [ids[n] for n in keep], codes[keep]

    def counts(self, target: int) -> Counts:
        """The naive Bayes count tables of `target` (built once, then kept up to date)."""
        if target not in self._counts:
            self._counts[target] = Counts(*self.weighted(), target, self.attrs[target], self.domains)
        return self._counts[target]

    def weighted(self) -> tuple[np.ndarray, np.ndarray]:
        """The data now as tuples (all columns) with counts; a tuple may repeat."""
        return self.rows.weighted()

    def recount(self) -> None:
        """Forget the count tables (after X was changed other than by hide / revert)."""
        self._counts.clear()
        self._tuples.clear()

    def set(self, row: Any, col: int, code: int) -> None:
        """Cell (row, col) = code, the count tables that read the column updated."""
        counts = [c for c in self._counts.values() if col in c.reads]
        tuples = [t for t in self._tuples.values() if col in t.reads]
        if counts or tuples:
            before = self.rows.row(row).tolist()
            for c in counts:
                c.change(before, col, code)
            for t in tuples:
                t.account(before, -1)
        self.rows.set(row, col, code)
        if tuples:
            after = self.rows.row(row).tolist()
            for t in tuples:
                t.account(after, 1)

    def scores(self, cell: Cell) -> list[Fraction]:
        return self.counts(cell.target).scores(self.row(cell.row).tolist())

    def above(self, cell: Cell, v: int, w: int) -> bool:
        """p(v|d_i) > p(w|d_i), exactly, without computing every class's score."""
        return self.counts(cell.target).above(self.row(cell.row).tolist(), v, w)

    def nb_predicts(self, cell: Cell) -> bool:
        return is_predicted(self.scores(cell), cell.value)

    def tuples(self, target: int) -> id3.Tuples:
        """ID3's distinct tuples of `target` (built once, then kept up to date)."""
        if target not in self._tuples:
            self._tuples[target] = id3.Tuples(*self.weighted(), target, self.attrs[target], self.domains)
        return self._tuples[target]

    def tree(self, cell: Cell) -> id3.Node:
        return self.tuples(cell.target).tree(self.row(cell.row).tolist())

    def id3_predicts(self, cell: Cell) -> bool:
        return self.tree(cell).predict(self.row(cell.row)) == cell.value

    def hide(self, row: Any, col: int, changes: list[tuple[Any, int]]) -> None:
        """Turn cell (row, col) into ν, remembering its code for `revert`; logged in `changes`."""
        self._old[(row, col)] = int(self.row(row)[col])
        self.set(row, col, NU)
        changes.append((row, col))

    def revert(self, changes: list[tuple[Any, int]], start: int = 0) -> None:
        """Undo changes[start:] (newest first) and drop them from the list."""
        for row, col in reversed(changes[start:]):
            self.set(row, col, self._old.pop((row, col)))
        del changes[start:]

    def delete(self, cell: Cell, changes: list[tuple[Any, int]]) -> Outcome:
        """The fallback: revert this run's changes, then hide the whole tuple."""
        self.revert(changes)
        for col in np.flatnonzero(self.row(cell.row) != NU).tolist():
            self.hide(cell.row, int(col), changes)
        return Outcome(DELETED, changes)

    def __post_init__(self) -> None:
        self.rows: Rows = ArrayRows(self.X) if isinstance(self.X, np.ndarray) else self.X
        self._old: dict[tuple[Any, int], int] = {}
        self._counts: dict[int, Counts] = {}
        self._tuples: dict[int, id3.Tuples] = {}


def scores_and_guess(p: Microdata, cell: Cell, chance: Chance) -> tuple[list[Fraction], int | None]:
    """p(v|d_i) for every v and a random next best guess (None when Def. 3.2 admits none)."""
    scores = p.scores(cell)
    candidates = next_best_candidates(scores, cell.value, p.k)
    return scores, chance.next_best(candidates) if candidates else None


def _start(p: Microdata, cell: Cell, chance: Chance) -> tuple[list[Fraction], int] | Outcome:
    """The common opening of DECP, INCP and DROPP: not predicted -> nothing to do; predicted but
    no next best guess (Def. 3.2: every other value has p = 0) -> delete the tuple; else the
    scores and v_rnbg."""
    scores, rnbg = scores_and_guess(p, cell, chance)
    if not is_predicted(scores, cell.value):
        return Outcome(NOT_NEEDED)
    if rnbg is None:
        return p.delete(cell, [])
    return scores, rnbg


def decp_counts(p: Microdata, cell: Cell) -> dict[int, int]:
    """count_α of FindMaximumImpactAttributeForDECP: tuples of D - d_i sharing both the
    confidential class and d_i's value of α, for each predictor α known in d_i (N(conf, x_α)
    from the count tables, d_i's own contribution taken out)."""
    row = p.row(cell.row).tolist()
    c, mine = p.counts(cell.target), row[cell.target] == cell.value
    return {a: c.pairs[a][row[a]][cell.value] - mine for a in p.attrs[cell.target] if row[a] != NU}


def _decp_loop(p: Microdata, cell: Cell, rnbg: int, changes: list[tuple[Any, int]]) -> None:
    """DECP's iterations (Figure 3.2): hide maximum impact data values (Def. 3.4-3.5, strict
    '<' so the first attribute wins a tie) while p(conf|d) > p(rnbg|d), leaving one each."""
    t, conf = cell.target, cell.value
    while True:
        if not p.above(cell, conf, rnbg):
            return
        best, count = None, p.rows.n
        for a, n in decp_counts(p, cell).items():
            if 1 < n < count:
                best, count = a, n
        if best is None:
            return
        row = p.row(cell.row).tolist()
        ids = p.select({t: conf, best: row[best]}, but=cell.row)[0]
        # the figure hides the next tuple's value while more than one is left and p(conf|d) >
        # p(rnbg|d) still holds; each hide lowers only N(conf, x_best), so that count is exact
        for r in ids[:min(len(ids), count - 1, p.counts(t).drops_above(row, conf, rnbg, best))]:
            p.hide(r, best, changes)


def decp(p: Microdata, cell: Cell, chance: Chance) -> Outcome:
    """DECP (Section 3.1.1): lower p(conf|d_i) by hiding the confidential value's strongest
    supporters in other tuples of the same class."""
    start = _start(p, cell, chance)
    if isinstance(start, Outcome):
        return start
    scores, rnbg = start
    changes: list[tuple[Any, int]] = []
    _decp_loop(p, cell, rnbg, changes)
    if p.nb_predicts(cell):
        return p.delete(cell, changes)
    return Outcome(SUPPRESSED, changes, rnbg)


def incp(p: Microdata, cell: Cell, chance: Chance) -> Outcome:
    """INCP (Section 3.1.2): raise p(v|d_i) for the next best guess set by hiding the class of
    tuples of class v that share no predictor value with d_i; then DECP with the same v_rnbg."""
    start = _start(p, cell, chance)
    if isinstance(start, Outcome):
        return start
    scores, rnbg = start
    changes: list[tuple[Any, int]] = []
    t, conf, preds = cell.target, cell.value, p.attrs[cell.target]
    nbg = [v for v in sorted(range(len(scores)), key=lambda v: (-scores[v], v))
           if v != conf and scores[v] >= scores[rnbg]]  # S_nbg (Def. 3.3)
    mine = p.row(cell.row)[preds].copy()
    for v in nbg:
        # only targets are hidden here, so which tuples share a value with d_i is known upfront;
        # the scores change only when a class is hidden
        ids, codes = p.select({t: v})
        for n in np.flatnonzero(~np.any((codes[:, preds] == mine) & (mine != NU), axis=1)).tolist():
            r = ids[n]
            if not p.above(cell, conf, v):
                break
            p.hide(r, t, changes)
    if p.nb_predicts(cell):
        _decp_loop(p, cell, rnbg, changes)
    if p.nb_predicts(cell):
        return p.delete(cell, changes)
    return Outcome(SUPPRESSED, changes, rnbg)


def dropp_counts(p: Microdata, cell: Cell, rnbg: int) -> dict[int, tuple[int, int, int, int]]:
    """FindMaximumImpactAttributeForDROPP's counts for each predictor α known in d_i:
    (count_α^conf, count_α^rnbg, count_conf, count_rnbg) over D - d_i, from the count tables."""
    row = p.row(cell.row).tolist()
    c, own = p.counts(cell.target), row[cell.target]
    n_conf, n_rnbg = c.totals[cell.value] - (own == cell.value), c.totals[rnbg] - (own == rnbg)
    return {a: (c.pairs[a][row[a]][cell.value] - (own == cell.value), c.pairs[a][row[a]][rnbg] - (own == rnbg),
                n_conf, n_rnbg) for a in p.attrs[cell.target] if row[a] != NU}


def dropp(p: Microdata, cell: Cell, chance: Chance) -> Outcome:
    """DROPP (Section 3.1.3): hide values of d_i itself, largest count ratio (Def. 3.6) first."""
    start = _start(p, cell, chance)
    if isinstance(start, Outcome):
        return start
    scores, rnbg = start
    changes: list[tuple[Any, int]] = []
    conf = cell.value
    while scores[conf] > scores[rnbg]:
        best: int | None = None
        ratio: Fraction | None = Fraction(0)
        for a, (c_conf, c_rnbg, n_conf, n_rnbg) in dropp_counts(p, cell, rnbg).items():
            if not Fraction(c_conf, n_conf) > Fraction(c_rnbg, n_rnbg):
                continue
            r = Fraction(c_conf, c_rnbg) if c_rnbg else None  # None: infinite ratio
            if best is None or (ratio is not None and (r is None or r > ratio)):
                best, ratio = a, r
        if best is None:
            break
        p.hide(cell.row, best, changes)
        scores = p.scores(cell)
    if is_predicted(scores, conf):
        return p.delete(cell, changes)
    return Outcome(SUPPRESSED, changes, rnbg)


def hid3(p: Microdata, cell: Cell, chance: Chance) -> Outcome:
    """HID3 (Section 3.2.1, Figure 3.5): walk the ID3 tree and hide the tuple's split values
    that lead to a leaf predicting the confidential value."""
    tree = p.tree(cell)
    row, conf = p.row(cell.row), cell.value
    if tree.predict(row) != conf:
        return Outcome(NOT_NEEDED)
    changes: list[tuple[Any, int]] = []

    def hide(node: id3.Node) -> bool:
        if node.is_leaf:
            return node.label != conf
        if node.predict(row) != conf:
            return True
        a = node.split
        if row[a] == NU:
            return hide(node.route(NU))
        mc = node.most_common_child(prefer=int(row[a]))
        if mc == row[a]:
            # Figure 3.5 hides α_root[d_i] here although it leads to child_MC either way;
            # Example 5 (Step 3) and Table 3.5 keep it, which we follow.
            return hide(node.children[mc])
        if hide(node.children[int(row[a])]):
            return True
        mark = len(changes)
        p.hide(cell.row, a, changes)
        if hide(node.children[mc]):
            return True
        p.revert(changes, mark)
        return False

    if not hide(tree):
        return p.delete(cell, changes)
    return Outcome(SUPPRESSED, changes)


def nrd(p: Microdata, cell: Cell, chance: Chance) -> Outcome:
    """Naive Row Deletion, the thesis's baseline (Section 5.2): hide the whole tuple."""
    return p.delete(cell, [])
