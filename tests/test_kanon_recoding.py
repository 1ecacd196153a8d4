"""Generalize, then suppress (issue 33): the optimal lattice search (anonsql.kanon.lattice)
against exhaustive search, a hand-solved 3-QI lattice on both engines, a table where one level
of generalization saves what suppression alone blanks, the labels check failing and rolling
back, and the refusals."""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter

import numpy as np
import pytest

import anonsql
from anonsql import api, check
from anonsql.catalog import find_table, get_table
from anonsql.errors import AnonsqlError, VerificationError
from anonsql.hierarchy import parse_all
from anonsql.kanon import lattice, recoding, verify
from anonsql.report import Report
from anonsql.sql import TableName

from .conftest import table_rows
from .test_cli import run


@pytest.mark.parametrize("seed", range(12))
def test_search_finds_the_exhaustive_optimum(seed):
    """Random lattices: feasibility monotone (rows below k fall as levels rise), loss = the bound
    plus a non-negative, non-monotone suppression term. The search must return what checking
    every node returns, while evaluating fewer nodes when it can."""
    rng = np.random.default_rng(seed)
    tops = [int(t) for t in rng.integers(1, 5, size=3)]
    below = [np.sort(rng.integers(0, 40, size=t + 1))[::-1] for t in tops]  # rows in small classes, per QI level
    bounds = [np.sort(rng.random(t + 1) * 10) for t in tops]
    extra = {node: float(rng.random() * 6) for node in itertools.product(*(range(t + 1) for t in tops))}
    limit = int(rng.integers(5, 60))

    def truth(node):
        suppressed = int(sum(b[level] for b, level in zip(below, node))) if any(
            level < t for level, t in zip(node, tops)) else 0  # the top node is one class
        return suppressed, sum(b[level] for b, level in zip(bounds, node)) + (extra[node] if suppressed else 0)

    seen = []

    def evaluate(nodes):
        got = [truth(tuple(int(v) for v in n)) for n in nodes]
        seen.extend(tuple(n) for n in nodes)
        return lattice.Evaluated(np.array([g[0] for g in got]), np.array([g[1] for g in got]))

    found = lattice.search(tops, bounds, limit, evaluate, batch=4)
    feasible = [(truth(n)[1], sum(n), n) for n in extra if truth(n)[0] <= limit]
    best = min(feasible)
    assert found.levels == best[2] and found.loss == pytest.approx(best[0])
    assert found.evaluated == len(seen) == len(set(seen)) <= found.nodes == len(extra)


def test_a_lattice_too_large_is_refused():
    with pytest.raises(AnonsqlError, match="more than the 1,000,000 searched"):
        lattice.search([9] * 7, [np.zeros(10)] * 7, 0, lambda nodes: None)


#: Hand-solved (k = 2, at most 1 of 5 rows left to suppression): age interval:10,20, zip prefix:1,
#: sex without a hierarchy (value, then ⊥). At node (age [..,..+10), zip 1 character, sex kept) the
#: classes are ([20,30),1*,M) x2, ([30,40),3*,F) x2 and ([50,60),9*,F) x1 (suppressed): loss metric
#: 2·(1/4 + 1/4) + 2·(1/4 + 1/4) + 1·3 = 5 of 15 cells. Every other feasible node loses more, e.g.
#: (width 20, 1*, sex) 7, (width 10, ⊥, sex) 8, (width 10, 1*, ⊥) 9, (⊥, ⊥, sex) 10; age or zip
#: kept whole leaves 4 or 5 rows alone.
HAND = {"age": [21, 25, 31, 37, 55], "zip": ["12", "13", "34", "35", "99"], "sex": ["M", "M", "F", "F", "F"],
        "income": ["a", "b", "a", "b", "a"]}
HAND_SPECS = ["age=interval:10,20", "zip=prefix:1"]
LABELS_CHECK = "values are the source's or its ancestors in the hierarchy"


