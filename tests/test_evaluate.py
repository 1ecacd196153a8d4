"""`evaluate`: CV error of classifiers trained on the anonymized table, tested on the original
(Kameya & Hayashi 2016, Sec. 4). Every engine test runs on DuckDB and PostgreSQL."""

from __future__ import annotations

import hashlib
import json
import sys
import time
import uuid
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import anonsql
from anonsql import catalog, sql
from anonsql.cli import main
from anonsql.data import datasets
from anonsql.data.loading import write_frame
from anonsql.engine import connect
from anonsql.errors import AnonsqlError
from anonsql.evaluate import evaluate, find_key, fold_assignment
from anonsql.evaluate.model import first_argmax

ADULT_QI = ["age", "workclass", "education", "marital_status", "occupation", "race", "sex", "native_country"]

# --- references written without anonsql: folds by hashlib, naive Bayes with exact fractions ---


def reference_folds(keys, classes, n_folds: int, seed: int) -> dict:
    """Within each class rank rows by md5('<key>|<seed>'); the r-th (from 0) goes to fold r mod F."""
    out = {}
    for c in sorted(set(classes)):
        ranked = sorted((k for k, cc in zip(keys, classes) if cc == c),
                        key=lambda k: hashlib.md5(f"{k}|{seed}".encode()).hexdigest())
        for r, k in enumerate(ranked):
            out[k] = r % n_folds
    return out


def reference_nb(orig: dict, anon: dict, n_folds: int, seed: int, alpha=1):
    """Misclassified test rows per fold, straight from Sec. 2.1 with Fractions.

    orig/anon: key -> (QI tuple with None for ⊥, class). |V_j| = non-NULL values of A_j in
    both tables; ties go to the first class label in sorted order."""
    keys = sorted(orig)
    fold = reference_folds(keys, [orig[k][1] for k in keys], n_folds, seed)
    labels = sorted({c for _, c in orig.values()} | {c for _, c in anon.values()})
    m = len(orig[keys[0]][0])
    domain = [{x[j] for t in (orig, anon) for x, _ in t.values() if x[j] is not None} for j in range(m)]
    wrong = [0] * n_folds
    for f in range(n_folds):
        train = [anon[k] for k in keys if fold[k] != f]
        for k in (k for k in keys if fold[k] == f):
            x, truth = orig[k]
            post = {}
            for c in labels:
                rows_c = [y for y, cc in train if cc == c]
                p = Fraction(len(rows_c) + alpha, len(train) + alpha * len(labels))
                for j in range(m):
                    if x[j] is None:  # p(⊥_j | c) = 1
                        continue
                    known = [y[j] for y in rows_c if y[j] is not None]
                    p *= Fraction(known.count(x[j]) + alpha, len(known) + alpha * len(domain[j]))
                post[c] = p
            best = max(post.values())
            wrong[f] += next(c for c in labels if post[c] == best) != truth
    return wrong


# --- the hand-computed example --------------------------------------------------------------

# id: (a, b, class). Row 10 has b = ⊥ already in the original (ignored in its test product).
ORIG = {1: (("x", "p"), "n"), 2: (("x", "q"), "n"), 3: (("y", "p"), "n"), 4: (("x", "p"), "n"),
        5: (("y", "q"), "y"), 6: (("y", "p"), "y"), 7: (("x", "q"), "y"), 8: (("y", "q"), "y"),
        9: (("x", "p"), "n"), 10: (("y", None), "y")}
# The anonymized copy suppresses 3.b, 4.a, 8.a and 10.a.
SUPPRESSED = {(3, 1), (4, 0), (8, 0), (10, 0)}
ANON = {k: (tuple(None if (k, j) in SUPPRESSED else v for j, v in enumerate(x)), c) for k, (x, c) in ORIG.items()}

# folds=2, seed=0: md5 ranks n-rows 3,1,2,9,4 and y-rows 7,5,10,6,8 -> fold 0 = {2,3,4,7,8,10}, fold 1 = {1,5,6,9}.
FOLDS_SEED0 = {1: 1, 2: 0, 3: 0, 4: 0, 5: 1, 6: 1, 7: 0, 8: 0, 9: 1, 10: 0}
#
# Fold 1 trains on the ANONYMIZED rows 2 (x,q,n) 3 (y,⊥,n) 4 (⊥,p,n) 7 (x,q,y) 8 (⊥,q,y) 10 (⊥,⊥,y):
#   p(n) = p(y) = (3+1)/(6+2) = 1/2
#   a | n: x,y known  -> p(x|n) = p(y|n) = (1+1)/(2+2) = 1/2
#   a | y: x known    -> p(x|y) = (1+1)/(1+2) = 2/3, p(y|y) = 1/3
#   b | n: q,p known  -> p(p|n) = p(q|n) = 1/2
#   b | y: q,q known  -> p(q|y) = (2+1)/(2+2) = 3/4, p(p|y) = 1/4
# test 1 (x,p,n): n 1/8  vs y 1/2*2/3*1/4 = 1/12 -> n  right
# test 5 (y,q,y): n 1/8  vs y 1/2*1/3*3/4 = 1/8  -> tie, first label n  WRONG
# test 6 (y,p,y): n 1/8  vs y 1/2*1/3*1/4 = 1/24 -> n  WRONG
# test 9 (x,p,n): as 1 -> n right                                      => fold 1: 2 wrong
# Fold 0 trains on rows 1 (x,p,n) 5 (y,q,y) 6 (y,p,y) 9 (x,p,n), none suppressed:
#   p(x|n) = 3/4, p(y|y) = 3/4, p(p|n) = 3/4, p(p|y) = p(q|y) = 1/2
# test 2 (x,q,n): n 1/2*3/4*1/4 = 3/32 vs y 1/2*1/4*1/2 = 1/16 -> n right
# test 3 (y,p,n): n 3/32 vs y 1/2*3/4*1/2 = 3/16 -> y WRONG
# test 4 (x,p,n): n 9/32 vs y 1/16 -> n right;  test 7 (x,q,y): as 2 -> n WRONG
# test 8 (y,q,y): n 1/32 vs y 3/16 -> y right;  test 10 (y,⊥,y): n 1/8 vs y 3/8 -> y right
#                                                                     => fold 0: 2 wrong
# Anonymized error 4/10. Baseline (trained on the original): fold 0 as above (2 wrong); fold 1
# trains on the unsuppressed rows 2,3,4,7,8,10 and gets test 5 right (n 2/25 vs y 6/25) but
# test 6 wrong (n 3/25 vs y 3/50) => 2 + 1 wrong, 3/10.
HAND_WRONG, HAND_BASELINE_WRONG = [2, 2], [2, 1]


