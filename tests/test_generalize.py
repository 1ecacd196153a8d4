"""DECP-G and INCP-G (Hintoglu 2011, Chapter 4): the thesis's worked examples, exactly."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from anonsql.protect import generalization
from anonsql.protect.deletion import COIN_KEPT, DELETED, NOT_NEEDED, SUPPRESSED, Cell
from anonsql.protect.generalization import GeneralizedMicrodata, decp_g, dropp_g, e_decp_g, e_dropp_g, hid3_g, incp_g
from anonsql.protect.id3 import Node
from anonsql.protect.partial_counts import estimate
from anonsql.protect.suppress import suppress_cells_g
from anonsql.taxonomy.model import Taxonomy

from .fixtures_hintoglu import fetched

# The symptom taxonomy of Figure 4.3 / Tables 4.4-4.5: 1, 2 under Low; 3 and High = {4, 5}
# under Mid-High. The thesis prints the root as "?" (Table 4.5, palpitation of tuple 3).
SEVERITY = Taxonomy.from_nested("severity", {"Any": {"Low": [1, 2], "Mid-High": [3, {"High": [4, 5]}]}})
DIAGNOSES = Taxonomy.from_nested("diagnoses", {"Digestive Disease": {
    "Gastric Disease": ["Dyspepsia", "Gastritis"], "S.I. Ulcer": None}})
SYMPTOMS = ["indigestion", "chest_pain", "palpitation", "nausea", "burning"]
MH, DYS, GAS, SIU = "Mid-High", "Dyspepsia", "Gastritis", "S.I. Ulcer"

TABLE_4_1 = [
    (4, 4, 2, 5, 2, DYS), (4, 5, 4, MH, 4, DYS), (5, 2, 3, 3, 5, DYS), (3, 3, 3, 4, 2, DYS),
    (2, 2, 5, 3, 3, DYS), (4, 4, 3, 2, 4, DYS), (3, 4, 3, 3, 3, GAS), (5, 2, 4, 4, 2, GAS),
    (3, 3, 4, 4, 3, GAS), (3, 2, 4, 5, 5, GAS), (4, 5, 2, 3, 5, GAS), (4, 3, 3, 2, 4, GAS),
    (3, 2, 3, 2, 3, SIU), (5, 2, 2, 3, 4, SIU), (4, 3, 2, 2, 2, SIU), (3, 4, 5, 3, 4, SIU),
    (4, 3, 3, 4, 5, SIU), (4, 4, 3, 3, 4, DYS)]
D18 = 17


class Gastritis:
    """Example 7's choices: continue on the coin, gastritis as the random next best guess."""

    def next_best(self, candidates):
        code = DIAGNOSES.index(GAS)
        assert code in candidates
        return code

    def suppress(self):
        return True


def problem(rows=TABLE_4_1) -> tuple[GeneralizedMicrodata, Cell]:
    taxes = [SEVERITY] * 5 + [DIAGNOSES]
    X = np.array([[t.index(v) for t, v in zip(taxes, r)] for r in rows], dtype=np.int64)
    p = GeneralizedMicrodata(X, [len(t) for t in taxes], {5: [0, 1, 2, 3, 4]}, k=2, taxonomies=taxes, trace=[])
    return p, Cell(D18, 5, DIAGNOSES.index(DYS))


def table(p: GeneralizedMicrodata) -> list[tuple]:
    return [tuple("?" if c < 0 else t.labels[c] for t, c in zip(p.taxonomies, r)) for r in p.X]


def labels(rows) -> list[tuple]:
    return [tuple(str(v) for v in r) for r in rows]


def test_example_6_partial_counts():
    """Figure 4.3: Low's own 5 rows go down to 1 and 2 as 3 and 2 (6 + 3 = 9, 4 + 2 = 6)."""
    observed = [0] * len(SEVERITY)
    for v, n in (("1", 6), ("2", 4), ("Low", 5)):
        observed[SEVERITY.index(v)] = n
    est = estimate(SEVERITY, observed)
    assert [est[SEVERITY.index(v)] for v in ("1", "2", "Low", "Any")] == [9, 6, 15, 15]
    assert est[SEVERITY.index(MH)] == 0


