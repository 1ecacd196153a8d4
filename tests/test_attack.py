"""The attack room (issue 35): re-identification risk against a population (journalist, marketer,
Benedetti-Franconi individual risk), population uniqueness (Pitman, Zayatz, SNB, Dankar's rule)
and the linkage attack; golden figures from ARX's and sdcMicro's published tests and from tables
computed by hand, on both engines; the gates and bad input."""

from __future__ import annotations

import json
import math

import pytest

import anonsql
from anonsql.attack import uniqueness
from anonsql.attack.linkage import summarize
from anonsql.cli import main
from anonsql.errors import AnonsqlError

# ------------------------------------------------------------------ population uniqueness (pure)

# ARX's TestRiskMetrics.testDecisionRule2 (arx-deidentifier/arx, src/test/org/deidentifier/arx/test/
# TestRiskMetrics.java): Dankar's estimate of the share of population uniques on ARX's Adult
# (30,162 rows, QIs sex, age, race, marital-status, education, native-country, workclass,
# occupation, salary-class), per sampling fraction. π <= 0.1 is Pitman's model, π = 0.2 Zayatz's,
# π = 1 the sample uniques themselves.
ARX_DANKAR = {0.1: ("pitman", 0.2768499388373113), 0.01: ("pitman", 0.14460835311692927),
              0.2: ("zayatz", 0.3577099234829125), 1.0: ("zayatz", 0.5142895033485844)}
ARX_QI = "sex,age,race,marital_status,education,native_country,workclass,occupation,income"


def test_dankar_rule_reproduces_arx_on_adult(db, engine):
    """Our Adult lacks UCI's one Holand-Netherlands row (fixtures/README.md), a sample unique under
    any QIs holding native-country: put it back, and every class size matches ARX's data."""
    anonsql.load_dataset(db, "adult", "adult_all")
    engine.execute("CREATE TABLE arx AS SELECT * FROM adult_all "
                   "WHERE workclass IS NOT NULL AND occupation IS NOT NULL AND native_country IS NOT NULL")
    engine.execute("INSERT INTO arx (age, workclass, education, marital_status, occupation, race, sex, "
                   "native_country, income) VALUES (32, 'Private', 'Some-college', 'Never-married', "
                   "'Machine-op-inspct', 'White', 'Female', 'Holand-Netherlands', '<=50K')")
    for fraction, (model, share) in ARX_DANKAR.items():
        r = anonsql.reidentification_risk(db, "arx", ARX_QI, sampling_fraction=fraction)
        u = r.uniqueness
        assert (r.rows, u.sample_uniques, u.dankar_model) == (30_162, 15_512, model)
        assert u.share(u.dankar) == pytest.approx(share, rel=1e-9)


def test_estimators_by_hand():
    # no sample uniques: no population uniques, whatever the model
    none = uniqueness.estimate([(2, 3), (5, 1)], 0.1)
    assert (none.pitman, none.zayatz, none.snb, none.dankar, none.dankar_model) == (0, 0, 0, 0, "none")
    # π = 1: the sample is the population; Zayatz's P(unique | sample unique) is 1 (a class of k > 1
    # shows all k rows), so its population uniques are c_1
    whole = uniqueness.estimate([(1, 4), (2, 3), (3, 1)], 1.0)
    assert (whole.population, whole.zayatz, whole.dankar, whole.dankar_model) == (13.0, 4.0, 4.0, "zayatz")
    # Zayatz at π = 1/2, N = 4, n = 2, classes {1: 2}: h_1(1) = P(one of the 1 unique drawn) = 1/2;
    # P(unique | sample unique) = 1, uniques = c_1 / π = 4
    assert uniqueness.estimate([(1, 2)], 0.5).zayatz == pytest.approx(4.0)
    # Pitman's (θ, α) are fitted to the sample's partition alone, so the estimate Γ(θ+1)/Γ(θ+α)·N^α
    # grows with N as N^α: halving π twice multiplies it twice by the same 2^α
    sizes = [(1, 40), (2, 12), (3, 5), (4, 2)]
    a, b, c = (uniqueness.estimate(sizes, f).pitman for f in (0.1, 0.05, 0.025))
    assert b / a == pytest.approx(c / b, rel=1e-9) and b != a


