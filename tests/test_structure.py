"""The package's structure: one package per paper, dependencies pointing one way, no import circles.

The graph is read from the source (every ``import``, at module level or inside a function), so a lazy
import that closes a circle is caught too.
"""

import ast
import functools
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "shifteval"

#: Layers from the bottom up: a module may import its own layer's modules (within its own package) and
#: any layer below, never one above. The paper packages sit side by side and import none of each other.
LAYERS = {
    "data": 0,  # package data (tables, checksums): no code
    "utils": 0,
    "datasets": 1,
    "nets": 1,
    "corruptions": 1,
    "zoo": 2,
    "linfit": 3,
    "selection": 3,
    "matching": 3,
    "mlm": 3,
    "autoeval": 3,
    "replication": 3,  # the replication-world chapter's study: the zoo's accuracy changes on the world
    "yourrep": 4,  # the papers' analyses on a user's folder of predictions, on top of the papers
    "viz": 5,  # figures and tables: they draw and record nothing
    "book": 6,  # results and claims (figures and tables included), the pipeline, provenance, assembly
    "labs": 7,  # the autograded labs: their data from the chapters' parameters, Otter's editions, grading
    "cli": 8,  # the front door: `shifteval ...` dispatches to every layer below
}
PAPERS = ("linfit", "selection", "matching", "mlm", "autoeval")


def _module_name(path: Path) -> str:
    parts = ["shifteval", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in SRC.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in modules else mod for a in node.names]
            for t in targets:
                while t and t not in modules:
                    t = t.rpartition(".")[0]
                if t.startswith("shifteval") and t != name:
                    graph[name].add(t)
    return graph


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_no_import_circles():
    graph = _graph()
    # A package's face (its __init__) importing its own modules is not a circle: drop the edges from a
    # module to the __init__ of a package containing it (Python imports that __init__ first anyway).
    edges = {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in graph.items()}
    state: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(edges[m]):
            if state.get(t) == 1:
                circles.append(stack[stack.index(t) :] + [t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)
    assert not circles, "import circles:\n" + "\n".join(" -> ".join(c) for c in circles)


def test_dependencies_point_down():
    upward = []
    for module, targets in _graph().items():
        top = _top(module)
        if top not in LAYERS:
            continue
        for t in targets:
            other = _top(t)
            if other in LAYERS and other != top and LAYERS[other] >= LAYERS[top]:
                upward.append(f"{module} -> {t}")
    assert not upward, "imports that do not point down:\n" + "\n".join(upward)


@pytest.mark.parametrize("paper", PAPERS)
def test_algorithms_do_not_import_their_chapter_study(paper):
    graph = _graph()
    study = f"shifteval.{paper}.study"
    offenders = [
        m for m, ts in graph.items() if m.startswith(f"shifteval.{paper}.") and m != study and study in ts
    ]
    assert not offenders, f"{study} is the chapter's experiment; algorithms must not import it: {offenders}"


def test_every_package_module_is_known_to_the_layers():
    tops = {_top(m) for m in _graph()} - {""}
    assert tops <= set(LAYERS), f"place these in LAYERS: {sorted(tops - set(LAYERS))}"


def test_no_module_only_re_exports_another():
    """Outside package faces (``__init__``), every module defines something of its own."""
    only_imports = []
    for path in SRC.rglob("*.py"):
        if path.name == "__init__.py":
            continue
        body = [n for n in ast.parse(path.read_text()).body if not isinstance(n, ast.Expr)]
        if body and all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in body):
            only_imports.append(str(path.relative_to(SRC)))
    assert not only_imports, f"modules that only re-export: {only_imports}"


def test_module_names_say_their_concern():
    shaped_by_budget = re.compile(r"_(extra|appendix|facts|tables|misc|more|part\d*)$")
    bad = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if shaped_by_budget.search(p.stem)]
    assert not bad, f"module names that say nothing of their concern: {bad}"


def test_re_exports_only_in_package_faces():
    """A name imported from a sibling module and listed in ``__all__`` or marked re-exported is a face's job."""
    offenders = []
    for path in SRC.rglob("*.py"):
        if path.name == "__init__.py":
            continue
        text = path.read_text()
        if "re-exported" in text or re.search(r"^__all__\s*=", text, re.M):
            offenders.append(str(path.relative_to(SRC)))
    assert not offenders, f"re-exports outside package faces: {offenders}"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_names_crossing_modules(path: Path) -> list[str]:
    """Private (``_name``) names one module takes from another: imported, or read off an imported module."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text())
    modules_bound: set[str] = set()  # local names bound to a shifteval module
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if not source.startswith("shifteval"):
                continue
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"{module}: from {source} import {alias.name} (line {node.lineno})")
                modules_bound.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("shifteval"):
                    modules_bound.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in modules_bound:
                found.append(f"{module}: {ast.unparse(node)} (line {node.lineno})")
    return found


def test_no_private_name_crosses_modules():
    """State that travels between modules travels under a public name (DESIGN.md, Layout)."""
    found = [f for path in sorted(SRC.rglob("*.py")) for f in _private_names_crossing_modules(path)]
    assert not found, "private names taken from another module:\n" + "\n".join(found)


#: A function this long must say in its docstring why its steps cannot be named.
LONGEST_FUNCTION = 100
UNSPLIT = "Not split into steps:"


def test_functions_are_short_or_say_why():
    long = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > LONGEST_FUNCTION and UNSPLIT not in (ast.get_docstring(node) or ""):
                    long.append(f"{path.relative_to(SRC)}::{node.name} ({lines} lines)")
    assert not long, (
        f"functions over {LONGEST_FUNCTION} lines whose docstring does not say '{UNSPLIT} …':\n"
        + "\n".join(long)
    )
