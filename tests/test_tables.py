"""Safe aggregate tables: golden cases (sdcTable's problemdata, a rectangle, a cube), the attack,
the job end to end on both engines, its failure path, and a property test."""

from __future__ import annotations

import itertools
import uuid

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anonsql
from anonsql import catalog
from anonsql.cli import main
from anonsql.data.loading import write_frame
from anonsql.engine import connect
from anonsql.errors import AnonsqlError, VerificationError
from anonsql.tables import Protection, layout, protect
from anonsql.tables import job as tables_job
from anonsql.tables.attack import Attacker

from .conftest import table_rows

# sdcTable's problemdata() (R/test_problems.R): rows w..z x columns a..d and the nine primaries.
SDC = np.array([[30, 47, 64, 89], [90, 124, 5, 31], [92, 100, 59, 85], [800, 991, 651, 685]], float)
SDC_PRIMARY = {(0, 0), (0, 1), (0, 2), (1, 0), (1, 2), (2, 1), (2, 3), (3, 1), (3, 3)}
RECT = np.array([[2, 9, 8], [7, 6, 10], [12, 11, 5]], float)  # one primary cell: (0, 0) = 2


def cube_grid(counts: np.ndarray):
    """The grid of a table with all margins, values summed from the inner counts."""
    dims = counts.ndim
    grid = layout(list(counts.shape), [s for r in range(dims, -1, -1) for s in itertools.combinations(range(dims), r)])
    for i, codes in enumerate(grid.codes):
        grid.value[i] = counts[tuple(slice(None) if c < 0 else c for c in codes)].sum()
    grid.freq[:] = grid.value
    return grid


def inner(grid, cells):
    """Reasons marking the given inner cells primary."""
    return ["primary" if (grid.codes[i] >= 0).all() and tuple(grid.codes[i]) in cells else None
            for i in range(len(grid.codes))]


def widths(grid, status):
    """The attacker's interval width of every primary under a suppression pattern."""
    attacker = Attacker(grid.members(), grid.finest_cell(), grid.value, status != "s")
    return {tuple(grid.codes[p]): (b := attacker.bounds(int(p))).upper - b.lower for p in np.flatnonzero(status == "u")}


def test_sdctable_problemdata_pins_w_b_and_the_protection_fixes_it():
    grid = cube_grid(SDC)
    reasons = inner(grid, SDC_PRIMARY)
    status = np.array(["u" if r else "s" for r in reasons])
    before = widths(grid, status)
    assert [cell for cell, w in before.items() if w < 1e-9] == [(0, 1)]  # (w,b) = 236 - 189 = 47
    attacker = Attacker(grid.members(), grid.finest_cell(), grid.value, status != "s")
    b = attacker.bounds(int(grid.index(np.array([[0, 1]]))[0]))
    assert b.lower == pytest.approx(47) and b.upper == pytest.approx(47)
    out = protect(grid, reasons, Protection(), cube=True)
    assert out.pinned_primary_only == 1
    assert min(widths(grid, out.status).values()) > 0
    assert (out.status == "x").sum() >= 1
    again = protect(cube_grid(SDC), reasons, Protection(), cube=True)
    assert (again.status == out.status).all()  # deterministic


def test_single_primary_needs_a_rectangle_of_three_secondaries():
    grid = cube_grid(RECT)
    out = protect(grid, inner(grid, {(0, 0)}), Protection(), cube=True)
    assert sorted(map(tuple, grid.codes[out.status == "x"].tolist())) == [(0, 1), (1, 0), (1, 1)]  # cost 22
    assert widths(grid, out.status)[(0, 0)] > 0


def test_three_dimensional_primary_gets_a_protecting_cube():
    counts = np.arange(1, 19, dtype=float).reshape(3, 3, 2) + 4
    counts[1, 1, 0] = 1
    grid = cube_grid(counts)
    out = protect(grid, inner(grid, {(1, 1, 0)}), Protection(), cube=True)
    assert (out.status == "x").sum() == 7  # the other corners of a 2 x 2 x 2 cube
    assert (grid.summed[out.status == "x"] == 0).all()  # margins stay published
    assert widths(grid, out.status)[(1, 1, 0)] > 0