def test_dankar_rule_picks_the_smaller_of_zayatz_and_snb_above_a_tenth(monkeypatch):
    monkeypatch.setattr(uniqueness, "snb_uniques", lambda k, c, pi: 1.0)
    assert uniqueness.estimate([(1, 5), (2, 2)], 0.5).dankar_model == "snb"
    monkeypatch.setattr(uniqueness, "snb_uniques", lambda k, c, pi: math.nan)  # no estimate: Zayatz
    assert uniqueness.estimate([(1, 5), (2, 2)], 0.5).dankar_model == "zayatz"
    monkeypatch.setattr(uniqueness, "pitman_uniques", lambda k, c, n, big_n: math.nan)
    assert uniqueness.estimate([(1, 5), (2, 2)], 0.05).dankar_model == "zayatz"


def test_snb_fit_solves_its_equations():
    """SNB has no published figure to compare with (ARX's own test leaves it out, and on Adult it
    finds no root); where the fit finds (α, β), the model's expected c_1 and c_2 are the sample's."""
    import numpy as np

    k, c, pi = np.array([1.0, 2.0, 3.0]), np.array([10.0, 2.0, 1.0]), 0.8
    big_k, a, b = uniqueness.snb_fit(k, c, pi)
    d = (1 - pi) * (1 - b)
    assert big_k * pi * (b / (1 - d)) ** a * (a * d / (1 - d) + 1) == pytest.approx(10)
    assert big_k * a * b ** a * pi ** 2 * (1 - b) / 2 * (1 - d) ** (a + 2) * (2 - (1 - a) * d) == pytest.approx(2)
    assert uniqueness.estimate([(1, 10), (2, 2), (3, 1)], pi).snb == pytest.approx(big_k * b ** a)
    assert math.isnan(uniqueness.snb_uniques(k, np.array([15512.0, 2098.0, 754.0]), 0.2))  # no root: no estimate


# ------------------------------------------------------------------ population risk (SQL, both engines)

def test_journalist_and_marketer_risk_by_hand(db, make_table):
    # sample classes over q: a (2 rows), b (1), ⊥ (1); the population holds a 4 times, b 2, ⊥ 1, d 3
    make_table("sample", {"q": ["a", "a", "b", None], "v": [1, 2, 3, 4]})
    make_table("people", {"q": ["a", "a", "a", "a", "b", "b", None, "d", "d", "d"]})
    r = anonsql.reidentification_risk(db, "sample", "q", population="people", risk_threshold=0.4)
    p = r.population
    assert p.journalist == 1.0  # the ⊥ class is one person in the population
    assert p.marketer == pytest.approx((2 / 4 + 1 / 2 + 1 / 1) / 4)
    assert (p.records_above_threshold, p.population, p.short_classes) == (2, 10, 0)  # b and ⊥: 1/F > 0.4
    assert (p.max_individual, p.expected_reidentified) == (None, None)
    assert r.uniqueness.sampling_fraction == pytest.approx(4 / 10)  # n / N by default
    assert r.journalist == 1.0 and r.prosecutor.max_risk == 1.0


# sdcMicro's tests/testthat/test_indivRisk.R ("without missing", weighted, method approx): keys A, B, C
# and weights; indivRisk's r_k per record.
SDC_DATA = {"a": [2, 3, 2, 2, 3, 3, 1, 2], "b": [3, 3, 3, 3, 3, 3, 4, 3], "c": [1, 3, 1, 2, 1, 1, 1, 1],
            "w": [18.0, 45.5, 39.0, 17.0, 92.0, 8.0, 123.5, 51.0]}
SDC_RK = [0.01369863, 0.08579129, 0.01369863, 0.17707583, 0.01877883, 0.01877883, 0.03931625, 0.01369863]


