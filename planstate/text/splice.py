"""Edits spliced into the front-matter text at node positions: replace a value, add a key, append, insert, delete."""

from __future__ import annotations

import itertools
from typing import Any

from planstate.core.errors import EditError, UsageError
from planstate.text import yamltext
from planstate.text.nodes import Step, child_steps, parent_step
from planstate.text.paths import Segment
from planstate.text.plaindata import Op
from planstate.text.spans import Geometry, Text, block_scalar, detect_indent, empty, in_flow


class Splice:
    """One edit's workspace: the text, where nodes are in it, and the file's indentation and writing habits."""

    def __init__(
        self,
        text: str,
        root: Any,
        merges: dict[int, list[tuple[Any, Any]]],
        newline: str,
        *,
        literals: bool,
        path: str | None,
        indent: yamltext.Indent | None = None,
    ) -> None:
        self.buf = Text(text, newline)
        self.geo = Geometry(self.buf, merges, path)
        self.root = root
        self.literals = literals  # write multi-line strings as literal block scalars
        self.path = path
        self._indent = indent  # `root`'s indentation when the caller knows it

    @property
    def detected(self) -> yamltext.Indent | None:
        """The file's own indentation, if an edit needed it (`indent`)."""
        return self._indent

    @property
    def text(self) -> str:
        """The text with the edits made so far."""
        return self.buf.text

    def changed(self) -> tuple[int, int, str]:
        """The edits made so far as one span of the text they were made in (`Text.changed`)."""
        return self.buf.changed()

    def indent(self) -> yamltext.Indent:
        """The file's own indentation (found on first use)."""
        if self._indent is None:
            self._indent = detect_indent(self.root)
        return self._indent

    def block(self, value: Any, col: int, ind: yamltext.Indent | None = None) -> list[str]:
        """`value` as block YAML lines at column `col`."""
        return yamltext.block(value, col, ind or self.indent(), literals=self.literals)

    def run(self, op: Op, target: Step | None) -> str:
        """Make edit `op` at `target` (the step of its path, or of its parent for "add"); return the new text."""
        if op.kind == "add":
            AddKey(self).run(target, op.path[-1], op.value)
        elif op.kind == "delete":
            Delete(self).run(target)
        elif op.kind in _VALUED:
            _VALUED[op.kind](self).run(target, op.value)
        else:  # pragma: no cover - Op kinds are fixed
            raise ValueError(op.kind)
        return self.text


def scalar_span(step: Step | None, value: Any) -> tuple[int, int, str]:
    """The span of the inline scalar at `step` and its new text; EditError when it is no inline scalar."""
    from ruamel.yaml.nodes import ScalarNode

    node = step.node if step is not None else None
    if not isinstance(node, ScalarNode) or block_scalar(node) or empty(node):
        raise EditError("not an inline scalar")
    style = node.style if node.style in ("'", '"') else None
    return node.start_mark.index, node.end_mark.index, yamltext.scalar(value, style=style, flow=in_flow(step))


def splice_spans(text: str, spans: list[tuple[int, int, str]]) -> str:
    """Replace several spans of `text` at once, from the last to the first so the positions stay valid."""
    spans = sorted(spans, reverse=True)
    if any(later[0] < earlier[1] for later, earlier in itertools.pairwise(spans)):
        raise EditError("overlapping edits")
    buf = Text(text, "\n")
    for start, end, new in spans:
        buf.splice(start, end, new)
    return buf.text


class _Edit:
    """One kind of edit, working in a Splice's text."""

    def __init__(self, edit: Splice) -> None:
        self.edit = edit
        self.buf = edit.buf
        self.geo = edit.geo


# ---------------------------------------------------------------------------- replace


