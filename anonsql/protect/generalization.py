"""Suppression by generalization (Hintoglu 2011, Chapter 4): DECP-G, INCP-G, DROPP-G, HID3-G,
e-DECP-G, e-DROPP-G.

X codes every column that has a taxonomy by taxonomy node (`Taxonomy.labels` order), other
columns by value, ν = -1. The confidential cell is generalized one level up its taxonomy
(λ_αj = 1), the naive Bayes of Def. 4.1 is trained on D - d_i restricted to the rows whose
target lies in the subtree of the generalized value, with the partially specified counts of
Section 4.1.1, and only the candidates V_candidate (the leaves under it) compete. When a
level fails, its changes are reverted and the confidential value goes one level higher; when
no level is left, DECP-G, DROPP-G and HID3-G delete the tuple and INCP-G runs DECP-G
(Figures 4.4-4.7). e-DECP-G and e-DROPP-G (Figures 4.9-4.10) take groups of cells and hand
the cells they leave predicted to the driver's re-check (`protect.suppress_cells_g`).

Probabilities are exact after every change (the pseudocode's running product of Theorem 4.1's
ratio gives the same numbers, Table 4.3), from count tables over taxonomy nodes kept up to date
one changed cell at a time (`GCounts`), not recounted; the ratio still picks the maximum
impact attribute (Def. 4.4). Where a run of changes provably moves a cell's probability one
way only (DECP-G's and e-DECP-G's rows generalized one after the other, `_generalize_rows`),
the cells are checked after the run and it is walked back to where each fell below, rather
than checked after every change: the same decisions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from math import prod
from typing import Any

import numpy as np

from ..taxonomy.model import Taxonomy
from . import id3
from .deletion import COIN_KEPT, DELETED, NOT_NEEDED, SUPPRESSED, Cell, Chance, Microdata, Outcome
from .enhanced import still_above
from .naive_bayes import NU, tally
from .partial_counts import aggregates, path_estimate

_CACHED = 1 << 14  # the most tuples whose scores are kept (`Question`) before starting over


class GCounts:
    """Def. 4.1's statistics of one target over the whole microdata, by taxonomy node and kept
    up to date one changed cell at a time: classes[g] (rows whose target is node g) and
    pairs[a][g][x] (rows whose target is node g holding node x in predictor a, ν left out),
    with their aggregates over taxonomy subtrees (Section 4.1.1's upward pass): agg_classes[g]
    for the target, agg_pairs[a][g][x] for each predictor that has a taxonomy. Python ints.
    A predictor's counts are read within a class leaf only (a candidate v: Table 4.6 counts the
    rows whose class is exactly v), so pairs rows are kept for the leaves (`scored`) and are
    empty for inner nodes: a row generalized above its leaf only leaves its leaf's rows.
    `version` counts the changes of the class counts and `versions[a][g]` those of pairs row
    (a, g), so that an estimate computed from them is reused until they change (`estimate`);
    `changed[g]` counts the changes of any pairs row of class g and `touched[g]` names the one
    predictor the latest of them changed (None: several), so that Def. 4.1's scores are reused
    until what they read changes and, after one change, only its factor is looked at (`Question`)."""

    def __init__(self, codes: np.ndarray, w: np.ndarray, target: int, attrs: Sequence[int], domains: Sequence[int],
                 taxonomies: Sequence[Taxonomy | None]) -> None:
        """From the data as tuples of all columns (`codes`) with counts `w` (a tuple may repeat)."""
        self.target, self.attrs = target, list(attrs)
        self.tax, self.taxes = taxonomies[target], {a: taxonomies[a] for a in self.attrs}
        tax = self.tax
        d = domains[target]
        self.scored = [tax is None or not tax.children[g] for g in range(d)]
        labels = codes[:, target] + 1  # ν (-1) counted in a spare first bin, then left out
        classes = tally(labels, w, d + 1)[1:]
        self.classes: list[int] = classes.tolist()
        self.agg_classes: list[int] = self.classes if tax is None else aggregates(tax, classes).tolist()
        self.pairs: dict[int, list[list[int]]] = {}
        self.agg_pairs: dict[int, list[list[int]]] = {}
        if self.attrs:  # every predictor's (class, value) table from one tally, ν in spare bins
            k, width = len(self.attrs), max(domains[a] for a in self.attrs) + 1
            keys = codes[:, self.attrs] + ((labels * width)[:, None] + (np.arange(k) * ((d + 1) * width) + 1))
            joint = tally(keys.ravel(), np.repeat(w, k), k * (d + 1) * width).reshape(k, d + 1, width)[:, 1:, 1:]
            for n, a in enumerate(self.attrs):
                self.pairs[a] = self._leaves(joint[n, :, :domains[a]].tolist())
            for ta in {id(t): t for t in self.taxes.values() if t is not None}.values():
                alike = [n for n, a in enumerate(self.attrs) if self.taxes[a] is ta]  # one pass per taxonomy
                for n, table in zip(alike, aggregates(ta, joint[alike, :, :len(ta)]).tolist()):
                    self.agg_pairs[self.attrs[n]] = self._leaves(table)
        self.reads = {target, *self.attrs}
        self.version = 0
        self.versions: dict[int, list[int]] = {a: [0] * d for a in self.attrs}
        self.changed: list[int] = [0] * d
        self.touched: list[int | None] = [None] * d
        self._estimates: dict[tuple, tuple[int, tuple[int, int]]] = {}
        # per predictor what a moved row updates: (a, pairs, agg_pairs, versions, lineage or None)
        self._columns = [(a, self.pairs[a], self.agg_pairs.get(a, []), self.versions[a],
                          None if (col_tax := self.taxes[a]) is None else col_tax.lineage) for a in self.attrs]

    def _leaves(self, table: list[list[int]]) -> list[list[int]]:
        """A predictor's table by class node with the inner nodes' rows emptied."""
        return [row if scored else [] for row, scored in zip(table, self.scored)]

    def account(self, codes: list[int], sign: int) -> None:
        """Add (sign 1) or remove (sign -1) one row's contributions (its codes)."""
        if codes[self.target] != NU:
            self._class_row(codes, codes[self.target], sign)

    def change(self, codes: list[int], col: int, code: int) -> None:
        """Cell `col` of one row (its codes, as they are before) becomes `code`: a predictor's
        cell moves one count within the row's class (a change of the pairs row (col, g) when the
        class node g is a leaf), a target's cell moves the whole row from one class node to
        another (a generalization: Figures 4.4-4.6 change one cell at a time). Aggregates of the
        nodes above both the old and the new node would lose the row and gain it back: left alone."""
        g = codes[self.target]
        if col == self.target:
            if g != NU:
                self._class_row(codes, g, -1, code)
            if code != NU:
                self._class_row(codes, code, 1, g)
            return
        x = codes[col]
        if g == NU or x == code or not self.scored[g]:
            return
        pairs, tax = self.pairs[col][g], self.taxes[col]
        up: tuple[int, ...] = ()  # the lineages of x and code
        down: tuple[int, ...] = ()
        if x != NU:
            pairs[x] -= 1
            up = () if tax is None else tax.lineage[x]
        if code != NU:
            pairs[code] += 1
            down = () if tax is None else tax.lineage[code]
        if tax is not None:
            agg = self.agg_pairs[col][g]
            for n in up:
                if n in down:
                    break
                agg[n] -= 1
            for n in down:
                if n in up:
                    break
                agg[n] += 1
        self.versions[col][g] += 1
        self.changed[g] += 1
        self.touched[g] = col

    def _class_row(self, codes: list[int], g: int, sign: int, other: int = NU) -> None:
        """One row (its codes) joins (sign 1) or leaves (-1) class node g, coming from or going to
        class node `other` (ν: none; the aggregates above both are left alone): the class counts
        and, where g is a leaf, its pairs rows (a row moving between inner nodes, as INCP-G's
        higher levels move them, changes no pairs row)."""
        self.classes[g] += sign
        self.version += 1
        if self.tax is not None:
            keep = self.tax.lineage[other] if other != NU else ()
            for n in self.tax.lineage[g]:
                if n in keep:
                    break
                self.agg_classes[n] += sign
        if not self.scored[g]:
            return
        for a, pairs, aggs, versions, lineage in self._columns:
            x = codes[a]
            if x == NU:
                continue
            pairs[g][x] += sign
            versions[g] += 1
            if lineage is not None:
                agg = aggs[g]
                for n in lineage[x]:
                    agg[n] += sign
        self.changed[g] += 1
        self.touched[g] = None

    def estimate(self, a: int | None, v: int, node: int, root: int = 0, less: int = -1) -> tuple[int, int]:
        """`path_estimate` of `node` over the class counts (a None; `v` unused) or over predictor
        a's counts within class leaf v, kept until those counts change."""
        key, ver = (a, v, node, root, less), self.version if a is None else self.versions[a][v]
        hit = self._estimates.get(key)
        if hit is None or hit[0] != ver:
            tax, observed, agg = ((self.tax, self.classes, self.agg_classes) if a is None
                                  else (self.taxes[a], self.pairs[a][v], self.agg_pairs[a][v]))
            assert tax is not None
            hit = self._estimates[key] = (ver, path_estimate(tax, observed, agg, node, root, less))
        return hit[1]

    def within(self, v: int, a: int, row: np.ndarray | None = None) -> tuple[list[int], list[int]]:
        """Column a's counts per node and their aggregates over the rows whose target is the leaf
        v (a has a taxonomy), without `row`'s own contribution when given (D - d_i)."""
        counts, agg = self.pairs[a][v], self.agg_pairs[a][v]
        if row is None or int(row[self.target]) != v or int(row[a]) == NU:
            return counts, agg
        x, tax = int(row[a]), self.taxes[a]
        counts, agg = list(counts), list(agg)
        counts[x] -= 1
        for n in tax.lineage[x] if tax is not None else (x,):
            agg[n] -= 1
        return counts, agg


