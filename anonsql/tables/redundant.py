"""Redundant secondaries: a secondary whose publication still leaves every primary its protection
is published again (the clean-up pass of the suppression heuristics in tau-ARGUS and sdcTable).

The exact and LP stages add cells primary by primary, so a cell chosen for one primary may be
superfluous once later cells protect it too. Each secondary is tried alone against the pattern
as it stands, the most expensive first (last period's cells last, with --previous), by a fresh
attacker over the whole table (attack.Attacker: the LP, then for counts the whole numbers); a
released cell stays published. A trial costs one attack of every primary, so the pass runs only
on tables where secondaries x primaries x cells stays under BUDGET (small tables: where one
cell more or less matters most).

>>> from .cells import layout
>>> g = layout([2, 2], [(0, 1), (0,), (1,), ()])
>>> g.value[:] = [1, 5, 6, 7, 6, 13, 7, 12, 19]
>>> status = np.array(["u", "x", "x", "x", "s", "x", "s", "s", "s"])  # (Total of row 1) is not needed
>>> release(g, status, Protection(), np.zeros(9), [0], np.arange(9)[::-1]), status.tolist()
([5], ['u', 'x', 'x', 'x', 's', 's', 's', 's', 's'])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .attack import Attacker
from .cells import Grid
from .protection import Protection

#: The largest secondaries x primaries x cells the pass takes on.
BUDGET = 5_000_000


def release(grid: Grid, status: np.ndarray, protection: Protection, levels: np.ndarray, primaries: Sequence[int],
            order: np.ndarray) -> list[int]:
    """Publish again (status 's', in place) every secondary (status 'x') whose publication, tried in
    `order` (cell numbers, the first tried first), leaves every primary its protection; returns them."""
    secondaries = [int(c) for c in order if status[c] == "x"]
    if not secondaries or len(secondaries) * len(primaries) * len(status) > BUDGET:
        return []
    members, finest = grid.members(), grid.finest_cell()
    released = []
    for c in secondaries:
        trial = (status == "u") | (status == "x")
        trial[c] = False
        attacker = Attacker(members, finest, grid.value, trial, protection.floor)
        if all(_holds(attacker, p, grid, levels, protection) for p in primaries):
            status[c] = "s"
            released.append(c)
    return released


def _holds(attacker: Attacker, p: int, grid: Grid, levels: np.ndarray, protection: Protection) -> bool:
    """Whether primary `p` keeps its protection against `attacker` (over whole numbers for counts)."""
    b = attacker.bounds(p)
    if any(protection.fails(grid.value[p], b.lower, b.upper, levels[p])):
        return False
    if protection.integer and any(b.fractional):
        b = attacker.whole(p, b)
    return not any(protection.fails(grid.value[p], b.lower, b.upper, levels[p]))
