"""Progress bars on a terminal (issue 36): a long loop's counts drawn by click's progress bar on
stderr when it is a TTY, the loop's lines when it is not, nothing with --quiet."""

import io
import re
import sys

import pytest

from anonsql.cli import main
from anonsql.cli.options import _Progress

from .fixtures_hintoglu import SYMPTOMS, TABLE_1_2


class FakeTTY(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def tty(monkeypatch):
    """Set the fake terminal as stderr (call it in the test: pytest's capture replaces stderr after
    the fixtures ran)."""
    def use() -> FakeTTY:
        stream = FakeTTY()
        monkeypatch.setattr(sys, "stderr", stream)
        return stream
    return use


def protect(db, *extra):
    return main(["protect", "--db", db, "--table", "records", "--key", "id", "--target", "diagnosis", "--rows", "2,4",
                 "--attrs", ",".join(SYMPTOMS), "--method", "dropp", "--out", "pub", "--replace", *extra])


def test_protect_draws_its_cells_as_a_bar_on_a_terminal(db, make_table, tty):
    make_table("records", TABLE_1_2)
    tty = tty()
    assert protect(db) == 0
    text = tty.getvalue()
    assert "protect: cells" in text and "2/2" in text and "[####" in text  # label, count, bar
    assert "cell(s) done" not in text  # the bar stands for the loop's lines


def test_quiet_or_no_terminal_keeps_the_lines(db, make_table, tty, monkeypatch):
    make_table("records", TABLE_1_2)
    tty = tty()
    assert protect(db, "--quiet") == 0
    assert tty.getvalue() == ""
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal: today's stage and loop lines
    assert protect(db) == 0
    text = sys.stderr.getvalue()
    assert "protect: 2/2 cell(s) done" in text  # the last count passes the once-a-second throttle
    assert "protect: cells" not in text and "[" not in text


def test_a_bar_is_redrawn_at_most_every_fifth_of_a_second(tty, monkeypatch):
    """10,000 steps in a second: six redraws at most, not 10,000, with the rate."""
    tty = tty()
    now = [0.0]
    monkeypatch.setattr("anonsql.cli.options.time.monotonic", lambda: now[0])
    say = _Progress()
    for done in range(1, 10_001):
        now[0] += 1e-4  # 1 s in all
        assert say.count("kanon: violating tuples merged", done, 10_000)
    text = tty.getvalue()
    assert text.count("/10000") <= 7 and "10000/10000" in text
    assert re.search(r"\b(9,99\d|10,00\d)/s", text)  # the rate: 10,000 in one second
    say("loop: done")  # a stage line after the bar
    assert tty.getvalue().endswith("loop: done\n")


def test_evaluate_and_kanon_draw_bars(db, tty):
    from anonsql import api

    api.load_dataset(db, "adult-kh", "adult")
    tty = tty()
    qi = "age,workclass,education,marital_status,occupation,race,sex,native_country"
    assert main(["kanon", "--db", db, "--table", "adult", "--qi", qi, "--class", "income", "--k", "10",
                 "--out", "adult_k10"]) == 0
    assert "kanon: violating tuples merged" in tty.getvalue() and "iteration" not in tty.getvalue()
    assert main(["evaluate", "--db", db, "--original", "adult", "--anonymized", "adult_k10", "--qi", qi,
                 "--class", "income", "--folds", "3", "--classifiers", "tree"]) == 0
    assert "evaluate: tree folds" in tty.getvalue() and "3/3" in tty.getvalue()