def test_partial_counts_distribute_by_aggregates():
    """Step 28 of Table 4.3: palpitation of dyspepsia is 2, 4, Any, Mid-High, 5, 3 and the
    estimate for 3 is 1,6 (root's 1 row goes 4/5 to Mid-High, whose 1,8 rows go 1/3 to 3)."""
    observed = [0] * len(SEVERITY)
    for v in ("2", "4", "Any", MH, "5", "3"):
        observed[SEVERITY.index(v)] += 1
    est = estimate(SEVERITY, observed)
    assert est[SEVERITY.index("3")] == Fraction(8, 5)
    assert est[SEVERITY.index("2")] == Fraction(6, 5)
    assert sum(est[SEVERITY.index(v)] for v in "12345") == 6


def test_partial_counts_without_distribution_split_evenly():
    """A generalized count over children that have none is split evenly (documented gap)."""
    observed = [0] * len(SEVERITY)
    observed[SEVERITY.index("Low")] = 3
    est = estimate(SEVERITY, observed)
    assert est[SEVERITY.index("1")] == est[SEVERITY.index("2")] == Fraction(3, 2)


def test_table_4_2_model():
    """Step 2 of Tables 4.3 and 4.6: d_18 generalized to Gastric Disease, V_candidate =
    {dyspepsia, gastritis}, p = 0,00579 and 0,00051."""
    p, cell = problem()
    p.X[D18, 5] = DIAGNOSES.index("Gastric Disease")
    s = p.g_scores(cell)
    assert set(s) == {DIAGNOSES.index(DYS), DIAGNOSES.index(GAS)}
    assert s[DIAGNOSES.index(DYS)] == Fraction(1, 2) * Fraction(3, 6) * Fraction(2, 6) * Fraction(3, 6) \
        * Fraction(5, 12) * Fraction(2, 6)
    assert round(float(s[DIAGNOSES.index(DYS)]), 5) == 0.00579
    assert round(float(s[DIAGNOSES.index(GAS)]), 5) == 0.00051


def test_example_7_decp_g_golden():
    """Table 4.1 -> Table 4.2 -> Table 4.5, the probability trace of Table 4.3 and the ratios
    of Table 4.4 (Steps 6 and 19)."""
    p, cell = problem()
    out = decp_g(p, cell, Gastritis())
    assert out.status == SUPPRESSED and out.next_best == DIAGNOSES.index(GAS)
    table_4_5 = labels([
        (MH, MH, 2, 5, 2, DYS), (MH, 5, 4, MH, MH, DYS), (5, 2, "Any", MH, 5, DYS), (3, 3, MH, 4, 2, DYS),
        (2, 2, 5, 3, 3, DYS), (4, 4, 3, 2, 4, DYS), *TABLE_4_1[6:17], (4, 4, 3, 3, 4, "Gastric Disease")])
    assert table(p) == table_4_5
    trace = [round(float(e[1]), 5) for e in p.trace if e[0] == "p"]
    steps = list(dict.fromkeys(trace))  # a check repeated without a change in between
    assert steps == [0.00579, 0.00386, 0.00289, 0.00217, 0.00181, 0.00121, 0.00107, 0.00080, 0.00071,
                     0.00064, 0.00060, 0.00053, 0.00051]
    assert all(round(float(e[2]), 5) == 0.00051 for e in p.trace if e[0] == "p")
    final = [e for e in p.trace if e[0] == "p"][-1]
    assert final[1] < final[2]  # 0,000508 < 0,000514: "equal" in the text is rounding
    ratios = {lam: next(e[2] for e in p.trace if e[0] == "ratios" and e[1] == lam) for lam in (1, 2)}
    f = Fraction
    assert ratios[1] == {0: (3, 4, 0, f(8, 9)), 1: (2, 3, 0, f(3, 4)), 2: (3, 5, 0, f(10, 12)),
                         3: (2, 4, 0, f(4, 6)), 4: (2, 3, 0, f(3, 4))}
    assert ratios[2] == {0: (2, 5, 2, f(15, 16)), 1: (1, 4, 2, f(8, 9)), 2: (2, 6, 3, f(24, 25)),
                         3: (2, 6, 3, f(24, 25)), 4: (1, 4, 2, f(8, 9))}
    assert sorted(set(out.changes)) == [(0, 0), (0, 1), (1, 0), (1, 4), (2, 2), (2, 3), (3, 2)]


