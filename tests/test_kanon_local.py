"""kanon --local-recoding (issue 33): blanked cells given back as a label of their hierarchy, after the
loop, while every class keeps k and every model. Golden tables checked by hand on both engines; the pass
(anonsql.kanon.local) on arrays.

The ages below are the values of one QI at the global node's level (rung 0), with the ladder of an
`interval:10,20` hierarchy above them: rung 1 the width-10 label, rung 2 the width-20 one.
"""

import numpy as np
import pytest

import anonsql
from anonsql.catalog import get_table
from anonsql.cli import main
from anonsql.hierarchy import parse_all, resolve
from anonsql.kanon.diversity import Model
from anonsql.kanon.local import give_back, identity, number
from anonsql.kanon.relabel import check
from anonsql.kanon.restore import restore
from anonsql.report import Report

# ---- golden tables ------------------------------------------------------------------------------------------

# age with interval:10,20, k = 2, one QI. The ages 20..26 come in pairs; at level 1 the four of them share
# [20,30) (loss (4 - 1)/(6 - 1) on 8 rows = 4.8, plus 0.4 for [30,40)), so the search keeps level 0, where
# only 31 and 33 are below k (loss 2, 20% of the rows: under the 50% limit). The loop blanks both; the
# pass gives them back together one level up, as [30,40) (rung 0: each alone is below k).
PAIRS = [20, 20, 22, 22, 24, 24, 26, 26]
UP = {"id": list(range(10)), "age": [*PAIRS, 31, 33]}
# 31 and 55: their width-10 labels differ ([30,40), [50,60)) and so do their width-20 ones ([20,40),
# [40,60)): no level below ⊥ holds both, and each alone is below k, so both stay ⊥.
NONE = {"id": list(range(10)), "age": [*PAIRS, 31, 55]}


def _local(db, out, local=True, **options):
    return anonsql.k_anonymize(db, "t", "age", None, 2, cost="ham", out=out, hierarchy=["age=interval:10,20"],
                               max_suppressed_records=0.5, local_recoding=local, **options)


def _ages(engine, name):
    return [a for _, a in sorted(engine.fetch_all(f"SELECT id, age FROM {name}"))]


def test_a_cell_goes_one_level_up_in_the_table(db, engine, make_table):
    make_table("t", UP)
    loop = _local(db, "t_loop", local=False)
    assert loop.ok and loop.recoding["levels"] == {"age": 0} and loop.suppressed_cells == 2
    r = _local(db, "t_up")
    assert r.ok and r.recoding["levels"] == {"age": 0} and r.suppressed_cells == 0
    assert r.recoding["local_recoding"]["cells_given_back"] == 2
    assert _ages(engine, "t_up") == [str(a) for a in PAIRS] + ["[30,40)", "[30,40)"]
    assert {c.name for c in r.checks} >= {"k-anonymity after local recoding",
                                          "values are the source's labels at the chosen level or above"}
    assert all(c.passed for c in r.checks)
    assert anonsql.check(db, "t_up", "age", 2).ok
    assert not [n for (n,) in engine.fetch_all("SELECT table_name FROM information_schema.tables")
                if "private_anonsql_local" in n]  # the working table is gone
    assert not [w for w in r.warnings if "anonsql" in w]  # neither the working table nor its hidden columns


def test_a_cell_goes_up_with_a_class_column(db, engine, make_table):
    """With a class cls (each pair of equal ages split over classes a and b, 31 and 33 both in a) the loop,
    merging within a class, blanks the 20s, 22s, 31 and 33 (6 cells; checked below). The pass, in class
    ⊥ (20: 2 rows, 22: 2, 31: 1, 33: 1): rung 0, the 20s leave (4 stay), the 22s leave (2 stay), 31 and 33
    alone cannot; rung 1, [30,40) holds both: they leave, the class emptied. The label check counts
    [30,40) in class a: 2 published rows, 2 source rows under it."""
    make_table("t", {**UP, "cls": ["a", "b"] * 4 + ["a", "a"]})

    def run(out, local):
        return anonsql.k_anonymize(db, "t", "age", "cls", 2, cost="ham", out=out, hierarchy=["age=interval:10,20"],
                                   max_suppressed_records=0.5, local_recoding=local)

    loop = run("t_cls_loop", False)
    assert loop.ok and loop.suppressed_cells == 6 and _ages(engine, "t_cls_loop")[:4] == [None] * 4
    r = run("t_cls", True)
    assert r.ok and r.recoding["local_recoding"]["cells_given_back"] == 6 and r.suppressed_cells == 0
    assert _ages(engine, "t_cls") == [str(a) for a in PAIRS] + ["[30,40)", "[30,40)"]