class _Leaf:
    """One candidate's score for one tuple, with the counts' versions it was computed from."""

    __slots__ = ("version", "n", "tn", "td", "head", "changed", "versions", "nums", "dens", "product", "score",
                 "fraction")

    def __init__(self, k: int) -> None:
        self.version = self.changed = -1
        # the class part: the estimated class count total tn/td, n = |D - d_i| within g (-1: not
        # yet computed), and total/n / total^k as (tn td^k, n td tn^k)
        self.n, self.tn = -1, 0
        self.td = 1
        self.head = (0, 1)
        # per known predictor: its factor (nums[n] / dens[n]) and the version of the counts it read
        self.versions, self.nums, self.dens = [-1] * k, [0] * k, [1] * k
        # (Π nums, Π dens), kept while no factor changes (a class move alone changes the head)
        self.product: tuple[int, int] | None = None
        self.score: tuple[int, int] | None = None
        self.fraction: Fraction | None = None

    def as_fraction(self) -> Fraction:
        """The score as a Fraction, kept until the score changes."""
        if self.fraction is None:
            self.fraction = Fraction(*self.score)  # type: ignore[misc]
        return self.fraction


class Question:
    """Def. 4.1's scores of the candidates of one tuple, d_i: its target node g and its known
    predictor values, read again after its row changed (`stale`). Each candidate v's score is
    kept until what it reads changes: its class estimate until the class counts change, its
    product until v's pairs change, then only the factors whose counts or (predictor, value)
    changed are estimated again; a target generalized one level up keeps them."""

    def __init__(self, counts: GCounts) -> None:
        self.counts, self.stale = counts, True
        self.g = NU
        self.known: tuple[tuple[int, int], ...] = ()  # (predictor, value) of d_i, ν left out
        self.versions: list[list[int]] = []  # the known predictors' versions per class
        self.slot: dict[int, int] = {}  # a known predictor's place in `known`
        self.leaves: dict[int, _Leaf] = {}

    def read(self, row: list[int], attrs: Sequence[int]) -> None:
        """d_i as it is now: as many known predictors keep the leaves, a changed (predictor,
        value) drops that factor only (a new target node g changes the class counts, which every
        score reads, and the pairs of whichever of its old and new node is a leaf, which that
        leaf's score reads: nothing more to drop)."""
        known = tuple((a, row[a]) for a in attrs if row[a] != NU)
        if len(known) != len(self.known):
            self.leaves = {}
        moved = [n for n, (old, new) in enumerate(zip(self.known, known)) if old != new]
        for leaf in self.leaves.values():
            for n in moved:
                leaf.versions[n] = -1
            leaf.changed = -1
        self.g, self.known, self.stale = row[self.counts.target], known, False
        self.versions = [self.counts.versions[a] for a, _ in known]
        self.slot = {a: n for n, (a, _) in enumerate(known)}

    def score(self, v: int) -> _Leaf:
        """Leaf v's score: the estimated class count total = tn/td, then total/n times
        hits/total per known predictor, hits estimated within class v, as one integer fraction
        (0, 1 when a factor is 0)."""
        c, g = self.counts, self.g
        leaf = self.leaves.get(v)
        if leaf is None:
            leaf = self.leaves[v] = _Leaf(len(self.known))
        # the score is a function of (n, tn, td) and the factors only: it is computed again
        # when one of them takes another value, not merely when the counts they read changed
        if leaf.version != c.version:  # D - d_i within the subtree of g: the tuple's own target is g
            leaf.version = c.version
            n, (tn, td) = c.agg_classes[g] - 1, c.estimate(None, 0, v, g, g)
            if n != leaf.n or tn != leaf.tn or td != leaf.td:
                k = len(self.known)
                leaf.n, leaf.tn, leaf.td = n, tn, td
                leaf.head, leaf.score = (tn * td ** k, n * td * tn ** k), None
        changed = c.changed[v]
        if leaf.changed != changed:
            one = c.touched[v] if leaf.changed == changed - 1 else None  # the one pairs row changed
            leaf.changed, own = changed, v == g
            nums, dens, seen, versions, known = leaf.nums, leaf.dens, leaf.versions, self.versions, self.known
            for n in range(len(known)) if one is None else [self.slot[one]] if one in self.slot else []:
                ver = versions[n][v]
                if ver != seen[n]:
                    seen[n] = ver
                    # predictor a's rows holding x within class leaf v, estimated when a has a taxonomy
                    # (d_i's own row left out when its target is v), not kept by `estimate`: it changes
                    # with every row of class v generalized, as often as it is read
                    a, x = known[n]
                    tax = c.taxes[a]
                    num, den = ((c.pairs[a][v][x] - own, 1) if tax is None else
                                path_estimate(tax, c.pairs[a][v], c.agg_pairs[a][v], x, 0, x if own else -1))
                    if num != nums[n] or den != dens[n]:
                        nums[n], dens[n], leaf.product, leaf.score = num, den, None, None
        if leaf.score is None:
            leaf.fraction = None
            if leaf.product is None:
                leaf.product = (prod(leaf.nums), prod(leaf.dens))
            hn, hd = leaf.product
            leaf.score = (leaf.head[0] * hn, leaf.head[1] * hd) if leaf.n and leaf.tn and hn else (0, 1)
        return leaf


