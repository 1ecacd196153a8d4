"""A wheel built from the checkout carries every module, the SQL files and the bundled data sets."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_contains_sql_and_fixtures(tmp_path):
    source = tmp_path / "src"  # a clean copy: an in-tree build/ would ship whatever an earlier build left there
    shutil.copytree(ROOT, source, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__", "*.so", ".*cache"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(source)],
        check=True, capture_output=True,
    )
    wheel = next(tmp_path.glob("anonsql-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    sql_files = {p.relative_to(ROOT / "sql").as_posix() for p in (ROOT / "sql").glob("*/*.sql")}
    assert sql_files and {f"anonsql/_sql/{n}" for n in sql_files} <= names
    assert not list((ROOT / "sql").glob("*.sql")), "SQL files are filed by job: sql/<job>/<name>.sql"
    assert {"anonsql/_fixtures/adult.csv.gz", "anonsql/_fixtures/car.csv.gz",
            "anonsql/_fixtures/breast_cancer_wisconsin.csv.gz"} <= names
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "anonsql").rglob("*.py")
               if not p.relative_to(ROOT / "anonsql").parts[0].startswith("_")}  # _sql, _fixtures: links
    assert modules and not modules - names, f"not shipped (pyproject's packages): {sorted(modules - names)}"
    assert {"anonsql/cli/app.py", "anonsql/engine/duckdb.py", "anonsql/evaluate/job.py", "anonsql/kanon/job.py",
            "anonsql/nbc/job.py", "anonsql/features/job.py", "anonsql/protect/job.py", "anonsql/data/loading.py",
            "anonsql/tables/job.py", "anonsql/release/job.py", "anonsql/engine/spark.py",
            "anonsql/kanon/_core.c", "anonsql/kanon/fast.py"} <= names
    assert not any("pgserver" in n for n in names), "the throwaway test server is not shipped"
    assert any(n.startswith("anonsql/kanon/_core.") and n.endswith(".so") for n in names)