def _frame(rows: dict) -> dict[str, list]:
    keys = sorted(rows)
    return {"id": keys, "a": [rows[k][0][0] for k in keys], "b": [rows[k][0][1] for k in keys],
            "cls": [rows[k][1] for k in keys]}


def _tables(engine, *names):
    return [catalog.get_table(engine, n) for n in names]


def test_reference_matches_the_hand_computation():
    assert reference_folds(list(ORIG), [c for _, c in ORIG.values()], 2, 0) == FOLDS_SEED0
    assert reference_nb(ORIG, ANON, 2, 0) == HAND_WRONG
    assert reference_nb(ORIG, ORIG, 2, 0) == HAND_BASELINE_WRONG


def test_hand_computed_naive_bayes_errors(engine, make_table):
    make_table("orig", _frame(ORIG))
    make_table("anon", _frame(ANON))
    orig, anon = _tables(engine, "orig", "anon")
    folds = fold_assignment(engine, orig, "id", "cls", folds=2, seed=0)
    assert {int(k): int(f) for k, f in zip(folds["k"], folds["fold"])} == FOLDS_SEED0

    r = evaluate(engine, orig, anon, ["a", "b"], "cls", "id", folds=2, seed=0, classifiers=["nb"])
    nb = r.classifiers["nb"]
    assert r.rows == 10 and r.fold_rows == [6, 4] and r.key == "id"
    assert nb.misclassified == 4 and nb.error == 0.4
    assert nb.fold_errors == [2 / 6, 2 / 4]
    assert nb.baseline_misclassified == 3 and nb.baseline_error == 0.3
    assert nb.baseline_fold_errors == [2 / 6, 1 / 4]
    assert nb.degradation == pytest.approx(0.1)


def test_majority_class_baseline_beside_each_classifier(engine, make_table):
    """Fold 0 = {2,3,4,7,8,10} (3 n, 3 y) trains on fold 1 = {1,5,6,9} (2 n, 2 y): a tie, the
    first label n, 3 wrong; fold 1 trains on fold 0 (a tie again): n, 2 wrong => 5/10. A table
    with every quasi-identifier blanked teaches nothing: no better than that, and said so."""
    make_table("orig", _frame(ORIG))
    make_table("blank", _frame({k: ((None, None), c) for k, (_, c) in ORIG.items()}))
    orig, blank = _tables(engine, "orig", "blank")
    r = evaluate(engine, orig, orig, ["a", "b"], "cls", "id", folds=2, seed=0, classifiers=["nb"])
    assert r.majority_error == 0.5 and not r.notes
    assert "majority 50.00%" in r.lines()[1]
    r = evaluate(engine, orig, blank, ["a", "b"], "cls", "id", folds=2, seed=0, classifiers=["nb"])
    assert r.classifiers["nb"].error >= r.majority_error == 0.5
    assert r.notes == ["nb trained on blank is no better than always answering the most frequent class "
                       "(50.00% against 50.00% error)"]


def test_identical_tables_give_the_baseline_exactly(engine, make_table):
    make_table("orig", _frame(ORIG))
    orig, = _tables(engine, "orig")
    r = evaluate(engine, orig, orig, ["a", "b"], "cls", folds=2, seed=0)  # key found: id
    for name in ("nb", "tree"):
        c = r.classifiers[name]
        assert c.error == c.baseline_error and c.fold_errors == c.baseline_fold_errors
        assert c.degradation == 0.0
    assert r.classifiers["nb"].misclassified == sum(HAND_BASELINE_WRONG)


def test_fraction_reference_on_random_tables(engine, make_table):
    """Random small tables with random suppressions, several seeds and fold counts."""
    rng = np.random.default_rng(7)
    for trial in range(3):
        n = 40
        rows = {}
        for k in range(1, n + 1):
            x = tuple(rng.choice(["u", "v", "w"]) if j < 2 else rng.choice(["1", "2"]) for j in range(3))
            cls = rng.choice(["A", "B", "C"]) if k > 3 else ["A", "B", "C"][k - 1]
            rows[k] = (tuple(str(v) for v in x), str(cls))
        for k in range(1, 4):  # at least 3 rows per class for folds=3
            rows[k + 3] = (rows[k + 3][0], ["A", "B", "C"][k - 1])
            rows[k + 6] = (rows[k + 6][0], ["A", "B", "C"][k - 1])
        # suppression (None) and, for q0, a generalized value '*' the original never holds
        anon = {k: (tuple(None if rng.random() < 0.25 else "*" if j == 0 and rng.random() < 0.1 else v
                          for j, v in enumerate(x)), c) for k, (x, c) in rows.items()}
        orig_name, anon_name = f"o{trial}", f"a{trial}"
        for name, data in ((orig_name, rows), (anon_name, anon)):
            keys = sorted(data)
            make_table(name, {"id": keys, **{f"q{j}": [data[k][0][j] for k in keys] for j in range(3)},
                              "cls": [data[k][1] for k in keys]})
        orig, an = _tables(engine, orig_name, anon_name)
        for folds, seed in ((2, trial), (3, 11 + trial)):
            r = evaluate(engine, orig, an, ["q0", "q1", "q2"], "cls", "id", folds=folds, seed=seed,
                         classifiers="nb")
            want = reference_nb(rows, anon, folds, seed)
            got = [round(e * fr) for e, fr in zip(r.classifiers["nb"].fold_errors, r.fold_rows)]
            assert got == want
            assert r.classifiers["nb"].baseline_misclassified == sum(reference_nb(rows, rows, folds, seed))


