"""Safe aggregate tables: primary and secondary cell suppression (Cox 1980; the (n,k)-dominance and
p% rules as in Hundepool et al., Statistical Disclosure Control, 2012, ch. 4), audited by the
attacker's LP.

`suppress.protect` finds the pattern on a grid of cells (arrays, no SQL); `job.run` is the
whole database job behind `anonsql.safe_table`, `job.audit` the attack behind `anonsql.audit_table`.
"""

try:  # the `tables` extra; without it every entry point says so in one line
    import scipy.sparse  # noqa: F401
except ImportError:  # pragma: no cover - exercised only without the extra
    from ..errors import AnonsqlError

    raise AnonsqlError("safe aggregate tables need scipy and highspy: pip install 'anonsql[tables]'") from None

from .cells import Grid, layout  # noqa: E402
from .job import AuditReport, TablesReport  # noqa: E402
from .rules import Rules  # noqa: E402
from .spec import MARGINS, Spec, parse_assignment, parse_cells, parse_tables  # noqa: E402
from .suppress import Outcome, Protection, protect  # noqa: E402

__all__ = ["MARGINS", "AuditReport", "Grid", "Outcome", "Protection", "Rules", "Spec", "TablesReport", "layout",
           "parse_assignment", "parse_cells", "parse_tables", "protect"]
