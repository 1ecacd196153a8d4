"""kanon enforcing l-diversity and t-closeness (issue 32): golden tables checked by hand, on both engines.

Every golden run uses cost ham (Γ = cells newly blanked, eq. 1) and no class column (C = 1), so each
QI pattern is one tuple and the arithmetic is short enough to follow in the comments.
"""

import numpy as np
import pytest

import anonsql
from anonsql.cli import main
from anonsql.errors import AnonsqlError
from anonsql.kanon import anonymize, fast
from anonsql.kanon.diversity import Layout, Model, distance, entropy, parse

from .conftest import table_rows
from .test_release_gates import _spec, _tables, noshow  # noqa: F401 (noshow: the fixture)

# Three classes over (zip, sex), k = 2 holds already. diag: (1,m) = flu, flu is the only class
# with one value. Merging it costs ham 2 + 2 = 4 with (1,f) (sex blanked: class (1,⊥) = flu x3,
# cold x1) and 2 + 3 = 5 with (2,m) (zip blanked): one merge, (1,f) blanked to (1,⊥).
L_TABLE = {
    "zip": ["1", "1", "1", "1", "2", "2", "2"],
    "sex": ["m", "m", "f", "f", "m", "m", "m"],
    "diag": ["flu", "flu", "flu", "cold", "cold", "flu", "flu"],
    "id": [1, 2, 3, 4, 5, 6, 7],
}
L_EXPECTED = [(1, "1", None), (2, "1", None), (3, "1", None), (4, "1", None), (5, "2", "m"), (6, "2", "m"),
              (7, "2", "m")]

# t-closeness: the table's distribution of s over {1, 2, 3} is (3/8, 2/8, 3/8).
# (1,m) = 1,1: equal distance ½(5/8 + 2/8 + 3/8) = 0.625, ordered Σ|cum| / (3-1) = (5/8 + 3/8) / 2 = 0.5;
# (1,f) = 3,3: equal 0.625, ordered (3/8 + 5/8) / 2 = 0.5;
# (2,f) = 2,2,1,3: equal ½(1/8 + 2/8 + 1/8) = 0.25, ordered (1/8 + 1/8) / 2 = 0.125.
T_TABLE = {
    "zip": ["1", "1", "1", "1", "2", "2", "2", "2"],
    "sex": ["m", "m", "f", "f", "f", "f", "f", "f"],
    "s": [1, 1, 3, 3, 2, 2, 1, 3],
    "id": [1, 2, 3, 4, 5, 6, 7, 8],
}
# T = 0.45: (1,m) and (1,f) are too far under either distance. Their merge (1,⊥) = 1,1,3,3 is at equal
# distance ½(1/8 + 2/8 + 1/8) = 0.25, ordered (1/8 + 1/8) / 2 = 0.125, and costs ham 2 + 2 = 4, below
# any merge with (2,f) (zip blanked on 2 + 4 rows, or both cells of 2 + 4 rows): one merge.
T_EXPECTED = [(1, "1", None), (2, "1", None), (3, "1", None), (4, "1", None), (5, "2", "f"), (6, "2", "f"),
              (7, "2", "f"), (8, "2", "f")]


def _run(db, name, **models):
    return anonsql.k_anonymize(db, name, "zip,sex", None, 2, cost="ham", out=f"{name}_out", **models)


def _qi(engine, name):
    """(id, zip, sex) of every row, by id."""
    return sorted(engine.fetch_all(f"SELECT id, zip, sex FROM {name}"))


@pytest.mark.parametrize("models", [
    {"l_diversity": "diag=2"},
    {"entropy_l": {"diag": 1.7}},  # (1,⊥) = 3:1 is exp(H) = 1.75, (2,m) = 2:1 is 1.89; (⊥,m) = 4:1 only 1.65
    {"recursive_cl": "diag=4,2"},  # (1,⊥): 3 < 4 x 1 holds; (⊥,m): 4 < 4 x 1 does not
])
def test_l_golden_one_extra_merge(db, engine, make_table, models):
    make_table("t", L_TABLE)
    plain = _run(db, "t")
    assert plain.iterations == 0 and sorted(_qi(engine, "t_out")) == sorted(zip(L_TABLE["id"], L_TABLE["zip"],
                                                                                  L_TABLE["sex"]))
    r = anonsql.k_anonymize(db, "t", "zip,sex", None, 2, cost="ham", out="t_l", **models)
    assert r.ok and r.iterations == 1 and r.suppressed_cells == 4
    assert sorted(_qi(engine, "t_l")) == L_EXPECTED
    kind = next(iter(models))
    query = "kanon/recursive_diversity" if kind == "recursive_cl" else "data/attribute_disclosure"
    assert [c.query for c in r.checks if c.name.startswith(kind.replace("_", "-"))] == [query]
    assert any("every equivalence class also meets" in line for line in r.lines())
    if kind == "l_diversity":
        assert anonsql.check(db, "t_l", "zip,sex", 2, l_diversity="diag=2").ok
        assert not anonsql.check(db, "t_out", "zip,sex", 2, l_diversity="diag=2").ok


