"""Give blanked cells back as a label of their hierarchy, after the loop (local recoding, issue 33).

Not ARX's local recoding: a greedy pass after the global recoding (anonsql.kanon.recoding) and the
loop's suppression on the recoded table, the rules of `--restore` (anonsql.kanon.restore) with
"give the value back" widened to "give back the value or an ancestor label of it". Each QI j has
a ladder of rungs: rung 0 is the published value itself (the label at the global node's level
L_j), rung i its label at level L_j + i, up to the level below ⊥. `ladders[j][i][x]` is the id of
the rung-i label of the tuple value coded x; the caller numbers them so that rung 0 keeps the
value's own code (ladders[j][0][x] == x) and ids of different labels never meet (a rung-i label
of two values is one id; ids of other rungs lie elsewhere).

For every class E (pattern p), in the order of the patterns, for every attribute j that p blanks
(ascending j), for every rung i from the lowest, the rows of E whose source value was not NULL
are grouped by their rung-i label a; each group G, largest first (ties: the smaller id), moves to
p' = p with a at j when what stays (E \\ G) is empty or holds at least k rows and meets every
model, and the class p' (the rows already published as p', plus G) holds at least k rows and
meets every model. A group moved at rung i is gone from E before rung i + 1 is tried, so a cell
goes back at the lowest rung that works, or stays ⊥. Passes repeat until one moves nothing; each
move keeps both classes it touches valid and leaves every other class as it was, so every class
still meets k and the models.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .diversity import Model, class_holds


def give_back(codes: np.ndarray, final: np.ndarray, counts: np.ndarray, k: int, ladders: Sequence[Sequence[np.ndarray]],
              sensitive: Sequence[np.ndarray] = (), models: Sequence[Model] = (), tables: Sequence[np.ndarray] = (),
              logs: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """(final ids with cells given back, cells given back with multiplicity). `codes` (T, M) are
    the tuples' values (-1: NULL), `final` (T, M) the loop's patterns (-1: ⊥), `counts` (T,)
    N(y, c), `ladders[j]` QI j's rungs (module doc), `sensitive[s]` (T, V_s + 1) each tuple's
    histogram of sensitive column s, `tables[s]` the whole table's, `logs` ln i of the counts.

    A pass after the first visits only the classes whose moves may have changed: those a move
    touched, and those one blank away from them (a class's moves go to such classes)."""
    final = final.copy()
    n_attrs = final.shape[1]
    original, weight = codes.tolist(), counts.tolist()
    rungs = [[r.tolist() for r in ladder] for ladder in ladders]
    classes: dict[tuple[int, ...], list[int]] = {}
    for i, row in enumerate(final.tolist()):
        classes.setdefault(tuple(row), []).append(i)
    rows = {p: sum(weight[i] for i in m) for p, m in classes.items()}
    hists: dict[tuple[int, ...], list[np.ndarray]] = {}

    def hist(p: tuple[int, ...]) -> list[np.ndarray]:  # the class's sensitive histograms, made when first read
        if p not in hists:
            hists[p] = [h[classes[p]].sum(axis=0) for h in sensitive]
        return hists[p]

    def meets(h: list[np.ndarray]) -> bool:
        return not models or class_holds(models, h, tables, logs)

    def move(p: tuple[int, ...], j: int, rung: list[int]) -> tuple[int, set[tuple[int, ...]]]:
        """Move the groups of class p by their `rung` label of QI j, largest first: (cells, classes touched)."""
        groups: dict[int, list[int]] = {}
        for i in classes[p]:
            if original[i][j] >= 0:
                groups.setdefault(rung[original[i][j]], []).append(i)
        sizes = {a: sum(weight[i] for i in g) for a, g in groups.items()}
        moved, touched = 0, set()
        for a in sorted(groups, key=lambda a: (-sizes[a], a)):
            n, target = sizes[a], p[:j] + (a,) + p[j + 1:]
            stay, into = rows[p] - n, rows.get(target, 0) + n
            if 0 < stay < k or into < k:
                continue
            part = [h[groups[a]].sum(axis=0) for h in sensitive]
            stay_h = [x - y for x, y in zip(hist(p), part)]
            into_h = [x + y for x, y in zip(hist(target), part)] if target in classes else part
            if (stay and not meets(stay_h)) or not meets(into_h):
                continue
            final[groups[a], j] = a
            gone = set(groups[a])
            classes.setdefault(target, []).extend(groups[a])
            rows[target], hists[target] = into, into_h
            classes[p] = [i for i in classes[p] if i not in gone]
            rows[p], hists[p] = stay, stay_h
            moved += n
            touched |= {p, target}
            if not stay:
                del classes[p], rows[p], hists[p]
                break
        return moved, touched

    given = 0
    todo = set(classes)
    while todo:
        touched: set[tuple[int, ...]] = set()
        for p in sorted(todo):
            for j in range(n_attrs):
                for rung in rungs[j]:
                    if p not in classes or p[j] >= 0:
                        break
                    moved, hit = move(p, j, rung)
                    given, touched = given + moved, touched | hit
        todo = {q for t in touched for q in [t, *(t[:j] + (-1,) + t[j + 1:] for j in range(n_attrs) if t[j] >= 0)]
                if q in classes}
    return final, given


def identity(codes: np.ndarray) -> list[list[np.ndarray]]:
    """Ladders of one rung, each value itself (`--restore`): ladders[j][0][x] == x."""
    return [[np.arange(int(codes[:, j].max(initial=-1)) + 1)] for j in range(codes.shape[1])]


def number(labels: Sequence[Sequence[str]]) -> list[np.ndarray]:
    """One QI's ladder from its labels: `labels[i][x]` the rung-i label of the value coded x
    (labels[0] the values' own). Rung 0 keeps the codes; each higher rung numbers its distinct
    labels after every id given so far, so ids of different rungs never meet."""
    ladder = [np.arange(len(labels[0]))] if labels else []
    start = len(labels[0]) if labels else 0
    for rung in labels[1:]:
        names = {name: start + i for i, name in enumerate(dict.fromkeys(rung))}
        ladder.append(np.array([names[name] for name in rung], dtype=np.int64))
        start += len(names)
    return ladder