def test_protection_level_widens_the_interval():
    grid = cube_grid(RECT)
    out = protect(grid, inner(grid, {(0, 0)}), Protection(50), cube=True)
    attacker = Attacker(grid.members(), grid.finest_cell(), grid.value, out.status != "s")
    b = attacker.bounds(0)
    assert b.upper >= 3 - 1e-9 and b.lower <= 1 + 1e-9


def _frequency_rows(counts: np.ndarray, names=("region", "sector")) -> pd.DataFrame:
    rows = [(f"r{i}", f"s{j}") for (i, j), n in np.ndenumerate(counts) for _ in range(int(n))]
    return pd.DataFrame(rows, columns=list(names))


def test_job_publishes_the_rectangle_and_checks_it(db, engine):
    write_frame(engine, _frequency_rows(RECT), "firms")
    r = anonsql.safe_table(db, "firms", "region,sector", min_count=3, out="pub", bounds=True)
    assert r.ok and r.statuses == {"s": 12, "u": 1, "x": 3, "z": 0} and r.cells == 16
    assert {c.name for c in r.checks} == {"published values equal the SQL recount",
                                         "no published cell fails a primary rule",
                                         "the attacker's LP on the published table leaves every primary its protection"}
    rows = {(a, b): (v, s) for a, b, _g, _level, v, s, _lo, _hi in table_rows(engine, "pub")}
    assert rows[("r0", "s0")] == (None, "suppressed") and rows[("r0", "Total")] == (19, "published")
    assert {k for k, (v, s) in rows.items() if s == "suppressed"} == {("r0", "s0"), ("r0", "s1"), ("r1", "s0"),
                                                                      ("r1", "s1")}
    audit = {(a, b): (v, s, why, detail)
             for a, b, _g, _level, v, _n, s, why, detail, *_ in table_rows(engine, "pub_private_audit")}
    assert audit[("r0", "s0")] == (2, "u", "frequency", "frequency 2 < 3")
    assert audit[("r1", "s1")][1:3] == ("x", "secondary") and audit[("r1", "s1")][3].startswith("secondary")
    assert r.reasons == {"frequency": 1, "secondary": 3}
    assert anonsql.audit_table(db, "pub").ok


def test_audit_finds_sdctable_w_b_pinned_on_a_published_table(db, engine, capsys):
    rows = []
    for codes in itertools.product(*[[*range(4), -1]] * 2):
        value = SDC[tuple(slice(None) if c < 0 else c for c in codes)].sum()
        hidden = codes in SDC_PRIMARY
        rows.append(("Total" if codes[0] < 0 else "wxyz"[codes[0]], "Total" if codes[1] < 0 else "abcd"[codes[1]],
                     2 * (codes[0] < 0) + (codes[1] < 0), 0, None if hidden else value,
                     "suppressed" if hidden else "published",
                     None, None))
    frame = pd.DataFrame(rows, columns=["row", "col", "grouping_id", "level", "value", "status", "lower", "upper"],
                         dtype=object)
    write_frame(engine, frame.convert_dtypes(), "naive")
    r = anonsql.audit_table(db, "naive")
    assert not r.ok and [p["labels"] for p in r.pinned] == [["w", "b"]] and r.pinned[0]["lower"] == pytest.approx(47)
    assert main(["tables", "audit", "--db", db, "--published", "naive"]) == 1
    assert "pinned: ['w', 'b'] = 47" in capsys.readouterr().out


def test_magnitude_table_dominance_and_p_percent(db, engine):
    frame = pd.DataFrame({"region": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
                          "sector": ["x", "x", "y", "y"] * 3,
                          "firm": list(range(12)),
                          "turnover": [900, 10, 50, 60, 40, 45, 50, 55, 70, 60, 65, 75]})
    write_frame(engine, frame, "firms")
    r = anonsql.safe_table(db, "firms", "region,sector", measure="turnover", contributor="firm", min_count=1,
                           dominance="1,80", p_percent=10, out="pub")
    assert r.ok and r.statuses["u"] >= 1
    audit = {(a, b): (s, why) for a, b, _g, _level, _v, _n, s, why, *_ in table_rows(engine,
                                                                                                "pub_private_audit")}
    assert audit[("a", "x")] == ("u", "1-dominance")


