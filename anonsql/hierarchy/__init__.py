"""Generalization hierarchies of quasi-identifiers (issue 33), a room of their own below the
methods: kanon's global recoding searches their lattice, `anonsql hierarchy show` describes them.

`model` (parsing `COLUMN=interval:5,10`, ..., the levels' meaning and a Python oracle of the
labels: pure), `expressions` (each level's label as SQL, the checks of a column against its
hierarchy), `show` (`anonsql hierarchy show`).
"""

from typing import TYPE_CHECKING

from ..lazy import exports

if TYPE_CHECKING:  # the names below load on first use (anonsql.lazy)
    from .expressions import level_expr, resolve
    from .model import Hierarchy, parse, parse_all, parse_spec
    from .show import HierarchyReport, show_hierarchies

__all__ = ["Hierarchy", "HierarchyReport", "level_expr", "parse", "parse_all", "parse_spec", "resolve",
           "show_hierarchies"]
__getattr__ = exports(__name__, (".model", ".expressions", ".show"), __all__)
