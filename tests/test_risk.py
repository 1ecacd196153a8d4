"""Disclosure risk in SQL (issue 14 finding 3): re-identification over the QIs, l-diversity and
t-closeness of a sensitive column, NULL a value of its own; exact figures on both engines."""

import json
import math

import pytest

import anonsql
from anonsql.cli import main
from anonsql.errors import AnonsqlError

# classes over q: a (3 rows), b (2 rows), ⊥ (1 row)
RISKY = {"q": ["a", "a", "a", "b", "b", None], "s": ["x", "y", "x", "z", "z", None], "n": [1, 2, 3, 1, 1, None]}


def test_reidentification_risk(db, make_table):
    make_table("t", RISKY)
    risk = anonsql.check(db, "t", "q", 1).risk
    assert (risk.max_risk, risk.mean_risk, risk.records_above_threshold, risk.sample_uniques) == (1.0, 0.5, 6, 1)
    risk = anonsql.profile(db, "t", qi="q", risk_threshold=0.4).risk
    assert (risk.threshold, risk.records_above_threshold) == (0.4, 3)  # classes of 2 and 1 rows


def test_l_diversity_and_t_closeness_by_hand(db, make_table):
    make_table("t", RISKY)
    s, n = anonsql.profile(db, "t", qi="q", sensitive="s,n").sensitive
    assert (s.distinct_l, s.entropy_l, s.distance) == (1, 1.0, "equal")  # class b holds only z
    # equal distance of class ⊥ (only NULL) to (x 2/6, y 1/6, z 2/6, NULL 1/6): (2+1+2+5)/6/2
    assert math.isclose(s.t, 5 / 6)
    # ordered distance (values 1, 2, 3, NULL last) of class ⊥: (1/2 + 2/3 + 5/6 + 0) / 3
    assert (n.distance, n.distinct_l) == ("ordered", 1) and math.isclose(n.t, 2 / 3)
    make_table("u", {"q": ["a", "a", "b", "b"], "s": ["x", "y", "x", "y"]})
    (u,) = anonsql.profile(db, "u", qi="q", sensitive="s").sensitive
    assert (u.distinct_l, u.t) == (2, 0.0) and math.isclose(u.entropy_l, 2.0)


def test_check_fails_on_l_and_t_and_null_is_a_value(db, make_table):
    make_table("t", RISKY)
    r = anonsql.check(db, "t", "q", 1, l_diversity="s=2", t_closeness={"n": 0.5})
    assert not r and [c.passed for c in r.checks] == [True, False, False]
    assert (r.sensitive[0].classes_below_l, r.sensitive[0].rows_below_l) == (2, 3)
    assert (r.sensitive[1].classes_above_t, r.sensitive[1].rows_above_t) == (1, 1)
    make_table("v", {"q": ["a", "a", "b", "b"], "s": ["x", None, "x", None]})
    assert anonsql.check(db, "v", "q", 2, l_diversity="s=2")  # NULL is a second value


def test_check_cli_exit_codes(capsys, db, make_table):
    make_table("t", RISKY)
    code = main(["check", "--db", db, "--table", "t", "--qi", "q", "--k", "1", "--l-diversity", "s=2"])
    out = capsys.readouterr().out
    assert code == 1 and "2-diversity of s FAILS" in out and "re-identification risk" in out
    code = main(["check", "--db", db, "--table", "t", "--qi", "q", "--k", "1", "--t-closeness", "s=0.9", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["ok"] and data["sensitive"][0]["t"] == pytest.approx(5 / 6)
    code = main(["check", "--db", db, "--table", "t", "--qi", "q", "--k", "1", "--t-closeness", "s=2"])
    err = capsys.readouterr().err
    assert code == 2 and "bad --t-closeness s=2" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("kwargs, match", [
    (dict(l_diversity="q=2"), "sensitive column q is also listed as a quasi-identifier"),
    (dict(l_diversity="s=0"), "bad --l-diversity s=0"),
    (dict(l_diversity="s=2,s=3"), "bad --l-diversity s=3"),
    (dict(t_closeness="nope=0.1"), "unknown column 'nope'"),
    # a bare value where COLUMN=L belongs said `bad --l-diversity ?=Diabetes` (issue 36)
    (dict(l_diversity="Diabetes"), r"^bad --l-diversity 'Diabetes': give COLUMN=VALUE \(no '=' in it\), "
                                   r"e\.g\. diagnosis=2 \(every class holds at least 2 distinct diagnoses\)$"),
    (dict(t_closeness="s=0.2, income"), r"^bad --t-closeness 'income': give COLUMN=VALUE"),
    (dict(risk_threshold=-1), "risk threshold must be a finite number >= 0"),
])
def test_bad_risk_input(db, make_table, kwargs, match):
    make_table("t", RISKY)
    with pytest.raises(AnonsqlError, match=match):
        anonsql.check(db, "t", "q", 1, **kwargs)
