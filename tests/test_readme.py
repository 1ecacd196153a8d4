"""The README runs as written (issue 14 finding 9): every ```sh and ```python block is executed
in a temporary folder, so `demo.duckdb` is a fresh database there; repository paths
(fixtures/, benchmarks/, docs/) point into the checkout. `anonsql` commands run in-process and
must exit 0 (1 is allowed for the check-style commands, whose 1 means "does not hold"). The
quick start's `pip install`, `ruff`, `mypy` and `pytest` are the suite itself and are not re-run."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from anonsql.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
SUITE_ITSELF = {"pip", "ruff", "mypy", "python"}
#: Commands whose exit 1 is a verdict (a check or a gate failed), not an error.
CHECK_STYLE = (["check"], ["nbc", "check"], ["nbc", "verify"], ["risk"], ["attack"])


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, flags=re.S | re.M)


def commands(block: str) -> list[list[str]]:
    """The commands of a shell block: continuation lines joined, comments dropped, `&&` split."""
    out: list[list[str]] = []
    for line in block.replace("\\\n", " ").splitlines():
        current: list[str] = []
        for word in [*shlex.split(line, comments=True), "&&"]:
            if word != "&&":
                current.append(word)
            elif current:
                out.append(current)
                current = []
    return out


def in_repo(word: str) -> str:
    """A path into the checkout: `$repo/...` in the README's tour (which works in a temporary
    folder), a bare `fixtures/...` etc. in the docs' examples and the epilogs."""
    word = word.removeprefix("$repo/")
    return str(ROOT / word) if word.split("/")[0] in ("fixtures", "benchmarks", "docs") else word


# The tour's first line, `repo=$PWD && cd "$(mktemp -d)"`: the test already runs in a temporary folder.
SHELL_SETUP = (["repo=$PWD"], ["cd", "$(mktemp -d)"])


def test_readme_has_the_blocks_it_promises():
    assert len(blocks("sh")) == 2 and len(blocks("python")) == 1
    assert sum(len(commands(b)) for b in blocks("sh")) > 15


def test_the_tour_works_in_a_temporary_folder():
    """The tour leaves nothing in the checkout (issue 36): it moves to a temporary folder first,
    and each checkout path it reads is spelled `$repo/...`, so it still resolves there."""
    tour = commands(blocks("sh")[1])
    assert tour[:2] == list(SHELL_SETUP)
    for argv in tour[2:]:
        for word in argv:
            assert word.split("/")[0] not in ("fixtures", "benchmarks", "docs", "examples"), word


def test_readme_names_the_requirements_and_real_extras():
    import tomllib
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    section = README.split("## Requirements")[1].split("\n## ")[0]
    assert "Python ≥ 3.11" in README and "C compiler" in README and "pip install 'anonsql[all]'" in README
    assert all(f"`{name}`" in section for name in set(extras) - {"all", "test"})
    (everything,) = extras["all"]
    assert sorted(everything.split("[")[1].rstrip("]").split(",")) == sorted(set(extras) - {"all", "test"})


@pytest.mark.slow
def test_shell_blocks_run_as_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    ran = 0
    for block in blocks("sh"):
        for argv in commands(block):
            if argv[0] in SUITE_ITSELF or argv in SHELL_SETUP:
                continue
            assert argv[0] == "anonsql", argv
            args = [in_repo(w) for w in argv[1:]]
            code = main(args)
            err = capsys.readouterr().err
            allowed = {0, 1} if any(args[:len(c)] == c for c in CHECK_STYLE) else {0}
            assert code in allowed, f"`{shlex.join(argv)}` exited {code}: {err.strip()[-300:]}"
            ran += 1
    assert ran > 15


def test_python_block_runs_as_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (code,) = blocks("python")
    assert "postgresql://" not in code  # the API example needs no server
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "False 1642" and out[1].startswith("True ")
    assert (tmp_path / "demo.duckdb").exists()


@pytest.mark.parametrize("text, argv", [
    ("anonsql check --db d --qi a,b  # exit 0\n", [["anonsql", "check", "--db", "d", "--qi", "a,b"]]),
    ("pip install -e . && anonsql x \\\n  --na '?'\n", [["pip", "install", "-e", "."], ["anonsql", "x", "--na", "?"]]),
])
def test_command_splitting(text, argv):
    assert commands(text) == argv


def test_ci_runs_the_readmes_test_command_verbatim():
    """.ci/run runs the README's test command as written there: the line that installs the test
    extras, from `pip install` to the whole pytest run, appears in the script unchanged."""
    (command,) = [line for block in blocks("sh") for line in block.splitlines()
                  if line.startswith('pip install -e ".[test]"')]
    assert "ruff check anonsql tests benchmarks" in command and command.endswith("python -m pytest -q")
    script = (ROOT / ".ci" / "run").read_text().splitlines()
    assert command in script
