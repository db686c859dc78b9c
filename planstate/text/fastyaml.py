"""A fast read of front matter: libyaml's C parser for the syntax, ruamel's resolver and constructor.

A round-trip parse costs about 1.75 ms a record, nearly all of it ruamel's pure-Python scanner and
parser; a cold `check` of 17,000 records spent a minute there. Here libyaml (PyYAML's C extension)
turns the text into events; each plain scalar gets the tag ruamel's YAML 1.2 resolver gives it (its
own table), strings and nulls are taken as they are, and every other scalar (ints, floats, booleans,
timestamps) is built by ruamel's round-trip constructor, the one `parser.py` uses, then made plain
as `parser.py` makes it, except the two timestamp forms planstate writes, made here as that
constructor makes them (`_timestamp`; a test compares them). Each plain scalar a resolver could take
is resolved once per process (`_PLAIN`: keys, nulls and dates recur in every record). So the data is
the round-trip parser's; `text_nodes` also gives the node tree a write splices into, ruamel's own.
This path answers only plain YAML: an anchor, alias, explicit tag, merge key, duplicate key,
directive, tab, a key that is not a scalar, a nesting past the limits, or any error gives `MISS`,
and the caller parses round trip, which also reports every error at its line and column.
`tests/test_cache.py` checks over the corpus that whatever this path answers equals the round-trip
parser's data, and that it answers no file that parser refuses.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator
from datetime import date, datetime, timedelta, timezone
from typing import Any

from planstate.text import envelope
from planstate.text.limits import MAX_DEPTH, MAX_EXPANDED_NODES, MAX_FRONT_MATTER
from planstate.text.nodes import MERGE_TAG
from planstate.text.plaindata import to_plain

MISS = object()
# Characters of YAML from which one read pays for loading this path (about 7 ms, measured from a fresh process;
# the round-trip parser reads about 140 characters a millisecond after 3 ms of its own start): a STATE.md's front
# matter, which a write parses twice, but not a record's.
WORTH_LOADING = 600
# (libyaml's parser, its events, ruamel's nodes and marks, a ruamel YAML), then the resolvers and the first characters
# they apply to (`_table`), made once
_STATE: list[Any] = []


def _machinery() -> Any:
    """libyaml's parser class and ruamel's pieces, made once per process; None without libyaml."""
    if not _STATE:
        import importlib

        try:  # PyYAML built with libyaml; without it (a build from source without libyaml) reads parse round trip
            with _patterns_deferred():
                events = importlib.import_module("yaml.events")
                cparser = importlib.import_module("yaml.cyaml").CParser
        except (ImportError, AttributeError):
            _STATE.append(None)
            return None
        from ruamel.yaml import YAML, nodes
        from ruamel.yaml.error import StreamMark

        from planstate.text.parser import constructor_class

        loader = YAML(typ="rt")
        loader.Constructor = constructor_class()
        loader.get_constructor_parser(io.StringIO(""))
        _STATE.append((cparser, events, nodes, StreamMark, loader))
    return _STATE[0]


class _Deferred:
    """A regular expression compiled when first used: it stands for the pattern `re.compile` would have made, every
    attribute (`match`, `search`, `pattern`...) taken from that pattern."""

    __slots__ = ("_args", "_compiled", "_kwargs")
    _compiled: re.Pattern[Any] | None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._args, self._kwargs, self._compiled = args, kwargs, None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = _COMPILE(*self._args, **self._kwargs)
        return getattr(self._compiled, name)


_COMPILE = re.compile


@contextlib.contextmanager
def _patterns_deferred() -> Iterator[None]:
    """While PyYAML is imported, in a process of one thread, each `re.compile` gives a `_Deferred` pattern. PyYAML
    compiles some twenty at import, for its pure-Python reader, resolver and constructor, none of which libyaml's
    parser (all this module takes of it) uses: about a tenth of a `set`'s instructions. They are compiled if used
    (a program that imports planstate may still call `yaml.safe_load`). With another thread running, a pattern it
    compiled meanwhile would be deferred too: PyYAML is then imported as it is."""
    import sys
    import threading

    if "yaml" in sys.modules or threading.active_count() > 1:
        yield
        return
    re.compile = _Deferred  # type: ignore[assignment]
    try:
        yield
    finally:
        re.compile = _COMPILE


def load() -> bool:
    """Make the fast path ready now (a long-lived process: every later parse goes this way); False without libyaml."""
    return _machinery() is not None


def loaded() -> bool:
    """Whether this process has the fast path ready (a long-lived one, or one that has read many files)."""
    return bool(_STATE) and _STATE[0] is not None


def front_matter_data(raw: bytes) -> Any:
    """The front-matter data of a file's bytes as the round-trip parser gives it, or MISS."""
    machinery = _machinery()
    if machinery is None:
        return MISS
    try:
        parts = envelope.decode(raw, None)
    except Exception:  # the round-trip path reports it
        return MISS
    if not parts.head:
        return MISS
    return text_data(parts.text)


