"""Hintoglu (2011) deletion algorithms: the thesis's worked examples exactly, then the job."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

from anonsql.protect import deletion, id3
from anonsql.protect.deletion import Cell, Microdata
from anonsql.protect.naive_bayes import NU, class_scores, is_predicted, next_best_candidates
from anonsql.protect.suppress import suppress_cells

from .fixtures_hintoglu import AP, BOB, DYS, GAS, SYMPTOMS, TABLE_1_2, coded, decoded, fetched

COLS = [*SYMPTOMS, "diagnosis"]
I, CP, P, DX = range(4)  # noqa: E741 (the thesis's attribute names)


class Fixed:
    """The thesis's choices: a fixed random next best guess, the coin always says suppress."""

    def __init__(self, guess: int) -> None:
        self.guess = guess

    def next_best(self, candidates):
        assert self.guess in candidates
        return self.guess

    def suppress(self) -> bool:
        return True


def bob_problem(data=None):
    X, values = coded(COLS, data)
    codes = {v: i for i, v in enumerate(values[DX])}
    cell = Cell(BOB, DX, int(X[BOB, DX]))
    X[BOB, DX] = NU  # Table 1.2: Bob's diagnosis is already hidden
    p = Microdata(X, [len(v) for v in values], {DX: [I, CP, P]})
    return p, cell, codes, values


def rows_of(X, values):
    return decoded(X, values)


def expected(table: list[str]) -> list[tuple]:
    """Rows of a thesis table written compactly as 'I CP P Diagnosis' ('?' = hidden)."""
    names = {"AP": AP, "DYS": DYS, "GAS": GAS}
    return [tuple(names.get(x, x) for x in line.split()) for line in table]


TABLE_3_2 = ["Y N Y DYS", "N Y Y ?", "Y N N DYS", "Y N N GAS", "N Y Y GAS",
             "Y ? Y AP", "? N Y AP", "N Y Y AP", "Y Y Y GAS"]
TABLE_3_3 = ["Y N Y DYS", "N Y Y ?", "Y N N DYS", "Y N N ?", "N Y Y GAS",
             "Y Y Y AP", "? N Y AP", "N Y Y AP", "Y Y Y GAS"]
TABLE_3_4 = ["Y N Y DYS", "? Y ? ?", "Y N N DYS", "Y N N GAS", "N Y Y GAS",
             "Y Y Y AP", "N N Y AP", "N Y Y AP", "Y Y Y GAS"]


def test_table_3_1_naive_bayes_model():
    p, cell, c, _ = bob_problem()
    scores = p.scores(cell)
    assert scores[c[DYS]] == 0 and scores[c[AP]] == F(1, 6) and scores[c[GAS]] == F(1, 18)
    assert is_predicted(scores, c[AP])
    assert next_best_candidates(scores, c[AP], k=3) == [c[GAS]]  # p(dyspepsia) = 0 is excluded


def test_decp_example_2_and_table_3_2():
    p, cell, c, values = bob_problem()
    assert deletion.decp_counts(p, cell) == {I: 2, CP: 2, P: 3}  # Step 4
    # Step 6 and Step 8 one replacement at a time: 1/6 -> 1/12 -> 1/24 < 1/18
    X = p.X.copy()
    X[6, I] = NU
    assert class_scores(X, BOB, DX, [I, CP, P], 3)[c[AP]] == F(1, 12)
    X[5, CP] = NU
    assert class_scores(X, BOB, DX, [I, CP, P], 3)[c[AP]] == F(1, 24)
    out = deletion.decp(p, cell, Fixed(c[GAS]))
    assert out.status == "suppressed" and out.next_best == c[GAS]
    assert out.changes == [(6, I), (5, CP)]  # tuple 7 first (Step 6), then tuple 6 (Step 8)
    assert rows_of(p.X, values) == expected(TABLE_3_2)
    assert p.scores(cell)[c[AP]] == F(1, 24) and p.scores(cell)[c[GAS]] == F(1, 18)


def test_incp_example_3_and_table_3_3():
    p, cell, c, values = bob_problem()
    X = p.X.copy()
    X[3, DX] = NU  # Step 5: tuple 4 (no symptom in common with Bob) loses its diagnosis
    s = class_scores(X, BOB, DX, [I, CP, P], 3)
    assert s[c[GAS]] == F(1, 7) and s[c[AP]] == F(4, 21)
    X[6, I] = NU  # Step 9
    assert class_scores(X, BOB, DX, [I, CP, P], 3)[c[AP]] == F(2, 21)
    out = deletion.incp(p, cell, Fixed(c[GAS]))
    assert out.status == "suppressed" and out.changes == [(3, DX), (6, I)]
    assert rows_of(p.X, values) == expected(TABLE_3_3)


def test_dropp_example_4_and_table_3_4():
    p, cell, c, values = bob_problem()
    counts = deletion.dropp_counts(p, cell, c[GAS])  # Step 4: count^AP, count^G, |AP|, |G|
    assert counts == {I: (2, 1, 3, 3), CP: (2, 2, 3, 3), P: (3, 2, 3, 3)}
    X = p.X.copy()
    X[BOB, I] = NU  # Step 5
    s = class_scores(X, BOB, DX, [I, CP, P], 3)
    assert s[c[AP]] == F(1, 4) and s[c[GAS]] == F(1, 6)
    X[BOB, P] = NU  # Step 6: equal, so Bob's diagnosis is no longer predicted
    s = class_scores(X, BOB, DX, [I, CP, P], 3)
    assert s[c[AP]] == s[c[GAS]] == F(1, 4) and not is_predicted(s, c[AP])
    out = deletion.dropp(p, cell, Fixed(c[GAS]))
    assert out.status == "suppressed" and out.changes == [(BOB, I), (BOB, P)]
    assert rows_of(p.X, values) == expected(TABLE_3_4)


def bob_without_chest_pain():
    data = {k: list(v) for k, v in TABLE_1_2.items()}
    data["chest_pain"][BOB] = "N"
    return bob_problem(data)


def test_id3_tree_of_figure_3_6():
    p, cell, c, values = bob_without_chest_pain()
    n, y = 0, 1  # N < Y in the sorted dictionary
    tree = p.tree(cell)
    assert tree.describe() == {"attr": CP, "children": {
        y: {"label": c[AP]},  # node 2: {G, AP, AP, G}, no attribute gains, tie -> first value
        n: {"attr": I, "children": {  # node 3
            n: {"label": c[AP]},  # node 5
            y: {"attr": P, "children": {  # node 4
                n: {"label": c[DYS]}, y: {"label": c[DYS]}}},
        }},
    }}
    assert tree.children[n].population == tree.children[y].population == 4  # Step 3's tie
    assert tree.predict(p.X[BOB]) == c[AP]  # path chest pain = N, indigestion = N