def test_linked_tables_are_protected_together(db, engine):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": rng.choice(list("pqrs"), 300), "b": rng.choice(list("xyz"), 300),
                          "c": rng.choice(list("uvw"), 300)})
    write_frame(engine, frame, "t")
    r = anonsql.safe_table(db, "t", tables="a*b,c*b", min_count=25, out="linked")
    assert r.ok and r.tables == ["a*b", "c*b"] and r.statuses["u"] > 0
    assert anonsql.audit_table(db, "linked").ok


def test_bad_input_is_one_clear_error(db, engine):
    write_frame(engine, _frequency_rows(RECT), "firms")
    with pytest.raises(AnonsqlError, match="--dims"):
        anonsql.safe_table(db, "firms")
    with pytest.raises(AnonsqlError, match="magnitude table"):
        anonsql.safe_table(db, "firms", "region", dominance="1,80")
    with pytest.raises(AnonsqlError, match="dominance must be"):
        anonsql.safe_table(db, "firms", "region", measure="sector", contributor="sector", dominance="x")
    with pytest.raises(AnonsqlError, match="no taxonomy is stored"):
        anonsql.safe_table(db, "firms", "region", hierarchy="region=regions")
    with pytest.raises(AnonsqlError, match="--hierarchy must be"):
        anonsql.safe_table(db, "firms", "region", hierarchy="region")
    with pytest.raises(AnonsqlError, match="not a published table"):
        anonsql.audit_table(db, "firms")