def text_data(text: str) -> Any:
    """The data of a front matter's YAML text as the round-trip parser gives it, or MISS."""
    machinery = _machinery()
    if machinery is None or not _plain_text(text):
        return MISS
    try:
        return _Builder(machinery, text).document()
    except Exception:  # anything this path does not vouch for
        return MISS


# Plain values of the plain scalars some resolver of ruamel's could take (strings, nulls, ints, floats, booleans,
# timestamps: all immutable), by text: the same few (`1`, `null`, `true`, keys such as `title`, the dates of one
# file) come back in every read, and resolving one tries up to three regular expressions.
_PLAIN: dict[str, Any] = {}
_REMEMBERED = 4096
_TAG_OBJECTS: dict[str, Any] = {}  # ruamel's tag object of each tag `_Builder` constructs (its nodes are not kept)
# Line breaks in YAML 1.1 (libyaml) but not in YAML 1.2 (ruamel): the two would split such a text differently.
_BREAKS_OF_YAML_1_1 = ("\x85", "\u2028", "\u2029")


def _plain_text(text: str) -> bool:
    """Whether `text` is worth giving libyaml: not empty, within the limit, no tab, no directive line (`%YAML`,
    `%TAG`: a `%` inside a value is text), no line break only YAML 1.1 knows."""
    if not text.strip() or len(text) > MAX_FRONT_MATTER or "\t" in text:
        return False
    if text.startswith("%") or "\n%" in text:
        return False
    return not any(brk in text for brk in _BREAKS_OF_YAML_1_1)


_STR = "tag:yaml.org,2002:str"
_NULL = "tag:yaml.org,2002:null"


class _Miss(Exception):
    """The text holds something this path does not answer for."""


