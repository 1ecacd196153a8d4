"""Give blanked cells back after the loop, while every class keeps k and every model (`--restore`).

Not in Kameya & Hayashi (2016): a post-pass over the loop's decisions on the same count table,
toward ARX's cell-suppression figures (issue 32), in the spirit of ARX's iterated local recoding of
the outliers. The loop merges pairs of tuples and stops once every class meets k (and the models);
many of its classes then hold more rows than k, and a part of such a class that shares a blanked
value could have kept it. The pass looks for such parts and moves them back:

For every class E (the rows sharing a published QI pattern p, all classes c together), in the
order of the patterns (⊥ first, as the loop's canonical order), for every attribute j that p
blanks (ascending j), the rows of E are grouped by their original value x of j (rows whose value
was NULL in the source stay); for each group G, largest first (ties: the smaller value code),
the move of G to p' = p with x at j is taken when

- what stays, E \\ G, is empty or holds at least k rows and meets every model, and
- the class p' after the move (the rows already published as p', if any, plus G) holds at least
  k rows and meets every model.

A move restores |G| cells and never blanks one, so passes repeat until one moves nothing; every
class then still meets k and the models (each move keeps both classes it touches valid and leaves
every other class as it was). The published cells are original values or ⊥, so the job's checks
(only NULLs added, k-anonymity and the models recounted by SQL) hold as for the loop's output.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .diversity import Model, class_holds


def restore(codes: np.ndarray, final: np.ndarray, counts: np.ndarray, k: int, sensitive: Sequence[np.ndarray] = (),
            models: Sequence[Model] = (), tables: Sequence[np.ndarray] = (), logs: np.ndarray | None = None
            ) -> tuple[np.ndarray, int]:
    """(final codes with cells given back, cells restored with multiplicity). `codes` (T, M) are the
    original codes of the count table's tuples (-1: NULL), `final` (T, M) the loop's, `counts` (T,)
    N(y, c), `sensitive[s]` (T, V_s + 1) each tuple's histogram of sensitive column s, `tables[s]`
    the whole table's (the models' reference), `logs` ln i of the counts (the entropy model).

    A pass after the first visits only the classes whose moves may have changed: those a move
    touched, and those one blank away from them (a class's moves go to such classes)."""
    final = final.copy()
    n_attrs = final.shape[1]
    original, weight = codes.tolist(), counts.tolist()
    classes: dict[tuple[int, ...], list[int]] = {}
    for i, row in enumerate(final.tolist()):
        classes.setdefault(tuple(row), []).append(i)
    rows = {p: sum(weight[i] for i in m) for p, m in classes.items()}
    hists: dict[tuple[int, ...], list[np.ndarray]] = {}

    def hist(p: tuple[int, ...]) -> list[np.ndarray]:  # the class's sensitive histograms, made when first read
        if p not in hists:
            hists[p] = [h[classes[p]].sum(axis=0) for h in sensitive]
        return hists[p]

    def meets(n: int, h: list[np.ndarray]) -> bool:
        return not models or class_holds(models, h, tables, logs)

    restored = 0
    todo = set(classes)
    while todo:
        touched: set[tuple[int, ...]] = set()
        for p in sorted(todo):
            for j in range(n_attrs):
                if p not in classes or p[j] >= 0:
                    continue
                groups: dict[int, list[int]] = {}
                for i in classes[p]:
                    if original[i][j] >= 0:
                        groups.setdefault(original[i][j], []).append(i)
                sizes = {x: sum(weight[i] for i in g) for x, g in groups.items()}
                for x in sorted(groups, key=lambda x: (-sizes[x], x)):
                    n, target = sizes[x], p[:j] + (x,) + p[j + 1:]
                    stay, into = rows[p] - n, rows.get(target, 0) + n
                    if 0 < stay < k or into < k:
                        continue
                    part = [h[groups[x]].sum(axis=0) for h in sensitive]
                    stay_h = [a - b for a, b in zip(hist(p), part)]
                    into_h = [a + b for a, b in zip(hist(target), part)] if target in classes else part
                    if (stay and not meets(stay, stay_h)) or not meets(into, into_h):
                        continue
                    final[groups[x], j] = x
                    gone = set(groups[x])
                    classes.setdefault(target, []).extend(groups[x])
                    rows[target], hists[target] = into, into_h
                    classes[p] = [i for i in classes[p] if i not in gone]
                    rows[p], hists[p] = stay, stay_h
                    restored += n
                    touched |= {p, target}
                    if not stay:
                        del classes[p], rows[p], hists[p]
                        break
        todo = {q for t in touched for q in [t, *(t[:j] + (-1,) + t[j + 1:] for j in range(n_attrs) if t[j] >= 0)]
                if q in classes}
    return final, restored
