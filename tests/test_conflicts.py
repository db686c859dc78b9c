"""Git conflict markers (text/conflicts.py): what the merge driver writes is what the checks and `render` read."""

from __future__ import annotations

from planstate.text import conflicts


def split_lines(text: str) -> list[str]:
    """A text's lines with their endings."""
    return text.splitlines(keepends=True)


def test_a_written_hunk_reads_back_with_its_field_and_sides() -> None:
    hunk = conflicts.write_hunk(["  task: a\n"], ["  task: b\n"], ("ours", "theirs"), "position.task", "\n")
    text = "position:\n" + "".join(hunk) + "  phase: 1\n"
    assert conflicts.conflict_blocks(text.encode()) == [conflicts.Conflict(2, 6, "position.task")]
    assert conflicts.conflict_hunks(split_lines(text)) == [conflicts.Hunk(1, 5, ["  task: a\n"], ["  task: b\n"])]


def test_diff3_ancestor_lines_belong_to_neither_side() -> None:
    lines = split_lines("x\n<<<<<<< HEAD\na\n||||||| base\no\n=======\nb\n>>>>>>> other\ny\n")
    assert conflicts.conflict_hunks(lines) == [conflicts.Hunk(1, 7, ["a\n"], ["b\n"])]


def test_blocks_that_cannot_be_understood() -> None:
    unclosed = split_lines("<<<<<<< HEAD\na\n=======\nb\n")
    nested = split_lines("<<<<<<< a\n<<<<<<< b\n=======\n>>>>>>> c\n")
    assert conflicts.conflict_hunks(unclosed) is None and conflicts.conflict_hunks(nested) is None
    assert conflicts.conflict_blocks(b"<<<<<<< a\nx\n=======\n") == []  # reported only once closed
    assert conflicts.conflict_hunks(split_lines("<<<<<<<< eight\n")) == []  # not a marker: eight signs


def test_marker_lines_keep_or_lose_their_endings() -> None:
    for line in ("=======", "=======\n", "=======\r\n", "<<<<<<< HEAD\r\n", ">>>>>>>"):
        assert conflicts.marker(line) == line[0]
    for line in ("======= x", "<<<<<<<x", " <<<<<<< HEAD", "|||||| six"):
        assert conflicts.marker(line) is None