class _Builder:
    """Plain data from libyaml's events: strings and nulls as they are, every other scalar through ruamel's own
    round-trip constructor, tags resolved by ruamel's YAML 1.2 table (see the module docstring)."""

    def __init__(self, machinery: Any, text: str) -> None:
        cparser, self.events, self.nodes, self.mark, loader = machinery
        self.parser = cparser(text)
        self.constructor = loader.constructor
        self.table = _table(loader)
        self.firsts = _firsts()
        self.count = 0

    def document(self) -> Any:
        """The one document's data."""
        events = self.events
        parser = self.parser
        try:
            if not isinstance(parser.get_event(), events.StreamStartEvent):
                raise _Miss
            start = parser.get_event()
            if not isinstance(start, events.DocumentStartEvent) or start.explicit or start.version or start.tags:
                raise _Miss
            data = self._value(parser.get_event(), 0)
            if not isinstance(parser.get_event(), events.DocumentEndEvent):
                raise _Miss
            if not isinstance(parser.get_event(), events.StreamEndEvent):
                raise _Miss
            return data
        finally:
            parser.dispose()

    def _value(self, event: Any, depth: int) -> Any:
        events = self.events
        self.count += 1
        if depth > MAX_DEPTH or self.count > MAX_EXPANDED_NODES:
            raise _Miss
        kind = type(event)
        if kind is events.ScalarEvent:
            if event.anchor is not None or event.tag is not None:
                raise _Miss
            return self._scalar(event)
        if kind is not events.SequenceStartEvent and kind is not events.MappingStartEvent:
            raise _Miss  # an alias, or anything else
        if event.anchor is not None or event.tag is not None:
            raise _Miss
        get_event = self.parser.get_event
        scalar = events.ScalarEvent
        inner = depth + 1
        flat = inner <= MAX_DEPTH  # a scalar child is within the depth limit: taken here, without `_value`'s call
        if kind is events.SequenceStartEvent:
            items: list[Any] = []
            end = events.SequenceEndEvent
            while True:
                child = get_event()
                kind = type(child)
                if kind is end:
                    return items
                if kind is scalar and flat and child.anchor is None and child.tag is None:
                    self.count += 1  # what `_value` does with it
                    if self.count > MAX_EXPANDED_NODES:
                        raise _Miss
                    items.append(self._scalar(child))
                else:
                    items.append(self._value(child, inner))
        out: dict[Any, Any] = {}
        end = events.MappingEndEvent
        while True:
            child = get_event()
            kind = type(child)
            if kind is end:
                return out
            if kind is not scalar or child.anchor is not None or child.tag is not None:
                raise _Miss  # a collection or an anchored key: the round-trip parser says what it makes of it
            key = self._scalar(child)
            if key in out or key == MERGE_TAG:
                raise _Miss  # a duplicate key (refused round trip)
            child = get_event()
            if type(child) is scalar and flat and child.anchor is None and child.tag is None:
                self.count += 1  # what `_value` does with it
                if self.count > MAX_EXPANDED_NODES:
                    raise _Miss
                out[key] = self._scalar(child)
            else:
                out[key] = self._value(child, inner)

    def _scalar(self, event: Any) -> Any:
        value = event.value
        if not event.implicit[0]:
            return value  # quoted or block: a string
        if value[:1] not in self.firsts:
            return value  # no resolver of ruamel's starts with its first character: a string (most values)
        plain = _PLAIN.get(value, MISS)
        if plain is MISS:
            plain = self._resolved(event, value)
            if len(_PLAIN) >= _REMEMBERED:
                _PLAIN.clear()
            _PLAIN[value] = plain
        return plain

    def _resolved(self, event: Any, value: str) -> Any:
        """The plain value of a plain scalar: its tag from ruamel's resolver, then ruamel's constructor."""
        tag = _resolve(self.table, value)
        if tag == _STR:
            return value
        if tag == _NULL:
            return None
        if tag == MERGE_TAG:
            return MERGE_TAG  # the caller refuses it as a key; as a value ruamel would not make it plain either
        if tag == _TIMESTAMP:
            plain = _timestamp(value)
            if plain is not MISS:
                return plain
        shared = _TAG_OBJECTS.get(tag)
        if shared is None:  # a tag object works its text out once (ruamel's makes one per node, and works it out)
            shared = _TAG_OBJECTS[tag] = self.nodes.ScalarNode(tag, "", None, None).ctag
        start, end = event.start_mark, event.end_mark
        node = self.nodes.ScalarNode(
            shared,
            value,
            self.mark(None, start.index, start.line, start.column),
            self.mark(None, end.index, end.line, end.column),
            style=None,
        )
        # Not construct_object: it keeps every node it made until a whole document is constructed, which never
        # happens here, so a long-lived process (the MCP server) would keep them all.
        return to_plain(self.constructor.construct_non_recursive_object(node))


_TIMESTAMP = "tag:yaml.org,2002:timestamp"
# The two forms planstate writes (`2026-11-22`, `2026-11-22T08:00:00Z`), in ASCII digits, made here as ruamel's
# constructor (parser.constructor_class) and `to_plain` make them: a date, or a time in a UTC zone named "Z";
# a day or time that does not exist stays its text. Any other form is constructed by ruamel.
_DAY = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")
_UTC_TIME = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z\Z")
_ZULU = timezone(timedelta(0), "Z")


