"""Markdown with YAML front matter: bytes in, bytes out, edits spliced into the original text."""

from __future__ import annotations

import copy
import io
import re
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

from planstate import yamltext
from planstate.errors import EditError, ParseError, UsageError
from planstate.plain import (
    Op,
    Segment,
    apply_op,
    child,
    diff,
    format_path,
    get_in,
    parse_path,
    same,
    to_plain,
)

BOM = b"\xef\xbb\xbf"
MAX_FRONT_MATTER = 1 << 20  # characters of YAML; a STATE.md is a few kilobytes
MAX_EXPANDED_NODES = 100_000  # values after aliases are expanded: stops alias bombs

_OPEN = re.compile(r"---[ \t]*(?:\r?\n|\Z)")
_MISSING = object()


class _Step(NamedTuple):
    """A node on a resolved path, with how its parent holds it."""

    node: Any
    parent: Any  # MappingNode, SequenceNode or None for the root
    key: Any  # the key node in a mapping parent
    pos: int  # the position in a sequence parent (0 for mapping values)


class Document:
    """A markdown file with YAML front matter that keeps every byte it does not change."""

    def __init__(self, bom: bytes, head: str, text: str, tail: str, body: bytes, path: str | None):
        self.path = path
        self._bom = bom
        self._head = head
        self._text = text
        self._tail = tail
        self._body = body
        self._shared: set[int] = set()
        self.newline = "\r\n" if (head or tail).endswith("\r\n") or _first_newline(body) == b"\r\n" else "\n"
        self._parse()

    # ----------------------------------------------------------------- reading

    @classmethod
    def from_bytes(cls, data: bytes, path: str | Path | None = None) -> Document:
        """Split `data` into BOM, front matter and body, and parse the front matter."""
        where = str(path) if path is not None else None
        bom = BOM if data.startswith(BOM) else b""
        rest = data[len(bom) :]
        if b"\x00" in rest[:8192]:
            raise ParseError("binary file (NUL bytes), not markdown", file=where, line=1, column=1)
        if not rest.startswith(b"---"):
            return cls(bom, "", "", "", rest, where)
        head_match = _OPEN.match(rest.decode("latin-1", errors="replace")[:64])
        if not head_match:
            return cls(bom, "", "", "", rest, where)
        close = _find_close(rest, head_match.end())
        if close is None:
            raise ParseError(
                "front matter opened with '---' on line 1 is never closed (no '---' or '...' line)",
                file=where,
                line=1,
                column=1,
            )
        start, end = close
        try:
            head = rest[: head_match.end()].decode("utf-8")
            text = rest[head_match.end() : start].decode("utf-8")
            tail = rest[start:end].decode("utf-8")
        except UnicodeDecodeError as exc:
            line = rest[: exc.start].count(b"\n") + 1
            raise ParseError(
                f"front matter is not UTF-8 text (byte 0x{rest[exc.start]:02x} at offset {exc.start})",
                file=where,
                line=line,
                column=1,
            ) from None
        if len(text) > MAX_FRONT_MATTER:
            raise ParseError(
                f"front matter is {len(text):,} characters; planstate reads at most {MAX_FRONT_MATTER:,}",
                file=where,
                line=2,
                column=1,
            )
        return cls(bom, head, text, tail, rest[end:], where)

    @classmethod
    def read(cls, path: str | Path) -> Document:
        """Read and parse the file at `path`."""
        return cls.from_bytes(Path(path).read_bytes(), path)

    def to_bytes(self) -> bytes:
        """Return the file's bytes: the original bytes wherever nothing was changed."""
        return self._bom + (self._head + self._text + self._tail).encode("utf-8") + self._body

    @property
    def has_front_matter(self) -> bool:
        """Tell whether the file has a front matter block (possibly empty)."""
        return bool(self._head)

    @property
    def front_matter_text(self) -> str:
        """The YAML text between the delimiter lines, as it is in the file."""
        return self._text

    @property
    def body(self) -> str:
        """The markdown body after the front matter, decoded as UTF-8."""
        return self._body.decode("utf-8", errors="surrogateescape")

    @property
    def body_line(self) -> int:
        """The 1-based line number where the body starts."""
        return (self._head + self._text + self._tail).count("\n") + 1

    def set_body(self, body: str) -> None:
        """Replace the markdown body."""
        self._body = body.encode("utf-8", errors="surrogateescape")

    @property
    def data(self) -> Any:
        """A deep copy of the front matter as plain Python data (None when empty)."""
        return copy.deepcopy(self._data)

    def get(self, path: str | list[Segment], default: Any = _MISSING) -> Any:
        """Return a copy of the value at `path`; raise UsageError (or return `default`) if missing."""
        segments = parse_path(path)
        value = self._data
        for i, seg in enumerate(segments):
            found, value = child(value, seg)
            if not found:
                if default is not _MISSING:
                    return default
                raise UsageError(f"no value at {format_path(segments[: i + 1])}", file=self.path)
        return copy.deepcopy(value)

    def locate(self, path: str | list[Segment]) -> tuple[int, int]:
        """Return the 1-based file line and column of `path`, or of its deepest existing parent."""
        segments = parse_path(path)
        line, col = (2, 1) if self._head else (1, 1)
        node = self._root
        for seg in segments:
            child = _node_child(node, seg)
            if child is None:
                break
            target = child.key if child.key is not None else child.node
            line, col = self._position(target.start_mark.index)
            node = child.node
        return line, col

    def _position(self, index: int) -> tuple[int, int]:
        """File line and column (1-based) of a character index in the front matter text."""
        before = self._text[:index]
        line = before.count("\n") + self._head.count("\n") + 1
        col = index - (before.rfind("\n") + 1) + 1
        return line, col

    # ----------------------------------------------------------------- parsing

    def _parse(self) -> None:
        """Parse the front matter text with ruamel.yaml (round-trip) into nodes and plain data."""
        self._indent_cache: yamltext.Indent | None = None
        if not self._text.strip():
            self._root, self._data = None, None
            return
        from ruamel.yaml import YAML
        from ruamel.yaml.error import MarkedYAMLError, YAMLError

        yaml = YAML(typ="rt")
        try:
            constructor, _parser = yaml.get_constructor_parser(io.StringIO(self._text))
            root = constructor.composer.get_single_node()
            _check_expansion(root, self)
            data = constructor.construct_document(root) if root is not None else None
        except MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            problem = exc.problem or exc.context or "invalid YAML"
            if exc.context and exc.problem and exc.context_mark is not None and exc.problem_mark is not None:
                ctx_line, _ = self._position(exc.context_mark.index)
                problem = f"{problem} ({exc.context} at line {ctx_line})"
            line, col = self._position(mark.index) if mark is not None else (2, 1)
            raise ParseError(problem, file=self.path, line=line, column=col) from None
        except YAMLError as exc:
            position = getattr(exc, "position", None)
            line, col = self._position(position) if isinstance(position, int) else (2, 1)
            message = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
            if hasattr(exc, "character") and hasattr(exc, "reason"):
                message = f"{exc.reason}: {exc.character!r}"
            raise ParseError(message, file=self.path, line=line, column=col) from None
        except RecursionError:
            raise ParseError("front matter nests too deeply", file=self.path, line=2, column=1) from None
        self._root = root
        self._data = to_plain(data)

    # ----------------------------------------------------------------- editing API

    def set(self, path: str | list[Segment], value: Any) -> None:
        """Set the value at `path`, creating missing mappings on the way, with a minimal edit."""
        segments = parse_path(path)
        found, current = self._lookup(segments)
        value = to_plain(value)
        if found:
            self.apply(diff(current, value, tuple(segments)))
            return
        # Find the deepest existing parent, then add one key holding the rest of the path.
        for depth in range(len(segments) - 1, -1, -1):
            ok, parent = self._lookup(segments[:depth])
            if ok:
                break
        nested: Any = value
        for seg in reversed(segments[depth + 1 :]):
            if isinstance(seg, int):
                raise UsageError(f"no list at {format_path(segments)} to index into", file=self.path)
            nested = {seg: nested}
        if isinstance(parent, list):
            raise UsageError(
                f"index {segments[depth]} is out of range at {format_path(segments[:depth])} "
                f"(length {len(parent)}); use append to add an item",
                file=self.path,
            )
        if parent is not None and not isinstance(parent, dict):
            raise UsageError(
                f"{format_path(segments[:depth]) or 'the front matter'} is a {type(parent).__name__}, not a mapping",
                file=self.path,
            )
        if isinstance(segments[depth], int):
            raise UsageError(f"{format_path(segments[:depth])} is not a list", file=self.path)
        if parent is None and depth > 0:
            self.apply([Op("replace", tuple(segments[:depth]), {segments[depth]: nested})])
        else:
            self.apply([Op("add", tuple(segments[: depth + 1]), nested)])

    def delete(self, path: str | list[Segment]) -> None:
        """Delete the key or list item at `path`, removing only its lines."""
        segments = parse_path(path)
        found, _ = self._lookup(segments)
        if not found:
            raise UsageError(f"no value at {format_path(segments)}", file=self.path)
        self.apply([Op("delete", tuple(segments))])

    def append(self, path: str | list[Segment], value: Any) -> None:
        """Append `value` to the list at `path` (created when missing or null)."""
        segments = parse_path(path)
        found, current = self._lookup(segments)
        value = to_plain(value)
        if found and current is not None:
            if not isinstance(current, list):
                raise UsageError(f"{format_path(segments)} is a {_kind(current)}, not a list", file=self.path)
            self.apply([Op("append", tuple(segments), value)])
        else:
            self.set(segments, [value])

    def update(self, new_data: Any) -> None:
        """Make the front matter equal `new_data` with the smallest edits."""
        self.apply(diff(self._data, to_plain(new_data)))

    def apply(self, ops: list[Op]) -> None:
        """Apply edits one by one; each is verified by re-parsing, or the document is left unchanged."""
        saved = (self._text, self._root, self._data, self._head, self._tail)
        try:
            for op in ops:
                self._apply_one(op)
        except BaseException:
            self._text, self._root, self._data, self._head, self._tail = saved
            self._indent_cache = None
            raise

    # ----------------------------------------------------------------- one edit

    def _lookup(self, segments: list[Segment]) -> tuple[bool, Any]:
        """Find the plain value at `segments`."""
        return get_in(self._data, segments)

    def _apply_one(self, op: Op) -> None:
        """Splice one edit into the text, re-parse, and check the data is exactly what was meant."""
        expected = copy.deepcopy(self._data)
        expected = apply_op(expected, op)
        if not self._head:
            self._create_front_matter()
        steps = self._resolve(list(op.path if op.kind != "add" else op.path[:-1]))
        target = steps[-1] if steps else None
        if op.kind == "replace":
            self._replace(target, op.value)
        elif op.kind == "add":
            self._add_key(target, op.path[-1], op.value)
        elif op.kind == "append":
            self._append(target, op.value)
        elif op.kind == "delete":
            self._delete(target)
        else:  # pragma: no cover - Op kinds are fixed above
            raise ValueError(op.kind)
        try:
            self._parse()
        except ParseError as exc:
            raise EditError(
                f"planstate could not write {format_path(op.path)} without breaking the YAML "
                f"({exc.message}); the file is unchanged",
                file=self.path,
            ) from None
        if not same(self._data, expected):
            raise EditError(
                f"planstate could not write {format_path(op.path)} without changing other values; "
                "the file is unchanged",
                file=self.path,
            )

    def _create_front_matter(self) -> None:
        """Give a file without front matter an empty one."""
        nl = "\r\n" if _first_newline(self._body) == b"\r\n" else "\n"
        self.newline = nl
        self._head, self._tail = "---" + nl, "---" + nl

    def _resolve(self, segments: list[Segment]) -> list[_Step]:
        """Return the nodes along `segments`; refuse paths through anchors, aliases and merges."""
        steps: list[_Step] = []
        node = self._root
        for i, seg in enumerate(segments):
            child = _node_child(node, seg)
            if child is None:
                raise EditError(
                    f"cannot edit {format_path(segments[: i + 1])}: it comes from a YAML merge key "
                    "or alias, not from text at this place",
                    file=self.path,
                )
            steps.append(child)
            node = child.node
        for step in steps:
            if id(step.node) in self._shared or getattr(step.node, "anchor", None):
                raise EditError(
                    f"cannot edit {format_path(segments)}: it is inside a YAML anchor or alias, "
                    "so the edit would change other values too",
                    file=self.path,
                )
        return steps

    # ---- text helpers

    def _line_start(self, i: int) -> int:
        return self._text.rfind("\n", 0, i) + 1

    def _line_end(self, i: int) -> int:
        """Index just after the newline of the line holding index `i`."""
        j = self._text.find("\n", i)
        return len(self._text) if j < 0 else j + 1

    def _after_line(self, end: int) -> int:
        """Index just after the newline of the line holding the character before `end`."""
        return self._line_end(max(end - 1, 0)) if end > 0 else self._line_end(0)

    def _eol(self, i: int) -> int:
        """Index of the newline (or CR LF) that ends the line holding index `i`."""
        j = self._text.find("\n", i)
        if j < 0:
            return len(self._text)
        return j - 1 if j > 0 and self._text[j - 1] == "\r" else j

    def _splice(self, start: int, end: int, new: str) -> None:
        self._text = self._text[:start] + new + self._text[end:]

    def _nl(self, lines: list[str]) -> str:
        return "".join(line + self.newline for line in lines)

    def _ensure_trailing_newline(self, at: int) -> int:
        """If `at` is the end of text without a final newline, add one; return the insert point."""
        if at == len(self._text) and self._text and not self._text.endswith("\n"):
            self._text += self.newline
            return len(self._text)
        return at

    def _colon(self, key: Any) -> int:
        """Index of the ':' that follows a mapping key node."""
        i = int(key.end_mark.index)
        text = self._text
        while i < len(text) and text[i] in " \t":
            i += 1
        if i < len(text) and text[i] == ":":
            return i
        raise EditError("cannot find the ':' after a key (complex keys are not supported)", file=self.path)

    def _empty(self, node: Any) -> bool:
        from ruamel.yaml.nodes import ScalarNode

        return isinstance(node, ScalarNode) and node.start_mark.index == node.end_mark.index and not node.value

    def _dashes(self, seq: Any) -> list[int]:
        """Indexes of the '-' of every item of a block sequence."""
        col = seq.start_mark.column
        dashes = [seq.start_mark.index]
        pattern = re.compile(rf"^ {{{col}}}-(?=[ \t\r\n]|$)", re.MULTILINE)
        pos = self._line_end(seq.start_mark.index)
        for m in pattern.finditer(self._text, pos, max(seq.end_mark.index, pos)):
            dashes.append(m.end() - 1)
        if len(dashes) != len(seq.value):
            # Content lines of an item can start with '-' at the same column only inside
            # scalars; fall back to item positions when the count does not match.
            raise EditError("cannot map list items to their lines", file=self.path)
        return dashes

    def _content_end(self, node: Any, fallback: int | None) -> int:
        """Index just after the last character of a node's own content (not trailing comments)."""
        from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

        if isinstance(node, ScalarNode):
            if self._empty(node):
                if fallback is None:
                    raise EditError("cannot place an empty value", file=self.path)
                return fallback
            if node.style in ("|", ">"):
                header = self._text[node.start_mark.index : self._eol(node.start_mark.index)]
                if "+" in header.split("#")[0]:
                    return int(node.end_mark.index)
                span = self._text[node.start_mark.index : node.end_mark.index]
                return int(node.start_mark.index) + len(span.rstrip())
            return int(node.end_mark.index)
        if getattr(node, "flow_style", False):
            return int(node.end_mark.index)
        if isinstance(node, MappingNode):
            key, value = node.value[-1]
            return self._content_end(value, self._colon(key) + 1)
        if isinstance(node, SequenceNode):
            dashes = self._dashes(node)
            return self._content_end(node.value[-1], dashes[-1] + 1)
        return int(node.end_mark.index)

    def _indent(self) -> yamltext.Indent:
        """The file's own indentation: mapping step, sequence dash step and item content offset."""
        if self._indent_cache is not None:
            return self._indent_cache
        from ruamel.yaml.nodes import MappingNode, SequenceNode

        maps: Counter[int] = Counter()
        seqs: Counter[int] = Counter()
        items: Counter[int] = Counter()

        def walk(node: Any, seen: set[int]) -> None:
            if node is None or id(node) in seen:
                return
            seen.add(id(node))
            if isinstance(node, MappingNode) and not node.flow_style:
                for key, value in node.value:
                    if getattr(value, "flow_style", True) is False and value.start_mark.line > key.start_mark.line:
                        step = value.start_mark.column - key.start_mark.column
                        (maps if isinstance(value, MappingNode) else seqs)[step] += 1
                    walk(value, seen)
            elif isinstance(node, SequenceNode) and not node.flow_style:
                for item in node.value:
                    if item.start_mark.line == node.start_mark.line and item is node.value[0]:
                        items[item.start_mark.column - node.start_mark.column] += 1
                    walk(item, seen)

        walk(self._root, set())
        guess = yamltext.Indent(
            mapping=_most_common(maps, 2, lambda s: s > 0),
            sequence=_most_common(seqs, 2, lambda s: s >= 0),
            item=_most_common(items, 2, lambda s: s > 0),
        )
        self._indent_cache = guess
        return guess

    def _in_flow(self, step: _Step | None) -> bool:
        return step is not None and bool(getattr(step.parent, "flow_style", False))

    # ---- replace

    def _anchor(self, step: _Step) -> int:
        """Where a value starts being written: just after its key's ':' or its item's '-'."""
        if step.key is not None:
            return self._colon(step.key) + 1
        if getattr(step.parent, "flow_style", False):
            return int(step.node.start_mark.index)
        return self._dashes(step.parent)[step.pos] + 1

    def _replace(self, step: _Step | None, value: Any) -> None:
        """Replace the node at `step` (None: the whole front matter) with `value`."""
        from ruamel.yaml.nodes import ScalarNode

        ind = self._indent()
        if step is None:
            if isinstance(value, dict | list) and value:
                self._text = self._nl(yamltext.block(value, 0, ind))
            else:
                self._text = self._nl([yamltext.flow(value)])
            return
        node = step.node
        in_flow = self._in_flow(step)
        block_scalar = isinstance(node, ScalarNode) and node.style in ("|", ">")
        empty = self._empty(node)
        collection = not isinstance(node, ScalarNode)
        inline_node = not block_scalar and not empty and (not collection or bool(node.flow_style))
        literal = isinstance(value, str) and yamltext.literal_ok(value) and ("\n" in value or block_scalar)
        block = not in_flow and ((isinstance(value, dict | list) and bool(value)) or literal)

        if not block:
            inline = yamltext.flow(value) if isinstance(value, dict | list) else None
            if inline is None:
                style = node.style if isinstance(node, ScalarNode) and node.style in ("'", '"') else None
                inline = yamltext.scalar(value, style=style, flow=in_flow)
            if inline_node:
                self._splice(node.start_mark.index, node.end_mark.index, inline)
            elif empty:
                at = self._anchor(step)
                self._splice(at, at, inline if in_flow else " " + inline)
            else:  # a block scalar or block collection becomes one inline value
                at = self._anchor(step)
                end = self._after_line(self._content_end(node, None))
                rest = self._header_rest(node) if block_scalar else ""
                self._splice(at, end, " " + inline + rest + self.newline)
            return

        # The new value is a block: text after the anchor, then indented lines.
        if step.key is not None:
            base = step.key.start_mark.column
            if isinstance(value, dict):
                col = base + ind.mapping
            elif isinstance(value, list):
                col = base + ind.sequence
            else:
                col = self._literal_col(node, base + ind.mapping)
        else:
            col = (
                self._dashes(step.parent)[step.pos]
                - self._line_start(self._dashes(step.parent)[step.pos])
                + ind.item
            )
            if block_scalar:
                col = self._literal_col(node, col)
        if isinstance(value, str):
            lines = yamltext.literal_block(value, col)
            head, following = " " + lines[0], lines[1:]
        elif step.key is not None:
            head, following = "", yamltext.block(value, col, ind)
        else:
            lines = yamltext.block(value, col, ind)
            head, following = " " + lines[0].lstrip(" "), lines[1:]
        at = self._anchor(step)
        if inline_node or empty:
            region_end = node.end_mark.index if inline_node else at
            line_end = self._eol(region_end)
            rest = self._text[region_end:line_end]
            after = self._line_end(region_end)
        else:
            rest = self._header_rest(node) if block_scalar else ""
            after = self._after_line(self._content_end(node, None))
        self._text = self._text[:at] + head + rest + self.newline + self._nl(following) + self._text[after:]

    def _header_rest(self, node: Any) -> str:
        """The text after a block scalar's indicators on its header line (spaces and a comment)."""
        start = node.start_mark.index
        header = self._text[start : self._eol(start)]
        m = re.match(r"[|>][-+0-9]*", header)
        return header[m.end() :] if m else ""

    def _literal_col(self, node: Any, default: int) -> int:
        """The content column of an existing block scalar, or `default`."""
        from ruamel.yaml.nodes import ScalarNode

        if not (isinstance(node, ScalarNode) and node.style in ("|", ">")):
            return default
        content = self._text[self._line_end(node.start_mark.index) : node.end_mark.index]
        first = next((ln for ln in content.split("\n") if ln.strip()), "")
        return len(first) - len(first.lstrip(" ")) if first else default

    # ---- add a key

    def _add_key(self, step: _Step | None, key: Segment, value: Any) -> None:
        """Add `key: value` at the end of the mapping at `step` (None: the top level)."""
        from ruamel.yaml.nodes import MappingNode

        ind = self._indent()
        node = self._root if step is None else step.node
        if node is None:  # empty front matter (maybe only comments): append at the end
            at = self._ensure_trailing_newline(len(self._text))
            self._splice(at, at, self._nl(yamltext.entry(key, value, 0, ind)))
            return
        if not isinstance(node, MappingNode):
            raise UsageError("cannot add a key to a value that is not a mapping", file=self.path)
        if node.flow_style:
            if not node.value:
                if step is not None and not self._in_flow(step):
                    self._replace(step, {key: value})
                    return
                self._splice(
                    node.start_mark.index + 1,
                    node.end_mark.index - 1,
                    f"{yamltext.key_text(key, flow=True)}: {yamltext.flow(value)}",
                )
                return
            last_key, last_value = node.value[-1]
            at = self._content_end(last_value, self._colon(last_key) + 1)
            self._splice(at, at, f", {yamltext.key_text(key, flow=True)}: {yamltext.flow(value)}")
            return
        first_key = node.value[0][0]
        col = first_key.start_mark.column
        last_key, last_value = node.value[-1]
        at = self._after_line(self._content_end(last_value, self._colon(last_key) + 1))
        at = self._ensure_trailing_newline(at)
        self._splice(at, at, self._nl(yamltext.entry(key, value, col, ind)))

    # ---- append to a list

    def _append(self, step: _Step | None, value: Any) -> None:
        """Append an item to the list at `step`."""
        from ruamel.yaml.nodes import MappingNode, SequenceNode

        node = self._root if step is None else step.node
        if not isinstance(node, SequenceNode):
            raise UsageError("cannot append to a value that is not a list", file=self.path)
        if node.flow_style:
            if not node.value:
                if step is not None and not self._in_flow(step):
                    self._replace(step, [value])
                    return
                self._splice(node.start_mark.index + 1, node.end_mark.index - 1, yamltext.flow(value))
                return
            at = self._content_end(node.value[-1], None)
            self._splice(at, at, ", " + yamltext.flow(value))
            return
        ind = self._indent()
        dashes = self._dashes(node)
        col = node.start_mark.column
        first = node.value[0]
        offset = ind.item
        if not self._empty(first) and first.start_mark.line == node.start_mark.line:
            offset = first.start_mark.column - col
        item_ind = ind._replace(item=offset)
        last = node.value[-1]
        if isinstance(value, dict) and value and isinstance(last, MappingNode) and last.flow_style:
            lines = [" " * col + "-" + " " * (offset - 1) + yamltext.flow(value)]
        else:
            lines = yamltext.block([value], col, item_ind)
        at = self._after_line(self._content_end(last, dashes[-1] + 1))
        at = self._ensure_trailing_newline(at)
        self._splice(at, at, self._nl(lines))

    # ---- delete

    def _delete(self, step: _Step | None) -> None:
        """Delete the mapping entry or list item at `step`."""
        from ruamel.yaml.nodes import MappingNode

        if step is None:
            self._text = ""
            return
        parent = step.parent
        siblings = parent.value
        if len(siblings) == 1:
            grand = self._parent_step(parent)
            empty: Any = {} if isinstance(parent, MappingNode) else []
            if grand is None:
                self._text = ""
            else:
                self._replace(grand, empty)
            return
        if parent.flow_style:
            self._delete_flow(step)
            return
        if isinstance(parent, MappingNode):
            i = next(n for n, (k, _) in enumerate(siblings) if k is step.key)
            start = step.key.start_mark.index
            end = self._after_line(self._content_end(step.node, self._colon(step.key) + 1))
            ls = self._line_start(start)
            if self._text[ls:start].strip(" "):
                # First key of a list item (`- a: 1`): pull the next key up onto the dash line.
                if i + 1 >= len(siblings):
                    raise EditError("cannot delete this key without rewriting its list item", file=self.path)
                self._splice(start, siblings[i + 1][0].start_mark.index, "")
                return
            self._splice(ls, end, "")
            return
        dashes = self._dashes(parent)
        dash = dashes[step.pos]
        ls = self._line_start(dash)
        if self._text[ls:dash].strip(" "):
            raise EditError("cannot delete an item of a list that starts mid-line", file=self.path)
        end = self._after_line(self._content_end(step.node, dash + 1))
        self._splice(ls, end, "")

    def _delete_flow(self, step: _Step) -> None:
        """Delete an entry of a flow collection with its comma."""
        parent = step.parent
        items = [k for k, _ in parent.value] if step.key is not None else list(parent.value)
        i = step.pos if step.key is None else next(n for n, k in enumerate(items) if k is step.key)
        end_node = step.node
        if i + 1 < len(items):
            self._splice(items[i].start_mark.index, items[i + 1].start_mark.index, "")
        else:
            prev_end = self._content_end(parent.value[i - 1][1] if step.key is not None else parent.value[i - 1], None)
            self._splice(prev_end, self._content_end(end_node, None), "")

    def _parent_step(self, node: Any) -> _Step | None:
        """Find the step (key or index in its parent) that holds `node`; None for the root."""
        from ruamel.yaml.nodes import MappingNode, SequenceNode

        def walk(cur: Any) -> _Step | None:
            if isinstance(cur, MappingNode):
                for k, v in cur.value:
                    if v is node:
                        return _Step(v, cur, k, 0)
                    found = walk(v)
                    if found:
                        return found
            elif isinstance(cur, SequenceNode):
                for i, v in enumerate(cur.value):
                    if v is node:
                        return _Step(v, cur, None, i)
                    found = walk(v)
                    if found:
                        return found
            return None

        return None if node is self._root else walk(self._root)