def test_example_8_incp_g_golden():
    """Table 4.1 -> Table 4.7: gastritis of tuples 8, 9, 10 (no symptom in common with d_18)
    becomes Gastric Disease; the trace of Table 4.6."""
    p, cell = problem()
    out = incp_g(p, cell, Gastritis())
    assert out.status == SUPPRESSED
    expected = labels([*TABLE_4_1[:17], (4, 4, 3, 3, 4, "Gastric Disease")])
    for r in (7, 8, 9):
        expected[r] = (*expected[r][:5], "Gastric Disease")
    assert table(p) == expected
    trace = [(round(float(e[1]), 5), round(float(e[2]), 5)) for e in p.trace if e[0] == "p"]
    assert list(dict.fromkeys(trace)) == [(0.00579, 0.00051), (0.00409, 0.00075), (0.00279, 0.00126),
                                          (0.00183, 0.00260)]
    assert out.changes == [(7, 5), (8, 5), (9, 5)]


def test_not_needed_and_coin():
    """A value the classifier misses is left at its first level; with |V_candidate| = 2 the
    coin can keep the cell as generalized, with no side effect."""
    p, cell = problem()
    cell = Cell(6, 5, DIAGNOSES.index(GAS))  # tuple 7: dyspepsia is the more probable
    assert decp_g(p, cell, Gastritis()).status == NOT_NEEDED
    assert p.X[6, 5] == DIAGNOSES.index("Gastric Disease")

    class Heads(Gastritis):
        def suppress(self):
            return False

    p, cell = problem()
    out = decp_g(p, cell, Heads())
    assert out.status == COIN_KEPT and out.changes == []
    assert table(p)[:17] == labels(TABLE_4_1[:17])


def test_decp_g_deletes_when_no_level_works():
    """Gastritis shares no symptom with d_18, so at no level is there a next best guess with
    p > 0 (Def. 4.2): DECP-G deletes the tuple (Figure 4.4), i.e. hides all its cells."""
    rows = [(4, 4, 3, 3, 4, DYS)] * 4 + [(2, 2, 2, 2, 2, GAS)] + [(4, 4, 3, 3, 4, DYS)]
    p, _ = problem(rows)
    cell = Cell(5, 5, DIAGNOSES.index(DYS))
    out = decp_g(p, cell, Gastritis())
    assert out.status == DELETED
    assert table(p) == labels(rows[:5]) + [("?",) * 6]


def test_example_9_dropp_g_golden():
    """Table 4.1 -> Table 4.10: d_18's own values go up, burning, palpitation, chest pain,
    nausea, indigestion at λ = 1 (ratios of Table 4.9), then indigestion and chest pain at
    λ = 2; the trace of Table 4.8."""
    p, cell = problem()
    out = dropp_g(p, cell, Gastritis())
    assert out.status == SUPPRESSED
    assert table(p) == labels([*TABLE_4_1[:17], (MH, MH, MH, MH, "High", "Gastric Disease")])
    assert out.changes == [(17, 4), (17, 2), (17, 1), (17, 3), (17, 0), (17, 0), (17, 1)]
    trace = [(round(float(e[1]), 5), round(float(e[2]), 5)) for e in p.trace if e[0] == "p"]
    assert list(dict.fromkeys(trace)) == [
        (0.00579, 0.00051), (0.00868, 0.00154), (0.01447, 0.00386), (0.02170, 0.00772), (0.04340, 0.01929),
        (0.05787, 0.02894), (0.07234, 0.05787), (0.09645, 0.11574)]
    ratios = {lam: next(e[2] for e in p.trace if e[0] == "ratios" and e[1] == lam) for lam in (1, 2)}
    f = Fraction
    assert ratios[1] == {0: f(9, 8), 1: f(4, 3), 2: f(15, 10), 3: f(25, 20), 4: f(6, 3)}
    assert ratios[2] == {0: f(24, 15), 1: f(12, 8), 2: 1, 3: 1, 4: f(15, 12)}


def figure_4_8() -> Node:
    """The tree of Figure 4.8 as Example 10 walks it: node 0 splits on burning, its most
    common child node 2 (burning 3) on nausea, whose most common child node 5 (nausea 2)
    says gastritis and node 6 (nausea 3) dyspepsia."""
    sev, dx = SEVERITY.index, DIAGNOSES.index
    node5, node6 = Node(dx(GAS), 4), Node(dx(DYS), 3)
    node2 = Node(dx(DYS), 7, attr=3, children={sev("2"): node5, sev("3"): node6})
    return Node(dx(DYS), 12, attr=4, children={sev("2"): Node(dx(GAS), 3), sev("3"): node2,
                                                sev("4"): Node(dx(GAS), 2)})