@dataclass
class GeneralizedMicrodata(Microdata):
    """Microdata with a taxonomy per column (None: the column is never generalized) and a log of
    generalizations that reverts cells changed several times; `trace` (when a list) records
    the run for inspection: ("ratios", λ, {column: (F1, F2, F3, ratio)}) and ("p", p_conf, p_rnbg)."""

    taxonomies: list[Taxonomy | None] = field(default_factory=list)
    trace: list[tuple] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self._stack: dict[tuple[int, int], list[int]] = {}
        self._g: dict[int, GCounts] = {}
        self._asked: dict[Any, dict[int, Question]] = {}  # row -> target -> Question
        self.coins: dict[tuple[int, int], bool] = {}

    def tax(self, col: int) -> Taxonomy:
        """The taxonomy of a column the algorithm generalizes (a target, or a split value)."""
        tax = self.taxonomies[col]
        if tax is None:
            raise ValueError(f"column {col} has no taxonomy to generalize along")
        return tax

    def height(self, cols: Sequence[int]) -> int:
        """The most levels any of `cols` can be generalized (0 when none has a taxonomy)."""
        return max((t.height for t in (self.taxonomies[a] for a in cols) if t is not None), default=0)

    def set(self, row: Any, col: int, code: int) -> None:
        """Cell (row, col) = code, the count tables (naive Bayes and Def. 4.1's) kept up to date."""
        self._set(row, col, code)

    def _set(self, row: Any, col: int, code: int) -> int:
        """`set`, giving the cell's code before (for `put`'s log)."""
        asked = self._asked.get(row)
        if asked is not None:
            for q in asked.values():
                q.stale = True
        codes = self.rows.row(row).tolist()  # as it is before
        for c in self._g.values():
            if col in c.reads:
                c.change(codes, col, code)
        if self._counts or self._tuples:  # naive Bayes' or ID3's tables to keep up to date too
            super().set(row, col, code)
        else:
            self.rows.set(row, col, code)
        return codes[col]

    def put(self, row: Any, col: int, code: int, changes: list[tuple[Any, int]]) -> None:
        """Set cell (row, col) to `code` (a more general node, or ν), logged for `revert`."""
        self._stack.setdefault((row, col), []).append(self._set(row, col, code))
        changes.append((row, col))

    def hide(self, row: Any, col: int, changes: list[tuple[Any, int]]) -> None:
        """Turn cell (row, col) into ν (a deleted tuple's cells), logged like `put`."""
        self.put(row, col, NU, changes)

    def revert(self, changes: list[tuple[Any, int]], start: int = 0) -> None:
        """Undo changes[start:] newest first (a cell changed twice gets each old value back)."""
        for row, col in reversed(changes[start:]):
            self._set(row, col, self._stack[(row, col)].pop())
        del changes[start:]

    def ids(self, where: dict[int, int], but: Any = None) -> list[Any]:
        """The ids of `select`'s rows (its snapshot of their codes, a second copy to leave out
        `but`, is not made)."""
        return [r for r in self.rows.select(where)[0] if r != but]

    def g_counts(self, target: int) -> GCounts:
        """Def. 4.1's count tables of `target` (built once, then kept up to date by `set`)."""
        if target not in self._g:
            self._g[target] = GCounts(*self.weighted(), target, self.attrs[target], self.domains, self.taxonomies)
        return self._g[target]

    def g_scores(self, cell: Cell, only: tuple[int, ...] | None = None) -> dict[int, Fraction]:
        """p(v|d_i) up to 1/p(d_i) for every v in V_candidate (Def. 4.1), or for the v of
        `only` (leaves under the cell's value): the class counts and each predictor's counts
        within a class are partial-count estimates (Section 4.1.1); a predictor's counts come
        from the rows whose class is exactly v (Table 4.6). Empty when the cell is ν (its
        tuple deleted)."""
        q = self._question(cell)
        if q.g == NU:  # ν: the tuple was deleted, nothing is left to predict
            return {}
        leaves = self.tax(cell.target).leaves_under(q.g) if only is None else only
        return {v: q.score(v).as_fraction() for v in leaves}

    def g_above(self, cell: Cell, v: int, w: int) -> bool:
        """p(v|d_i) > p(w|d_i) (Def. 4.1), v and w in V_candidate of a cell not deleted,
        compared exactly by cross-multiplication."""
        q = self._question(cell)
        if q.g == NU:
            raise ValueError(f"{cell} has no candidates left: its tuple was deleted")
        (vn, vd), (wn, wd) = q.score(v).score, q.score(w).score  # type: ignore[misc]
        return vn * wd > wn * vd

    def _question(self, cell: Cell) -> Question:
        """The scores of the cell's tuple, read again after the tuple changed (cells change
        through `set` only, which marks it stale)."""
        i, t = cell.row, cell.target
        c = self.g_counts(t)
        asked = self._asked.get(i)
        q = None if asked is None else asked.get(t)
        if q is None or q.counts is not c:
            self.tax(t)  # a target without a taxonomy is refused
            if len(self._asked) > _CACHED:  # bounded: one entry per tuple asked about
                self._asked.clear()
            q = self._asked.setdefault(i, {})[t] = Question(c)
        if q.stale:
            q.read(self.row(i).tolist(), self.attrs[t])
        return q

    def g_predicts(self, cell: Cell) -> bool:
        """Assertion (4.9): p(v_actual|d_i) > p(v|d_i) for every other v in V_candidate (never
        for a deleted tuple), compared by `g_above`."""
        q = self._question(cell)
        leaves = [] if q.g == NU else self.tax(cell.target).leaves_under(q.g)
        return cell.value in leaves and all(self.g_above(cell, cell.value, v) for v in leaves if v != cell.value)

    def _log(self, *event: Any) -> None:
        if self.trace is not None:
            self.trace.append(event)


