"""Every command example in docs/*.md and in the commands' `--help` epilogs runs as written
(issue 36), against the data the doc itself prepares, in a temporary folder: nothing is left in
the checkout. README.md has its own test (tests/test_readme.py), whose splitting this reuses.

A doc's fenced blocks run in their order: a plain or ```sh block whose first command starts with
`anonsql ` runs command by command in-process, a ```python block is executed. A ```text block is
an illustration that needs a server the suite does not start (a postgresql:// host, a Spark
cluster or Connect server): the test checks it names one; so is cleanup's epilog, a Spark
catalog. The epilogs run in the order of a steward's day (`DAY`), each example after what the
earlier ones wrote (the load and dataset examples first, then the release doc's preparation), in
a temporary folder holding a copy of examples/ (a release writes its artefacts beside its spec),
so a rename of a table in one example and not in the next fails here."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import click
import pytest

from anonsql.cli import cli, main
from tests.test_readme import CHECK_STYLE, ROOT, commands, in_repo

DOCS = sorted((ROOT / "docs").glob("*.md"))
SERVERS = ("postgresql://", "spark:", "spark://", "sc://")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", flags=re.S | re.M)


def doc_steps(text: str) -> list[tuple[str, str]]:
    """The runnable blocks of a doc in order: ("sh", block) or ("python", block)."""
    steps = []
    for language, block in FENCE.findall(text):
        if language == "python":
            steps.append(("python", block))
        elif language in ("", "sh") and block.lstrip().startswith("anonsql "):
            steps.append(("sh", block))
    return steps


def run(argv: list[str], capsys) -> None:
    args = [in_repo(w) for w in argv[1:]]
    code = main(args)
    err = capsys.readouterr().err
    allowed = {0, 1} if any(args[:len(c)] == c for c in CHECK_STYLE) else {0}
    assert code in allowed, f"`{shlex.join(argv)}` exited {code}: {err.strip()[-300:]}"


def checkout() -> set[Path]:
    """Every file in the checkout but git's own: an example must not write there."""
    return {p for p in ROOT.rglob("*") if ".git" not in p.parts and "__pycache__" not in p.parts}