def test_failed_verification_writes_nothing(db, engine, monkeypatch, capsys):
    write_frame(engine, _frequency_rows(RECT), "firms")
    real = tables_job.verify.protection

    def broken(report, *args, **kwargs):
        width = real(report, *args, **kwargs)
        report.check("the attacker's LP on the published table pins no primary cell", False,
                     "tables/published_cells", "injected failure")
        return width

    monkeypatch.setattr(tables_job.verify, "protection", broken)
    with pytest.raises(VerificationError, match="injected failure"):
        anonsql.safe_table(db, "firms", "region,sector", out="pub")
    assert catalog.find_table(engine, "pub") is None and catalog.find_table(engine, "pub_private_audit") is None
    code = main(["tables", "--db", db, "--table", "firms", "--dims", "region,sector", "--out", "pub", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("anonsql tables: error: verification failed")
    assert catalog.find_table(engine, "pub") is None


def test_emit_sql_dry_run_changes_nothing_and_the_script_builds_the_table(db, engine, tmp_path):
    write_frame(engine, _frequency_rows(RECT), "firms")
    script = tmp_path / "run.sql"
    r = anonsql.safe_table(db, "firms", "region,sector", out="pub", emit_sql=str(script), execute=False)
    assert not r.ok and catalog.find_table(engine, "pub") is None
    text = script.read_text()
    assert "PRIVATE" in text and "Verification" in text
    if engine.dialect == "duckdb":
        engine.execute("BEGIN")
        for statement in text.split("COMMIT;")[0].split("BEGIN;")[1].split(";\n"):
            body = "\n".join(line for line in statement.splitlines() if not line.startswith("--")).strip()
            if body:
                engine.execute(body)
        engine.execute("COMMIT")
        assert anonsql.audit_table(db, "pub").ok


def test_cli_prints_the_report(db, engine, capsys):
    write_frame(engine, _frequency_rows(RECT), "firms")
    assert main(["tables", "--db", db, "--table", "firms", "--dims", "region,sector", "--min-count", "3",
                 "--out", "pub", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "primary (u) 1" in out and "secondary (x) 3" in out
    assert main(["tables", "--db", db, "--dims", "region"]) == 2


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.sampled_from([(2, 3), (3, 3), (2, 2, 2), (3, 2, 2)]), seed=st.integers(0, 10_000),
       threshold=st.integers(2, 6))
def test_property_protected_tables_pin_nothing_and_recount(tmp_path, shape, seed, threshold):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 12, size=shape)
    names = [f"d{j}" for j in range(len(shape))]
    rows = [tuple(f"v{c}" for c in idx) for idx, n in np.ndenumerate(counts) for _ in range(int(n))]
    if not rows:
        return
    path = str(tmp_path / f"{uuid.uuid4().hex}.duckdb")
    engine = connect(path, create=True)
    try:
        write_frame(engine, pd.DataFrame(rows, columns=names), "t")
        r = anonsql.safe_table(engine, "t", names, min_count=threshold, out="pub")
        assert r.ok  # the recount and the independent attack ran inside the job
        audit = anonsql.audit_table(engine, "pub")  # the primaries read from pub_private_audit
        assert audit.ok and audit.primary_cells == r.statuses["u"]
    finally:
        engine.close()


# A 3-level hierarchy (World > Europe, America > countries) on region, crossed with sector:
# (fr, a) = 2 is the one primary. Ignoring the hierarchy, the cheapest rectangle pairs fr with ca
# (9 + 8 + 10 = 27 < 9 + 30 + 40), across continents: then Europe's subtotal gives (fr, a) back
# (Europe,a 32 - de,a 30 = 2). Along the hierarchy the rectangle stays inside Europe: fr/de x a/b,
# and the attacker only knows fr,a = t, fr,b = 11 - t, de,a = 32 - t, de,b = 38 + t, t in [1, 10]
# (every hidden cell holds a row: empty cells are published and never secondaries).
REGIONS = '[World]\nEurope = ["fr", "de"]\nAmerica = ["us", "ca"]\n'
BY_REGION = {"fr": (2, 9), "de": (30, 40), "us": (12, 11), "ca": (8, 10)}


def _regions(db, engine, tmp_path):
    rows = [(r, s) for r, counts in BY_REGION.items() for s, n in zip("ab", counts) for _ in range(n)]
    write_frame(engine, pd.DataFrame(rows, columns=["region", "sector"]), "firms")
    (tmp_path / "regions.toml").write_text(REGIONS)
    anonsql.taxonomy_load(db, "regions", file=str(tmp_path / "regions.toml"))


def test_hierarchy_totals_follow_the_taxonomy(db, engine, tmp_path):
    _regions(db, engine, tmp_path)
    r = anonsql.safe_table(db, "firms", "region,sector", hierarchy="region=regions", out="pub", bounds=True)
    assert r.ok and r.cells == 21 and r.statuses == {"s": 17, "u": 1, "x": 3, "z": 0}
    assert r.smallest_width == pytest.approx(9)
    rows = {(a, b): (g, level, v, s, lo, hi) for a, b, g, level, v, s, lo, hi in table_rows(engine, "pub")}
    assert {k for k, row in rows.items() if row[3] == "suppressed"} == {("fr", "a"), ("fr", "b"), ("de", "a"),
                                                                        ("de", "b")}
    assert rows[("fr", "a")] == (0, 0, None, "suppressed", 1, 10)  # not pinned: the interval [1, 10]
    assert rows[("Europe", "a")] == (0, 1, 32, "published", None, None)
    assert rows[("World", "Total")] == (1, 2, 122, "published", None, None)
    assert ("Total", "a") not in rows  # the root is the total, shown by its label
    audit = anonsql.audit_table(db, "pub", "region=regions")
    assert audit.ok and audit.smallest_width == pytest.approx(11)  # audit_table assumes only >= 0
    with pytest.raises(AnonsqlError, match="taxonomy totals"):
        anonsql.audit_table(db, "pub")  # without the taxonomy the attack would miss equations


def test_a_subtotal_gives_the_primary_back_when_the_hierarchy_is_ignored(db, engine, tmp_path):
    _regions(db, engine, tmp_path)
    plain = anonsql.safe_table(db, "firms", "region,sector", out="plain")
    assert plain.ok
    hidden = {(a, b) for a, b, _g, _l, v, _s, _lo, _hi in table_rows(engine, "plain") if v is None}
    assert hidden == {("fr", "a"), ("fr", "b"), ("ca", "a"), ("ca", "b")}  # across continents
    anonsql.safe_table(db, "firms", "region,sector", hierarchy="region=regions", out="pub")
    private = table_rows(engine, "pub_private_audit")
    naive = pd.DataFrame([(a, b, g, level, None if (a, b) in hidden else v,
                           "suppressed" if (a, b) in hidden else "published", None, None)
                          for a, b, g, level, v, *_ in private],
                         columns=["region", "sector", "grouping_id", "level", "value", "status", "lower", "upper"])
    write_frame(engine, naive.astype(object), "naive")
    primaries = pd.DataFrame([(a, b, g, "u" if (a, b) == ("fr", "a") else "s") for a, b, g, *_ in private],
                             columns=["region", "sector", "grouping_id", "status"])
    write_frame(engine, primaries.astype(object), "naive_private_audit")  # the owner's check: fr,a is the primary
    audit = anonsql.audit_table(db, "naive", "region=regions")
    assert not audit.ok and [p["labels"] for p in audit.pinned] == [["fr", "a"]]
    assert audit.pinned[0]["lower"] == pytest.approx(2)  # Europe,a 32 - de,a 30


def test_forced_cells_are_published_and_never_secondaries(db, engine, tmp_path):
    _regions(db, engine, tmp_path)
    r = anonsql.safe_table(db, "firms", "region,sector", hierarchy="region=regions", out="pub",
                           publish="region=de,sector=a; region=World")
    assert r.ok and r.statuses["z"] == 2
    rows = {(a, b): (v, s) for a, b, _g, _l, v, s, _lo, _hi in table_rows(engine, "pub")}
    assert rows[("de", "a")] == (30, "published") and rows[("World", "Total")] == (122, "published")
    assert rows[("fr", "a")] == (None, "suppressed") and anonsql.audit_table(db, "pub", "region=regions").ok
    audit = {(a, b): why for a, b, _g, _l, _v, _n, s, why, *_ in table_rows(engine, "pub_private_audit")
             if s == "z"}
    assert audit == {("de", "a"): "forced", ("World", "Total"): "forced"}
    code = main(["tables", "--db", db, "--table", "firms", "--dims", "region,sector", "--out", "pub2", "--quiet",
                 "--publish", "region=fr,sector=b", "--publish", "region=fr"])  # fr,a = fr,Total - fr,b
    assert code == 2 and catalog.find_table(engine, "pub2") is None
    with pytest.raises(AnonsqlError, match=r"primary cell region=fr, sector=a cannot be protected without"):
        anonsql.safe_table(db, "firms", "region,sector", out="pub2", publish="region=fr,sector=b; region=fr")
    with pytest.raises(AnonsqlError, match="fails a primary rule"):
        anonsql.safe_table(db, "firms", "region,sector", out="pub2", publish="region=fr,sector=a")
    with pytest.raises(AnonsqlError, match="not a label"):
        anonsql.safe_table(db, "firms", "region,sector", out="pub2", publish="region=xx")


def test_hierarchy_needs_leaves(db, engine, tmp_path):
    _regions(db, engine, tmp_path)
    write_frame(engine, pd.DataFrame({"region": ["fr", "Europe", "it"], "sector": ["a"] * 3}), "bad")
    with pytest.raises(AnonsqlError, match="not leaves of taxonomy 'regions': 'Europe', 'it'"):
        anonsql.safe_table(db, "bad", "region,sector", hierarchy="region=regions")


# -- the attacker who reads every column anonsql publishes (written apart from anonsql's own audit) --

def outside_attack(rows, n_dims: int, floor: float = 0.0, zero=()) -> dict:
    """The interval of every hidden cell that an outsider computes from the published rows alone
    (labels, grouping id, level, value, status, lower, upper), with scipy's LP, never anonsql's:
    unknowns the finest cells (>= 0), a published value an equation, a hidden cell >= `floor`
    (the policy says so) and inside its published bounds, a cell of `zero` (labels known empty)
    = 0; ends rounded inward to whole numbers (two-way tables are totally unimodular: the LP's ends
    are the integer ones). Hidden cells must all show the same status, or the status alone tells
    primaries from secondaries."""
    from scipy.optimize import linprog

    hidden = [r for r in rows if r[n_dims + 2] is None]
    assert len({r[n_dims + 3] for r in hidden}) <= 1, "the status column tells hidden cells apart"
    domains = [sorted({r[j] for r in rows if not (r[n_dims] >> (n_dims - 1 - j)) & 1}) for j in range(n_dims)]
    finest = list(itertools.product(*domains))

    def cover(r):
        return [i for i, f in enumerate(finest) if all((r[n_dims] >> (n_dims - 1 - j)) & 1 or f[j] == r[j]
                                                       for j in range(n_dims))]

    a_eq, b_eq, a_ub, b_ub = [], [], [], []
    for r in rows:
        row = np.zeros(len(finest))
        row[cover(r)] = 1
        if r[n_dims + 2] is not None or tuple(r[:n_dims]) in zero:
            a_eq.append(row)
            b_eq.append(0.0 if r[n_dims + 2] is None else float(r[n_dims + 2]))
            continue
        a_ub.append(-row)
        b_ub.append(-max(floor, float(r[n_dims + 4] if r[n_dims + 4] is not None else 0)))
        if r[n_dims + 5] is not None:
            a_ub.append(row)
            b_ub.append(float(r[n_dims + 5]))
    out = {}
    for r in hidden:
        c = np.zeros(len(finest))
        c[cover(r)] = 1
        ends = []
        for sign in (1, -1):
            res = linprog(sign * c, A_ub=np.array(a_ub) if a_ub else None, b_ub=b_ub or None, A_eq=np.array(a_eq),
                          b_eq=b_eq, bounds=(0, None), method="highs")
            ends.append(sign * res.fun if res.status == 0 else np.inf)
        out[tuple(r[:n_dims]), r[n_dims]] = (np.ceil(ends[0] - 1e-6), np.floor(ends[1] + 1e-6))
    return out


def exposed(interval, n: int) -> bool:
    """A count is given back when one whole number fits, or all lie in [1, n-1] (a small non-zero count)."""
    lo, hi = interval
    return lo == hi or (1 <= lo and hi <= n - 1)


def primaries(engine, name: str, n_dims: int) -> dict:
    """The grader's truth: the primaries of the private audit, by (labels, grouping id) -> value."""
    return {(tuple(r[:n_dims]), r[n_dims]): r[n_dims + 2] for r in table_rows(engine, f"{name}_private_audit")
            if r[n_dims + 4] == "u"}


def test_the_published_table_gives_no_primary_back_to_an_outside_attacker(db, engine):
    """Bundled Adult, education x race, min count 4: the Preschool row once published 51 = 6 + 5 +
    38 + x(Amer-Indian-Eskimo) + u(Other) with x a secondary (0 or >= 4), so x = 0, u = 2."""
    anonsql.load_dataset(db, "adult")
    r = anonsql.safe_table(db, "adult", "education,race", min_count=4, out="pub", bounds=True)
    assert r.ok and r.statuses["u"] > 0
    rows = table_rows(engine, "pub")
    assert {row[5] for row in rows} == {"published", "suppressed"}
    attack = outside_attack(rows, 2, floor=1)  # empty cells are published, never secondaries: hidden >= 1
    truth = primaries(engine, "pub", 2)
    assert set(truth) <= set(attack) and not [k for k, v in truth.items() if exposed(attack[k], 4)]
    preschool = {k: v for k, v in truth.items() if k[0][0] == "Preschool"}
    assert preschool and all(attack[k][0] <= v <= attack[k][1] for k, v in preschool.items())
    private = {(a, b): (v, s) for a, b, _g, _l, v, _n, s, *_ in table_rows(engine, "pub_private_audit")}
    assert not [k for k, (v, s) in private.items() if s == "x" and v == 0]  # no empty secondary


def test_the_outside_attacker_reads_back_a_row_of_two_small_hidden_cells(db, engine):
    """The attack can fail: a row of a hand-made publication whose two hidden cells sum to 2."""
    rows = [("p", "a", 0, 0, 6, "published", None, None), ("p", "b", 0, 0, None, "suppressed", None, None),
            ("p", "c", 0, 0, None, "suppressed", None, None), ("p", "Total", 1, 0, 8, "published", None, None),
            ("q", "a", 0, 0, 9, "published", None, None), ("q", "b", 0, 0, None, "suppressed", None, None),
            ("q", "c", 0, 0, None, "suppressed", None, None), ("q", "Total", 1, 0, 30, "published", None, None),
            ("Total", "a", 2, 0, 15, "published", None, None), ("Total", "b", 2, 0, 11, "published", None, None),
            ("Total", "c", 2, 0, 12, "published", None, None), ("Total", "Total", 3, 0, 38, "published", None, None)]
    attack = outside_attack(rows, 2, floor=1)
    assert attack[("p", "b"), 0] == (1, 1) and exposed(attack[("p", "b"), 0], 4)
    assert not exposed(outside_attack(rows, 2, floor=0)[("p", "b"), 0], 4)  # [0, 2]: maybe empty


def _sickness(engine, name="people"):
    """sex x condition: (female, pregnant) = 2 is the primary; (male, pregnant) is empty by nature."""
    counts = {("female", "pregnant"): 2, ("female", "flu"): 9, ("female", "cold"): 8,
              ("male", "pregnant"): 0, ("male", "flu"): 7, ("male", "cold"): 6,
              ("unknown", "pregnant"): 5, ("unknown", "flu"): 8, ("unknown", "cold"): 9}
    rows = [k for k, n in counts.items() for _ in range(n)]
    write_frame(engine, pd.DataFrame(rows, columns=["sex", "condition"]), name)


def test_empty_cells_are_never_secondaries_unless_allowed(db, engine):
    _sickness(engine)
    r = anonsql.safe_table(db, "people", "sex,condition", min_count=3, out="pub")
    private = {(a, b): (v, s) for a, b, _g, _l, v, _n, s, *_ in table_rows(engine, "pub_private_audit")}
    assert r.ok and private[("male", "pregnant")] == (0, "s")
    assert not [k for k, (v, s) in private.items() if s == "x" and v == 0]
    r = anonsql.safe_table(db, "people", "sex,condition", min_count=3, out="loose", allow_empty_secondaries=True)
    private = {(a, b): (v, s) for a, b, _g, _l, v, _n, s, *_ in table_rows(engine, "loose_private_audit")}
    assert r.ok and r.allow_empty_secondaries and private[("male", "pregnant")] == (0, "x")


def test_a_structural_zero_is_published_and_the_pattern_does_not_rest_on_it(db, engine, capsys):
    """No male pregnancies: a pattern that hides (male, pregnant) as a secondary gives (female,
    pregnant) back to anyone who knows it is empty; declared a structural zero, it is published."""
    _sickness(engine)
    known = {("male", "pregnant")}
    anonsql.safe_table(db, "people", "sex,condition", min_count=3, out="loose", allow_empty_secondaries=True)
    attack = outside_attack(table_rows(engine, "loose"), 2, zero=known)
    assert attack[("female", "pregnant"), 0] == (2, 2)  # read back: the pattern rests on the zero
    r = anonsql.safe_table(db, "people", "sex,condition", min_count=3, out="pub", allow_empty_secondaries=True,
                           structural_zeros="sex=male,condition=pregnant")
    assert r.ok and r.structural_zeros == 1 and r.reasons["structural zero"] == 1
    rows = table_rows(engine, "pub")
    assert [row[4:6] for row in rows if row[:2] == ("male", "pregnant")] == [(0, "published")]
    attack = outside_attack(rows, 2, zero=known)
    assert not [k for k in primaries(engine, "pub", 2) if exposed(attack[k], 3)]
    code = main(["tables", "--db", db, "--table", "people", "--dims", "sex,condition", "--out", "bad", "--quiet",
                 "--structural-zeros", "sex=female,condition=pregnant"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "is not empty" in err and catalog.find_table(engine, "bad") is None


def test_forcing_a_primary_does_not_print_its_count(db, engine, capsys):
    write_frame(engine, _frequency_rows(RECT), "firms")
    code = main(["tables", "--db", db, "--table", "firms", "--dims", "region,sector", "--out", "pub", "--quiet",
                 "--publish", "region=r0,sector=s0"])
    err = capsys.readouterr().err
    assert code == 2 and "fails a primary rule (frequency)" in err and "frequency 2" not in err
    assert catalog.find_table(engine, "pub") is None


def _firms(engine):
    """region x sector turnover by firm; (a, x) is one firm's at 98 %: 980 + 10 + 10."""
    cells = {("a", "x"): [980, 10, 10], ("a", "y"): [70, 65, 65], ("b", "x"): [40, 30, 30], ("b", "y"): [40, 40, 40],
             ("c", "x"): [100, 100, 100], ("c", "y"): [110, 100, 100]}
    rows = [(r, s, f"{r}{s}{i}", v) for (r, s), vs in cells.items() for i, v in enumerate(vs)]
    write_frame(engine, pd.DataFrame(rows, columns=["region", "sector", "firm", "turnover"]), "firms")
    return cells


def test_p_percent_primary_gets_the_rules_upper_protection_level(db, engine):
    cells = _firms(engine)
    r = anonsql.safe_table(db, "firms", "region,sector", measure="turnover", contributor="firm", min_count=1,
                           p_percent=15, out="pub")
    assert r.ok and r.statuses["u"] == 1 and r.reasons["p%"] == 1
    x1, x2, *_ = sorted(cells[("a", "x")], reverse=True)
    total = sum(cells[("a", "x")])
    need = 15 / 100 * x1 - (total - x1 - x2)  # 137: the attacker's upper bound must reach 1137
    attack = outside_attack(table_rows(engine, "pub"), 2)
    assert attack[("a", "x"), 0][1] >= total + need
    # the cheapest rectangle (with b: 200 + 100 + 120) reaches only 1000 + 100: c's is needed
    hidden = {row[:2] for row in table_rows(engine, "pub") if row[4] is None}
    assert hidden == {("a", "x"), ("a", "y"), ("c", "x"), ("c", "y")}
    assert catalog.get_table(engine, "pub").column("value").kind == "float"


def test_counts_are_exact_integers(db, engine):
    write_frame(engine, _frequency_rows(RECT), "firms")
    anonsql.safe_table(db, "firms", "region,sector", out="pub")
    for name in ("pub", "pub_private_audit"):
        assert catalog.get_table(engine, name).column("value").kind == "integer"
    assert all(isinstance(row[4], int) for row in table_rows(engine, "pub") if row[4] is not None)


def test_the_private_audit_reports_the_lp_and_the_whole_number_intervals(db, engine):
    write_frame(engine, _frequency_rows(RECT), "firms")
    r = anonsql.safe_table(db, "firms", "region,sector", out="pub")
    assert r.ok and r.integer_exposed == 0
    columns = catalog.get_table(engine, "pub_private_audit").column_names
    audit = [dict(zip(columns, row)) for row in table_rows(engine, "pub_private_audit")]
    (p,) = [a for a in audit if a["status"] == "u"]
    assert p["lp_lower"] <= p["lower"] < p["upper"] <= p["lp_upper"]
    assert float(p["lower"]).is_integer() and float(p["upper"]).is_integer() and p["lower"] >= 1  # hidden: >= 1
    assert all(a["lp_lower"] is None for a in audit if a["status"] != "u")