def test_hand_solved_lattice(engine, make_table):
    make_table("people", HAND)
    report = api.k_anonymize(engine, "people", "age,zip,sex", None, 2, hierarchy=HAND_SPECS,
                             max_suppressed_records=0.2, out="people_g")
    r = report.recoding
    assert r["levels"] == {"age": 1, "zip": 1, "sex": 0}
    assert r["loss_metric"] == pytest.approx(5 / 15) and r["records_in_small_classes"] == 1
    names = {c.name for c in report.checks}
    assert report.ok and {"k-anonymity", "non-QI columns unchanged", LABELS_CHECK} <= names
    assert check(engine, "people_g", "age,zip,sex", 2).ok
    rows = table_rows(engine, "people_g")
    assert [r[:3] for r in rows[:2]] == [("[20,30)", "1*", "M")] * 2  # the classes that needed no suppression
    assert sorted(r[3] for r in rows) == sorted(HAND["income"])  # the non-QI column, unchanged


def test_without_room_for_suppression_the_optimum_moves_up(engine, make_table):
    make_table("people", HAND)
    report = api.k_anonymize(engine, "people", "age,zip,sex", None, 2, hierarchy=HAND_SPECS,
                             max_suppressed_records=0, out="people_g")
    # nothing may be left alone: (width 20, ⊥ zip, sex) makes [20,40) M x2, F x2 and [40,60) F x1 -> fails;
    # the search must end at a node where every class has 2 rows, all of them cheaper than ⊥ everywhere
    assert report.recoding["records_in_small_classes"] == 0 and report.suppressed_cells == 0
    assert report.recoding["loss_metric"] < 1 and check(engine, "people_g", "age,zip,sex", 2).ok


def test_one_level_of_generalization_beats_suppression_alone(engine, make_table):
    """40 distinct ages, two sexes: cell suppression must blank every age (each is unique), while
    ranges of 10 years hold 5 men and 5 women each: nothing is blanked at all."""
    make_table("ages", {"age": list(range(20, 60)), "sex": ["M", "F"] * 20, "visits": [1, 2, 3, 4] * 10})
    alone = api.k_anonymize(engine, "ages", "age,sex", None, 5, out="ages_s", cost="ham")
    generalized = api.k_anonymize(engine, "ages", "age,sex", None, 5, out="ages_g", cost="ham",
                                  hierarchy="age=interval:10,20")
    assert alone.suppressed_cells >= 40 and generalized.suppressed_cells == 0
    assert generalized.recoding["levels"] == {"age": 1, "sex": 0}
    assert generalized.recoding["loss_metric"] == pytest.approx((9 / 39) / 2)  # 10 leaves of 40 per range, 2 QIs
    assert sorted({r[0] for r in table_rows(engine, "ages_g")}) == ["[20,30)", "[30,40)", "[40,50)", "[50,60)"]


def test_a_failing_label_check_rolls_back(engine, make_table, monkeypatch):
    make_table("people", HAND)
    real = recoding.labels

    def wrong_levels(engine, report, source, written, hierarchies, levels, cls):  # age checked one level up
        real(engine, report, source, written, hierarchies, [level + (h.column == "age") for h, level in
                                                             zip(hierarchies, levels)], cls)

    monkeypatch.setattr(recoding, "labels", wrong_levels)
    with pytest.raises(VerificationError, match="values are the source's or its ancestors"):
        api.k_anonymize(engine, "people", "age,zip,sex", None, 2, hierarchy=HAND_SPECS, max_suppressed_records=0.2,
                        out="people_g")
    assert find_table(engine, TableName("people_g")) is None


