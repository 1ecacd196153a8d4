"""Stable patterns across periods (--previous): last period's suppressed cells, read from its
published table or its private audit, are the secondaries chosen first (anonsql.tables.suppress:
`preferred`, as R's GaussSuppression lowers their cost in incremental suppression), and the run
reports how many cells changed status against that pattern.

A cell is matched by its labels as published and its grouping id; cells of the previous table
that this period's table no longer has count as changes when they were hidden.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import sql
from ..catalog import Table
from ..engine import Engine
from ..errors import AnonsqlError
from .cells import Grid
from .rewrite import AUDIT, PUBLISHED


@dataclass
class Pattern:
    """Last period's pattern on this period's grid: which cells were hidden, and how many hidden
    cells it had that this grid lacks."""

    table: str
    hidden: np.ndarray  # bool per cell of the grid
    gone: int = 0

    def changes(self, hidden: np.ndarray) -> tuple[int, int]:
        """(cells suppressed now and published then, cells published now and suppressed then or gone)."""
        return int((hidden & ~self.hidden).sum()), int((~hidden & self.hidden).sum()) + self.gone


def read(engine: Engine, previous: Table, dims: Sequence[str], grid: Grid, labels: Sequence[Sequence[Any]]) -> Pattern:
    """The pattern of `previous` (a table written by 'anonsql tables' over the same dimensions, or
    its private audit) on `grid` (`labels`: each dimension's labels by code, its total's last)."""
    for fixed in (PUBLISHED, AUDIT):
        own = [c for c in previous.column_names if c not in fixed]
        if set(fixed) <= set(previous.column_names) and own == list(dims):
            break
    else:
        raise AnonsqlError(f"--previous {previous} is not a table published by 'anonsql tables' over "
                           f"{', '.join(dims)} (nor its private audit)")
    rows = engine.fetch_all(*sql.render("tables/previous_pattern", engine.dialect, prev=previous.expr,
                                        label=sql.columns(dims)))
    gid = grid.grouping_id
    cell = {(tuple(labels[j][k] for j, k in enumerate(codes)), int(gid[c])): c for c, codes in enumerate(grid.codes)}
    n = len(dims)
    hidden = np.zeros(len(grid.codes), bool)
    gone = 0
    for r in rows:
        at = cell.get((tuple(r[:n]), int(r[n])))
        if at is None:
            gone += int(r[n + 1])
        else:
            hidden[at] = bool(r[n + 1])
    return Pattern(str(previous), hidden, gone)