def test_awkward_names_are_identifiers_not_sql(engine, make_table):
    """Key named fold, QIs named k, select, a"b and Marital Status, class n: all just names."""
    data = _frame(ORIG)
    renamed = {"fold": data["id"], "k": data["a"], 'a"b': data["b"], "select": data["a"],
               "Marital Status": data["b"], "n": data["cls"]}
    make_table("my table", renamed)
    anon = _frame(ANON)
    make_table('"anon.table"',
               {"fold": anon["id"], "k": anon["a"], 'a"b': anon["b"], "select": anon["a"],
                "Marital Status": anon["b"], "n": anon["cls"]})
    orig_t = catalog.get_table(engine, sql.TableName("my table"))
    anon_t = catalog.get_table(engine, '"anon.table"')
    r = evaluate(engine, orig_t, anon_t, ["k", 'a"b'], "n", folds=2, seed=0, classifiers="nb")
    assert r.key == "fold" and r.classifiers["nb"].misclassified == sum(HAND_WRONG)
    assert r.classifiers["nb"].baseline_misclassified == sum(HAND_BASELINE_WRONG)
    r = evaluate(engine, orig_t, anon_t, ["k", 'a"b', "select", "Marital Status"], "n", "fold", folds=2)
    assert set(r.classifiers) == {"nb", "tree"}


def test_first_argmax_breaks_near_ties_towards_the_first_class():
    s = np.log(np.array([[1 / 8, 1 / 2 * 1 / 3 * 3 / 4], [0.1, 0.3], [0.5, 0.5 - 1e-6]]))
    assert first_argmax(s).tolist() == [0, 1, 0]


# --- folds ------------------------------------------------------------------------------------


def test_folds_are_stratified_seeded_and_match_the_reference(engine, make_table):
    keys = list(range(1, 101))
    classes = ["a" if k % 3 else "b" for k in keys]
    make_table("t", {"id": keys, "x": ["v"] * 100, "cls": classes})
    t, = _tables(engine, "t")
    for folds, seed in ((10, 0), (4, 123), (3, -5)):
        df = fold_assignment(engine, t, "id", "cls", folds=folds, seed=seed)
        got = {int(k): int(f) for k, f in zip(df["k"], df["fold"])}
        assert got == reference_folds(keys, classes, folds, seed)
        for c in ("a", "b"):  # stratified: every fold gets floor or ceil of N(c)/F
            sizes = np.bincount([got[k] for k, cc in zip(keys, classes) if cc == c], minlength=folds)
            assert sizes.max() - sizes.min() <= 1
    a = fold_assignment(engine, t, "id", "cls", folds=10, seed=0)
    b = fold_assignment(engine, t, "id", "cls", folds=10, seed=1)
    assert not a.sort_values("k").reset_index(drop=True).equals(b.sort_values("k").reset_index(drop=True))


def test_duckdb_and_postgres_assign_identical_folds_and_errors(tmp_path, pg_server_url):
    """The same tables on both engines: the same folds (integer and text keys) and results."""
    rng = np.random.default_rng(3)
    n = 600
    frames = {
        "ints": pd.DataFrame({"id": pd.array(rng.permutation(10**6)[:n], dtype="Int64")}),
        "texts": pd.DataFrame({"id": [f"K-{i}-ünï{'x' * (i % 5)}" for i in range(n)]}),
    }
    for f in frames.values():
        f["q1"] = rng.choice(["a", "b", "c", "d"], n).astype(object)
        f["q2"] = pd.array(rng.integers(0, 4, n), dtype="Int64")
        f["cls"] = np.where(rng.random(n) < 0.3, "pos", "neg").astype(object)
    anon = {name: f.assign(q1=f["q1"].where(rng.random(n) > 0.2, None),
                           q2=f["q2"].where(pd.Series(rng.random(n) > 0.2), pd.NA)) for name, f in frames.items()}
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = connect(pg_server_url)
    admin.execute(f"CREATE SCHEMA {schema}")
    duck = connect(str(tmp_path / "x.duckdb"), create=True)
    pg = connect(f"{pg_server_url}?options=-csearch_path%3D{schema}")
    try:
        results = {}
        for label, eng in (("duckdb", duck), ("postgres", pg)):
            for name in frames:
                write_frame(eng, frames[name], name)
                write_frame(eng, anon[name], f"{name}_anon")
            for name in frames:
                o, a = _tables(eng, name, f"{name}_anon")
                folds = fold_assignment(eng, o, "id", "cls", folds=10, seed=42)
                results[label, name, "folds"] = dict(zip(folds["k"].tolist(), folds["fold"].tolist()))
                report = evaluate(eng, o, a, ["q1", "q2"], "cls", "id", folds=10, seed=42).to_dict()
                results[label, name, "eval"] = {k: v for k, v in report.items() if k != "seconds"}
        for name, f in frames.items():
            want = reference_folds(f["id"].tolist(), f["cls"].tolist(), 10, 42)
            assert results["duckdb", name, "folds"] == want
            assert results["postgres", name, "folds"] == want
            assert results["duckdb", name, "eval"] == results["postgres", name, "eval"]
    finally:
        duck.close()
        pg.close()
        admin.execute(f"DROP SCHEMA {schema} CASCADE")
        admin.close()


