"""Feature selection under k-anonymity by containment (Zhang et al. 2017): golden tests of the
paper's examples on the pure algorithms, then the SQL job on both engines."""

import json
from fractions import Fraction
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from anonsql import api, catalog, cli
from anonsql.data.loading import write_frame
from anonsql.engine import connect
from anonsql.errors import AnonsqlError, VerificationError
from anonsql.features import (
    BinaryCounts,
    ac_dataset,
    cm_penalty,
    containment_supports,
    distcnt,
    feature_hamdist,
    frequent_itemsets,
    greedy_distcnt,
    greedy_hamdist,
    hamdist,
    kanon_dataset,
    maximal_itemsets,
    maximal_select,
)
from anonsql.features import verify as features_verify
from anonsql.features.job import binarize
from anonsql.features.spec import parse_spec

from .conftest import table_rows

# Table 1: six users, keywords x1..x5, class +1 / -1 (C_1 = +1).
TABLE1 = [[1, 0, 1, 0, 1], [1, 0, 1, 0, 1], [1, 0, 0, 1, 1], [1, 0, 1, 0, 1], [1, 1, 1, 0, 1], [1, 1, 0, 1, 1]]
LABELS1 = ["+1", "-1", "+1", "+1", "-1", "-1"]
X = {f"x{j + 1}": j for j in range(5)}


def sets(names: str) -> set[tuple[int, ...]]:
    """'x1x2x5, x3' -> {(0, 1, 4), (2,)}."""
    return {tuple(X["x" + p] for p in item.strip().split("x")[1:]) for item in names.split(",")}


@pytest.fixture
def toy() -> BinaryCounts:
    return BinaryCounts.from_rows(TABLE1, LABELS1, "+1")


def row_ac(rows):
    """AC(e) of each row of a row-by-row table (row order kept)."""
    m = np.asarray(rows, dtype=bool)
    return containment_supports(m, np.ones(len(m), dtype=np.int64))


def test_containment_set_and_ac_of_table1():
    ac = row_ac(TABLE1)
    assert [x for x, v in X.items() if TABLE1[0][v]] == ["x1", "x3", "x5"]  # CS(e1)
    assert ac[0] == 4  # e1 is 4-AC: e2, e4 and e5 contain {x1, x3, x5}
    assert ac[1] == 4  # the 4-AC group of e2 is {e1, e2, e4, e5}, no 5-AC group
    assert ac[5] == 1  # CS(e6) = {x1, x2, x4, x5}: only e6 itself
    assert ac.min() == 1


def test_ac_of_dataset_and_projections(toy):
    assert ac_dataset(toy) == 1  # AC(D) = 1
    assert ac_dataset(toy, [X["x2"], X["x3"]]) == 1  # x2x3 ∉ F_2: CS(e5) = {x2, x3} alone
    assert ac_dataset(toy, [X["x1"], X["x2"], X["x5"]]) == 2  # groups {e1..e6} and {e5, e6}
    assert kanon_dataset(toy, list(range(5))) == 1  # e3 = 10011 is unique: not 2-anonymous
    assert kanon_dataset(toy, [X["x3"], X["x4"], X["x5"]]) == 2  # Table 2, Feature Set-2
    assert kanon_dataset(toy, [X["x1"], X["x2"], X["x5"]]) == 2  # Table 2, Feature Set-1


def test_feasible_and_maximal_sets_of_table1(toy):
    f2 = "x1, x2, x3, x4, x5, x1x2, x1x3, x1x4, x1x5, x2x5, x3x5, x4x5, x1x2x5, x1x3x5, x1x4x5"
    assert set(frequent_itemsets(toy, 2)) == sets(f2)
    assert set(maximal_itemsets(toy, 2)) == sets("x1x2x5, x1x3x5, x1x4x5")
    for s in frequent_itemsets(toy, 2):  # Lemma 3: frequent => feasible
        assert ac_dataset(toy, s) >= 2
    # Lemma 3 is sufficient only: x3x4x5 is 2-AC (even 2-anonymous) but no row contains it.
    assert ac_dataset(toy, [2, 3, 4]) == 2 and (2, 3, 4) not in frequent_itemsets(toy, 2)


