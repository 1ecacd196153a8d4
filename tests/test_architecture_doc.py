"""docs/architecture.md describes the tree as it is: its layout block names every package and
top-level module of anonsql/, and names none that does not exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _layout() -> str:
    """The fenced block under '## Layout' (the tree drawing)."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text[text.index("## Layout"):]
    return section[section.index("```") + 3:section.index("```", section.index("```") + 3)]


def _package_entries() -> set[str]:
    """anonsql's top-level modules (`name.py`) and subpackages (`name/`), as the layout spells them."""
    pkg = ROOT / "anonsql"
    modules = {p.name for p in pkg.glob("*.py") if p.name != "__init__.py"}
    packages = {p.name + "/" for p in pkg.iterdir() if (p / "__init__.py").is_file() and not p.name.startswith("_")}
    return modules | packages


def _named_in(block: str) -> set[str]:
    """Every `name.py` and `name/` the block names at the package's top level (indented two spaces
    under `anonsql/`), including the one line that lists several method packages."""
    inside = block[block.index("anonsql/"):block.index("\nsql/")] if "\nsql/" in block else block
    named = set()
    for line in inside.splitlines()[1:]:
        entry = re.match(r"^  ((?:[a-z_]+(?:\.py|/))(?: [a-z_]+(?:\.py|/))*)(?:\s{2,}|$)", line)
        if entry:  # a top-level entry (deeper lines are indented more): its first column, one name or several
            named |= set(entry.group(1).split())
    return named


def test_layout_names_every_package_and_module():
    missing = sorted(_package_entries() - _named_in(_layout()))
    assert not missing, f"docs/architecture.md's layout does not describe: {', '.join(missing)}"


def test_layout_names_nothing_that_is_gone():
    gone = sorted(_named_in(_layout()) - _package_entries())
    assert not gone, f"docs/architecture.md's layout describes what no longer exists: {', '.join(gone)}"
