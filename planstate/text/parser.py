"""Front-matter YAML text to ruamel round-trip nodes and plain data, with every error at its file position."""

from __future__ import annotations

import io
import re
from typing import Any, NamedTuple

from planstate.core.errors import ParseError
from planstate.text.limits import Expansion, Position, check_expansion, reader_class, scanner_class
from planstate.text.plaindata import to_plain


class Parsed(NamedTuple):
    """A parsed front matter: its node tree, its plain data, and what edits must know about aliases and merges."""

    root: Any  # None when the front matter is empty
    data: Any
    shared: set[int]  # ids of nodes reached through aliases
    merges: dict[int, list[tuple[Any, Any]]]  # `<<` entries of each mapping, which ruamel drops from its nodes


def parse(text: str, position: Position, where: str | None, *, fast: bool = True) -> Parsed:
    """Parse front-matter text (YAML 1.2, round-trip) within the parse limits; ParseError at the problem's place.

    `fast=False` parses round trip even where the libyaml path would answer (the tests compare the two)."""
    if not text.strip():
        return Parsed(None, None, set(), {})
    quick = _fast(text) if fast else None
    if quick is not None:
        return quick
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        root, data, expansion = _load(text, position, where)
    except MarkedYAMLError as exc:
        raise _conflict_error(text, position, where) or _marked_error(exc, text, position, where) from None
    except YAMLError as exc:
        raise _conflict_error(text, position, where) or _plain_error(exc, position, where) from None
    except RecursionError:
        raise ParseError("front matter nests too deeply", file=where, line=2, column=1) from None
    return Parsed(root, to_plain(data), expansion.shared, expansion.merges)


def _fast(text: str) -> Parsed | None:
    """The parse through libyaml (text/fastyaml.py: the same node tree and data, about ten times faster) when this
    process has that path loaded (a long-lived one: the MCP server) or the text pays for loading it; else None,
    and anything that path does not answer for (aliases, merges, errors …) is parsed round trip."""
    from planstate.text import fastyaml

    if not fastyaml.loaded() and len(text) < fastyaml.WORTH_LOADING:
        return None
    composed = fastyaml.text_nodes(text)
    if composed is fastyaml.MISS:
        return None
    root, data = composed
    return Parsed(root, data, set(), {})  # no alias, no merge key, well within the limits: text_nodes vouches