def test_example_10_hid3_g_golden(monkeypatch):
    """Table 4.11 -> Table 4.12: burning goes to Mid-High (Step 7), nausea to Mid-High and then
    to the root (Steps 12 and 16), and the most common child answers gastritis (Step 19)."""
    monkeypatch.setattr(generalization, "train_g", lambda p, cell: figure_4_8())
    p, _ = problem([(4, 4, 2, 3, 3, DYS)])
    cell = Cell(0, 5, DIAGNOSES.index(DYS))
    out = hid3_g(p, cell, Gastritis())
    assert out.status == SUPPRESSED
    assert table(p) == [("4", "4", "2", "Any", MH, "Gastric Disease")]
    assert out.changes == [(0, 4), (0, 3), (0, 3)]


@pytest.mark.parametrize("group, plain", [(e_decp_g, decp_g), (e_dropp_g, dropp_g)])
def test_enhanced_on_one_cell_match_the_plain_tables(group, plain):
    """With one confidential cell, e-DECP-G orders its candidates like DECP-G (primary impact
    1 each, then the ratio of Def. 4.4) and e-DROPP-G like DROPP-G: Tables 4.5 and 4.10."""
    p, cell = problem()
    out = group(p, [cell], Gastritis())[0]
    q, _ = problem()
    plain(q, cell, Gastritis())
    assert out.status == SUPPRESSED and table(p) == table(q)
    assert sorted(set(out.changes)) == sorted({c for c in q._stack})


GRID = Taxonomy.from_nested("grid", {"*": {"A": [0, 1], "B": [2, {"C": [3, 4]}]}})


def random_problem(seed: int, rows: int = 40, cols: int = 5) -> GeneralizedMicrodata:
    rng = np.random.default_rng(seed)
    leaves = [GRID.index(v) for v in range(5)]
    X = rng.choice(leaves, size=(rows, cols)).astype(np.int64)
    return GeneralizedMicrodata(X, [len(GRID)] * cols, {c: [a for a in range(cols) if a != c] for c in range(cols)},
                    taxonomies=[GRID] * cols)


@pytest.mark.parametrize("method", ["decp-g", "incp-g", "dropp-g", "hid3-g", "e-decp-g", "e-dropp-g"])
def test_rows_fetched_when_needed_decide_as_in_memory_g(method):
    """The job's path (rows.FetchedRows: rows fetched by WHERE when needed, counts from distinct
    tuples, keys as row ids) makes exactly the decisions of the whole matrix in memory."""
    from anonsql.protect.deletion import SeededChance

    memory = random_problem(1)
    X = memory.X.copy()
    keys = [f"k{i:03d}" for i in range(len(X))]
    rows, _ = fetched(X, keys, [0, 3, 5, 8])
    db = GeneralizedMicrodata(rows, memory.domains, memory.attrs, taxonomies=memory.taxonomies)
    cells = [Cell(r, c, int(X[r, c])) for r in (0, 3, 5, 8) for c in (0, 2)]
    a = suppress_cells_g(memory, cells, method, SeededChance(1))
    b = suppress_cells_g(db, [Cell(keys[c.row], c.target, c.value) for c in cells], method, SeededChance(1))
    assert [(r.status, [(keys[i], j) for i, j in r.changes], r.next_best, r.before, r.after) for r in a] == \
        [(r.status, r.changes, r.next_best, r.before, r.after) for r in b]
    assert rows.changed() == [(keys[i], j, int(X[i, j]), int(memory.X[i, j]))
                              for i, j in np.argwhere(memory.X != X).tolist()]


@pytest.mark.parametrize("method", ["decp-g", "incp-g", "dropp-g", "hid3-g", "e-decp-g", "e-dropp-g"])
def test_every_method_leaves_no_cell_predicted(method):
    """Several cells (two per tuple, repeated values, two attributes): at the end each one is
    generalized above its value, or its tuple deleted, or kept by the coin, and Def. 4.1's
    classifier no longer picks its value."""
    from anonsql.protect.deletion import SeededChance

    for seed in range(3):
        p = random_problem(seed)
        cells = [Cell(r, c, int(p.X[r, c])) for r in (0, 3, 5, 8) for c in (0, 2)]
        results = suppress_cells_g(p, cells, method, SeededChance(seed))
        for r in results:
            c = r.cell
            if r.status == DELETED:
                assert (p.X[c.row] == -1).all()
                continue
            assert GRID.is_descendant(c.value, int(p.X[c.row, c.target]))
            if r.status != COIN_KEPT:
                predicts = generalization.id3_g_predicts if method == "hid3-g" else GeneralizedMicrodata.g_predicts
                assert not predicts(p, c), (method, seed, c)