def test_kanon_hierarchy_cli_and_refusals(capsys, db, engine, make_table):
    make_table("people", HAND)
    code, out, err = run(capsys, "kanon", "--db", db, "--table", "people", "--qi", "age,zip,sex", "--k", "2",
                         "--hierarchy", "age=interval:10,20", "--hierarchy", "zip=prefix:1",
                         "--max-suppressed-records", "0.2", "--json")
    assert code == 0, err
    assert json.loads(out)["recoding"]["levels"] == {"age": 1, "zip": 1, "sex": 0}
    for extra, message in [(["--in-place"], "cannot run --in-place"), (["--hierarchy", "income=prefix:1"],
                                                                        "not a quasi-identifier"),
                           (["--hierarchy", "age=interval:7"], "two hierarchies"),
                           (["--hierarchy", "zip=interval:5"], "needs a integer or float or decimal column")]:
        code, _, err = run(capsys, "kanon", "--db", db, "--table", "people", "--qi", "age,zip,sex", "--k", "2",
                           "--hierarchy", "age=interval:10,20", "--out", "x", *extra)
        assert code == 2 and err.count("\n") == 1 and message in err, (extra, err)
        assert find_table(engine, TableName("x")) is None
    code, _, err = run(capsys, "kanon", "--db", db, "--table", "people", "--qi", "age", "--k", "2",
                       "--hierarchy", "age=interval:10", "--max-suppressed-records", "1.5")
    assert code == 2 and "1.5" in err


def release_kanon(engine, tmp_path, table, qi, cls, keys):
    """Release `table` by one kanon step (k = 2, out <table>_g) with the step's extra `keys`:
    the spec file, the run's report and its manifest as JSON text."""
    spec = tmp_path / f"{table}.toml"
    spec.write_text(f'[source]\ntable = "{table}"\nqi = {qi}\nclass = "{cls}"\n\n'
                    f'[[steps]]\nkind = "kanon"\nk = 2\nout = "{table}_g"\n{keys}\n\n[gates]\nk = 2\n')
    report = anonsql.release_run(str(spec), engine)
    manifest = json.dumps(json.loads((tmp_path / f"{table}.release" / "manifest.json").read_text()))
    return spec, report, manifest


def test_release_kanon_step_takes_hierarchies(engine, make_table, tmp_path):
    make_table("people", HAND)
    spec, report, manifest = release_kanon(engine, tmp_path, "people", '["age", "zip", "sex"]', "income",
                                           'max_suppressed_records = 0.2\nhierarchy_bounds = true\n'
                                           'hierarchies = { age = "interval:10,20", zip = "prefix:1" }')
    assert report.ok and report.published == ["people_g"]
    assert {"age_lo", "age_hi"} <= set(get_table(engine, "people_g").column_names)
    assert '"levels": {"age": 1, "zip": 1, "sex": 0}' in manifest
    spec.write_text(spec.read_text().replace('"prefix:1"', '"prefix:0"'))
    with pytest.raises(AnonsqlError, match=r"^\S*people\.toml:\d+: bad hierarchy zip='prefix:0'"):
        anonsql.release_run(str(spec), engine, replace=True)


def test_an_engine_without_the_recoding_search_refuses(engine, make_table, monkeypatch):
    """Spark declares recodes_globally = False (README's Spark table): one error line, no table."""
    make_table("people", HAND)
    monkeypatch.setattr(type(engine), "recodes_globally", False)
    with pytest.raises(AnonsqlError, match="does not run on this engine yet"):
        api.k_anonymize(engine, "people", "age,zip,sex", None, 2, hierarchy=HAND_SPECS, out="people_g")
    assert find_table(engine, TableName("people_g")) is None