class Replace(_Edit):
    """Replace the value at a step: inline where it fits, else as a block under its key or dash."""

    def run(self, step: Step | None, value: Any) -> None:
        """Write `value` in place of the node at `step` (None: the whole front matter)."""
        if step is None:
            self._root(value)
        elif self._as_block(step, value):
            self._block(step, value)
        else:
            self._inline(step, value)

    def _root(self, value: Any) -> None:
        """The whole front matter becomes `value`."""
        if isinstance(value, dict | list) and value:
            self.buf.splice(0, len(self.buf.text), self.buf.lines(self.edit.block(value, 0)))
        else:
            self.buf.splice(0, len(self.buf.text), self.buf.lines([yamltext.flow(value)]))

    def _as_block(self, step: Step, value: Any) -> bool:
        """Tell whether `value` is written as block lines: a non-empty collection, or text as a literal."""
        if in_flow(step):
            return False
        if isinstance(value, dict | list):
            return bool(value)
        multiline = isinstance(value, str) and ("\n" in value or block_scalar(step.node))
        return self.edit.literals and multiline and yamltext.literal_ok(value)

    # ---- the new value on one line

    def _inline(self, step: Step, value: Any) -> None:
        """Write `value` as one inline value where the old one was."""
        node = step.node
        text = _inline_text(step, value)
        if _is_inline(node):
            self.buf.splice(node.start_mark.index, node.end_mark.index, text)
        elif empty(node):
            self._fill_empty(step, text)
        else:  # a block scalar or block collection becomes one inline value
            at = self.geo.anchor(step)
            end = self.buf.after_line(self.geo.content_end(node, None))
            rest = self._kept_comment(node, at)
            self.buf.splice(at, end, " " + text + rest + self.buf.newline)

    def _fill_empty(self, step: Step, text: str) -> None:
        """Write a value after an empty `key:` or `-`."""
        at = self.geo.anchor(step)
        if in_flow(step):
            self.buf.splice(at, at, text)
            return
        spaces = self.buf.rest_of_line(at)  # write over trailing spaces, but keep a comment
        self.buf.splice(at, at + (len(spaces) if not spaces.strip(" \t") else 0), " " + text)

    def _kept_comment(self, node: Any, at: int) -> str:
        """What stays after the anchor of a replaced block: a block scalar's header comment, or the line's comment."""
        return self.geo.header_rest(node) if block_scalar(node) else self.geo.comment_after(at)

    # ---- the new value as block lines

    def _block(self, step: Step, value: Any) -> None:
        """Write `value` as lines under its key or dash, after what stays on the anchor's line."""
        head, following = self._block_lines(step, value)
        at = self.geo.anchor(step)
        rest, after = self._line_tail(step.node, at)
        self.buf.splice(at, after, head + rest + self.buf.newline + self.buf.lines(following))

    def _block_lines(self, step: Step, value: Any) -> tuple[str, list[str]]:
        """The text that goes on the anchor's line and the lines after it."""
        offset: int | None = None
        if step.key is not None:
            parent_col, col = self._key_columns(step, value)
        else:
            parent_col, col, offset = self._item_columns(step)
        if isinstance(value, str):
            lines = yamltext.literal_block(value, col, parent_col)
            return " " + lines[0], lines[1:]
        lines = self.edit.block(value, col)
        if offset is None:
            return "", lines
        # An item's first line goes on the dash line, as far from the dash as the other items' content.
        return " " * (offset - 1) + lines[0].lstrip(" "), lines[1:]

    def _key_columns(self, step: Step, value: Any) -> tuple[int, int]:
        """The key's column and the column of a block value under it."""
        ind = self.edit.indent()
        base = step.key.start_mark.column
        if isinstance(value, dict):
            return base, base + ind.mapping
        if isinstance(value, list):
            return base, base + ind.sequence
        return base, self.geo.literal_col(step.node, base + ind.mapping)

    def _item_columns(self, step: Step) -> tuple[int, int, int]:
        """The dash's column, the column of an item's content and its distance from the dash."""
        dash = self.geo.dashes(step.parent)[step.pos]
        parent_col = dash - self.buf.line_start(dash)
        offset = self.geo.item_offset(step.parent, self.edit.indent())
        return parent_col, self.geo.literal_col(step.node, parent_col + offset), offset

    def _line_tail(self, node: Any, at: int) -> tuple[str, int]:
        """What stays on the anchor's line after the new value (a comment), and where the old value's text ends."""
        if not (_is_inline(node) or empty(node)):
            return self._kept_comment(node, at), self.buf.after_line(self.geo.content_end(node, None))
        region_end = node.end_mark.index if _is_inline(node) else at
        rest = self.buf.rest_of_line(region_end)
        rest = rest if rest.strip(" \t") else ""  # keep a comment, not trailing spaces
        return rest, self.buf.line_end(region_end)


def _is_inline(node: Any) -> bool:
    """Tell whether a node's text is one inline value (a scalar with text, or a flow collection)."""
    from ruamel.yaml.nodes import ScalarNode

    if block_scalar(node) or empty(node):
        return False
    return isinstance(node, ScalarNode) or bool(node.flow_style)


def _inline_text(step: Step, value: Any) -> str:
    """`value` as one inline YAML value, in the old scalar's quoting style."""
    from ruamel.yaml.nodes import ScalarNode

    if isinstance(value, dict | list):
        return yamltext.flow(value)
    node = step.node
    style = node.style if isinstance(node, ScalarNode) and node.style in ("'", '"') else None
    return yamltext.scalar(value, style=style, flow=in_flow(step))


# ---------------------------------------------------------------------------- add a key


