"""Where things are in the front-matter text: lines, the parts of parsed nodes, and the file's indentation."""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from planstate.core.errors import EditError
from planstate.text import yamltext
from planstate.text.nodes import MERGE_TAG, Step

_ALIAS = re.compile(r"[ \t]*\*[^\s,\[\]{}]+")
_BLOCK_INDICATORS = re.compile(r"[|>][-+0-9]*")


class LineIndex:
    """File lines and columns of character indexes of a text, from its newlines found once."""

    def __init__(self, text: str, first_line: int) -> None:
        self.text = text
        self.first_line = first_line  # the file line of the text's first character
        self._newlines = [m.start() for m in re.finditer("\n", text)]

    def position(self, index: int) -> tuple[int, int]:
        """The 1-based file line and column of character `index`."""
        before = bisect.bisect_left(self._newlines, index)  # newlines before the index
        line_start = self._newlines[before - 1] + 1 if before else 0
        return before + self.first_line, index - line_start + 1


class Text:
    """The front-matter text being edited, with its line boundaries, and the part of it the edits changed."""

    def __init__(self, text: str, newline: str) -> None:
        self.text = text
        self.newline = newline
        self.length = len(text)  # the text as it was
        self.head = self.tail = len(text)  # how many characters of it, from the start and from the end, stay

    def changed(self) -> tuple[int, int, str]:
        """The edits so far as one span of the text as it was: its start, its end, and what now stands there."""
        head, tail = min(self.head, self.length - self.tail), self.tail
        return head, self.length - tail, self.text[head : len(self.text) - tail]

    def line_start(self, i: int) -> int:
        """Index of the first character of the line holding index `i`."""
        return self.text.rfind("\n", 0, i) + 1

    def line_end(self, i: int) -> int:
        """Index just after the newline of the line holding index `i`."""
        j = self.text.find("\n", i)
        return len(self.text) if j < 0 else j + 1

    def after_line(self, end: int) -> int:
        """Index just after the newline of the line holding the character before `end`."""
        return self.line_end(max(end - 1, 0)) if end > 0 else self.line_end(0)

    def eol(self, i: int) -> int:
        """Index of the newline (or CR LF) that ends the line holding index `i`."""
        j = self.text.find("\n", i)
        if j < 0:
            return len(self.text)
        return j - 1 if j > 0 and self.text[j - 1] == "\r" else j

    def rest_of_line(self, i: int) -> str:
        """The text from index `i` to the end of its line, without the line ending."""
        return self.text[i : self.eol(i)]

    def splice(self, start: int, end: int, new: str) -> None:
        """Replace the characters from `start` to `end` with `new`."""
        # What stays at each end: a splice keeps the text before `start` and after `end` exactly.
        self.head, self.tail = min(self.head, start), min(self.tail, len(self.text) - end)
        self.text = self.text[:start] + new + self.text[end:]

    def lines(self, lines: list[str]) -> str:
        """Lines joined, each ended with the file's line ending."""
        return "".join(line + self.newline for line in lines)

    def insert_lines(self, at: int, lines: list[str]) -> None:
        """Insert whole lines at `at` (a line start, or the end of the text, which gets a final newline first)."""
        at = self.ensure_trailing_newline(at)
        self.splice(at, at, self.lines(lines))

    def ensure_trailing_newline(self, at: int) -> int:
        """If `at` is the end of text without a final newline, add one; return the insert point."""
        if at == len(self.text) and self.text and not self.text.endswith("\n"):
            self.splice(at, at, self.newline)
            return len(self.text)
        return at


def empty(node: Any) -> bool:
    """Tell whether a node is an empty scalar with no text of its own (`key:` with nothing after it)."""
    from ruamel.yaml.nodes import ScalarNode

    return isinstance(node, ScalarNode) and node.start_mark.index == node.end_mark.index and not node.value


def block_scalar(node: Any) -> bool:
    """Tell whether a node is a literal or folded block scalar (`|`, `>`)."""
    from ruamel.yaml.nodes import ScalarNode

    return isinstance(node, ScalarNode) and node.style in ("|", ">")