def test_the_script_recodes_as_the_run_does(engine, make_table, tmp_path):
    """--emit-sql --dry-run: nothing changes; the script (the recoded view first, the labels check
    last) run by hand writes the table the real run writes."""
    make_table("people", HAND)
    script = tmp_path / "people.sql"
    dry = api.k_anonymize(engine, "people", "age,zip,sex", None, 2, hierarchy=HAND_SPECS, max_suppressed_records=0.2,
                          out="people_script", emit_sql=str(script), execute=False)
    assert not dry.checks and find_table(engine, TableName("people_script")) is None
    text = script.read_text()
    assert "CREATE TEMPORARY VIEW" in text and "age: published values that are neither NULL nor a label" in text
    engine.execute(text.partition("-- Verification")[0])
    api.k_anonymize(engine, "people", "age,zip,sex", None, 2, hierarchy=HAND_SPECS, max_suppressed_records=0.2,
                    out="people_run")
    assert table_rows(engine, "people_script") == table_rows(engine, "people_run")
    ran = 0
    for query in text.partition("-- Verification")[2].split(";\n"):  # the labels checks, as a reviewer runs them
        if "neither NULL nor a label" in query:
            body = "\n".join(line for line in query.splitlines() if not line.startswith("--"))
            assert engine.fetch_all(body)[0][0] == 0
            ran += 1
    assert ran == 3


def test_the_labels_check_counts_by_class(engine, make_table):
    """Right labels in the right numbers overall, but moved between classes: the check fails."""
    make_table("src", {"age": [21, 25, 31], "income": ["a", "b", "b"]})
    make_table("fine", {"age": ["[20,30)", "[20,30)", None], "income": ["a", "b", "b"]})
    make_table("moved", {"age": ["[20,30)", "[20,30)", "[30,40)"], "income": ["b", "b", "a"]})
    [h] = parse_all(["age=interval:10"])
    for table, ok in (("fine", True), ("moved", False)):
        report = Report(table=table)
        recoding.labels(engine, report, get_table(engine, "src"), get_table(engine, table), [h], [1], "income")
        assert report.ok is ok
        report = Report(table=table)  # without the class, only the totals count: both pass
        recoding.labels(engine, report, get_table(engine, "src"), get_table(engine, table), [h], [1], None)
        assert report.ok


def test_ties_go_to_the_lower_node():
    """(2, 0) has the smaller bound (1) but loses 2 with its suppression; (0, 1) loses its bound, 2,
    without any: a tie, which the lower node (0, 1) must win though its bound comes later."""
    bounds = [np.array([0.0, 0.5, 1.0]), np.array([0.0, 2.0, 3.0])]
    infeasible = {(0, 0), (1, 0)}

    def evaluate(nodes):
        sup = np.array([5 if tuple(n) in infeasible else (1 if tuple(n) == (2, 0) else 0) for n in nodes])
        loss = np.array([bounds[0][a] + bounds[1][b] + (1.0 if (a, b) == (2, 0) else 0.0) for a, b in nodes])
        return lattice.Evaluated(sup, loss)

    for batch in (1, 2, 64):
        assert lattice.search([2, 2], bounds, 1, evaluate, batch=batch).levels == (0, 1)


@pytest.mark.parametrize("hierarchy", [None, "age=interval:10"])
def test_a_table_of_quasi_identifiers_only(engine, make_table, hierarchy, tmp_path):
    """No column outside the QIs and no class: the non-QI comparison has nothing to compare (it
    used to bind an empty column list and crash); it is skipped, and a note says so, in the run
    and in the script."""
    make_table("qis", {"age": [21, 25, 31, 37, 55], "sex": ["M", "M", "F", "F", "F"]})
    script = tmp_path / "kanon.sql"
    report = api.k_anonymize(engine, "qis", "age,sex", None, 2, hierarchy=hierarchy, out="qis_k",
                             max_suppressed_records=0.2, emit_sql=str(script))
    assert report.ok and check(engine, "qis_k", "age,sex", 2).ok
    assert "non-QI columns unchanged" not in {c.name for c in report.checks}
    assert verify.NOTHING_OUTSIDE in report.notes
    assert "non-QI columns unchanged" not in script.read_text()


#: Eight people over an interval and two calendar QIs (a date, a timestamp), NULLs among them;
#: `id` pairs each published row with its source row (make_bounded types the calendar columns).
BOUNDED = {"id": list(range(8)), "age": [21, 24, 26, 29, 33, 35, None, 38],
           "visit": ["2016-05-02", "2016-05-09", "2016-05-20", "2016-05-30", "2016-06-01", None, "2016-06-17",
                     "2016-06-30"],
           "stamp": [f"2016-0{m}-03 10:30:00" for m in (1, 1, 2, 2, 2, 3, 3, 3)]}