def in_a_copy(tmp_path: Path, monkeypatch) -> None:
    """Work in tmp_path, holding a copy of examples/: a release writes its artefacts beside its spec."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)


def run_doc(path: Path, capsys) -> int:
    ran = 0
    for language, block in doc_steps(path.read_text()):
        if language == "python":
            exec(compile(block, str(path), "exec"), {})
            ran += 1
            continue
        for argv in commands(block):
            assert argv[0] == "anonsql", f"{path.name}: {shlex.join(argv)}"
            run(argv, capsys)
            ran += 1
    return ran


@pytest.mark.slow
@pytest.mark.parametrize("doc", [d for d in DOCS if d.name != "cli.md"], ids=lambda d: d.name)
def test_doc_examples_run_as_written(doc, tmp_path, monkeypatch, capsys):
    in_a_copy(tmp_path, monkeypatch)
    before = checkout()
    run_doc(doc, capsys)
    assert checkout() == before


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_illustrations_name_a_server(doc):
    """A ```text block of anonsql commands is not run: it must need a server the suite lacks."""
    for language, block in FENCE.findall(doc.read_text()):
        if language in ("text", "console") and "anonsql " in block:
            for line in block.splitlines():
                if line.lstrip("$ ").startswith("anonsql "):
                    assert any(s in line for s in SERVERS), f"{doc.name}: runnable, so not text: {line}"


def test_the_docs_hold_examples_to_run():
    assert run_doc.__name__ and sum(len(doc_steps(d.read_text())) for d in DOCS) >= 4
    assert [lang for lang, _ in doc_steps((ROOT / "docs" / "release.md").read_text())][:2] == ["sh", "python"]


def epilogs() -> dict[str, list[list[str]]]:
    """Each command's path -> the `anonsql ...` examples its epilog gives."""
    found: dict[str, list[list[str]]] = {}

    def walk(command: click.Command, path: str) -> None:
        lines = (command.epilog or "").replace("\b", "").splitlines()
        examples = [re.sub(r"^\s*(examples?:|EST:)?\s*", "", line) for line in lines]
        found[path] = [shlex.split(e) for e in examples if e.startswith("anonsql ")]
        if isinstance(command, click.Group):
            for name in command.list_commands(click.Context(command)):
                sub = command.get_command(click.Context(command), name)
                if sub is not None:
                    walk(sub, f"{path} {name}")

    walk(cli, "anonsql")
    return found


# A steward's day: the order the epilogs' examples run in, each reading what earlier ones wrote.
DAY = ["load", "dataset", "profile", "check", "kanon", "evaluate", "show", "sql", "bin", "binarize", "features",
       "ac", "nbc views", "nbc check", "nbc publish", "nbc verify", "nbc breach", "protect", "taxonomy load",
       "taxonomy show", "hierarchy show", "tables", "tables audit", "tables ptable", "risk", "attack linkage",
       "attack difference", "attack refine",
       "cleanup", "release", "release plan", "release run",
       "release verify", "dbt", "dbt export"]


def test_every_command_with_an_example_is_in_the_day():
    examples = epilogs()
    assert {path.removeprefix("anonsql ") for path, found in examples.items() if found} == set(DAY)
    assert all(argv[0] == "anonsql" for found in examples.values() for argv in found)


@pytest.mark.slow
def test_help_examples_run_as_written(tmp_path, monkeypatch, capsys):
    in_a_copy(tmp_path, monkeypatch)
    examples = epilogs()
    before = checkout()
    ran = 0
    for name in DAY:
        if name == "release":  # the release examples read what docs/release.md prepares
            run_doc(ROOT / "docs" / "release.md", capsys)
        seen = {shlex.join(a) for n in DAY[:DAY.index(name)] for a in examples[f"anonsql {n}"]}
        for argv in examples[f"anonsql {name}"]:
            if any(s in word for word in argv for s in SERVERS):  # cleanup's Spark catalog: not started here
                assert name == "cleanup", argv
            elif shlex.join(argv) not in seen:  # a group repeats its subcommands' examples
                run(argv, capsys)
                ran += 1
    assert ran >= len(DAY) - 4
    assert checkout() == before


JARGON = ("k-anonym", "AC(", "rho-safe", "NBC", "k-AC", "suppression", "Corollary", "Lemma", "Hintoglu", "Zhang",
          "Kameya", "Mozafari")


@pytest.mark.parametrize("name", ["kanon", "nbc", "features", "ac", "protect", "tables"])
def test_each_method_says_first_in_plain_words_what_it_protects(name):
    """A method's first help line (its row in docs/cli.md) says what it does for a steward in
    plain words; the paper's notation and name come after, in parentheses (issue 36)."""
    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    first = " ".join((command.help or "").split("\n\n")[0].split())
    plain, _, named = first.partition("(")
    assert plain and not any(word in plain for word in JARGON), first
    assert any(word in named for word in JARGON), first


def test_each_method_summary_opens_with_what_it_protects_against(tmp_path, capsys):
    """A method's summary opens with one plain sentence on what it protects against, the paper's
    notation after (issue 36); a real kanon run shows it as its first line."""
    from anonsql.features.job import FeaturesReport
    from anonsql.kanon.job import KanonReport
    from anonsql.nbc.job import PublishReport
    from anonsql.protect.job import ProtectReport
    from anonsql.tables.job import TablesReport

    for report in (KanonReport, ProtectReport, PublishReport, FeaturesReport, TablesReport):
        plain, _, named = report.PROTECTS.partition("(")
        assert plain and not any(word in plain for word in JARGON), report.PROTECTS
        assert any(word in named for word in JARGON), report.PROTECTS
    db = str(tmp_path / "d.duckdb")
    assert main(["dataset", "adult-kh", "--db", db, "--table", "a", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["kanon", "--db", db, "--table", "a", "--qi", "age,sex", "--k", "5", "--out", "a5", "--quiet"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "protects against: " + KanonReport.PROTECTS
