"""kanon --restore (issue 32): blanked cells given back after the loop while every class keeps k and
every model. Golden tables checked by hand, on both engines; the pass itself on arrays.

The golden table (k = 2, cost ham, class cls): (zip, sex) = (1,m) and (1,x) hold one row each, so both
violate; each is alone in its class with the two (2,f) rows of that class as its only partner, so the
loop blanks both cells of all six rows (merge 1: (1,m)+(2,f) of c1 -> (⊥,⊥), merge 2: (1,x)+(2,f) of c2
-> (⊥,⊥), in either order), 12 cells. The pass then, in class (⊥,⊥), zip first: the zip = 2 rows (4)
leave, the 2 rows left (zip = 1) still >= k, to the new class (2,⊥) (4 cells); then the zip = 1 rows
(2) leave too, the class emptied, to (1,⊥) (2 cells). In (1,⊥) sex splits into m and x, one row each:
nothing. In (2,⊥) the 4 rows all hold sex = f: back to (2,f) (4 cells). 10 cells given back, 2 left.
"""

import numpy as np
import pytest

import anonsql
from anonsql.cli import main
from anonsql.kanon.diversity import Model
from anonsql.kanon.restore import restore

from .test_release_gates import QI, _null_share, _spec, noshow  # noqa: F401 (noshow: the fixture)

TABLE = {
    "id": [1, 2, 3, 4, 5, 6],
    "zip": ["1", "2", "2", "1", "2", "2"],
    "sex": ["m", "f", "f", "x", "f", "f"],
    "cls": ["c1", "c1", "c1", "c2", "c2", "c2"],
    # 2-diverse in every class of the restored table: (1,⊥) flu/cold, (2,f) flu/cold
    "diag": ["flu", "flu", "cold", "cold", "flu", "cold"],
    # the same but (1,m) and (1,x) both flu: the zip = 2 rows cannot leave them (1 value), nor can they go
    "diag_same": ["flu", "flu", "cold", "flu", "flu", "cold"],
}
LOOP = [(i, None, None) for i in range(1, 7)]
RESTORED = [(1, "1", None), (2, "2", "f"), (3, "2", "f"), (4, "1", None), (5, "2", "f"), (6, "2", "f")]


def _qi(engine, name):
    return sorted(engine.fetch_all(f"SELECT id, zip, sex FROM {name}"))


def _run(db, out, **options):
    return anonsql.k_anonymize(db, "t", "zip,sex", "cls", 2, cost="ham", out=out, **options)


def test_restore_golden(db, engine, make_table):
    make_table("t", TABLE)
    loop = _run(db, "t_loop")
    assert loop.ok and loop.iterations == 2 and loop.suppressed_cells == 12 and loop.restored_cells is None
    assert _qi(engine, "t_loop") == LOOP
    r = _run(db, "t_back", restore=True)
    assert r.ok and r.iterations == 2 and r.restored_cells == 10 and r.suppressed_cells == 2
    assert _qi(engine, "t_back") == RESTORED
    assert {c.name for c in r.checks} >= {"k-anonymity", "only NULLs added", "suppressed cells as decided"}
    assert any("gave 10 blanked cells back" in line for line in r.lines())
    assert anonsql.check(db, "t_back", "zip,sex", 2).ok


def test_restore_keeps_the_models(db, engine, make_table):
    make_table("t", TABLE)
    r = _run(db, "t_l", restore=True, l_diversity="diag=2")
    assert r.ok and r.restored_cells == 10 and _qi(engine, "t_l") == RESTORED
    assert anonsql.check(db, "t_l", "zip,sex", 2, l_diversity="diag=2").ok
    blocked = _run(db, "t_same", restore=True, l_diversity="diag_same=2")
    assert blocked.ok and blocked.restored_cells == 0 and _qi(engine, "t_same") == LOOP


def test_restore_from_the_command_line(db, make_table, capsys):
    make_table("t", TABLE)
    code = main(["kanon", "--db", db, "--table", "t", "--qi", "zip,sex", "--class", "cls", "--k", "2", "--cost", "ham",
                 "--restore", "--out", "t_cli"])
    assert code == 0 and "gave 10 blanked cells back" in capsys.readouterr().out


