"""Binarization specs: which 0/1 columns to derive from categorical and numeric ones.

A TOML file with one [[binary]] table per output column:

    [[binary]]
    name = "age_25_35"      # the new column
    column = "age"          # the source column
    lower = 25              # lower < age <= upper; either bound may be left out
    upper = 35

    [[binary]]
    name = "never_married"
    column = "marital_status"
    equals = "Never-married"          # or: in = ["Exec-managerial", "Prof-specialty"]

Intervals are half-open (lower, upper] as in Zhang et al. Sec. 5.1 ("(25,35]"). NULL source
cells become 0. Parsing is pure; anonsql.features.job.binarize writes the table in SQL.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from typing import Any

from ..errors import AnonsqlError


@dataclass(frozen=True)
class BinaryRule:
    """One derived 0/1 column: an interval (lower, upper] or a set of values of `column`."""

    name: str
    column: str
    lower: float | None = None
    upper: float | None = None
    values: tuple[Any, ...] = ()

    @property
    def is_range(self) -> bool:
        return not self.values


def parse_spec(text: str, source: str = "spec") -> list[BinaryRule]:
    """The rules of a TOML spec; any malformed entry is one AnonsqlError naming it."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AnonsqlError(f"{source}: not valid TOML: {exc}") from None
    entries = doc.get("binary")
    if not isinstance(entries, list) or not entries:
        raise AnonsqlError(f"{source}: no [[binary]] entries")
    rules, seen = [], set()
    for i, e in enumerate(entries, 1):
        where = f"{source}: [[binary]] #{i}"
        unknown = set(e) - {"name", "column", "lower", "upper", "equals", "in"}
        if unknown:
            raise AnonsqlError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        name, column = e.get("name"), e.get("column")
        if not isinstance(name, str) or not name or not isinstance(column, str) or not column:
            raise AnonsqlError(f"{where}: needs a non-empty 'name' and 'column'")
        if name.lower() in seen:
            raise AnonsqlError(f"{where}: column name '{name}' used twice")
        seen.add(name.lower())
        has_range = "lower" in e or "upper" in e
        has_values = "equals" in e or "in" in e
        if has_range == has_values or ("equals" in e and "in" in e):
            raise AnonsqlError(f"{where} ('{name}'): give either lower/upper or one of equals/in")
        if has_range:
            lower, upper = e.get("lower"), e.get("upper")
            for b in (lower, upper):
                if b is not None and (isinstance(b, bool) or not isinstance(b, (int, float))):
                    raise AnonsqlError(f"{where} ('{name}'): bounds must be numbers, got {b!r}")
            if lower is not None and upper is not None and not lower < upper:
                raise AnonsqlError(f"{where} ('{name}'): lower {lower} must be below upper {upper}")
            rules.append(BinaryRule(name, column, lower, upper))
        else:
            values = (e["equals"],) if "equals" in e else e["in"]
            if not isinstance(values, (list, tuple)) or not values:
                raise AnonsqlError(f"{where} ('{name}'): 'in' must be a non-empty list")
            if len(set(values)) != len(values):
                raise AnonsqlError(f"{where} ('{name}'): a value is listed twice")
            rules.append(BinaryRule(name, column, values=tuple(values)))
    return rules