# --- Adult: SQL naive Bayes against a plain pandas implementation ------------------------------


def pandas_nb_cv(orig: pd.DataFrame, anon: pd.DataFrame, qi, cls, key, n_folds, seed, alpha=1.0):
    """Stratified CV, anonymized-train / original-test, naive Bayes with Laplace smoothing,
    counted per fold with pandas from the rows themselves. Returns misclassified per fold."""
    fold = reference_folds(orig[key].tolist(), orig[cls].tolist(), n_folds, seed)
    orig = orig.assign(_fold=orig[key].map(fold))
    anon = anon.assign(_fold=anon[key].map(fold))
    labels = sorted(set(orig[cls]) | set(anon[cls]))
    domain = {a: len(set(orig[a].dropna()) | set(anon[a].dropna())) for a in qi}
    wrong = []
    for f in range(n_folds):
        train, test = anon[anon["_fold"] != f], orig[orig["_fold"] == f]
        prior = train[cls].value_counts().reindex(labels, fill_value=0)
        scores = pd.DataFrame({c: np.log((prior[c] + alpha) / (len(train) + alpha * len(labels))) for c in labels},
                              index=test.index)
        for a in qi:
            counts = pd.crosstab(train[a], train[cls]).reindex(columns=labels, fill_value=0)  # drops NULL
            known = counts.sum(axis=0)
            for c in labels:
                n_xc = test[a].map(counts[c]).fillna(0)
                logp = np.log((n_xc + alpha) / (known[c] + alpha * domain[a]))
                scores[c] += np.where(test[a].isna(), 0.0, logp)
        predicted = scores.idxmax(axis=1)  # first label among equal maxima
        wrong.append(int((predicted != test[cls]).sum()))
    return wrong


def _adult_with_nulls(engine, name="adult"):
    datasets.load_dataset(engine, "adult-kh", name)
    q = sql.TableName(name).expr.sql(engine.dialect)
    s = sql.TableName(f"{name}_s").expr.sql(engine.dialect)
    engine.execute(f"CREATE TABLE {s} AS SELECT * FROM {q}")
    engine.execute(f"UPDATE {s} SET workclass = NULL WHERE id < 3000")
    engine.execute(f"UPDATE {s} SET occupation = NULL, age = NULL WHERE id BETWEEN 5000 AND 9000 AND income = '>50K'")
    engine.execute(f"UPDATE {s} SET native_country = NULL, sex = NULL, race = NULL WHERE id > 25000")
    engine.execute(f"UPDATE {s} SET education = NULL WHERE id BETWEEN 12000 AND 12500")


@pytest.mark.slow
def test_sql_naive_bayes_equals_pandas_on_adult(engine):
    _adult_with_nulls(engine)
    orig, anon = _tables(engine, "adult", "adult_s")
    start = time.perf_counter()
    r = evaluate(engine, orig, anon, ADULT_QI, "income", folds=10, seed=0, classifiers="nb")
    seconds = time.perf_counter() - start
    frame = lambda t: engine.fetch_df(f"SELECT * FROM {t.expr.sql(engine.dialect)}")  # noqa: E731
    o, a = frame(orig), frame(anon)
    start = time.perf_counter()
    want = pandas_nb_cv(o, a, ADULT_QI, "income", "id", 10, 0)
    want_base = pandas_nb_cv(o, o, ADULT_QI, "income", "id", 10, 0)
    print(f"\n[{engine.dialect}] evaluate nb on adult-kh: {seconds:.2f}s; pandas reference "
          f"{time.perf_counter() - start:.2f}s; error {r.classifiers['nb'].error:.4f} "
          f"baseline {r.classifiers['nb'].baseline_error:.4f}")
    nb = r.classifiers["nb"]
    assert r.rows == 30161 and r.key == "id"
    assert [round(e * n) for e, n in zip(nb.fold_errors, r.fold_rows)] == want
    assert [round(e * n) for e, n in zip(nb.baseline_fold_errors, r.fold_rows)] == want_base
    assert nb.baseline_error == pytest.approx(0.184, abs=0.002)  # ≈ 18.4%, an independent figure
    assert nb.error > nb.baseline_error


# --- the tree ------------------------------------------------------------------------------------


def test_tree_learns_a_deterministic_class_and_survives_nulls(engine, make_table):
    keys = list(range(1, 61))
    a = ["u", "v", "w"] * 20
    b = ["p", "q"] * 30
    cls = ["yes" if x == "u" else "no" for x in a]  # class = (a == u)
    make_table("o", {"id": keys, "a": a, "b": b, "cls": cls})
    make_table("s", {"id": keys, "a": [None if k % 4 == 0 else x for k, x in zip(keys, a)], "b": b, "cls": cls})
    o, s = _tables(engine, "o", "s")
    lines: list[str] = []
    r = evaluate(engine, o, s, ["a", "b"], "cls", "id", folds=5, seed=1, classifiers=["tree"], progress=lines.append)
    assert [x for x in lines if "tree fold" in x] == [f"  evaluate: tree fold {f}/5 done" for f in range(1, 6)] * 2
    t = r.classifiers["tree"]
    assert t.baseline_error == 0.0
    assert 0.0 <= t.error <= 0.5 and len(t.fold_errors) == 5
    assert list(r.classifiers) == ["tree"]


