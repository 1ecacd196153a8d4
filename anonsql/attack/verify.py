"""The attack room's gates: each a check of a measured figure against the limit a steward set
(`anonsql risk --max-journalist-risk`, `anonsql attack linkage --max-linkage-success`, and the
release's [gates] of the same names)."""

from __future__ import annotations

from ..report import Check, Report
from .linkage import Linkage


def journalist_gate(report: Report, journalist: float, limit: float, with_population: bool, where: str = "") -> Check:
    """max 1/F_k <= limit; without a population, the sample is the population (F_k = f_k)."""
    detail = f"max 1/F_k = {journalist:.4g}" + ("" if with_population else " (no population: F_k = f_k)")
    query = "risk/population_risk" if with_population else "data/reidentification_risk"
    return report.check(f"gate: journalist risk <= {limit:g}{where}", journalist <= limit, query, detail)


def linkage_gate(report: Report, linkage: Linkage, limit: float, where: str = "") -> Check:
    """The share of attackers who single out their own row <= limit: realized when the key mapping
    is known, else expected (every unique match counted as correct)."""
    kind = "expected" if linkage.realized_share is None else "realized"
    detail = f"{kind} share of correct unique matches {linkage.success:.4%} of {linkage.attackers:,} attackers"
    return report.check(f"gate: linkage success <= {limit:g}{where}", linkage.success <= limit, "attack/linkage",
                        detail)


def candidates_gate(report: Report, exposed: int, cells: int, limit: int, sensitive: bool, where: str = "") -> Check:
    """No suppressed cell narrowed below `limit` candidate values by the artefacts together (and,
    for a sensitive column, none to a single value): the refinement attack (`min_candidates`)."""
    name = f"gate: every suppressed cell keeps >= {limit} candidate values" + \
        (" and no sensitive value is certain" if sensitive else "") + where
    return report.check(name, exposed == 0, "attack/refine_groups",
                        f"{exposed:,} of {cells:,} suppressed cells exposed")
