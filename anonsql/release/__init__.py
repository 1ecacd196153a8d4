"""Declarative releases (no paper: the project's own): a TOML spec of steps and gates, run all or
nothing, recorded as a manifest, one SQL script and an HTML report."""

from typing import TYPE_CHECKING

from ..lazy import exports

if TYPE_CHECKING:  # the names below load on first use (anonsql.lazy)
    from .entry import release_plan, release_run, release_verify
    from .plan import PlanReport
    from .report import ReleaseReport, ReleaseVerifyReport
    from .spec import KINDS, Spec, load

__all__ = ["KINDS", "PlanReport", "ReleaseReport", "ReleaseVerifyReport", "Spec", "load", "release_plan", "release_run",
           "release_verify"]
__getattr__ = exports(__name__, ('.entry', '.plan', '.report', '.spec'), __all__)