def test_weighted_tree_on_distinct_tuples_predicts_like_the_row_by_row_tree():
    """The tree learns from distinct (QI vector, class) tuples weighted by their counts (merged
    across training folds); on a small table with repeated rows, NULLs and mixed classes it
    predicts every possible tuple exactly like scikit-learn fitted on one row per record."""
    pytest.importorskip("sklearn")
    from sklearn.tree import DecisionTreeClassifier

    from anonsql.evaluate.tree import distinct_rows, one_hot

    rng = np.random.default_rng(3)
    domain = [3, 4, 2]
    rows = np.column_stack([rng.integers(-1, d, size=400) for d in domain])
    classes = (rows[:, 0] + np.maximum(rows[:, 1], 0) + (rng.random(400) < 0.2)) % 3
    tuples, tuple_of = distinct_rows(np.column_stack([rows, classes]))
    assert (tuples[tuple_of] == np.column_stack([rows, classes])).all()
    codes, cls, weights = tuples[:, :-1], tuples[:, -1], np.bincount(tuple_of).astype(np.float64)
    assert len(codes) < 200 and weights.sum() == 400
    grid = np.array(np.meshgrid(*[np.arange(-1, d) for d in domain])).reshape(len(domain), -1).T
    for seed in range(3):
        by_row = DecisionTreeClassifier(criterion="entropy", random_state=seed).fit(one_hot(rows, domain), classes)
        weighted = DecisionTreeClassifier(criterion="entropy", random_state=seed).fit(
            one_hot(codes, domain), cls, sample_weight=weights)
        assert (by_row.predict(one_hot(grid, domain)) == weighted.predict(one_hot(grid, domain))).all()


def _tree_arrays(model, *names: str) -> list[np.ndarray]:
    t = model.tree_
    return [np.asarray(getattr(t, n)) for n in ("feature", "threshold", "children_left", "children_right",
                                                 "impurity", "weighted_n_node_samples", "value", *names)]


def _same_tree(a, b, *names: str) -> bool:
    return all(np.array_equal(x, y, equal_nan=True) for x, y in zip(_tree_arrays(a, *names), _tree_arrays(b, *names)))


def _coded_adult() -> tuple[np.ndarray, np.ndarray, list[int]]:
    """adult-kh as codes (no NULL) and class codes."""
    eng = connect(":memory:")
    datasets.load_dataset(eng, "adult-kh", "adult")
    frame = eng.fetch_df('SELECT * FROM "adult"')
    eng.close()
    coded = [pd.factorize(frame[c], sort=True) for c in ADULT_QI]
    codes = np.column_stack([c for c, _ in coded]).astype(np.int32)
    return codes, pd.factorize(frame["income"], sort=True)[0].astype(np.int32), [len(u) for _, u in coded]


def _blanked(codes: np.ndarray, share: float, seed: int) -> np.ndarray:
    """A copy of codes with a seeded share of the cells NULL (-1)."""
    out = codes.copy()
    out[np.random.default_rng(seed).random(codes.shape) < share] = -1
    return out


@pytest.mark.slow
def test_weighted_distinct_tuples_grow_the_row_by_row_tree_on_adult_and_others():
    """Avenue (1) of issue 16 checked on the trees themselves: on Adult (without and with 10%
    NULLs in the training rows) and on tree_table (original and anonymized), for three seeds,
    the tree fitted on distinct (QI vector, class) tuples weighted by their counts has the same
    nodes as the one fitted on one row per record (split features, thresholds, children,
    impurities, weighted class counts); fitting all folds' tuples with weight 0 for the held-out
    ones (what tree.misclassified does) gives the identical tree, node for node. After
    route_nulls_by_records its NULL directions are the row-by-row tree's too (without it they
    differ on Adult), so it predicts alike every test vector, with 10% of the cells NULL."""
    pytest.importorskip("sklearn")
    from sklearn.tree import DecisionTreeClassifier

    from anonsql.evaluate.tree import distinct_rows, one_hot, route_nulls_by_records

    orig, anon = tree_table()
    adult, adult_class, adult_domain = _coded_adult()
    tables = [(adult, adult_class, adult_domain), (_blanked(adult, 0.1, 7), adult_class, adult_domain)]
    for frame in (orig, anon):
        coded = [pd.factorize(frame[f"q{j}"], sort=True) for j in range(4)]
        tables.append((np.column_stack([c for c, _ in coded]).astype(np.int32),
                       pd.factorize(frame["cls"], sort=True)[0].astype(np.int32), [len(u) for _, u in coded]))
    routed_differently = 0
    for codes, classes, domain in tables:
        learn = np.arange(len(codes)) % 10 != 3  # one fold held out
        tuples, tuple_of = distinct_rows(np.column_stack([codes, classes]))
        weights = np.bincount(tuple_of[learn], minlength=len(tuples)).astype(np.float64)
        taught = weights.nonzero()[0]
        assert 0 < len(taught) < len(tuples) and len(taught) < learn.sum()
        learn_x = one_hot(tuples[:, :-1], domain)
        null = (tuples[:, :-1] < 0) & (weights > 0)[:, None]
        attribute_of = np.repeat(np.arange(len(domain)), domain)
        for seed in range(3):
            def fit(x, y, w=None, seed=seed):
                return DecisionTreeClassifier(criterion="entropy", random_state=seed).fit(x, y, sample_weight=w)
            ask = one_hot(_blanked(codes[~learn].clip(0), 0.1, seed), domain)  # the held-out vectors, 10% ⊥
            by_row = fit(one_hot(codes[learn], domain), classes[learn])
            weighted = fit(one_hot(tuples[taught, :-1], domain), tuples[taught, -1], weights[taught])
            shared = fit(learn_x, tuples[:, -1], weights)
            assert _same_tree(by_row, weighted)
            assert _same_tree(weighted, shared, "n_node_samples", "missing_go_to_left")
            routed_differently += int((by_row.predict(ask) != shared.predict(ask)).sum())
            route_nulls_by_records(shared, learn_x, null, attribute_of)
            assert _same_tree(by_row, shared, "missing_go_to_left")
            assert (by_row.predict(ask) == shared.predict(ask)).all()
            assert _same_tree(weighted, shared, "n_node_samples")  # only the NULL directions changed
    assert routed_differently > 100  # scikit-learn alone: many NULL test cells routed by tuples


