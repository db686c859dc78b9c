"""Markdown with YAML front matter: bytes in, bytes out, edits spliced into the original text."""

from __future__ import annotations

import copy
import functools
import io
import itertools
import re
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

from planstate.core.errors import EditError, ParseError, UsageError
from planstate.text import yamltext
from planstate.text.paths import Segment, child, format_path, get_in, parse_path
from planstate.text.plaindata import Op, apply_op, diff, same, to_plain

BOM = b"\xef\xbb\xbf"
MAX_FRONT_MATTER = 1 << 20  # characters of YAML; a STATE.md is a few kilobytes
MAX_EXPANDED_NODES = 100_000  # values after aliases are expanded: stops alias bombs
MAX_DEPTH = 100  # nested collections; deeper flow nesting makes the YAML scanner quadratic

MERGE_TAG = "tag:yaml.org,2002:merge"
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
        self._merges: dict[int, list[tuple[Any, Any]]] = {}  # `<<` entries, which ruamel drops from its nodes
        self._literals = True  # write multi-line strings as literal block scalars
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
        except UnicodeDecodeError:
            bad = _first_bad_utf8(rest, end)
            line_start = rest.rfind(b"\n", 0, bad) + 1
            line = rest[:bad].count(b"\n") + 1
            column = len(rest[line_start:bad].decode("utf-8", errors="replace")) + 1
            raise ParseError(
                f"front matter is not UTF-8 text (byte 0x{rest[bad]:02x} at offset {len(bom) + bad})",
                file=where,
                line=line,
                column=column,
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

    def require_front_matter(self) -> None:
        """Raise UsageError (naming the file, line 1) unless the file has a front matter block."""
        if not self._head:
            raise UsageError("has no front matter (it must start with a '---' line)", file=self.path, line=1)

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
        yaml.Scanner = _scanner_class()
        try:  # as YAML.load does; a `%YAML` or `%TAG` line needs it
            from ruamel.yaml.docinfo import DocInfo

            yaml.doc_infos.append(DocInfo())
        except ImportError:  # pragma: no cover - older ruamel.yaml keeps no document info
            pass
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
            self._apply_diff(current, value, tuple(segments))
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
        if isinstance(parent, list) and not re.fullmatch(r"-?\d+", str(segments[depth])):
            where = format_path(segments[:depth]) or "the front matter"
            raise UsageError(f"{where} is a list; {segments[depth]!r} is not an index", file=self.path)
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
        self._apply_diff(self._data, to_plain(new_data), ())

    def _apply_diff(self, old: Any, new: Any, path: tuple[Segment, ...]) -> None:
        """Apply the edits that turn `old` (the value at `path`) into `new`."""
        ops = diff(old, new, path)
        try:
            self.apply(ops)
        except EditError:
            if not any(op.kind == "insert" for op in ops):
                raise
            # A list this text cannot insert into (`- - a`): rewrite its items in place instead.
            self.apply(diff(old, new, path, inserts=False))

    def insert(self, path: str | list[Segment], value: Any) -> None:
        """Insert `value` into a list before the existing item at `path` (which ends with its index)."""
        segments = parse_path(path)
        found, _ = self._lookup(segments)
        parent_found, parent = self._lookup(segments[:-1])
        if not (found and parent_found and isinstance(parent, list)):
            raise UsageError(f"no list item at {format_path(segments)} to insert before", file=self.path)
        index = int(segments[-1]) % len(parent)
        self.apply([Op("insert", (*segments[:-1], index), to_plain(value))])

    def apply(self, ops: list[Op]) -> None:
        """Apply edits one by one; each is verified by re-parsing, or the document is left unchanged."""
        if len(ops) > 1 and self._apply_scalars(ops):
            return
        saved = self._save()
        try:
            for op in ops:
                self._apply_one(op)
        except BaseException:
            self._restore(saved)
            raise

    def _apply_scalars(self, ops: list[Op]) -> bool:
        """Apply edits that each replace one inline scalar by a one-line scalar with a single re-parse.

        The spans are spliced from the last to the first, so the positions the parser gave stay valid,
        then the whole result is verified once. Returns False (the document unchanged) when any edit is
        of another kind or anything fails, and `apply` then goes edit by edit, which says exactly why.
        """
        from ruamel.yaml.nodes import ScalarNode

        if not self._head or not all(op.kind == "replace" and _one_line_scalar(op.value) for op in ops):
            return False
        saved = self._save()
        try:
            expected = copy.deepcopy(self._data)
            spans: list[tuple[int, int, str]] = []
            for op in ops:
                expected = apply_op(expected, op)
                steps = self._resolve(list(op.path))
                step = steps[-1] if steps else None
                node = step.node if step is not None else None
                if not isinstance(node, ScalarNode) or node.style in ("|", ">") or self._empty(node):
                    raise EditError("not an inline scalar")
                style = node.style if node.style in ("'", '"') else None
                text = yamltext.scalar(op.value, style=style, flow=self._in_flow(step))
                spans.append((node.start_mark.index, node.end_mark.index, text))
            spans.sort(reverse=True)
            if any(later[0] < earlier[1] for later, earlier in itertools.pairwise(spans)):
                raise EditError("overlapping edits")
            for start, end, text in spans:
                self._splice(start, end, text)
            self._parse()
            if not same(self._data, expected):
                raise EditError("the batch changed other values")
        except (EditError, ParseError, UsageError):
            self._restore(saved)
            return False
        except BaseException:
            self._restore(saved)
            raise
        return True

    def _save(self) -> tuple[Any, ...]:
        """Everything an edit may change, to put back when it fails."""
        return (self._text, self._root, self._data, self._head, self._tail, self._shared, self._merges, self.newline)

    def _restore(self, saved: tuple[Any, ...]) -> None:
        """Put back a state taken by `_save`."""
        (self._text, self._root, self._data, self._head, self._tail, self._shared, self._merges, self.newline) = saved
        self._indent_cache = None

    # ----------------------------------------------------------------- one edit

    def _lookup(self, segments: list[Segment]) -> tuple[bool, Any]:
        """Find the plain value at `segments`."""
        return get_in(self._data, segments)

    def _apply_one(self, op: Op) -> None:
        """Splice one edit into the text, re-parse, and check the data is exactly what was meant."""
        expected = apply_op(copy.deepcopy(self._data), op)
        saved = self._save()
        try:
            self._edit(op, expected)
        except EditError:
            if op.kind == "delete" or not _has_text(op.value):
                raise
            # A literal block scalar can take in blank or deeper-indented lines that follow it:
            # write the same edit with double-quoted strings instead.
            self._restore(saved)
            self._literals = False
            try:
                self._edit(op, expected)
            finally:
                self._literals = True

    def _edit(self, op: Op, expected: Any) -> None:
        """Make one edit in the text and verify it by re-parsing."""
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
        elif op.kind == "insert":
            self._insert(target, op.value)
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
        if not same(self._data, expected) and not self._same_in_merge_order(op, expected):
            raise EditError(
                f"planstate could not write {format_path(op.path)} without changing other values; "
                "the file is unchanged",
                file=self.path,
            )

    def _same_in_merge_order(self, op: Op, expected: Any) -> bool:
        """Tell whether the data is `expected` with an added key before the keys a `<<` merge brings in."""
        if op.kind != "add" or not self._merges:
            return False
        found, actual = get_in(self._data, list(op.path[:-1]))
        wanted = copy.deepcopy(expected)
        _ok, parent = get_in(wanted, list(op.path[:-1]))
        if not (found and isinstance(actual, dict) and isinstance(parent, dict) and set(actual) == set(parent)):
            return False
        items = dict(parent)
        parent.clear()
        parent.update((key, items[key]) for key in actual)
        return same(self._data, wanted)

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
            return self._entry_end(*self._entries(node)[-1])
        if isinstance(node, SequenceNode):
            dashes = self._dashes(node)
            return self._content_end(node.value[-1], dashes[-1] + 1)
        return int(node.end_mark.index)

    def _entries(self, node: Any) -> list[tuple[Any, Any]]:
        """A mapping's entries in text order, with the `<<` merge entries ruamel leaves out of `node.value`."""
        merges = self._merges.get(id(node))
        if not merges:
            return list(node.value)
        return sorted([*node.value, *merges], key=lambda kv: int(kv[0].start_mark.index))

    def _entry_end(self, key: Any, value: Any) -> int:
        """Index just after the content of a mapping entry's value (for `<<: *alias`, after the alias)."""
        colon = self._colon(key)
        if key.tag == MERGE_TAG and value.start_mark.index < colon:  # an alias: its node is elsewhere
            m = re.compile(r"[ \t]*\*[^\s,\[\]{}]+").match(self._text, colon + 1)
            if m is None:
                raise EditError("cannot find the alias after a merge key '<<'", file=self.path)
            return m.end()
        return self._content_end(value, colon + 1)

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
                    if item is node.value[0] and item.start_mark.line == node.start_mark.line and not self._empty(item):
                        items[item.start_mark.column - node.start_mark.column] += 1
                    walk(item, seen)

        walk(self._root, set())
        guess = yamltext.Indent(
            mapping=_most_common(maps, 2, lambda s: s > 0),
            sequence=_most_common(seqs, 2, lambda s: s >= 0),
            item=_most_common(items, 2, lambda s: s >= 2),  # a dash needs a space after it
        )
        self._indent_cache = guess
        return guess

    def _item_offset(self, seq: Any, ind: yamltext.Indent) -> int:
        """How far a block sequence's items start from their dash: from its first item, else the file's habit."""
        first = seq.value[0]
        if not self._empty(first) and first.start_mark.line == seq.start_mark.line:
            return max(int(first.start_mark.column - seq.start_mark.column), 2)
        return ind.item

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
                self._text = self._nl(yamltext.block(value, 0, ind, literals=self._literals))
            else:
                self._text = self._nl([yamltext.flow(value)])
            return
        node = step.node
        in_flow = self._in_flow(step)
        block_scalar = isinstance(node, ScalarNode) and node.style in ("|", ">")
        empty = self._empty(node)
        collection = not isinstance(node, ScalarNode)
        inline_node = not block_scalar and not empty and (not collection or bool(node.flow_style))
        literal = (
            self._literals and isinstance(value, str) and yamltext.literal_ok(value) and ("\n" in value or block_scalar)
        )
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
                if in_flow:
                    self._splice(at, at, inline)
                else:  # `key: ` or `- `: write over trailing spaces, but keep a comment
                    spaces = self._text[at : self._eol(at)]
                    self._splice(at, at + (len(spaces) if not spaces.strip(" \t") else 0), " " + inline)
            else:  # a block scalar or block collection becomes one inline value
                at = self._anchor(step)
                end = self._after_line(self._content_end(node, None))
                rest = self._header_rest(node) if block_scalar else self._comment_after(at)
                self._splice(at, end, " " + inline + rest + self.newline)
            return

        # The new value is a block: text after the anchor, then indented lines.
        if step.key is not None:
            base = parent_col = step.key.start_mark.column
            if isinstance(value, dict):
                col = base + ind.mapping
            elif isinstance(value, list):
                col = base + ind.sequence
            else:
                col = self._literal_col(node, base + ind.mapping)
        else:
            dash = self._dashes(step.parent)[step.pos]
            parent_col = dash - self._line_start(dash)
            offset = self._item_offset(step.parent, ind)
            col = parent_col + offset
            if block_scalar:
                col = self._literal_col(node, col)
        if isinstance(value, str):
            lines = yamltext.literal_block(value, col, parent_col)
            head, following = " " + lines[0], lines[1:]
        elif step.key is not None:
            head, following = "", yamltext.block(value, col, ind, literals=self._literals)
        else:  # the first line goes on the dash line, as far from the dash as the other items' content
            lines = yamltext.block(value, col, ind, literals=self._literals)
            head, following = " " * (offset - 1) + lines[0].lstrip(" "), lines[1:]
        at = self._anchor(step)
        if inline_node or empty:
            region_end = node.end_mark.index if inline_node else at
            line_end = self._eol(region_end)
            rest = self._text[region_end:line_end]
            rest = rest if rest.strip(" \t") else ""  # keep a comment, not trailing spaces
            after = self._line_end(region_end)
        else:
            rest = self._header_rest(node) if block_scalar else self._comment_after(at)
            after = self._after_line(self._content_end(node, None))
        self._text = self._text[:at] + head + rest + self.newline + self._nl(following) + self._text[after:]

    def _comment_after(self, at: int) -> str:
        """The comment that ends the line from `at` (with the spaces before it), or ''.

        Keeps `key:  # note` when the block collection under the key is replaced.
        """
        rest = self._text[at : self._eol(at)]
        return rest if rest.lstrip(" \t").startswith("#") else ""

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
            self._splice(at, at, self._nl(yamltext.entry(key, value, 0, ind, literals=self._literals)))
            return
        if not isinstance(node, MappingNode):
            raise UsageError("cannot add a key to a value that is not a mapping", file=self.path)
        entries = self._entries(node)
        if node.flow_style:
            if not entries:
                if step is not None and not self._in_flow(step):
                    self._replace(step, {key: value})
                    return
                self._splice(
                    node.start_mark.index + 1,
                    node.end_mark.index - 1,
                    f"{yamltext.key_text(key, flow=True)}: {yamltext.flow(value)}",
                )
                return
            at = self._entry_end(*entries[-1])
            entry = f", {yamltext.key_text(key, flow=True)}: {yamltext.flow(value)}"
            if self._text[node.start_mark.index] == "{":
                self._splice(at, at, entry)
            else:  # a single pair in a flow list (`[key: value]`) has no braces: give it some
                self._splice(at, at, entry + "}")
                self._splice(node.start_mark.index, node.start_mark.index, "{")
            return
        col = entries[0][0].start_mark.column
        at = self._after_line(self._entry_end(*entries[-1]))
        at = self._ensure_trailing_newline(at)
        self._splice(at, at, self._nl(yamltext.entry(key, value, col, ind, literals=self._literals)))

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
        offset = self._item_offset(node, ind)
        item_ind = ind._replace(item=offset)
        last = node.value[-1]
        if isinstance(value, dict) and value and isinstance(last, MappingNode) and last.flow_style:
            lines = [" " * col + "-" + " " * (offset - 1) + yamltext.flow(value)]
        else:
            lines = yamltext.block([value], col, item_ind, literals=self._literals)
        at = self._after_line(self._content_end(last, dashes[-1] + 1))
        at = self._ensure_trailing_newline(at)
        self._splice(at, at, self._nl(lines))

    # ---- insert into a list

    def _insert(self, step: _Step | None, value: Any) -> None:
        """Insert an item before the list item at `step`, written like its siblings."""
        from ruamel.yaml.nodes import MappingNode, SequenceNode

        if step is None or not isinstance(step.parent, SequenceNode):
            raise UsageError("cannot insert into a value that is not a list", file=self.path)
        node = step.parent
        if node.flow_style:
            at = int(step.node.start_mark.index)
            if at >= node.end_mark.index - 1 or self._text[at : at + 1] in (",", "]"):
                raise EditError("cannot place an item before an empty value", file=self.path)
            self._splice(at, at, yamltext.flow(value) + ", ")
            return
        ind = self._indent()
        dashes = self._dashes(node)
        col = node.start_mark.column
        offset = self._item_offset(node, ind)
        neighbour = node.value[step.pos]
        if isinstance(value, dict) and value and isinstance(neighbour, MappingNode) and neighbour.flow_style:
            lines = [" " * col + "-" + " " * (offset - 1) + yamltext.flow(value)]
        else:
            lines = yamltext.block([value], col, ind._replace(item=offset), literals=self._literals)
        if step.pos > 0:
            # Right after the item before it: comment lines above the next item stay with that item.
            at = self._after_line(self._content_end(node.value[step.pos - 1], dashes[step.pos - 1] + 1))
        else:
            at = self._line_start(dashes[0])
            if self._text[at : dashes[0]].strip(" "):
                raise EditError("cannot insert before an item that starts on its parent's line", file=self.path)
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
        siblings = self._entries(parent) if isinstance(parent, MappingNode) else parent.value
        if len(siblings) == 1:
            grand = self._parent_step(parent)
            empty: Any = {} if isinstance(parent, MappingNode) else []
            if grand is not None:
                self._replace(grand, empty)
                return
            if parent.flow_style:
                self._text = ""
                return
            # The last top-level entry: remove its lines and keep the comments around it.
        elif parent.flow_style:
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
            self._splice(ls, self._skip_blank_lines_after_keep(ls, start, end), "")
            return
        dashes = self._dashes(parent)
        dash = dashes[step.pos]
        ls = self._line_start(dash)
        if self._text[ls:dash].strip(" "):
            # First item of a list that starts on its parent's line (`- - a`): pull the next item up.
            self._splice(dash, dashes[step.pos + 1], "")
            return
        end = self._after_line(self._content_end(step.node, dash + 1))
        self._splice(ls, self._skip_blank_lines_after_keep(ls, dash, end), "")

    def _skip_blank_lines_after_keep(self, ls: int, start: int, end: int) -> int:
        """Where a deletion of lines `ls`..`end` must stop: past blank lines a `|+` scalar above would take in."""
        from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

        keep_ends_here = False
        stack: list[Any] = [self._root]
        while stack and not keep_ends_here:
            node = stack.pop()
            if isinstance(node, ScalarNode):
                keep_ends_here = node.style in ("|", ">") and ls <= node.end_mark.index <= start and self._keeps(node)
            elif isinstance(node, MappingNode):
                stack.extend(v for _k, v in node.value)
            elif isinstance(node, SequenceNode):
                stack.extend(node.value)
        if not keep_ends_here:
            return end
        while end < len(self._text) and not self._text[end : self._eol(end)].strip(" \t"):
            end = self._line_end(end)
        return end

    def _keeps(self, node: Any) -> bool:
        """Tell whether a block scalar keeps its trailing blank lines (`|+`, `>+`)."""
        header = self._text[node.start_mark.index : self._eol(node.start_mark.index)]
        return "+" in header.split("#")[0]

    def _delete_flow(self, step: _Step) -> None:
        """Delete an entry of a flow collection with its comma."""
        parent = step.parent
        if step.key is not None:
            entries = self._entries(parent)
            i = next(n for n, (k, _) in enumerate(entries) if k is step.key)
            starts = [k.start_mark.index for k, _ in entries]
            prev_end = self._entry_end(*entries[i - 1]) if i else 0
        else:
            i = step.pos
            starts = [v.start_mark.index for v in parent.value]
            prev_end = self._content_end(parent.value[i - 1], None) if i else 0
        if i + 1 < len(starts):
            self._splice(starts[i], starts[i + 1], "")
        else:
            self._splice(prev_end, self._content_end(step.node, None), "")

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


def _one_line_scalar(value: Any) -> bool:
    """Tell whether a value is a scalar written on one line (not a collection, not multi-line text)."""
    if isinstance(value, dict | list):
        return False
    return not (isinstance(value, str) and ("\n" in value or "\r" in value))


def _has_text(value: Any) -> bool:
    """Tell whether a value holds a string (which may be written as a literal block)."""
    if isinstance(value, dict):
        return any(_has_text(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_text(v) for v in value)
    return isinstance(value, str)


def _first_newline(data: bytes) -> bytes:
    i = data.find(b"\n")
    return b"\r\n" if i > 0 and data[i - 1 : i] == b"\r" else b"\n"


def _first_bad_utf8(data: bytes, end: int) -> int:
    """The offset of the first byte in `data[:end]` that is not part of valid UTF-8."""
    try:
        data[:end].decode("utf-8")
    except UnicodeDecodeError as exc:
        return int(exc.start)
    return end  # pragma: no cover - only called when decoding failed


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


@functools.cache
def _scanner_class() -> Any:
    """A ruamel round-trip scanner that refuses flow collections nested more than MAX_DEPTH deep."""
    from ruamel.yaml.error import MarkedYAMLError
    from ruamel.yaml.scanner import RoundTripScanner

    class Scanner(RoundTripScanner):
        """RoundTripScanner with a nesting limit (its simple-key bookkeeping is quadratic in depth)."""

        def fetch_flow_collection_start(self, token_class: Any, to_push: str) -> None:
            """Open a flow collection, unless that nests too deeply."""
            if len(self.flow_context) >= MAX_DEPTH:
                raise MarkedYAMLError(
                    problem=f"front matter nests more than {MAX_DEPTH} levels deep",
                    problem_mark=self.reader.get_mark(),
                )
            super().fetch_flow_collection_start(token_class, to_push)

    return Scanner


def _check_expansion(root: Any, doc: Document) -> None:
    """Refuse alias bombs, recursive aliases, deep nesting and non-scalar keys; note shared nodes."""
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    def refuse(message: str, node: Any = None) -> ParseError:
        line, col = doc._position(node.start_mark.index) if node is not None else (2, 1)
        return ParseError(message, file=doc.path, line=line, column=col)

    merges: dict[int, list[tuple[Any, Any]]] = {}
    sizes: dict[int, int] = {}  # values after expanding aliases
    heights: dict[int, int] = {}  # nesting levels after expanding aliases
    seen: Counter[int] = Counter()
    open_nodes: set[int] = set()  # collections whose children are still being walked
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if node is None:
            continue
        if done:
            open_nodes.discard(id(node))
            children = [x for kv in node.value for x in kv] if isinstance(node, MappingNode) else node.value
            sizes[id(node)] = 1 + sum(sizes[id(c)] for c in children)
            heights[id(node)] = 1 + max((heights[id(c)] for c in children), default=0)
            if sizes[id(node)] > MAX_EXPANDED_NODES:
                raise refuse(
                    f"front matter expands to more than {MAX_EXPANDED_NODES:,} values through aliases (an alias bomb?)"
                )
            if heights[id(node)] > MAX_DEPTH:
                raise refuse(f"front matter nests more than {MAX_DEPTH} levels deep", node)
            continue
        if id(node) in open_nodes:
            raise refuse("an alias refers to a value that contains it (a recursive alias)", node)
        seen[id(node)] += 1
        if id(node) in sizes or seen[id(node)] > 1:
            continue
        if isinstance(node, MappingNode):
            open_nodes.add(id(node))
            stack.append((node, True))
            for k, v in node.value:
                if not isinstance(k, ScalarNode):
                    raise refuse("a mapping key is a list or mapping; keys must be plain values", k)
                if k.tag == MERGE_TAG:
                    merges.setdefault(id(node), []).append((k, v))
                stack.append((k, False))
                stack.append((v, False))
        elif isinstance(node, SequenceNode):
            open_nodes.add(id(node))
            stack.append((node, True))
            stack.extend((v, False) for v in node.value)
        else:
            sizes[id(node)] = heights[id(node)] = 1
    doc._shared = {nid for nid, count in seen.items() if count > 1}
    doc._merges = merges


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