def test_hamdist_and_distcnt_of_table1(toy):
    assert Fraction(hamdist(toy, [0, 1, 4])).limit_denominator(100) == Fraction(6, 9)
    assert Fraction(hamdist(toy, [2, 3, 4])).limit_denominator(100) == Fraction(8, 9)
    # x1x2x5: '101' vs '111' distinguishes all pairs but those of e2 with e1, e3, e4.
    assert distcnt(toy, [0, 1, 4]) == pytest.approx(6 / 9)
    # "associate 101 with +1 and 111 with -1: only 1 mistake out of 6" = the CM penalty.
    assert cm_penalty(toy, [0, 1, 4]) == 1
    assert distcnt(toy, []) == 0.0 and hamdist(toy, []) == 0.0


def test_lemma1_counter_example():
    d = BinaryCounts.from_rows([[1, 1], [1, 0], [1, 1]], ["a", "b", "a"], "a")
    assert ac_dataset(d) == 2  # 2-AC ...
    assert kanon_dataset(d, [0, 1]) == 1  # ... but (1, 0) is unique: not 2-anonymous


def test_lemma2_downward_closure_on_random_data():
    rng = np.random.default_rng(3)
    rows = (rng.random((40, 8)) < 0.3).astype(int)
    d = BinaryCounts.from_rows(rows, rng.integers(0, 2, 40), 1)
    for _ in range(30):
        big = sorted(rng.choice(8, size=5, replace=False).tolist())
        small = big[:3]
        assert ac_dataset(d, small) >= ac_dataset(d, big)


def test_greedy_hamdist_stop_and_skip_on_table1(toy):
    stop = greedy_hamdist(toy, 2)  # order x2 (6/9), x3, x4 (4/9), x1, x5 (0)
    assert stop.selected == [X["x2"]] and stop.stopped_by == X["x3"]
    skip = greedy_hamdist(toy, 2, mode="skip")
    assert skip.selected == [X["x2"], X["x1"], X["x5"]] and skip.skipped == [X["x3"], X["x4"]]
    assert ac_dataset(toy, skip.selected) >= 2
    assert list(feature_hamdist(toy) * 9) == pytest.approx([0, 6, 4, 4, 0])


def test_greedy_distcnt_on_table1(toy):
    # x2 distinguishes 6 of 9 pairs (the best); then x3 would split e5 off alone (infeasible).
    stop = greedy_distcnt(toy, 2)
    assert stop.selected == [X["x2"]] and stop.stopped_by == X["x3"]
    assert stop.gains == pytest.approx([6 / 9])
    skip = greedy_distcnt(toy, 2, mode="skip")
    assert skip.selected == [X["x2"]] and set(skip.skipped) == {X["x3"], X["x4"]}
    # k = 1: x2 then x3; x4 = 1 - x3 here and x1, x5 are constant, so no further pair is
    # distinguished: no positive gain ends the loop (Alg. 3 line 7's strict test).
    free = greedy_distcnt(toy, 1)
    assert free.selected == [X["x2"], X["x3"]] and free.stopped_by is None
    assert distcnt(toy, free.selected) == pytest.approx(7 / 9)


def test_kanon_privacy_is_stricter(toy):
    r = greedy_hamdist(toy, 2, privacy="kanon", mode="skip")
    assert kanon_dataset(toy, r.selected) >= 2
    cm = greedy_distcnt(toy, 2, criterion="cm", mode="skip")
    assert ac_dataset(toy, cm.selected) >= 2


def test_maximal_picks_best_hamdist_of_m2(toy):
    best, candidates = maximal_select(toy, 2, r=20)
    assert best == [0, 1, 4] and set(candidates) == sets("x1x2x5, x1x3x5, x1x4x5")
    assert maximal_select(toy, 7)[0] == []  # nothing has support 7


