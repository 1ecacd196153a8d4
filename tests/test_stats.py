"""Count tables from SQL: N(y,c), N(x_j,c) in one query, N(c); codes with -1 for NULL."""

import numpy as np

from anonsql import catalog, stats

from .test_profile import SMALL


def test_qi_class_counts(engine, make_table):
    make_table("t", SMALL)
    s = stats.qi_class_counts(engine, catalog.get_table(engine, "t"), ["zip", "sex"], "cls")
    assert [list(v) for v in s.values] == [["1", "2", "3"], ["f", "m"]]
    assert list(s.class_values) == ["n", "y"]
    got = {(tuple(c), int(k), int(n)) for c, k, n in zip(s.codes.tolist(), s.classes, s.counts)}
    assert got == {((0, 1), 1, 2), ((0, 1), 0, 1), ((1, 0), 0, 2), ((-1, 0), 1, 2), ((2, -1), 0, 1)}
    assert s.counts.sum() == 8 and list(s.domain_sizes) == [3, 2]
    # canonical order: by class, then by codes
    keys = [(k, *c) for c, k in zip(s.codes.tolist(), s.classes)]
    assert keys == sorted(keys)


def test_dictionary_labels_of_every_column_come_in_code_order(engine, make_table):
    """All dictionaries' labels are read by ONE query (stats._dictionary_labels): each column
    still gets its own values in code order, a column with no value at all an empty list."""
    make_table("t", {"a": ["b", "a", None, "c"], "e": [None, None, None, None], "n": [10, 2, 2, 33],
                     "cls": ["y", "x", "x", "y"]})
    s = stats.qi_class_counts(engine, catalog.get_table(engine, "t"), ["a", "e", "n"], "cls")
    assert [list(v) for v in s.values] == [["a", "b", "c"], [], ["2", "10", "33"]]
    assert list(s.class_values) == ["x", "y"] and list(s.domain_sizes) == [3, 0, 3]


def test_attr_class_counts_match_the_marginals_of_n_y_c(engine, make_table):
    make_table("t", SMALL)
    tab = catalog.get_table(engine, "t")
    a = stats.attr_class_counts(engine, tab, ["zip", "sex", "age"], "cls")
    assert a.counts[0].tolist() == [[1, 2], [2, 0], [1, 0]]  # zip 1,2,3 x class n,y
    assert a.null_counts.tolist() == [[0, 2], [1, 0], [0, 2]]
    assert [list(v) for v in a.values][2] == ["30", "31", "40", "50"]  # exact text, in the type's order
    s = stats.qi_class_counts(engine, tab, ["zip", "sex", "age"], "cls")
    for j in range(3):
        marg = np.zeros_like(a.counts[j])
        known = s.codes[:, j] >= 0
        np.add.at(marg, (s.codes[known, j], s.classes[known]), s.counts[known])
        assert (marg == a.counts[j]).all()


def test_class_counts(engine, make_table):
    make_table("t", SMALL)
    c = stats.class_counts(engine, catalog.get_table(engine, "t"), "cls")
    assert list(c.values) == ["n", "y"] and c.counts.tolist() == [4, 4] and c.total == 8
