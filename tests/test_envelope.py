"""The file envelope (text/envelope.py): one delimiter rule for Document and for the body-only readers."""

from __future__ import annotations

import pytest

from planstate.core.errors import ParseError
from planstate.render.bodies import split_body
from planstate.text import envelope
from planstate.text.document import Document

FILES = [
    b"",
    b"no front matter\n",
    b"---\na: 1\n---\nbody\n",
    b"---\r\na: 1\r\n---\r\nbody\r\n",
    b"\xef\xbb\xbf---\na: 1\n---\nbody\n",
    b"---  \t\na: 1\n...\t\nbody\n",
    b"---\n---\n",
    b"---\n---",
    b"---\na: 1\n---\n",
    b"---\na: |\n  x\n  ---x\n---\n\n---\nmore body\n",
    b"--- \na: 1\n...\n---\nbody",
    b"----\na: 1\n---\n",
    b"---" + b" " * 70 + b"\na: 1\n---\nbody\n",
    b"---" + b" " * 70 + b"x\na: 1\n---\nbody\n",
    b"\xef\xbb\xbfplain body \xff with a stray byte\n",
]


@pytest.mark.parametrize("data", FILES)
def test_split_joins_back_to_the_same_bytes(data: bytes) -> None:
    parts = envelope.split(data)
    assert b"".join(parts) == data
    assert Document.from_bytes(data).to_bytes() == data


@pytest.mark.parametrize("data", FILES)
def test_document_and_split_body_agree_on_the_body(data: bytes) -> None:
    doc = Document.from_bytes(data)
    assert split_body(data) == (doc.body, doc.body_line)


def test_an_opening_line_is_three_dashes_and_blanks_only() -> None:
    long_blank = b"---" + b" " * 70 + b"\na: 1\n---\nbody\n"
    assert Document.from_bytes(long_blank).data == {"a": 1}
    not_opening = b"---" + b" " * 70 + b"x\na: 1\n---\nbody\n"
    doc = Document.from_bytes(not_opening)
    assert not doc.has_front_matter
    assert doc.body == not_opening.decode()


def test_unclosed_front_matter_has_no_body() -> None:
    data = b"---\na: 1\nbody\n"
    assert envelope.split(data) == (b"", b"---\n", b"a: 1\nbody\n", b"", b"")
    assert not envelope.split(data).closed
    assert split_body(data) == ("", 1)
    with pytest.raises(ParseError, match="never closed"):
        Document.from_bytes(data)


def test_decode_locates_the_first_byte_that_is_not_utf8() -> None:
    data = envelope.BOM + b"---\na: 1\nb: x\xffy\n---\n\xfe body bytes are not checked\n"
    with pytest.raises(ParseError) as caught:
        envelope.decode(data, "STATE.md")
    assert (caught.value.line, caught.value.column) == (3, 5)
    assert "byte 0xff at offset 16" in caught.value.message


def test_nul_bytes_are_looked_for_only_near_the_start() -> None:
    with pytest.raises(ParseError, match="binary file"):
        envelope.decode(envelope.BOM + b"---\n\x00\n---\n", None)
    late = b"---\na: 1\n---\n" + b"x" * envelope.BINARY_PROBE + b"\x00"
    assert envelope.decode(late, None).text == "a: 1\n"


def test_newline_style_follows_the_delimiters_else_the_body() -> None:
    assert Document.from_bytes(b"---\r\na: 1\r\n---\r\n").newline == "\r\n"
    assert Document.from_bytes(b"body\r\nmore\n").newline == "\r\n"
    assert Document.from_bytes(b"body\nmore\r\n").newline == "\n"
    assert envelope.delimiters("\r\n") == ("---\r\n", "---\r\n")
