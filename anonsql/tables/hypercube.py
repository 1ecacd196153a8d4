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
Along a taxonomy (--hierarchy) a corner moves only to a sibling leaf (`alternatives`): every
node's total then holds both corners of the pair or neither, and keeps its value too.

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

from .cells import TOTAL, Grid

#: Alternatives tried per dimension (the cheapest lines next to the primary).
NEAREST = 8


def hypercube(grid: Grid, p: int, hidden: np.ndarray, barred: np.ndarray, needs: list[tuple[float, float]],
              floor: float, preferred: np.ndarray | None = None) -> np.ndarray | None:
    """The corners to suppress newly (not yet hidden) of the cheapest feasible hypercube around
    cell `p` without a `barred` corner not yet hidden, or None when no hypercube of existing cells
    protects it; a `preferred` corner (last period's pattern) costs nothing."""
    boxes = _boxes(grid, p, hidden, barred, needs, floor, preferred)
    if boxes is None:
        return None
    at = boxes[0]
    cost = np.where(hidden[at], 0, _weight(grid, at, barred & ~hidden, preferred)).sum(axis=1)
    best = at[int(np.argmin(cost))]
    return best[~hidden[best]]


def hidden_box(grid: Grid, p: int, hidden: np.ndarray, needs: list[tuple[float, float]],
               floor: float) -> tuple[float, float] | None:
    """How far cell `p` can move down and up along a feasible hypercube whose corners are ALL
    `hidden` already (the widest such box), or None when there is none: a certificate, without
    an LP, that the attacker's interval of `p` holds [value - down, value + up] (over whole
    numbers too for counts: the shift is then a whole number), so `p` is protected as `needs` ask.

    >>> from .cells import layout
    >>> g = layout([3, 3], [(0, 1), (0,), (1,), ()])
    >>> g.value[:9] = [2, 9, 8, 7, 6, 10, 12, 11, 5]
    >>> hidden = np.zeros(len(g.codes), bool); hidden[[0, 1, 3, 4]] = True
    >>> hidden_box(g, 0, hidden, [(0.0, 0.0)], 0.0), hidden_box(g, 0, hidden, [(0.0, 8.0)], 0.0)
    ((2.0, 7.0), None)
    """
    boxes = _boxes(grid, p, hidden, np.zeros_like(hidden), needs, floor)
    if boxes is None:
        return None
    at, sinks, rises = boxes
    inside = hidden[at].all(axis=1)
    if not inside.any():
        return None
    best = int(np.argmax(np.where(inside, sinks + rises, -np.inf)))
    return float(sinks[best]), float(rises[best])


def _boxes(grid: Grid, p: int, hidden: np.ndarray, barred: np.ndarray, needs: list[tuple[float, float]],
           floor: float, preferred: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The feasible hypercubes around `p` among the NEAREST alternatives per dimension: their
    corners (K, 2^D), how far `p` can move down (sinks) and up (rises) along each; None if none."""
    codes = grid.codes[p]
    n = len(codes)
    barred = barred & ~hidden
    options = []
    for j, code in enumerate(codes):
        alts = alternatives(grid, j, int(code))
        if not alts:
            return None
        line = np.repeat(codes[None, :], len(alts), axis=0)
        line[:, j] = alts
        at = grid.index(line)
        if (at < 0).any():
            return None
        options.append(np.array(alts)[np.argsort(np.where(hidden[at], 0, _weight(grid, at, barred, preferred)),
                                                 kind="stable")][:NEAREST])
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
    return at[feasible], sinks[feasible], rises[feasible]


def alternatives(grid: Grid, j: int, code: int) -> list[int]:
    """The categories dimension j of a corner may take instead of `code`: any other one; along a
    taxonomy (--hierarchy) only the leaves under exactly the same nodes as `code` (its siblings:
    every node total holds both or neither, so the shift keeps them all), and none for a node.

    >>> from .cells import layout
    >>> g = layout([4], [(0,)], [[np.array([0, 1]), np.array([2, 3]), np.array([0, 1, 2, 3])]])
    >>> alternatives(g, 0, 1), alternatives(g, 0, 4)
    ([0], [])
    """
    size, groups = grid.sizes[j], grid.groups[j]
    if groups is None:
        return [a for a in range(size) if a != code]
    if not 0 <= code < size:
        return []
    under = np.zeros((size, len(groups)), bool)  # leaf x node: the leaf is under the node
    for g, leaves in enumerate(groups):
        under[leaves, g] = True
    return [a for a in range(size) if a != code and (under[a] == under[code]).all()]


def _weight(grid: Grid, at: np.ndarray, barred: np.ndarray, preferred: np.ndarray | None = None) -> np.ndarray:
    """The cost of suppressing cells `at`: their value, margins weighted up by the dimensions they sum
    (Grid.summed, of these cells only); a `barred` cell costs infinitely much, a `preferred` one
    (last period's pattern, --previous) nothing."""
    codes = grid.codes[at]
    summed = ((codes == TOTAL) | (codes >= np.array(grid.sizes, np.int64))).sum(axis=-1)
    weight = np.where(barred[at], np.inf, grid.value[at] * (1 + summed))
    if preferred is not None:
        weight = np.where(preferred[at] & ~barred[at], 0.0, weight)
    return weight