BOUNDED_SPECS = ["age=interval:10,20", "visit=date:month,year", "stamp=date:month"]


def make_bounded(engine, make_table):
    make_table("visits_text", BOUNDED)
    engine.execute("CREATE TABLE visits AS SELECT id, age, CAST(visit AS DATE) AS visit, "
                   "CAST(stamp AS TIMESTAMP) AS stamp FROM visits_text")


def test_bound_columns_hold_the_source_values(engine, make_table):
    """--hierarchy-bounds: <col>_lo/<col>_hi beside each interval and date QI, typed as the
    column, NULL exactly where the label is, and lo <= source < hi (lo = source = hi where the
    value is kept), row by row against the source."""
    make_bounded(engine, make_table)
    report = api.k_anonymize(engine, "visits", "age,visit,stamp", None, 2, hierarchy=BOUNDED_SPECS,
                             max_suppressed_records=0.25, out="visits_g", hierarchy_bounds=True)
    assert report.ok and "bound columns hold the source values" in {c.name for c in report.checks}
    assert report.recoding["bounds"] == {q: [f"{q}_lo", f"{q}_hi"] for q in ("age", "visit", "stamp")}
    source, out = get_table(engine, "visits"), get_table(engine, "visits_g")
    assert out.column_names == ["id", "age", "age_lo", "age_hi", "visit", "visit_lo", "visit_hi",
                                "stamp", "stamp_lo", "stamp_hi"]
    for q in ("age", "visit", "stamp"):
        assert out.column(f"{q}_lo").kind == out.column(f"{q}_hi").kind == source.column(q).kind
    src = {r[0]: r for r in table_rows(engine, "visits")}
    ranged = 0
    for row in table_rows(engine, "visits_g"):
        values = dict(zip(out.column_names, row))
        for j, q in enumerate(("age", "visit", "stamp"), start=1):
            x, label, lo, hi = src[row[0]][j], values[q], values[f"{q}_lo"], values[f"{q}_hi"]
            if label is None:
                assert lo is None and hi is None, (q, row)
            else:
                assert lo <= x < hi or lo == x == hi, (q, row, x)
                ranged += lo != hi
    assert ranged > 0  # some value published as a range: the bounds were really tested
    assert check(engine, "visits_g", "age,visit,stamp", 2).ok


def test_wrong_bounds_fail_the_check_and_roll_back(engine, make_table, monkeypatch):
    make_bounded(engine, make_table)
    real = recoding.bound_exprs

    def collapsed(h, level, data_type, dialect):  # a range [lo, lo]: its values above lo fall outside
        lo, hi = real(h, level, data_type, dialect)
        return (lo, lo.copy()) if 0 < level < h.top else (lo, hi)

    monkeypatch.setattr(recoding, "bound_exprs", collapsed)
    with pytest.raises(VerificationError, match="bound columns hold the source values"):
        api.k_anonymize(engine, "visits", "age,visit,stamp", None, 2, hierarchy=BOUNDED_SPECS,
                        max_suppressed_records=0.25, out="visits_g", hierarchy_bounds=True)
    assert find_table(engine, TableName("visits_g")) is None


def test_bound_columns_refusals(capsys, db, engine, make_table):
    make_table("people", {**HAND, "age_hi": [1, 2, 3, 4, 5]})
    for extra, message in [([], "give --hierarchy"), (["--hierarchy", "zip=prefix:1"], "none is given"),
                           (["--hierarchy", "age=interval:10"], "would add age_hi, already a column")]:
        code, _, err = run(capsys, "kanon", "--db", db, "--table", "people", "--qi", "age,zip,sex", "--k", "2",
                           "--hierarchy-bounds", "--out", "x", *extra)
        assert code == 2 and err.count("\n") == 1 and message in err, (extra, err)
        assert find_table(engine, TableName("x")) is None


