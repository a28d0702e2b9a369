"""The package's modules import each other without a cycle: every python/forge/*.py's imports, those inside
functions included, read with ast, form an acyclic graph (a module that needs another's names at call time
imports it at the top, and the other does not import it back)."""

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "forge"
# The compiled extension (python/CMakeLists.txt's nanobind module): a module of the package with no .py file.
COMPILED = {"forge._native"}


def _module_name(path):
    return "forge" if path.name == "__init__.py" else "forge." + path.stem


def _imports(path, modules):
    """The package's modules that the file imports (anywhere in it), by name."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = "forge"  # every file lives in forge/ itself, so a relative import's base is the package
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level > 1:
                continue  # above the package
            base = package if node.level == 1 else ""
            base = ".".join(part for part in (base, node.module or "") if part)
            # "from . import _arrays" loads the module _arrays; "from ._algebra import compose" reads a name of
            # _algebra; "from forge import x" (x no module) reads a name of the package's __init__.py
            names = []
            for alias in node.names:
                sub = base + "." + alias.name
                names.append(sub if sub in modules or sub in COMPILED else base)
        else:
            continue
        for name in names:
            # "import forge.io" loads forge.io (and forge, whose loading is under way when a module of it runs);
            # "import forge" or "from forge import x" reads the package's __init__.py
            parts = name.split(".")
            for i in range(2, len(parts) + 1):
                if ".".join(parts[:i]) in modules:
                    found.add(".".join(parts[:i]))
            if name == package:
                found.add(package)
    return found


def _graph():
    paths = sorted(PACKAGE.glob("*.py"))
    modules = {_module_name(p) for p in paths}
    return {_module_name(p): _imports(p, modules) - {_module_name(p)} for p in paths}


def _cycle(graph):
    """One cycle of the graph as a list of modules (first == last), or None."""
    state = {}  # 1: on the current path, 2: done
    path = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_graph_sees_the_package():
    graph = _graph()
    assert "forge._operator" in graph and "forge._algebra" in graph
    assert "forge._operator" in graph["forge._algebra"]  # the algebra builds on the base class
    assert "forge._algebra" in graph["forge"]


def test_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_modules_import_each_other_without_a_cycle():
    cycle = _cycle(_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)
