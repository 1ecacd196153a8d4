"""Issue 36: the release's per-attribute utility (ARX's utility views): each QI's and sensitive
column's value distribution before and after, as a plot with its numbers beside it, counted in
SQL. The source's counts beside the published ones tell the original values of changed cells,
so the page is private (private/utility.html) and the manifest does not hold them."""

from __future__ import annotations

import json
import re
from collections import Counter
from html import unescape

import pytest

import anonsql
from tests.conftest import table_rows

SPEC = """
[source]
table = "people"
key = "id"
qi = ["zip", "age"]
class = "disease"
sensitive = ["income"]

[[steps]]
kind = "kanon"
k = 3
out = "people_k3"

[gates]
k = 3

[outputs]
dir = "out"
"""


@pytest.fixture
def people(make_table):
    """zip 400 and age 90 are held by one person each: the source counts a page must not show."""
    n = 40
    make_table("people", {"id": list(range(n)),
                          "zip": ["100"] * 20 + ["200"] * 12 + ["300"] * 7 + ["400"],
                          "age": (["20", "30", "40", "50"] * 10)[:n - 1] + ["90"],
                          "disease": ["flu", "cold", "flu", "asthma"] * 10,
                          "income": (["low", "high", "mid", "low"] * 10)[:n - 2] + [None, "rich"]})


def _section(page: str, column: str) -> list[tuple[str, str, str]]:
    """(value, rows before, rows after) of one column's table on the page."""
    part = page[page.index(f'<section class="utility"><h3><code>{column}</code>'):]
    part = part[:part.index("</section>")]
    return [tuple(unescape(re.sub("<[^>]+>", "", c)) for c in re.findall(r"<td>(.*?)</td>", row))
            for row in re.findall(r"<tr>(.*?)</tr>", part) if "<td>" in row]


def _counts(engine, table: str, column: str) -> Counter:
    return Counter(row[0] for row in engine.fetch_all(f'SELECT CAST("{column}" AS VARCHAR) FROM {table}'))


def test_utility_page_shows_each_columns_distribution_before_and_after(engine, people, tmp_path):
    spec = tmp_path / "r.toml"
    spec.write_text(SPEC)
    report = anonsql.release_run(spec, engine)
    assert report.ok
    page = (tmp_path / "out" / "private" / "utility.html").read_text()
    assert "PRIVATE" in page and "people_k3 against people" in page
    for column in ("zip", "age", "income"):
        before, after = _counts(engine, "people", column), _counts(engine, "people_k3", column)
        shown = {v: (b, a) for v, b, a in _section(page, column)}
        label = {None: "⊥ (NULL)"}
        assert shown == {label.get(v, v): (f"{before.get(v, 0):,}", f"{after.get(v, 0):,}")
                         for v in set(before) | set(after)}, column  # every value (fewer than 20): no "other"
    nulls = sum(1 for r in table_rows(engine, "people_k3") if r[1] is None)  # zip, the 2nd column
    assert nulls and f"Suppressed: {nulls:,} cells" in page[page.index("<code>zip</code>"):]
    assert page.count('alt="zip before and after" src="data:image/png;base64,') == 1  # the plot beside the numbers
    # public: the page points to it, and neither it nor the manifest holds a count of the source
    public = (tmp_path / "out" / "report.html").read_text()
    assert "Value distributions before and after" in public and "private/utility.html" in public
    assert 'class="utility"' not in public
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert "utility" not in manifest["figures"] and "private/utility.html" in manifest["artefacts"]


def test_more_values_than_drawn_sum_as_other(engine, make_table, tmp_path):
    """A column of 30 values: the 20 with the most rows drawn, the other 10 one 'other' row on each side."""
    make_table("people", {"id": list(range(90)), "zip": [f"z{i % 30:02d}" for i in range(90)],
                          "age": ["20"] * 90, "disease": ["flu", "cold"] * 45, "income": ["low"] * 90})
    spec = tmp_path / "r.toml"
    spec.write_text(SPEC.replace("k = 3", "k = 1"))
    assert anonsql.release_run(spec, engine).ok
    rows = _section((tmp_path / "out" / "private" / "utility.html").read_text(), "zip")
    assert len(rows) == 21 and rows[-1] == ("other", "30", "30") and all(r[1:] == ("3", "3") for r in rows[:20])