def test_the_script_writes_and_checks_the_bounds(engine, make_table, tmp_path):
    """--emit-sql --dry-run with bounds: the script run by hand writes the bound columns the run
    writes, and its bounds checks return 0 on them."""
    make_bounded(engine, make_table)
    script = tmp_path / "visits.sql"
    api.k_anonymize(engine, "visits", "age,visit,stamp", None, 2, hierarchy=BOUNDED_SPECS, max_suppressed_records=0.25,
                    out="visits_script", emit_sql=str(script), execute=False, hierarchy_bounds=True)
    text = script.read_text()
    engine.execute(text.partition("-- Verification")[0])
    api.k_anonymize(engine, "visits", "age,visit,stamp", None, 2, hierarchy=BOUNDED_SPECS, max_suppressed_records=0.25,
                    out="visits_run", hierarchy_bounds=True)
    assert table_rows(engine, "visits_script") == table_rows(engine, "visits_run")
    ran = 0
    for query in text.partition("-- Verification")[2].split(";\n"):
        if "published ranges" in query:
            body = "\n".join(line for line in query.splitlines() if not line.startswith("--"))
            assert engine.fetch_all(body)[0][0] == 0
            ran += 1
    assert ran == 3


def exhaustive(rows, specs, k, limit, with_class=False):
    """Every feasible node's (loss metric, MAR cost) from Python alone (the hierarchies' label
    oracle, no SQL): rows in classes below k suppressed whole, as the search scores a node. LM: a
    label L loses (leaves under L - 1)/(D - 1), ⊥ 1, averaged over the cells; MAR: Σ over the
    cells of ln N(x, c) - ln N(L, c) + ln |leaves under L| (⊥: ln N(x, c) - ln N(c) + ln D), / N."""
    hs = parse_all(specs)
    classes = [r[-1] if with_class else 0 for r in rows]
    out = {}
    for node in itertools.product(*(range(h.top + 1) for h in hs)):
        labels = [tuple(h.label(r[j], level) for j, (h, level) in enumerate(zip(hs, node))) for r in rows]
        small = [labels.count(t) < k for t in labels]
        if sum(small) > limit:
            continue
        lm = mar = 0.0
        for j, (h, level) in enumerate(zip(hs, node)):
            col = [r[j] for r in rows]
            leaves = {x for x in col if x is not None}
            under = Counter(h.label(x, level) for x in leaves)
            nxc, nc = Counter(zip(col, classes)), Counter(classes)
            nlc = Counter((h.label(x, level), c) for x, c in zip(col, classes))
            for x, c, alone in zip(col, classes, small):
                label = None if alone else h.label(x, level)
                if label is None:
                    lm += 1
                    mar += 0 if x is None else math.log(nxc[x, c] / nc[c] * len(leaves))
                else:
                    lm += (under[label] - 1) / max(len(leaves) - 1, 1)
                    mar += math.log(nxc[x, c] / nlc[label, c] * under[label])
        out[node] = (lm / (len(rows) * len(hs)), mar / len(rows))
    return out


#: Ten (x, y) pairs where ARX's loss metric and the MAR cost disagree (k = 2, one row may be left
#: alone): LM keeps y whole and cuts x into tens (0.3 against 0.5 for both in tens), while x in
#: tens leaves y's class-conditional distribution far from the data (KL 0.069 against 0.057 for
#: both in tens, whose ranges hold their values more evenly).
DISAGREE = [(3, 2), (11, 10), (13, 11), (0, 2), (2, 12), (13, 10), (10, 11), (2, 2), (12, 12), (12, 12)]
XY = ["x=interval:10", "y=interval:10"]