def test_pyfim_miner_agrees_with_ours():
    pytest.importorskip("fim")
    rng = np.random.default_rng(2)
    d = BinaryCounts.from_rows((rng.random((300, 15)) < 0.3).astype(int), rng.integers(0, 2, 300), 1)
    assert maximal_itemsets(d, 4, "pyfim") == maximal_itemsets(d, 4, "anonsql")


def test_greedy_matches_brute_force_feasibility_on_random_data():
    rng = np.random.default_rng(11)
    for _trial in range(6):
        rows = (rng.random((60, 12)) < 0.25).astype(int)
        d = BinaryCounts.from_rows(rows, rng.integers(0, 2, 60), 1)
        for privacy, check in (("ac", ac_dataset), ("kanon", kanon_dataset)):
            for method in (greedy_hamdist, greedy_distcnt):
                r = method(d, 3, privacy=privacy, mode="skip")
                assert check(d, r.selected) >= 3
                for x in r.skipped:  # infeasible when tried, so for the final superset (Lemma 2)
                    assert check(d, r.selected + [x]) < 3


# ---------------------------------------------------------------- the SQL job, both engines

TOY_TABLE = {"id": list(range(1, 7)), **{f"x{j + 1}": [r[j] for r in TABLE1] for j in range(5)},
             "cls": LABELS1}


def test_ac_command_on_table1(engine, make_table):
    make_table("toy", TOY_TABLE)
    r = api.containment(engine, "toy", class_column="cls", key="id")
    assert r.attrs == ["x1", "x2", "x3", "x4", "x5"] and r.rows == 6 and r.distinct_masks == 4
    assert r.ac == 1 and r.kanon == 1  # AC(D) = 1
    assert r.rows_by_ac == {1: 2, 2: 1, 4: 3}  # e5, e6 | e3 | e1, e2, e4
    assert r.hamdist == pytest.approx(14 / 9) and r.distcnt == pytest.approx(7 / 9)
    sub = api.containment(engine, "toy", class_column="cls", attrs=["x3", "x4", "x5"])
    assert sub.ac == 2 and sub.kanon == 2 and sub.hamdist == pytest.approx(8 / 9)
    assert api.containment(engine, "toy", key="id", attrs="x1,x2,x5".split(",")).ac == 2


def _object_type(engine, name):
    marker = "$n" if engine.dialect == "duckdb" else "%(n)s"
    query = f"SELECT table_type FROM information_schema.tables WHERE table_name = {marker}"
    return engine.fetch_all(query, {"n": name})[0][0]


def test_features_job_writes_a_table_by_default_and_a_view_only_with_a_warning(engine, make_table):
    make_table("toy", TOY_TABLE)
    r = api.select_features(engine, "toy", "cls", 2, key="id", method="hamdist", mode="skip", out="pub")
    assert r.materialized and _object_type(engine, "pub") == "BASE TABLE"
    assert not any("view" in n for n in r.notes)
    v = api.select_features(engine, "toy", "cls", 2, key="id", method="hamdist", mode="skip", out="pubv", view=True)
    assert not v.materialized and _object_type(engine, "pubv") == "VIEW"
    assert any("pubv is a view" in n and "voids the guarantee" in n for n in v.notes)
    assert "voids the guarantee" in v.summary()
    with pytest.raises(AnonsqlError, match="--view does not apply to --items"):
        api.select_features(engine, "toy", "cls", 2, items="toy", key="id", item_column="x1", view=True)