def test_weighted_tree_routes_an_untrained_null_by_records():
    """A NULL test cell at a node trained WITHOUT NULLs goes down the branch with more training
    samples, and scikit-learn counts samples, not weights. Here a=0 holds one distinct tuple
    (10 rows, class x), a=1 two tuples (2 rows, class y): row by row a NULL a goes with the 10
    rows (x), weighted with the 2 tuples (y) until route_nulls_by_records sends it by rows."""
    pytest.importorskip("sklearn")
    from sklearn.tree import DecisionTreeClassifier

    from anonsql.evaluate.tree import one_hot, route_nulls_by_records

    domain = [2, 2]
    rows = np.array([[0, 0]] * 10 + [[1, 0], [1, 1]])
    classes = np.array([0] * 10 + [1, 1])
    tuples, weights = np.array([[0, 0], [1, 0], [1, 1]]), np.array([10.0, 1.0, 1.0])
    null_a = one_hot(np.array([[-1, 0]]), domain)
    for seed in range(3):
        by_row = DecisionTreeClassifier(criterion="entropy", random_state=seed).fit(one_hot(rows, domain), classes)
        weighted = DecisionTreeClassifier(criterion="entropy", random_state=seed).fit(
            one_hot(tuples, domain), np.array([0, 1, 1]), sample_weight=weights)
        assert _same_tree(by_row, weighted)
        assert by_row.predict(null_a).tolist() == [0] and weighted.predict(null_a).tolist() == [1]
        route_nulls_by_records(weighted, one_hot(tuples, domain), np.zeros((3, 2), dtype=bool), np.array([0, 0, 1, 1]))
        assert _same_tree(by_row, weighted, "missing_go_to_left")
        assert weighted.predict(null_a).tolist() == [0]


def test_tree_without_missing_value_directions_is_a_clear_error():
    """A scikit-learn whose tree nodes lack missing_go_to_left (before 1.3) is one clear error."""
    sklearn = pytest.importorskip("sklearn")
    from types import SimpleNamespace

    from anonsql.evaluate.tree import route_nulls_by_records

    old_nodes = np.zeros(3, dtype=[("left_child", np.intp), ("right_child", np.intp), ("feature", np.intp)])
    model = SimpleNamespace(tree_=SimpleNamespace(__getstate__=lambda: {"nodes": old_nodes}))
    with pytest.raises(AnonsqlError, match=rf"needs scikit-learn >= 1.3 .*found {sklearn.__version__}"):
        route_nulls_by_records(model, np.zeros((1, 1), np.float32), np.zeros((1, 1), bool), np.zeros(1, np.intp))


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_tree_misclassified_equals_row_by_row_trees_with_nulls_on_both_sides(monkeypatch, workers):
    """tree.misclassified end to end against scikit-learn fitted per fold on one row per
    record: Adult with 10% NULL cells in the training table and 10% (elsewhere) in the test
    table, 5 folds, two seeds; and the same on tree_table's anonymized copy. Every fold's
    misclassified count is the row-by-row tree's, whether the folds are fitted one at a time
    or several at once in threads (FIT_WORKERS)."""
    pytest.importorskip("sklearn")
    from sklearn.tree import DecisionTreeClassifier

    from anonsql.evaluate import tree
    from anonsql.evaluate.model import FoldCombos
    from anonsql.evaluate.tree import distinct_rows, misclassified, one_hot

    monkeypatch.setattr(tree, "FIT_WORKERS", workers)

    def combos(fold, codes, classes):
        rows, number = distinct_rows(np.column_stack([fold, codes, classes]))
        return FoldCombos(rows[:, 0].astype(np.int64), rows[:, 1:-1].astype(np.int32),
                          rows[:, -1].astype(np.int64), np.bincount(number).astype(np.int64))

    adult, adult_class, adult_domain = _coded_adult()
    orig, anon = tree_table()
    small = [np.column_stack([pd.factorize(f[f"q{j}"], sort=True)[0] for j in range(4)]) for f in (orig, anon)]
    small_class = pd.factorize(orig["cls"], sort=True)[0]
    cases = [(_blanked(adult, 0.1, 7), _blanked(adult, 0.1, 8), adult_class, adult_domain),
             (small[1], _blanked(small[0], 0.1, 9), small_class, [int(c.max()) + 1 for c in small[0].T])]
    for train, test, classes, domain in cases:
        fold = np.arange(len(classes)) % 5
        for seed in (0, 1):
            want = []
            for f in range(5):
                model = DecisionTreeClassifier(criterion="entropy", random_state=seed)
                model.fit(one_hot(train[fold != f], domain), classes[fold != f])
                want.append(int((model.predict(one_hot(test[fold == f], domain)) != classes[fold == f]).sum()))
            got = misclassified(combos(fold, train, classes), combos(fold, test, classes), domain, 5, seed)
            assert got.tolist() == want


def test_distinct_rows_numbers_every_row():
    """Both ways of numbering distinct rows (one mixed-radix int64, or rows compared whole when
    the codes are too large for it) give the sorted distinct rows and every row's number."""
    from anonsql.evaluate.tree import distinct_rows

    rng = np.random.default_rng(0)
    for high in (5, 10**6):  # 10**6: (10**6 + 2)**5 overflows int64
        table = rng.integers(0, 4, size=(500, 5)) * high // 3 - 1  # codes >= -1
        rows, number = distinct_rows(table)
        want = np.unique(table, axis=0)
        assert (rows == want).all() and (rows[number] == table).all()
    rows, number = distinct_rows(np.zeros((0, 3), dtype=np.int64))
    assert rows.shape == (0, 3) and number.shape == (0,)