def test_no_level_works_the_cell_stays_null_in_the_table(db, engine, make_table):
    make_table("t", NONE)
    r = _local(db, "t_none")
    assert r.ok and r.recoding["levels"] == {"age": 0} and r.suppressed_cells == 2
    assert r.recoding["local_recoding"]["cells_given_back"] == 0
    assert _ages(engine, "t_none") == [str(a) for a in PAIRS] + [None, None]


@pytest.mark.parametrize("published, passes", [
    (["[30,40)", "[30,40)"], True),  # one level up
    (["[20,40)", "[20,40)"], True),  # two levels up: any level above the node's is a label of the source
    (["31", "[30,40)"], True),  # mixed levels in one column
    (["[40,50)", "[30,40)"], False),  # a label the source does not give 31
    (["20", "20"], False),  # the value of other rows: 20 now holds 4 rows, the source 2
    (["[20,30)", None], False)])  # [20,30) holds 8 source rows, so 9 published is one too many
def test_the_label_check_is_independent_of_the_decisions(db, engine, make_table, published, passes):
    """relabel.check on hand-made outputs (the last two rows of UP changed; the other rows as in the
    source, [20,30) written for all eight in the last case): it reads the source and the output only."""
    make_table("t", UP)
    ages = [str(a) for a in PAIRS] if published[0] != "[20,30)" else ["[20,30)"] * 8
    make_table("t_hand", {"id": UP["id"], "age": ages + published})
    source = get_table(engine, "t")
    hierarchies = resolve(engine, source, parse_all(["age=interval:10,20"]))
    report = Report(table="t")
    check(engine, report, source, get_table(engine, "t_hand"), hierarchies, [0], None, 1)
    assert report.ok is passes


def test_local_recoding_from_the_command_line(db, make_table, capsys):
    make_table("t", UP)
    code = main(["kanon", "--db", db, "--table", "t", "--qi", "age", "--k", "2", "--cost", "ham", "--hierarchy",
                 "age=interval:10,20", "--max-suppressed-records", "0.5", "--local-recoding", "--out", "t_cli"])
    assert code == 0 and "blanked cells (suppressed to NULL) 0 of 10" in capsys.readouterr().out


@pytest.mark.parametrize("options, needs", [({"hierarchy": None}, "give --hierarchy"),
                                            ({"hierarchy_bounds": True}, "--hierarchy-bounds"),
                                            ({"restore": True}, "--restore"),
                                            ({"l_diversity": "id=2"}, "--l-diversity")])
def test_local_recoding_refuses_what_it_does_not_take(db, engine, make_table, options, needs):
    make_table("t", UP)
    args = {"hierarchy": ["age=interval:10,20"], **options}
    with pytest.raises(anonsql.AnonsqlError, match=needs):
        anonsql.k_anonymize(db, "t", "age", None, 2, cost="ham", out="t_bad", local_recoding=True, **args)
    assert not engine.fetch_all("SELECT table_name FROM information_schema.tables WHERE table_name = 't_bad'")


def test_an_existing_output_is_refused_before_any_work(db, engine, make_table):
    make_table("t", UP)
    make_table("t_taken", {"x": [1]})
    with pytest.raises(anonsql.AnonsqlError, match="already exists"):
        _local(db, "t_taken")
    assert engine.fetch_all("SELECT * FROM t_taken") == [(1,)]
    assert not [n for (n,) in engine.fetch_all("SELECT table_name FROM information_schema.tables")
                if "private_anonsql_local" in n]


def test_local_recoding_bad_input_exits_2(db, make_table, capsys):
    make_table("t", UP)
    code = main(["kanon", "--db", db, "--table", "t", "--qi", "age", "--k", "2", "--local-recoding", "--out", "t_x"])
    assert code == 2 and "--local-recoding" in capsys.readouterr().err


# ---- the pass on arrays -------------------------------------------------------------------------------------

def _interval(lo: int, width: int) -> str:
    start = lo // width * width
    return f"[{start},{start + width})"


def _ladder(ages: list[int]) -> list[np.ndarray]:
    return number([[str(a) for a in ages], [_interval(a, 10) for a in ages], [_interval(a, 20) for a in ages]])