def in_flow(step: Step | None) -> bool:
    """Tell whether the node at `step` is held by a flow collection (`[...]`, `{...}`)."""
    return step is not None and bool(getattr(step.parent, "flow_style", False))


class Geometry:
    """Where the parts of parsed nodes are in the text: colons, dashes, anchors and ends of content."""

    def __init__(self, text: Text, merges: dict[int, list[tuple[Any, Any]]], path: str | None) -> None:
        self.text = text
        self.merges = merges  # `<<` entries of each mapping, which ruamel leaves out of its nodes
        self.path = path

    def colon(self, key: Any) -> int:
        """Index of the ':' that follows a mapping key node."""
        i = int(key.end_mark.index)
        text = self.text.text
        while i < len(text) and text[i] in " \t":
            i += 1
        if i < len(text) and text[i] == ":":
            return i
        raise EditError("cannot find the ':' after a key (complex keys are not supported)", file=self.path)

    def dashes(self, seq: Any) -> list[int]:
        """Indexes of the '-' of every item of a block sequence."""
        col = seq.start_mark.column
        dashes = [seq.start_mark.index]
        pattern = re.compile(rf"^ {{{col}}}-(?=[ \t\r\n]|$)", re.MULTILINE)
        pos = self.text.line_end(seq.start_mark.index)
        for m in pattern.finditer(self.text.text, pos, max(seq.end_mark.index, pos)):
            dashes.append(m.end() - 1)
        if len(dashes) != len(seq.value):
            # Content lines of an item can start with '-' at the same column only inside
            # scalars; fall back to item positions when the count does not match.
            raise EditError("cannot map list items to their lines", file=self.path)
        return dashes

    def content_end(self, node: Any, fallback: int | None) -> int:
        """Index just after the last character of a node's own content (not trailing comments)."""
        from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

        if isinstance(node, ScalarNode):
            return self._scalar_end(node, fallback)
        if getattr(node, "flow_style", False):
            return int(node.end_mark.index)
        if isinstance(node, MappingNode):
            return self.entry_end(*self.entries(node)[-1])
        if isinstance(node, SequenceNode):
            dashes = self.dashes(node)
            return self.content_end(node.value[-1], dashes[-1] + 1)
        return int(node.end_mark.index)

    def _scalar_end(self, node: Any, fallback: int | None) -> int:
        """Where a scalar's text ends: a block scalar's trailing blank lines count only when it keeps them."""
        if empty(node):
            if fallback is None:
                raise EditError("cannot place an empty value", file=self.path)
            return fallback
        if block_scalar(node) and not self.keeps(node):
            span = self.text.text[node.start_mark.index : node.end_mark.index]
            return int(node.start_mark.index) + len(span.rstrip())
        return int(node.end_mark.index)

    def keeps(self, node: Any) -> bool:
        """Tell whether a block scalar keeps its trailing blank lines (`|+`, `>+`)."""
        return "+" in self.text.rest_of_line(node.start_mark.index).split("#")[0]

    def entries(self, node: Any) -> list[tuple[Any, Any]]:
        """A mapping's entries in text order, with the `<<` merge entries ruamel leaves out of `node.value`."""
        merges = self.merges.get(id(node))
        if not merges:
            return list(node.value)
        return sorted([*node.value, *merges], key=lambda kv: int(kv[0].start_mark.index))

    def entry_index(self, node: Any, key: Any) -> int:
        """The position of the entry with key node `key` among a mapping's entries in text order."""
        return next(n for n, (k, _) in enumerate(self.entries(node)) if k is key)

    def entry_end(self, key: Any, value: Any) -> int:
        """Index just after the content of a mapping entry's value (for `<<: *alias`, after the alias)."""
        colon = self.colon(key)
        if key.tag == MERGE_TAG and value.start_mark.index < colon:  # an alias: its node is elsewhere
            m = _ALIAS.match(self.text.text, colon + 1)
            if m is None:
                raise EditError("cannot find the alias after a merge key '<<'", file=self.path)
            return m.end()
        return self.content_end(value, colon + 1)

    def anchor(self, step: Step) -> int:
        """Where a value starts being written: just after its key's ':' or its item's '-'."""
        if step.key is not None:
            return self.colon(step.key) + 1
        if getattr(step.parent, "flow_style", False):
            return int(step.node.start_mark.index)
        return self.dashes(step.parent)[step.pos] + 1

    def item_offset(self, seq: Any, ind: yamltext.Indent) -> int:
        """How far a block sequence's items start from their dash: from its first item, else the file's habit."""
        first = seq.value[0]
        if not empty(first) and first.start_mark.line == seq.start_mark.line:
            return max(int(first.start_mark.column - seq.start_mark.column), 2)
        return ind.item

    def comment_after(self, at: int) -> str:
        """The comment that ends the line from `at` (with the spaces before it), or ''.

        Keeps `key:  # note` when the block collection under the key is replaced.
        """
        rest = self.text.rest_of_line(at)
        return rest if rest.lstrip(" \t").startswith("#") else ""

    def header_rest(self, node: Any) -> str:
        """The text after a block scalar's indicators on its header line (spaces and a comment)."""
        header = self.text.rest_of_line(node.start_mark.index)
        m = _BLOCK_INDICATORS.match(header)
        return header[m.end() :] if m else ""

    def literal_col(self, node: Any, default: int) -> int:
        """The content column of an existing block scalar, or `default`."""
        if not block_scalar(node):
            return default
        content = self.text.text[self.text.line_end(node.start_mark.index) : node.end_mark.index]
        first = next((ln for ln in content.split("\n") if ln.strip()), "")
        return len(first) - len(first.lstrip(" ")) if first else default


