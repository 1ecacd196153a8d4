"""Hiding confidential cells from classification-based inference (Hintoglu 2011).

Pure algorithms: `naive_bayes` and `id3` (the thesis's two adversaries), `deletion` (the
single-cell algorithms of Chapter 3), `enhanced` (e-DECP, e-DROPP), `partial_counts` and
`generalization` (Chapter 4's -g methods, along anonsql.taxonomy's trees), `suppress` (the
driver that runs a method on many cells), `metrics` (Section 2.4), `keep_k` (k-anonymity kept through
the hidden cells, by kanon's cost). Then `request` (the validated input),
`stats`, `rewrite`, `verify` and `job` (the one transaction).
"""

from typing import TYPE_CHECKING

from ..lazy import exports

if TYPE_CHECKING:  # the names below load on first use (anonsql.lazy)
    from .job import ProtectedCell, ProtectReport, protect_table
    from .request import ProtectionInput, read_cells_csv
    from .suppress import METHODS

__all__ = ["METHODS", "ProtectReport", "ProtectedCell", "ProtectionInput", "protect_table", "read_cells_csv"]
__getattr__ = exports(__name__, ('.job', '.request', '.suppress'), __all__)