def test_restore_must_be_a_flag(db, make_table):
    make_table("t", TABLE)
    with pytest.raises(anonsql.AnonsqlError, match="restore"):
        _run(db, "t_bad", restore="yes")


# ---- the pass on arrays -------------------------------------------------------------------------------------

def test_a_part_leaves_only_if_what_stays_keeps_k():
    """One class (⊥, 0) of 3 + 2 rows, by original first code 0 and 1. k = 2: the 3 rows leave to (0, 0),
    the 2 that stay are k; k = 3: leaving would leave 2 < 3 behind, and the 2 rows alone are below k."""
    codes = np.array([[0, 0], [1, 0]])
    final = np.array([[-1, 0], [-1, 0]])
    counts = np.array([3, 2])
    back, n = restore(codes, final, counts, 2)
    assert n == 5 and back.tolist() == [[0, 0], [1, 0]]  # then the 2 rows leave too, the class emptied
    back, n = restore(codes, final, counts, 3)
    assert n == 0 and back.tolist() == final.tolist()


def test_a_part_joins_an_existing_class_and_never_original_nulls():
    """(⊥, 0) holds 1 row of original (0, 0) and 2 of original (NULL, 0); (0, 0) holds 2 rows already:
    the one row joins it (3 >= k = 2, the 2 left are k); the NULLs stay NULL."""
    codes = np.array([[0, 0], [-1, 0], [0, 0]])
    final = np.array([[-1, 0], [-1, 0], [0, 0]])
    back, n = restore(codes, final, np.array([1, 2, 2]), 2)
    assert n == 1 and back.tolist() == [[0, 0], [-1, 0], [0, 0]]


def test_entropy_model_blocks_a_move():
    """The 2 rows that would leave hold one value each way: entropy l = 2 needs two equally common values."""
    codes = np.array([[0], [1]])
    final = np.array([[-1], [-1]])
    hist = [np.array([[1, 1, 0], [2, 0, 0]])]  # sensitive values of each tuple; slot 2: NULL
    table = hist[0].sum(axis=0)
    logs = np.log(np.maximum(np.arange(5), 1))
    model = [Model("s", "entropy_l", 2.0)]
    back, n = restore(codes, final, np.array([2, 2]), 2, hist, model, [table], logs)
    assert n == 0  # (1) would keep [2, 0]: entropy 0
    back, n = restore(codes, final, np.array([2, 2]), 2, hist, [], [table], logs)
    assert n == 4 and back.tolist() == [[0], [1]]


# ---- a release's kanon step ---------------------------------------------------------------------------------

@pytest.mark.usefixtures("noshow")
def test_release_kanon_step_restores_and_keeps_l_on_the_noshow_shape(engine, tmp_path):
    """The no-show shape with l_diversity = {Hipertension = 2}: with restore = true the published table blanks
    fewer QI cells than without, and every class still holds both Hipertension values and k = 5 rows."""
    shares = []
    for flag in ("false", "true"):
        spec = _spec(tmp_path, protect=None, kanon=f"l_diversity = {{ Hipertension = 2 }}\nrestore = {flag}",
                     gates="k = 5\nl_diversity = { Hipertension = 2 }")
        report = anonsql.release_run(spec, engine, replace=True)
        assert report.ok and report.published == ["noshow_k5"]
        per_class = engine.fetch_all('SELECT COUNT(DISTINCT "Hipertension"), COUNT(*) FROM noshow_k5 '
                                     'GROUP BY "Gender", "Age", "Neighbourhood"')
        assert all(values == 2 and rows >= 5 for values, rows in per_class)
        shares.append(_null_share(engine, "noshow_k5", QI)[0])
    assert shares[1] < shares[0]


@pytest.mark.usefixtures("noshow")
def test_release_refuses_a_restore_that_is_not_a_flag(engine, tmp_path):
    with pytest.raises(anonsql.AnonsqlError, match=r"noshow\.toml:\d+: .*restore"):
        anonsql.release_run(_spec(tmp_path, protect=None, kanon='restore = "yes"'), engine)
