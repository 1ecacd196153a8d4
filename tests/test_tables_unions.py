"""Approximate disclosure of dominance primaries: the union of a primary's suppressed companions
(the hidden cells of one additive relation, whose sum the published total gives away) must not
be dominated itself; the repair suppresses more, the verification re-derives the unions from the
published table and re-checks them."""

from __future__ import annotations

import pandas as pd
import pytest

import anonsql
from anonsql.data.loading import write_frame
from anonsql.errors import VerificationError
from anonsql.tables import job as tables_job

from .conftest import table_rows

# One dimension with its total. Enterprise F holds 900 of a's 910 (1-dominance at 80%: a is the one
# primary) and 300 of b's 500 (60%: b is safe). c and d are spread over ten firms each. The cheapest
# secondary that gives a its protection level (100/80 * 900 - 910 = 215 above 910) is b alone, but
# a + b = Total - c - d is then published, and F holds 1200 of its 1410 (85% > 80%): a dominated
# union. Growing it by 100/80 * 1200 - 1410 = 90 fixes it: c (600) is the cheapest child that does.
FIRMS = ([("a", "F", 900), ("a", "g0", 10), ("b", "F", 300)] + [("b", f"g{i}", 20) for i in range(10)]
         + [("c", f"h{i}", 60) for i in range(10)] + [("d", f"k{i}", 70) for i in range(10)])


def _largest_share(frame: pd.DataFrame, cells: set[str]) -> float:
    """The largest enterprise's share of the union of `cells`, pooled from the source rows."""
    part = frame[frame.region.isin(cells)]
    return float(part.groupby("firm").turnover.sum().max() / part.turnover.sum())


def _hidden(engine, name: str) -> dict[str, tuple[str, str]]:
    return {r[0]: (r[5], r[7]) for r in table_rows(engine, f"{name}_private_audit") if r[5] in "ux"}


def test_a_union_dominated_by_one_enterprise_gets_another_cell(db, engine):
    frame = pd.DataFrame(FIRMS, columns=["region", "firm", "turnover"])
    write_frame(engine, frame, "firms")
    r = anonsql.safe_table(db, "firms", "region", measure="turnover", contributor="firm", min_count=1,
                           dominance="1,80", out="pub")
    assert r.ok and r.statuses["u"] == 1 and r.union_secondaries == 1
    assert "no union of a dominance primary's suppressed companions is dominated (approximate disclosure)" in \
        {c.name for c in r.checks}
    hidden = _hidden(engine, "pub")
    assert hidden["a"][0] == "u" and hidden["b"][0] == "x" and "dominated union" not in hidden["b"][1]
    assert hidden["c"][0] == "x" and hidden["c"][1].startswith("secondary (dominated union)")
    before = set(hidden) - {"c"}
    assert before == {"a", "b"} and _largest_share(frame, before) > 0.80  # what the pattern was without the repair
    assert _largest_share(frame, set(hidden)) <= 0.80
    assert r.union_secondaries == sum("dominated union" in detail for _s, detail in hidden.values())


def test_the_verification_finds_a_dominated_union_on_its_own(db, engine, monkeypatch):
    write_frame(engine, pd.DataFrame(FIRMS, columns=["region", "firm", "turnover"]), "firms")
    monkeypatch.setattr(tables_job, "Unions", lambda *args: (lambda status, barred: []))  # no repair
    with pytest.raises(VerificationError, match="1 of 1 unions dominated"):
        anonsql.safe_table(db, "firms", "region", measure="turnover", contributor="firm", min_count=1,
                           dominance="1,80", out="pub")


def test_p_percent_unions_in_a_two_way_table(db, engine):
    # Entertainment: Iceland (B 16.8) and Portugal (B 7.1, D 2.3) are p% primaries whose union,
    # Total minus Spain, is B's 23.9 of 26.2 (26.2 - 23.9 - 2.3 = 0 < 10% of 23.9): dominated.
    rows = [("Iceland", "ent", "B", 16.8), ("Portugal", "ent", "B", 7.1), ("Portugal", "ent", "D", 2.3),
            ("Spain", "ent", "A", 77.4), ("Spain", "ent", "B", 11.5), ("Spain", "ent", "C", 16.4),
            ("Iceland", "ind", "B", 9.6), ("Iceland", "ind", "C", 8.8), ("Iceland", "ind", "E", 8.1),
            ("Portugal", "ind", "B", 25.7), ("Portugal", "ind", "D", 23.4), ("Portugal", "ind", "E", 20.1),
            ("Spain", "ind", "C", 8.4), ("Spain", "ind", "F", 7.9), ("Spain", "ind", "G", 6.6)]
    frame = pd.DataFrame(rows, columns=["region", "sector", "firm", "turnover"])
    write_frame(engine, frame, "firms")
    r = anonsql.safe_table(db, "firms", "region,sector", measure="turnover", contributor="firm", min_count=1,
                           p_percent=10, out="pub")
    assert r.ok and r.union_secondaries >= 1
    audit = {(a, b): (s, why) for a, b, _g, _l, _v, _n, s, why, *_ in table_rows(engine, "pub_private_audit")}
    hidden = {k for k, (s, _) in audit.items() if s in "ux"}
    assert {("Iceland", "ent"), ("Portugal", "ent")} <= hidden and audit[("Iceland", "ent")] == ("u", "p%")
    for total, members in _relations(audit).items():  # every relation with a published total, from the outside
        cells = [m for m in members if m in hidden]
        if total in hidden or len(cells) < 2 or not any(audit[m][1] == "p%" for m in cells):
            continue
        part = frame[[(a, b) in _finest(cells) for a, b in zip(frame.region, frame.sector)]]
        x = part.groupby("firm").turnover.sum().sort_values(ascending=False).tolist() + [0.0]
        assert part.turnover.sum() - x[0] - x[1] >= 0.10 * x[0] - 1e-9, (total, cells)


def _relations(audit: dict) -> dict:
    """Each total cell with its children along one dimension."""
    out: dict = {}
    for a, b in audit:
        if a != "Total":
            out.setdefault(("Total", b), []).append((a, b))
        if b != "Total":
            out.setdefault((a, "Total"), []).append((a, b))
    return out


def _finest(cells) -> set:
    """The inner cells under `cells` (a margin stands for its row or column)."""
    regions, sectors = ("Iceland", "Portugal", "Spain"), ("ent", "ind")
    return {(a, b) for ca, cb in cells for a in (regions if ca == "Total" else [ca])
            for b in (sectors if cb == "Total" else [cb])}