def _omega(p: GeneralizedMicrodata, scores: dict[int, Fraction]) -> list[int]:
    """Ω_k (Def. 4.1): the candidates by score, highest first, ties by node order (a stable sort,
    reversed, of the nodes in order: no negated Fraction and no tuple per comparison)."""
    return sorted(sorted(scores), key=scores.__getitem__, reverse=True)[:p.k]


def _guess(p: GeneralizedMicrodata, cell: Cell, scores: dict[int, Fraction], chance: Chance,
           omega: list[int] | None = None) -> int | None:
    """v_rnbg (Def. 4.2): a random value of Ω_k (`_omega`, when not given) other than v_actual
    with 0 < p(v|d_i) < p(v_actual|d_i); None when there is none."""
    omega = _omega(p, scores) if omega is None else omega
    choices = [v for v in omega if v != cell.value and 0 < scores[v] < scores[cell.value]]
    return chance.next_best(choices) if choices else None


def _coin(p: GeneralizedMicrodata, cell: Cell, candidates: int, chance: Chance) -> bool:
    """|V_candidate| = 2: suppress or not by a coin flip, made once per cell (Section 4.1.2)."""
    if candidates != 2:
        return True
    key = (cell.row, cell.target)
    if key not in p.coins:
        p.coins[key] = chance.suppress()
    return p.coins[key]


def impact_counts(p: GeneralizedMicrodata, cell: Cell, lam: int) -> dict[int, tuple[int, int, int]]:
    """(F1, F2, F3) of Def. 4.4 for every predictor that level λ can still generalize, over
    D[α_j[d] = v_actual] - d_i: F1 rows holding Generalize(α[d_i], λ-1), F2 rows strictly
    below Generalize(α[d_i], λ), F3 rows strictly below Generalize(α[d_i], λ-1)."""
    row, t = p.row(cell.row), cell.target
    c = p.g_counts(t)
    out = {}
    for a in p.attrs[t]:
        tax, x = p.taxonomies[a], int(row[a])
        if tax is None or x == NU:
            continue
        src, dst = tax.generalize(x, lam - 1), tax.generalize(x, lam)
        if src == dst:
            continue
        out[a] = _impact(*c.within(cell.value, a, row), src, dst)
    return out


def _impact(counts: Sequence[int], agg: Sequence[int], src: int, dst: int) -> tuple[int, int, int]:
    """(F1, F2, F3) of Def. 4.4 from one class's counts of a column per node and their
    aggregates: rows holding src, rows strictly below dst, rows strictly below src."""
    return counts[src], agg[dst] - counts[dst], agg[src] - counts[src]


def _ratio(f1: int, f2: int, f3: int) -> Fraction | None:
    """Theorem 4.1's factor (F1+F3-1)/(F1+F3) · F2/(F2-1), one Fraction of the two products;
    None where it is undefined (F2 = 1)."""
    return Fraction((f1 + f3 - 1) * f2, (f1 + f3) * (f2 - 1)) if f2 > 1 and f1 + f3 else None


def _max_impact(p: GeneralizedMicrodata, cell: Cell, lam: int, done: set[int]) -> int | None:
    """FindMaximumImpactAttributeForDECP-G: the least ratio below |D| (strict '<': the first
    attribute wins a tie), among attributes not yet used at this level, F1 >= 1 and
    (F1 > 1 or λ > 1)."""
    counts = impact_counts(p, cell, lam)
    ratios = {a: _ratio(*f) for a, f in counts.items()}
    p._log("ratios", lam, {a: (*f, ratios[a]) for a, f in counts.items()})
    best, ratio = None, Fraction(p.rows.n)
    for a, (f1, _, _) in counts.items():
        r = ratios[a]
        if a not in done and f1 >= 1 and (f1 > 1 or lam > 1) and r is not None and r < ratio:
            best, ratio = a, r
    return best