def test_a_cell_goes_back_one_level_up_not_to_bottom():
    """Class ⊥ holds ages 31 (1 row), 33 (1), 45 (2); k = 2. Rung 0: the 45s leave (2 stay, 2 go), 31 and
    33 alone cannot. Rung 1: 31 and 33 share [30,40), 2 rows: they leave together, the class emptied.
    --restore gives back the 45s alone."""
    ages = [31, 33, 45]
    ladder = _ladder(ages)
    codes, final, counts = np.array([[0], [1], [2]]), np.full((3, 1), -1), np.array([1, 1, 2])
    back, n = give_back(codes, final, counts, 2, [ladder])
    assert n == 4
    assert back[2, 0] == 2  # 45 itself
    assert back[0, 0] == back[1, 0] == ladder[1][0] != ladder[2][0]  # [30,40), the lowest rung that works
    assert back[0, 0] not in {0, 1, 2}  # a label id, none of the values' codes
    kept, n_restored = restore(codes, final, counts, 2)
    assert n_restored == 2 and kept[:, 0].tolist() == [-1, -1, 2]


def test_no_level_works_the_cell_stays_bottom():
    """Class ⊥ holds 31 (1), 55 (1), 45 (2); k = 2: the 45s leave at rung 0; 31 and 55 share no label
    below ⊥ ([30,40) / [50,60), [20,40) / [40,60)), and each alone is below k: both stay ⊥."""
    ladder = _ladder([31, 55, 45])
    codes, final = np.array([[0], [1], [2]]), np.full((3, 1), -1)
    back, n = give_back(codes, final, np.array([1, 1, 2]), 2, [ladder])
    assert n == 2 and back[:, 0].tolist() == [-1, -1, 2]


def test_no_rung_works_when_every_part_leaves_a_row_behind():
    """31, 33 and 45, one row each; k = 2. Rung 0: a part of 1 row fails; rung 1: [30,40) would leave 45
    alone, [40,50) is 1 row; rung 2 alike ([20,40), [40,60)). Nothing moves; with k = 1 the rung-0
    values come back, every cell."""
    ladder = _ladder([31, 33, 45])
    codes, final = np.array([[0], [1], [2]]), np.full((3, 1), -1)
    back, n = give_back(codes, final, np.array([1, 1, 1]), 2, [ladder])
    assert n == 0 and back.tolist() == final.tolist()
    back, n = give_back(codes, final, np.array([1, 1, 1]), 1, [ladder])
    assert n == 3 and back[:, 0].tolist() == [0, 1, 2]


def test_a_part_joins_a_class_already_published_at_the_label():
    """Two QIs; the loop's class (⊥, 0) holds 1 row of age 31 and 2 rows whose age was NULL; a class
    ([30,40), 0) of 2 rows (age 33) is already there (an earlier give-back). Rung 0: (31, 0) would hold
    1 row; rung 1: the row joins ([30,40), 0) (3 >= k = 2), the 2 left are k. The NULLs never move."""
    ladder = _ladder([31, 33])
    label = int(ladder[1][1])
    codes = np.array([[0, 0], [1, 0], [-1, 0]])
    final = np.array([[-1, 0], [label, 0], [-1, 0]])
    back, n = give_back(codes, final, np.array([1, 2, 2]), 2, [ladder, [np.arange(1)]])
    assert n == 1 and back.tolist() == [[label, 0], [label, 0], [-1, 0]]


def test_a_model_blocks_a_give_back():
    """31 and 33 (one row each, k = 2) can go back only together, as [30,40); distinct l = 2 on a
    sensitive column: where they hold one value each it works, where both hold the same it fails."""
    ladder = _ladder([31, 33])
    codes, final, counts = np.array([[0], [1]]), np.full((2, 1), -1), np.array([1, 1])
    model = [Model("s", "l_diversity", 2.0)]
    mixed = [np.array([[1, 0, 0], [0, 1, 0]])]
    same = [np.array([[1, 0, 0], [1, 0, 0]])]
    back, n = give_back(codes, final, counts, 2, [ladder], mixed, model, [mixed[0].sum(axis=0)])
    assert n == 2 and back[0, 0] == back[1, 0] == ladder[1][0]
    back, n = give_back(codes, final, counts, 2, [ladder], same, model, [np.array([2, 0, 0])])
    assert n == 0


def test_ladder_ids_keep_the_codes_and_never_meet():
    ladder = _ladder([31, 33, 45])
    assert ladder[0].tolist() == [0, 1, 2]
    assert ladder[1][0] == ladder[1][1] != ladder[1][2]
    assert not set(ladder[0].tolist()) & set(ladder[1].tolist()) and not set(ladder[1].tolist()) & set(
        ladder[2].tolist())
    assert [r.tolist() for r in identity(np.array([[0, 2], [1, -1]]))[1]] == [[0, 1, 2]]
