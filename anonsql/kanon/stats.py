"""The statistics of a kanon run, counted by SQL: N(y, c), N(x_j, c) and N(c) (Section 2.1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import stats
from ..catalog import Table
from ..engine import Engine


@dataclass
class Statistics:
    """Everything the loop and the checks need from the source table, in three queries."""

    groups: stats.QIClassCounts  # N(y, c) over the tuple set S, with each group's key
    attrs: stats.AttrClassCounts  # N(x_j, c) and N(⊥_j, c)
    classes: stats.ClassCounts  # N(c)


def gather(engine: Engine, table: Table, qi: Sequence[str], class_column: str) -> Statistics:
    """Count N(y, c), N(x_j, c) and N(c) of `table` in SQL."""
    return Statistics(
        groups=stats.qi_class_counts(engine, table, qi, class_column),
        attrs=stats.attr_class_counts(engine, table, qi, class_column),
        classes=stats.class_counts(engine, table, class_column),
    )


def aligned_counts(src: stats.AttrClassCounts, other: stats.AttrClassCounts) -> list[np.ndarray]:
    """`other`'s N(x_j, c) tables laid out on `src`'s value dictionaries and class order.

    >>> a = stats.AttrClassCounts(["q"], [np.array(["x", "y"])], [np.array([[2, 1], [1, 0]])],
    ...                           np.zeros((1, 2), np.int64), np.array(["a", "b"]))
    >>> b = stats.AttrClassCounts(["q"], [np.array(["y"])], [np.array([[1]])],
    ...                           np.zeros((1, 1), np.int64), np.array(["a"]))
    >>> aligned_counts(a, b)[0].tolist()  # x vanished, class b has no row left with a value
    [[0, 0], [1, 0]]
    """
    out = []
    classes = [list(other.class_values).index(c) if c in other.class_values else None for c in src.class_values]
    for j in range(len(src.attrs)):
        pos = {v: i for i, v in enumerate(other.values[j])}
        table = np.zeros_like(src.counts[j])
        for i, v in enumerate(src.values[j]):
            if v in pos:
                table[i] = [other.counts[j][pos[v], c] if c is not None else 0 for c in classes]
        out.append(table)
    return out


#: A QI with more distinct values than this is almost unique per row: suppression must blank
#: nearly all of it, so anonsql suggests binning it first.
MANY_VALUES = 1000


def cardinality_warnings(groups: stats.QIClassCounts) -> list[str]:
    """A note for each near-unique quasi-identifier, suggesting how to bin it."""
    return [
        f"quasi-identifier '{name}' has {size:,} distinct values: cell suppression will blank most of it; "
        f"bin it first: anonsql bin --bin {name}=width:W (or {name}=quantiles:Q)"
        for name, size in zip(groups.qi, groups.domain_sizes) if size > MANY_VALUES
    ]
