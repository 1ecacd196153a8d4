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

The pass is anonsql.kanon.local's with one rung per QI, the value itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .diversity import Model
from .local import give_back, identity


def restore(codes: np.ndarray, final: np.ndarray, counts: np.ndarray, k: int, sensitive: Sequence[np.ndarray] = (),
            models: Sequence[Model] = (), tables: Sequence[np.ndarray] = (), logs: np.ndarray | None = None
            ) -> tuple[np.ndarray, int]:
    """(final codes with cells given back, cells restored with multiplicity). `codes` (T, M) are the
    original codes of the count table's tuples (-1: NULL), `final` (T, M) the loop's, `counts` (T,)
    N(y, c), `sensitive[s]` (T, V_s + 1) each tuple's histogram of sensitive column s, `tables[s]`
    the whole table's (the models' reference), `logs` ln i of the counts (the entropy model)."""
    return give_back(codes, final, counts, k, identity(codes), sensitive, models, tables, logs)
