"""Parse limits (front-matter size, values after alias expansion, nesting depth) and the checks that enforce them."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from typing import Any, NamedTuple

from planstate.core.errors import ParseError
from planstate.text.nodes import MERGE_TAG

MAX_FRONT_MATTER = 1 << 20  # characters of YAML; a STATE.md is a few kilobytes
MAX_EXPANDED_NODES = 100_000  # values after aliases are expanded: stops alias bombs
MAX_DEPTH = 100  # nested collections; deeper flow nesting makes the YAML scanner quadratic

# The characters YAML does not allow in a stream (the complement of its printable set), as a regex character class.
NON_PRINTABLE = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff"

Position = Callable[[int], tuple[int, int]]  # a character index of the front matter -> file line and column


REPAIR_FRONT_MATTER = 4 * MAX_FRONT_MATTER  # how long a front matter a repair (`set`, `unset`) may still read


def check_length(text: str, where: str | None, limit: int = MAX_FRONT_MATTER) -> None:
    """Refuse front matter longer than `limit` characters (MAX_FRONT_MATTER unless a repair reads it)."""
    if len(text) > limit:
        raise ParseError(
            f"front matter is {len(text):,} characters; planstate reads at most {MAX_FRONT_MATTER:,}",
            file=where,
            line=2,
            column=1,
        )


def check_writable(text: str, size: int, where: str | None) -> None:
    """Refuse to write a file a read would refuse: front matter over MAX_FRONT_MATTER characters, or a file over
    MAX_FILE_BYTES (no write may produce what planstate cannot read back)."""
    from planstate.core.errors import UsageError
    from planstate.core.files import MAX_FILE_BYTES

    if len(text) > MAX_FRONT_MATTER:
        raise UsageError(
            f"the front matter would be {len(text):,} characters; planstate reads at most {MAX_FRONT_MATTER:,}, "
            "so nothing was written (shorten or remove a long value)",
            file=where,
        )
    if size > MAX_FILE_BYTES:
        raise UsageError(
            f"the file would be {size / (1 << 20):.1f} MB; planstate reads files up to {MAX_FILE_BYTES >> 20} MB, "
            "so nothing was written",
            file=where,
        )


@functools.cache
def reader_class() -> Any:
    """ruamel's reader, finding the characters YAML does not allow by NON_PRINTABLE: the same characters as its own
    pattern, which spells out the printable ranges (astral planes included) and costs about 10 ms to compile in every
    process that reads a non-ASCII file; this one compiles in well under one."""
    from ruamel.yaml.reader import Reader as RuamelReader
    from ruamel.yaml.util import RegExp

    pattern = RegExp(f"[{NON_PRINTABLE}]")  # compiled on first use: only text that is not ASCII needs it

    class Reader(RuamelReader):
        NON_PRINTABLE = pattern

    return Reader


@functools.cache
def scanner_class() -> Any:
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


class Expansion(NamedTuple):
    """What the expansion check learns about a node tree on the way."""

    shared: set[int]  # ids of nodes reached more than once (through aliases)
    merges: dict[int, list[tuple[Any, Any]]]  # `<<` entries of each mapping, which ruamel later drops from it


def check_expansion(root: Any, position: Position, where: str | None) -> Expansion:
    """Refuse alias bombs, recursive aliases, deep nesting and non-scalar keys; note shared nodes and merges."""
    walk = _ExpansionWalk(position, where)
    walk.run(root)
    return Expansion({nid for nid, count in walk.seen.items() if count > 1}, walk.merges)


class _ExpansionWalk:
    """One depth-first walk (with an explicit stack) that sizes every node as if its aliases were expanded."""

    def __init__(self, position: Position, where: str | None) -> None:
        self.position = position
        self.where = where
        self.merges: dict[int, list[tuple[Any, Any]]] = {}
        self.sizes: dict[int, int] = {}  # values after expanding aliases
        self.heights: dict[int, int] = {}  # nesting levels after expanding aliases
        self.seen: Counter[int] = Counter()
        self.open: set[int] = set()  # collections whose children are still being walked
        self.stack: list[tuple[Any, bool]] = []

    def run(self, root: Any) -> None:
        """Walk the tree from `root`, raising ParseError at the first limit it passes."""
        self.stack.append((root, False))
        while self.stack:
            node, done = self.stack.pop()
            if node is None:
                continue
            if done:
                self._close(node)
            else:
                self._enter(node)

    def _enter(self, node: Any) -> None:
        """Visit a node: a collection is walked the first time only, its size is known after its children."""
        from ruamel.yaml.nodes import MappingNode, SequenceNode

        if id(node) in self.open:
            raise self._refuse("an alias refers to a value that contains it (a recursive alias)", node)
        self.seen[id(node)] += 1
        if id(node) in self.sizes or self.seen[id(node)] > 1:
            return
        if isinstance(node, MappingNode):
            self._check_keys(node)
            self._open(node, [x for kv in node.value for x in kv])
        elif isinstance(node, SequenceNode):
            self._open(node, node.value)
        else:
            self.sizes[id(node)] = self.heights[id(node)] = 1

    def _check_keys(self, node: Any) -> None:
        """Refuse a collection as a mapping key; note the mapping's `<<` entries."""
        from ruamel.yaml.nodes import ScalarNode

        for k, v in node.value:
            if not isinstance(k, ScalarNode):
                raise self._refuse("a mapping key is a list or mapping; keys must be plain values", k)
            if k.tag == MERGE_TAG:
                self.merges.setdefault(id(node), []).append((k, v))

    def _open(self, node: Any, children: list[Any]) -> None:
        """Push a collection's children, and the collection again to be closed after them."""
        self.open.add(id(node))
        self.stack.append((node, True))
        self.stack.extend((child, False) for child in children)

    def _close(self, node: Any) -> None:
        """Size a collection whose children are all sized, refusing it when it passes a limit."""
        from ruamel.yaml.nodes import MappingNode

        self.open.discard(id(node))
        children = [x for kv in node.value for x in kv] if isinstance(node, MappingNode) else node.value
        size = self.sizes[id(node)] = 1 + sum(self.sizes[id(c)] for c in children)
        height = self.heights[id(node)] = 1 + max((self.heights[id(c)] for c in children), default=0)
        if size > MAX_EXPANDED_NODES:
            raise self._refuse(
                f"front matter expands to more than {MAX_EXPANDED_NODES:,} values through aliases (an alias bomb?)"
            )
        if height > MAX_DEPTH:
            raise self._refuse(f"front matter nests more than {MAX_DEPTH} levels deep", node)

    def _refuse(self, message: str, node: Any = None) -> ParseError:
        """A ParseError at `node` (at the front matter's first line without one)."""
        line, col = self.position(node.start_mark.index) if node is not None else (2, 1)
        return ParseError(message, file=self.where, line=line, column=col)
