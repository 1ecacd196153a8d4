"""What a run publishes: the dimensions, the linked tables over them, the margins, the measure,
the primary rules and the protection (plain data, parsed from the user's words here).

>>> parse_tables("education*race, occupation*race")
[['education', 'race'], ['occupation', 'race']]
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import AnonsqlError
from .cells import grouping_sets
from .rules import Rules
from .suppress import Protection

#: How margins are formed: every subset of a table's dimensions (CUBE), every prefix (ROLLUP),
#: or none (inner cells only).
MARGINS = ("cube", "rollup", "none")


@dataclass(frozen=True)
class Spec:
    dims: list[str]  # every dimension of every linked table, in order
    tables: list[list[int]]  # each table's dimensions, as positions in `dims`
    margins: str = "cube"
    measure: str | None = None  # None: a frequency table (counts)
    contributor: str | None = None
    rules: Rules = field(default_factory=Rules)
    protection: Protection = field(default_factory=Protection)

    @property
    def sets(self) -> list[tuple[int, ...]]:
        """The grouping sets: for each table, its inner cells and its margins."""
        return grouping_sets(len(self.dims), self.tables, self.margins)

    @property
    def names(self) -> list[str]:
        """Each table as the user wrote it, e.g. 'education*race'."""
        return ["*".join(self.dims[j] for j in t) for t in self.tables]


def parse_tables(text: str) -> list[list[str]]:
    """'a*b,c*b' -> [['a', 'b'], ['c', 'b']]: linked tables, each its dimensions joined by '*'."""
    tables = [[d.strip() for d in part.split("*")] for part in text.split(",") if part.strip()]
    if not tables or any(not d for t in tables for d in t):
        raise AnonsqlError(f"not a list of tables: {text!r} (write e.g. 'education*race,occupation*race')")
    return tables
