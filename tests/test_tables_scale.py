"""Safe tables at scale (issue 30): the hypercube certificates that stand in for the solver must
never claim more than the attacker's LP and integer program concede, and the faster repair
loop must leave no primary exposed and give the same pattern on every run."""

from __future__ import annotations

import io
import sys
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import anonsql
from anonsql.cli import main
from anonsql.data.loading import write_frame
from anonsql.tables import Protection, layout, protect
from anonsql.tables.attack import Attacker
from anonsql.tables.hypercube import hidden_box

from .conftest import table_rows
from .test_tables import cube_grid

SHAPES = [(5, 6), (4, 4, 3), (3, 3, 3, 2)]


def random_table(shape, seed, small=0.15):
    """Counts 3 + Poisson(3), a share `small` of the inner cells at 1 or 2 (the primaries under min count 3)."""
    rng = np.random.default_rng(seed)
    counts = 3 + rng.poisson(3, size=shape).astype(float)
    low = rng.random(shape) < small
    counts[low] = rng.integers(1, 3, size=int(low.sum()))
    grid = cube_grid(counts)
    reasons = ["frequency" if 0 < v < 3 and s == 0 else None for v, s in zip(grid.value, grid.summed)]
    return grid, reasons


def both_ends(b):
    """The bounds with both ends marked fractional, so that Attacker.whole solves both as MILPs."""
    return replace(b, fractional=(True, True))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", range(4))
