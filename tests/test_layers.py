"""The layers of the code, read from its source (ast): engine differences live in anonsql/engine/,
modules import each other without circles, and the algorithm modules (arrays in, decisions out)
never reach the SQL layer, an engine or the catalog (docs/architecture.md, "One data path")."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "anonsql"

#: The names engines give their SQL dialect (Engine.dialect).
DIALECTS = frozenset({"duckdb", "postgres", "spark"})

#: Pure algorithm modules: arrays and dataclasses in, decisions out; no connection, no SQL.
ALGORITHMS = (
    "anonsql.ordering",
    "anonsql.kanon.algorithm", "anonsql.kanon.model", "anonsql.kanon.reference", "anonsql.kanon.fast",
    "anonsql.features.greedy", "anonsql.features.containment", "anonsql.features.maximal",
    "anonsql.protect.id3", "anonsql.protect.naive_bayes", "anonsql.protect.deletion", "anonsql.protect.enhanced",
    "anonsql.protect.generalization", "anonsql.protect.metrics", "anonsql.protect.partial_counts",
    "anonsql.protect.rows", "anonsql.protect.suppress",
    "anonsql.nbc.est", "anonsql.nbc.transform", "anonsql.nbc.views", "anonsql.nbc.breach", "anonsql.nbc.equivalence",
    "anonsql.evaluate.model", "anonsql.evaluate.nb", "anonsql.evaluate.tree",
    "anonsql.tables.attack", "anonsql.tables.hypercube", "anonsql.tables.linear", "anonsql.tables.sparse",
    "anonsql.tables.suppress", "anonsql.tables.cells",
    "anonsql.taxonomy.model",
    "anonsql.solver", "anonsql.attack.refine",
)
#: What an algorithm module may not import, directly or through another module.
SQL_SIDE = ("anonsql.sql", "anonsql.engine", "anonsql.catalog")

#: The method packages: each a room of its own, which imports no other (shared code sits below them,
#: as anonsql.taxonomy does for protect and tables).
METHODS = ("kanon", "nbc", "features", "protect", "tables", "evaluate")
#: The one method reaching into another, each edge (importer, imported) with why; the test fails when
#: one is gone, so the list cannot go stale. (evaluate and protect share nothing: their classifiers
#: differ by paper, evaluate's smoothed naive Bayes and CART (Kameya & Hayashi), protect's exact,
#: unsmoothed naive Bayes and ID3 as Hintoglu's adversaries.)
ALLOWED_METHOD_IMPORTS = {
    # protect --k repairs the classes its hidden cells broke by running kanon's algorithm itself
    # (Kameya & Hayashi's bottom-up suppression on a count table: arrays in, decisions out): reuse
    # of the method, not a copy of it.
    ("anonsql.protect.keep_k", "anonsql.kanon"),
}

#: Calls whose string arguments name modules imported later (anonsql.lazy, importlib).
LAZY_IMPORTS = frozenset({"LazyModule", "exports", "import_module"})


# -- the import graph ------------------------------------------------------------------------------

def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its __init__.py)."""
    found = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, mods: Mapping[str, Path]) -> set[str]:
    """The package's modules that module `name` imports: at its top, inside functions, for type
    checking only, and by name for later (LazyModule("anonsql.x"), exports(__name__, (".job",)));
    `from p import x` imports p.x when that is a module, else p."""
    path = mods[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def absolute(module: str | None, level: int) -> str:
        if not level:
            return module or ""
        base = package.split(".")[: len(package.split(".")) - (level - 1)]
        return ".".join(base + ([module] if module else []))

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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
    """Whether package.name is a compiled extension module (anonsql.kanon._core): not a source module."""
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


def reached(edges: Mapping[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for w in edges.get(todo.pop(), ()):
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


# -- the rules -------------------------------------------------------------------------------------

def test_no_import_circles():
    """Not one: a type-only import counts too (it is still a layer crossed)."""
    assert circles(graph()) == []


def method_of(module: str) -> str | None:
    """The method package a module belongs to (anonsql.protect.stats -> protect), else None."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "anonsql" and parts[1] in METHODS else None


def crossings(edges: Mapping[str, set[str]]) -> set[tuple[str, str]]:
    """The imports from one method package into another."""
    return {(a, b) for a, bs in edges.items() for b in bs if method_of(a) and method_of(b) not in (None, method_of(a))}


def test_no_method_package_imports_another():
    assert crossings(graph()) == ALLOWED_METHOD_IMPORTS
    made_up = {"anonsql.tables.verify": {"anonsql.protect.stats", "anonsql.tables.stats", "anonsql.sql"},
               "anonsql.taxonomy.stats": {"anonsql.sql"}}
    assert crossings(made_up) == {("anonsql.tables.verify", "anonsql.protect.stats")}


def test_taxonomies_sit_below_the_methods_that_use_them():
    """anonsql.taxonomy serves protect (-g methods) and tables (--hierarchy) and reaches no method."""
    edges = graph()
    rooms = {m for m in edges if m == "anonsql.taxonomy" or m.startswith("anonsql.taxonomy.")}
    assert {method_of(a) for a, bs in edges.items() if bs & rooms} >= {"protect", "tables"}
    assert sorted(m for r in rooms for m in reached(edges, r) if method_of(m)) == []


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


def test_algorithm_modules_reach_no_sql_engine_or_catalog():
    edges = graph()
    assert set(ALGORITHMS) <= set(edges), sorted(set(ALGORITHMS) - set(edges))
    bad = {a: sorted(m for m in reached(edges, a) if m.startswith(SQL_SIDE)) for a in ALGORITHMS}
    assert {a: m for a, m in bad.items() if m} == {}


def test_the_graph_sees_every_kind_of_import():
    """What the rules above rely on: imports at the top, in a function, for type checking, by
    name for later, and a circle made of them is found."""
    edges = graph()
    assert "anonsql.sql" in edges["anonsql.kanon.job"]  # from .. import sql
    assert "anonsql.engine.dialects" in edges["anonsql.sql.binding"]  # inside a function
    assert "anonsql.kanon.job" in edges["anonsql.api"]  # LazyModule("anonsql.kanon.job")
    assert "anonsql.protect.job" in edges["anonsql.protect"]  # exports(__name__, (".job", ...))
    assert "anonsql.engine.base" in edges["anonsql.engine"]
    assert not any(m.endswith("_core") for m in edges["anonsql.kanon.fast"])  # the compiled kernel is no module
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def dialect_branches(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of each comparison that asks which engine runs: a dialect name compared
    (==, !=, in, not in) with anything, or anything called *dialect compared; and a dict keyed by
    dialect names (a lookup by dialect)."""
    def names_dialect(node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in DIALECTS
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(names_dialect(e) for e in node.elts)
        return ast.unparse(node).rsplit(".", 1)[-1].endswith("dialect")

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(names_dialect(e) for e in [node.left, *node.comparators]):
            yield node.lineno, ast.unparse(node)
        elif isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) and k.value in DIALECTS
                                                for k in node.keys):
            yield node.lineno, ast.unparse(node)


def test_no_dialect_branches_outside_the_engine_layer():
    """An engine difference is an engine attribute or method (anonsql/engine/base.py), never a
    branch on the dialect's name in method code."""
    found = [f"{path.relative_to(PACKAGE.parent)}:{line}: {text}"
             for path in sorted(PACKAGE.rglob("*.py")) if "engine" not in path.relative_to(PACKAGE).parts[:1]
             for line, text in dialect_branches(path.read_text(encoding="utf-8"))]
    assert found == []


@pytest.mark.parametrize("source", [
    'if engine.dialect == "spark": pass',
    'x = 1 if dialect != "postgres" else 2',
    'ok = sql_dialect in ("duckdb", "postgres")',
    'ok = "spark" == d',
    'ok = self.dialect not in ENGINES',
    'schema = {"duckdb": "temp", "postgres": "pg_temp"}.get(d)',
])
def test_a_dialect_branch_is_found(source):
    assert len(list(dialect_branches(source))) == 1


def test_engine_traits_are_not_dialect_branches():
    assert list(dialect_branches('if engine.supports_update and not engine.matches_by_value: pass\n'
                                 'query = sql.render("common/x", engine.dialect)')) == []