def test_features_job_writes_the_published_projection(engine, make_table):
    make_table("toy", TOY_TABLE)
    r = api.select_features(engine, "toy", "cls", 2, key="id", method="hamdist", mode="skip", out="pub")
    assert r.selected == ["x2", "x1", "x5"] and r.ac == 2 and r.kanon == 2
    assert r.hamdist == pytest.approx(6 / 9) and r.skipped == 2 and r.stopped_by is None
    assert r.full_hamdist == pytest.approx(14 / 9)
    assert catalog.get_table(engine, "pub").column_names == ["x2", "x1", "x5", "cls"]
    assert sorted(table_rows(engine, "pub")) == sorted((r_[1], r_[0], r_[4], c) for r_, c in zip(TABLE1, LABELS1))
    stop = api.select_features(engine, "toy", "cls", 2, key="id", method="distcnt", out="pub", replace=True,
                               view=True)
    assert stop.selected == ["x2"] and stop.stopped_by == "x3" and stop.distcnt == pytest.approx(6 / 9)
    assert catalog.get_table(engine, "pub").column_names == ["x2", "cls"]
    m = api.select_features(engine, "toy", "cls", 2, key="id", method="maximal", out="pub2")
    assert m.selected == ["x1", "x2", "x5"] and len(m.candidates) == 3
    cm = api.select_features(engine, "toy", "cls", 2, key="id", method="cm", privacy="kanon", out="pub3")
    assert cm.kanon >= 2


def test_many_columns_use_several_mask_words(engine, make_table):
    rng = np.random.default_rng(5)
    d, n = 140, 30  # 3 words of 62 bits
    rows = (rng.random((n, d)) < 0.15).astype(int)
    rows[:, 130] = 1  # a feature in the last word shared by all
    labels = ["a" if i % 3 else "b" for i in range(n)]
    make_table("wide", {**{f"f{j}": rows[:, j].tolist() for j in range(d)}, "y": labels})
    data = BinaryCounts.from_rows(rows, labels, "a")
    rep = api.containment(engine, "wide", class_column="y")
    assert rep.ac == ac_dataset(data) and rep.kanon == kanon_dataset(data, list(range(d)))
    assert rep.distcnt == pytest.approx(distcnt(data, list(range(d))))
    r = api.select_features(engine, "wide", "y", 2, method="distcnt", mode="skip", out="w2")
    assert r.selected == [f"f{x}" for x in greedy_distcnt(data, 2, mode="skip").selected]
    assert r.ac >= 2 and r.ac == ac_dataset(data, [int(c[1:]) for c in r.selected])


@pytest.mark.parametrize("change, message", [
    (dict(x3=[1, 0, 2, 1, 1, 0]), "other than 0 and 1"),
    (dict(x3=[1, 0, None, 1, 1, 0]), "NULL"),
    (dict(cls=["+1"] * 6), "exactly two classes"),
    (dict(cls=["a", "b", "c", "a", "b", "c"]), "exactly two classes"),
    (dict(x3=["1", "0", "0", "1", "1", "0"]), "features must be 0/1 numbers"),
])
def test_bad_input_is_one_error_and_changes_nothing(engine, make_table, change, message):
    make_table("toy", {**TOY_TABLE, **change})
    with pytest.raises(AnonsqlError, match=message):
        api.select_features(engine, "toy", "cls", 2, key="id", out="pub")
    assert catalog.find_table(engine, "pub") is None


def test_bad_parameters(engine, make_table):
    make_table("toy", TOY_TABLE)
    for kwargs, message in [(dict(k=7), "larger than the table"), (dict(k=0), "k must be"),
                            (dict(k=2, method="x"), "unknown method"), (dict(k=2, mode="x"), "unknown mode"),
                            (dict(k=2, attrs=["cls"]), "class or the key"),
                            (dict(k=2, method="maximal", privacy="kanon"), "does not apply")]:
        with pytest.raises(AnonsqlError, match=message):
            api.select_features(engine, "toy", "cls", key="id", out="pub", **kwargs)
        assert catalog.find_table(engine, "pub") is None
    api.select_features(engine, "toy", "cls", 2, key="id", out="pub")
    with pytest.raises(AnonsqlError, match="already exists"):
        api.select_features(engine, "toy", "cls", 2, key="id", out="pub")