def test_g_counts_kept_by_change_match_a_recount():
    """`GCounts.change` (a target cell moved between class nodes, to or from ν, a predictor
    cell moved within its class) keeps every count table equal to one counted afresh, and a
    leaf's pairs equal to a count of its rows; an inner class node keeps no pairs row."""
    from anonsql.protect.generalization import GCounts

    rng = np.random.default_rng(5)
    p = random_problem(2, rows=30)
    p.taxonomies[4] = None  # a predictor without taxonomy
    t, attrs = 0, [1, 2, 3, 4]
    c = GCounts(p.X, np.ones(len(p.X), dtype=np.int64), t, attrs, p.domains, p.taxonomies)
    for _ in range(300):
        r, col = int(rng.integers(0, 30)), int(rng.choice([t, *attrs]))
        x, roll = int(p.X[r, col]), rng.random()
        if roll < 0.1 or (col == 4 and roll < 0.6):
            code = -1 if x != -1 else int(rng.integers(0, 5 if col == 4 else len(GRID)))
        elif x != -1 and roll < 0.6:
            code = GRID.generalize(x, int(rng.integers(1, 3)))
        else:
            code = GRID.index(int(rng.integers(0, 5))) if col != 4 else int(rng.integers(0, 5))
        c.change(p.X[r].tolist(), col, code)
        p.X[r, col] = code
        fresh = GCounts(p.X, np.ones(len(p.X), dtype=np.int64), t, attrs, p.domains, p.taxonomies)
        assert (c.classes, c.agg_classes, c.pairs, c.agg_pairs) == \
            (fresh.classes, fresh.agg_classes, fresh.pairs, fresh.agg_pairs)
    for g in range(len(GRID)):
        for a in attrs:
            if GRID.children[g]:
                assert c.pairs[a][g] == []
            else:
                assert c.pairs[a][g] == [int(((p.X[:, t] == g) & (p.X[:, a] == x)).sum()) for x in range(p.domains[a])]


def test_path_estimate_of_leaf_rows_is_the_count_itself():
    """With rows on leaves only, the partial-count estimate of a node is its count (every ratio
    on its path cancels): `path_estimate` gives (count, 1), so an estimate that stays the same
    keeps the same pair when other leaves' counts change (a -G score keeps its product)."""
    from anonsql.protect.partial_counts import aggregates, path_estimate

    rng = np.random.default_rng(11)
    for _ in range(50):
        observed = np.where([not c for c in GRID.children], rng.integers(0, 4, size=len(GRID)), 0)
        agg = aggregates(GRID, observed).tolist()
        for node in range(len(GRID)):
            assert path_estimate(GRID, observed.tolist(), agg, node) == (agg[node], 1)


def test_omega_ranks_as_the_negated_score_key():
    """`_omega`'s reversed stable sort of the nodes in order gives Def. 4.1's ranking, score
    descending and ties by node order, as the key (-score, node) does, for every k."""
    from types import SimpleNamespace

    rng = np.random.default_rng(7)
    for _ in range(300):
        nodes = rng.choice(40, size=int(rng.integers(1, 12)), replace=False).tolist()
        scores = {int(v): Fraction(int(rng.integers(0, 4)), int(rng.integers(1, 3))) for v in nodes}  # many ties
        for k in (None, 1, 2, 3):
            expected = sorted(scores, key=lambda v: (-scores[v], v))[:k]
            assert generalization._omega(SimpleNamespace(k=k), scores) == expected, (scores, k)


def _row_by_row(p, rows, a, dst, cells):
    """The inner loop of Figures 4.4/4.9 as the figures read: a put, then every cell still
    above checked again, until none is."""
    made, flip, live = [], {n: len(rows) + 1 for n in cells}, dict(cells)
    for r in rows:
        if not live:
            break
        p.put(r, a, dst, made)
        for n, (c, g) in list(live.items()):
            if not p.g_above(c, c.value, g):
                flip[n] = len(made)
                del live[n]
    return made, flip


