"""Independent SQL checks of each guarantee, run on the published table itself."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from . import sql
from .catalog import Table
from .engine import Engine


@dataclass
class KAnonymityCheck:
    """Is every QI combination (NULL = ⊥ counting as its own value) shared by >= k rows?"""

    table: str
    qi: list[str]
    k: int
    ok: bool
    violating_groups: int
    violating_rows: int
    shown_groups: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def k_anonymity(engine: Engine, table: Table, qi: Sequence[str], k: int, *, show: int = 20) -> KAnonymityCheck:
    """Count the equivalence classes smaller than k and list the `show` smallest of them."""
    binds = dict(tbl=table.expr, qi=sql.columns(qi), k=k)
    text, params = sql.render("violations_summary", engine.dialect, **binds)
    groups, rows = engine.fetch_all(text, params)[0]
    shown: list[dict[str, Any]] = []
    if groups and show > 0:
        text, params = sql.render("violating_groups", engine.dialect, max_groups=show, **binds)
        shown = [dict(zip([*qi, "size"], r)) for r in engine.fetch_all(text, params)]
    return KAnonymityCheck(str(table), list(qi), k, groups == 0, int(groups), int(rows), shown)
