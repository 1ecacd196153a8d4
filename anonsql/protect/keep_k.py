"""k-anonymity kept through protect: a cell protect hides (or generalizes) in a quasi-identifier
moves its row to another equivalence class, which may leave that class, or the one it left,
with fewer than k rows. The classes are then repaired as kanon would make them k-anonymous:
the count table N(y) of the table as protect leaves it goes through anonsql.kanon's bottom-up
cell suppression (Kameya & Hayashi 2016) with the MAR cost and one class (C = 1), which
suppresses further QI cells, merging the small classes with their cheapest partners, until
every class has >= k rows. Pure: count tables in, the classes to suppress further out.

>>> before = {("a", 1): 2, ("b", 1): 2}          # 2-anonymous over (letter, digit)
>>> moved = [(("a", 1), ("a", None))]           # protect hid the digit of one "a" row
>>> repair(before, moved, k=2, seed=0)          # the "a" row left behind joins it at ("a", ⊥)
[(('a', 1), [1])]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..kanon import anonymize

Pattern = tuple[Any, ...]  # a row's quasi-identifier values, None for ⊥


def after(classes: Mapping[Pattern, int], moved: Sequence[tuple[Pattern, Pattern | None]]) -> Counter[Pattern]:
    """N(y) once the `moved` rows (old pattern, new pattern; None: the row is removed) moved."""
    counts: Counter[Pattern] = Counter(classes)
    for old, new in moved:
        counts[old] -= 1
        if new is not None:
            counts[new] += 1
    return +counts  # classes left empty are gone


def repair(classes: Mapping[Pattern, int], moved: Sequence[tuple[Pattern, Pattern | None]], *, k: int,
           seed: int = 0) -> list[tuple[Pattern, list[int]]]:
    """The classes (patterns of the table after the move) whose rows must have more QI cells
    suppressed, with the positions to suppress, so that every class has >= k rows; [] when the
    move kept the table k-anonymous. ValueError when k exceeds the rows."""
    counts = after(classes, moved)
    patterns = list(counts)
    if all(counts[p] >= k for p in patterns):
        return []
    m = len(patterns[0])
    # value codes per column; sorted by (type, text) so that the result does not depend on the input's order
    domains = [sorted({p[j] for p in patterns if p[j] is not None}, key=lambda v: (type(v).__name__, str(v)))
               for j in range(m)]
    index = [{v: i for i, v in enumerate(d)} for d in domains]
    codes = np.array([[-1 if p[j] is None else index[j][p[j]] for j in range(m)] for p in patterns], dtype=np.int64)
    result = anonymize(codes, np.zeros(len(patterns), dtype=np.int64), np.array([counts[p] for p in patterns]),
                       np.array([len(d) for d in domains]), k=k, cost="mar", seed=seed)
    out = []
    for i, p in enumerate(patterns):
        blank = np.flatnonzero((codes[i] != -1) & (result.final_codes[i] == -1)).tolist()
        if blank:
            out.append((p, blank))
    return out
