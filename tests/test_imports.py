"""Imports go one way: no module imports from a layer below it (docs/architecture.md, "Layers").

Every `import` is checked, also those inside functions (the commands import lazily to start
fast). Imports under `if TYPE_CHECKING:` are exempt: they exist for annotations only and run
nothing. That is how lower layers name the types of higher ones they are handed (`Context`, `Transaction`);
`transaction` calls `ctx.refresh_regions` through the context it is given rather than importing the views.
A module's layer is read from its path, so the folder tree and this test cannot disagree.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "planstate"

# The layers from the top (imported by all below) to the bottom; a module may import its own layer and those above.
# A module's layer is its sub-package (`planstate/store/cache.py` is in `store`); the package root's modules are the
# API (`workspace`, `__init__`) or the shell (`__main__`, beside `cli/`).
ORDER = ["core", "text", "model", "store", "render", "ops", "vcs", "check", "report", "interop", "api", "agents", "cli"]
ROOT_MODULES = {"workspace": "api", "__init__": "api", "__main__": "cli"}

# Accepted exceptions, each with its reason; a stale entry fails the test so the list never outlives the code.
KNOWN: dict[tuple[str, str], str] = {}


def layer_of(module: str) -> str | None:
    """The layer of a planstate module, read from its path (None for modules outside planstate)."""
    parts = module.split(".")
    if parts[0] != "planstate":
        return None
    name = parts[1] if len(parts) > 1 else "__init__"
    if name in ORDER:
        return name
    if name in ROOT_MODULES:
        return ROOT_MODULES[name]
    raise AssertionError(
        f"{module} is in no layer: put it in one of the sub-packages {ORDER} and describe it in docs/architecture.md"
    )


def module_name(path: Path) -> str:
    """The dotted name of a module file in the package."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(source: str, module: str, *, package: bool = False) -> list[tuple[str, int]]:
    """The planstate modules that the source of `module` imports at run time (anywhere in it), with line numbers."""
    tree = ast.parse(source)
    type_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            type_only.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    parent = module.split(".") if package else module.split(".")[:-1]
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*parent[: len(parent) - node.level + 1], *([base] if base else [])])
            for alias in node.names:  # `from planstate import x`: x is a module, or a name defined in `base`
                name = f"{base}.{alias.name}"
                found.append((name if is_module(name) else base, node.lineno))
    return [(name, line) for name, line in found if name.split(".")[0] == "planstate"]


def is_module(dotted: str) -> bool:
    """Tell whether a dotted name is a module or package of planstate."""
    path = PACKAGE.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def upward_imports() -> list[tuple[str, str, str]]:
    """Every import of a module from a layer below its own: (importer, imported, where)."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        importer = module_name(path)
        own = layer_of(importer)
        assert own is not None
        source = path.read_text(encoding="utf-8")
        for target, line in imported(source, importer, package=path.name == "__init__.py"):
            other = layer_of(target)
            assert other is not None
            if ORDER.index(other) > ORDER.index(own):
                out.append((importer, target, f"{path.relative_to(PACKAGE.parent)}:{line}"))
    return out


def test_every_module_has_a_layer() -> None:
    modules = [module_name(p) for p in sorted(PACKAGE.rglob("*.py"))]
    assert "planstate.store.scaffold" in modules
    for module in modules:
        assert layer_of(module) is not None


def test_no_module_imports_from_a_layer_below_it() -> None:
    found = upward_imports()
    unknown = [
        f"{where}: {a} ({layer_of(a)}) imports {b} ({layer_of(b)})" for a, b, where in found if (a, b) not in KNOWN
    ]
    assert not unknown, "imports against the layers:\n" + "\n".join(unknown)
    present = {(a, b) for a, b, _where in found}
    stale = [f"{a} no longer imports {b}" for a, b in KNOWN if (a, b) not in present]
    assert not stale, "remove from KNOWN in tests/test_imports.py: " + "; ".join(stale)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import planstate.workspace\n", ["planstate.workspace"]),
        ("def f():\n    from planstate.render.regions import refresh\n", ["planstate.render.regions"]),
        (
            "from planstate.store import history\nfrom planstate import __version__\n",
            ["planstate.store.history", "planstate"],
        ),
        ("from . import display\nfrom ..core import errors\n", ["planstate.cli.display", "planstate.core.errors"]),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from planstate.workspace import Workspace\n", []),
        ("import os\nfrom ruamel.yaml import YAML\n", []),
    ],
    ids=["module", "inside-a-function", "from-the-root", "relative", "type-checking-only", "not-planstate"],
)
def test_the_import_scanner_sees_every_runtime_import(source: str, expected: list[str]) -> None:
    assert [name for name, _line in imported(source, "planstate.cli.core")] == expected
