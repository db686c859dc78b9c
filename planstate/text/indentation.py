"""Telling an indentation mistake apart from other YAML errors, to name the column a line should start at.

Used only after a parse failed: the parser's own words for a line indented one space too many or too few
("mapping values are not allowed here", "expected <block end>") do not say what is wrong. A line of a block
mapping or sequence must start at the column of its siblings, or open a new, deeper block after a `key:` line.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_OPENS = re.compile(r"""^[^#'"]*:\s*(?:[|>][-+0-9]*\s*)?(?:#.*)?$""")  # `key:` alone, or a block scalar's start
_SCALAR = re.compile(r""":\s*[|>][-+0-9]*\s*(?:#.*)?$""")
_ITEM = re.compile(r"(?:- +|-$)+")


class Misplaced(NamedTuple):
    """A line that starts at another column than its siblings (columns 1-based)."""

    column: int
    expected: int
    sibling: int  # the 1-based line number of the sibling it should line up with, within the text


def misplaced(text: str, number: int) -> Misplaced | None:
    """Whether line `number` (1-based, within `text`) breaks the indentation of the block it is in, and where it
    should start; None when the line lines up (the error is something else) or the text is beyond this simple
    reading (flow collections over several lines)."""
    lines = text.split("\n")
    if not 0 < number <= len(lines):
        return None
    stack: list[tuple[int, int]] = [(0, 0)]  # (column, line number) of each open block, outermost first
    opened = False  # the last content line was `key:` (a deeper block may follow)
    scalar_indent: int | None = None  # inside a block scalar: lines indented more than its key are its text
    for at, line in enumerate(lines[:number], start=1):
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if not stripped or stripped.startswith("#"):
            continue
        if scalar_indent is not None and indent > scalar_indent:
            continue
        scalar_indent = None
        if stripped.count("[") != stripped.count("]") or stripped.count("{") != stripped.count("}"):
            return None
        if opened and indent > stack[-1][0]:
            stack.append((indent, at))
        elif opened and indent == stack[-1][0] and stripped.startswith("-"):
            pass  # a sequence may start at its key's column
        else:
            open_blocks = list(stack)
            while len(stack) > 1 and stack[-1][0] > indent:
                stack.pop()
            if stack[-1][0] != indent:
                if at == number:
                    column, line_at = min(open_blocks, key=lambda s: (abs(s[0] - indent), -s[0]))
                    return Misplaced(indent + 1, column + 1, line_at)
                continue  # a plain scalar's continuation line, most likely: not what failed
            stack[-1] = (indent, at)
        item = _ITEM.match(stripped)
        if item:  # `- key: value`: the mapping inside the item starts after the dashes
            stack.append((indent + item.end(), at))
        opened = _OPENS.match(stripped) is not None
        if _SCALAR.search(stripped):
            scalar_indent, opened = stack[-1][0], False
    return None
