"""Region markers in STATE.md's body: their grammar, finding the regions they form, and the checksum of a region.

A region is the text between a `<!-- planstate:begin NAME sha=… in=… -->` line and a
`<!-- planstate:end NAME -->` line. `sha` hashes the text planstate wrote there, so a hand edit
shows; `in` hashes what it was rendered from. Markers inside fenced code blocks outside regions
are text. Marker lines that do not form a region are troubles, and the text they concern is
left alone (see docs/format.md).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from planstate.core.digests import sha256_hex

# The region names, in the order a new STATE.md shows them.
NAMES = ("position", "progress", "next", "blockers", "phases", "gantt", "decisions", "sessions", "resume")
HASH_CHARS = 12

_CANDIDATE = re.compile(r"[ \t]*<!--[ \t]*planstate:")
_MARKER = re.compile(
    r"([ \t]*)<!--[ \t]*planstate:(begin|end)[ \t]+([A-Za-z0-9_-]+)((?:[ \t]+[A-Za-z0-9_-]+=[^\s>]*)*)[ \t]*-->[ \t]*"
)
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_UNREADABLE = (
    "unreadable planstate marker; a marker is `<!-- planstate:begin NAME -->` or "
    "`<!-- planstate:end NAME -->` alone on its line"
)


def text_hash(text: str) -> str:
    """The short hash of a region's text; line endings are normalized first, so CRLF and LF agree."""
    data = text.replace("\r\n", "\n").encode("utf-8", errors="surrogateescape")
    return sha256_hex(data)[:HASH_CHARS]


def looks_like_marker(line: str) -> bool:
    """Tell whether a line is, or tries to be, a planstate marker line."""
    return _CANDIDATE.match(line) is not None


def has_markers(body: str) -> bool:
    """Tell cheaply whether a body may hold regions."""
    return "<!-- planstate:" in body or "planstate:begin" in body


def split_lines(text: str) -> list[str]:
    """Split text into lines that keep their endings (only `\\n` ends a line, so joining gives the text back)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


class Region:
    """A well-formed region: its name, marker attributes and the line indexes of its two marker lines."""

    __slots__ = ("attrs", "begin", "end", "indent", "name")

    def __init__(self, name: str, attrs: dict[str, str], begin: int, end: int, indent: str = "") -> None:
        self.name = name
        self.attrs = attrs
        self.begin = begin
        self.end = end
        self.indent = indent

    def __repr__(self) -> str:
        return f"Region({self.name!r}, {self.attrs!r}, {self.begin}, {self.end})"

    def interior(self, lines: list[str]) -> str:
        """The region's text: the lines between its markers, as they are."""
        return "".join(lines[self.begin + 1 : self.end])


class Trouble(NamedTuple):
    """A marker problem: the line index it was found on and what is wrong."""

    at: int  # line index in the body
    message: str


class Layout:
    """A body split into lines, with its well-formed regions and its marker problems."""

    __slots__ = ("lines", "regions", "troubles")

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.regions: list[Region] = []
        self.troubles: list[Trouble] = []


def begin_line(region: Region, sha: str, inputs: str, ending: str) -> str:
    """A begin marker line with fresh `sha` and `in` attributes; other attributes are kept in their order."""
    attrs = {"sha": sha, "in": inputs, **{k: v for k, v in region.attrs.items() if k not in ("sha", "in")}}
    text = " ".join(f"{k}={v}" for k, v in attrs.items())
    return f"{region.indent}<!-- planstate:begin {region.name} {text} -->{ending}"


# ---------------------------------------------------------------------------- finding the regions


def parse(body: str, first_line: int = 1) -> Layout:
    """Find the regions of a body. `first_line` is the file line the body starts on (for messages).

    Only a begin line followed by its end line, with no other marker between them, is a region.
    A begin line while another region is open ends that one as malformed (it has no end line) and
    opens its own region; an end line that does not close the open region is a stray marker of its
    own; so one mistyped marker leaves the regions after it alone. Markers inside fenced code blocks
    outside regions are text. Anything else is a Trouble, and the text it concerns is left alone.
    """
    layout = Layout(split_lines(body))
    parser = _Parser(first_line)
    for index, raw in enumerate(layout.lines):
        parser.line(index, raw.rstrip("\r\n"))
    pairs = parser.finish()
    layout.regions, named = _known(pairs, first_line)
    layout.troubles = sorted([*parser.troubles, *named], key=lambda t: t.at)
    return layout