def test_long_input_gives_the_same_selection(engine, make_table):
    make_table("toy", TOY_TABLE)
    people = {"id": list(range(1, 8)), "cls": LABELS1 + ["-1"]}  # id 7 has no item at all
    pairs = [(i + 1, f"x{j + 1}") for i, r in enumerate(TABLE1) for j in range(5) if r[j]]
    make_table("people", people)
    make_table("items", {"id": [p[0] for p in pairs], "word": [p[1] for p in pairs]})
    make_table("toy7", {**{c: v + ([7] if c == "id" else [0]) for c, v in TOY_TABLE.items() if c != "cls"},
                        "cls": people["cls"]})
    for method in ("hamdist", "distcnt", "maximal"):
        wide = api.select_features(engine, "toy7", "cls", 2, key="id", method=method, mode="skip", out=f"w_{method}")
        long = api.select_features(engine, "people", "cls", 2, items="items", key="id", item_column="word",
                                   method=method, mode="skip", out=f"l_{method}")
        assert long.selected == wide.selected and long.ac == wide.ac and long.materialized
        assert sorted(table_rows(engine, f"l_{method}")) == sorted(table_rows(engine, f"w_{method}"))
    assert catalog.find_table(engine, "l_hamdist__items") is None  # the staging table is gone
    with pytest.raises(AnonsqlError, match="larger than the table"):
        api.select_features(engine, "people", "cls", 8, items="items", key="id", item_column="word", out="l_bad")
    assert catalog.find_table(engine, "l_bad") is None and catalog.find_table(engine, "l_bad__items") is None


SPEC = """
[[binary]]
name = "young"
column = "age"
upper = 25
[[binary]]
name = "mid"
column = "age"
lower = 25
upper = 35
[[binary]]
name = "old"
column = "age"
lower = 35
[[binary]]
name = "single"
column = "marital"
equals = "Never-married"
[[binary]]
name = "Select"
column = "job"
in = ["a b", "c"]
"""


def test_binarize_in_sql(engine, make_table):
    make_table("people", {"id": [1, 2, 3, 4, 5], "age": [20, 25, 26, 35, None],
                          "marital": ["Never-married", "x", None, "Never-married", "y"],
                          "job": ["a b", "c", "d", None, "c"], "cls": ["p", "n", "p", "n", "p"]})
    r = binarize(engine, "people", parse_spec(SPEC), "bin", keep=["id", "cls"])
    assert r.columns == ["young", "mid", "old", "single", "Select"] and r.rows == 5
    assert table_rows(engine, "bin") == [  # intervals are (lower, upper]; NULL cells give 0
        (1, "p", 1, 0, 0, 1, 1), (2, "n", 1, 0, 0, 0, 1), (3, "p", 0, 1, 0, 0, 0),
        (4, "n", 0, 1, 0, 1, 0), (5, "p", 0, 0, 0, 0, 1)]
    assert r.ones == {"young": 2, "mid": 2, "old": 0, "single": 2, "Select": 3} and r.density == pytest.approx(9 / 25)
    assert api.containment(engine, "bin", class_column="cls", key="id").rows == 5
    with pytest.raises(AnonsqlError, match="already exists"):
        binarize(engine, "people", parse_spec(SPEC), "bin", keep=["id", "cls"])
    with pytest.raises(AnonsqlError, match="needs numbers"):
        binarize(engine, "people", parse_spec(SPEC.replace('"age"', '"marital"')), "bin2")
    assert catalog.find_table(engine, "bin2") is None


@pytest.mark.parametrize("text, message", [
    ("[[binary]]\nname = 'a'\ncolumn = 'b'", "either lower/upper"),
    ("[[binary]]\nname = 'a'\ncolumn = 'b'\nlower = 3\nupper = 1", "must be below"),
    ("[[binary]]\nname = 'a'\ncolumn = 'b'\nequals = 1\nlower = 1", "either lower/upper"),
    ("[[binary]]\nname = 'a'\ncolumn = 'b'\nin = []", "non-empty list"),
    ("[[binary]]\nname = 'a'\ncolumn = 'b'\nupper = 1\n[[binary]]\nname = 'A'\ncolumn = 'b'\nupper = 2", "twice"),
    ("[[binary]]\nname = 'a'\ncolumn = 'b'\nabove = 1", "unknown key"),
    ("x = [", "not valid TOML"),
    ("", "no .* entries"),
])
def test_bad_specs(text, message):
    with pytest.raises(AnonsqlError, match=message):
        parse_spec(text)


