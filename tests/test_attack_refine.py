"""The refinement attack across a release's artefacts (issue 35, `anonsql attack refine` and the
release gate `min_candidates`): the pure LP/MILP and kanon rule on hand-made counts, the attack
on real safe tables and real kanon output on both engines (the original value is always among the
candidates), the golden release that refuses and its fixed version that ships, and bad input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import anonsql
from anonsql.attack.refine import CountTable, Kanon, propagate, refine
from anonsql.cli import main
from anonsql.data.loading import write_frame
from anonsql.errors import AnonsqlError, VerificationError

# ------------------------------------------------------------------ the pure attack


def _table(dims, cells):
    """A CountTable from {labels: count}; None among the labels is a margin (Total)."""
    return CountTable("t", dims, [(tuple(lab), tuple(v is None for v in lab), n) for lab, n in cells.items()])


def test_a_margin_pins_the_one_hidden_cell_by_hand():
    # R: sex M 3, F 2, ⊥ 1; the table says M 3, F 3: the ⊥ row is F
    groups = [(("M",), 3), (("F",), 2), ((None,), 1)]
    r = refine(groups, [_table((0,), {("M",): 3, ("F",): 3})], [0])
    assert [(c.group, c.rows, c.candidates) for c in r.cells] == [((None,), 1, ("F",))]
    # two ⊥ rows, one M and one F: each keeps both values (the rows are alike to the attacker)
    r = refine([(("M",), 2), (("F",), 2), ((None,), 2)], [_table((0,), {("M",): 3, ("F",): 3})], [0])
    assert r.cells[0].candidates == ("F", "M")


def test_two_tables_together_pin_what_each_leaves_open():
    # groups over (a, b): (⊥, x) 1 row, (⊥, y) 1 row, (p, x) 1, (q, y) 1. a's margin alone (p 2,
    # q 2) leaves both ⊥ open; with a x b's cell (p, x) = 2 the (⊥, x) row is p, so (⊥, y) is q
    groups = [((None, "x"), 1), ((None, "y"), 1), (("p", "x"), 1), (("q", "y"), 1)]
    margin = _table((0,), {("p",): 2, ("q",): 2})
    alone = refine(groups, [margin], [0, 1])
    assert [c.candidates for c in alone.cells] == [("p", "q"), ("p", "q")]
    cross = CountTable("ab", (0, 1), [(("p", "x"), (False, False), 2)])
    both = refine(groups, [margin, cross], [0, 1])
    assert [(c.group, c.candidates) for c in both.cells] == [((None, "x"), ("p",)), ((None, "y"), ("q",))]


def test_propagation_bounds_and_contradiction():
    lo, hi = propagate([np.array([0, 1]), np.array([1])], np.array([5.0, 2.0]), np.zeros(2), np.full(2, 9.0))
    assert (lo.tolist(), hi.tolist()) == ([3.0, 2.0], [3.0, 2.0])
    with pytest.raises(AnonsqlError, match="contradict each other"):
        refine([((None,), 2)], [_table((0,), {("a",): 1, ("b",): 0})], [0])


@pytest.fixture(params=["packed", "tuples"])
def counting(request, monkeypatch):
    """The kanon rule counts visible tuples by packed integer codes, or by tuples of codes when the
    codes would not fit in one integer: both ways."""
    from anonsql.attack import refine as module

    if request.param == "tuples":
        init = module._KanonRule.__init__

        def wide(self, *args):
            init(self, *args)
            self.radix = [1 << 40] * len(self.radix)
        monkeypatch.setattr(module._KanonRule, "__init__", wide)
    return request.param


def test_the_kanon_rule_excludes_a_visible_tuple_of_the_class(counting):
    """kanon merges whole tuples (y, c): a row (⊥, 30, lo) is not (M, 30, lo) when that tuple is
    shown whole; of class hi it may be, since (M, 30, hi) is nowhere."""
    cols = ("sex", "age", "income")
    groups = [(("M", "30", "lo"), 3), (("F", "40", "lo"), 3), ((None, "30", "lo"), 2), ((None, "30", "hi"), 2),
              (("F", "30", "hi"), 3)]
    kanon = Kanon((0, 1), 2)
    r = refine(groups, [], [0, 1], kanon)
    got = {(c.group, cols[c.column]): c.candidates for c in r.cells}
    assert got == {((None, "30", "lo"), "sex"): ("F",), ((None, "30", "hi"), "sex"): ("M",)}
    assert r.kanon_excluded == 2
    # a second ⊥ (age too) leaves a completion unseen for each sex: no exclusion
    r = refine([*groups, ((None, None, "lo"), 2)], [], [0, 1], kanon)
    assert {c.candidates for c in r.cells if c.group == (None, None, "lo")} == {("F", "M"), ("30", "40")}
    # without the rule, both values stay
    assert {c.candidates for c in refine(groups, [_table((0,), {})], [0]).cells} == {("F", "M")}


# ------------------------------------------------------------------ on the engines


def _people(engine):
    rows = [(i, "M" if i % 2 else "F", ["20s", "30s", "40s"][i % 3], "hi" if i % 5 == 0 else "lo")
            for i in range(1, 41)]
    write_frame(engine, pd.DataFrame(rows, columns=["id", "sex", "age", "income"]), "people")


def test_a_cross_table_pins_suppressed_cells_that_its_margin_leaves_open(db, engine, capsys):
    """protect hides the income of rows 5 (M, hi) and 7 (M, lo) and, for 7, its sex and age too.
    Counts of sex x income of the original rows: F's cells are full without row 7, so row 7 is M
    (its sex is certain); which of 5 and 7 is the hi one stays open. The income margin alone
    (8 hi, 7 shown) leaves both open. Rows 5 and 10 (M and F, both hi): each income is certain."""
    _people(engine)
    anonsql.protect_table(db, "people", "id", target="income", rows="5,7", method="dropp", out="pub")
    assert engine.fetch_all("SELECT id, sex FROM pub WHERE income IS NULL ORDER BY id") == [(5, "M"), (7, None)]
    anonsql.safe_table(db, "people", "sex,income", min_count=1, out="cross")
    anonsql.safe_table(db, "people", None, tables="income", min_count=1, out="margin")
    r = anonsql.refine_attack(db, "pub", "cross", sensitive="income")
    assert not r and r.by_column == {"sex": {"cells": 1, "exposed": 1, "certain": 1},
                                     "income": {"cells": 2, "exposed": 0, "certain": 0}}
    fixed = anonsql.refine_attack(db, "pub", "margin", sensitive="income")
    assert fixed and fixed.cells == 2 and fixed.candidates == [(2, 2)]
    public = r.public_dict()
    assert "exposed_groups" not in public and '"M"' not in json.dumps(public)  # counts, never a value
    anonsql.protect_table(db, "people", "id", target="income", rows="5,10", method="dropp", out="pub2")
    assert engine.fetch_all("SELECT id, sex FROM pub2 WHERE income IS NULL ORDER BY id") == [(5, "M"), (10, "F")]
    r = anonsql.refine_attack(db, "pub2", "cross", sensitive="income", min_candidates=1)
    assert not r and r.by_column["income"] == {"cells": 2, "exposed": 2, "certain": 2}  # certain though m >= 1
    code = main(["attack", "refine", "--db", db, "--published", "pub", "--tables", "cross", "--sensitive", "income"])
    out = capsys.readouterr().out
    assert code == 1 and "sex: 1 cells, 1 exposed, 1 certain" in out
    code = main(["attack", "refine", "--db", db, "--published", "pub", "--tables", "margin", "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["exposed"] == 0


def test_the_original_value_is_always_a_candidate_on_kanon_output(db, engine):
    """Soundness on real kanon output (k = 3, random rows): with the kanon rule and a safe table of
    the original values, every suppressed cell's original value is among its group's candidates."""
    rng = np.random.default_rng(7)
    n = 120
    frame = pd.DataFrame({"id": range(n), "a": rng.choice(["a1", "a2", "a3"], n), "b": rng.choice(["b1", "b2"], n),
                          "c": rng.choice(["c1", "c2", "c3", "c4"], n), "y": rng.choice(["n", "p"], n)})
    write_frame(engine, frame, "src")
    anonsql.k_anonymize(db, "src", "a,b,c", "y", 3, seed=0, out="k3")
    anonsql.safe_table(db, "src", "a,b", min_count=1, out="ab")
    r = anonsql.refine_attack(db, "k3", "ab", method="kanon", qi="a,b,c", class_column="y")
    assert r.cells > 0 and r.solver["unknowns"] > 0
    from anonsql.attack import stats
    from anonsql.attack.refine import CountTable as Counts
    from anonsql.attack.refine import Kanon as Rule
    from anonsql.attack.refine import refine as attack
    from anonsql.catalog import get_table

    cols = ["a", "b", "c", "y"]
    groups = stats.refine_groups(engine, get_table(engine, "k3"), cols)
    cells = stats.count_cells(engine, get_table(engine, "ab"), ["a", "b"])
    found = attack(groups, [Counts("ab", (0, 1), cells)], [0, 1, 2], Rule((0, 1, 2), 3))
    candidates = {(c.group, c.column): set(c.candidates) for c in found.cells}
    published = engine.fetch_all("SELECT id, a, b, c, y FROM k3")
    original = {r[0]: r[1:] for r in engine.fetch_all("SELECT id, a, b, c, y FROM src")}
    checked = 0
    for key, *values in published:
        for j in range(3):
            if values[j] is None:
                assert original[key][j] in candidates[(tuple(values), j)]
                checked += 1
    assert checked == r.cells


def test_bad_input_is_one_line_exit_2(db, engine, make_table, capsys):
    _people(engine)
    anonsql.protect_table(db, "people", "id", target="income", rows="5,7", method="dropp", out="pub")
    anonsql.safe_table(db, "people", "sex,income", min_count=1, out="cross")
    anonsql.safe_table(db, "people", "sex", measure="id", min_count=1, out="sums")
    make_table("half", {"sex": ["M", "F"], "income": ["lo", "lo"]})
    anonsql.safe_table(db, "half", "sex,income", min_count=1, out="other_rows")
    make_table("binned", {"sex": ["M"] * 20 + ["X"] * 20})
    anonsql.safe_table(db, "binned", "sex", min_count=1, out="other_values")
    for argv, message in [(["--tables", "people"], "not a published table of 'anonsql tables'"),
                          (["--tables", "sums"], "publishes sums"),
                          (["--tables", "other_rows"], "counts 2 rows"),
                          (["--tables", "other_values"], "which is no label of"),
                          (["--tables", "cross", "--method", "kanon"], "needs --qi and --class"),
                          ([], "nothing to refine with"),
                          (["--tables", "cross", "--sensitive", "nope"], "nope"),
                          (["--tables", "cross", "--min-candidates", "0"], "--min-candidates")]:
        code = main(["attack", "refine", "--db", db, "--published", "pub", *argv])
        err = capsys.readouterr().err
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1, (argv, err)
    with pytest.raises(AnonsqlError, match="min candidates"):
        anonsql.refine_attack("/nonexistent.duckdb", "p", "t", min_candidates=0)


# ------------------------------------------------------------------ the release gate

SPEC = """[source]
table = "people"
key = "id"
qi = ["sex", "age"]
sensitive = ["income"]

