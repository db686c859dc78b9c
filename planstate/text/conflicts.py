"""Git conflict markers: their grammar, reading a file's conflict blocks and sides, and writing one block.

A block is a `<<<<<<<` line, our side's lines, in git's `diff3` style a `|||||||` line and the
common ancestor's lines, a `=======` line, their side's lines and a `>>>>>>>` line (each sign
seven times, at the start of its line). A label may follow the opening and closing signs; the
lines planstate's merge driver writes carry `LABEL: FIELD`, naming the field in conflict.
"""

from __future__ import annotations

import re
from typing import NamedTuple

SIZE = 7  # the length of every marker git writes unless a `conflict-marker-size` attribute says otherwise
OURS, BASE, SPLIT, THEIRS = "<", "|", "=", ">"  # the sign of each marker line
# A labelled marker's sign is followed by a space or by the end of its line; `=======` stands alone.
_MARKER = re.compile(rf"(?:<{{{SIZE}}}|\|{{{SIZE}}}|>{{{SIZE}}})(?: |\r?\n?$)|={{{SIZE}}}\r?\n?$")
_FIELD_SEPARATOR = ": "  # between a side's label and the field, on the lines the merge driver writes


def marker(line: str) -> str | None:
    """The sign of a conflict marker line (OURS, BASE, SPLIT or THEIRS), or None for any other line; the line may
    keep its ending."""
    return line[0] if _MARKER.match(line) else None


class Conflict(NamedTuple):
    """One git conflict block of a file: its first and last lines, and the field it is about when planstate's merge
    driver wrote it (the field's path follows the label on both the `<<<<<<<` and the `>>>>>>>` line)."""

    first: int
    last: int
    field: str | None


def describe(block: Conflict) -> str:
    """What a conflict block is, in the words every command uses (check's finding, a refused read)."""
    first, last, name = block
    if name is not None:
        return f"unresolved merge conflict on {name} (lines {first}-{last}): both sides changed it differently"
    return f"unresolved git conflict (lines {first}-{last})"


class Hunk(NamedTuple):
    """One git conflict block: its marker lines (0-based line indexes of the file) and the lines of each side."""

    start: int  # the `<<<<<<<` line
    stop: int  # the `>>>>>>>` line
    ours: list[str]
    theirs: list[str]


def conflict_blocks(raw: bytes) -> list[Conflict]:
    """The git conflict blocks of a file, to report them: every `<<<<<<<` … `=======` … `>>>>>>>` at line starts.

    Lenient, so that what can be reported is: a `<<<<<<<` line starts a block afresh, and a block
    that never closes is not one.
    """
    if (OURS * SIZE).encode() not in raw:
        return []
    blocks: list[Conflict] = []
    start: int | None = None
    opening = ""
    middle = False
    for number, line in enumerate(raw.decode("utf-8", errors="surrogateescape").split("\n"), start=1):
        sign = marker(line)
        if sign == OURS:
            start, opening, middle = number, line, False
        elif start is not None and sign == SPLIT:
            middle = True
        elif start is not None and middle and sign == THEIRS:
            blocks.append(Conflict(start, number, marked_field(opening, line)))
            start, middle = None, False
    return blocks


def conflict_hunks(lines: list[str]) -> list[Hunk] | None:
    """The git conflict blocks of a file's lines with each side's lines, to resolve them (both the `merge` and the
    `diff3` style); None when a block is not closed or holds another, so the conflict cannot be understood."""
    hunks: list[Hunk] = []
    index = 0
    while index < len(lines):
        if marker(lines[index]) != OURS:
            index += 1
            continue
        hunk = _hunk_at(lines, index)
        if hunk is None:
            return None
        hunks.append(hunk)
        index = hunk.stop + 1
    return hunks


# Which part of a block the lines after a marker belong to: in the diff3 style, `|||||||` starts the common
# ancestor's lines, which neither side keeps. Any other marker line inside a block is a line of its part.
_NEXT_PART = {("ours", BASE): "base", ("ours", SPLIT): "theirs", ("base", SPLIT): "theirs"}


def _hunk_at(lines: list[str], start: int) -> Hunk | None:
    """The block whose `<<<<<<<` line is `lines[start]`; None when it does not close, or opens another."""
    parts: dict[str, list[str]] = {"ours": [], "base": [], "theirs": []}
    part = "ours"
    for index in range(start + 1, len(lines)):
        sign = marker(lines[index])
        if sign == THEIRS:
            return Hunk(start, index, parts["ours"], parts["theirs"]) if part == "theirs" else None
        if sign == OURS:
            return None  # a conflict inside a conflict: not one git writes
        following = _NEXT_PART.get((part, sign or ""))
        if following is None:
            parts[part].append(lines[index])
        else:
            part = following
    return None


def marked_field(opening: str | bytes, closing: str | bytes) -> str | None:
    """The field a conflict is about, from its marker lines: planstate's merge driver writes `<<<<<<< LABEL: PATH`
    and `>>>>>>> LABEL: PATH` (docs/git.md); None for git's own markers (`<<<<<<< HEAD`), whose labels do not end in
    the same `: PATH`. The longest such path wins, so a label that holds `: ` itself does no harm."""
    ours, theirs = _label(opening), _label(closing)
    at = ours.find(_FIELD_SEPARATOR)
    while at != -1:
        path = ours[at + len(_FIELD_SEPARATOR) :]
        if path and path == path.strip() and theirs.endswith(_FIELD_SEPARATOR + path):
            return path
        at = ours.find(_FIELD_SEPARATOR, at + 1)
    return None


def _label(line: str | bytes) -> str:
    """The label after a marker's sign and space, as text (bytes that are not UTF-8 shown as U+FFFD)."""
    raw = line if isinstance(line, bytes) else line.encode("utf-8", errors="surrogateescape")
    return raw[SIZE + 1 :].decode("utf-8", errors="replace").rstrip("\r\n")


def write_hunk(
    ours: list[str], theirs: list[str], labels: tuple[str, str], field: str, newline: str, size: int = SIZE
) -> list[str]:
    """The lines of one conflict block about `field` (one path, or several joined by `, `), as planstate's merge
    driver writes it: `<<<<<<< OURS: FIELD`, our lines, `=======`, their lines, `>>>>>>> THEIRS: FIELD`. Each side's
    lines keep their endings; `size` is the marker length git asks for."""
    return [
        f"{OURS * size} {labels[0]}{_FIELD_SEPARATOR}{field}{newline}",
        *ours,
        f"{SPLIT * size}{newline}",
        *theirs,
        f"{THEIRS * size} {labels[1]}{_FIELD_SEPARATOR}{field}{newline}",
    ]
