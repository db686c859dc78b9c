"""A fast cold read of front-matter data: libyaml's C parser for the syntax, ruamel's resolver and constructor.

A round-trip parse costs about 1.75 ms a record, nearly all of it ruamel's pure-Python scanner
and parser; a cold `check` of 17,000 records spent a minute there. Here libyaml (PyYAML's C
extension) turns the text into events; each plain scalar gets
the tag ruamel's YAML 1.2 resolver gives it (its own table), strings and nulls are taken as they
are, and every other scalar (ints, floats, booleans, timestamps) is built by ruamel's round-trip
constructor, the one `parser.py` uses, then made plain as `parser.py` makes it. So the data is
the round-trip parser's. This path answers only plain YAML: an anchor, alias, explicit tag, merge
key, duplicate key, directive, tab, a key that is not a scalar, a nesting past the limits, or any
error gives `MISS`, and the caller parses round trip, which also reports every error at its line
and column. `tests/test_cache.py` checks over the corpus that whatever this path answers equals
the round-trip parser's data, and that it answers no file that parser refuses.
"""

from __future__ import annotations

import io
from datetime import date, datetime
from typing import Any

from planstate.text import envelope
from planstate.text.limits import MAX_DEPTH, MAX_EXPANDED_NODES, MAX_FRONT_MATTER
from planstate.text.nodes import MERGE_TAG
from planstate.text.plaindata import to_plain

MISS = object()
# Characters of YAML from which one read pays for loading this path (importing PyYAML and making ruamel's
# constructor cost about 17 ms; the round-trip parser reads about 150 characters a millisecond).
WORTH_LOADING = 4096
_STATE: list[Any] = []  # (libyaml's parser, its events, ruamel's nodes and marks, a ruamel YAML), made once


def _machinery() -> Any:
    """libyaml's parser class and ruamel's pieces, made once per process; None without libyaml."""
    if not _STATE:
        import importlib

        try:  # PyYAML built with libyaml; without it (a build from source without libyaml) reads parse round trip
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
    if machinery is None or not text.strip() or len(text) > MAX_FRONT_MATTER or "\t" in text:
        return MISS
    if text.startswith("%") or "\n%" in text:  # a directive line (`%YAML`, `%TAG`): a `%` inside a value is text
        return MISS
    try:
        return _Builder(machinery, text).document()
    except Exception:  # anything this path does not vouch for
        return MISS


_STR = "tag:yaml.org,2002:str"
_NULL = "tag:yaml.org,2002:null"
# What each plain scalar's text (statuses, dates, phase numbers recur across thousands of records) turned out to
# be: resolving and constructing it again gives the same value, and these values are immutable.
_SEEN: dict[str, Any] = {}
SEEN_LIMIT = 50_000
SEEN_LENGTH = 12  # dates, numbers, statuses and names recur; ids and times (16 and 20 characters) do not
_IMMUTABLE = (str, int, float, bool, type(None), date, datetime)


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
        if kind is events.SequenceStartEvent:
            items: list[Any] = []
            end = events.SequenceEndEvent
            while True:
                child = get_event()
                kind = type(child)
                if kind is end:
                    return items
                if kind is scalar and child.anchor is None and child.tag is None and self._room(depth + 1):
                    items.append(self._scalar(child))  # what `_value` does with it, without the call
                else:
                    items.append(self._value(child, depth + 1))
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
            if type(child) is scalar and child.anchor is None and child.tag is None and self._room(depth + 1):
                out[key] = self._scalar(child)  # what `_value` does with it, without the call
            else:
                out[key] = self._value(child, depth + 1)

    def _room(self, depth: int) -> bool:
        """Count one more node at `depth`; tell whether it is within the limits (`_value` refuses it if not)."""
        self.count += 1
        if depth > MAX_DEPTH or self.count > MAX_EXPANDED_NODES:
            self.count -= 1  # `_value` counts it again, then refuses it
            return False
        return True

    def _scalar(self, event: Any) -> Any:
        value = event.value
        if not event.implicit[0]:
            return value  # quoted or block: a string
        known = _SEEN.get(value, MISS)
        if known is not MISS:
            return known
        tag = _resolve(self.table, value)
        if tag == _STR:
            plain: Any = value
        elif tag == _NULL:
            plain = None
        elif tag == MERGE_TAG:
            return MERGE_TAG  # the caller refuses it as a key; as a value ruamel would not make it plain either
        else:
            plain = self._construct(event, tag)
        if len(value) <= SEEN_LENGTH and len(_SEEN) < SEEN_LIMIT and type(plain) in _IMMUTABLE:
            _SEEN[value] = plain  # never a list or dict (callers may change those), nor a long text (titles)
        return plain

    def _construct(self, event: Any, tag: str) -> Any:
        """A plain scalar that is no string or null, built by ruamel's constructor and made plain."""
        value = event.value
        start, end = event.start_mark, event.end_mark
        node = self.nodes.ScalarNode(
            tag,
            value,
            self.mark(None, start.index, start.line, start.column),
            self.mark(None, end.index, end.line, end.column),
            style=None,
        )
        constructed = self.constructor.construct_object(node, deep=True)
        return to_plain(constructed)


def _table(loader: Any) -> dict[Any, list[tuple[str, Any]]]:
    """ruamel's implicit resolvers for YAML 1.2 by first character (its VersionedResolver's own table)."""
    if len(_STATE) == 1:
        _STATE.append(loader.resolver.versioned_resolver)
    table: dict[Any, list[tuple[str, Any]]] = _STATE[1]
    return table


def _resolve(table: dict[Any, list[tuple[str, Any]]], value: str) -> str:
    """The tag ruamel's resolver gives a plain scalar (VersionedResolver.resolve for YAML 1.2)."""
    for tag, regexp in [*table.get(value[0] if value else "", []), *table.get(None, [])]:
        if regexp.match(value):
            return str(tag)
    return _STR
