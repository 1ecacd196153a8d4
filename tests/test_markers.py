"""The quick loop: tests are marked by the servers their fixtures start (tests/conftest.py), so
`pytest -m "not spark and not browser"` leaves out the JVM and the browser and nothing else."""

from __future__ import annotations


def test_the_postgres_case_of_db_is_marked_postgres_and_the_duckdb_case_is_not(request, db):
    marked = request.node.get_closest_marker("postgres") is not None
    assert marked == db.startswith("postgresql://")
    assert request.node.get_closest_marker("spark") is None and request.node.get_closest_marker("browser") is None


def test_a_test_using_the_spark_url_is_marked_spark(request, spark_url):
    assert request.node.get_closest_marker("spark") is not None
    assert request.node.get_closest_marker("postgres") is None


def test_a_test_using_chromium_is_marked_browser(request, chromium):
    assert request.node.get_closest_marker("browser") is not None


def test_a_test_using_no_server_is_unmarked(request):
    assert not [m.name for m in request.node.iter_markers() if m.name in ("postgres", "spark", "browser", "slow")]