def test_individual_risk_reproduces_sdcmicro(db, make_table):
    make_table("francdat", SDC_DATA)
    r = anonsql.reidentification_risk(db, "francdat", "a,b,c", population_weights="w")
    p = r.population
    assert p.max_individual == pytest.approx(max(SDC_RK), abs=1e-8)
    assert p.expected_reidentified == pytest.approx(sum(SDC_RK), abs=1e-7)
    assert p.journalist == pytest.approx(1 / 17)  # the unique of weight 17
    assert p.population == pytest.approx(sum(SDC_DATA["w"]))


def test_individual_risk_is_one_over_f_when_the_weights_say_the_sample_is_the_population(db, make_table):
    make_table("t", {"q": ["a", "a", "b"], "w": [1.0, 1.0, 0.5]})  # b: F̂ = 0.5 < f = 1, taken as 1
    p = anonsql.reidentification_risk(db, "t", "q", population_weights="w").population
    assert (p.max_individual, p.expected_reidentified, p.short_classes) == (1.0, 2.0, 1)


# ------------------------------------------------------------------ linkage (SQL, both engines)

SOURCE = {"id": [1, 2, 3, 4, 5, 6], "q1": ["a", "a", "b", "b", "c", "d"], "q2": ["x", "y", "x", "y", "z", None]}
# published: rows 1-2 lose q2, row 5 loses q1, and rows 3 and 4 carry each other's key (so the
# unique match of attacker 3 is not their own row)
PUBLISHED = {"id": [1, 2, 4, 3, 5, 6], "q1": ["a", "a", "b", "b", None, "d"], "q2": [None, None, "x", "y", "z", None]}


def test_linkage_by_hand(db, make_table):
    make_table("src", SOURCE)
    make_table("pub", PUBLISHED)
    r = anonsql.linkage_attack(db, "pub", "src", "q1,q2", key="id")
    k = r.linkage
    # attackers 1, 2: (a,⊥) rows 1 and 2 -> 2 candidates; 3, 4, 5, 6: one candidate each (6: ⊥ matches ⊥)
    assert [(b.m, b.attackers, b.classes) for b in k.by_candidates] == [(1, 4, 4), (2, 2, 2)]
    assert (k.attackers, k.unique_matches, k.unmatched) == (6, 4, 0)
    assert k.expected_correct == pytest.approx(4 + 2 / 2)
    assert k.realized_correct == 2  # 5 and 6; 3 and 4 single out each other's row
    assert (k.expected_share, k.realized_share) == (pytest.approx(4 / 6), pytest.approx(2 / 6))
    assert anonsql.linkage_attack(db, "pub", "src", "q1,q2").linkage.realized_correct is None


def test_linkage_on_the_table_itself_finds_the_sample_uniques(db, make_table):
    make_table("t", {"q": ["a", "a", "b", "c"], "r": [1, 1, 2, 3]})
    k = anonsql.linkage_attack(db, "t", "t", "q,r").linkage
    assert k.unique_matches == anonsql.check(db, "t", "q,r", 1).risk.sample_uniques == 2
    # a published (⊥, ⊥) row is a candidate of everyone; the attacker's own ⊥ matches only ⊥
    make_table("u", {"q": ["a", "a", "b", None, "c"], "r": [1, 1, 2, None, 3]})
    k = anonsql.linkage_attack(db, "u", "u", "q,r").linkage
    assert [(b.m, b.attackers, b.classes) for b in k.by_candidates] == [(1, 1, 1), (2, 2, 2), (3, 2, 1)]


def test_linkage_counts_attackers_matching_nothing(db, make_table):
    make_table("src", {"q": ["a", "b", "z"]})
    make_table("pub", {"q": ["a", "b", None]})  # the ⊥ row matches all three
    k = anonsql.linkage_attack(db, "pub", "src", "q").linkage
    assert [(b.m, b.attackers) for b in k.by_candidates] == [(1, 1), (2, 2)]
    make_table("pub2", {"q": ["a", "b"]})
    r = anonsql.linkage_attack(db, "pub2", "src", "q")
    assert r.linkage.unmatched == 1 and "match no published row" in r.notes[0]


