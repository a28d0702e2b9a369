"""The type stubs (forge/__init__.pyi) match the package: every public name is declared, and every declared
function, constructor, method and property has the package's parameters (names, kinds, defaults present or not).
py.typed marks the package as typed; the extension's stubs (_native.pyi) are generated at build time."""

import ast
import inspect
import pathlib

import pytest

import forge

PKG = pathlib.Path(forge.__file__).parent
STUB = PKG / "__init__.pyi"


def stub_tree():
    return {n.name: n for n in ast.parse(STUB.read_text()).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def params(fn_node):
    a = fn_node.args
    out = [(p.arg, "positional_only") for p in a.posonlyargs]
    pos = a.args
    defaults = [None] * (len(pos) - len(a.defaults)) + a.defaults
    out += [(p.arg, "positional", d is not None) for p, d in zip(pos, defaults)]
    out += [(p.arg, "keyword_only", d is not None) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    return [p for p in out if p[0] != "self"]


def runtime_params(fn):
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.name == "self":
            continue
        kind = {p.KEYWORD_ONLY: "keyword_only", p.POSITIONAL_ONLY: "positional_only"}.get(p.kind, "positional")
        out.append((p.name, kind, p.default is not p.empty))
    return out


def test_files_exist():
    assert (PKG / "py.typed").exists() and STUB.exists()
    assert (PKG / "_native.pyi").exists()  # nanobind's stubgen


def test_every_public_name_is_declared():
    tree = stub_tree()
    declared = set(tree) | {t.id for n in ast.parse(STUB.read_text()).body if isinstance(n, ast.AnnAssign)
                            for t in [n.target]}
    missing = [n for n in forge.__all__ if n not in declared]
    assert not missing, f"forge/__init__.pyi lacks {missing}"


@pytest.mark.parametrize("name", forge.__all__)
def test_signatures_match(name):
    node = stub_tree()[name]
    obj = getattr(forge, name)
    if isinstance(node, ast.FunctionDef):
        assert params(node) == runtime_params(obj), name
        return
    for item in node.body:
        if not isinstance(item, ast.FunctionDef) or (item.name.startswith("_") and item.name != "__init__"):
            continue
        attr = inspect.getattr_static(obj, item.name)
        decorators = {d.id for d in item.decorator_list if isinstance(d, ast.Name)}
        if "property" in decorators:
            assert isinstance(attr, property), f"{name}.{item.name} is not a property"
        elif "overload" in decorators:
            continue
        else:
            fn = attr.__func__ if isinstance(attr, staticmethod) else attr
            assert params(item) == runtime_params(fn), f"{name}.{item.name}"
    public = {m for m, v in vars(obj).items()
              if not m.startswith("_") and (callable(v) or isinstance(v, (property, staticmethod)))}
    declared = {i.name for i in node.body if isinstance(i, ast.FunctionDef)}
    assert public <= declared, f"{name}: the stub lacks {sorted(public - declared)}"