def _above(p: GeneralizedMicrodata, cell: Cell, rnbg: int) -> bool:
    if p.trace is not None:
        s = p.g_scores(cell, (cell.value, rnbg))
        p._log("p", s[cell.value], s[rnbg])
    return p.g_above(cell, cell.value, rnbg)


def _decp_g_loop(p: GeneralizedMicrodata, cell: Cell, rnbg: int, changes: list[tuple[Any, int]]) -> None:
    """The level loop of Figure 4.4: at each λ up to MaxLevel, the maximum impact attribute's
    values Generalize(α[d_i], λ-1) in tuples of class v_actual go λ levels up, row by row,
    while p(v_actual|d_i) > p(v_rnbg|d_i); at λ = 1 one such value is always left."""
    i, t = cell.row, cell.target
    levels = max((tax.height for a, tax in enumerate(p.taxonomies) if tax is not None and a in p.attrs[t]),
                 default=0)
    for lam in range(1, levels + 1):
        done: set[int] = set()
        while _above(p, cell, rnbg):
            a = _max_impact(p, cell, lam, done)
            if a is None:
                break
            done.add(a)
            tax = p.tax(a)
            x = int(p.row(i)[a])
            src, dst = tax.generalize(x, lam - 1), tax.generalize(x, lam)
            rows = p.ids({t: cell.value, a: src}, but=i)
            if lam == 1:  # one such value is left
                rows = rows[:-1]
            if p.trace is None:
                changes += _generalize_rows(p, rows, a, dst, {0: (cell, rnbg)})[0]
                continue
            for n, r in enumerate(rows):  # traced: the same changes, each check of the figure recorded (Table 4.3)
                if n and not _above(p, cell, rnbg):
                    break
                p.put(r, a, dst, changes)


def _generalize_rows(p: GeneralizedMicrodata, rows: list[Any], a: int, dst: int,
                     cells: dict[int, tuple[Cell, int]]) -> tuple[list[tuple[Any, int]], dict[int, int]]:
    """The inner loop of Figures 4.4 and 4.9: column a of `rows` (tuples of class v_conf holding
    src, dst the parent of src) goes up to dst row by row while one of `cells` (non-empty; key:
    (cell, v_rnbg), each above before) is still above, p(v_conf|d) > p(v_rnbg|d), each checked
    after each put until it is below. The changes made, in order, and per cell the put after
    which it is first below (len(rows) + 1: none).

    Exactly, with fewer checks: each put moves one count of pairs row (a, v_conf) from src up to
    dst and changes nothing else a cell's scores read (not the class counts; not d's own tuple,
    whose target is generalized; not v_rnbg's pairs). Along the puts p(v_conf|d) is then a fixed
    multiple of the estimate of d's value x in a under v_conf (Section 4.1.1, `path_estimate`),
    in which one ratio moves, after j puts: (F_src - j) / (F - j) with x at or below src
    (falling: F_src <= F), F_c / (F - j) with x below a sibling c of src (rising), F - j the rows
    left below dst, 1/|children of dst| once it is 0; none with x elsewhere. So whether a cell is
    above is monotone along the puts, and it is above before them: all the puts are made, each
    cell checked once, and the puts undone newest first while a cell is below, which finds the
    put after which each is first below; the puts past the last of these are made again."""
    made: list[tuple[Any, int]] = []
    for r in rows:
        p.put(r, a, dst, made)
    flip = {n: len(rows) + 1 for n in cells}
    j, doubt = len(rows), [n for n, (c, g) in cells.items() if not p.g_above(c, c.value, g)]
    while doubt:  # after j puts, each cell of `doubt` is below
        for n in doubt:
            flip[n] = j
        j -= 1
        p.revert(made, j)
        doubt = [n for n in doubt if not p.g_above(cells[n][0], cells[n][0].value, cells[n][1])]
    for r in rows[j:min(max(flip.values()), len(rows))]:  # the figures stop once no cell is above
        p.put(r, a, dst, made)
    return made, flip


def _levels(p: GeneralizedMicrodata, cell: Cell, chance: Chance, attempt, exposed=None) -> Outcome | None:
    """The outer loop shared by the -G methods: generalize v_actual λ_αj = 1, 2, ... levels and,
    where the cell is still exposed (naive Bayes, assertion 4.9, unless `exposed` says), run
    `attempt` (given the NB scores) at each, until one succeeds; None when every level failed
    (the cell is left at its first level). A cell whose tuple another cell deleted stays deleted."""
    tax = p.tax(cell.target)
    if p.row(cell.row)[cell.target] == NU:  # deleted with its tuple for another cell
        return Outcome(DELETED)
    for lam_t in range(1, tax.depth(cell.value) + 1):
        p.set(cell.row, cell.target, tax.generalize(cell.value, lam_t))
        scores = p.g_scores(cell) if exposed is None else None
        if scores is None:
            hit, n = exposed(), len(tax.leaves_under(tax.generalize(cell.value, lam_t)))
        else:
            hit, n = all(scores[cell.value] > x for v, x in scores.items() if v != cell.value), len(scores)
        if hit:
            if not _coin(p, cell, n, chance):
                return Outcome(COIN_KEPT)
            out = attempt(scores)
            if out is not None:
                return out
        else:
            return Outcome(NOT_NEEDED if lam_t == 1 else SUPPRESSED)
    p.set(cell.row, cell.target, tax.generalize(cell.value, 1))
    return None


def decp_g(p: GeneralizedMicrodata, cell: Cell, chance: Chance) -> Outcome:
    """DECP-G (Section 4.1.2, Figure 4.4): lower p(v_actual|d_i) below p(v_rnbg|d_i) by
    generalizing the maximum impact data values; delete the tuple when no level works."""

    def attempt(scores: dict[int, Fraction]) -> Outcome | None:
        rnbg = _guess(p, cell, scores, chance)
        if rnbg is None:
            return None
        changes: list[tuple[Any, int]] = []
        _decp_g_loop(p, cell, rnbg, changes)
        if p.g_predicts(cell):
            p.revert(changes)
            return None
        return Outcome(SUPPRESSED, changes, rnbg)

    return _levels(p, cell, chance, attempt) or p.delete(cell, [])


