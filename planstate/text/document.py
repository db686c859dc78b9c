"""The edit API over one markdown file with YAML front matter: read values, locate them, splice in minimal edits."""

from __future__ import annotations

import copy
import itertools
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.core.errors import EditError, ParseError, UsageError
from planstate.text import envelope, limits, parser
from planstate.text.nodes import Children, Step
from planstate.text.paths import Segment, format_path, get_in, parse_path
from planstate.text.paths import child as child_value
from planstate.text.plaindata import Op, apply_op, clone, diff, same, to_plain

if TYPE_CHECKING:
    from planstate.text.spans import LineIndex
    from planstate.text.yamltext import Indent

_MISSING = object()


class Document:
    """A markdown file with YAML front matter that keeps every byte it does not change."""

    def __init__(
        self, bom: bytes, head: str, text: str, tail: str, body: bytes, path: str | None, data: Any = _MISSING
    ):
        self.path = path
        self._bom = bom
        self._head = head
        self._text = text
        self._tail = tail
        self._body = body
        self._shared: set[int] = set()
        self._merges: dict[int, list[tuple[Any, Any]]] = {}  # `<<` entries, which ruamel drops from its nodes
        self._literals = True  # write multi-line strings as literal block scalars
        self._lines: LineIndex | None = None
        self.newline = envelope.newline_style(head, tail, body)
        if data is _MISSING:
            self._parse()
        else:  # the front matter's data is known (read through the store): its nodes are parsed only if needed
            self._root, self._data, self._shared, self._merges = None, data, set(), {}
            self._children = Children()
            self._nodes_stale = True

    # ----------------------------------------------------------------- reading

    @classmethod
    def from_bytes(
        cls, data: bytes, path: str | Path | None = None, *, repair: bool = False, known: Any = _MISSING
    ) -> Document:
        """Split `data` into BOM, front matter and body, and parse the front matter.

        `repair` reads a front matter over the size limit (up to limits.REPAIR_FRONT_MATTER), for a command
        that is about to shorten it; writing it back still has to meet the limit (`check_writable`).
        `known`: the front matter's plain data, when the caller has it already (exactly what the round-trip
        parser gives for these bytes, as the store's data is); the text is then parsed only when an
        edit or a location needs its nodes, so a write that changes only the body parses no YAML.
        """
        where = str(path) if path is not None else None
        parts = envelope.decode(data, where)
        limits.check_length(parts.text, where, limits.REPAIR_FRONT_MATTER if repair else limits.MAX_FRONT_MATTER)
        return cls(parts.bom, parts.head, parts.text, parts.tail, parts.body, where, known)

    @classmethod
    def read(cls, path: str | Path) -> Document:
        """Read and parse the file at `path`."""
        return cls.from_bytes(Path(path).read_bytes(), path)

    def to_bytes(self) -> bytes:
        """Return the file's bytes: the original bytes wherever nothing was changed."""
        return self._envelope().to_bytes()

    def check_writable(self) -> bytes:
        """The file's bytes, after checking a read would accept them (UsageError naming the limit otherwise)."""
        data = self.to_bytes()
        limits.check_writable(self._text, len(data), self.path)
        return data

    def _envelope(self) -> envelope.Envelope:
        """The file as it is now, in its envelope."""
        return envelope.Envelope(self._bom, self._head, self._text, self._tail, self._body)

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
        return self._envelope().body_line

    def set_body(self, body: str) -> None:
        """Replace the markdown body."""
        self._body = body.encode("utf-8", errors="surrogateescape")

    @property
    def data(self) -> Any:
        """A deep copy of the front matter as plain Python data (None when empty)."""
        return self._copy(self._data)

    def _copy(self, value: Any) -> Any:
        """A deep copy of (part of) the data: a plain one unless aliases share nodes (deepcopy keeps them shared)."""
        return copy.deepcopy(value) if self._shared else clone(value)

    def get(self, path: str | list[Segment], default: Any = _MISSING) -> Any:
        """Return a copy of the value at `path`; raise UsageError (or return `default`) if missing."""
        segments = parse_path(path)
        value = self._data
        for i, seg in enumerate(segments):
            found, child = child_value(value, seg)
            if not found:
                if default is not _MISSING:
                    return default
                raise UsageError(f"no value at {format_path(segments[: i + 1])}", file=self.path)
            value = child
        return self._copy(value)

    def locate(self, path: str | list[Segment]) -> tuple[int, int]:
        """Return the 1-based file line and column of `path`, or of its deepest existing parent."""
        segments = parse_path(path)
        line, col = (2, 1) if self._head else (1, 1)
        node = self._nodes()
        for seg in segments:
            step = self._children.step(node, seg)
            if step is None:
                break
            target = step.key if step.key is not None else step.node
            line, col = self._position(target.start_mark.index)
            node = step.node
        return line, col

    def _position(self, index: int) -> tuple[int, int]:
        """File line and column (1-based) of a character index in the front matter text."""
        from planstate.text.spans import LineIndex

        first_line = self._head.count("\n") + 1
        lines = self._lines
        if lines is None or lines.text is not self._text or lines.first_line != first_line:
            lines = self._lines = LineIndex(self._text, first_line)
        return lines.position(index)

    # ----------------------------------------------------------------- parsing

    def _parse(self) -> None:
        """Parse the front matter text into nodes and plain data (see parser.py)."""
        parsed = parser.parse(self._text, self._position, self.path)
        self._root, self._data, self._shared, self._merges = parsed
        self._children = Children()  # child lookups of this tree
        self._nodes_stale = False

    def _reread(self) -> None:
        """Read the text back after a splice of one-line scalars: its data from the fast path when that path
        vouches for the text, the node tree parsed only when an edit or a location needs it; else the full parse.
        A write thus parses round trip once, when the file is read, instead of twice."""
        from planstate.text import fastyaml

        if not fastyaml.loaded() and len(self._text) < fastyaml.WORTH_LOADING:
            self._parse()  # a short file in a fresh process: loading the fast path costs more than it saves
            return
        data = fastyaml.text_data(self._text)
        if data is fastyaml.MISS:
            self._parse()
            return
        self._data, self._nodes_stale = data, True

    def _nodes(self) -> Any:
        """The node tree of the text as it is now (parsed again if a fast re-read left it behind)."""
        if self._nodes_stale:
            self._parse()
        return self._root

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
        self._check_new_key(segments, depth, parent)
        if parent is None and depth > 0:
            self.apply([Op("replace", tuple(segments[:depth]), {segments[depth]: nested})])
        else:
            self.apply([Op("add", tuple(segments[: depth + 1]), nested)])

    def _check_new_key(self, segments: list[Segment], depth: int, parent: Any) -> None:
        """Refuse to add `segments[depth]` to `parent` unless it is a key of a mapping (or of nothing yet)."""
        seg = segments[depth]
        where = format_path(segments[:depth])
        if isinstance(parent, list) and not re.fullmatch(r"-?\d+", str(seg)):
            raise UsageError(f"{where or 'the front matter'} is a list; {seg!r} is not an index", file=self.path)
        if isinstance(parent, list):
            raise UsageError(
                f"index {seg} is out of range at {where} (length {len(parent)}); use append to add an item",
                file=self.path,
            )
        if parent is not None and not isinstance(parent, dict):
            raise UsageError(
                f"{where or 'the front matter'} is a {type(parent).__name__}, not a mapping", file=self.path
            )
        if isinstance(seg, int):
            raise UsageError(f"{where} is not a list", file=self.path)

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
        """Apply edits one by one; each is verified by re-parsing, or the document is left unchanged. (Edits of one
        inline scalar each that lie apart in the text go first, together, with one re-parse: `_apply_apart`.)"""
        if self._apply_scalars(ops):
            return
        saved = self._save()
        try:
            for op in self._apply_apart(ops):
                self._apply_one(op)
        except BaseException:
            self._restore(saved)
            raise

    def _apply_scalars(self, ops: list[Op]) -> bool:
        """Apply edits that each replace one inline scalar by a one-line scalar together (`_spliced_together`).
        Returns False (the document unchanged) when any edit is of another kind or anything fails, and `apply` then
        goes edit by edit, which says exactly why."""
        if not self._head or not all(op.kind == "replace" and _one_line_scalar(op.value) for op in ops):
            return False
        from planstate.text import splice

        return self._spliced_together(ops, lambda op, step: splice.scalar_span(step, op.value))

    def _apply_apart(self, ops: list[Op]) -> list[Op]:
        """Apply the edits among `ops` that change one inline scalar each (a scalar replaced by a one-line scalar, a
        key with such a value added or deleted) together (`_spliced_together`), and return the others, to apply one
        by one after them. Such edits change no block structure, so neither the file's detected indentation nor any
        other edit's place depends on them, and they may go first (but keys added to one mapping stay in the order
        of their edits). Only when the edits cannot move one another: none inserts into a list or deletes a list
        item (the indexes after it would move), none is at or inside another's path, and the file has no `<<`
        merges. When anything does not qualify or fails, nothing is applied and every edit is returned.
        `phase complete`, which changes about ten fields of STATE.md, so parses it twice, not eleven times."""
        if len(ops) < 2 or not self._head or self._merges or not self._literals:
            return ops
        if any(op.kind == "insert" or (op.kind == "delete" and isinstance(op.path[-1], int)) for op in ops):
            return ops
        paths = sorted(op.path for op in ops)
        if any(later[: len(earlier)] == earlier for earlier, later in itertools.pairwise(paths)):
            return ops  # one path at or inside another (sorted, a path comes right before those inside it)
        inline = [op for op in ops if self._inline_edit(op)]
        # Keys added to one mapping keep the order of their edits: none goes first past another that cannot.
        kept_order = {op.path[:-1] for op in ops if op.kind == "add" and op not in inline}
        inline = [op for op in inline if op.kind != "add" or op.path[:-1] not in kept_order]
        if len(inline) < 2:
            return ops
        from planstate.text import splice

        # The edits are made in the text of one parse, so the file's indentation is the same for all of them: it is
        # detected once (a walk of every node), not once per edit (a key added to each of 500 phases made 500 walks).
        indents: dict[int, Indent] = {}  # by the parse's root node

        def span(op: Op, step: Step | None) -> tuple[int, int, str]:
            known = indents.get(id(self._root))
            editor = splice.Splice(
                self._text, self._root, self._merges, self.newline, literals=True, path=self.path, indent=known
            )
            editor.run(op, step)
            if known is None and editor.detected is not None:
                indents[id(self._root)] = editor.detected
            return editor.changed()

        return [op for op in ops if op not in inline] if self._spliced_together(inline, span) else ops

    def _spliced_together(self, ops: list[Op], span: Callable[[Op, Step | None], tuple[int, int, str]]) -> bool:
        """Make every edit in the text as it is (from the one parse): `span` gives the span of the text it changes,
        given the step of its path (of its parent, for "add"); splice the spans together from the last to the first,
        so the positions the parser gave stay valid (whole lines inserted at one place joined in edit order), then
        read the text back once (`_reread`) and verify it holds exactly the data the edits mean. False (the
        document unchanged) when spans overlap or touch (their order would matter) or anything fails."""
        from planstate.text import splice

        saved = self._save()
        try:
            expected = self._copy(self._data)
            spans: list[tuple[int, int, str]] = []
            for op in ops:
                expected = apply_op(expected, op)
                steps = self._resolve(list(op.path if op.kind != "add" else op.path[:-1]))
                spans.append(span(op, steps[-1] if steps else None))
            spans = _joined_inserts(self._text, spans)
            if any(earlier[1] >= later[0] for earlier, later in itertools.pairwise(sorted(spans))):
                raise EditError("edits that touch")
            self._text = splice.splice_spans(self._text, spans)
            self._reread()
            if not same(self._data, expected):
                raise EditError("the edits changed other values")
        except (EditError, ParseError, UsageError):
            self._restore(saved)
            return False
        except BaseException:
            self._restore(saved)
            raise
        return True

    def _inline_edit(self, op: Op) -> bool:
        """Whether an edit changes one inline scalar: it replaces a scalar, adds a key, or deletes a key of a scalar,
        and writes a one-line scalar (no collection, no multi-line text, which take block lines)."""
        if op.kind not in ("replace", "add", "delete") or (op.kind != "delete" and not _one_line_scalar(op.value)):
            return False
        if op.kind == "add":
            return True
        found, old = get_in(self._data, list(op.path))
        return found and not isinstance(old, dict | list)

    def _save(self) -> tuple[Any, ...]:
        """Everything an edit may change, to put back when it fails."""
        return (
            self._text,
            self._root,
            self._data,
            self._head,
            self._tail,
            self._shared,
            self._merges,
            self.newline,
            self._children,
            self._nodes_stale,
        )

    def _restore(self, saved: tuple[Any, ...]) -> None:
        """Put back a state taken by `_save`."""
        (
            self._text,
            self._root,
            self._data,
            self._head,
            self._tail,
            self._shared,
            self._merges,
            self.newline,
            self._children,
            self._nodes_stale,
        ) = saved

    # ----------------------------------------------------------------- one edit

    def _lookup(self, segments: list[Segment]) -> tuple[bool, Any]:
        """Find the plain value at `segments`."""
        return get_in(self._data, segments)

    def _apply_one(self, op: Op) -> None:
        """Splice one edit into the text, re-parse, and check the data is exactly what was meant."""
        expected = apply_op(self._copy(self._data), op)
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
        steps = self._resolve(list(op.path if op.kind != "add" else op.path[:-1]))  # parses nodes if stale
        target = steps[-1] if steps else None
        from planstate.text import splice

        editor = splice.Splice(
            self._text, self._root, self._merges, self.newline, literals=self._literals, path=self.path
        )
        self._text = editor.run(op, target)
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
        self._nodes()
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
        self.newline = envelope.first_newline(self._body)
        self._head, self._tail = envelope.delimiters(self.newline)

    def _resolve(self, segments: list[Segment]) -> list[Step]:
        """Return the nodes along `segments`; refuse paths through anchors, aliases and merges."""
        steps: list[Step] = []
        node = self._nodes()
        for i, seg in enumerate(segments):
            step = self._children.step(node, seg)
            if step is None:
                raise EditError(
                    f"cannot edit {format_path(segments[: i + 1])}: it comes from a YAML merge key "
                    "or alias, not from text at this place",
                    file=self.path,
                )
            steps.append(step)
            node = step.node
        for step in steps:
            if id(step.node) in self._shared or getattr(step.node, "anchor", None):
                raise EditError(
                    f"cannot edit {format_path(segments)}: it is inside a YAML anchor or alias, "
                    "so the edit would change other values too",
                    file=self.path,
                )
        return steps


def _joined_inserts(text: str, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The spans of edits (in their order) with the whole lines inserted at one line start joined in that order, as
    edits made one after another write them (keys added to one mapping, each after the one before)."""
    at: dict[int, int] = {}
    out: list[tuple[int, int, str]] = []
    for start, end, new in spans:
        whole_lines = start == end and (start == 0 or text[start - 1] == "\n") and new.endswith("\n")
        if whole_lines and start in at:
            index = at[start]
            out[index] = (start, end, out[index][2] + new)
            continue
        if whole_lines:
            at[start] = len(out)
        out.append((start, end, new))
    return out


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


def _kind(value: Any) -> str:
    """What a plain value is, in a message."""
    if isinstance(value, dict):
        return "mapping"
    if isinstance(value, list):
        return "list"
    return type(value).__name__
