"""protect's Section 2.4 statistics summed from distinct tuples (issue 36): the same counts,
exactly, as counting every row in Python, so the same metrics to the bit; and a summary that
names the classifiers which predicted a cell's TRUE value, not any prediction."""

from collections import Counter

import pytest

from anonsql.api import protect_table
from anonsql.catalog import get_table
from anonsql.protect import metrics, stats

from .conftest import table_rows

# x is read with y (paired); z is published but not read (counted by protect/value_counts)
DATA = {
    "id": list(range(1, 13)),
    "x": ["a", "a", "b", None, "b", "c", "a", None, "c", "c", "a", "b"],
    "y": [1, 2, 2, 2, None, 3, 1, 1, 3, None, 2, 2],
    "t": ["p", "q", "p", "p", "q", "q", "p", "p", None, "q", "p", "q"],
    "z": [10, 10, 20, None, 20, 20, 30, 30, 30, 10, None, 40],
}


def reference(rows, cols, paired):
    """Def. 2.7's and 2.9's counts from every row, one Python Counter each (the text keys of stats.text)."""
    single = [Counter(stats.text(r[j]) for r in rows) for j in range(len(cols))]
    both = [j for j, c in enumerate(cols) if c in paired]
    joint = {(i, j): Counter((stats.text(r[i]), stats.text(r[j])) for r in rows
                             if r[i] is not None and r[j] is not None)
             for n, i in enumerate(both) for j in both[n + 1:]}
    return single, joint


def nonzero(d):
    return {k: v for k, v in d.items() if v}


@pytest.mark.parametrize("dense", [True, False])
def test_distributions_equal_every_row_counted(engine, make_table, monkeypatch, dense):
    """Both ways of counting an attribute pair's code pairs: dense (a bincount) and sparse (sorted)."""
    if not dense:
        monkeypatch.setattr(stats, "DENSE_PAIRS", -1000)
    make_table("d", DATA)
    cols = ["x", "y", "t", "z"]
    rows = [r[1:] for r in table_rows(engine, "d")]
    single, joint = stats.distributions(engine, get_table(engine, "d").expr, cols, ["x", "y", "t"])
    ref_single, ref_joint = reference(rows, cols, ["x", "y", "t"])
    assert [nonzero(d) for d in single] == [dict(d) for d in ref_single]
    assert {q: nonzero(d) for q, d in joint.items()} == {q: dict(d) for q, d in ref_joint.items()}


def test_metrics_of_a_run_equal_those_of_every_row_counted(engine, make_table):
    """The metrics a run reports are, to the bit, those of counts taken row by row from the source
    and the output (math.fsum: equal counts, equal sums)."""
    make_table("d", DATA)
    r = protect_table(engine, "d", "id", target="t", rows=["2", "6"], method="dropp", out="d_pub")
    cols = ["x", "y", "t", "z"]
    before = reference([row[1:] for row in table_rows(engine, "d")], cols, cols)  # the run reads every column
    after = reference([row[1:] for row in table_rows(engine, "d_pub")], cols, cols)
    changed = stats.change_counts(engine, get_table(engine, "d_pub_changes").expr)
    expected = metrics.information_loss(before, after, changed, cols, len(DATA["id"]), r.changed_cells,
                                        r.deleted_tuples if r.rows_removed else 0)
    assert r.metrics == expected


@pytest.fixture
def minority(make_table):
    """Rows 1-5 say t = y for x = u; row 6 says n with the same x: every classifier guesses y for it."""
    make_table("m", {"id": [1, 2, 3, 4, 5, 6, 7, 8], "x": ["u", "u", "u", "u", "u", "u", "v", "v"],
                     "t": ["y", "y", "y", "y", "y", "n", "n", "n"]})


def test_a_wrong_prediction_is_not_called_a_hit(engine, minority):
    r = protect_table(engine, "m", "id", target="t", rows=["6"], method="dropp", out="m_pub")
    (cell,) = r.cells
    assert cell.status == "not_needed" and cell.predicted_true == []
    assert cell.prediction_before == {"nb": ["y"], "id3": ["y"]}
    line = next(line for line in r.lines() if line.startswith("  id = 6"))
    assert "true value predicted before by no classifier (nb, id3 predicted another value)" in line


def test_a_right_prediction_names_its_classifiers(engine, minority):
    r = protect_table(engine, "m", "id", target="t", rows=["1"], method="dropp", out="m_pub")
    (cell,) = r.cells
    assert cell.predicted_true == ["nb", "id3"]
    line = next(line for line in r.lines() if line.startswith("  id = 1"))
    assert "true value predicted before by nb, id3;" in line
