"""The file envelope: a BOM, the `---` lines around the front matter, UTF-8 decoding, line endings and the body."""

from __future__ import annotations

import re
from typing import NamedTuple

from planstate.core.errors import ParseError

BOM = b"\xef\xbb\xbf"
BINARY_PROBE = 8192  # leading bytes looked at for a NUL
# The one delimiter rule (docs/format.md): the first line is `---` with optional trailing blanks; the front
# matter ends at the next line that is `---` or `...`. Delimiters are ASCII, so searching bytes is safe in UTF-8.
_OPEN = re.compile(rb"---[ \t]*(?:\r?\n|\Z)")
_CLOSE = re.compile(rb"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.MULTILINE)


class Split(NamedTuple):
    """A file's bytes cut at its front-matter delimiter lines, nothing decoded or refused."""

    bom: bytes
    head: bytes  # the opening `---` line; empty when the file has no front matter
    front: bytes  # the text between the delimiter lines (all the rest when it is never closed)
    tail: bytes  # the closing `---` or `...` line; empty without front matter or when it is never closed
    body: bytes

    @property
    def closed(self) -> bool:
        """Tell whether front matter, if the file opens one, is closed."""
        return bool(self.tail) or not self.head

    @property
    def body_line(self) -> int:
        """The 1-based file line where the body starts."""
        return (self.head + self.front + self.tail).count(b"\n") + 1


def split(data: bytes) -> Split:
    """Cut a file's bytes into BOM, opening line, front matter, closing line and body."""
    bom = BOM if data.startswith(BOM) else b""
    rest = data[len(bom) :]
    opening = _OPEN.match(rest)
    if opening is None:
        return Split(bom, b"", b"", b"", rest)
    start = opening.end()
    close = _CLOSE.search(rest, start)
    if close is None:
        return Split(bom, rest[:start], rest[start:], b"", b"")
    return Split(bom, rest[:start], rest[start : close.start()], rest[close.start() : close.end()], rest[close.end() :])


class Envelope(NamedTuple):
    """A file with its front matter decoded between the delimiter lines; `to_bytes` joins it back."""

    bom: bytes
    head: str
    text: str
    tail: str
    body: bytes

    def to_bytes(self) -> bytes:
        """The file's bytes."""
        return self.bom + (self.head + self.text + self.tail).encode("utf-8") + self.body

    @property
    def body_line(self) -> int:
        """The 1-based file line where the body starts."""
        return (self.head + self.text + self.tail).count("\n") + 1


def decode(data: bytes, where: str | None) -> Envelope:
    """Split a file and decode its front matter; refuse binary files, unclosed front matter and bad UTF-8."""
    skipped = len(BOM) if data.startswith(BOM) else 0
    if b"\x00" in data[skipped : skipped + BINARY_PROBE]:
        raise ParseError("binary file (NUL bytes), not markdown", file=where, line=1, column=1)
    parts = split(data)
    if not parts.head:
        return Envelope(parts.bom, "", "", "", parts.body)
    if not parts.closed:
        raise ParseError(
            "front matter opened with '---' on line 1 is never closed (no '---' or '...' line)",
            file=where,
            line=1,
            column=1,
        )
    try:
        head, text, tail = (part.decode("utf-8") for part in (parts.head, parts.front, parts.tail))
    except UnicodeDecodeError:
        raise _not_utf8(parts.head + parts.front + parts.tail, skipped, where) from None
    return Envelope(parts.bom, head, text, tail, parts.body)


def _not_utf8(framed: bytes, skipped: int, where: str | None) -> ParseError:
    """The error for the first byte of the delimited front matter that is not UTF-8, at its line and column."""
    try:
        framed.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = int(exc.start)
    else:  # pragma: no cover - only called when decoding failed
        bad = len(framed) - 1
    line_start = framed.rfind(b"\n", 0, bad) + 1
    line = framed[:bad].count(b"\n") + 1
    column = len(framed[line_start:bad].decode("utf-8", errors="replace")) + 1
    return ParseError(
        f"front matter is not UTF-8 text (byte 0x{framed[bad]:02x} at offset {skipped + bad})",
        file=where,
        line=line,
        column=column,
    )


def first_newline(data: bytes) -> str:
    """The line ending of the first line of `data`: CR LF or LF (also when there is no line)."""
    i = data.find(b"\n")
    return "\r\n" if i > 0 and data[i - 1 : i] == b"\r" else "\n"


def newline_style(head: str, tail: str, body: bytes) -> str:
    """The line ending a file uses: its delimiter lines', else the body's first line's."""
    return "\r\n" if (head or tail).endswith("\r\n") else first_newline(body)


def delimiters(newline: str) -> tuple[str, str]:
    """The opening and closing lines of a new front matter block."""
    return "---" + newline, "---" + newline