class _Open:
    """A begin marker waiting for its end while parsing."""

    __slots__ = ("index", "marker", "tainted")

    def __init__(self, marker: re.Match[str], index: int) -> None:
        self.marker = marker
        self.index = index
        self.tainted = False  # a stray or unreadable marker lies inside it: not a region, left alone

    @property
    def name(self) -> str:
        """The region name on the begin line."""
        return self.marker.group(3)


class _Parser:
    """Reads a body line by line: code fences, begin and end markers, the region open now, and the troubles."""

    def __init__(self, first_line: int) -> None:
        self.first_line = first_line
        self.current: _Open | None = None
        self.fence: tuple[str, int] | None = None  # the open code fence: its character and length
        self.pairs: list[Region] = []
        self.troubles: list[Trouble] = []

    def line(self, index: int, text: str) -> None:
        """Read one line (without its ending)."""
        if self.current is None and self._in_code(text):
            return
        if not _CANDIDATE.match(text):
            return
        marker = _MARKER.fullmatch(text)
        if marker is None:
            self.troubles.append(Trouble(index, _UNREADABLE))
            if self.current is not None:
                self.current.tainted = True
        elif marker.group(2) == "begin":
            self._begin(marker, index)
        else:
            self._end(marker.group(3), index)

    def finish(self) -> list[Region]:
        """The well-formed regions, in order, once every line was read."""
        if self.current is not None:
            self.troubles.append(_unended(self.current, "before the end of the file"))
        return self.pairs

    def _in_code(self, text: str) -> bool:
        """Tell whether a line outside regions opens, continues or closes a fenced code block."""
        if self.fence is not None:
            if _closes(self.fence, text):
                self.fence = None
            return True
        opening = _FENCE.match(text)
        if opening:
            self.fence = (opening.group(1)[0], len(opening.group(1)))
            return True
        return False

    def _begin(self, marker: re.Match[str], index: int) -> None:
        if self.current is not None:
            # Most likely its end line was mistyped or lost: stop the open region here, so the regions
            # after it are still regions (its own text is never rendered, so nothing a person typed is lost).
            where = f"before line {self.first_line + index}, where region {marker.group(3)} begins"
            self.troubles.append(_unended(self.current, where))
        self.current = _Open(marker, index)

    def _end(self, name: str, index: int) -> None:
        current = self.current
        if current is not None and current.name == name:
            if not current.tainted:
                marker = current.marker
                self.pairs.append(Region(name, _attributes(marker.group(4)), current.index, index, marker.group(1)))
            self.current = None
            return
        where = ""
        if current is not None:
            where = (
                f" (region {current.name} is open since line {self.first_line + current.index}; "
                f"a mistyped `<!-- planstate:end {current.name} -->`?)"
            )
            current.tainted = True
        self.troubles.append(Trouble(index, f"end of region {name} without its begin line{where}"))


def _known(pairs: list[Region], first_line: int) -> tuple[list[Region], list[Trouble]]:
    """The regions with a known name that appears once; a trouble for each unknown or repeated one."""
    troubles: list[Trouble] = []
    first: dict[str, Region] = {}
    repeated: set[str] = set()
    for region in pairs:
        if region.name not in NAMES:
            troubles.append(Trouble(region.begin, f"unknown region {region.name!r}; regions are: {', '.join(NAMES)}"))
        elif region.name in first:
            repeated.add(region.name)
            troubles.append(
                Trouble(
                    region.begin,
                    f"region {region.name} appears again (first at line {first_line + first[region.name].begin}); "
                    "neither is rendered until one is removed",
                )
            )
        else:
            first[region.name] = region
    return [r for r in first.values() if r.name not in repeated], troubles


def _unended(opened: _Open, expected: str) -> Trouble:
    """The trouble of a region whose end line never came; `expected` says where it was due."""
    name = opened.name
    return Trouble(opened.index, f"region {name} has no end line (`<!-- planstate:end {name} -->` expected {expected})")


def _closes(fence: tuple[str, int], text: str) -> bool:
    """Tell whether a line closes a code fence opened with `fence` (its character and length)."""
    closing = _FENCE.match(text)
    return (
        closing is not None
        and closing.group(1)[0] == fence[0]
        and len(closing.group(1)) >= fence[1]
        and not text[closing.end() :].strip()
    )


def _attributes(text: str) -> dict[str, str]:
    """The `key=value` attributes after a marker's name, in order."""
    out: dict[str, str] = {}
    for item in text.split():
        key, _, value = item.partition("=")
        out[key] = value
    return out