def tree_table(n: int = 3000, seed: int = 5) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A table where the tree matters: class = (q0 + q1 * q2) mod 3 for 75% of the rows, the
    rest random; the anonymized copy blanks 15% of every QI's cells."""
    rng = np.random.default_rng(seed)
    cols = {f"q{j}": rng.integers(0, 2 + j, size=n) for j in range(4)}
    noisy = rng.random(n) < 0.25
    cls = np.where(noisy, rng.integers(0, 3, size=n), (cols["q0"] + cols["q1"] * cols["q2"]) % 3)
    orig = pd.DataFrame({"id": np.arange(1, n + 1), **{k: [f"v{x}" for x in v] for k, v in cols.items()},
                         "cls": [f"c{x}" for x in cls]})
    anon = orig.copy()
    for j in range(4):
        anon.loc[rng.random(n) < 0.15, f"q{j}"] = None
    return orig, anon


def _wrong_per_fold(report, name: str) -> tuple[list[int], list[int]]:
    c = report.classifiers[name]
    return ([round(e * n) for e, n in zip(c.fold_errors, report.fold_rows)],
            [round(e * n) for e, n in zip(c.baseline_fold_errors, report.fold_rows)])


# Misclassified test rows per fold (anonymized-trained, original-trained), pinned as the tree
# computed them before it trained on tuples numbered once for all folds (issue 16). Routing
# untrained NULLs by rows instead of distinct tuples left them unchanged: both original tables
# are NULL-free, so no test cell is NULL (test_tree_misclassified_equals_row_by_row_trees_with_
# nulls_on_both_sides covers NULL test cells).
PINNED_TREE = {
    (10, 0): ([51, 56, 54, 48, 55, 57, 42, 46, 51, 39], 494),
    (5, 3): ([103, 107, 98, 87, 110], 494),
}
PINNED_ADULT_TREE = ([625, 627, 615, 603, 618, 613, 624, 590, 598, 585], 5890)


def test_tree_errors_are_pinned(engine, make_table):
    pytest.importorskip("sklearn")
    orig, anon = tree_table()
    make_table("o", {c: orig[c].tolist() for c in orig})
    make_table("a", {c: anon[c].tolist() for c in anon})
    o, a = _tables(engine, "o", "a")
    for (folds, seed), (wrong, baseline) in PINNED_TREE.items():
        r = evaluate(engine, o, a, ["q0", "q1", "q2", "q3"], "cls", "id", folds=folds, seed=seed)
        got, got_base = _wrong_per_fold(r, "tree")
        assert got == wrong and sum(got_base) == baseline == r.classifiers["tree"].baseline_misclassified
    assert r.classifiers["tree"].error < r.classifiers["nb"].error  # the tree matters here


@pytest.mark.slow
def test_tree_errors_on_adult_are_pinned(engine):
    pytest.importorskip("sklearn")
    _adult_with_nulls(engine)
    o, a = _tables(engine, "adult", "adult_s")
    r = evaluate(engine, o, a, ADULT_QI, "income", folds=10, seed=0, classifiers="tree")
    got, got_base = _wrong_per_fold(r, "tree")
    assert got == PINNED_ADULT_TREE[0] and sum(got_base) == PINNED_ADULT_TREE[1]


def test_tree_without_scikit_learn_is_a_clear_error(engine, make_table, monkeypatch):
    make_table("orig", _frame(ORIG))
    orig, = _tables(engine, "orig")
    monkeypatch.setitem(sys.modules, "sklearn.tree", None)
    with pytest.raises(AnonsqlError, match=r"needs scikit-learn: pip install 'anonsql\[eval\]'"):
        evaluate(engine, orig, orig, ["a", "b"], "cls", "id", folds=2, classifiers="nb,tree")
    r = evaluate(engine, orig, orig, ["a", "b"], "cls", "id", folds=2, classifiers="nb")
    assert list(r.classifiers) == ["nb"]


# --- bad input --------------------------------------------------------------------------------


@pytest.fixture
def pair(engine, make_table):
    make_table("orig", _frame(ORIG))
    make_table("anon", _frame(ANON))
    return _tables(engine, "orig", "anon")


def _fails(engine, orig, anon, match, **kw):
    args = dict(qi=["a", "b"], class_column="cls", key="id", folds=2)
    args.update(kw)
    with pytest.raises(AnonsqlError, match=match):
        evaluate(engine, orig, anon, **args)


def test_row_counts_differ(engine, make_table, pair):
    rows = {k: v for k, v in ANON.items() if k != 4}
    make_table("short", _frame(rows))
    orig, short = pair[0], _tables(engine, "short")[0]
    _fails(engine, orig, short, r"differ in row count: orig has 10 rows, short has 9")


def test_keys_differ(engine, make_table, pair):
    rows = dict(ANON)
    rows[11] = rows.pop(4)
    make_table("moved", _frame(rows))
    _fails(engine, pair[0], _tables(engine, "moved")[0], r"different keys: 1 of the 10 values of 'id'")


def test_key_not_unique(engine, make_table, pair):
    data = _frame(ORIG)
    data["id"][1] = 1
    make_table("dup", data)
    dup, = _tables(engine, "dup")
    _fails(engine, dup, pair[1], r"key column 'id' is not unique in dup: 10 rows, 9 distinct")
    _fails(engine, pair[0], dup, r"key column 'id' is not unique and non-NULL in dup")