def _load(text: str, position: Position, where: str | None) -> tuple[Any, Any, Expansion]:
    """Compose the node tree, check it against the limits, then construct the data from it."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.Reader = reader_class()
    yaml.Scanner = scanner_class()
    yaml.Constructor = constructor_class()
    try:  # as YAML.load does; a `%YAML` or `%TAG` line needs it
        from ruamel.yaml.docinfo import DocInfo

        yaml.doc_infos.append(DocInfo())
    except ImportError:  # pragma: no cover - older ruamel.yaml keeps no document info
        pass
    constructor, _parser = yaml.get_constructor_parser(io.StringIO(text))
    root = constructor.composer.get_single_node()
    expansion = check_expansion(root, position, where)
    data = constructor.construct_document(root) if root is not None else None
    return root, data, expansion


_constructor: list[Any] = []


def constructor_class() -> Any:
    """ruamel's round-trip constructor, except that a timestamp or date that does not exist (`2026-02-30`,
    `T25:00:00Z`) stays the text it is: validation then reports it at its field, where a crash would have
    stopped every command, the ones that could repair it included."""
    if _constructor:
        return _constructor[0]
    from ruamel.yaml.constructor import RoundTripConstructor

    class Constructor(RoundTripConstructor):
        def construct_yaml_timestamp(self, node: Any, values: Any = None) -> Any:
            try:
                return super().construct_yaml_timestamp(node, values)
            except ValueError:  # well-formed, but no such day or time
                return str(node.value)

    Constructor.add_constructor("tag:yaml.org,2002:timestamp", Constructor.construct_yaml_timestamp)
    _constructor.append(Constructor)
    return Constructor


def _conflict_error(text: str, position: Position, where: str | None) -> ParseError | None:
    """The first git conflict block of front matter that does not parse: the cause, said as `check` says it."""
    from planstate.text.conflicts import conflict_blocks, describe  # only a failed parse needs it

    blocks = conflict_blocks(text.encode("utf-8", errors="surrogateescape"))
    if not blocks:
        return None
    block = blocks[0]
    start = 0
    for _ in range(block.first - 1):
        start = text.index("\n", start) + 1
    line, _col = position(start)
    shift = line - block.first  # the front matter's lines are numbered from the file's start
    moved = block._replace(first=block.first + shift, last=block.last + shift)
    return ParseError(describe(moved), file=where, line=line, column=1, field=block.field)


def _marked_error(exc: Any, text: str, position: Position, where: str | None) -> ParseError:
    """A ruamel error with marks, at its problem (naming the line of its context, when it has both); a line that
    breaks the indentation of its block is named as that."""
    from planstate.text.indentation import misplaced  # only a failed parse needs it

    mark = exc.problem_mark or exc.context_mark
    problem = exc.problem or exc.context or "invalid YAML"
    if exc.context and exc.problem and exc.context_mark is not None and exc.problem_mark is not None:
        ctx_line, _ = position(exc.context_mark.index)
        problem = f"{problem} ({exc.context} at line {ctx_line})"
    line, col = position(mark.index) if mark is not None else (2, 1)
    if mark is not None and (wrong := misplaced(text, mark.line + 1)) is not None:
        shift = line - (mark.line + 1)  # the front matter's lines are numbered from the file's start
        problem = (
            f"indentation: this line starts at column {wrong.column}; expected column {wrong.expected}, "
            f"like line {wrong.sibling + shift}"
        )
        return ParseError(problem, file=where, line=line, column=wrong.column)
    if mark is not None and exc.problem == "mapping values are not allowed here":
        fixed = _quoted(text, mark.line, mark.column)
        if fixed is not None:
            problem = f"{problem}: quote the value, as in `{fixed}`"
    return ParseError(problem, file=where, line=line, column=col)


# `key: value` at the start of a line, after any `- ` item dashes, the value up to a comment; both plain (a
# quote, a flow collection, an anchor, an alias, a tag or a block scalar is something else).
_ENTRY = re.compile(
    r"""^(?P<lead>[ ]*(?:-[ ]+)*)
    (?P<key>[^\s#'"\[{&*!|>%@`-][^:#]*?):[ ]+
    (?P<value>[^\s'"\[{&*!|>%@`].*?)
    (?P<note>[ ]+\#.*)?$""",
    re.VERBOSE,
)


def _quoted(text: str, number: int, column: int) -> str | None:
    """Line `number` (0-based) of `text` with its value double-quoted, when the `: ` YAML refused at `column` lies
    inside the plain value of a `key: value` line (a hand-written `next_action: Build: the index`); else None."""
    from planstate.text.yamltext import double_quoted  # only a failed parse needs it

    lines = text.split("\n")
    if not 0 <= number < len(lines):
        return None
    line = lines[number].rstrip("\r")
    entry = _ENTRY.match(line)
    if entry is None or not entry.start("value") <= column < entry.end("value") or line[column] != ":":
        return None
    return f"{entry['lead']}{entry['key']}: {double_quoted(entry['value'])}{entry['note'] or ''}".strip()


def _plain_error(exc: Any, position: Position, where: str | None) -> ParseError:
    """A ruamel error without marks (a reader error has a character position)."""
    at = getattr(exc, "position", None)
    line, col = position(at) if isinstance(at, int) else (2, 1)
    message = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
    if hasattr(exc, "character") and hasattr(exc, "reason"):
        message = f"{exc.reason}: {exc.character!r}"
    return ParseError(message, file=where, line=line, column=col)