@pytest.mark.parametrize("kind", ["numeric", "text"])
def test_t_golden_one_extra_merge_under_either_distance(db, engine, make_table, kind):
    data = dict(T_TABLE, s=[str(v) for v in T_TABLE["s"]]) if kind == "text" else T_TABLE
    make_table("t", data)
    r = _run(db, "t", t_closeness="s=0.45")
    assert r.ok and r.iterations == 1 and r.suppressed_cells == 4
    assert sorted(_qi(engine, "t_out")) == T_EXPECTED
    assert anonsql.check(db, "t_out", "zip,sex", 2, t_closeness="s=0.45").ok


def test_t_closeness_uses_the_ordered_distance_on_numbers(db, engine, make_table):
    """T = 0.55 lies between the ordered distance (0.5) and the equal one (0.625) of (1,m) and (1,f):
    numbers keep every cell, the same values as text need the merge."""
    make_table("n", T_TABLE)
    make_table("c", dict(T_TABLE, s=[str(v) for v in T_TABLE["s"]]))
    assert _run(db, "n", t_closeness="s=0.55").iterations == 0
    assert sorted(_qi(engine, "n_out")) == sorted(_qi(engine, "n"))
    assert _run(db, "c", t_closeness="s=0.55").iterations == 1
    assert sorted(_qi(engine, "c_out")) == T_EXPECTED


@pytest.mark.parametrize("models, match", [
    ({"l_diversity": "diag=3"}, r"--l-diversity diag=3 cannot be met: the whole table holds only 2 distinct"),
    ({"entropy_l": "diag=2"}, r"--entropy-l diag=2 cannot be met: the whole table's entropy l-diversity of diag "
                              r"is 1\.8"),
    ({"recursive_cl": "diag=1,2"}, r"--recursive-cl diag=1,2 cannot be met: the whole table is not recursive"),
    ({"l_diversity": "zip=2"}, "is a quasi-identifier"),
    ({"l_diversity": "nope=2"}, "unknown column 'nope'"),
    ({"l_diversity": "diag=0"}, "bad --l-diversity diag=0"),
    ({"entropy_l": "diag=0.5"}, "bad --entropy-l diag=0.5"),
    ({"recursive_cl": "diag=3"}, "bad --recursive-cl diag=3"),
    ({"t_closeness": "diag=1.5"}, "bad --t-closeness diag=1.5"),
])
def test_impossible_or_bad_models_refused_before_any_work(db, engine, make_table, models, match):
    make_table("t", L_TABLE)
    before = table_rows(engine, "t")
    with pytest.raises(AnonsqlError, match=match):
        _run(db, "t", **models)
    assert table_rows(engine, "t") == before
    assert engine.fetch_all("SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 't_out' "
                             "AND table_schema = current_schema()") == [(0,)]