def test_key_with_null(engine, make_table, pair):
    data = _frame(ORIG)
    data["id"][1] = None
    make_table("nullkey", data)
    _fails(engine, _tables(engine, "nullkey")[0], pair[1], r"'id' has 1 NULL value\(s\) in nullkey")


def test_class_null_in_anonymized(engine, make_table, pair):
    data = _frame(ANON)
    data["cls"][0] = None
    make_table("nolabel", data)
    _fails(engine, pair[0], _tables(engine, "nolabel")[0], r"class column 'cls' has 1 NULL .*\(in table nolabel\)")


def test_class_changed(engine, make_table, pair):
    rows = dict(ANON)
    rows[2] = (rows[2][0], "y")
    make_table("relabeled", _frame(rows))
    _fails(engine, pair[0], _tables(engine, "relabeled")[0], r"1 row\(s\) have a different 'cls'")


def test_key_found_or_not(engine, make_table, pair):
    orig, anon = pair
    assert find_key(engine, orig, anon, ["a", "b"], "cls") == "id"
    assert evaluate(engine, orig, anon, ["a", "b"], "cls", folds=2).key == "id"
    data = _frame(ORIG)
    del data["id"]
    make_table("nokey", data)
    nokey, = _tables(engine, "nokey")
    _fails(engine, nokey, nokey, r"no key column .*every shared column is a quasi-identifier.*pass --key", key=None)
    data = _frame(ORIG)
    data["id"] = [1] * 5 + [2] * 5
    make_table("notunique", data)
    nu, = _tables(engine, "notunique")
    _fails(engine, nu, nu, r"none of id is unique in notunique; pass --key", key=None)
    data = _frame(ORIG)
    data["id2"] = [k * 10 for k in data["id"]]
    make_table("twokeys", data)
    two, = _tables(engine, "twokeys")
    _fails(engine, two, two, r"several columns could be the key \(id, id2\); pass --key", key=None)
    r = evaluate(engine, two, two, ["a", "b"], "cls", "ID2", folds=2)  # an explicit key resolves
    assert r.key == "id2"


@pytest.mark.parametrize(("kw", "match"), [
    (dict(folds=1), r"folds must be an integer >= 2, got 1"),
    (dict(folds=True), r"folds must be an integer >= 2, got True"),
    (dict(seed=1.5), r"seed must be an integer"),
    (dict(alpha=0), r"alpha .* must be a finite number > 0"),
])
def test_bad_values_are_refused_where_the_api_receives_them(engine, pair, kw, match):
    args = dict(qi=["a", "b"], class_column="cls", key="id", folds=2)
    with pytest.raises(AnonsqlError, match=match):
        anonsql.evaluate_classifiers(engine, "orig", "anon", **{**args, **kw})


def test_bad_parameters(engine, pair):
    orig, anon = pair
    _fails(engine, orig, anon, r"folds \(6\) exceeds the rows of the smallest class \('n': 5\); use --folds 5",
           folds=6)
    _fails(engine, orig, anon, r"unknown classifier 'svm'; choose one of nb, tree", classifiers="nb,svm")
    _fails(engine, orig, anon, r"no quasi-identifier columns", qi=[])
    _fails(engine, orig, anon, r"key column 'a' must not be a quasi-identifier", key="a")


def test_anonymized_table_lacks_a_column(engine, make_table, pair):
    data = _frame(ANON)
    del data["b"]
    make_table("narrow", data)
    _fails(engine, pair[0], _tables(engine, "narrow")[0], r"unknown column 'b' in table narrow")


# --- the command line ------------------------------------------------------------------------


def run(capsys, *argv):
    """Run the CLI in-process; returns (exit code, stdout, stderr)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_evaluate_cli(capsys, db, make_table, tmp_path):
    make_table("orig", _frame(ORIG))
    make_table("anon", _frame(ANON))
    args = ["evaluate", "--db", db, "--original", "orig", "--anonymized", "anon", "--qi", "a,b", "--class", "cls"]
    code, out, _ = run(capsys, *args, "--folds", "2", "--classifiers", "nb", "--json")
    data = json.loads(out)
    assert code == 0 and data["key"] == "id" and data["classifiers"]["nb"]["error"] == 0.4
    assert data["ok"] is True and data["table"] == "orig" and data["anonymized"] == "anon"
    report = tmp_path / "report.json"
    code, out, _ = run(capsys, *args, "--folds", "2", "--classifiers", "NB", "--report", str(report))
    assert code == 0 and json.loads(report.read_text())["classifiers"]["nb"]["misclassified"] == 4
    assert out.startswith("stratified 2-fold cross validation (seed 0), 10 rows matched by id: trained on anon, "
                          "tested on orig; baseline trained on orig; majority: always the most frequent class\n"
                          "  nb    error 40.00%  baseline 30.00%  (+10.00 points)  majority 50.00%\n")
    code, out, err = run(capsys, *args, "--folds", "2")  # progress on stderr, stdout keeps the result
    assert code == 0 and out.startswith("stratified 2-fold") and "evaluate: counting per fold (2 folds)" in err
    assert "evaluate: training and testing tree on every fold" in err  # fold lines: at most one a second
    assert "evaluate:" not in out
    code, out, err = run(capsys, *args, "--folds", "2", "--quiet")
    assert code == 0 and out.startswith("stratified 2-fold") and err == ""
    code, _, err = run(capsys, *args, "--folds", "1")  # rejected at parse time, like a bad classifier
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("anonsql evaluate: error: Invalid value for '--folds': 1 is not in the range x>=2")
    code, _, err = run(capsys, *args, "--folds", "2", "--classifiers", "nb,svm")
    assert code == 2
    assert err.startswith("anonsql evaluate: error: Invalid value for '--classifiers': 'svm' is not one of")