def test_the_two_utilities_pick_different_nodes(engine, make_table):
    """The golden lattice: each utility's node is the exhaustive Python optimum of its own score
    (ties: the lower node, then smaller levels), the two differ, and each run reports its score."""
    make_table("xy", {"x": [r[0] for r in DISAGREE], "y": [r[1] for r in DISAGREE]})
    scores = exhaustive(DISAGREE, XY, 2, 1)
    chosen = {}
    for i, (utility, key) in enumerate([("loss", "loss_metric"), ("mar", "kl_divergence")]):
        report = api.k_anonymize(engine, "xy", "x,y", None, 2, hierarchy=XY, max_suppressed_records=0.1,
                                 out=f"xy_{utility}", search_utility=utility)
        best = min(scores, key=lambda node: (round(scores[node][i], 9), sum(node), node))
        levels = tuple(report.recoding["levels"][q] for q in ("x", "y"))
        assert levels == best and report.recoding[key] == pytest.approx(scores[best][i]) and report.ok
        chosen[utility] = levels
    assert chosen["loss"] != chosen["mar"]
    assert "optimal by MAR cost (KL of the class-conditional distributions) 0.0575" in "\n".join(report.lines())


@pytest.mark.parametrize("seed", range(3))
def test_the_mar_search_with_a_class_is_the_exhaustive_optimum(engine, make_table, seed):
    """With --class the MAR cost is per class (p(x|c)): random small tables, the search's node and
    KL against the exhaustive Python scores."""
    rng = np.random.default_rng(seed)
    rows = [(int(rng.choice([20, 23, 27, 31, 36, 44])), str(rng.choice(["12", "13", "34"])),
             str(rng.choice(["a", "b"]))) for _ in range(14)]
    make_table("t", {"age": [r[0] for r in rows], "zip": [r[1] for r in rows], "income": [r[2] for r in rows]})
    specs = ["age=interval:10,20", "zip=prefix:1"]
    scores = exhaustive(rows, specs, 2, 2, with_class=True)
    report = api.k_anonymize(engine, "t", "age,zip", "income", 2, hierarchy=specs, max_suppressed_records=2 / 14,
                             out="t_mar", search_utility="mar")
    best = min(scores, key=lambda node: (round(scores[node][1], 9), sum(node), node))
    assert tuple(report.recoding["levels"].values()) == best
    assert report.recoding["kl_divergence"] == pytest.approx(scores[best][1]) and report.ok


def test_a_bad_search_utility_is_one_error(capsys, db, engine, make_table):
    make_table("xy", {"x": [r[0] for r in DISAGREE], "y": [r[1] for r in DISAGREE]})
    code, _, err = run(capsys, "kanon", "--db", db, "--table", "xy", "--qi", "x,y", "--k", "2",
                       "--hierarchy", "x=interval:10", "--search-utility", "ham", "--out", "x2")
    assert code == 2 and err.count("\n") == 1 and "ham" in err
    with pytest.raises(AnonsqlError, match="search-utility 'kl'"):
        api.k_anonymize(engine, "xy", "x,y", None, 2, hierarchy=XY, search_utility="kl")
    assert find_table(engine, TableName("x2")) is None


def test_release_kanon_step_takes_the_search_utility(engine, make_table, tmp_path):
    rows = [(x, y, "ab"[i % 2]) for i, (x, y) in enumerate(DISAGREE)]
    make_table("xy", {"x": [r[0] for r in rows], "y": [r[1] for r in rows], "c": [r[2] for r in rows]})
    scores = exhaustive(rows, XY, 2, 1, with_class=True)
    best = min(scores, key=lambda node: (round(scores[node][1], 9), sum(node), node))
    _, report, manifest = release_kanon(engine, tmp_path, "xy", '["x", "y"]', "c",
                                        'max_suppressed_records = 0.1\nsearch_utility = "mar"\n'
                                        'hierarchies = { x = "interval:10", y = "interval:10" }')
    assert report.ok
    assert '"utility": "MAR cost' in manifest and f'"levels": {{"x": {best[0]}, "y": {best[1]}}}' in manifest
