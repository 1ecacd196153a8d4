"""Safe aggregate tables: primary and secondary cell suppression (Cox 1980; the (n,k)-dominance and
p% rules as in Hundepool et al., Statistical Disclosure Control, 2012, ch. 4), audited by the
attacker's LP.

`suppress.protect` finds the pattern on a grid of cells (arrays, no SQL); `job.run` is the
whole database job behind `anonsql.safe_table`, `job.audit` the attack behind `anonsql.audit_table`.
"""

from ..lazy import exports

#: How margins are formed: every subset of a table's dimensions (CUBE), every prefix (ROLLUP),
#: or none (inner cells only).
MARGINS = ("cube", "rollup", "none")

__all__ = ["MARGINS", "AuditReport", "Grid", "Outcome", "Protection", "Rules", "Spec", "TablesReport", "layout",
           "parse_assignment", "parse_cells", "parse_tables", "protect"]

# the rest loads on first use (scipy with it: `sparse`), so the CLI's choices cost nothing
__getattr__ = exports(__name__, [".cells", ".job", ".protection", ".rules", ".spec", ".suppress"], __all__[1:])