def test_a_hidden_hypercube_concedes_no_more_than_the_lp_and_the_integer_program(shape, seed):
    grid, _ = random_table(shape, seed)
    rng = np.random.default_rng(100 + seed)
    inner = np.flatnonzero(grid.summed == 0)
    hidden = np.zeros(len(grid.codes), bool)
    hidden[rng.choice(inner, size=9 * len(inner) // 10, replace=False)] = True
    checked = 0
    for cell in np.flatnonzero(hidden):
        if checked == 8:
            break
        box = hidden_box(grid, int(cell), hidden, [(0.0, 0.0)], 1.0)
        if box is None:
            continue
        down, up = box
        v = grid.value[cell]
        attacker = Attacker(grid.members(), grid.finest_cell(), grid.value, hidden, 1.0)
        lp = attacker.bounds(int(cell))
        whole = attacker.whole(int(cell), both_ends(lp))
        assert lp.lower <= v - down + 1e-6 and lp.upper >= v + up - 1e-6
        assert whole.lower <= v - down + 1e-6 and whole.upper >= v + up - 1e-6
        checked += 1
    assert checked  # nine cells in ten hidden: some boxes are hidden whole


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", range(3))
def test_no_primary_is_exposed_over_the_reals_or_the_whole_numbers(shape, seed):
    grid, reasons = random_table(shape, seed)
    protection = Protection(small=3, integer=True, floor=1.0)
    out = protect(grid, reasons, protection, cube=True)
    hidden = (out.status == "u") | (out.status == "x")
    for p in np.flatnonzero(out.status == "u"):
        attacker = Attacker(grid.members(), grid.finest_cell(), grid.value, hidden, protection.floor)
        lp = attacker.bounds(int(p))
        whole = attacker.whole(int(p), both_ends(lp))
        assert protection.holds(grid.value[p], lp.lower, lp.upper)
        assert protection.holds(grid.value[p], whole.lower, whole.upper)
        # what the private audit reports is an interval the attacker cannot narrow
        assert whole.lower <= out.lower[p] + 1e-6 and out.upper[p] <= whole.upper + 1e-6
        assert lp.lower <= out.lp_lower[p] + 1e-6 and out.lp_upper[p] <= lp.upper + 1e-6


@pytest.mark.parametrize("shape", SHAPES)
def test_the_pattern_is_byte_identical_across_reruns(shape):
    patterns = []
    for _ in range(2):
        grid, reasons = random_table(shape, 7)
        out = protect(grid, reasons, Protection(small=3, integer=True, floor=1.0), cube=True)
        patterns.append((out.status.tobytes(), "\n".join(out.reason).encode()))
    assert patterns[0] == patterns[1]


def test_the_job_gives_the_same_private_audit_on_every_run(db, engine):
    rng = np.random.default_rng(3)
    counts = 3 + rng.poisson(3, size=(4, 4, 3))
    counts[rng.random(counts.shape) < 0.15] = 1
    rows = [(f"a{i}", f"b{j}", f"c{k}") for (i, j, k), n in np.ndenumerate(counts) for _ in range(int(n))]
    write_frame(engine, pd.DataFrame(rows, columns=["a", "b", "c"]), "people")
    audits = []
    for _ in range(2):
        r = anonsql.safe_table(db, "people", "a,b,c", out="pub", replace=True)
        assert r.ok and r.statuses["u"] > 0
        audits.append(sorted(map(repr, table_rows(engine, "pub_private_audit"))))
    assert audits[0] == audits[1]


class _Terminal(io.StringIO):
    """A stderr that says it is a terminal (the CLI then draws its loops as bars)."""

    def isatty(self) -> bool:
        return True


def test_the_summary_counts_certificates_and_the_loops_draw_bars(db, engine, capsys, monkeypatch):
    grid, _ = random_table((5, 4, 3), 1)
    rows = [(f"a{a}", f"b{b}", f"c{c}") for i, codes in enumerate(grid.codes) if (codes >= 0).all()
            for a, b, c in [codes] for _ in range(int(grid.value[i]))]
    write_frame(engine, pd.DataFrame(rows, columns=["a", "b", "c"]), "cube")
    r = anonsql.safe_table(db, "cube", "a,b,c", min_count=3, out="pub")
    assert r.ok and r.statuses["u"] > 0
    line = next(x for x in r.lines() if "without a solver" in x)
    assert f"without a solver: {r.certified:,};" in line and line.endswith(f"could have told: {r.integer_unproven:,}")
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["tables", "--db", db, "--table", "cube", "--dims", "a,b,c", "--min-count", "3", "--out", "pub",
                 "--replace"]) == 0
    bars = terminal.getvalue()
    n = r.statuses["u"]
    for loop in ("tables: primaries repaired", "tables: primaries attacked"):
        assert loop in bars and f"{n}/{n}" in bars
    assert "without a solver" in capsys.readouterr().out


def tree_table(seed, small=0.15):
    """A 3-level geography (root > 2 regions > 2 provinces each > 3 municipalities each: 12 leaves,
    unbalanced by a 4th municipality in one province) x a plain dimension of 4 values, all margins:
    counts 3 + Poisson(3), a share `small` of the inner cells at 1 or 2."""
    provinces = [np.arange(0, 3), np.arange(3, 6), np.arange(6, 9), np.arange(9, 13)]
    groups = [*provinces, np.arange(0, 6), np.arange(6, 13)]
    grid = layout([13, 4], [(0, 1), (0,)], [groups, None])
    rng = np.random.default_rng(seed)
    counts = 3 + rng.poisson(3, size=13 * 4).astype(float)
    low = rng.random(len(counts)) < small
    counts[low] = rng.integers(1, 3, size=int(low.sum()))
    grid.value[:] = grid.members() @ counts
    grid.freq[:] = grid.value
    reasons = ["frequency" if 0 < v < 3 and s == 0 else None for v, s in zip(grid.value, grid.summed)]
    return grid, reasons


@pytest.mark.parametrize("seed", range(4))
def test_a_hidden_hypercube_along_a_taxonomy_concedes_no_more_than_the_lp_and_the_integer_program(seed):
    grid, _ = tree_table(seed)
    rng = np.random.default_rng(200 + seed)
    inner = np.flatnonzero(grid.summed == 0)
    hidden = np.zeros(len(grid.codes), bool)
    hidden[rng.choice(inner, size=9 * len(inner) // 10, replace=False)] = True
    checked = 0
    for cell in np.flatnonzero(hidden)[:12]:
        box = hidden_box(grid, int(cell), hidden, [(0.0, 0.0)], 1.0)
        if box is None:
            continue
        v = grid.value[cell]
        attacker = Attacker(grid.members(), grid.finest_cell(), grid.value, hidden, 1.0)
        lp = attacker.bounds(int(cell))
        whole = attacker.whole(int(cell), both_ends(lp))
        for b in (lp, whole):
            assert b.lower <= v - box[0] + 1e-6 and b.upper >= v + box[1] - 1e-6
        checked += 1
    assert checked


@pytest.mark.parametrize("seed", range(4))
def test_a_taxonomy_table_protected_by_hypercubes_exposes_no_primary(seed):
    grid, reasons = tree_table(seed)
    protection = Protection(small=3, integer=True, floor=1.0)
    out = protect(grid, reasons, protection, cube=True)
    assert out.certified > 0
    hidden = (out.status == "u") | (out.status == "x")
    attacker = Attacker(grid.members(), grid.finest_cell(), grid.value, hidden, protection.floor)
    for p in np.flatnonzero(out.status == "u"):
        lp = attacker.bounds(int(p))
        whole = attacker.whole(int(p), both_ends(lp))
        assert protection.holds(grid.value[p], whole.lower, whole.upper)
    again = protect(grid, reasons, protection, cube=True)
    assert again.status.tobytes() == out.status.tobytes()  # the same pattern on every run