def incp_g(p: GeneralizedMicrodata, cell: Cell, chance: Chance) -> Outcome:
    """INCP-G (Section 4.1.3, Figure 4.5): raise p(v|d_i) for each v of the next best guess set
    by generalizing the class of tuples of class v (then of its generalizations, level by
    level) that share no predictor value with d_i; DECP-G when no level works."""
    i, t = cell.row, cell.target
    tax = p.tax(t)
    preds = p.attrs[t]

    def attempt(scores: dict[int, Fraction]) -> Outcome | None:
        omega = _omega(p, scores)
        rnbg = _guess(p, cell, scores, chance, omega)
        if rnbg is None:
            return None
        nbg = [v for v in omega if v != cell.value and scores[v] >= scores[rnbg]]  # S_nbg (Def. 4.3)
        known = [a for a in preds if p.row(i)[a] != NU]  # d_i's known predictors and their values
        mine = p.row(i)[known].copy()
        counts = p.g_counts(t)
        changes: list[tuple[Any, int]] = []
        for lam in range(1, tax.height + 1):
            for v in nbg:
                src, dst = tax.generalize(v, lam - 1), tax.generalize(v, lam)
                if src == dst or not counts.classes[src]:  # no row of class src to select
                    continue
                ids, codes = p.select({t: src})
                shares = (codes[:, known] == mine).any(axis=1).tolist()
                above = False  # known to be above: checked, and nothing changed since
                for r, share in zip(ids, shares):
                    if not above and not _above(p, cell, v):
                        break
                    if r != i and not share:
                        p.put(r, t, dst, changes)
                    # a row left as it is leaves the check's answer (traced: each check recorded)
                    above = p.trace is None and (r == i or share)
        if p.g_predicts(cell):
            p.revert(changes)
            return None
        return Outcome(SUPPRESSED, changes, rnbg)

    return _levels(p, cell, chance, attempt) or decp_g(p, cell, chance)


def dropp_ratios(p: GeneralizedMicrodata, cell: Cell, rnbg: int, original: np.ndarray,
                 lam: int) -> dict[int, Fraction | None]:
    """Def. 4.6 for every predictor of d_i that level λ still generalizes: F̄(rnbg, λ) /
    F̄(rnbg, λ-1) × F̄(v_actual, λ-1) / F̄(v_actual, λ), F̄(v, λ) the partial-count estimate of
    Generalize(α[d_i], λ) within class v (Table 4.9); None stands for an infinite ratio."""
    row, t = p.row(cell.row), cell.target
    c = p.g_counts(t)
    out: dict[int, Fraction | None] = {}
    for a in p.attrs[t]:
        tax, x = p.taxonomies[a], int(original[a])
        if tax is None or x == NU or tax.generalize(x, lam) == tax.generalize(x, lam - 1):
            continue
        f = {}
        for v in (rnbg, cell.value):
            own = int(row[a]) if int(row[t]) == v else -1  # D - d_i: the tuple's own value leaves class v
            f[v] = tuple(c.estimate(a, v, tax.generalize(x, level), less=own) for level in (lam, lam - 1))
        (rn, rd), (rn1, rd1) = f[rnbg]
        (vn, vd), (vn1, vd1) = f[cell.value]
        if rn1 * vn:
            out[a] = Fraction(rn * vn1 * rd1 * vd, rd * vd1 * rn1 * vn)
        elif rn * vn1:
            out[a] = None
    return out


def dropp_g(p: GeneralizedMicrodata, cell: Cell, chance: Chance) -> Outcome:
    """DROPP-G (Section 4.1.4, Figure 4.6): generalize d_i's own values, level by level, the
    largest ratio of Def. 4.6 first (strict '>': the first attribute wins a tie), until
    p(v_actual|d_i) < p(v_rnbg|d_i); delete the tuple when no level works."""
    i, t = cell.row, cell.target
    original = p.row(i).copy()
    levels = p.height(p.attrs[t])

    def attempt(scores: dict[int, Fraction]) -> Outcome | None:
        rnbg = _guess(p, cell, scores, chance)
        if rnbg is None:
            return None
        changes: list[tuple[Any, int]] = []
        for lam in range(1, levels + 1):
            ratios = dropp_ratios(p, cell, rnbg, original, lam)
            p._log("ratios", lam, dict(ratios))
            # the largest ratio first (None: infinite), the first on a tie (a stable sort)
            order = sorted(ratios, key=lambda a: (ratios[a] is None, ratios[a] or 0), reverse=True)
            while _above(p, cell, rnbg) and order:
                best = order.pop(0)
                p.put(i, best, p.tax(best).generalize(int(original[best]), lam), changes)
        if p.g_predicts(cell):
            p.revert(changes)
            return None
        return Outcome(SUPPRESSED, changes, rnbg)

    return _levels(p, cell, chance, attempt) or p.delete(cell, [])


def _matching(node: id3.Node, x: int, tax: Taxonomy | None,
              memo: dict[tuple[id3.Node, int], int] | None = None) -> int:
    """The first of children_Match (Figure 4.7), the children whose value is `x` or below it,
    the most populated first (ties by code); a ν value matches the most common child only.
    `memo` keeps the answers of one fixed tree (a walk asks the same ones again and again)."""
    if memo is not None and (hit := memo.get((node, x))) is not None:
        return hit
    if x == NU:
        out = node.most_common_child()
    else:
        out = next(v for v in node.ranked() if v == x or (tax is not None and tax.is_descendant(v, x)))
    if memo is not None:
        memo[(node, x)] = out
    return out


def classify(node: id3.Node, row: np.ndarray, taxonomies: Sequence[Taxonomy | None],
             memo: dict[tuple[id3.Node, int], int] | None = None) -> int:
    """v_π of an ID3 tree for a tuple whose values may be generalized: a generalized value
    follows its most populated matching child."""
    while not node.is_leaf:
        a = node.split
        node = node.children[_matching(node, int(row[a]), taxonomies[a], memo)]
    return node.label