class AddKey(_Edit):
    """Add a key at the end of a mapping, written like its siblings."""

    def run(self, step: Step | None, key: Segment, value: Any) -> None:
        """Add `key: value` at the end of the mapping at `step` (None: the top level)."""
        from ruamel.yaml.nodes import MappingNode

        ind = self.edit.indent()
        node = self.edit.root if step is None else step.node
        if node is None:  # empty front matter (maybe only comments): append at the end
            self.buf.insert_lines(len(self.buf.text), yamltext.entry(key, value, 0, ind, literals=self.edit.literals))
            return
        if not isinstance(node, MappingNode):
            raise UsageError("cannot add a key to a value that is not a mapping", file=self.edit.path)
        entries = self.geo.entries(node)
        if node.flow_style:
            self._flow(step, node, entries, key, value)
            return
        col = entries[0][0].start_mark.column
        at = self.buf.after_line(self.geo.entry_end(*entries[-1]))
        self.buf.insert_lines(at, yamltext.entry(key, value, col, ind, literals=self.edit.literals))

    def _flow(self, step: Step | None, node: Any, entries: list[tuple[Any, Any]], key: Segment, value: Any) -> None:
        """Add an entry to a flow mapping (`{a: 1}`)."""
        if not entries:
            if step is not None and not in_flow(step):
                Replace(self.edit).run(step, {key: value})
                return
            self.buf.splice(node.start_mark.index + 1, node.end_mark.index - 1, _flow_pair(key, value))
            return
        at = self.geo.entry_end(*entries[-1])
        pair = _flow_pair(key, value)
        if self.buf.text[node.start_mark.index] == "{":
            self.buf.splice(at, at, ", " + pair)
        else:  # a single pair in a flow list (`[key: value]`) has no braces: give it some
            self.buf.splice(at, at, ", " + pair + "}")
            self.buf.splice(node.start_mark.index, node.start_mark.index, "{")


def _flow_pair(key: Segment, value: Any) -> str:
    """`key: value` as a flow mapping entry."""
    return f"{yamltext.key_text(key, flow=True)}: {yamltext.flow(value)}"


# ---------------------------------------------------------------------------- append and insert


class _ListEdit(_Edit):
    """What appending and inserting share: the new item's lines, written like its neighbour."""

    def item_lines(self, node: Any, neighbour: Any, value: Any) -> list[str]:
        """The lines of a new item of the block sequence `node`: a flow mapping when `neighbour` is one."""
        from ruamel.yaml.nodes import MappingNode

        ind = self.edit.indent()
        col = node.start_mark.column
        offset = self.geo.item_offset(node, ind)
        if isinstance(value, dict) and value and isinstance(neighbour, MappingNode) and neighbour.flow_style:
            return [" " * col + "-" + " " * (offset - 1) + yamltext.flow(value)]
        return self.edit.block([value], col, ind._replace(item=offset))


class Append(_ListEdit):
    """Append an item to a list."""

    def run(self, step: Step | None, value: Any) -> None:
        """Append `value` to the list at `step` (None: the top level)."""
        from ruamel.yaml.nodes import SequenceNode

        node = self.edit.root if step is None else step.node
        if not isinstance(node, SequenceNode):
            raise UsageError("cannot append to a value that is not a list", file=self.edit.path)
        if node.flow_style:
            self._flow(step, node, value)
            return
        dashes = self.geo.dashes(node)
        last = node.value[-1]
        lines = self.item_lines(node, last, value)
        self.buf.insert_lines(self.buf.after_line(self.geo.content_end(last, dashes[-1] + 1)), lines)

    def _flow(self, step: Step | None, node: Any, value: Any) -> None:
        """Append to a flow list (`[a, b]`)."""
        if node.value:
            at = self.geo.content_end(node.value[-1], None)
            self.buf.splice(at, at, ", " + yamltext.flow(value))
        elif step is not None and not in_flow(step):
            Replace(self.edit).run(step, [value])
        else:
            self.buf.splice(node.start_mark.index + 1, node.end_mark.index - 1, yamltext.flow(value))


class Insert(_ListEdit):
    """Insert an item before another item of a list."""

    def run(self, step: Step | None, value: Any) -> None:
        """Insert `value` before the list item at `step`, written like its siblings."""
        from ruamel.yaml.nodes import SequenceNode

        if step is None or not isinstance(step.parent, SequenceNode):
            raise UsageError("cannot insert into a value that is not a list", file=self.edit.path)
        node = step.parent
        if node.flow_style:
            self._flow(step, node, value)
            return
        dashes = self.geo.dashes(node)
        lines = self.item_lines(node, node.value[step.pos], value)
        if step.pos > 0:
            # Right after the item before it: comment lines above the next item stay with that item.
            at = self.buf.after_line(self.geo.content_end(node.value[step.pos - 1], dashes[step.pos - 1] + 1))
        else:
            at = self.buf.line_start(dashes[0])
            if self.buf.text[at : dashes[0]].strip(" "):
                raise EditError("cannot insert before an item that starts on its parent's line", file=self.edit.path)
        self.buf.insert_lines(at, lines)

    def _flow(self, step: Step, node: Any, value: Any) -> None:
        """Insert into a flow list (`[a, b]`) before the item at `step`."""
        at = int(step.node.start_mark.index)
        if at >= node.end_mark.index - 1 or self.buf.text[at : at + 1] in (",", "]"):
            raise EditError("cannot place an item before an empty value", file=self.edit.path)
        self.buf.splice(at, at, yamltext.flow(value) + ", ")


