"""The library speaks of the arguments of its calls as Python does; only the command line speaks of flags.

Below `planstate/cli/`, a command-line option may appear in a message only inside a whole planstate command line
given as advice (`` `planstate check --fix` ``, `(planstate check --fix)`); an error about an argument of the call
itself names the argument (`UsageError(..., argument="since")`) and the command line respells it. Docstrings,
comments and the git command lines of core/git.py are not messages.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "planstate"
NOT_MESSAGES = {"core/git.py"}  # arguments of the git commands it runs
_ADVICE = re.compile(r"`planstate [^`]*`|\(planstate [^)]*\)|^planstate .*")
_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def _text(node: ast.expr) -> str:
    """A string literal's text, an f-string's with each placeholder as `X`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    assert isinstance(node, ast.JoinedStr)
    return "".join(v.value if isinstance(v, ast.Constant) else "X" for v in node.values)


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and its functions."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            found.add(id(body[0].value))
    return found


def options_in_messages(path: Path, root: Path = PACKAGE) -> list[str]:
    """Each option named in a string of `path` outside advice that gives a whole planstate command line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    # what an f-string holds is checked as part of it (a placeholder reads as `X`)
    inner = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in ast.walk(n) if v is not n}
    found = []
    for node in ast.walk(tree):
        if id(node) in skip or id(node) in inner:
            continue
        if isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            text = _ADVICE.sub("", _text(node))
            found += [f"{path.relative_to(root)}:{node.lineno}: {m.group()}" for m in _OPTION.finditer(text)]
    return found


def test_no_library_message_speaks_of_flags() -> None:
    library = [
        p
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.relative_to(PACKAGE).parts[0] != "cli" and p.relative_to(PACKAGE).as_posix() not in NOT_MESSAGES
    ]
    assert len(library) > 50
    assert [found for path in library for found in options_in_messages(path)] == []


def test_the_scan_finds_an_option_outside_advice(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    source = 'A = "pass --initiative SLUG"\nB = f"run `planstate check --fix` for {A}"\nC = f"give {A} --since"\n'
    sample.write_text(source, encoding="utf-8")
    assert options_in_messages(sample, tmp_path) == ["sample.py:1: --initiative", "sample.py:3: --since"]