def train_g(p: GeneralizedMicrodata, cell: Cell) -> id3.Node:
    """ς_id3 of HID3-G: trained on D - d_i restricted to the rows whose class is in
    V_candidate, the leaves under the cell's generalized value."""
    tax = p.tax(cell.target)
    row = p.row(cell.row)
    return p.tuples(cell.target).tree(row.tolist(), tax.leaves_under(int(row[cell.target])))


def id3_g_predicts(p: GeneralizedMicrodata, cell: Cell) -> bool:
    """The tree of `train_g` classifies the tuple as its true value (never for a deleted tuple)."""
    if p.row(cell.row)[cell.target] == NU:
        return False
    return classify(train_g(p, cell), p.row(cell.row), p.taxonomies) == cell.value


def hid3_g(p: GeneralizedMicrodata, cell: Cell, chance: Chance) -> Outcome:
    """HID3-G (Section 4.2.1, Figure 4.7): walk the ID3 tree and generalize the tuple's split
    values level by level until the path it follows no longer ends in its true value.

    Where the figure's do-while would stop before trying the child reached at the last level,
    Example 10 (Steps 16-19) tries it: after each generalization the first matching child is
    tried, and a value already at the top is not generalized again.

    The walk changes a copy of the tuple (the tree is fixed once trained, and only the tuple is
    read); the generalizations of a walk that succeeds are then applied in their order."""
    i = cell.row
    original = p.row(i).copy()
    row = original.copy()  # the tuple as the walk changes it
    log: list[tuple[int, int, int]] = []  # (column, old code, new code), in order

    def put(a: int, code: int) -> None:
        log.append((a, int(row[a]), code))
        row[a] = code

    def revert(mark: int) -> None:
        for a, old, _ in reversed(log[mark:]):
            row[a] = old
        del log[mark:]

    # the tree of the current level (trained to check exposure, then walked), its child
    # matches, and the walks known to fail, by node and the tuple's values in the columns its
    # subtree can split on (a failed walk leaves the tuple as it found it and reads nothing
    # else, so asking again gives False again)
    tree: list[id3.Node] = []
    matches: dict[tuple[id3.Node, int], int] = {}
    failed: set[tuple[id3.Node, bytes]] = set()

    def exposed() -> bool:
        """`id3_g_predicts` (the tuple is not deleted here), keeping the tree for `attempt`."""
        tree[:] = [train_g(p, cell)]
        matches.clear()
        failed.clear()
        return classify(tree[0], p.row(i), p.taxonomies, matches) == cell.value

    def hide(node: id3.Node, free: np.ndarray) -> bool:
        if node.is_leaf:
            return node.label != cell.value
        key = (node, row[free].tobytes())
        if key in failed:
            return False
        if walk(node, free):
            return True
        failed.add(key)
        return False

    def walk(node: id3.Node, free: np.ndarray) -> bool:
        if classify(node, row, p.taxonomies, matches) != cell.value:
            return True
        a, tax = node.split, p.taxonomies[node.split]
        below = free[free != a]
        if row[a] == NU:
            return hide(node.children[_matching(node, NU, tax, matches)], below)
        mark = len(log)
        top = 0 if tax is None or original[a] == NU else tax.depth(int(original[a]))
        lam = 0 if tax is None else top - tax.depth(int(row[a]))
        mc = node.most_common_child(prefer=int(row[a]) if int(row[a]) in node.children else None)
        while True:
            first = _matching(node, int(row[a]), tax, matches)
            if first != mc:
                if hide(node.children[first], below):
                    return True
                if lam >= top:
                    break
                lam += 1
                put(a, p.tax(a).generalize(int(original[a]), lam))
                continue
            if lam < top:
                lam += 1
                put(a, p.tax(a).generalize(int(original[a]), lam))
            if hide(node.children[_matching(node, int(row[a]), tax, matches)], below):
                return True
            if lam >= top:
                break
        revert(mark)
        return False

    def attempt(_scores) -> Outcome | None:
        row[:] = p.row(i)
        del log[:]
        if not hide(tree[0], np.asarray(p.attrs[cell.target], dtype=np.intp)):
            return None
        changes: list[tuple[Any, int]] = []
        for a, _, code in log:
            p.put(i, a, code, changes)
        return Outcome(SUPPRESSED, changes)

    return _levels(p, cell, chance, attempt, exposed=exposed) or p.delete(cell, [])


def _pending_g(p: GeneralizedMicrodata, cells: Sequence[Cell], chance: Chance) -> tuple[list[Outcome], dict[int, int]]:
    """Assertion (4.12)/(4.13) for each cell at its current level, the coin for |V_candidate|
    = 2, and each remaining cell's v_rnbg (a cell without one is left to the driver's re-check)."""
    outs, pending = [Outcome(NOT_NEEDED) for _ in cells], {}
    for n, c in enumerate(cells):
        scores = p.g_scores(c)
        if not all(scores[c.value] > x for v, x in scores.items() if v != c.value):
            continue
        if not _coin(p, c, len(scores), chance):
            outs[n] = Outcome(COIN_KEPT)
            continue
        outs[n] = Outcome(SUPPRESSED)
        rnbg = _guess(p, c, scores, chance)
        if rnbg is not None:
            outs[n].next_best, pending[n] = rnbg, rnbg
    return outs, pending


def _put_for(p: GeneralizedMicrodata, row: Any, col: int, code: int, pending: dict[int, int],
             outs: list[Outcome]) -> None:
    """Generalize one cell on behalf of the group: a side effect of every cell still pending."""
    p.put(row, col, code, [])
    for n in pending:
        outs[n].changes.append((row, col))


def _merge_outs(total: list[Outcome], outs: list[Outcome]) -> None:
    """Fold one level's outcomes into the group's: a cell's status is its latest verdict."""
    for t, o in zip(total, outs):
        t.changes += o.changes
        t.next_best = o.next_best if o.next_best is not None else t.next_best
        if o.status != NOT_NEEDED or t.status == NOT_NEEDED:
            t.status = o.status