def test_cli_impossible_model_is_one_line_and_exit_2(db, make_table, capsys):
    make_table("t", L_TABLE)
    code = main(["kanon", "--db", db, "--table", "t", "--qi", "zip,sex", "--k", "2", "--l-diversity", "diag=3"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "cannot be met" in err


def test_cli_enforces_several_models_on_several_columns(db, engine, make_table, capsys):
    """A NULL sensitive value counts as a value of its own; diag (l = 2) and s (t = 0.45) at once."""
    data = dict(T_TABLE, diag=["a", "a", None, "b", "a", "b", "a", "b"])
    make_table("t", data)
    code = main(["kanon", "--db", db, "--table", "t", "--qi", "zip,sex", "--k", "2", "--cost", "ham",
                 "--l-diversity", "diag=2", "--t-closeness", "s=0.45", "--out", "t_out"])
    out = capsys.readouterr().out
    assert code == 0 and "l-diversity diag=2; --t-closeness s=0.45" in out
    # (1,m) = a,a fails l and t: merged with (1,f) = NULL,b as before: (1,⊥) = a,a,NULL,b is 3-diverse
    assert sorted(_qi(engine, "t_out")) == T_EXPECTED
    assert anonsql.check(db, "t_out", "zip,sex", 2, l_diversity="diag=2", t_closeness="s=0.45").ok


def test_emit_sql_script_checks_every_model(db, engine, make_table, tmp_path):
    """The dry run's script ends with a query per model; run on the real output, each returns what it must."""
    make_table("t", L_TABLE)
    script = tmp_path / "run.sql"
    models = dict(l_diversity="diag=2", recursive_cl="diag=4,2")
    anonsql.k_anonymize(db, "t", "zip,sex", None, 2, cost="ham", out="t_l", emit_sql=str(script), execute=False,
                        **models)
    text = script.read_text()
    assert "l-diversity diag=2: must return classes_below_l = 0" in text
    assert "recursive-cl diag=4,2: must return classes = 0, rows = 0" in text
    anonsql.k_anonymize(db, "t", "zip,sex", None, 2, cost="ham", out="t_l", **models)
    from anonsql.kanon import verify
    from anonsql.kanon.entry import _sensitive_models

    table = anonsql.catalog.get_table(engine, "t")
    for m in _sensitive_models(table, [*parse(models["l_diversity"], "l_diversity"),
                                       *parse(models["recursive_cl"], "recursive_cl")], ["zip", "sex"]):
        _, query = verify.diversity_script(engine.dialect, anonsql.sql.TableName("t_l").expr, ["zip", "sex"], m)
        row = engine.fetch_all(query)[0]
        assert (row[3] == 0) if m.kind == "l_diversity" else (tuple(row) == (0, 0))


def test_class_column_as_the_sensitive_column(db, engine, make_table):
    make_table("t", L_TABLE)
    r = anonsql.k_anonymize(db, "t", "zip,sex", "diag", 2, cost="ham", out="t_out", l_diversity="diag=2")
    assert r.ok and anonsql.check(db, "t_out", "zip,sex", 2, l_diversity="diag=2").ok


# ---- the loop on arrays -------------------------------------------------------------------------------------

def _hist(values, size):
    h = np.zeros((len(values), size), np.int64)
    for i, row in enumerate(values):
        for v, n in row.items():
            h[i, v] += n
    return h


MODEL_SETS = {
    "distinct+ordered-t": [Model("s", "l_diversity", 2), Model("s", "t_closeness", 0.3, ordered=True)],
    "entropy": [Model("s", "entropy_l", 1.8)],
    "recursive": [Model("s", "recursive_cl", 2, c=3.0)],
    "two columns": [Model("s", "l_diversity", 3), Model("r", "t_closeness", 0.25, column=1)],
    # distinct models alone: the compiled loop's progress test reads value bits (_core.c dbits), not histograms
    "distinct": [Model("s", "l_diversity", 3)],
    "distinct, two columns": [Model("s", "l_diversity", 2), Model("r", "l_diversity", 3, column=1)],
}


@pytest.mark.parametrize("models", list(MODEL_SETS.values()), ids=list(MODEL_SETS))
@pytest.mark.parametrize("cost", ["ham", "info", "mar", "hybrid"])
@pytest.mark.parametrize("seed", range(3))
def test_compiled_and_reference_loops_agree_bit_for_bit_and_meet_every_model(seed, cost, models):
    rng = np.random.default_rng(seed)
    codes = np.unique(rng.integers(-1, 4, size=(80, 3)), axis=0)
    counts = rng.integers(1, 4, size=len(codes))
    classes = rng.integers(0, 2, size=len(codes))
    if len(np.unique(classes)) < 2:
        classes[0] = 1 - classes[0]
    sens = [np.stack([rng.multinomial(n, [0.5, 0.3, 0.15, 0.05]) for n in counts]),  # slot 3: NULL
            np.stack([rng.multinomial(n, [0.2, 0.2, 0.6]) for n in counts])]
    kwargs = dict(k=3, cost=cost, seed=seed, sensitive=sens, models=models)
    fast = anonymize(codes, classes, counts, [4, 4, 4], **kwargs)
    ref = anonymize(codes, classes, counts, [4, 4, 4], reference=True, **kwargs)
    assert (fast.loop, ref.loop) == ("compiled", "reference")
    assert (fast.final_codes == ref.final_codes).all() and np.array_equal(fast.gammas, ref.gammas)
    assert (fast.solo_suppressions, fast.cross_class_suppressions) == (ref.solo_suppressions,
                                                                       ref.cross_class_suppressions)
    patterns, inverse = np.unique(ref.final_codes, axis=0, return_inverse=True)
    for m in models:
        per_class = np.zeros((len(patterns), sens[m.column].shape[1]), np.int64)
        np.add.at(per_class, inverse.reshape(-1), sens[m.column])
        assert (per_class.sum(axis=1) >= 3).all() and m.holds(per_class, sens[m.column].sum(axis=0)).all()


@pytest.mark.parametrize("models", [MODEL_SETS["distinct"], MODEL_SETS["entropy"]], ids=["distinct", "entropy"])
def test_loops_agree_where_many_merges_must_search_for_progress(models):
    """Six QIs, ~400 tuples of 1-3 rows and a skewed sensitive column: most cheapest merges leave a class
    below l, so the progress search (and its per-mask cache in _core.c, 2^6 masks) runs thousands of times."""
    rng = np.random.default_rng(5)
    codes = np.unique(rng.integers(-1, 3, size=(500, 6)), axis=0)
    counts = rng.integers(1, 4, size=len(codes))
    classes = rng.integers(0, 2, size=len(codes))
    sens = [np.stack([rng.multinomial(n, [0.7, 0.15, 0.1, 0.05]) for n in counts])]
    kwargs = dict(k=4, cost="mar", seed=1, sensitive=sens, models=models)
    fast = anonymize(codes, classes, counts, [3] * 6, **kwargs)
    ref = anonymize(codes, classes, counts, [3] * 6, reference=True, **kwargs)
    assert fast.iterations > 200 and (fast.final_codes == ref.final_codes).all()
    assert np.array_equal(fast.gammas, ref.gammas)


def test_loops_agree_with_more_than_64_quasi_identifiers():
    """The compiled progress test keys its cache by a 64-bit mask of kept attributes: past 64 QIs it
    builds each merged class from the codes instead, and decides as the reference does."""
    rng = np.random.default_rng(3)
    tail = np.unique(rng.integers(-1, 4, size=(60, 3)), axis=0)  # only QIs 63-65 vary: merged classes recur
    codes = np.column_stack([np.full((len(tail), 63), -1), tail])
    counts = rng.integers(1, 3, size=len(codes))
    classes = rng.integers(0, 2, size=len(codes))
    sens = [np.stack([rng.multinomial(n, [0.8, 0.15, 0.05]) for n in counts])]
    for seed in range(4):
        kwargs = dict(k=3, cost="mar", seed=seed, sensitive=sens, models=[Model("s", "l_diversity", 2)])
        fast = anonymize(codes, classes, counts, [4] * 66, **kwargs)
        ref = anonymize(codes, classes, counts, [4] * 66, reference=True, **kwargs)
        assert fast.iterations > 5 and (fast.final_codes == ref.final_codes).all()


def test_without_models_the_loop_is_unchanged():
    rng = np.random.default_rng(0)
    codes = np.unique(rng.integers(-1, 4, size=(60, 3)), axis=0)
    counts = rng.integers(1, 4, size=len(codes))
    plain = [anonymize(codes, np.zeros(len(codes), int), counts, [4, 4, 4], k=3, cost="mar", reference=ref)
             for ref in (False, True)]
    empty = anonymize(codes, np.zeros(len(codes), int), counts, [4, 4, 4], k=3, cost="mar", sensitive=[], models=[])
    assert plain[0].loop == "compiled" and all((r.final_codes == empty.final_codes).all() for r in plain)


def test_kernel_refuses_model_buffers_that_do_not_fit():
    from .test_kanon_algorithm import kernel_arguments

    a = kernel_arguments()
    n_tuples = a["codes"].shape[0]
    bad = Layout(np.zeros((n_tuples, 2), np.int64), np.array([0]), np.array([1]), np.array([2]), np.array([2.0]),
                 np.array([1.0]), np.zeros(2), np.zeros(100))
    with pytest.raises(ValueError, match="a model's slots lie outside the histograms"):
        fast.kernel(**{**a, "models": bad})
    n_attrs = a["codes"].shape[1]
    positional = [a["codes"], a["classes"], a["counts"], a["voff"], a["attr_counts"], a["phat"], a["log_phat"],
                  a["class_prior"], a["log_table"], a["a_base"], a["v_base"], a["order"], a["draws"], n_tuples,
                  n_attrs, len(a["class_prior"]), 2, 2, 1.0, a["final"], a["gammas"], None, 1, 0,
                  np.zeros((n_tuples, 0), np.int64), *(np.zeros(1, np.int64) for _ in range(3)),
                  *(np.zeros(1) for _ in range(2)), np.zeros(0), np.zeros(100)]
    with pytest.raises(ValueError, match="models without histogram slots"):
        fast._core.run(*positional)


def test_model_formulas_by_hand():
    h = _hist([{0: 2}, {0: 1, 1: 1}, {1: 2, 0: 1, 2: 1}], 3)
    table = np.array([3, 2, 3])
    assert distance(h[:1], table, False)[0] == pytest.approx(0.625)
    assert distance(h[:1], table, True)[0] == pytest.approx(0.5 * (5 / 8 + 3 / 8))
    assert entropy(h)[1] == pytest.approx(np.log(2))
    # r_1 < c (r_2 + ...): 2 < c x 0; 1 < c x 1; 2 < c x (1 + 1)
    assert list(Model("s", "recursive_cl", 2, c=2).holds(h, table)) == [False, True, True]
    assert list(Model("s", "recursive_cl", 2, c=1).holds(h, table)) == [False, False, False]
    assert list(Model("s", "l_diversity", 2).holds(h, table)) == [False, True, True]


@pytest.mark.parametrize("text, expected", [
    ("a=3,2", [("a", 3.0, 2.0)]),
    ("a=3,2, b=1.5,4", [("a", 3.0, 2.0), ("b", 1.5, 4.0)]),
    ({"a": [2, 3]}, [("a", 2.0, 3.0)]),
    ({"a": "2,3"}, [("a", 2.0, 3.0)]),
])
def test_recursive_option_text(text, expected):
    assert [(m.name, m.c, m.level) for m in parse(text, "recursive_cl")] == expected


# ---- a release's kanon step -----------------------------------------------------------------------------------

@pytest.mark.usefixtures("noshow")
def test_release_kanon_step_enforces_l_diversity_on_the_noshow_shape(engine, tmp_path):
    """On main, kanon --k 5 left classes sharing one Hipertension value; with the step's l_diversity every
    published class holds both values, which the release's l gate re-checks."""
    spec = _spec(tmp_path, protect=None, kanon="l_diversity = { Hipertension = 2 }",
                 gates="k = 5\nl_diversity = { Hipertension = 2 }")
    report = anonsql.release_run(spec, engine)
    assert report.ok and report.published == ["noshow_k5"]
    assert "gate: 2-diversity of Hipertension in noshow_k5" in {c.name for c in report.checks}
    per_class = engine.fetch_all('SELECT COUNT(DISTINCT "Hipertension"), COUNT(*) FROM noshow_k5 '
                                 'GROUP BY "Gender", "Age", "Neighbourhood"')
    assert per_class and all(values == 2 and rows >= 5 for values, rows in per_class)


@pytest.mark.usefixtures("noshow")
def test_release_kanon_step_refuses_an_impossible_model_in_one_line(engine, tmp_path):
    before = _tables(engine)
    # a release's step errors start file:line: (the step's [[steps]] entry), then the job's own line
    with pytest.raises(AnonsqlError, match=r"^\S*noshow\.toml:\d+: --l-diversity Hipertension=3 cannot be met: the "
                                           r"whole table holds only 2 distinct Hipertension value\(s\)"):
        anonsql.release_run(_spec(tmp_path, protect=None, kanon="l_diversity = { Hipertension = 3 }"), engine)
    assert _tables(engine) == before


@pytest.mark.usefixtures("noshow")
def test_release_run_refuses_an_impossible_model_on_one_stderr_line(db, engine, tmp_path, capsys):
    """The same refusal from `anonsql release run`: exit 2, one line, every table as it was, no artefact."""
    before = _tables(engine)
    spec = _spec(tmp_path, protect=None, kanon="l_diversity = { Hipertension = 3 }")
    files = sorted(tmp_path.iterdir())
    code = main(["release", "run", str(spec), "--db", db, "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--l-diversity Hipertension=3 cannot be met" in err, err
    assert _tables(engine) == before and sorted(tmp_path.iterdir()) == files