[[steps]]
kind = "protect"
target = "income"
rows = [5, 7]
out = "people_pub"
publish = true

[[steps]]
kind = "tables"
input = "source"
{table}
min_count = 1
out = "people_counts"
publish = true

[gates]
min_candidates = 2

[outputs]
dir = "out"
"""


def test_release_refuses_a_table_that_reveals_protected_cells_and_ships_the_fixed_one(db, engine, tmp_path):
    _people(engine)
    spec = tmp_path / "people.toml"
    spec.write_text(SPEC.format(table='dims = ["sex", "income"]'))
    with pytest.raises(VerificationError, match="gate: every suppressed cell keeps >= 2 candidate values and no "
                       "sensitive value is certain in people_pub: 1 of 3 suppressed cells exposed"):
        anonsql.release_run(spec, db)
    assert not (tmp_path / "out").exists()  # nothing published
    spec.write_text(SPEC.format(table='tables = "income"'))
    report = anonsql.release_run(spec, db)
    gate = [c for c in report.checks if c.name.startswith("gate: every suppressed cell")]
    assert [(c.passed, c.detail) for c in gate] == [(True, "0 of 2 suppressed cells exposed")]
    assert any(a.startswith("Refinement attack: reading people_pub together with people_counts") for a in
               report.proofs["people_pub"].attacks)
    page = (tmp_path / "out" / "report.html").read_text()
    attacks = page[page.index("<h2>Attacks on what is published</h2>"):]
    assert "Refinement attack: reading people_pub together with people_counts, an attacker narrows 0 of 2" in attacks
    sizes = report.proofs["people_pub"].after.class_sizes  # over sex, age: the classes' rows by size and risk
    risk = attacks[attacks.index("<h3>Risk by class size</h3>"):]
    from anonsql.release.html import BUCKETS

    for label, lo, hi in BUCKETS:  # each range's highest risk 1/|E| and its rows
        rows = sum(s * c for s, c in sizes if lo <= s <= hi)
        assert (f"<tr><td>{label}</td><td>{1 / lo:.4g}</td><td>{rows:,}</td></tr>" in risk) == (rows > 0)
    assert sum(s * c for s, c in sizes) == 40
    assert anonsql.release_verify(spec, db)


def test_release_min_candidates_is_a_whole_number_of_at_least_one(tmp_path):
    from anonsql.release import spec as spec_mod

    path = tmp_path / "people.toml"
    path.write_text(SPEC.format(table='dims = ["sex"]').replace("min_candidates = 2", "min_candidates = 0"))
    with pytest.raises(AnonsqlError, match=rf"^{path}:23: \[gates\] min_candidates must be a whole number >= 1"):
        spec_mod.load(path)