def _timestamp(value: str) -> Any:
    """The plain value of a timestamp in one of the two forms planstate writes, or MISS."""
    try:
        found = _DAY.match(value)
        if found is not None:
            year, month, day = map(int, found.groups())
            return date(year, month, day)
        found = _UTC_TIME.match(value)
        if found is not None:
            year, month, day, hour, minute, second = map(int, found.groups())
            return datetime(year, month, day, hour, minute, second, tzinfo=_ZULU)
    except ValueError:
        return value
    return MISS


Resolvers = dict[Any, tuple[tuple[str, Any], ...]]  # first character (None: any) -> (tag, its regexp's match)


def _table(loader: Any) -> Resolvers:
    """ruamel's implicit resolvers for YAML 1.2 by first character (its VersionedResolver's own table), each
    character's followed by those for any character, with each tag as text and each regexp's `match` taken once
    (ruamel's regexps are compiled lazily, behind an attribute lookup on every use)."""
    if len(_STATE) == 1:
        found = loader.resolver.versioned_resolver
        anywhere = tuple((str(tag), regexp.match) for tag, regexp in found.get(None, []))
        table: Resolvers = {
            first: (*((str(tag), regexp.match) for tag, regexp in pairs), *anywhere)
            for first, pairs in found.items()
            if first is not None
        }
        table[None] = anywhere
        _STATE.append(table)
        _STATE.append(_Everything() if anywhere else frozenset(table))
    resolvers: Resolvers = _STATE[1]
    return resolvers


class _Everything:
    """Contains every first character: when some resolver applies to any (`None` in the table), nothing is skipped."""

    def __contains__(self, item: object) -> bool:
        return True


def _firsts() -> Any:
    """The first characters (`""` for an empty value) some implicit resolver applies to (made with `_table`): a
    plain scalar starting with any other is a string."""
    return _STATE[2]


def _resolve(table: Resolvers, value: str) -> str:
    """The tag ruamel's resolver gives a plain scalar (VersionedResolver.resolve for YAML 1.2)."""
    for tag, match in table.get(value[:1], table[None]):
        if match(value):
            return tag
    return _STR


def text_nodes(text: str) -> Any:
    """The node tree the round-trip parser composes from a front matter's YAML text and its data, or MISS.

    libyaml's events give each node its kind, value, style and marks, and the tags are ruamel's (its YAML 1.2
    resolver's table), so the tree is the one ruamel's composer builds; the data is `text_data`'s, from the same
    events. Besides what `text_data` leaves to the round-trip parser, a plain scalar over several lines and a
    folded block (ruamel notes in its value where they fold) and an empty value anywhere but after a block
    mapping's key give MISS. `tests/test_fastyaml.py` checks node for node over the corpus that every tree
    answered is ruamel's, and that no file ruamel refuses is answered.
    """
    machinery = _machinery()
    # libyaml marks the end of a last line without a newline, and the text after a byte order mark, otherwise
    if machinery is None or not _plain_text(text) or not text.endswith("\n") or "\ufeff" in text:
        return MISS
    try:
        return _Composer(machinery, text).document()
    except Exception:  # anything this path does not vouch for
        return MISS