def test_id3_distinct_tuples_follow_hidden_cells():
    """ID3's distinct tuples are kept up to date cell by cell (new tuples appended, the arrays
    growing): after many hides and reverts, every cell's tree equals one trained from X."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 3, size=(60, 4))
    p = Microdata(X, [3, 3, 3, 3], {3: [0, 1, 2]})
    cells = [Cell(i, 3, int(X[i, 3])) for i in range(0, 60, 7)]
    p.tree(cells[0])  # built now, then updated
    changes: list[tuple[int, int]] = []
    for r, c in zip(rng.integers(0, 60, size=80).tolist(), rng.integers(0, 4, size=80).tolist()):
        if p.X[r, c] != NU:
            p.hide(r, c, changes)
    p.revert(changes, 30)
    assert len(p.tuples(3).codes) > 32  # the arrays grew
    for cell in cells:
        assert p.tree(cell).describe() == id3.train(p.X, cell.row, 3, [0, 1, 2], p.domains).describe()


def test_id3_branch_counts_match_the_rows_routed_to_them():
    """A grown node's children get their class counts from the split's (value, class) table, ν
    rows added to the largest branch: every node's population and majority equal those of the
    training rows that reach it (ν following the most common child), over a whole tree."""
    rng = np.random.default_rng(11)
    X = rng.integers(0, 4, size=(300, 5))
    X[rng.random(X.shape) < 0.1] = NU
    X[:, 4] = np.abs(X[:, 4])  # a known class (ν rows are not trained on, which is tested apart)
    X[:, 4] = np.where(X[:, 4] == 3, X[:, 0] % 3, X[:, 4])  # a class that partly follows column 0
    tree = id3.train(X, 0, 4, [0, 1, 2, 3], [4] * 5)
    seen = 0

    def check(node, rows, parent_label):
        nonlocal seen
        counts = np.bincount(X[rows, 4], minlength=4)
        assert node.population == len(rows)
        assert node.label == (int(np.argmax(counts)) if len(rows) else parent_label)
        seen += 1
        if node.is_leaf:
            return
        values = X[rows, node.split]
        common = node.most_common_child()
        for v, child in node.children.items():
            check(child, rows[(values == v) | ((values == NU) & (v == common))], node.label)

    check(tree, np.arange(1, len(X)), 0)
    assert seen > 40  # a tree of many nodes was checked


def test_path_estimate_matches_the_full_partial_count_estimate():
    """Section 4.1.1's estimate of one node computed along its path (`path_estimate`, integer
    fractions, children's totals from aggregates) equals the full two-pass estimate, for every
    node, subtree root and row left out, counts with zeros included (the even split)."""
    from anonsql.protect.partial_counts import aggregates, estimate, path_estimate
    from anonsql.taxonomy.model import Taxonomy
    tax = Taxonomy.from_nested("t", {"Any": {"Low": [1, 2], "Mid": [3, {"High": [4, 5, 6]}], "7": None}})
    rng = np.random.default_rng(3)
    for _ in range(40):
        observed = rng.integers(0, 3, size=len(tax)) * (rng.random(len(tax)) < 0.6)
        agg = aggregates(tax, observed)
        members = [[m for m in range(len(tax)) if n in tax.lineage[m]] for n in range(len(tax))]
        assert agg.tolist() == [int(observed[m].sum()) for m in members]
        for less in [-1, *np.flatnonzero(observed).tolist()]:
            fewer = observed.copy()
            if less >= 0:
                fewer[less] -= 1
            for root in range(len(tax)):
                full = estimate(tax, fewer, root)
                for node in range(len(tax)):
                    num, den = path_estimate(tax, observed.tolist(), agg.tolist(), node, root, less)
                    assert F(num, den) == full[node], (observed, less, root, node)


def _g_microdata(rows: int, seed: int):
    """A -G microdata over two taxonomies (severity for three predictors, diagnosis for the
    target, column 4) and a taxonomy-less predictor, drawn at random; and a fresh copy of it."""
    from anonsql.protect.generalization import GeneralizedMicrodata
    from anonsql.taxonomy.model import Taxonomy
    sev = Taxonomy.from_nested("s", {"Any": {"Low": [1, 2], "Mid-High": [3, {"High": [4, 5]}]}})
    dx = Taxonomy.from_nested("d", {"All": {"G": ["a", "b", "c"], "H": ["d", "e"]}})
    leaves = lambda t: [n for n in range(len(t)) if not t.children[n]]  # noqa: E731
    rng = np.random.default_rng(seed)
    taxes = [sev, sev, None, sev, dx]
    X = np.column_stack([rng.choice(leaves(sev), rows), rng.choice(leaves(sev), rows), rng.integers(0, 3, rows),
                         rng.choice(leaves(sev), rows), rng.choice(leaves(dx), rows)])
    domains = [len(sev), len(sev), 3, len(sev), len(dx)]
    fresh = lambda X: GeneralizedMicrodata(X.copy(), domains, {4: [0, 1, 2, 3]}, k=2, taxonomies=taxes)  # noqa: E731
    return fresh(X), fresh, taxes, rng


def _same_as_recount(p, fresh, cells) -> None:
    """The scores, a subset of them and the exact pairwise comparisons equal those of a model
    counted afresh from the data."""
    recount = fresh(p.X)
    for c in cells:
        s, expect = p.g_scores(c), recount.g_scores(c)
        assert s == expect and p.g_scores(c) == expect
        if len(s) < 2:
            continue
        v, w = sorted(s)[:2]
        assert p.g_scores(c, (w, v)) == {w: s[w], v: s[v]}
        assert p.g_above(c, v, w) == (s[v] > s[w]) and p.g_above(c, w, v) == (s[w] > s[v])


def test_g_scores_kept_up_to_date_match_a_recount():
    """The -G naive Bayes statistics are kept up to date cell by cell and its scores reused until
    what they read changes: after every generalization, hidden cell and revert (targets and
    predictors, the scored tuple's own cells among them) the scores, a subset of them and the
    exact pairwise comparison equal those of a model counted afresh from the data."""
    p, fresh, taxes, rng = _g_microdata(80, 7)
    dx = taxes[4]
    cells = [Cell(r, 4, int(p.X[r, 4])) for r in (0, 1, 2)]
    for c in cells:
        p.set(c.row, 4, dx.generalize(c.value, 1))
    changes: list[tuple[int, int]] = []
    for step in range(60):
        r, col = int(rng.integers(0, 80)), int(rng.integers(0, 5))
        x = int(p.X[r, col])
        if step % 10 == 9:
            p.revert(changes, len(changes) // 2)
        elif x != NU and taxes[col] is not None and rng.random() < 0.8:
            p.put(r, col, taxes[col].generalize(x, 1), changes)
        elif x != NU:
            p.hide(r, col, changes)
        _same_as_recount(p, fresh, cells)


def test_g_scores_follow_the_scored_tuple():
    """A tuple's scores are kept with it (`Question`) and read again when its own row changes:
    its target one level up, two, back to the leaf (its own row then leaves the counts of its
    class), a predictor generalized, hidden, another hidden while one comes back (as many
    known predictors, other columns), each undone; and rows of the candidates' classes
    changed in between. Every time equal to a recount."""
    p, fresh, taxes, rng = _g_microdata(60, 11)
    dx, sev = taxes[4], taxes[0]
    i = next(r for r in range(60) if p.X[r, 2] == p.X[r, 3])  # the swapped predictors hold the same code
    c = Cell(i, 4, int(p.X[i, 4]))
    others = [r for r in range(60) if r != i and p.X[r, 4] in dx.leaves_under(dx.generalize(c.value, 1))]
    changes: list[tuple[int, int]] = []
    steps = [(4, dx.generalize(c.value, 1)), (4, dx.generalize(c.value, 2)), (4, c.value),
             (4, dx.generalize(c.value, 1)), (1, sev.generalize(int(p.X[i, 1]), 1)), (3, NU),
             (1, sev.generalize(int(p.X[i, 1]), 2))]
    for n, (col, code) in enumerate(steps):
        p.put(i, col, code, changes)
        _same_as_recount(p, fresh, [c])
        o = others[n % len(others)]
        p.put(o, 0, sev.generalize(int(p.X[o, 0]), 1), changes)  # a candidate class's counts change
        _same_as_recount(p, fresh, [c])
    p.revert(changes, changes.index((i, 3)))  # column 3 back, column 2 hidden: as many known predictors
    p.put(i, 2, NU, changes)
    _same_as_recount(p, fresh, [c])
    while changes:
        p.revert(changes, len(changes) - 1)
        _same_as_recount(p, fresh, [c])


def test_hid3_example_5_and_table_3_5():
    p, cell, c, values = bob_without_chest_pain()
    out = deletion.hid3(p, cell, Fixed(c[GAS]))
    assert out.status == "suppressed" and out.changes == [(BOB, I)]  # Step 7 only
    assert rows_of(p.X, values)[BOB] == ("?", "N", "Y", "?")
    assert p.tree(cell).predict(p.X[BOB]) == c[DYS]  # Step 8: node 4, palpitation = Y


def test_unneeded_and_fallback_deletion():
    p, cell, c, values = bob_problem()
    p.X[BOB, [I, CP, P]] = NU  # nothing left to predict from: the prior ties AP and GAS
    p.k = 2  # top-k = 2 (the option): Ω_2 = {AP, GAS} admits no guess, so Fixed is not asked
    assert deletion.decp(p, cell, Fixed(c[GAS])).status == "not_needed"
    # a tuple DROPP cannot save: every other class has p = 0, so no next best guess
    data = {k: list(v) for k, v in TABLE_1_2.items()}
    data["diagnosis"] = [AP if i < 6 else DYS for i in range(9)]
    data["indigestion"] = ["N"] * 6 + ["Y"] * 3
    p, cell, c, values = bob_problem(data)
    out = deletion.dropp(p, cell, Fixed(0))
    assert out.status == "deleted" and all(v == NU for v in p.X[BOB])
    assert sorted(out.changes) == [(BOB, I), (BOB, CP), (BOB, P)]


def test_revert_restores_everything_on_deletion():
    p, cell, c, values = bob_problem()
    before = p.X.copy()
    out = p.delete(cell, [])
    p.revert(out.changes)
    assert np.array_equal(p.X, before)


# --- several cells: the driver -------------------------------------------------------------

def test_several_cells_all_protected_at_the_end():
    X, values = coded(COLS)
    p = Microdata(X.copy(), [len(v) for v in values], {DX: [I, CP, P]})
    cells = [Cell(r, DX, int(X[r, DX])) for r in (1, 2, 8)]
    results = suppress_cells(p, cells, "dropp", deletion.SeededChance(0))
    for r in results:
        assert p.X[r.cell.row, DX] == NU
        if r.status != "deleted":
            assert not p.nb_predicts(r.cell)
    assert results[0].before["nb"] == [X[1, DX]]  # Bob was predicted with all three hidden
    assert all(r.runs >= 1 for r in results if r.status != "not_needed")


@pytest.mark.parametrize("method", ["decp", "incp", "dropp", "hid3", "hid3+decp", "hid3+incp", "hid3+dropp", "nrd"])
def test_every_method_leaves_no_cell_predicted(method):
    X, values = coded(COLS)
    p = Microdata(X.copy(), [len(v) for v in values], {DX: [I, CP, P]})
    cells = [Cell(r, DX, int(X[r, DX])) for r in range(9)]
    results = suppress_cells(p, cells, method, deletion.SeededChance(1))
    for r in results:
        if r.status == "deleted":
            assert (p.X[r.cell.row] == NU).all()
        else:
            assert r.status != "coin_kept"  # |V| = 3: no coin
            if "hid3" in method:
                assert not p.id3_predicts(r.cell)
            if method != "hid3":
                assert not p.nb_predicts(r.cell)
    if method == "nrd":
        assert all(r.status == "deleted" for r in results)


def test_coin_flip_only_for_binary_targets():
    X, values = coded(["indigestion", "chest_pain", "palpitation"])
    p = Microdata(X.copy(), [2, 2, 2], {P: [I, CP]})

    class Keep(Fixed):
        def suppress(self):
            return False

    before = p.X.copy()
    (kept,) = suppress_cells(p, [Cell(2, P, int(X[2, P]))], "dropp", Keep(0))  # John: predicted
    assert kept.status == "coin_kept" and kept.changes == [] and p.X[2, P] == NU
    before[2, P] = NU
    assert np.array_equal(p.X, before)  # only the confidential cell itself is hidden
    (skip,) = suppress_cells(p, [Cell(0, P, int(X[0, P]))], "dropp", Keep(0))  # Alice: not predicted
    assert skip.status == "not_needed"


# --- the job on both engines ---------------------------------------------------------------

from anonsql.api import protect_table  # noqa: E402
from anonsql.errors import AnonsqlError  # noqa: E402

from .conftest import table_rows  # noqa: E402


def symptoms_only(engine, **kw):
    return protect_table(engine, "records", "id", target="diagnosis", attrs=SYMPTOMS, **kw)


def test_job_dropp_reproduces_table_3_4(engine, make_table):
    make_table("records", TABLE_1_2)
    before = table_rows(engine, "records")
    r = symptoms_only(engine, rows=["2"], method="dropp", out="records_pub")
    assert r.out == "records_pub" and r.changes_table == "records_pub_changes"
    assert [c.query for c in r.checks] == ["protect/check_confidential", "protect/check_changes",
                                           "protect/changes_list", "protect/rows_kept", "protect/nb_counts"]
    assert table_rows(engine, "records") == before  # the source is untouched
    (cell,) = r.cells
    assert (cell.key, cell.column, cell.status, cell.suppressed, cell.deleted) == (
        2, "diagnosis", "suppressed", True, False)
    assert cell.prediction_before == {"nb": [AP], "id3": [AP]}
    assert cell.prediction_after["nb"] == [AP, GAS]  # the tie of Example 4, Step 6
    assert cell.next_best_guess == GAS and cell.side_effects == 2  # the only candidate (Def. 3.2)
    bob = [row for row in table_rows(engine, "records_pub") if row[0] == 2][0]
    assert bob[4:] == (None, "Y", None, None)  # Table 3.4
    assert {(c["key"], c["column_name"], c["old_value"], c["new_value"]) for c in r.changes} == {
        (2, "indigestion", "N", None), (2, "palpitation", "Y", None), (2, "diagnosis", AP, None)}
    assert r.changed_cells == 3
    assert sorted(table_rows(engine, "records_pub_changes")) == sorted(
        (c["key"], c["column_name"], c["old_value"], c["new_value"]) for c in r.changes)


def test_job_decp_in_place_several_cells(engine, make_table):
    make_table("records", TABLE_1_2)
    r = symptoms_only(engine, rows=["2", "4", "9"], method="decp", in_place=True, seed=3)
    assert r.in_place and r.out == "records" and r.changes_table == "records_changes"
    rows = {row[0]: row for row in table_rows(engine, "records")}
    assert all(rows[k][7] is None for k in (2, 4, 9))
    assert r.changed_cells == len(table_rows(engine, "records_changes")) >= 3
    assert all(c.status in ("suppressed", "not_needed", "deleted") for c in r.cells)


def test_job_hid3_and_hybrid_are_checked_by_id3(engine, make_table):
    make_table("records", TABLE_1_2)
    for method, out in (("hid3", "h"), ("hid3+dropp", "hd")):
        r = symptoms_only(engine, rows=["2", "6"], method=method, out=out)
        assert [c.query for c in r.checks][-1] == "protect/tuple_counts"  # the ID3 re-check
        assert all(set(c.prediction_after) == {"nb", "id3"} for c in r.cells)
        for c in r.cells:
            if c.status != "deleted":
                assert c.prediction_after["id3"] != [AP]


def test_job_nrd_and_row_removal(engine, make_table):
    make_table("records", TABLE_1_2)
    r = protect_table(engine, "records", "id", target="diagnosis", rows=["2"], method="nrd", out="a")
    assert r.cells[0].deleted and r.deleted_tuples == 1 and not r.rows_removed
    bob = [row for row in table_rows(engine, "a") if row[0] == 2][0]
    assert bob == (2,) + (None,) * 7  # NRD: every cell but the key is NULL, the row stays
    assert r.changed_cells == 7
    r = protect_table(engine, "records", "id", target="diagnosis", rows=["2"], method="nrd", out="b",
                      delete_rows=True)
    assert r.rows_removed and 2 not in [row[0] for row in table_rows(engine, "b")]
    assert len(table_rows(engine, "b")) == 8 and len(table_rows(engine, "b_changes")) == 7


def test_job_cells_over_two_columns_default_attrs(engine, make_table):
    make_table("records", TABLE_1_2)
    r = protect_table(engine, "records", "id", cells=[("2", "diagnosis"), ("7", "chest_pain")],
                      method="dropp", out="o", seed=5)
    assert r.attrs["diagnosis"] == ["zipcode", "gender", "age", "indigestion",
                                                        "chest_pain", "palpitation"]
    rows = {row[0]: row for row in table_rows(engine, "o")}
    assert rows[2][7] is None and rows[7][5] is None


@pytest.mark.slow
def test_job_seeded_runs_repeat(engine, make_table):
    make_table("records", TABLE_1_2)
    a = protect_table(engine, "records", "id", target="diagnosis", rows=[str(i) for i in range(1, 10)],
                      method="incp", out="x1", seed=7)
    b = protect_table(engine, "records", "id", target="diagnosis", rows=[str(i) for i in range(1, 10)],
                      method="incp", out="x2", seed=7)
    assert a.changes == b.changes and table_rows(engine, "x1") == table_rows(engine, "x2")


@pytest.mark.parametrize("kwargs, message", [
    (dict(key="nope", target="diagnosis", rows=["2"]), "unknown column 'nope'"),
    (dict(key="gender", target="diagnosis", rows=["2"]), "does not identify rows"),
    (dict(key="id", target="diagnosis", rows=["42"]), "no row with id = 42"),
    (dict(key="id", target="nope", rows=["2"]), "unknown column 'nope'"),
    (dict(key="id", target="id", rows=["2"]), "key column 'id' cannot be a confidential target"),
    (dict(key="id", target="diagnosis", rows=["2"], method="magic"), "unknown method 'magic'"),
    (dict(key="id", cells=[("2", "nope")]), "unknown column 'nope'"),
    (dict(key="id", target="diagnosis", rows=["2", "2"]), "listed twice"),
    (dict(key="id", target="diagnosis"), "--target and --rows, or with --cells"),
    (dict(key="id", target="diagnosis", rows=["2"], attrs=["diagnosis"]), "also listed as attributes"),
    (dict(key="id", target="diagnosis", rows=["2"], top_k=1), "top_k must be an integer >= 2"),
    (dict(key="id", target="diagnosis", rows=["2"], seed=-1), "seed must be an integer >= 0"),
])
def test_bad_input_changes_nothing(engine, make_table, kwargs, message):
    make_table("records", TABLE_1_2)
    before = table_rows(engine, "records")
    args = {"method": "dropp", **kwargs}
    with pytest.raises(AnonsqlError, match=message):
        protect_table(engine, "records", args.pop("key"), out="o", **args)
    with pytest.raises(AnonsqlError, match="table not found"):
        protect_table(engine, "nope", "id", target="diagnosis", rows=["2"])
    assert table_rows(engine, "records") == before
    for name in ("o", "o_changes", "records_protected"):
        with pytest.raises(AnonsqlError, match="table not found"):
            table_rows_or_error(engine, name)


def table_rows_or_error(engine, name):
    from anonsql.catalog import get_table
    return get_table(engine, name)


def test_existing_output_needs_replace(engine, make_table):
    make_table("records", TABLE_1_2)
    symptoms_only(engine, rows=["2"], method="dropp")
    with pytest.raises(AnonsqlError, match="already exists"):
        symptoms_only(engine, rows=["2"], method="dropp")
    r = symptoms_only(engine, rows=["2"], method="dropp", replace=True)
    assert r.out == "records_protected"


# --- enhanced variants (Section 3.3) --------------------------------------------------------

from anonsql.protect import enhanced  # noqa: E402


def test_e_decp_on_one_cell_matches_decp_table_3_2():
    p, cell, c, values = bob_problem()
    (out,) = enhanced.e_decp(p, [cell], Fixed(c[GAS]))
    assert out.status == "suppressed" and out.changes == [(6, I), (5, CP)]
    assert rows_of(p.X, values) == expected(TABLE_3_2)


def test_e_dropp_on_one_cell_matches_dropp_table_3_4():
    p, cell, c, values = bob_problem()
    (out,) = enhanced.e_dropp(p, [cell], Fixed(c[GAS]))
    assert out.status == "suppressed" and out.changes == [(BOB, I), (BOB, P)]  # average ratios 2, 3/2, 1
    assert rows_of(p.X, values) == expected(TABLE_3_4)


def random_microdata(seed: int, rows: int = 60, cols: int = 5, card: int = 3):
    """Correlated categorical data: the class is a noisy function of the first columns."""
    rng = np.random.default_rng(seed)
    X = rng.integers(card, size=(rows, cols))
    noise = rng.random(rows) < 0.2
    X[:, -1] = np.where(noise, rng.integers(card, size=rows), (X[:, 0] + X[:, 1]) % card)
    return X


@pytest.mark.parametrize("method, plain", [("e-decp", "decp"), ("e-dropp", "dropp")])
def test_enhanced_protect_every_cell(method, plain):
    X = random_microdata(4)
    t = X.shape[1] - 1
    preds = {j: [a for a in range(X.shape[1]) if a != j] for j in range(X.shape[1])}
    if method == "e-decp":  # one attribute, one value: the cells of class 0 the NB predicts
        cells = [Cell(r, t, 0) for r in np.flatnonzero(X[:, t] == 0)[:8]]
    else:  # one tuple, several attributes
        cells = [Cell(3, j, int(X[3, j])) for j in (0, 1, t)]
    changed = {}
    for name in (method, plain):
        p = Microdata(X.copy(), [3] * X.shape[1], preds)
        results = suppress_cells(p, cells, name, deletion.SeededChance(2))
        for r in results:
            assert p.X[r.cell.row, r.cell.target] == NU
            assert r.status == "deleted" or not p.nb_predicts(r.cell)
        changed[name] = int((p.X != X).sum())
    assert changed[method] > 0 and changed[plain] > 0


def e_decp_stepwise(p, cells, chance):
    """Figure 3.7 as written, one hide then every pending cell's naive Bayes again: the reference
    for `enhanced.e_decp`, which counts each value's hides upfront."""
    t, conf = cells[0].target, cells[0].value
    outs, pending = enhanced._pending(p, cells, chance)
    primary: dict = {}
    for i in pending:
        for a in (a for a in p.attrs[t] if p.X[cells[i].row, a] != NU):
            primary[(a, int(p.X[cells[i].row, a]))] = primary.get((a, int(p.X[cells[i].row, a])), 0) + 1
    secondary = {(a, v): p.counts(t).pairs[a][v][conf] for a, v in primary}
    for a, v in sorted(primary, key=lambda av: (-primary[av], secondary[av], av)):
        count = secondary[(a, v)]
        for r in p.select({t: conf, a: v})[0]:
            if not pending or count <= 1:
                break
            p.hide(r, a, [])
            for i in pending:
                outs[i].changes.append((r, a))
            count -= 1
            pending = {i: g for i, g in pending.items() if p.above(cells[i], conf, g)}
    return outs


def test_e_decp_counted_hides_match_the_stepwise_figure():
    hid = 0
    for seed in range(8):
        X = random_microdata(seed, rows=120)
        t = X.shape[1] - 1
        cells = [Cell(int(r), t, 0) for r in np.flatnonzero(X[:, t] == 0)[:10]]
        runs = []
        for run in (enhanced.e_decp, e_decp_stepwise):
            p = Microdata(X.copy(), [3] * X.shape[1], {t: list(range(t))})
            for c in cells:
                p.hide(c.row, t, [])
            outs = run(p, cells, deletion.SeededChance(seed))
            runs.append(([(o.status, o.changes, o.next_best) for o in outs], p.X))
        assert runs[0][0] == runs[1][0] and np.array_equal(runs[0][1], runs[1][1])
        hid += any(o[1] for o in runs[0][0])
    assert hid >= 3  # the comparison covers runs that hide something


@pytest.mark.parametrize("method", ["decp", "incp", "dropp", "hid3", "nrd", "hid3+decp", "hid3+incp", "e-decp",
                                    "e-dropp"])
def test_rows_fetched_when_needed_decide_as_in_memory(method):
    """The job's path (rows.FetchedRows: only the confidential rows and the selected ones held,
    counts from distinct tuples) makes exactly the decisions of the whole matrix in memory."""
    from anonsql.protect.rows import FetchedRows

    X = random_microdata(5, rows=80)
    t = X.shape[1] - 1
    preds = {t: list(range(t))}
    cells = [Cell(r, t, int(X[r, t])) for r in (np.flatnonzero(X[:, t] == 0)[:4] if method == "e-decp"
                                                 else (2, 7, 11, 30))]
    keys = [f"k{i:03d}" for i in range(len(X))]
    memory = Microdata(X.copy(), [3] * X.shape[1], preds)
    rows, asked = fetched(X, keys, [c.row for c in cells])
    db = Microdata(rows, [3] * X.shape[1], preds)
    a = suppress_cells(memory, cells, method, deletion.SeededChance(1))
    b = suppress_cells(db, [Cell(keys[c.row], c.target, c.value) for c in cells], method, deletion.SeededChance(1))
    assert [(r.status, [(keys[i], j) for i, j in r.changes], r.next_best, r.before, r.after) for r in a] == \
        [(r.status, r.changes, r.next_best, r.before, r.after) for r in b]
    changed = [(keys[i], j, int(X[i, j]), int(memory.X[i, j])) for i, j in np.argwhere(memory.X != X).tolist()]
    assert isinstance(rows, FetchedRows) and rows.changed() == changed
    assert len(rows.live) <= len(cells) + len(changed)  # never the whole table
    if method in ("decp", "incp"):
        assert asked  # side effects were looked for by WHERE


def test_metrics_of_table_3_4(engine, make_table):
    """Section 2.4 on the DROPP run of Example 4, against hand-computed values."""
    import math
    make_table("records", TABLE_1_2)
    r = symptoms_only(engine, rows=["2"], method="dropp")
    m = r.metrics
    assert m["direct_distance"] == 3
    # KL: indigestion N 4 -> 3 of 9, palpitation Y 7 -> 6, diagnosis AP 4 -> 3
    kl = 4 / 9 * math.log2(4 / 3) + 7 / 9 * math.log2(7 / 6) + 4 / 9 * math.log2(4 / 3)
    assert m["sum_kl_distance"] == pytest.approx(kl)
    # each hidden cell is the only ν of its column: H = -(1/9) log2(1/1) = 0
    assert m["sum_conditional_entropy"] == pytest.approx(0.0)
    assert m["avg_change_mutual_information"] > 0


def test_source_tuples_fetched_once(engine, make_table, monkeypatch):
    """The source's distinct tuples leave the database once per run: the algorithm's counts and
    the metrics' distributions before the change share one fetch, and the metrics stay those of
    Table 3.4."""
    from anonsql.protect import stats

    make_table("records", TABLE_1_2)
    fetched = []
    real = stats.tuple_table

    def spy(engine, table, columns):
        fetched.append(table.name)
        return real(engine, table, columns)
    monkeypatch.setattr(stats, "tuple_table", spy)
    r = symptoms_only(engine, rows=["2"], method="dropp", out="records_pub")
    assert fetched.count("records") == 1
    assert len(fetched) == 2  # and the output's, for the metrics after the change
    assert r.metrics["direct_distance"] == 3 and r.metrics["avg_change_mutual_information"] > 0


def test_metrics_math():
    from anonsql.protect import metrics
    assert metrics.kl_distance({"a": 2, "b": 2}, {"a": 2, "b": 1}, 4) == pytest.approx(0.5)
    assert metrics.kl_distance({"a": 1}, {}, 4) == float("inf")
    assert metrics.conditional_entropy({"a": 1, "b": 1}, 2, 4) == pytest.approx(0.5)  # -2·(1/4)·log2(1/2)
    assert metrics.mutual_information({("x", "x"): 2, ("y", "y"): 2}, {"x": 2, "y": 2}, {"x": 2, "y": 2}, 4) == 1.0
    assert metrics.average_change_in_mi([1.0, 0.0, 2.0], [0.5, 0.0, 2.0], 3) == pytest.approx((2 + 1 + 1) / 3)


@pytest.mark.parametrize("in_place", [False, True])
def test_failed_check_rolls_everything_back(engine, make_table, monkeypatch, in_place):
    """An algorithm that claims success without hiding anything is caught by the SQL check."""
    from anonsql.protect import job
    from anonsql.protect.suppress import CellResult

    def lazy(data, cells, method, chance, **kw):
        return [CellResult(c, status="suppressed") for c in cells]

    monkeypatch.setattr(job, "protect_cells", lazy)
    make_table("records", TABLE_1_2)
    before = table_rows(engine, "records")
    with pytest.raises(AnonsqlError, match=r"verification failed.*confidential cell hidden or generalized: "
                       r"1 left as it was: cell \(id = 2, "):
        symptoms_only(engine, rows=["2"], method="dropp", in_place=in_place)
    assert table_rows(engine, "records") == before
    for name in ("records_protected", "records_changes", "records_protected_changes"):
        with pytest.raises(AnonsqlError, match="table not found"):
            table_rows_or_error(engine, name)


def test_job_enhanced_methods_and_text_keys(engine, make_table):
    data = dict(TABLE_1_2, id=[f"p{i}" for i in range(1, 10)])
    make_table("records", data)
    r = protect_table(engine, "records", "id", target="diagnosis", rows=["p2", "p6", "p8"], method="e-decp",
                      attrs=SYMPTOMS, out="e1")  # three Angina Pectoris cells: e-DECP's precondition
    assert {c.key for c in r.cells} == {"p2", "p6", "p8"}
    r = protect_table(engine, "records", "id", cells=[("p2", "diagnosis"), ("p2", "chest_pain")],
                      method="e-dropp", out="e2")  # one tuple: e-DROPP's precondition
    bob = {row[0]: row for row in table_rows(engine, "e2")}["p2"]
    assert bob[5] is None and bob[7] is None


def test_cells_csv(tmp_path):
    from anonsql.protect import read_cells_csv
    path = tmp_path / "cells.csv"
    path.write_text("key,column\n2,diagnosis\n\n7, chest_pain\n")
    assert read_cells_csv(str(path)) == [("2", "diagnosis"), ("7", "chest_pain")]
    path.write_text("2,diagnosis,extra\n")
    with pytest.raises(AnonsqlError, match="key,column"):
        read_cells_csv(str(path))
    with pytest.raises(AnonsqlError, match="cannot read"):
        read_cells_csv(str(tmp_path / "missing.csv"))


def test_cli_protect(db, engine, make_table, tmp_path, capsys):
    import json

    from anonsql.cli import main
    make_table("records", TABLE_1_2)
    report = tmp_path / "r.json"
    assert main(["protect", "--db", db, "--table", "records", "--key", "id", "--target", "diagnosis",
                 "--rows", "2", "--method", "dropp", "--attrs", "indigestion,chest_pain,palpitation",
                 "--out", "pub", "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert json.loads(report.read_text())["cells"][0]["status"] == "suppressed"
    assert "id = 2, diagnosis: suppressed" in out and AP not in out  # no confidential value in the summary
    assert main(["protect", "--db", db, "--table", "records", "--key", "id", "--target", "diagnosis",
                 "--rows", "2", "--method", "magic"]) == 2
    assert "'magic' is not one of" in capsys.readouterr().err
    cells = tmp_path / "cells.csv"
    cells.write_bytes(b"\xff\xfe\x00bad")
    assert main(["protect", "--db", db, "--table", "records", "--key", "id", "--cells", str(cells)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot read cells file" in err[0]


def _fail_verification(monkeypatch):
    """Make protect's independent checks record one failing check."""
    from anonsql.protect import verify

    def failing(engine, report, *args, **kwargs):
        report.check("injected failure", False, "protect/check_confidential", "for the test")

    monkeypatch.setattr(verify, "run", failing)


@pytest.mark.parametrize("in_place", [False, True])
def test_failed_verification_raises_and_leaves_nothing(engine, make_table, monkeypatch, in_place):
    from anonsql.errors import VerificationError
    make_table("records", TABLE_1_2)
    before = table_rows(engine, "records")
    _fail_verification(monkeypatch)
    with pytest.raises(VerificationError, match="injected failure: for the test") as err:
        symptoms_only(engine, rows=["2"], method="dropp", in_place=in_place, out=None if in_place else "pub")
    assert [c.name for c in err.value.checks if not c.passed] == ["injected failure"]
    assert table_rows(engine, "records") == before
    for name in ("pub", "pub_changes", "records_changes"):
        with pytest.raises(AnonsqlError, match="table not found"):
            table_rows_or_error(engine, name)


@pytest.mark.parametrize("in_place", [False, True])
def test_cli_failed_verification_is_one_line_exit_2(db, engine, make_table, monkeypatch, capsys, in_place):
    from anonsql.cli import main
    make_table("records", TABLE_1_2)
    before = table_rows(engine, "records")
    _fail_verification(monkeypatch)
    where = ["--in-place"] if in_place else ["--out", "pub"]
    assert main(["protect", "--db", db, "--table", "records", "--key", "id", "--target", "diagnosis",
                 "--rows", "2", "--quiet", *where]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("anonsql protect: error: verification failed")
    assert table_rows(engine, "records") == before
    for name in ("pub", "pub_changes", "records_changes"):
        with pytest.raises(AnonsqlError, match="table not found"):
            table_rows_or_error(engine, name)


@pytest.mark.parametrize("method, delete_rows", [("dropp", False), ("nrd", True)])
def test_emitted_script_runs_on_duckdb_and_ends_with_checks(tmp_path, method, delete_rows):
    """--emit-sql --dry-run: a script that, run by DuckDB itself, writes what the job writes and
    ends with verification queries that return no row."""
    import duckdb
    import pandas as pd

    from anonsql.data.loading import write_frame
    from anonsql.engine import connect

    path = str(tmp_path / "s.duckdb")
    eng = connect(path, create=True)
    write_frame(eng, pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in TABLE_1_2.items()}).convert_dtypes(),
                "records")
    script = tmp_path / "run.sql"
    r = protect_table(eng, "records", "id", target="diagnosis", rows=["2", "6"], method=method, attrs=SYMPTOMS,
                      out="pub", delete_rows=delete_rows, emit_sql=str(script), execute=False)
    assert not r.ok and not r.checks and "dry run" in r.notes[0]
    from anonsql.catalog import find_table
    assert find_table(eng, "pub") is None  # nothing written
    protect_table(eng, "records", "id", target="diagnosis", rows=["2", "6"], method=method, attrs=SYMPTOMS,
                  out="job", delete_rows=delete_rows)
    job = table_rows(eng, "job")
    eng.close()
    text = script.read_text()
    assert text.startswith("-- anonsql protect: records -> pub") and "PRIVATE" in text
    assert 'INSERT INTO "anonsql_protect_decisions" ("row_key", "column_name", "new_value") VALUES\n' in text
    body, checks = text.split("-- Verification:")
    code = "\n".join(x for x in checks.splitlines()[1:] if not x.strip().startswith(("--", "/*")))
    queries = [q.strip() for q in code.split(";") if q.strip()]
    assert len(queries) >= 2 and all(q.startswith("SELECT") for q in queries)
    con = duckdb.connect(path)
    con.execute(body)
    for q in queries:
        assert con.execute(q).fetchall() == []
    assert sorted(con.execute('SELECT * FROM pub').fetchall(), key=lambda r: r[0]) == \
        sorted(job, key=lambda r: r[0])
    con.close()


def test_random_next_best_guess_draws_every_admissible_value():
    """Section 3.4: the default draws among ALL admissible values (0 < p(v|d) < p(conf|d));
    a bounded top-k (the option) would always give the second most probable one."""
    assert next_best_candidates([5, 4, 3, 2], 0) == [1, 2, 3]
    assert next_best_candidates([5, 4, 3, 2], 0, 2) == [1]
    chance = deletion.SeededChance(0)
    drawn = {chance.next_best(next_best_candidates([5, 4, 3, 2], 0)) for _ in range(200)}
    assert drawn == {1, 2, 3}


def test_count_tables_follow_hide_and_revert():
    """The incremental naive Bayes counts give class_scores exactly after every change."""
    X = random_microdata(5)
    t = X.shape[1] - 1
    preds = {t: list(range(t))}
    p = Microdata(X.copy(), [3] * X.shape[1], preds)
    cell = Cell(0, t, int(X[0, t]))
    changes: list = []
    for r, c in [(0, t), (1, 0), (2, t), (3, 1), (1, t)]:
        p.hide(r, c, changes)
        assert p.scores(cell) == class_scores(p.X, 0, t, preds[t], 3)
        s = p.scores(cell)
        assert all(p.above(cell, v, w) == (s[v] > s[w]) for v in range(3) for w in range(3))
    p.revert(changes, 2)
    assert p.scores(cell) == class_scores(p.X, 0, t, preds[t], 3)


@pytest.mark.parametrize("seed", range(4))
def test_drops_above_counts_decp_hides_exactly(seed):
    """DECP hides a predictor's value in one step (`drops_above`): as many as lowering N(v, x_a)
    one at a time while p(v|d) > p(w|d) allows, for a known and a hidden own target."""
    X = random_microdata(seed)
    t = X.shape[1] - 1
    p = Microdata(X.copy(), [3] * X.shape[1], {t: list(range(t))})
    counts, seen = p.counts(t), set()
    for own in (int(X[0, t]), NU):
        row = p.row(0).tolist()
        row[t] = own
        for v in range(3):
            for w in range(3):
                for a in (a for a in range(t) if row[a] != NU):
                    hits, drops = counts.pairs[a][row[a]], 0
                    saved = hits[v]
                    while hits[v] - (v == own) > 0 and counts.above(row, v, w):
                        hits[v] -= 1
                        drops += 1
                    hits[v] = saved
                    assert counts.drops_above(row, v, w, a) == drops
                    seen.add(drops > 0)
    assert seen == {True, False}

# --- issue 14: direct identifiers, --show-values, --cells with a header ------------------------

SECRET = "0123456789abcdef-protect-test-key"
PEOPLE = dict(TABLE_1_2, name=[f"person {i}" for i in range(1, 10)], ssn=[f"{i:03d}-55-{i:04d}" for i in range(1, 10)])


def _hmac(value) -> str:
    import hashlib
    import hmac
    return hmac.new(SECRET.encode(), str(value).encode(), hashlib.sha256).hexdigest()


def test_identifier_warning_names_unique_columns_and_notes_the_key(engine, make_table):
    make_table("records", PEOPLE)
    r = symptoms_only(engine, rows=["2"], method="dropp", out="pub")
    warned = [n for n in r.warnings if "names a row on its own" in n]  # 9 rows: zipcode and age are nearly unique
    assert [n.split("'")[1] for n in warned] == ["zipcode", "age", "name", "ssn"]
    r = symptoms_only(engine, rows=["2"], method="dropp", out="pub", replace=True, qi=["zipcode", "gender", "age"])
    warned = [n for n in r.warnings if "names a row on its own" in n]  # quasi-identifiers are not direct ones
    assert [n.split("'")[1] for n in warned] == ["name", "ssn"]  # the key is not warned about as such...
    assert any(n.startswith("column 'id' is the row key: it identifies every row of pub by design")
               for n in r.notes)  # ...but noted: protect keeps it by design
    make_table("plain", TABLE_1_2)
    r = protect_table(engine, "plain", "id", target="diagnosis", rows=["2"], attrs=SYMPTOMS, out="pub2",
                      qi=["zipcode", "gender", "age"])
    assert not [n for n in r.warnings if "names a row on its own" in n]


@pytest.mark.parametrize("in_place", [False, True])
def test_drop_and_pseudonymize_direct_identifiers(engine, make_table, monkeypatch, in_place):
    from anonsql.catalog import get_table
    monkeypatch.setenv("ANONSQL_PSEUDONYM_KEY", SECRET)
    make_table("records", PEOPLE)
    r = protect_table(engine, "records", "id", target="diagnosis", rows=["2"], method="dropp", drop="name",
                      pseudonymize=["SSN"], in_place=in_place, out=None if in_place else "pub",
                      qi=["zipcode", "gender", "age"])
    out = "records" if in_place else "pub"
    assert r.ok and r.dropped == ["name"] and r.pseudonymized == ["ssn"]
    assert "name" not in r.attrs["diagnosis"] and "ssn" in r.attrs["diagnosis"]  # a dropped column is read by none
    names = [c.name for c in r.checks]
    assert "dropped columns gone" in names
    assert ("no original value left in the pseudonymized columns" in names) == (not in_place)
    assert get_table(engine, out).column_names == ["id", *[c for c in TABLE_1_2 if c != "id"], "ssn"]
    rows = {row[0]: row for row in table_rows(engine, out)}
    assert {k: row[-1] for k, row in rows.items()} == {k: _hmac(s) for k, s in zip(PEOPLE["id"], PEOPLE["ssn"])}
    assert rows[2][7] is None  # Bob's diagnosis is hidden
    assert not [n for n in r.warnings if "names a row on its own" in n]  # nothing left to warn about
    summary = r.summary()
    assert "dropped direct identifiers: name" in summary and "pseudonymized (keyed HMAC-SHA256): ssn" in summary
    assert SECRET not in summary + r.to_json()


@pytest.mark.parametrize("kwargs, message", [
    (dict(drop="id"), r"column 'id' is the row key \(--key\): it cannot be dropped or pseudonymized"),
    (dict(pseudonymize="id"), r"column 'id' is the row key \(--key\): it cannot be dropped or pseudonymized"),
    (dict(drop="diagnosis"), "column 'diagnosis' is a confidential target: it cannot be dropped or pseudonymized"),
    (dict(pseudonymize="Diagnosis"), "column 'diagnosis' is a confidential target: it cannot be dropped"),
    (dict(drop="chest_pain", attrs=SYMPTOMS), "column 'chest_pain' is an attribute the classifiers read"),
    (dict(drop="name", pseudonymize="name"), "listed in both --drop and --pseudonymize"),
    (dict(drop="nope"), "unknown column 'nope'"),
    (dict(key_file="k.txt"), "--key-file is the key of --pseudonymize"),
])
def test_identifier_options_refuse_bad_columns(engine, make_table, monkeypatch, kwargs, message):
    monkeypatch.setenv("ANONSQL_PSEUDONYM_KEY", SECRET)
    make_table("records", PEOPLE)
    before = table_rows(engine, "records")
    with pytest.raises(AnonsqlError, match=message):
        protect_table(engine, "records", "id", target="diagnosis", rows=["2"], out="o", **kwargs)
    monkeypatch.delenv("ANONSQL_PSEUDONYM_KEY")
    with pytest.raises(AnonsqlError, match="--pseudonymize needs a secret key"):
        protect_table(engine, "records", "id", target="diagnosis", rows=["2"], out="o", pseudonymize="ssn")
    assert table_rows(engine, "records") == before
    for name in ("o", "o_changes"):
        with pytest.raises(AnonsqlError, match="table not found"):
            table_rows_or_error(engine, name)


def test_emitted_script_drops_and_pseudonymizes_without_the_key(engine, make_table, tmp_path, monkeypatch):
    monkeypatch.setenv("ANONSQL_PSEUDONYM_KEY", SECRET)
    make_table("records", PEOPLE)
    script = tmp_path / "run.sql"
    protect_table(engine, "records", "id", target="diagnosis", rows=["2"], attrs=SYMPTOMS, out="pub",
                  drop="name", pseudonymize="ssn", emit_sql=str(script), execute=False)
    text = script.read_text()
    body, checks = text.split("-- Verification:")
    assert "drop the direct identifier name (sql/common/drop_column.sql)" in body
    assert "the key is NOT in this script" in body and SECRET not in text


def test_cli_show_values_and_identifiers(db, engine, make_table, tmp_path, capsys):
    import json

    from anonsql.cli import main
    make_table("records", PEOPLE)
    key = tmp_path / "key.txt"
    key.write_text(SECRET + "\n")
    base = ["protect", "--db", db, "--table", "records", "--key", "id", "--target", "diagnosis", "--rows", "2",
            "--attrs", ",".join(SYMPTOMS)]
    reports = []
    for n, extra in enumerate([[], ["--show-values"]]):
        reports.append(tmp_path / f"r{n}.json")
        assert main([*base, "--out", f"pub{n}", "--report", str(reports[-1]), *extra]) == 0
        out = capsys.readouterr().out
        if extra:  # asked: the hidden cell's original value is printed
            assert f"id = 2, diagnosis: suppressed (original value {AP!r})" in out
            assert "original values not shown" not in out
        else:  # the summary never prints a confidential value unless asked
            assert AP not in out and "original values not shown (--show-values prints them" in out
        assert "column 'name' is unique" in out and "column 'id' is the row key" in out
    a, b = (json.loads(p.read_text()) for p in reports)
    for d in (a, b):
        d.pop("seconds"), d.pop("out"), d.pop("changes_table"), d.pop("notes"), d.pop("warnings")
    assert a == b and "show_values" not in a  # the JSON report is the same with or without --show-values
    assert {(c["key"], c["column_name"], c["old_value"]) for c in a["changes"]} >= {(2, "diagnosis", AP)}
    assert main([*base, "--out", "pub2", "--drop", "name", "--pseudonymize", "ssn", "--key-file", str(key)]) == 0
    out = capsys.readouterr().out
    assert "dropped direct identifiers: name" in out and SECRET not in out
    assert main([*base, "--out", "pub3", "--drop", "diagnosis"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["anonsql protect: error: column 'diagnosis' is a confidential target: it cannot be dropped "
                   "or pseudonymized"]


def test_cli_cells_csv_with_header(db, engine, make_table, tmp_path, capsys):
    from anonsql.cli import main
    make_table("records", TABLE_1_2)
    cells = tmp_path / "cells.csv"
    cells.write_text("key,column\n2,diagnosis\n7,chest_pain\n")
    assert main(["protect", "--db", db, "--table", "records", "--key", "id", "--cells", str(cells),
                 "--out", "pub", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "id = 2, diagnosis:" in out and "id = 7, chest_pain:" in out
    rows = {row[0]: row for row in table_rows(engine, "pub")}
    assert rows[2][7] is None and rows[7][5] is None


@pytest.mark.parametrize("kwargs", [dict(method="dropp", rows=["2"]), dict(method="hid3", rows=["2", "6"]),
                                    dict(method="decp", rows=["2", "4", "9"], seed=3),
                                    dict(method="nrd", rows=["2"], delete_rows=True)])
def test_ctas_path_same_as_update(engine, make_table, monkeypatch, kwargs):
    """The path of an engine without UPDATE (Spark): ONE CREATE TABLE AS SELECT over the decisions
    keyed by the row key publishes what copy + UPDATE ... FROM publishes, same changes and report."""
    make_table("records", TABLE_1_2)
    by_update = symptoms_only(engine, out="by_update", **kwargs).to_dict()
    monkeypatch.setattr(engine, "supports_update", False)
    by_ctas = symptoms_only(engine, out="by_ctas", **kwargs).to_dict()
    for r in (by_update, by_ctas):
        r.pop("seconds"), r.pop("out"), r.pop("changes_table"), r.pop("notes"), r.pop("warnings")
    assert by_ctas == by_update
    assert table_rows(engine, "by_ctas") == table_rows(engine, "by_update")
    assert table_rows(engine, "by_ctas_changes") == table_rows(engine, "by_update_changes")


# ---------------------------------------------------------------- k-anonymity kept through protect (issue 29)

from anonsql import check, k_anonymize, load_dataset  # noqa: E402
from anonsql.protect import keep_k  # noqa: E402

ADULT_QI = ["age", "workclass", "education", "marital_status", "occupation", "race", "sex"]
BREAKING = ["1", "3", "5", "9", "11"]  # dropp hides QI cells of rows 1 and 3, leaving a class of 4 behind


@pytest.fixture
def adult_k5(db):
    """Issue 29's composition: kanon's 5-anonymous output of Adult, the input of protect."""
    load_dataset(db, "adult-kh", "adult", replace=True)
    assert k_anonymize(db, "adult", ADULT_QI, "income", 5, out="a5").ok
    return db


def _hidden(engine, changes):
    return {(str(k), c) for k, c, _old, new in table_rows(engine, changes) if new is None}


def test_protect_keeps_k_anonymity_with_qi_and_k(adult_k5, engine):
    """Without --k the hidden cells move rows of a5 out of their classes: the output is not
    5-anonymous and the report warns; with --qi/--k further QI cells are hidden (MAR cost), the
    output is 5-anonymous by the independent check, and the hidden cells are a superset of the
    run without --k (the method's own, the confidential ones among them)."""
    db = adult_k5
    plain = protect_table(db, "a5", "id", target="income", rows=BREAKING, method="dropp", qi=ADULT_QI, out="p")
    assert plain.ok and plain.input_k >= 5 and not check(db, "p", ADULT_QI, 5).ok
    assert [w for w in plain.warnings if w.startswith(f"p is not {plain.input_k}-anonymous over age, workclass")]
    assert "--k" in plain.warnings[0]
    kept = protect_table(db, "a5", "id", target="income", rows=BREAKING, method="dropp", qi=ADULT_QI, k=5, out="pk")
    assert kept.ok and check(db, "pk", ADULT_QI, 5).ok and not kept.warnings
    assert ("k-anonymity", "common/violations_summary") in {(c.name, c.query) for c in kept.checks}
    asked, more = _hidden(engine, "p_changes"), _hidden(engine, "pk_changes")
    assert {(r, "income") for r in BREAKING} <= asked < more  # the confidential cells, the method's, then more
    assert kept.k_cells == len(more - asked) > 0 and all(c in ADULT_QI for _, c in more - asked)
    assert f"kept 5-anonymity over {', '.join(ADULT_QI)}: {kept.k_cells} more" in kept.summary()
    # only cells hidden: every other cell of pk is a5's
    changed = {(r, c) for r, c in more}
    a5 = {str(row[0]): row for row in table_rows(engine, "a5")}
    cols = [c for c in catalog_columns(engine, "a5")]
    for row in table_rows(engine, "pk"):
        for c, v, was in zip(cols, row, a5[str(row[0])]):
            assert v == was or ((str(row[0]), c) in changed and v is None)


def catalog_columns(engine, name):
    from anonsql.catalog import get_table
    return get_table(engine, name).column_names


def test_protect_without_qi_watches_a_kanon_output_and_the_ctas_path_agrees(adult_k5, engine, monkeypatch):
    """No --qi: a table that looks like a kanon output (k-anonymous, k >= 2, over the columns
    holding NULLs: here a5's suppressed QIs) is watched over them, and the warning says it guessed;
    the source Adult, without a NULL, is not (nor is a table not k-anonymous over its NULL columns,
    test_protect_guess_needs_k_at_least_2). The Spark path (no UPDATE) hides the same cells with --k."""
    db = adult_k5
    r = protect_table(db, "a5", "id", target="income", rows=BREAKING, method="dropp", out="p")
    assert r.ok and r.k is None and r.qi == [] and r.input_k >= 5
    assert [w for w in r.warnings if w.startswith(f"p is not {r.input_k}-anonymous over the columns holding NULLs "
                                                  f"({', '.join(ADULT_QI)}), which look like a kanon output's")]
    rows = table_rows(engine, "adult")
    assert not [j for j in range(len(rows[0])) if any(row[j] is None for row in rows)]  # no cell looks suppressed
    r = protect_table(db, "adult", "id", target="income", rows=BREAKING, method="dropp", out="p2")
    assert r.ok and r.input_k is None and not [w for w in r.warnings if "anonymous" in w]
    protect_table(db, "a5", "id", target="income", rows=BREAKING, method="dropp", qi=ADULT_QI, k=5, out="pk")
    monkeypatch.setattr(engine, "supports_update", False)
    protect_table(engine, "a5", "id", target="income", rows=BREAKING, method="dropp", qi=ADULT_QI, k=5, out="pc")
    assert sorted(table_rows(engine, "pc")) == sorted(table_rows(engine, "pk"))


def test_protect_guess_needs_k_at_least_2(engine, make_table):
    """Without --qi the columns holding NULLs are watched only when the table is k-anonymous over
    them with k >= 2: with zipcode NULL in rows 1 and 4 (a class of 2) it is, and hiding Bob's
    zipcode (a class of 3 now) keeps it, so nothing is said; with a lone NULL it is not."""
    make_table("records", {**TABLE_1_2, "zipcode": [None, "90410", "90301", None, "90301", "90410", "90305",
                                                     "90402", "90301"], "age": [1, 1, 2, 2, 1, 1, 2, 2, 1]})
    r = protect_table(engine, "records", "id", target="zipcode", rows=["2"], attrs=SYMPTOMS, out="pub")
    assert r.input_k is None  # 90305 and 90402 are alone: not k-anonymous over zipcode
    make_table("records2", {**TABLE_1_2, "zipcode": [None, "9", "9", None, "9", "9", "9", "9", "9"]})
    r = protect_table(engine, "records2", "id", target="zipcode", rows=["2"], attrs=SYMPTOMS, out="pub2")
    assert r.input_k == 2 and not [w for w in r.warnings if "anonymous" in w]  # NULL 2 -> 3, "9" 7 -> 6: still 2
    r = protect_table(engine, "records2", "id", target="zipcode", rows=["2", "3", "5", "6", "7", "8"],
                      attrs=SYMPTOMS, out="pub3")
    assert r.input_k == 2 and [w for w in r.warnings if w.startswith(
        "pub3 is not 2-anonymous over the columns holding NULLs (zipcode)")]  # one "9" left alone


@pytest.mark.parametrize("in_place", [False, True])
def test_protect_k_in_place_hides_the_whole_class_when_nothing_else_keeps_k(engine, make_table, in_place):
    """9 rows, all gender F (9-anonymous over gender); hiding Bob's gender leaves classes of 8
    and 1: the only 9-anonymous table left has every gender hidden, in place too, each recorded."""
    make_table("records", {**TABLE_1_2, "gender": ["F"] * 9})
    r = protect_table(engine, "records", "id", target="gender", rows=["2"], attrs=SYMPTOMS, qi=["gender"], k=9,
                      in_place=in_place, out=None if in_place else "pub")
    out = "records" if in_place else "pub"
    assert r.ok and r.k_cells == 8 and r.input_k == 9
    assert [row[2] for row in table_rows(engine, out)] == [None] * 9
    assert sorted(row for row in table_rows(engine, f"{out}_changes") if row[1] == "gender") == [
        (i, "gender", "F", None) for i in range(1, 10)]  # (Bob's tuple is deleted: naive Bayes always says F)


def test_protect_k_script_hides_the_same_cells_and_checks_k(tmp_path):
    """--emit-sql with --k: the script carries the further cells and ends with the k-anonymity
    query; run on a fresh copy it publishes the job's table and every check returns no row."""
    import duckdb
    import pandas as pd

    from anonsql.data.loading import write_frame
    from anonsql.engine import connect

    path = str(tmp_path / "s.duckdb")
    eng = connect(path, create=True)
    write_frame(eng, pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in {**TABLE_1_2, "gender": ["F"] * 9}.items()}
                                  ).convert_dtypes(), "records")
    script = tmp_path / "run.sql"
    args = dict(target="gender", rows=["2"], attrs=SYMPTOMS, qi=["gender"], k=9)
    protect_table(eng, "records", "id", out="pub", emit_sql=str(script), execute=False, **args)
    protect_table(eng, "records", "id", out="job", **args)
    job = table_rows(eng, "job")
    eng.close()
    text = script.read_text()
    assert "--k: no class of gender has fewer than 9 rows: must return no row" in text
    body, checks = text.split("-- Verification:")
    code = "\n".join(x for x in checks.splitlines()[1:] if not x.strip().startswith(("--", "/*")))
    queries = [q.strip() for q in code.split(";") if q.strip()]
    con = duckdb.connect(path)
    con.execute(body)
    assert all(con.execute(q).fetchall() == [] for q in queries) and len(queries) >= 3
    assert sorted(con.execute("SELECT * FROM pub").fetchall()) == sorted(job)
    assert [g for (g,) in con.execute("SELECT gender FROM pub").fetchall()] == [None] * 9
    con.close()


def test_protect_k_with_a_generalized_quasi_identifier(engine, make_table, tmp_path):
    """A -g method generalizes Bob's gender to the label Any: his row leaves Male (6 -> 5) for a
    class of 1; with --k 3 further cells are hidden until every class has >= 3 rows, and every
    change is still a generalization of its value (Any or NULL)."""
    from anonsql.taxonomy.store import load_taxonomy
    (tmp_path / "sex.toml").write_text('Any = ["Female", "Male"]\n')
    load_taxonomy(engine, "sexes", file=tmp_path / "sex.toml")
    make_table("records", TABLE_1_2)
    plain = protect_table(engine, "records", "id", target="gender", rows=["2"], attrs=SYMPTOMS, method="dropp-g",
                          taxonomies="gender=sexes", qi=["gender"], out="pub")
    assert plain.input_k == 3 and plain.warnings and not check(engine, "pub", ["gender"], 3).ok
    kept = protect_table(engine, "records", "id", target="gender", rows=["2"], attrs=SYMPTOMS, method="dropp-g",
                         taxonomies="gender=sexes", qi=["gender"], k=3, out="pubk")
    assert kept.ok and kept.k_cells > 0 and check(engine, "pubk", ["gender"], 3).ok
    changed = {(k, c): (old, new) for k, c, old, new in table_rows(engine, "pubk_changes")}
    assert changed[(2, "gender")][0] == "Male" and changed[(2, "gender")][1] in ("Any", None)
    assert all(new in ("Any", None) for (_, c), (_, new) in changed.items() if c == "gender")


@pytest.mark.parametrize("kwargs, message", [
    (dict(k=2), "--k needs --qi"),
    (dict(qi=["zipcode", "gender"], k=2), r"table records is not 2-anonymous over zipcode, gender \(4 classes have "
     r"fewer than 2 rows, the smallest 1\): protect --k keeps k-anonymity, it does not create it"),
    (dict(qi=["id", "gender"], k=1), "the key column 'id' cannot be a quasi-identifier"),
    (dict(qi=["nope"], k=2), "nope"),
    (dict(qi=["gender"], k=0), "k"),
    (dict(qi=["gender"], drop=["gender"]), "'gender' is a quasi-identifier"),
])
def test_protect_k_bad_input_changes_nothing(engine, make_table, kwargs, message):
    make_table("records", TABLE_1_2)
    before = table_rows(engine, "records")
    with pytest.raises(AnonsqlError, match=message):
        symptoms_only(engine, rows=["2"], out="pub", **kwargs)
    assert table_rows(engine, "records") == before
    from anonsql.catalog import find_table
    assert find_table(engine, "pub") is None and find_table(engine, "pub_changes") is None


def test_cli_qi_k_and_quiet_warning(db, engine, make_table, capsys):
    """The CLI: --qi alone warns (in the summary, once, --quiet or not); a refused --k is one line, exit 2."""
    from anonsql.cli import main
    make_table("records", {**TABLE_1_2, "gender": ["F"] * 9})  # 9-anonymous over gender; hiding a gender breaks it
    base = ["protect", "--db", db, "--table", "records", "--key", "id", "--target", "gender", "--rows", "2",
            "--attrs", ",".join(SYMPTOMS), "--method", "dropp", "--qi", "gender"]
    assert main([*base, "--out", "pub", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert out.count("WARNING: pub is not 9-anonymous over gender as records was") == 1
    assert "WARNING" not in err and "protect:" not in err
    assert main([*base, "--out", "pub2", "--k", "10"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not 10-anonymous over gender" in err


def test_repair_is_kanon_on_the_moved_count_table():
    """keep_k.repair: the count table after the move, made k-anonymous by kanon's loop: only
    non-NULL cells of classes that exist after the move are suppressed, and every class then has
    >= k rows; a move that keeps every class >= k needs nothing."""
    assert keep_k.repair({("a", 1): 4, ("a", None): 3}, [(("a", 1), ("a", None))], k=3) == []
    classes = {("a", 1, "x"): 3, ("a", 2, "x"): 3, ("b", 1, "y"): 4, ("b", 2, "y"): 3, ("c", 2, "y"): 5}
    moved = [(("b", 1, "y"), ("b", None, "y")), (("a", 2, "x"), (None, None, None))]
    now = keep_k.after(classes, moved)
    assert now == {("a", 1, "x"): 3, ("a", 2, "x"): 2, ("b", 1, "y"): 3, ("b", None, "y"): 1, ("b", 2, "y"): 3,
                   ("c", 2, "y"): 5, (None, None, None): 1}
    for seed in range(5):
        repairs = keep_k.repair(classes, moved, k=3, seed=seed)
        assert repairs and all(p in now and all(p[j] is not None for j in blank) for p, blank in repairs)
        blank = dict(repairs)
        result: dict = {}
        for p, n in now.items():
            q = tuple(None if j in blank.get(p, ()) else v for j, v in enumerate(p))
            result[q] = result.get(q, 0) + n
        assert min(result.values()) >= 3 and sum(result.values()) == sum(classes.values())
    assert dict(keep_k.repair(classes, moved, k=3, seed=1)) == dict(  # the input's order does not matter
        keep_k.repair(dict(reversed(classes.items())), moved, k=3, seed=1))