def detect_indent(root: Any) -> yamltext.Indent:
    """The file's own indentation: mapping step, sequence dash step and item content offset."""
    habit = _IndentHabit()
    habit.walk(root)
    return yamltext.Indent(
        mapping=_most_common(habit.maps, 2, lambda s: s > 0),
        sequence=_most_common(habit.seqs, 2, lambda s: s >= 0),
        item=_most_common(habit.items, 2, lambda s: s >= 2),  # a dash needs a space after it
    )


class _IndentHabit:
    """Counts of the indentation steps a file's block collections use."""

    def __init__(self) -> None:
        self.maps: Counter[int] = Counter()  # key column -> nested mapping's key column
        self.seqs: Counter[int] = Counter()  # key column -> nested sequence's dash column
        self.items: Counter[int] = Counter()  # dash column -> item content column
        self.seen: set[int] = set()

    def walk(self, node: Any) -> None:
        """Count the steps of `node` and everything under it (each node once)."""
        from ruamel.yaml.nodes import MappingNode, SequenceNode

        if node is None or id(node) in self.seen:
            return
        self.seen.add(id(node))
        if isinstance(node, MappingNode) and not node.flow_style:
            self._mapping(node)
        elif isinstance(node, SequenceNode) and not node.flow_style:
            self._sequence(node)

    def _mapping(self, node: Any) -> None:
        from ruamel.yaml.nodes import MappingNode

        for key, value in node.value:
            if getattr(value, "flow_style", True) is False and value.start_mark.line > key.start_mark.line:
                step = value.start_mark.column - key.start_mark.column
                (self.maps if isinstance(value, MappingNode) else self.seqs)[step] += 1
            self.walk(value)

    def _sequence(self, node: Any) -> None:
        for item in node.value:
            if item is node.value[0] and item.start_mark.line == node.start_mark.line and not empty(item):
                self.items[item.start_mark.column - node.start_mark.column] += 1
            self.walk(item)


def _most_common(counter: Counter[int], default: int, valid: Callable[[int], bool]) -> int:
    """The most frequent value in `counter` that is `valid`, else `default`."""
    for value, _count in counter.most_common():
        if valid(value):
            return value
    return default
