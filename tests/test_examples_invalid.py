"""Each bad input is a named file under tests/examples/invalid/<kind>/, paired here with the one error it must give:
its class, line, column, field and the words that say what is wrong (as tomlkit's tests/examples/invalid does).

The library reads each file (parse, then validate); the real CLI's `planstate validate --json` must report
the same error for the same file placed in a workspace.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import NamedTuple

import pytest
from conftest import Run, json_data, json_error

from planstate.core.errors import PlanstateError
from planstate.model.validation import located, problems_for
from planstate.text.document import Document

INVALID = Path(__file__).resolve().parent / "examples" / "invalid"


class Expected(NamedTuple):
    """The first error a bad file gives."""

    error: str
    line: int
    column: int | None
    field: str | None
    words: str


EXPECTED: dict[str, Expected] = {
    "state/alias-bomb": Expected("ParseError", 2, 1, None, "expands to more than 100,000 values through aliases"),
    "state/attempts-negative": Expected("ValidationError", 20, 5, "phases.1.attempts", "-1 is less than 0"),
    "state/git-conflict-markers": Expected("ParseError", 47, 1, None, "unresolved git conflict (lines 47-51)"),
    "state/indentation-one-space-short": Expected(
        "ParseError", 17, 4, None, "indentation: this line starts at column 4; expected column 5, like line 16"
    ),
    "state/indentation-two-spaces-deep": Expected(
        "ParseError", 13, 5, None, "indentation: this line starts at column 5; expected column 3, like line 12"
    ),
    "state/duplicate-key": Expected("ParseError", 7, 1, None, 'found duplicate key "title"'),
    "state/newer-schema-version": Expected("ValidationError", 4, 1, "schema_version", "2 is newer than this planstate"),
    "state/no-front-matter": Expected("UsageError", 1, None, None, "has no front matter"),
    "state/not-utf8": Expected("ParseError", 6, 9, None, "front matter is not UTF-8 text (byte 0xe9"),
    "state/nul-byte": Expected("ParseError", 1, 1, None, "binary file (NUL bytes), not markdown"),
    "state/phases-total-disagrees": Expected(
        "ValidationError", 15, 1, "phases", "lists 2 phases but structure.phases_total is 3"
    ),
    "state/position-past-the-last-phase": Expected(
        "ValidationError", 27, 3, "position.phase", "7 is not a phase; phases are numbered 1 to 2"
    ),
    "state/tab-indentation": Expected("ParseError", 13, 1, None, "found character '\\t'"),
    "state/title-missing": Expected("ValidationError", 2, 1, "title", "is required"),
    "state/title-not-text": Expected("ValidationError", 6, 1, "title", "expected a string, got a list"),
    "state/too-deep": Expected("ParseError", 7, 107, None, "nests more than 100 levels deep"),
    "state/two-active-phases": Expected("ValidationError", 22, 5, "phases.2.status", "more than one phase is active"),
    "state/unclosed-flow-sequence": Expected("ParseError", 7, 8, None, "expected ',' or ']'"),
    "state/unquoted-colon-in-value": Expected(
        "ParseError",
        47,
        19,
        None,
        'mapping values are not allowed here: quote the value, as in `next_action: "Build: the index"`',
    ),
    "state/unclosed-front-matter": Expected("ParseError", 1, 1, None, "opened with '---' on line 1 is never closed"),
    "state/unknown-lifecycle-state": Expected("ValidationError", 35, 3, "lifecycle.state", "'sleeping' is not one of"),
    "state/updated-not-a-timestamp": Expected(
        "ValidationError", 8, 1, "updated", "expected an ISO 8601 timestamp, got 'yesterday'"
    ),
    "state/updated-no-such-day": Expected("ValidationError", 8, 1, "updated", "(day is out of range for month)"),
    "state/created-no-such-month": Expected("ValidationError", 7, 1, "created", "(month must be in 1..12)"),
    "state/updated-hour-25": Expected("ValidationError", 8, 1, "updated", "(hour must be in 0..23)"),
    "decision/date-no-such-day": Expected("ValidationError", 5, 1, "date", "(day is out of range for month)"),
    "decision/alternatives-not-a-list": Expected("ValidationError", 10, 1, "alternatives", "expected a list"),
    "decision/date-not-a-date": Expected("ValidationError", 5, 1, "date", "expected a date (YYYY-MM-DD)"),
    "decision/id-missing": Expected("ValidationError", 2, 1, "id", "is required"),
    "decision/status-unknown": Expected("ValidationError", 6, 1, "status", "'maybe' is not one of"),
}


def examples() -> list[str]:
    """Every bad input, as `kind/name`."""
    return sorted(f"{p.parent.name}/{p.stem}" for p in INVALID.glob("*/*.md"))


def first_error(path: Path) -> PlanstateError:
    """The first error reading the file as its kind gives (parsing, then validation)."""
    kind = path.parent.name
    try:
        doc = Document.from_bytes(path.read_bytes(), path.name)
        doc.require_front_matter()
        problems = located(doc, problems_for(kind, doc.data))
    except PlanstateError as exc:
        return exc
    assert problems, f"{path.name} is valid"
    return problems[0]


def test_every_example_has_its_expected_error() -> None:
    assert examples() == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_library_gives_the_expected_error(name: str) -> None:
    error = first_error(INVALID / f"{name}.md")
    expected = EXPECTED[name]
    assert (type(error).__name__, error.line, error.column, error.field) == expected[:4]
    assert expected.words in error.message


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_validate_reports_the_same_error(name: str, run: Run, project: Path) -> None:
    kind, stem = name.split("/")
    planning = project / ".planning"
    target = planning / "STATE.md" if kind == "state" else planning / "decisions" / f"dec-1ng9c2c11qt4-{stem}.md"
    shutil.copyfile(INVALID / f"{name}.md", target)
    done = run("validate", "--json", cwd=project)
    assert done.returncode in (1, 2), done.stderr
    report = json_data(done) if done.returncode == 1 else {"problems": [json_error(done)]}
    problem = report["findings"][0]
    expected = EXPECTED[name]
    shown = str(target.relative_to(project))
    assert (problem["type"], problem["path"], problem["line"], problem["column"], problem["field"]) == (
        expected.error,
        shown,
        expected.line,
        expected.column,
        expected.field,
    )
    assert expected.words in problem["message"]
