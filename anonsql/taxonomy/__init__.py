"""Taxonomies (value generalization hierarchies), a room of their own: protect's -g methods
generalize along them and tables' --hierarchy sums along them; neither method owns them.

`model` (the validated tree, pure: no SQL), `stats` (the store read by SQL) and `store`
(`taxonomy load` and `show`: validated, written and read back in one transaction).
"""

from typing import TYPE_CHECKING

from ..lazy import exports

if TYPE_CHECKING:  # the names below load on first use (anonsql.lazy)
    from .model import Taxonomy
    from .stats import STORE, read_taxonomies, read_taxonomy
    from .store import TaxonomyReport, TaxonomyTree, load_taxonomy, show_taxonomy

__all__ = ["STORE", "Taxonomy", "TaxonomyReport", "TaxonomyTree", "load_taxonomy", "read_taxonomies", "read_taxonomy",
           "show_taxonomy"]
__getattr__ = exports(__name__, (".model", ".stats", ".store"), __all__)