class _Composer(_Builder):
    """ruamel nodes, and their data, from libyaml's events (see `text_nodes`): each value is a (node, data) pair."""

    def __init__(self, machinery: Any, text: str) -> None:
        super().__init__(machinery, text)
        self.text = text
        self.tags = _tags(self.nodes)

    def _value(self, event: Any, depth: int) -> Any:
        events, nodes = self.events, self.nodes
        self.count += 1
        # The round-trip parser refuses a tree higher than MAX_DEPTH or larger than MAX_EXPANDED_NODES, and says
        # where: anything near either limit is left to it.
        if depth >= MAX_DEPTH or self.count >= MAX_EXPANDED_NODES or getattr(event, "anchor", None) is not None:
            raise _Miss
        if getattr(event, "tag", None) is not None:
            raise _Miss
        kind = type(event)
        if kind is events.ScalarEvent:
            if not event.value and event.implicit[0]:
                raise _Miss  # an empty value: only a block mapping knows where ruamel marks it
            return self._scalar_node(event)
        if kind is events.SequenceStartEvent:
            seq = nodes.SequenceNode(self.tags[_SEQ], [], self._mark(event.start_mark), None)
            seq.flow_style = event.flow_style
            items: list[Any] = []
            while True:
                child = self.parser.get_event()
                if type(child) is events.SequenceEndEvent:
                    seq.end_mark = self._mark(child.end_mark)
                    return seq, items
                node, data = self._value(child, depth + 1)
                seq.value.append(node)
                items.append(data)
        if kind is events.MappingStartEvent:
            mapping = nodes.MappingNode(self.tags[_MAP], [], self._mark(event.start_mark), None)
            mapping.flow_style = event.flow_style
            out: dict[Any, Any] = {}
            while True:
                child = self.parser.get_event()
                if type(child) is events.MappingEndEvent:
                    mapping.end_mark = self._mark(child.end_mark)
                    return mapping, out
                if type(child) is not events.ScalarEvent or not child.value:
                    raise _Miss  # a collection or empty key: the round-trip parser says what it makes of it
                key, name = self._value(child, depth + 1)
                if name in out:
                    raise _Miss  # a duplicate key (refused round trip)
                value = self.parser.get_event()
                empty = type(value) is events.ScalarEvent and not value.value and value.implicit[0]
                if empty and not event.flow_style and value.anchor is None and value.tag is None:
                    self.count += 1
                    node, data = self._empty_value(key, value), None
                else:
                    node, data = self._value(value, depth + 1)
                mapping.value.append((key, node))
                out[name] = data
        raise _Miss  # an alias, or anything else

    def _scalar_node(self, event: Any) -> tuple[Any, Any]:
        style = event.style or None
        if style == ">" or (style is None and event.start_mark.line != event.end_mark.line):
            raise _Miss  # ruamel keeps where such a scalar folds in its value
        tag = _resolve(self.table, event.value) if event.implicit[0] else _STR
        if tag == MERGE_TAG:
            raise _Miss
        if tag not in self.tags:
            self.tags[tag] = self.nodes.ScalarNode(tag, "", None, None).ctag
        node = self.nodes.ScalarNode(
            self.tags[tag], event.value, self._mark(event.start_mark), self._mark(event.end_mark), style=style
        )
        return node, self._scalar(event)

    def _empty_value(self, key: Any, event: Any) -> Any:
        """The null of `key:` with nothing after it on its line, marked where ruamel marks it: at the next token (the
        next key, or the end of the mapping). With a comment after the colon, ruamel's mark depends on where its
        scanner puts the comment: left to it."""
        colon = event.start_mark.index
        if self.text[colon - 1 : colon] != ":" or key.end_mark.line != event.start_mark.line:
            raise _Miss
        if self.text[colon:].split("\n", 1)[0].strip():
            raise _Miss
        where = self._mark(self.parser.peek_event().start_mark)
        return self.nodes.ScalarNode(self.tags[_NULL], "", where, where, style=None)

    def _mark(self, mark: Any) -> Any:
        return self.mark(None, mark.index, mark.line, mark.column)


_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"


def _tags(nodes: Any) -> dict[str, Any]:
    """ruamel's tag objects of the collections, strings and nulls, one each, shared by every node made here (a
    tag object keeps its text once worked out; the round-trip composer makes one per node and works it out each
    time)."""
    return {tag: nodes.ScalarNode(tag, "", None, None).ctag for tag in (_SEQ, _MAP, _STR, _NULL)}
