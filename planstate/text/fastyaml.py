"""A fast cold read of front-matter data: libyaml's C parser for the syntax, ruamel's own resolver and constructor.

A round-trip parse costs about 1.75 ms a record, nearly all of it ruamel's pure-Python scanner
and parser; a cold `check` of 17,000 records spent a minute there. Here libyaml (PyYAML's C
extension, when installed) turns the text into events, these become the very nodes ruamel's
composer would make (tags resolved by ruamel's YAML 1.2 resolver), and ruamel's round-trip
constructor, the one `parser.py` uses, builds the data: so the data is the round-trip parser's.
This path answers only plain YAML: any anchor, alias, explicit tag, merge key, directive, a key
that is not a scalar, a nesting past the limits, or any error gives `MISS`, and the caller parses
round trip, which also reports every error at its line and column. `tests/test_cache.py` checks
over the corpus that whatever this path answers equals the round-trip parser's data.
"""

from __future__ import annotations

import io
from typing import Any

from planstate.text import envelope
from planstate.text.limits import MAX_DEPTH, MAX_EXPANDED_NODES, MAX_FRONT_MATTER
from planstate.text.nodes import MERGE_TAG
from planstate.text.plaindata import to_plain

MISS = object()
_STATE: list[Any] = []  # (libyaml's parser, its events, ruamel's nodes and marks, a ruamel YAML), made once


def _machinery() -> Any:
    """libyaml's parser class and ruamel's pieces, made once per process; None without libyaml."""
    if not _STATE:
        import importlib

        try:  # PyYAML built with libyaml (`planstate[fast]`); without it every read parses round trip
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


def front_matter_data(raw: bytes) -> Any:
    """The front-matter data of a file's bytes as the round-trip parser gives it, or MISS."""
    machinery = _machinery()
    if machinery is None:
        return MISS
    try:
        parts = envelope.decode(raw, None)
    except Exception:  # the round-trip path reports it
        return MISS
    text = parts.text
    if not parts.head or not text.strip() or len(text) > MAX_FRONT_MATTER or "\t" in text or "%" in text:
        return MISS
    try:
        root = _Composer(machinery, text).compose()
        if root is None:
            return MISS
        loader = machinery[4]
        constructor = loader.constructor
        data = constructor.construct_document(root)
    except Exception:  # anything this path does not vouch for
        return MISS
    return to_plain(data)


class _Composer:
    """ruamel nodes from libyaml's events, for plain YAML only (see the module docstring)."""

    def __init__(self, machinery: Any, text: str) -> None:
        cparser, self.events, self.nodes, self.mark, loader = machinery
        self.parser = cparser(text)
        self.resolver = loader.resolver
        self.count = 0

    def compose(self) -> Any:
        """The one document's root node; None when this path cannot vouch for it."""
        events = self.events
        parser = self.parser
        try:
            if not isinstance(parser.get_event(), events.StreamStartEvent):
                return None
            start = parser.get_event()
            if not isinstance(start, events.DocumentStartEvent) or start.explicit or start.version or start.tags:
                return None
            root = self._node(parser.get_event(), 0)
            end = parser.get_event()
            if root is None or not isinstance(end, events.DocumentEndEvent):
                return None
            if not isinstance(parser.get_event(), events.StreamEndEvent):
                return None
            return root
        finally:
            parser.dispose()

    def _marks(self, event: Any) -> tuple[Any, Any]:
        start, end = event.start_mark, event.end_mark
        return (
            self.mark(None, start.index, start.line, start.column),
            self.mark(None, end.index, end.line, end.column),
        )

    def _node(self, event: Any, depth: int) -> Any:
        events, nodes = self.events, self.nodes
        self.count += 1
        if depth > MAX_DEPTH or self.count > MAX_EXPANDED_NODES or getattr(event, "anchor", None) is not None:
            return None
        if isinstance(event, events.ScalarEvent):
            if event.tag is not None:
                return None
            style = event.style or None  # libyaml says '' for a plain scalar, ruamel None
            tag = self.resolver.resolve(nodes.ScalarNode, event.value, tuple(event.implicit))
            start, end = self._marks(event)
            return nodes.ScalarNode(tag, event.value, start, end, style=style)
        if isinstance(event, events.SequenceStartEvent):
            if event.tag is not None:
                return None
            start, _end = self._marks(event)
            items = []
            while True:
                child = self.parser.get_event()
                if isinstance(child, events.SequenceEndEvent):
                    break
                node = self._node(child, depth + 1)
                if node is None:
                    return None
                items.append(node)
            _s, end = self._marks(child)
            tag = self.resolver.resolve(nodes.SequenceNode, None, event.implicit)
            return nodes.SequenceNode(tag, items, start, end, flow_style=event.flow_style)
        if isinstance(event, events.MappingStartEvent):
            if event.tag is not None:
                return None
            start, _end = self._marks(event)
            pairs = []
            while True:
                child = self.parser.get_event()
                if isinstance(child, events.MappingEndEvent):
                    break
                key = self._node(child, depth + 1)
                if not isinstance(key, nodes.ScalarNode) or key.tag == MERGE_TAG:
                    return None
                value = self._node(self.parser.get_event(), depth + 1)
                if value is None:
                    return None
                pairs.append((key, value))
            _s, end = self._marks(child)
            tag = self.resolver.resolve(nodes.MappingNode, None, event.implicit)
            return nodes.MappingNode(tag, pairs, start, end, flow_style=event.flow_style)
        return None  # an alias, or anything else
