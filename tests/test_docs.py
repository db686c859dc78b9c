"""Docs that tests check: the format spec's examples and tables, the CLI reference, the README."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from planstate.cli.main import build_parser
from planstate.core.errors import EXIT_CONFLICT, EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from planstate.model.validation import problems_for
from planstate.text.document import Document

REPO = Path(__file__).resolve().parent.parent
FORMAT = (REPO / "docs" / "format.md").read_text(encoding="utf-8")
CLI = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
README = (REPO / "README.md").read_text(encoding="utf-8")
EXAMPLE = re.compile(r"<!-- example: (\w+) -->\n```markdown\n(.*?)\n```\n", re.DOTALL)


def examples() -> list[tuple[str, str]]:
    """Every (kind, text) example block of docs/format.md."""
    return [(m.group(1), m.group(2) + "\n") for m in EXAMPLE.finditer(FORMAT)]


def test_format_has_one_example_of_each_file_kind() -> None:
    assert sorted(kind for kind, _ in examples()) == ["blocker", "decision", "session", "state"]


@pytest.mark.parametrize(("kind", "text"), examples(), ids=[k for k, _ in examples()])
def test_format_examples_validate(kind: str, text: str) -> None:
    doc = Document.from_bytes(text.encode("utf-8"), f"docs/format.md example {kind}")
    assert doc.to_bytes() == text.encode("utf-8")
    assert problems_for(kind, doc.data) == []


def test_format_field_tables_match_the_models() -> None:
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "docgen.py"), "--check"], capture_output=True)
    assert done.returncode == 0, done.stdout.decode()


def test_format_covers_every_lifecycle_state() -> None:
    from planstate.model.kinds import LIFECYCLE_STATES

    for state in LIFECYCLE_STATES:
        assert f"| `{state}` |" in FORMAT


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def commands() -> list[str]:
    """Every command of the CLI, with groups spelled out (`decision add`, not `decision`)."""
    out = []
    for name, sub in _subcommands(build_parser()).items():
        nested = _subcommands(sub)
        out.extend(f"{name} {child}" for child in nested) if nested else out.append(name)
    return sorted(out)


@pytest.mark.parametrize("name", commands())
def test_every_command_is_documented(name: str) -> None:
    assert f"### planstate {name}\n" in CLI


def test_every_documented_command_exists() -> None:
    documented = re.findall(r"^### planstate (\S+(?: \S+)?)$", CLI, re.MULTILINE)
    assert sorted(documented) == commands()


def test_exit_codes_are_documented() -> None:
    for code in (EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_CONFLICT, 4):
        assert re.search(rf"^\| {code} \|", CLI, re.MULTILINE), code


def test_readme_starts_with_a_two_command_quickstart() -> None:
    assert README.split("\n## ")[1].startswith("Quickstart")
    block = re.search(r"## Quickstart\n.*?```\w*\n(.*?)```", README, re.DOTALL)
    assert block is not None
    lines = [ln for ln in block.group(1).splitlines() if ln.strip()]
    assert lines == ["make demo", "make test"]


def test_ci_runs_the_readme_test_command() -> None:
    assert "make test" in (REPO / ".ci" / "run").read_text()


def test_readme_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Python block of README.md runs as written, in an empty folder, and prints what it says."""
    import contextlib
    import io

    block = re.search(r"From Python.*?```python\n(.*?)```", README, re.DOTALL)
    assert block is not None
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PLANSTATE_ACTOR", "tester")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block.group(1), "README.md", "exec"), {})
    assert printed.getvalue() == "paused 50\n"
    assert (tmp_path / ".planning" / "STATE.md").is_file()