def test_generalize_rows_matches_the_figures_row_by_row():
    """`_generalize_rows` (all puts, one check, then undone newest first while a cell is below,
    on the monotonicity of p(v_conf|d) along them) makes the same changes and finds the same
    put after which each cell is first below as the figures' check after every put, on
    random groups of cells sharing a value, at each level of a predictor value; cells that
    fall below at the first, a middle and the last put are among them."""
    seen = set()
    for seed in range(40):
        p = random_problem(seed, rows=80)
        t, conf = 0, int(p.X[0, 0])
        group = [Cell(int(r), t, conf) for r in np.flatnonzero(p.X[:, t] == conf)[:6]]
        for c in group:
            p.set(c.row, t, GRID.generalize(conf, 1))
        cells = {}
        for n, c in enumerate(group):
            s = p.g_scores(c)
            below = [v for v in s if v != conf and s[v] < s[conf]]
            if below:
                cells[n] = (c, max(below, key=lambda v: (s[v], v)))
        a = 1 + seed % 4
        for lam in (1, 2):
            src = GRID.generalize(int(p.X[group[0].row, a]), lam - 1)
            if not cells or src == 0:
                break
            rows = p.select({t: conf, a: src})[0]
            q = GeneralizedMicrodata(p.X.copy(), p.domains, p.attrs, taxonomies=p.taxonomies)
            made, flip = generalization._generalize_rows(p, rows, a, GRID.parents[src], cells)
            assert (made, flip) == _row_by_row(q, rows, a, GRID.parents[src], cells)
            assert (p.X == q.X).all()
            seen |= {"first" if f == 1 else "last" if f == len(rows) else "middle"
                     for f in flip.values() if f <= len(rows)}
            cells = {n: cg for n, cg in cells.items() if flip[n] > len(made)}
    assert seen == {"first", "middle", "last"}


def test_decp_g_decides_alike_traced_or_not():
    """DECP-G traced (row by row, each check recorded: Table 4.3) and not (`_generalize_rows`)
    makes the same changes in the same order, on random cells one after the other."""
    from anonsql.protect.deletion import SeededChance

    changed = 0
    for seed in range(6):
        p, q = random_problem(seed, rows=80), random_problem(seed, rows=80)
        q.trace = []
        X = p.X.copy()
        for cell in [Cell(r, col, int(X[r, col])) for r in range(10) for col in (0, 2)]:
            a, b = decp_g(p, cell, SeededChance(seed)), decp_g(q, cell, SeededChance(seed))
            assert (a.status, a.changes, a.next_best) == (b.status, b.changes, b.next_best)
            assert (p.X == q.X).all()
            changed += len(a.changes) if a.status == SUPPRESSED else 0
    assert changed > 100


# ---- the protect job with the -g methods, on both engines ----------------------------------

from anonsql import catalog  # noqa: E402
from anonsql.api import protect_table  # noqa: E402
from anonsql.errors import AnonsqlError  # noqa: E402
from anonsql.taxonomy.store import load_taxonomy  # noqa: E402

from .conftest import table_rows  # noqa: E402

TAXONOMIES = ",".join(f"{s}=severity" for s in SYMPTOMS) + ",diagnosis=diagnoses"
SEED = 0  # SeededChance(0) continues on the |V_candidate| = 2 coin, as Example 7 assumes


def write_records(make_table, tmp_path) -> None:
    """Table 4.1 with a key as table `records`, and the two taxonomies as files in tmp_path."""
    columns = list(zip(*TABLE_4_1))
    make_table("records", {"id": list(range(1, 19)), **{c: list(v) for c, v in zip([*SYMPTOMS, "diagnosis"], columns)}})
    (tmp_path / "severity.json").write_text('{"Any": {"Low": [1, 2], "Mid-High": [3, {"High": [4, 5]}]}}')
    (tmp_path / "diagnoses.toml").write_text('["Digestive Disease"]\n"S.I. Ulcer" = []\n\n'
                                             '["Digestive Disease"."Gastric Disease"]\n'
                                             'Dyspepsia = []\nGastritis = []\n')


@pytest.fixture
def records(engine, make_table, tmp_path):
    """Table 4.1 with a key, and the two taxonomies stored."""
    write_records(make_table, tmp_path)
    load_taxonomy(engine, "severity", file=tmp_path / "severity.json")
    load_taxonomy(engine, "diagnoses", file=tmp_path / "diagnoses.toml")
    return engine


def published(engine, name="records_pub") -> list[tuple]:
    return [tuple(str(v) for v in r[1:]) for r in sorted(table_rows(engine, name), key=lambda r: r[0])]


