"""What the noise costs (pure numpy): how many cells changed, by how much, and how far the
perturbed table is from the true one (Hellinger distance, as cellKey's ck_cnt_measures)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

#: Cell size classes for the relative deviation: [lower, upper) true counts.
SIZES = ((1, 5), (5, 10), (10, 100), (100, None))


@dataclass
class Utility:
    cells: int = 0  # non-empty cells of the source
    changed_share: float = 0.0  # share of them whose published count differs
    mean_abs_deviation: float = 0.0
    max_abs_deviation: int = 0
    relative_by_size: dict[str, float] = field(default_factory=dict)  # mean |noise| / n by size class
    hellinger: float = 0.0  # largest over grouping sets, between the true and perturbed distributions
    total_mean_relative_deviation: float | None = None  # a magnitude table: mean |published - true| / |true|

    def as_dict(self) -> dict:
        return asdict(self)


def utility(gid: np.ndarray, n: np.ndarray, published: np.ndarray, total: np.ndarray | None = None,
            value: np.ndarray | None = None) -> Utility:
    """The measures over the cells of the source (n >= 1), each published count beside its true one
    (and a magnitude table's published total beside its true `total`).

    >>> u = utility(np.array([0, 0, 1]), np.array([4, 6, 10]), np.array([5, 6, 10]))
    >>> u.changed_share, u.max_abs_deviation, u.relative_by_size
    (0.3333333333333333, 1, {'1-4': 0.25, '5-9': 0.0, '10-99': 0.0})
    """
    real = n > 0
    out = Utility()
    if total is not None and value is not None and real.any():
        nonzero = real & (total != 0)
        out.total_mean_relative_deviation = float((np.abs(value - total)[nonzero] / np.abs(total[nonzero])).mean()) \
            if nonzero.any() else 0.0
    gid, n, published = gid[real], n[real].astype(float), published[real].astype(float)
    dev = np.abs(published - n)
    out.cells = int(len(n))
    if not len(n):
        return out
    out.changed_share = float((dev > 0).mean())
    out.mean_abs_deviation = float(dev.mean())
    out.max_abs_deviation = int(dev.max())
    for lo, hi in SIZES:
        at = (n >= lo) & (n < hi if hi else True)
        if at.any():
            out.relative_by_size[f"{lo}-{hi - 1}" if hi else f"{lo}+"] = float((dev[at] / n[at]).mean())
    out.hellinger = max(_hellinger(n[gid == g], published[gid == g]) for g in np.unique(gid))
    return out


def _hellinger(a: np.ndarray, b: np.ndarray) -> float:
    """H(P, Q) = sqrt(1/2 sum (sqrt p - sqrt q)^2) of the two tables as distributions."""
    if a.sum() <= 0 or b.sum() <= 0:
        return 1.0 if a.sum() != b.sum() else 0.0
    return float(np.sqrt(0.5 * ((np.sqrt(a / a.sum()) - np.sqrt(b / b.sum())) ** 2).sum()))
