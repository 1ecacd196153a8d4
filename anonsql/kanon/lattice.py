"""The optimal global recoding search over the generalization lattice (issue 33): pure, no SQL.

A node is one level per quasi-identifier (0 the value .. top_j ⊥). It is *feasible* when the
rows in its equivalence classes smaller than k are at most the suppression limit. Feasibility
is monotone (generalizing merges classes, so a class of k rows stays one): when a node fails,
every node below it (a level lower or equal on every QI) fails too, and is never evaluated.
The utility is a loss summed over the cells (anonsql.kanon.recoding: ARX's loss metric LM, a
cell at label L losing (leaves under L - 1)/(D_j - 1) and a suppressed cell 1, or the papers'
MAR cost, KL); with suppression it is not monotone, so the search bounds it instead: a node's
loss is at least Σ_j L_j(l_j), each cell counted at the smaller of its label's loss and ⊥'s
(for LM, ⊥'s 1 is never the smaller: the loss without suppression). Nodes are taken in the
order of that bound, in batches evaluated by SQL scans, until the bound of the next node
exceeds the loss of the best feasible node found.

Optimality: the node returned has the smallest loss among ALL feasible nodes (ties: the lower
node, then the smaller levels in QI order): every node never evaluated either lies below a
failing node (infeasible) or has a bound, hence a loss, larger than the best one's.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import AnonsqlError

#: The largest lattice searched (the nodes are listed and sorted in memory).
MAX_NODES = 1_000_000


@dataclass
class Evaluated:
    """What one SQL scan says of a batch of nodes, in the batch's order."""

    suppressed: np.ndarray  # (B,) rows in classes smaller than k
    loss: np.ndarray  # (B,) LM summed over cells (a suppressed class's cells count 1 each)


@dataclass
class Search:
    """The chosen node and how the search got there."""

    levels: tuple[int, ...]
    suppressed: int  # rows in classes < k at that node (left to local suppression)
    loss: float  # its LM summed over cells
    nodes: int  # the lattice's size
    evaluated: int  # nodes evaluated by SQL
    pruned: int  # nodes skipped below a failing node
    scans: int  # batches (each one SQL scan for feasibility, and one for the loss of its feasible nodes)


def search(tops: Sequence[int], bounds: Sequence[np.ndarray], limit: int,
           evaluate: Callable[[np.ndarray], Evaluated], batch: int = 64) -> Search:
    """The feasible node of least LM (see the module docstring). `tops[j]` is QI j's ⊥ level,
    `bounds[j][l]` L_j(l), `limit` the rows local suppression may take, `evaluate(nodes)` the SQL scan of a
    (B, M) array of levels."""
    size = int(np.prod([t + 1 for t in tops], dtype=np.float64))
    if size > MAX_NODES:
        raise AnonsqlError(f"the generalization lattice has {size:,} nodes, more than the {MAX_NODES:,} searched: "
                           "give fewer quasi-identifiers a hierarchy, or shorter ladders")
    nodes = np.array(list(itertools.product(*(range(t + 1) for t in tops))), dtype=np.int64).reshape(size, len(tops))
    bound = np.zeros(size)
    for j, b in enumerate(bounds):
        bound += np.asarray(b, dtype=np.float64)[nodes[:, j]]
    order = np.lexsort((*nodes.T[::-1], nodes.sum(axis=1), bound))  # bound, then height, then levels
    failing = np.zeros((0, len(tops)), np.int64)
    best: tuple[float, int, tuple[int, ...], int] | None = None
    evaluated = pruned = scans = 0
    at = 0
    while at < size:
        chosen: list[int] = []
        while at < size and len(chosen) < batch:
            i = order[at]
            if best is not None and bound[i] > best[0]:
                at = size  # every node from here on loses more (a tie may still win on height: evaluated)
                break
            at += 1
            if len(failing) and (nodes[i] <= failing).all(axis=1).any():
                pruned += 1
                continue
            chosen.append(i)
        if not chosen:
            break
        got = evaluate(nodes[chosen])
        evaluated += len(chosen)
        scans += 1
        for i, sup, loss in zip(chosen, got.suppressed.tolist(), got.loss.tolist()):
            if sup > limit:
                failing = np.vstack([failing, nodes[i]])
                continue
            key = (float(loss), int(nodes[i].sum()), tuple(nodes[i].tolist()), int(sup))
            if best is None or key[:3] < best[:3]:
                best = key
    assert best is not None  # the top node (⊥ everywhere) is one class of N >= k rows: always feasible
    return Search(best[2], best[3], best[0], size, evaluated, pruned, scans)