# ---------------------------------------------------------------------------- delete


class Delete(_Edit):
    """Delete a mapping entry or list item, removing only its own lines."""

    def run(self, step: Step | None) -> None:
        """Delete the mapping entry or list item at `step` (None: everything)."""
        from ruamel.yaml.nodes import MappingNode

        if step is None:
            self.buf.text = ""
            return
        parent = step.parent
        siblings = self.geo.entries(parent) if isinstance(parent, MappingNode) else parent.value
        if len(siblings) == 1:
            if self._last_one(parent):
                return
            # The last top-level entry: remove its lines and keep the comments around it.
        elif parent.flow_style:
            self._flow(step)
            return
        if isinstance(parent, MappingNode):
            self._entry(step, siblings)
        else:
            self._item(step)

    def _last_one(self, parent: Any) -> bool:
        """Empty a collection whose only child goes; False when that must be done line by line instead."""
        from ruamel.yaml.nodes import MappingNode

        grand = parent_step(self.edit.root, parent)
        if grand is not None:
            Replace(self.edit).run(grand, {} if isinstance(parent, MappingNode) else [])
            return True
        if parent.flow_style:
            self.buf.text = ""
            return True
        return False

    def _entry(self, step: Step, siblings: list[tuple[Any, Any]]) -> None:
        """Delete the lines of a block mapping's entry."""
        i = next(n for n, (k, _) in enumerate(siblings) if k is step.key)
        start = step.key.start_mark.index
        end = self.buf.after_line(self.geo.content_end(step.node, self.geo.colon(step.key) + 1))
        ls = self.buf.line_start(start)
        if self.buf.text[ls:start].strip(" "):
            # First key of a list item (`- a: 1`): pull the next key up onto the dash line.
            if i + 1 >= len(siblings):
                raise EditError("cannot delete this key without rewriting its list item", file=self.edit.path)
            self.buf.splice(start, siblings[i + 1][0].start_mark.index, "")
            return
        self.buf.splice(ls, self._past_kept_blanks(ls, start, end), "")

    def _item(self, step: Step) -> None:
        """Delete the lines of a block sequence's item."""
        dashes = self.geo.dashes(step.parent)
        dash = dashes[step.pos]
        ls = self.buf.line_start(dash)
        if self.buf.text[ls:dash].strip(" "):
            # First item of a list that starts on its parent's line (`- - a`): pull the next item up.
            self.buf.splice(dash, dashes[step.pos + 1], "")
            return
        end = self.buf.after_line(self.geo.content_end(step.node, dash + 1))
        self.buf.splice(ls, self._past_kept_blanks(ls, dash, end), "")

    def _past_kept_blanks(self, ls: int, start: int, end: int) -> int:
        """Where a deletion of lines `ls`..`end` must stop: past blank lines a `|+` scalar above would take in."""
        if not self._keeping_scalar_ends(ls, start):
            return end
        text = self.buf.text
        while end < len(text) and not self.buf.rest_of_line(end).strip(" \t"):
            end = self.buf.line_end(end)
        return end

    def _keeping_scalar_ends(self, ls: int, start: int) -> bool:
        """Tell whether a block scalar that keeps its trailing blank lines (`|+`) ends between `ls` and `start`."""
        stack: list[Any] = [self.edit.root]
        while stack:
            node = stack.pop()
            if block_scalar(node) and ls <= node.end_mark.index <= start and self.geo.keeps(node):
                return True
            stack.extend(child.node for child in child_steps(node))
        return False

    def _flow(self, step: Step) -> None:
        """Delete an entry of a flow collection with its comma."""
        parent = step.parent
        if step.key is not None:
            entries = self.geo.entries(parent)
            i = next(n for n, (k, _) in enumerate(entries) if k is step.key)
            starts = [k.start_mark.index for k, _ in entries]
            prev_end = self.geo.entry_end(*entries[i - 1]) if i else 0
        else:
            i = step.pos
            starts = [v.start_mark.index for v in parent.value]
            prev_end = self.geo.content_end(parent.value[i - 1], None) if i else 0
        if i + 1 < len(starts):
            self.buf.splice(starts[i], starts[i + 1], "")
        else:
            self.buf.splice(prev_end, self.geo.content_end(step.node, None), "")


_VALUED: dict[str, type[Replace] | type[Append] | type[Insert]] = {
    "replace": Replace,
    "append": Append,
    "insert": Insert,
}
