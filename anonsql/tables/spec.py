"""What a run publishes: the dimensions, the linked tables over them, the margins, the taxonomy
totals, the measure, the primary rules, the protection and the cells forced to be published
(plain data, parsed from the user's words here).

>>> parse_tables("education*race, occupation*race")
[['education', 'race'], ['occupation', 'race']]
>>> parse_assignment("region=regions", "--hierarchy")
{'region': 'regions'}
>>> parse_cells("region=EU,sector=a; region=Total")
[{'region': 'EU', 'sector': 'a'}, {'region': 'Total'}]
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import AnonsqlError
from .cells import grouping_sets
from .protection import Protection
from .rules import Rules


@dataclass(frozen=True)
class Spec:
    dims: list[str]  # every dimension of every linked table, in order
    tables: list[list[int]]  # each table's dimensions, as positions in `dims`
    margins: str = "cube"
    measure: str | None = None  # None: a frequency table (counts)
    contributor: str | None = None
    rules: Rules = field(default_factory=Rules)
    protection: Protection = field(default_factory=Protection)
    hierarchy: dict[str, str] = field(default_factory=dict)  # dimension -> stored taxonomy (its totals)
    forced: list[dict[str, str]] = field(default_factory=list)  # cells to publish: dimension -> label
    zeros: list[dict[str, str]] = field(default_factory=list)  # structural zeros (known empty), the same way

    @property
    def sets(self) -> list[tuple[int, ...]]:
        """The grouping sets: for each table, its inner cells and its margins (a dimension with a
        taxonomy in every set: its nodes are its totals)."""
        return grouping_sets(len(self.dims), self.tables, self.margins,
                             [j for j, d in enumerate(self.dims) if d in self.hierarchy])

    @property
    def names(self) -> list[str]:
        """Each table as the user wrote it, e.g. 'education*race'."""
        return ["*".join(self.dims[j] for j in t) for t in self.tables]


def parse_assignment(text: str, option: str) -> dict[str, str]:
    """'dim=name,dim=name' -> {dim: name}."""
    pairs = [part.split("=", 1) for part in text.split(",") if part.strip()]
    if not pairs or any(len(p) != 2 or not p[0].strip() or not p[1].strip() for p in pairs):
        raise AnonsqlError(f"{option} must be DIM=NAME pairs separated by commas, got {text!r}")
    return {k.strip(): v.strip() for k, v in pairs}


def parse_cells(text: str, option: str = "--publish") -> list[dict[str, str]]:
    """'d=v,e=w; d=v' -> one {dimension: label} per cell (cells separated by ';', a dimension
    left out is its Total)."""
    return [parse_assignment(cell, option) for cell in text.split(";") if cell.strip()]


def parse_tables(text: str) -> list[list[str]]:
    """'a*b,c*b' -> [['a', 'b'], ['c', 'b']]: linked tables, each its dimensions joined by '*'."""
    tables = [[d.strip() for d in part.split("*")] for part in text.split(",") if part.strip()]
    if not tables or any(not d for t in tables for d in t):
        raise AnonsqlError(f"not a list of tables: {text!r} (write e.g. 'education*race,occupation*race')")
    return tables