def _group_levels(p: GeneralizedMicrodata, cells: Sequence[Cell], chance: Chance, level_run) -> list[Outcome]:
    """The outer loop of Figures 4.9/4.10: the confidential values go up one level at a time
    (λ_αj, λ_S) while cells stay predicted; like the figures, nothing is reverted between
    levels. Cells still predicted at the end are handed back as 'suppressed' for the driver's
    re-check (the plain method, whose fallback deletes the tuple)."""
    total = [Outcome(DELETED if p.row(c.row)[c.target] == NU else NOT_NEEDED) for c in cells]
    height = max(p.tax(c.target).depth(c.value) for c in cells)
    live = [n for n, o in enumerate(total) if o.status != DELETED]
    for lam_t in range(1, height + 1):
        for n in live:
            c = cells[n]
            p.set(c.row, c.target, p.tax(c.target).generalize(c.value, lam_t))
        group = [cells[n] for n in live]
        outs, pending = _pending_g(p, group, chance)
        if lam_t > 1:  # a cell first missed at a higher level was still suppressed
            outs = [Outcome(SUPPRESSED, o.changes, o.next_best) if o.status == NOT_NEEDED else o for o in outs]
        level_run(group, outs, pending)
        full = [Outcome(NOT_NEEDED) for _ in cells]
        for n, o in zip(live, outs):
            full[n] = o
        _merge_outs(total, full)
        live = [n for n in live if total[n].status == SUPPRESSED and p.g_predicts(cells[n])]
        if not live:
            break
    return total


def e_decp_g(p: GeneralizedMicrodata, cells: Sequence[Cell], chance: Chance) -> list[Outcome]:
    """e-DECP-G (Section 4.3.1, Figure 4.9), cells of one attribute sharing one confidential
    value: at each level λ the candidate values Generalize(v_α, λ-1) of every predictor are
    sorted by primary impact (pending cells whose tuple holds it) descending, then by the
    secondary impact (the ratio of Def. 4.4) ascending, and generalized instance by instance
    as in DECP-G. Candidates with primary impact 0 change no cell's probability and are left
    out (the figure lists them last)."""
    t, conf = cells[0].target, cells[0].value
    if not all(c.target == t and c.value == conf for c in cells):
        raise ValueError("e-DECP-G takes cells of one attribute sharing one value")
    levels = p.height(p.attrs[t])

    def run(group: Sequence[Cell], outs: list[Outcome], pending: dict[int, int]) -> None:
        for lam in range(1, levels + 1):
            pending = still_above(p.g_above, group, pending)
            if not pending:
                return
            primary: dict[tuple[int, int, int], int] = {}
            for n in pending:
                for a in p.attrs[t]:
                    tax, x = p.taxonomies[a], int(p.row(group[n].row)[a])
                    if tax is None or x == NU:
                        continue
                    key = (a, tax.generalize(x, lam - 1), tax.generalize(x, lam))
                    if key[1] != key[2]:
                        primary[key] = primary.get(key, 0) + 1
            secondary, count = {}, {}
            counts = p.g_counts(t)
            for a, src, dst in primary:
                f1, f2, f3 = _impact(*counts.within(conf, a), src, dst)
                secondary[(a, src, dst)], count[(a, src, dst)] = _ratio(f1, f2, f3), f1
            order = sorted((k for k in primary if secondary[k] is not None),
                           key=lambda k: (-primary[k], secondary[k], k))
            for a, src, dst in order:
                rows = p.ids({t: conf, a: src})  # the group's own tuples are generalized by now
                if lam == 1:  # one instance of the value is left (while more than one is, a row goes up)
                    rows = rows[:max(count[(a, src, dst)] - 1, 0)]
                made, flip = _generalize_rows(p, rows, a, dst, {n: (group[n], g) for n, g in pending.items()})
                for n in pending:
                    outs[n].changes += made[:flip[n]]
                pending = {n: g for n, g in pending.items() if flip[n] > len(made)}
                if not pending:
                    return

    return _group_levels(p, cells, chance, run)


def e_dropp_g(p: GeneralizedMicrodata, cells: Sequence[Cell], chance: Chance) -> list[Outcome]:
    """e-DROPP-G (Section 4.3.2, Figure 4.10), cells of one tuple: at each level λ the tuple's
    non-confidential values are sorted by their DROPP-G ratio (Def. 4.6) averaged over the
    pending cells, descending, and generalized λ levels in that order until no cell is
    predicted. A value already as general is not touched again (the figure restarts λ at 1
    for each λ_S, which would otherwise specialize it back)."""
    row = cells[0].row
    if not all(c.row == row for c in cells):
        raise ValueError("e-DROPP-G takes cells of one tuple")
    original = p.row(row).copy()
    confidential = {c.target for c in cells}
    levels = p.height([a for c in cells for a in p.attrs[c.target]])

    def run(group: Sequence[Cell], outs: list[Outcome], pending: dict[int, int]) -> None:
        for lam in range(1, levels + 1):
            pending = still_above(p.g_above, group, pending)
            if not pending:
                return
            impacts: dict[int, list[float]] = {}
            for n, g in pending.items():
                for a, r in dropp_ratios(p, group[n], g, original, lam).items():
                    if a not in confidential:
                        impacts.setdefault(a, []).append(float("inf") if r is None else float(r))
            order = sorted(impacts, key=lambda a: (-float(np.mean(impacts[a])), a))
            for a in order:
                tax = p.tax(a)
                code = tax.generalize(int(original[a]), lam)
                if tax.depth(code) >= tax.depth(int(p.row(row)[a])):
                    continue
                _put_for(p, row, a, code, pending, outs)
                pending = still_above(p.g_above, group, pending)
                if not pending:
                    return

    return _group_levels(p, cells, chance, run)


METHODS_G = {"decp-g": decp_g, "incp-g": incp_g, "dropp-g": dropp_g, "hid3-g": hid3_g}

#: Enhanced -G methods (Section 4.3): the group run, the plain method of the re-check, and
#: how cells are grouped so that each group meets the precondition.
ENHANCED_G = {
    "e-decp-g": (e_decp_g, "decp-g", lambda c: (c.target, c.value)),
    "e-dropp-g": (e_dropp_g, "dropp-g", lambda c: c.row),
}

