"""The layers of the code, read from its source (ast): modules import each other without circles.

An import counts wherever it runs: at a module's top, inside a function, and by name for later
(`exports(__name__, (".job",))`, `importlib.import_module`); only an import under
`if TYPE_CHECKING:` does not, since it never runs. The release sits on top of the jobs: it calls
their entries, and neither anonsql.api nor any job imports it back (issue 31)."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "anonsql"

#: Circles known today, each by the one import (importer, imported) that closes it, for the lead to
#: empty as they are fixed: evaluate/job.py reads CLASSIFIERS from its package face, which exports
#: job.py's names. (protect/request.py <-> protect/stats.py is one only under TYPE_CHECKING.) The
#: test fails when one of them is no longer imported, so the set cannot outlive its circle.
KNOWN_CIRCLE_IMPORTS: set[tuple[str, str]] = {
    ("anonsql.evaluate.job", "anonsql.evaluate"),
}

#: Calls whose string arguments name modules imported later (anonsql.lazy, importlib).
LAZY_IMPORTS = frozenset({"exports", "import_module"})


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its __init__.py)."""
    found = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _type_checking(node: ast.AST) -> bool:
    """`if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`): its body never runs."""
    return isinstance(node, ast.If) and ast.unparse(node.test).rsplit(".", 1)[-1] == "TYPE_CHECKING"


def _nodes(tree: ast.AST):
    """Every node of the tree but those under `if TYPE_CHECKING:` (its `else:` runs, so it counts)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if _type_checking(node):
            assert isinstance(node, ast.If)
            todo.extend(node.orelse)
        else:
            todo.extend(ast.iter_child_nodes(node))


def imports(name: str, mods: Mapping[str, Path]) -> set[str]:
    """The package's modules that module `name` imports when it runs: at its top, inside
    functions, and by name for later; `from p import x` imports p.x when that is a module, else p."""
    path = mods[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def absolute(module: str | None, level: int) -> str:
        if not level:
            return module or ""
        base = package.split(".")[: len(package.split(".")) - (level - 1)]
        return ".".join(base + ([module] if module else []))

    for node in _nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = absolute(node.module, node.level)
            found.update(f"{source}.{a.name}" if f"{source}.{a.name}" in mods or _extension(source, a.name)
                         else source for a in node.names)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in LAZY_IMPORTS:
            for arg in node.args:
                for item in arg.elts if isinstance(arg, (ast.Tuple, ast.List)) else [arg]:
                    if isinstance(item, ast.Constant) and isinstance(item.value, str):
                        found.add(package + item.value if item.value.startswith(".") else item.value)
    return {m for m in found if m in mods and m != name}


def _extension(package: str, name: str) -> bool:
    """Whether package.name is a compiled extension module (anonsql.kanon._core): not the package."""
    folder = PACKAGE.parent.joinpath(*package.split("."))
    return any(folder.glob(f"{name}.*so")) or any(folder.glob(f"{name}.*pyd"))


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports(name, mods) for name in mods}


def circles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles_but_the_known_ones():
    edges = graph()
    gone = {(a, b) for a, b in KNOWN_CIRCLE_IMPORTS if b not in edges.get(a, ())}
    assert not gone, f"no longer imported: remove from KNOWN_CIRCLE_IMPORTS: {sorted(gone)}"
    rest = {a: {b for b in bs if (a, b) not in KNOWN_CIRCLE_IMPORTS} for a, bs in edges.items()}
    assert circles(rest) == []


def test_the_release_sits_on_top_of_the_jobs():
    """No module outside the release imports it but the package face (anonsql/__init__.py, which
    exports release_plan/run/verify) and the CLI's release command; the release calls the jobs'
    entries, never anonsql.api."""
    edges = graph()
    release = {m for m in edges if m == "anonsql.release" or m.startswith("anonsql.release.")}
    importers = {a for a, bs in edges.items() if a not in release and bs & release}
    assert importers == {"anonsql", "anonsql.cli.release"}
    assert not any("anonsql.api" in edges[m] for m in release)
    assert {"anonsql.kanon.entry", "anonsql.protect.entry", "anonsql.tables.entry"} <= edges["anonsql.release.steps"]


def test_the_graph_sees_every_kind_of_import_but_type_checking_ones():
    """What the rules above rely on: imports at the top, in a function, by name for later count,
    those under `if TYPE_CHECKING:` do not, and a circle made of them is found."""
    edges = graph()
    assert "anonsql.sql" in edges["anonsql.kanon.job"]  # from .. import sql
    assert "anonsql.release.entry" in edges["anonsql"]  # inside __getattr__
    assert "anonsql.kanon.entry" in edges["anonsql.api"]  # inside k_anonymize
    assert "anonsql.protect.job" in edges["anonsql.protect"]  # exports(__name__, ('.job', ...))
    assert "anonsql.release.job" not in edges["anonsql.release.html"]  # only under TYPE_CHECKING
    assert "anonsql.kanon" not in edges["anonsql.kanon.fast"]  # from . import _core: the compiled kernel
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a\nelse:\n    import b\n" \
             "def f():\n    import c\n"
    seen = {n.names[0].name for n in _nodes(ast.parse(source)) if isinstance(n, ast.Import)}
    assert seen == {"b", "c"}
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
