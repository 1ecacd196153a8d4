"""The hypercube around a primary cell: 2^D corners whose alternating shift keeps every total.

In a table with all margins (CUBE), pick for each dimension an alternative: another category
where the primary has one, a category where it has the Total (the pair then moves together).
Adding +t to the corners with an even number of alternatives in categorical dimensions and
-t to the others leaves every published sum unchanged, so once all corners are suppressed the
primary is no longer a linear combination of published cells, and its attacker interval is
at least as wide as the smallest corner on the shrinking side allows (its value above the
`floor` every hidden cell is known to keep). Among the choices whose corners allow the
protection (the primary moving down and up as far as one of the `needs` asks), the cheapest (value of the corners
newly suppressed, margins weighted up) wins (Repsilber's hypercube method, as in tau-ARGUS); a
`barred` cell (forced, or empty when empty secondaries are not allowed) is never a corner.

>>> from .cells import layout
>>> g = layout([3, 3], [(0, 1), (0,), (1,), ()])
>>> g.value[:9] = [2, 9, 8, 7, 6, 10, 12, 11, 5]
>>> hidden = np.zeros(len(g.codes), bool); hidden[0] = True
>>> g.codes[hypercube(g, 0, hidden, np.zeros_like(hidden), [(0.0, 0.0)], 0.0)].tolist()  # the cheapest rectangle
[[0, 1], [1, 0], [1, 1]]
"""

from __future__ import annotations

import itertools

import numpy as np

from .cells import Grid

#: Alternatives tried per dimension (the cheapest lines next to the primary).
NEAREST = 8


def hypercube(grid: Grid, p: int, hidden: np.ndarray, barred: np.ndarray, needs: list[tuple[float, float]],
              floor: float, preferred: np.ndarray | None = None) -> np.ndarray | None:
    """The corners to suppress newly (not yet hidden) of the cheapest feasible hypercube around
    cell `p` without a `barred` corner not yet hidden, or None when no hypercube of existing cells
    protects it; a `preferred` corner (last period's pattern) costs nothing."""
    codes = grid.codes[p]
    n = len(codes)
    barred = barred & ~hidden
    weight = np.where(barred, np.inf, grid.value * (1 + grid.summed))
    if preferred is not None:
        weight = np.where(preferred & ~barred, 0.0, weight)
    options = []
    for j, code in enumerate(codes):
        alts = [a for a in range(grid.sizes[j]) if a != code]
        line = np.repeat(codes[None, :], len(alts), axis=0)
        line[:, j] = alts
        at = grid.index(line)
        if (at < 0).any():
            return None
        options.append(np.array(alts)[np.argsort(np.where(hidden[at], 0, weight[at]), kind="stable")][:NEAREST])
    flips = np.array(list(itertools.product([0, 1], repeat=n)), bool)  # which dimensions take the alternative
    sign = np.where((flips & (codes >= 0)).sum(axis=1) % 2 == 0, 1, -1)
    choices = np.array(list(itertools.product(*options)), np.int64)  # (K, D)
    corners = np.where(flips[None, :, :], choices[:, None, :], codes[None, None, :])  # (K, 2^D, D)
    at = grid.index(corners.reshape(-1, n)).reshape(len(choices), len(flips))
    if (at < 0).any():
        return None
    room = grid.value[at] - floor
    sinks, rises = np.where(sign > 0, room, np.inf).min(axis=1), np.where(sign < 0, room, np.inf).min(axis=1)
    feasible = np.logical_or.reduce([(sinks >= down) & (rises >= up) for down, up in needs])
    feasible &= np.maximum(sinks, rises) > 0
    feasible &= ~barred[at].any(axis=1)
    if not feasible.any():
        return None
    cost = np.where(hidden[at], 0, weight[at]).sum(axis=1) + np.where(feasible, 0, np.inf)
    best = at[int(np.argmin(cost))]
    return best[~hidden[best]]

