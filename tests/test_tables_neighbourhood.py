"""The neighbourhood check of the job's attack (anonsql/tables/neighbourhood.py): the attacker's
program near a cell, the rest fixed at the truth, bounds an interval INSIDE the whole table's,
so a protection it grants the whole table grants too; where it does not, the whole table's
program decides. The whole table's intervals here come from scipy's MILP, not anonsql's."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from scipy.optimize import Bounds, LinearConstraint, milp

import anonsql
from anonsql.data.loading import write_frame
from anonsql.tables import Protection, protect
from anonsql.tables import neighbourhood as nb
from anonsql.tables.neighbourhood import Near
from anonsql.tables.sparse import sp

from .test_tables import RECT, _frequency_rows, cube_grid
from .test_tables_scale import random_table


def attacker_program(grid, hidden):
    """The attacker's rows over a cube: unknowns the hidden inner cells, one equation per published
    total (its value less its published inner cells), each hidden total >= 1 (the policy's floor)."""
    members = grid.members().tocsr()
    finest = grid.finest_cell()
    unknown = hidden[finest]
    cols = np.flatnonzero(unknown)
    known = np.where(unknown, 0.0, grid.value[finest])
    totals = np.flatnonzero(grid.summed > 0)
    a = members[totals][:, cols]
    keep = np.diff(a.tocsr().indptr) > 0
    totals, a = totals[keep], a.tocsr()[keep]
    rhs = grid.value[totals] - members[totals] @ known
    at_least = hidden[totals]
    rhs = np.where(at_least, 1.0 - (members[totals] @ known), rhs)
    return a, rhs, at_least, cols, grid.value[finest[cols]]


def whole_table(a, rhs, at_least, target):
    """min and max of unknown `target` over whole numbers >= 1, scipy's MILP on the whole program."""
    upper = np.where(at_least, np.inf, rhs)
    ends = []
    for sign in (1, -1):
        c = np.zeros(a.shape[1])
        c[target] = sign
        res = milp(c, constraints=LinearConstraint(a, rhs, upper), bounds=Bounds(1, np.inf),
                   integrality=np.ones(a.shape[1]))
        ends.append(sign * res.fun if res.status == 0 else np.inf)
    return ends[0], ends[1]


@pytest.mark.parametrize("shape", [(6, 7), (5, 4, 4), (3, 3, 3, 3)])
@pytest.mark.parametrize("seed", range(3))
def test_the_neighbourhood_interval_lies_inside_the_whole_tables(shape, seed):
    grid, reasons = random_table(shape, seed)
    protection = Protection(small=3, integer=True, floor=1.0)
    rng = np.random.default_rng(seed)
    for pattern in ("protected", "random"):
        if pattern == "protected":
            status = protect(grid, reasons, protection, cube=True).status
            hidden = (status == "u") | (status == "x")
        else:  # a third of the inner cells hidden at random: patterns that sometimes fail
            inner = np.flatnonzero(grid.summed == 0)
            hidden = np.zeros(len(grid.codes), bool)
            hidden[rng.choice(inner, size=len(inner) // 3, replace=False)] = True
        a, rhs, at_least, cols, true = attacker_program(grid, hidden)
        near = Near(a, rhs, at_least, np.ones(len(cols)), true, integer=True)
        held = 0
        for k in range(min(len(cols), 12)):
            inner_lo, inner_hi = near.bounds(np.array([k]), nb.HOPS, nb.MOST)
            lo, hi = whole_table(a, rhs, at_least, k)
            assert lo - 1e-6 <= inner_lo <= true[k] + 1e-6 and true[k] - 1e-6 <= inner_hi <= hi + 1e-6
            if protection.holds(true[k], inner_lo, inner_hi):
                held += 1
                assert protection.holds(true[k], lo, hi)
        assert pattern == "random" or held  # the protected pattern holds near most primaries


def test_a_neighbourhood_too_small_fails_and_the_whole_table_decides(monkeypatch):
    """RECT's primary (0, 0) is protected by the rectangle (0,0), (0,1), (1,0), (1,1): one round of
    widening through the row and column totals (not the grand total: LINE 2) reaches (0,1) and
    (1,0) but not (1,1), fixed at its truth, which pins the primary there; the whole table's program
    leaves it [1, 8]."""
    grid = cube_grid(RECT)
    hidden = np.zeros(len(grid.codes), bool)
    hidden[[int(grid.index(np.array([c]))[0]) for c in ([0, 0], [0, 1], [1, 0], [1, 1])]] = True
    a, rhs, at_least, cols, true = attacker_program(grid, hidden)
    target = int(np.flatnonzero(true == 2)[0])
    lo, hi = whole_table(a, rhs, at_least, target)
    assert (lo, hi) == (1, 8)  # down to the floor 1; up 6, as far as (1, 0) = 7 can sink to 1
    protection = Protection(small=3, integer=True, floor=1.0)
    assert protection.holds(2, lo, hi)
    monkeypatch.setattr(nb, "LINE", 2)
    near = Near(sp.csr_matrix(a), rhs, at_least, np.ones(len(cols)), true, integer=True)
    pinned = near.bounds(np.array([target]), 1, nb.MOST)
    assert pinned == (2, 2) and not protection.holds(2, *pinned)
    assert near.bounds(np.array([target]), 2, nb.MOST) == (lo, hi)
    monkeypatch.setattr(nb, "HOPS", 1)  # pinned in one round, the wider try goes two: it holds there
    assert near.check(np.array([target]), lambda a, b: protection.holds(2, a, b)) == (lo, hi)


def _near_count(report) -> int:
    check = next(c for c in report.checks if c.name.startswith("the attacker's LP"))
    return int(check.detail.split("(")[1].split()[0])


def test_the_job_checks_near_first_and_falls_back_to_the_whole_table(db, engine, monkeypatch):
    write_frame(engine, _frequency_rows(RECT), "firms")
    assert not nb.worth(4)  # so small a table is solved whole ...
    monkeypatch.setattr(nb, "SMALL", 0)  # ... unless told otherwise
    r = anonsql.safe_table(db, "firms", "region,sector", min_count=3, out="pub")
    assert r.ok and r.statuses["u"] == 1 and _near_count(r) == 1
    monkeypatch.setattr(nb, "LINE", 2)
    monkeypatch.setattr(nb, "HOPS", 0)  # both tries (0, 1 round) pin the primary: the whole table decides, passes
    again = anonsql.safe_table(db, "firms", "region,sector", min_count=3, out="pub", replace=True)
    assert again.ok and _near_count(again) == 0
    assert again.smallest_width == r.smallest_width


@pytest.mark.parametrize("seed", range(3))
def test_a_check_that_falls_short_over_the_reals_skips_the_whole_numbers(seed):
    """Near.bounds with `enough` returns an LP interval that falls short as it is (no MILP): it holds
    the whole numbers' interval, so the verdict is the one the MILP would give."""
    grid, _ = random_table((5, 4, 4), seed)
    protection = Protection(small=3, integer=True, floor=1.0)
    inner = np.flatnonzero(grid.summed == 0)
    hidden = np.zeros(len(grid.codes), bool)
    hidden[np.random.default_rng(seed).choice(inner, size=len(inner) // 3, replace=False)] = True
    a, rhs, at_least, cols, true = attacker_program(grid, hidden)
    near = Near(a, rhs, at_least, np.ones(len(cols)), true, integer=True)
    short = 0
    for k in range(min(len(cols), 15)):
        whole = near.bounds(np.array([k]), nb.HOPS, nb.MOST)
        asked = near.bounds(np.array([k]), nb.HOPS, nb.MOST, partial(protection.holds, true[k]))
        assert asked[0] <= whole[0] + 1e-9 and whole[1] <= asked[1] + 1e-9
        assert protection.holds(true[k], *asked) == protection.holds(true[k], *whole)
        short += not protection.holds(true[k], *asked)
    assert short  # a third hidden at random: some cells fall short, the path is taken
