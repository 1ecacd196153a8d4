"""The linkage attack's figures from its small result (pure: no SQL here).

sql/attack/linkage.sql counts, per number of candidates m (the published rows an attacker's
quasi-identifiers match, a published ⊥ matching anything), the attackers, their classes, and those
whose one candidate is their own row. An attacker who picks uniformly among m candidates, own row
among them, is right with chance 1/m; a unique match (m = 1) is a certain re-identification.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Candidates:
    """The attackers who see `m` candidate rows."""

    m: int
    attackers: int
    classes: int  # attackers with the same QI values form one class
    correct: int | None  # m = 1: attackers whose candidate is their own row (None: no key mapping)


@dataclass
class Linkage:
    """Expected and realized success of the linkage attack over every attacker."""

    attackers: int
    unique_matches: int  # attackers with exactly one candidate
    expected_correct: float  # Σ over attackers of 1/m (m > 0): a uniform pick among the candidates
    realized_correct: int | None  # unique matches that are the attacker's own row (needs the key)
    unmatched: int  # attackers matching no published row (m = 0)
    by_candidates: list[Candidates] = field(default_factory=list)

    @property
    def expected_share(self) -> float:
        """Expected share of correct unique matches: every unique match is right when each person's
        own row is published (a suppression only widens the matches)."""
        return self.unique_matches / self.attackers if self.attackers else 0.0

    @property
    def realized_share(self) -> float | None:
        """Share of attackers whose unique match is their own row (None without the key mapping)."""
        if self.realized_correct is None:
            return None
        return self.realized_correct / self.attackers if self.attackers else 0.0

    @property
    def success(self) -> float:
        """What the gate compares: the realized share when the key mapping is known, else the expected."""
        realized = self.realized_share
        return self.expected_share if realized is None else realized


def summarize(rows: Iterable[tuple[int, int, int, int]], with_key: bool) -> Linkage:
    """The figures from the (m, attackers, classes, correct) rows of sql/attack/linkage.sql.

    >>> r = summarize([(1, 2, 2, 1), (3, 3, 1, 0)], with_key=True)
    >>> (r.attackers, r.unique_matches, r.expected_correct, r.realized_correct, r.expected_share)
    (5, 2, 3.0, 1, 0.4)
    """
    by = [Candidates(int(m), int(a), int(c), int(x) if with_key and int(m) == 1 else None) for m, a, c, x in rows]
    attackers = sum(b.attackers for b in by)
    unique = sum(b.attackers for b in by if b.m == 1)
    expected = sum(b.attackers / b.m for b in by if b.m > 0)
    realized = sum(b.correct or 0 for b in by if b.m == 1) if with_key else None
    unmatched = sum(b.attackers for b in by if b.m == 0)
    return Linkage(attackers, unique, expected, realized, unmatched, by)