def test_adult_spec_has_the_19_attributes_of_section_5_1():
    from pathlib import Path
    rules = parse_spec((Path(__file__).parents[1] / "benchmarks" / "adult_bins.toml").read_text())
    per_column = {}
    for r in rules:
        per_column[r.column] = per_column.get(r.column, 0) + 1
    assert len(rules) == 19 and per_column["age"] == 5 and per_column["education_num"] == 4
    assert per_column["hours_per_week"] == 5
    assert [(r.lower, r.upper) for r in rules if r.column == "age"] == [
        (None, 25), (25, 35), (35, 45), (45, 55), (55, None)]


def test_cli_end_to_end_on_adult(tmp_path, capsys):
    """dataset -> binarize -> features (every method) -> ac, and one-line errors with exit 2."""
    db = str(tmp_path / "d.duckdb")
    spec = str(Path(__file__).resolve().parent.parent / "benchmarks" / "adult_bins.toml")
    assert cli.main(["dataset", "--db", db, "adult"]) == 0
    assert cli.main(["binarize", "--db", db, "--table", "adult", "--class", "income", "--spec", spec,
                     "--out", "adult_bin"]) == 0
    assert cli.main(["features", "--db", db, "--table", "adult_bin", "--class", "income", "--k", "5",
                     "--method", "distcnt", "--out", "adult_pub", "--quiet"]) == 0
    assert "check: k-anonymity by containment (AC >= k) holds" in capsys.readouterr().out
    assert cli.main(["ac", "--db", db, "--table", "adult_pub", "--class", "income", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ac"] >= 5
    for extra in (["--method", "hamdist"], ["--method", "maximal"], ["--method", "cm"], ["--privacy", "kanon"]):
        assert cli.main(["features", "--db", db, "--table", "adult_bin", "--class", "income", "--k", "5",
                         "--out", "p_" + extra[1], "--quiet", *extra]) == 0
    capsys.readouterr()
    assert cli.main(["features", "--db", db, "--table", "adult", "--class", "income", "--k", "5"]) == 2
    err = capsys.readouterr().err
    assert "features must be 0/1" in err and len(err.strip().splitlines()) == 1
    assert cli.main(["features", "--db", db, "--table", "adult_bin", "--class", "income", "--k", "99999"]) == 2
    assert cli.main(["features", "--db", db, "--table", "adult_bin", "--class", "income", "--k", "5",
                     "--method", "nope"]) == 2


# ---------------------------------------------------------------- failure path, scripts


def _fail_verification(monkeypatch):
    """Make the independent re-check see AC(D) = 1 and the binarized table one row short."""
    measure, binarized = features_verify.measure, features_verify.binarized

    def low_ac(*args, **kwargs):
        figures = measure(*args, **kwargs)
        figures.ac = 1
        return figures

    monkeypatch.setattr(features_verify, "measure", low_ac)
    monkeypatch.setattr(features_verify, "binarized",
                        lambda engine, report, table, names, rows: binarized(engine, report, table, names, rows + 1))


@pytest.mark.parametrize("view", [False, True])
def test_failed_verification_rolls_back(db, engine, make_table, monkeypatch, capsys, tmp_path, view):
    make_table("toy", TOY_TABLE)
    api.select_features(engine, "toy", "cls", 2, key="id", method="distcnt", out="pub")
    before = table_rows(engine, "pub")
    _fail_verification(monkeypatch)
    with pytest.raises(VerificationError, match=r"AC >= k\): AC\(D\) = 1, k = 2"):
        api.select_features(engine, "toy", "cls", 2, key="id", method="hamdist", mode="skip", out="pub",
                            replace=True, view=view)
    assert catalog.get_table(engine, "pub").column_names == ["x2", "cls"] and table_rows(engine, "pub") == before
    script = tmp_path / "run.sql"
    (tmp_path / "spec.toml").write_text(SPEC_TOY)
    for args in (["features", "--class", "cls", "--key", "id", "--k", "2", "--quiet"],
                 ["binarize", "--spec", str(tmp_path / "spec.toml")]):
        code = cli.main([*args, "--db", db, "--table", "toy", "--out", "new", "--emit-sql", str(script)])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1, err
        assert err[0].startswith(f"anonsql {args[0]}: error: verification failed, nothing was changed: ")
        assert catalog.find_table(engine, "new") is None and not script.exists()
    with pytest.raises(VerificationError, match="row count kept"):
        binarize(engine, "toy", parse_spec(SPEC_TOY), "bin")
    assert catalog.find_table(engine, "bin") is None


SPEC_TOY = '[[binary]]\nname = "b1"\ncolumn = "x1"\nequals = 1\n'


def test_emitted_scripts_run_on_duckdb_and_end_with_the_check(tmp_path):
    db = str(tmp_path / "d.duckdb")
    eng = connect(db, create=True)
    for name, data in (("toy", TOY_TABLE), ("people", {"id": [1, 2], "cls": ["a", "b"]}),
                       ("items", {"id": [1, 1, 2], "word": ["x", "y", "y"]})):
        write_frame(eng, pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in data.items()}).convert_dtypes(), name)
    runs = {"pub": lambda path: api.select_features(eng, "toy", "cls", 2, key="id", method="hamdist", mode="skip",
                                                    out="pub", emit_sql=path, execute=False),
            "bin": lambda path: api.binarize(eng, "toy", str(tmp_path / "spec.toml"), "bin", key="id",
                                             emit_sql=path, execute=False),
            "long": lambda path: api.select_features(eng, "people", "cls", 1, items="items", key="id",
                                                     item_column="word", out="long", emit_sql=path, execute=False)}
    (tmp_path / "spec.toml").write_text(SPEC_TOY)
    scripts = {}
    for out, run in runs.items():
        path = tmp_path / f"{out}.sql"
        report = run(str(path))
        assert not report.ok and "dry run" in report.notes[0] and catalog.find_table(eng, out) is None
        scripts[out] = path.read_text()
    assert catalog.find_table(eng, "long__items") is None  # the staging table is gone after a dry run too
    eng.close()
    con = duckdb.connect(db)
    for out, text in scripts.items():
        body, check = text.split("-- Verification: ")
        assert body.rstrip().endswith("COMMIT;") and check.rstrip().endswith(";")
        con.execute(body)
        result = con.execute(check.split("\n", 2)[2]).fetchall()  # after the heading and the comment
        assert {"pub": [(2, 2, 6)], "bin": [(6, 6)], "long": [(1, 1, 2)]}[out] == result, (out, result)
    assert sorted(con.execute("SELECT * FROM pub").fetchall()) == sorted(
        (r[1], r[0], r[4], c) for r, c in zip(TABLE1, LABELS1))
    assert con.execute("SELECT * FROM long ORDER BY cls").fetchall() == [(1, "a"), (0, "b")]  # item x, class
    assert con.execute("SELECT table_name FROM information_schema.tables WHERE table_name = 'long__items'"
                       ).fetchall() == []


def test_features_warns_about_a_unique_column_of_its_output(engine, make_table):
    """Identifiers: the published projection's non-feature columns are scanned for near-unique ones."""
    make_table("two", {"x1": [1, 0], "x2": [1, 1], "cls": ["a", "b"]})
    r = api.select_features(engine, "two", "cls", 1, out="pub")
    assert any("column 'cls' is unique in pub" in n for n in r.warnings)
    make_table("toy", TOY_TABLE)
    assert not api.select_features(engine, "toy", "cls", 2, key="id", out="pub2").warnings
