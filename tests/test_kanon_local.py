"""kanon.local (issue 33): blanked cells given back as a label of their hierarchy, after the loop, while
every class keeps k and every model. The pass on arrays, checked by hand.

The ages below are the values of one QI at the global node's level (rung 0), with the ladder of an
`interval:10,20` hierarchy above them: rung 1 the width-10 label, rung 2 the width-20 one.
"""

import numpy as np

from anonsql.kanon.diversity import Model
from anonsql.kanon.local import give_back, identity, number
from anonsql.kanon.restore import restore


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
