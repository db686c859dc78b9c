"""A line indented wrongly is named as an indentation mistake, with the column it should start at."""

from __future__ import annotations

import pytest

from planstate.core.errors import ParseError
from planstate.text.document import Document
from planstate.text.indentation import misplaced


@pytest.mark.parametrize(
    ("front", "line", "column", "expected", "like"),
    [
        ("a:\n  b: 1\n   c: 2\n", 4, 4, 3, 3),  # one space too deep among siblings
        ("a:\n   b: 1\n  c: 2\n", 4, 3, 4, 3),  # the first child set the column: the next one is short of it
        ("l:\n  - name: x\n   status: y\n", 4, 4, 5, 3),  # a key of a list item lines up after its dash
        ("l:\n  - name: x\n      status: y\n", 4, 7, 5, 3),
        ("a: 1\n  b: 2\n", 3, 3, 1, 2),
    ],
    ids=["deep", "short", "item-short", "item-deep", "top-level"],
)
def test_a_misindented_line_says_indentation_and_the_column_it_should_start_at(
    front: str, line: int, column: int, expected: int, like: int
) -> None:
    with pytest.raises(ParseError) as caught:
        Document.from_bytes(f"---\n{front}---\n".encode(), "STATE.md")
    error = caught.value
    assert (error.line, error.column) == (line, column)
    words = f"indentation: this line starts at column {column}; expected column {expected}, like line {like}"
    assert error.message == words


@pytest.mark.parametrize(
    "front",
    [
        "a: 1\nb: : x\n",  # a colon too many, on a well-indented line
        "notes: |\n  text\n    deeper text\n  more\nb: [unclosed\n",  # a block scalar's lines are its text
        "a: a long\n  plain text\nb: : x\n",  # a plain scalar may go on, indented, on the next line
        "l:\n- x\n- y\nb: : x\n",  # a sequence may start at its key's column
    ],
    ids=["colon", "block-scalar", "plain-continuation", "indentless-sequence"],
)
def test_other_errors_are_not_called_indentation(front: str) -> None:
    with pytest.raises(ParseError) as caught:
        Document.from_bytes(f"---\n{front}---\n".encode(), "STATE.md")
    assert "indentation" not in caught.value.message


def test_a_line_that_lines_up_is_not_misplaced() -> None:
    text = "a:\n  b: 1\n  c:\n    - d: 1\n      e: 2\n  f: 3\ng: 4"
    assert all(misplaced(text, n) is None for n in range(1, 8))