def _first_newline(data: bytes) -> bytes:
    i = data.find(b"\n")
    return b"\r\n" if i > 0 and data[i - 1 : i] == b"\r" else b"\n"


def _find_close(rest: bytes, start: int) -> tuple[int, int] | None:
    """Find the closing delimiter line after `start`: return its start and end offsets."""
    # Delimiters are ASCII, so a byte-level search is safe for any UTF-8 content.
    pattern = re.compile(rb"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.MULTILINE)
    m = pattern.search(rest, start)
    if m is None:
        return None
    if m.start() != start and rest[m.start() - 1 : m.start()] != b"\n":
        return None
    return m.start(), m.end()


def _check_expansion(root: Any, doc: Document) -> None:
    """Refuse documents whose aliases expand to too many values, and note shared nodes."""
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    sizes: dict[int, int] = {}
    seen: Counter[int] = Counter()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if node is None:
            continue
        if done:
            if isinstance(node, MappingNode):
                total = 1 + sum(sizes[id(k)] + sizes[id(v)] for k, v in node.value)
            elif isinstance(node, SequenceNode):
                total = 1 + sum(sizes[id(v)] for v in node.value)
            else:
                total = 1
            sizes[id(node)] = total
            if total > MAX_EXPANDED_NODES:
                raise ParseError(
                    f"front matter expands to more than {MAX_EXPANDED_NODES:,} values through aliases (an alias bomb?)",
                    file=doc.path,
                    line=2,
                    column=1,
                )
            continue
        seen[id(node)] += 1
        if id(node) in sizes or seen[id(node)] > 1:
            continue
        stack.append((node, True))
        if isinstance(node, MappingNode):
            for k, v in node.value:
                stack.append((k, False))
                stack.append((v, False))
        elif isinstance(node, SequenceNode):
            stack.extend((v, False) for v in node.value)
    doc._shared = {nid for nid, count in seen.items() if count > 1}


def _most_common(counter: Counter[int], default: int, valid: Any) -> int:
    for value, _count in counter.most_common():
        if valid(value):
            return value
    return default


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "mapping"
    if isinstance(value, list):
        return "list"
    return type(value).__name__


def _node_child(node: Any, seg: Segment) -> _Step | None:
    """Step into a node by key or index."""
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    if isinstance(node, MappingNode):
        for key, value in node.value:
            if getattr(key, "value", None) == str(seg) and not isinstance(key.value, list):
                return _Step(value, node, key, 0)
        return None
    if isinstance(node, SequenceNode):
        try:
            index = int(seg)
        except ValueError:
            return None
        if -len(node.value) <= index < len(node.value):
            index %= len(node.value)
            return _Step(node.value[index], node, None, index)
    return None