def test_summarize_by_hand():
    r = summarize([(0, 1, 1, 0), (1, 2, 2, 1), (4, 4, 1, 0)], with_key=True)
    assert (r.attackers, r.unique_matches, r.unmatched, r.expected_correct, r.realized_correct) == (7, 2, 1, 3.0, 1)
    assert r.success == pytest.approx(1 / 7)
    assert summarize([(1, 2, 2, 0)], with_key=False).success == 1.0


# ------------------------------------------------------------------ gates, CLI, bad input

def test_gates_and_exit_codes(db, make_table, capsys):
    make_table("src", SOURCE)
    make_table("pub", PUBLISHED)
    assert not anonsql.reidentification_risk(db, "src", "q1,q2", max_journalist_risk=0.5)
    assert anonsql.reidentification_risk(db, "pub", "q1,q2", max_journalist_risk=1.0)
    code = main(["risk", "--db", db, "--table", "src", "--qi", "q1,q2", "--max-journalist-risk", "0.5"])
    out = capsys.readouterr().out
    assert code == 1 and "gate: journalist risk <= 0.5 FAILS" in out
    code = main(["attack", "linkage", "--db", db, "--published", "pub", "--source", "src", "--qi", "q1,q2",
                 "--key", "id", "--max-linkage-success", "0.4", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["ok"] and data["linkage"]["realized_correct"] == 2
    code = main(["attack", "linkage", "--db", db, "--published", "pub", "--source", "src", "--qi", "q1,q2",
                 "--max-linkage-success", "0.4"])  # without the key: the expected share, 4/6
    assert code == 1 and "expected share of correct unique matches 66.6667%" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["risk", "--qi", "q1", "--population", "pub", "--population-weights", "id"], "not both"),
    (["risk", "--qi", "q1", "--population-weights", "q2"], "is not numeric"),
    (["risk", "--qi", "q1,id", "--population-weights", "id"], "is also a quasi-identifier"),
    (["risk", "--qi", "q1", "--population", "nope"], "nope"),
    (["risk", "--qi", "q1,nope"], "unknown column 'nope'"),
    (["risk", "--qi", "q1", "--sampling-fraction", "0"], "--sampling-fraction"),
    (["risk", "--qi", "q1", "--population", "small"], "smaller than the sample"),
    (["attack", "linkage", "--published", "pub", "--source", "src", "--qi", "q1", "--key", "q1"],
     "also a quasi-identifier"),
    (["attack", "linkage", "--published", "small", "--source", "src", "--qi", "q2"], "unknown column 'q2'"),
    (["attack", "linkage", "--published", "numbers", "--source", "src", "--qi", "q1"],
     "quasi-identifier q1 is text in src but integer in the published table numbers"),
    (["risk", "--qi", "q1", "--population", "numbers"], "q1 is text in src but integer in the population table"),
    (["attack", "linkage", "--published", "pub", "--source", "src", "--qi", "q1", "--max-linkage-success", "2"],
     "--max-linkage-success"),
])
def test_bad_input_is_one_line_exit_2(db, make_table, capsys, argv, message):
    make_table("src", SOURCE)
    make_table("pub", PUBLISHED)
    make_table("small", {"q1": ["a"]})
    make_table("numbers", {"q1": [1, 2, 3, 4, 5, 6, 7], "id": [1, 2, 3, 4, 5, 6, 7]})
    where = 1 if argv[0] == "risk" else 2
    argv = [*argv[:where], "--db", db, *(["--table", "src"] if argv[0] == "risk" else []), *argv[where:]]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_api_refuses_bad_values_before_connecting():
    with pytest.raises(AnonsqlError, match="sampling fraction"):
        anonsql.reidentification_risk("/nonexistent.duckdb", "t", "q", sampling_fraction=1.5)
    with pytest.raises(AnonsqlError, match="max linkage success"):
        anonsql.linkage_attack("/nonexistent.duckdb", "p", "s", "q", max_linkage_success=-0.1)