@pytest.mark.parametrize("method, rows_changed", [("decp-g", 7), ("incp-g", 3), ("dropp-g", 5)])
def test_job_reproduces_the_thesis_tables(records, method, rows_changed):
    """decp-g, incp-g, dropp-g through the job: Tables 4.5, 4.7, 4.10 as published tables,
    every change recorded with its label, verified by SQL."""
    engine = records
    r = protect_table(engine, "records", "id", method=method, target="diagnosis", rows=["18"], seed=SEED,
                      out="records_pub", taxonomies=TAXONOMIES)
    assert r.cells[0].status == "suppressed" and r.cells[0].next_best_guess == GAS
    assert r.cells[0].prediction_before == {"nb": [DYS]} and r.cells[0].prediction_after == {"nb": [GAS]}
    p, cell = problem()
    {"decp-g": decp_g, "incp-g": incp_g, "dropp-g": dropp_g}[method](p, cell, Gastritis())
    assert published(engine) == table(p)
    assert r.changed_cells == rows_changed + 1  # the confidential cell itself
    assert {"key": 18, "column_name": "diagnosis", "old_value": DYS, "new_value": "Gastric Disease"} in r.changes
    assert r.taxonomies["diagnosis"] == "diagnoses"
    m = r.metrics
    assert m["direct_distance"] == rows_changed + 1 and m["sum_kl_distance"] > 0
    assert m["sum_conditional_entropy"] > 0


def test_job_conditional_entropy_of_table_4_5(records):
    """SCE (eq. 2.13) under generalization: every label of Table 4.5 is reached from one
    original value, except nausea's Mid-High, which holds tuple 3's 3 and tuple 2's own
    Mid-High: H = -2 · 1/18 · log2(1/2) = 1/9."""
    r = protect_table(records, "records", "id", method="decp-g", target="diagnosis", rows=["18"], seed=SEED,
                      out="records_pub", taxonomies=TAXONOMIES)
    assert r.metrics["sum_conditional_entropy"] == pytest.approx(1 / 9)


@pytest.mark.parametrize("kwargs, message", [
    ({"taxonomies": None}, "need --taxonomy"),
    ({"taxonomies": "nausea=severity"}, r"target column\(s\) diagnosis need a taxonomy"),
    ({"taxonomies": "diagnosis=nope"}, "no stored taxonomy named 'nope'"),
    ({"taxonomies": "diagnosis=diagnoses,id=severity"}, "neither a target nor an attribute"),
    ({"taxonomies": "diagnosis=diagnoses,chest_pain=diagnoses"}, r"column 'chest_pain' has 4 value\(s\) missing"),
    ({"taxonomies": "diagnosis=severity"}, "missing from taxonomy 'severity'"),
    ({"method": "decp", "taxonomies": TAXONOMIES}, "--taxonomy goes with the generalization methods"),
    ({"taxonomies": "diagnosis=diagnoses,", "attrs": ["chest_pain"], "rows": ["18", "18"]}, "listed twice"),
    ({"taxonomies": TAXONOMIES, "target": "nausea", "rows": ["2"]}, "not a leaf below the root"),
])
def test_job_bad_input_changes_nothing(records, kwargs, message):
    engine = records
    args = {"method": "decp-g", "target": "diagnosis", "rows": ["18"], "out": "records_pub", **kwargs}
    before = table_rows(engine, "records")
    with pytest.raises(AnonsqlError, match=message):
        protect_table(engine, "records", "id", **args)
    assert table_rows(engine, "records") == before
    with pytest.raises(AnonsqlError):
        table_rows(engine, "records_pub")


@pytest.mark.parametrize("method", ["decp-g", "incp-g", "dropp-g", "hid3-g", "e-decp-g", "e-dropp-g"])
def test_job_in_place_several_cells_and_attrs_without_taxonomy(records, method):
    """Two confidential diagnoses at once, in place; chest pain and burning have no taxonomy
    (they count plainly and are never generalized)."""
    engine = records
    tax = "indigestion=severity,palpitation=severity,nausea=severity,diagnosis=diagnoses"
    r = protect_table(engine, "records", "id", method=method, target="diagnosis", rows=["18", "6"], seed=SEED,
                      in_place=True, taxonomies=tax)
    assert len(r.cells) == 2
    changed = {c["column_name"] for c in r.changes}
    assert "chest_pain" not in changed and "burning" not in changed
    rows = {r[0]: r for r in table_rows(engine, "records")}
    assert rows[18][6] in ("Gastric Disease", "Digestive Disease", None)
    assert rows[6][6] in ("Gastric Disease", "Digestive Disease", None)


def test_job_failed_check_rolls_back(records, monkeypatch):
    """A run that only generalizes the confidential cell (still predicted) fails the SQL check
    and leaves nothing behind."""
    from anonsql.protect import job
    from anonsql.protect.suppress import CellResult

    def lazy(p, cells, method, chance, **kw):
        for c in cells:
            p.rows.set(c.row, c.target, p.taxonomies[c.target].generalize(c.value, 1))
        return [CellResult(c, status="suppressed") for c in cells]

    monkeypatch.setattr(job, "protect_cells", lazy)
    with pytest.raises(AnonsqlError, match=r"verification failed.*naive Bayes misses every confidential cell: "
                       r"1 still predicted: cell \(id = 18, diagnosis\)"):
        protect_table(records, "records", "id", method="decp-g", target="diagnosis", rows=["18"],
                      out="records_pub", taxonomies=TAXONOMIES)
    for name in ("records_pub", "records_pub_changes"):
        with pytest.raises(AnonsqlError):
            table_rows(records, name)


def test_job_e_dropp_g_two_cells_of_one_tuple(records):
    """e-DROPP-G groups the cells of one tuple: d_18's diagnosis and nausea."""
    r = protect_table(records, "records", "id", method="e-dropp-g", cells=[("18", "diagnosis"), ("18", "nausea")],
                      seed=SEED, out="records_pub", taxonomies=TAXONOMIES)
    assert {c.column for c in r.cells} == {"diagnosis", "nausea"}
    row = published(records)[17]
    assert row[3] in ("Mid-High", "Any", "None") and row[5] in ("Gastric Disease", "Digestive Disease", "None")


def test_cli_taxonomy_load_show_and_protect_g(db, engine, make_table, tmp_path, capsys):
    """The commands a steward types: taxonomy load/show, protect --method decp-g --taxonomy."""
    from anonsql.cli import main

    write_records(make_table, tmp_path)
    assert main(["taxonomy", "load", "--db", db, "--name", "severity", "--file", str(tmp_path / "severity.json")]) == 0
    assert main(["taxonomy", "load", "--db", db, "--name", "diagnoses", "--file",
                 str(tmp_path / "diagnoses.toml")]) == 0
    assert "stored" in capsys.readouterr().out
    assert main(["taxonomy", "show", "--db", db, "--name", "severity"]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == ["Any", "  Low"]
    code = main(["protect", "--db", db, "--table", "records", "--key", "id", "--target", "diagnosis", "--rows", "18",
                 "--method", "decp-g", "--taxonomy", TAXONOMIES, "--out", "records_pub"])
    out = capsys.readouterr().out
    assert code == 0 and "every confidential cell hidden or generalized holds" in out and "naive Bayes" in out
    assert "Dyspepsia" not in out  # the confidential value stays out of the summary
    assert engine.fetch_all('SELECT diagnosis FROM "records_pub" WHERE id = 18') == [("Gastric Disease",)]
    code = main(["protect", "--db", db, "--table", "records", "--key", "id", "--target", "diagnosis", "--rows", "18",
                 "--method", "decp-g", "--out", "other"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and catalog.find_table(engine, "other") is None


@pytest.mark.parametrize("method", ["decp-g", "dropp-g", "hid3-g"])
def test_job_ctas_path_same_as_update(records, monkeypatch, method):
    """The path of an engine without UPDATE (Spark) writes taxonomy labels into integer columns
    in its one CREATE TABLE AS SELECT as ALTER + UPDATE write them."""
    args = dict(method=method, target="diagnosis", rows=["18", "6"], seed=SEED, taxonomies=TAXONOMIES)
    by_update = protect_table(records, "records", "id", out="by_update", **args)
    monkeypatch.setattr(records, "supports_update", False)
    by_ctas = protect_table(records, "records", "id", out="by_ctas", **args)
    assert by_ctas.changes == by_update.changes and by_ctas.metrics == by_update.metrics
    assert published(records, "by_ctas") == published(records, "by_update")
    assert [c.kind for c in catalog.get_table(records, "by_ctas").columns] == \
        [c.kind for c in catalog.get_table(records, "by_update").columns]