# ------------------------------------------------------------------ the release's attack gates

def test_release_attack_gates_pass_and_refuse(engine, tmp_path):
    from anonsql.data.loading import write_frame
    from anonsql.errors import VerificationError
    from tests.test_release_gates import _noshow, _spec

    write_frame(engine, _noshow(), "noshow")
    gates = "max_journalist_risk = 0.2\nmax_linkage_success = 0"
    report = anonsql.release_run(_spec(tmp_path, gates=gates), engine)
    checks = {c.name: c for c in report.checks}
    linkage = checks["gate: linkage success <= 0 in noshow_pub"]
    assert linkage.passed and "realized share of correct unique matches 0.0000%" in linkage.detail  # key kept
    assert checks["gate: journalist risk <= 0.2 in noshow_pub"].passed
    proof = report.proofs["noshow_pub"]
    # the attacker knows the binned values (the table kanon read), so every person matches a published row
    assert any(s.startswith("Linkage attack: an attacker who knows the quasi-identifiers of all 1,200 people of "
                            "noshow_binned singles out 0 of them") for s in proof.attacks)
    page = (tmp_path / "out" / "report.html").read_text()
    assert "Linkage attack:" in page and "Journalist risk:" in page
    # k = 1 publishes the people unique on (Gender, Age bin, Neighbourhood): the release refuses
    with pytest.raises(VerificationError, match="gate: journalist risk <= 0.2 in noshow_k5: max 1/F_k = 1"):
        anonsql.release_run(_k1_spec(tmp_path, gates), engine, replace=True)
    with pytest.raises(VerificationError, match="gate: linkage success <= 0 in noshow_k5: realized share"):
        anonsql.release_run(_k1_spec(tmp_path, "max_linkage_success = 0"), engine, replace=True)


def _k1_spec(tmp_path, gates: str):
    from tests.test_release_gates import _spec

    path = _spec(tmp_path, protect=None, gates=gates)
    path.write_text(path.read_text().replace("k = 5", "k = 1"))
    return path


def test_release_gates_are_numbers_from_0_to_1(tmp_path):
    from anonsql.release import spec as spec_mod
    from tests.test_release_gates import _spec

    with pytest.raises(AnonsqlError, match=r"\[gates\] max_linkage_success must be a number from 0 to 1"):
        spec_mod.load(_spec(tmp_path, gates="max_linkage_success = 1.5"))


def test_linkage_same_with_the_patterns_in_use_or_every_pattern(db, make_table, monkeypatch):
    from anonsql.attack import stats

    make_table("src", SOURCE)
    make_table("pub", PUBLISHED)
    every = anonsql.linkage_attack(db, "pub", "src", "q1,q2", key="id").linkage
    monkeypatch.setattr(stats, "EVERY_PATTERN_UP_TO", 0)  # find the patterns in the published table
    engine_patterns = stats.null_patterns
    seen: list[list[str]] = []
    monkeypatch.setattr(stats, "null_patterns", lambda *a: seen.append(engine_patterns(*a)) or seen[-1])
    found = anonsql.linkage_attack(db, "pub", "src", "q1,q2", key="id").linkage
    assert seen == [["00", "01", "10"]]  # (a,⊥) rows 1-2, (⊥,z) row 5 and (d,⊥) row 6 are ⊥ in one QI each
    assert found == every


# ------------------------------------------------------------------ differencing two safe tables

def _counts(engine, name: str, counts: dict[str, int]) -> None:
    import pandas as pd

    from anonsql.data.loading import write_frame

    write_frame(engine, pd.DataFrame({"a": [v for v, n in counts.items() for _ in range(n)]}), name)


def test_difference_of_two_monthly_tables_exposes_the_added_row(db, engine):
    """January's and January-February's counts, each safe alone (no cell below 1 hidden): their
    difference is February's table, whose x holds one person."""
    _counts(engine, "jan", {"x": 5, "y": 5})
    _counts(engine, "janfeb", {"x": 6, "y": 5})
    _counts(engine, "janfeb_fixed", {"x": 8, "y": 5})  # February adds 3 rows in x: no small count
    for name in ("jan", "janfeb", "janfeb_fixed"):
        anonsql.safe_table(db, name, "a", min_count=1, out=f"t_{name}")
    r = anonsql.difference_attack(db, "t_jan", "t_janfeb")
    assert not r and r.exposed == [] and sorted(map(str, (c["labels"][0] for c in r.exposed_added))) == \
        ["Total", "x"]  # February's x and its total: one row each
    assert anonsql.difference_attack(db, "t_jan", "t_janfeb_fixed")
    assert "value" not in json.dumps(r.to_dict()["exposed_added"])  # labels only, never the count


def test_the_same_rows_published_twice_with_other_secondaries_pin_the_primary(db, engine):
    """x = 1 is a primary; y (first release) or z (second) its secondary: x + y = 5 and x + z = 6,
    each alone leaves x in [0, 5] or [0, 6]; together (no row added: the totals agree) x = 1."""
    _counts(engine, "month", {"x": 1, "y": 4, "z": 5})
    anonsql.safe_table(db, "month", "a", min_count=3, publish="a=z", out="first")
    anonsql.safe_table(db, "month", "a", min_count=3, publish="a=y", out="second")
    assert anonsql.audit_table(db, "first") and anonsql.audit_table(db, "second")
    r = anonsql.difference_attack(db, "first", "second")
    assert not r and r.primaries == 2
    assert sorted((c["table"], c["labels"][0]) for c in r.exposed) == [("first", "x"), ("second", "x")]


def test_difference_bad_input(db, engine, make_table, capsys):
    _counts(engine, "month", {"x": 3, "y": 4})
    anonsql.safe_table(db, "month", "a", min_count=3, out="pub")
    make_table("other", {"b": ["x"], "grouping_id": [0], "level": [0], "value": [1], "status": ["published"],
                         "lower": [1], "upper": [1]})
    for argv, message in [(["--earlier", "month", "--later", "pub"], "not a published table of 'anonsql tables'"),
                          (["--earlier", "pub", "--later", "other"], "other dimensions"),
                          (["--earlier", "pub", "--later", "pub", "--min-count", "0"], "--min-count")]:
        code = main(["attack", "difference", "--db", db, *argv])
        err = capsys.readouterr().err
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_release_refuses_when_its_safe_table_and_a_previous_one_pin_a_primary(db, engine, tmp_path):
    from anonsql.errors import VerificationError

    _counts(engine, "month", {"x": 1, "y": 4, "z": 5})
    spec = tmp_path / "month.toml"
    text = ('[release]\nprevious = ["{previous}"]\n\n[source]\ntable = "month"\nqi = ["a"]\n\n'
            '[[steps]]\nkind = "tables"\ndims = ["a"]\nmin_count = 3\nout = "counts"\n\n'
            '[outputs]\ndir = "out"\n')
    anonsql.safe_table(db, "month", "a", min_count=3, out="natural")  # the secondary the release will choose too
    spec.write_text(text.format(previous="natural"))
    report = anonsql.release_run(spec, db)
    assert [c.passed for c in report.checks if c.name == "gate: natural and counts published together expose "
            "nothing"] == [True]
    hidden = {r[0] for r in engine.fetch_all("SELECT a FROM counts WHERE status = 'suppressed'")}
    other = ({"y", "z"} - hidden).pop()  # force the other secondary on the earlier table
    anonsql.safe_table(db, "month", "a", min_count=3, publish=f"a={sorted(hidden - {'x'})[0]}", out="forced")
    assert {r[0] for r in engine.fetch_all("SELECT a FROM forced WHERE status = 'suppressed'")} == {"x", other}
    spec.write_text(text.format(previous="forced"))
    with pytest.raises(VerificationError, match="gate: forced and counts published together expose nothing"):
        anonsql.release_run(spec, db, replace=True)
