"""Document: hand-made adversarial files, exact edits, safe quoting and located parse errors."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

import pytest
import yaml
from conftest import EXAMPLES
from hypothesis import HealthCheck, assume, given, reject, settings
from hypothesis import strategies as st

from planstate.core.errors import EditError, ParseError, UsageError
from planstate.text.document import Document
from planstate.text.paths import get_in, parse_path
from planstate.text.plaindata import same

Op = tuple[Any, ...]


def edit(text: str | bytes, *ops: Op) -> str:
    """Apply `(method, path[, value])` edits to a file and return the new text."""
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    doc = Document.from_bytes(data)
    for name, *args in ops:
        getattr(doc, name)(*args)
    out = doc.to_bytes()
    assert same(Document.from_bytes(out).data, doc.data)  # what is written is what the document says
    return out.decode("utf-8")


def edit_bytes(data: bytes, *ops: Op) -> bytes:
    """Apply edits to raw bytes and return the new bytes."""
    doc = Document.from_bytes(data)
    for name, *args in ops:
        getattr(doc, name)(*args)
    return doc.to_bytes()


def refused(text: str, error: type[Exception], op: Op) -> Document:
    """Check the edit raises `error` and leaves the document's bytes exactly as they were."""
    doc = Document.from_bytes(text.encode("utf-8"))
    name, *args = op
    with pytest.raises(error):
        getattr(doc, name)(*args)
    assert doc.to_bytes() == text.encode("utf-8")
    assert same(doc.data, Document.from_bytes(text.encode("utf-8")).data)
    return doc


def diff_lines(old: str, new: str) -> tuple[list[str], list[str]]:
    """The lines only in `old` and the lines only in `new`, around a common head and tail."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    return a[head : len(a) - tail], b[head : len(b) - tail]


def case_ids(cases: list[tuple[Op, str, str]]) -> list[str]:
    """Test ids `method-path` for edit cases."""
    return [f"{op[0]}-{op[1]}" for op, _old, _new in cases]


def parse_error(data: bytes) -> ParseError:
    """The ParseError raised for `data`."""
    with pytest.raises(ParseError) as caught:
        Document.from_bytes(data, "STATE.md")
    return caught.value


# ---------------------------------------------------------------------------- reading back byte for byte

ROUND_TRIP = {
    "comments": "---\n# top\ntitle: x  # beside\n\n# above\nlist:\n  - a  # item\n  # between\n  - b\n# end\n---\n",
    "crlf": "---\r\ntitle: x\r\nlist:\r\n  - a\r\n---\r\nbody\r\nmore\r\n",
    "bom": "\ufeff---\ntitle: x\n---\nbody\n",
    "body-tabs-and-rules": "---\na: 1\n---\n\tindented\n---\nnot front matter\n---\n...\n",
    "empty": "---\n---\n",
    "empty-with-body": "---\n---\n# Title\n",
    "comment-only": "---\n# nothing here\n---\nbody\n",
    "no-front-matter": "# Just markdown\n\n---\n\nA rule above.\n",
    "empty-file": "",
    "no-final-newline": "---\na: 1\n---\nbody",
    "close-at-eof": "---\na: 1\n---",
    "dots-close": "---\na: 1\n...\nbody\n",
    "spaces-after-delimiters": "--- \t\na: 1\n---  \nbody\n",
    "unicode": "---\nключ: значение ✓\n名前: 🎉\n---\nтело\n",
    "long-lines": "---\nlong: " + "x" * 5000 + "\nother: 1\n---\n" + "y" * 5000 + "\n",
    "anchors": "---\nbase: &b {x: 1}\nref: *b\nmerged:\n  <<: *b\n  y: 2\n---\n",
    "flow": "---\nl: [a, b]\nm: {x: 1}\ne: []\nf: {}\n---\n",
    "block-scalars": "---\na: |  # c\n  x\n\nb: |-\n  y\nc: |+\n  z\n\nd: >\n  w\n  v\n---\n",
    "mixed-indent": "---\nm:\n    a: 1\nl:\n- x\nk:\n  -   y: 1\n      z: 2\n---\n",
    "latin1-body": "---\na: 1\n---\ncaf\udce9\n",
}


@pytest.mark.parametrize("text", list(ROUND_TRIP.values()), ids=list(ROUND_TRIP))
def test_round_trip_is_byte_identical(text: str) -> None:
    data = text.encode("utf-8", errors="surrogateescape")
    doc = Document.from_bytes(data)
    assert doc.to_bytes() == data


def test_reading_values_and_body() -> None:
    doc = Document.from_bytes(b"\xef\xbb\xbf---\r\ntitle: Hello\r\ncount: 3\r\n---\r\n# Body\r\n")
    assert doc.data == {"title": "Hello", "count": 3}
    assert doc.get("title") == "Hello"
    assert doc.get("missing", None) is None
    assert doc.body == "# Body\r\n"
    assert doc.body_line == 5
    assert doc.has_front_matter
    assert doc.newline == "\r\n"
    with pytest.raises(UsageError):
        doc.get("missing")


def test_get_returns_a_copy() -> None:
    doc = Document.from_bytes(b"---\nl: [1]\n---\n")
    doc.get("l").append(2)
    doc.data["l"].append(3)
    assert doc.get("l") == [1]


def test_file_without_front_matter_reads_as_none() -> None:
    doc = Document.from_bytes(b"# Title\n")
    assert not doc.has_front_matter
    assert doc.data is None
    assert doc.body == "# Title\n"
    assert doc.get("x", "default") == "default"


def test_locate_points_at_keys_and_items() -> None:
    doc = Document.from_bytes("\ufeff---\r\ntitle: x\r\nphases:\r\n  - name: a\r\n    status: done\r\n---\r\n".encode())
    assert doc.locate("title") == (2, 1)
    assert doc.locate("phases.0.status") == (5, 5)
    assert doc.locate("phases[0].name") == (4, 5)
    assert doc.locate("phases.0.missing") == (4, 5)  # the deepest part that exists
    assert doc.locate("missing") == (2, 1)


# ---------------------------------------------------------------------------- comments everywhere

COMMENTED = """\
---
# about the file
title: Hello  # the title
# about tags
tags:
  - a   # first
  - b
# above status
status: draft
# end comment
---
body
"""


def test_set_keeps_the_comment_beside_the_key() -> None:
    assert edit(COMMENTED, ("set", "title", "New")) == COMMENTED.replace("title: Hello  #", "title: New  #")


def test_set_list_item_keeps_its_comment() -> None:
    assert edit(COMMENTED, ("set", "tags.0", "z")) == COMMENTED.replace("  - a   # first", "  - z   # first")


def test_set_value_before_end_comment() -> None:
    assert edit(COMMENTED, ("set", "status", "done")) == COMMENTED.replace("status: draft", "status: done")


def test_delete_key_keeps_comment_above_next_key() -> None:
    assert edit(COMMENTED, ("delete", "title")) == COMMENTED.replace("title: Hello  # the title\n", "")


def test_delete_list_keeps_comment_above_next_key() -> None:
    assert edit(COMMENTED, ("delete", "tags")) == COMMENTED.replace("tags:\n  - a   # first\n  - b\n", "")


def test_delete_list_items_removes_only_their_lines() -> None:
    assert edit(COMMENTED, ("delete", "tags.0")) == COMMENTED.replace("  - a   # first\n", "")
    assert edit(COMMENTED, ("delete", "tags.1")) == COMMENTED.replace("  - b\n", "")


def test_delete_last_key_keeps_end_comment() -> None:
    assert edit(COMMENTED, ("delete", "status")) == COMMENTED.replace("status: draft\n", "")


def test_append_goes_after_the_last_item_not_after_the_comment() -> None:
    assert edit(COMMENTED, ("append", "tags", "c")) == COMMENTED.replace("  - b\n", "  - b\n  - c\n")


def test_new_key_goes_before_the_end_comment() -> None:
    assert edit(COMMENTED, ("set", "owner", "me")) == COMMENTED.replace("status: draft\n", "status: draft\nowner: me\n")


def test_nested_missing_path_creates_mappings() -> None:
    assert edit(COMMENTED, ("set", "new.nested.key", "v")) == COMMENTED.replace(
        "status: draft\n", "status: draft\nnew:\n  nested:\n    key: v\n"
    )


def test_value_becomes_block_after_its_comment() -> None:
    assert edit(COMMENTED, ("set", "title", {"a": 1})) == COMMENTED.replace(
        "title: Hello  # the title\n", "title:  # the title\n  a: 1\n"
    )
    assert edit(COMMENTED, ("set", "title", "multi\nline\n")) == COMMENTED.replace(
        "title: Hello  # the title\n", "title: |  # the title\n  multi\n  line\n"
    )


def test_block_collection_becoming_inline_keeps_the_key_comment() -> None:
    assert edit("---\na:  # keep me\n  b: 1\n---\n", ("set", "a", "x")) == "---\na: x  # keep me\n---\n"
    files = "---\nctx:\n  files_modified:  # touched files\n    - a.py\n    - b.py\n  other: 1\n---\n"
    assert edit(files, ("set", "ctx.files_modified", [])) == (
        "---\nctx:\n  files_modified: []  # touched files\n  other: 1\n---\n"
    )
    assert edit(files, ("set", "ctx.files_modified", {"k": 1})) == (
        "---\nctx:\n  files_modified:  # touched files\n    k: 1\n  other: 1\n---\n"
    )
    listed = "---\nl:\n  - # first\n    a: 1\n---\n"
    assert edit(listed, ("set", "l.0", 7)) == "---\nl:\n  - 7 # first\n---\n"
    assert edit("---\na:\n  - x\n---\n", ("set", "a", "y")) == '---\na: "y"\n---\n'  # no comment, none made


def test_empty_value_with_comment() -> None:
    text = "---\ndate:\nempty: # a comment\nnext: 1\n---\n"
    assert edit(text, ("set", "empty", "v")) == "---\ndate:\nempty: v # a comment\nnext: 1\n---\n"
    assert edit(text, ("set", "date", "2024-01-01")) == '---\ndate: "2024-01-01"\nempty: # a comment\nnext: 1\n---\n'
    assert edit(text, ("append", "date", "x")) == "---\ndate:\n  - x\nempty: # a comment\nnext: 1\n---\n"
    assert edit(text, ("set", "empty", {"a": 1})) == "---\ndate:\nempty: # a comment\n  a: 1\nnext: 1\n---\n"


def test_empty_value_with_trailing_spaces() -> None:
    text = "---\ndate: \nl:\n- \n- x\n---\n"
    assert edit(text, ("set", "date", "v")) == "---\ndate: v\nl:\n- \n- x\n---\n"
    assert edit(text, ("set", "l.0", "v")) == "---\ndate: \nl:\n- v\n- x\n---\n"
    assert edit(text, ("set", "date", {"a": 1})) == "---\ndate:\n  a: 1\nl:\n- \n- x\n---\n"
    assert edit("---\nk: [a]   \n---\n", ("set", "k", {"a": 1})) == "---\nk:\n  a: 1\n---\n"


def test_dangling_list_comment_stays() -> None:
    text = "---\nlist:\n  - x   # c\n  # dangling\n---\n"
    assert edit(text, ("append", "list", "y")) == '---\nlist:\n  - x   # c\n  - "y"\n  # dangling\n---\n'
    assert edit(text, ("delete", "list.0")) == "---\nlist: []\n  # dangling\n---\n"


# ---------------------------------------------------------------------------- CRLF, BOM, body

CRLF = b"---\r\ntitle: a\r\ntags:\r\n  - x\r\nmeta:\r\n  k: v\r\n---\r\nbody\r\n"


def assert_all_crlf(data: bytes) -> None:
    assert data.count(b"\n") == data.count(b"\r\n")


@pytest.mark.parametrize(
    ("ops", "expected"),
    [
        ([("set", "title", "b")], b"---\r\ntitle: b\r\ntags:\r\n  - x\r\nmeta:\r\n  k: v\r\n---\r\nbody\r\n"),
        (
            [("set", "title", "multi\nline")],
            b"---\r\ntitle: |-\r\n  multi\r\n  line\r\ntags:\r\n  - x\r\nmeta:\r\n  k: v\r\n---\r\nbody\r\n",
        ),
        (
            [("append", "tags", {"a": 1, "b": [1, 2]})],
            b"---\r\ntitle: a\r\ntags:\r\n  - x\r\n  - a: 1\r\n    b:\r\n      - 1\r\n      - 2\r\n"
            b"meta:\r\n  k: v\r\n---\r\nbody\r\n",
        ),
        (
            [("set", "meta.new", {"a": "p\nq"})],
            b"---\r\ntitle: a\r\ntags:\r\n  - x\r\nmeta:\r\n  k: v\r\n  new:\r\n    a: |-\r\n      p\r\n      q\r\n"
            b"---\r\nbody\r\n",
        ),
        ([("set", "z", 1)], b"---\r\ntitle: a\r\ntags:\r\n  - x\r\nmeta:\r\n  k: v\r\nz: 1\r\n---\r\nbody\r\n"),
        ([("delete", "tags")], b"---\r\ntitle: a\r\nmeta:\r\n  k: v\r\n---\r\nbody\r\n"),
        ([("delete", "tags.0")], b"---\r\ntitle: a\r\ntags: []\r\nmeta:\r\n  k: v\r\n---\r\nbody\r\n"),
        ([("delete", "meta.k")], b"---\r\ntitle: a\r\ntags:\r\n  - x\r\nmeta: {}\r\n---\r\nbody\r\n"),
    ],
    ids=["set", "literal", "append-block", "nested-literal", "add", "delete-list", "delete-item", "delete-key"],
)
def test_crlf_edits_write_crlf(ops: list[Op], expected: bytes) -> None:
    out = edit_bytes(CRLF, *ops)
    assert out == expected
    assert_all_crlf(out)


def test_crlf_file_without_front_matter_gets_crlf_delimiters() -> None:
    out = edit_bytes(b"no front matter\r\nline 2\r\n", ("set", "x", {"a": [1]}))
    assert out == b"---\r\nx:\r\n  a:\r\n    - 1\r\n---\r\nno front matter\r\nline 2\r\n"


def test_crlf_empty_front_matter() -> None:
    assert edit_bytes(b"---\r\n---\r\nbody", ("set", "x", "y")) == b'---\r\nx: "y"\r\n---\r\nbody'


def test_bom_is_kept() -> None:
    data = b"\xef\xbb\xbf---\ntitle: a\n---\nbody\n"
    assert edit_bytes(data, ("set", "title", "b")) == b"\xef\xbb\xbf---\ntitle: b\n---\nbody\n"
    assert edit_bytes(b"\xef\xbb\xbfhello\n", ("set", "x", 1)) == b"\xef\xbb\xbf---\nx: 1\n---\nhello\n"


def test_body_with_tabs_and_rules_is_untouched() -> None:
    body = "\tcode\n---\n\n...\n---\nkey: not front matter\n"
    text = "---\na: 1\n---\n" + body
    out = edit(text, ("set", "a", 2), ("set", "b", [1]))
    assert out == "---\na: 2\nb:\n  - 1\n---\n" + body
    assert Document.from_bytes(out.encode()).body == body


def test_non_utf8_body_is_kept_byte_for_byte() -> None:
    data = b"---\na: 1\n---\ncaf\xe9 \xff\xfe\n"
    out = edit_bytes(data, ("set", "a", 2))
    assert out == b"---\na: 2\n---\ncaf\xe9 \xff\xfe\n"


def test_dots_closing_delimiter_is_kept() -> None:
    assert edit("---\na: 1\n...\nbody\n", ("set", "b", 2)) == "---\na: 1\nb: 2\n...\nbody\n"


def test_close_at_end_of_file_without_newline() -> None:
    assert edit("---\na: 1\n---", ("set", "b", 2)) == "---\na: 1\nb: 2\n---"


# ---------------------------------------------------------------------------- empty and missing front matter


def test_empty_front_matter_gets_a_key() -> None:
    assert edit("---\n---\nbody", ("set", "x", "y")) == '---\nx: "y"\n---\nbody'
    assert edit("---\n---\nbody", ("set", "x.y", [1, {"a": 2}])) == '---\nx:\n  "y":\n    - 1\n    - a: 2\n---\nbody'
    assert edit("---\n---\n", ("append", "l", "a")) == "---\nl:\n  - a\n---\n"


def test_comment_only_front_matter_gets_a_key_after_the_comment() -> None:
    assert edit("---\n# c\n---\nbody", ("set", "x", 1)) == "---\n# c\nx: 1\n---\nbody"


def test_file_without_front_matter_gets_one() -> None:
    assert edit("# Title\n\ntext\n", ("set", "title", "T")) == "---\ntitle: T\n---\n# Title\n\ntext\n"
    assert edit("", ("set", "x", 1)) == "---\nx: 1\n---\n"
    assert edit("hello", ("set", "x", 1)) == "---\nx: 1\n---\nhello"


def test_body_that_looks_like_a_rule_survives_new_front_matter() -> None:
    text = "----\n# T\n\n---\nmore\n"
    out = edit(text, ("set", "x", 1))
    assert out == "---\nx: 1\n---\n" + text
    assert Document.from_bytes(out.encode()).body == text


# ---------------------------------------------------------------------------- unicode and long lines


def test_unicode_keys_and_values() -> None:
    text = "---\nключ: значение\n---\n"
    out = edit(text, ("set", "ключ", "новое ✓"), ("set", "名前", "🎉 emoji"), ("set", "ß.ü", "x"))
    assert out == "---\nключ: новое ✓\n名前: 🎉 emoji\nß:\n  ü: x\n---\n"
    doc = Document.from_bytes(out.encode())
    assert doc.get("名前") == "🎉 emoji"
    assert doc.get(["ß", "ü"]) == "x"


def test_five_thousand_character_lines() -> None:
    long = "x" * 5000
    text = f"---\nlong: {long}\nother: 1\n---\n{'y' * 5000}\n"
    out = edit(text, ("set", "other", "z" * 5000))
    assert out == f"---\nlong: {long}\nother: {'z' * 5000}\n---\n{'y' * 5000}\n"
    out = edit(text, ("set", "long", "short"))
    assert out == f"---\nlong: short\nother: 1\n---\n{'y' * 5000}\n"
    words = " ".join(["word"] * 1200)  # never folded onto several lines
    out = edit(text, ("set", "other", words))
    assert diff_lines(text, out) == (["other: 1\n"], [f"other: {words}\n"])
    assert Document.from_bytes(out.encode()).get("other") == words


# ---------------------------------------------------------------------------- anchors and aliases

ANCHORS = """\
---
base: &b
  x: 1
  y: 2
other: *b
merged:
  <<: *b
  z: 3
name: &n hello
alias: *n
plain: ok
---
"""


def test_anchors_and_aliases_read_expanded() -> None:
    doc = Document.from_bytes(ANCHORS.encode())
    assert doc.get("other") == {"x": 1, "y": 2}
    assert doc.get("merged.x") == 1
    assert doc.get("merged.z") == 3
    assert doc.get("alias") == "hello"


@pytest.mark.parametrize(
    "op",
    [
        ("set", "base.x", 5),
        ("set", "other.x", 5),
        ("set", "other", "flat"),
        ("set", "merged.x", 5),
        ("set", "name", "bye"),
        ("set", "alias", "bye"),
        ("delete", "base"),
        ("delete", "base.y"),
        ("delete", "alias"),
        ("set", "base.new", 1),
    ],
    ids=lambda op: f"{op[0]}-{op[1]}",
)
def test_editing_shared_nodes_is_refused(op: Op) -> None:
    doc = refused(ANCHORS, EditError, op)
    doc.set("plain", "still works")  # a refused edit leaves the document usable
    assert doc.to_bytes() == ANCHORS.replace("plain: ok", "plain: still works").encode()


def test_editing_beside_anchors_works() -> None:
    assert edit(ANCHORS, ("set", "merged.z", 5)) == ANCHORS.replace("z: 3", "z: 5")
    assert edit(ANCHORS, ("set", "plain", "new")) == ANCHORS.replace("plain: ok", "plain: new")
    assert edit(ANCHORS, ("set", "extra", 1)) == ANCHORS.replace("plain: ok\n", "plain: ok\nextra: 1\n")


MERGES = """\
---
base: &b
  x: 1
only:
  <<: *b
before:
  z: 3
  <<: *b
after:
  <<: *b
  z: 3
  w: 4
flow: {z: 0, <<: [*b]}
last: 1
---
"""

MERGE_CASES: list[tuple[Op, str, str]] = [
    (("set", "only.new", 1), "only:\n  <<: *b\n", "only:\n  <<: *b\n  new: 1\n"),
    (("delete", "only"), "only:\n  <<: *b\n", ""),
    (("set", "before.new", 1), "  z: 3\n  <<: *b\n", "  z: 3\n  <<: *b\n  new: 1\n"),
    (("delete", "before.z"), "before:\n  z: 3\n", "before:\n"),
    (("set", "before.z", {"k": 1}), "  z: 3\n  <<: *b\n", "  z:\n    k: 1\n  <<: *b\n"),
    (("delete", "after.z"), "  z: 3\n  w: 4\n", "  w: 4\n"),
    (("delete", "after.w"), "  z: 3\n  w: 4\n", "  z: 3\n"),
    (("set", "after.new", 1), "  w: 4\n", "  w: 4\n  new: 1\n"),
    (("set", "flow.new", 1), "flow: {z: 0, <<: [*b]}", "flow: {z: 0, <<: [*b], new: 1}"),
    (("delete", "flow.z"), "flow: {z: 0, <<: [*b]}", "flow: {<<: [*b]}"),
]


@pytest.mark.parametrize(("op", "old", "new"), MERGE_CASES, ids=case_ids(MERGE_CASES))
def test_mappings_with_merge_keys(op: Op, old: str, new: str) -> None:
    assert MERGES.count(old) == 1
    assert edit(MERGES, op) == MERGES.replace(old, new)


def test_merged_values_cannot_be_edited_where_they_are_used() -> None:
    refused(MERGES, EditError, ("set", "only.x", 2))
    refused(MERGES, EditError, ("delete", "after.x"))


# ---------------------------------------------------------------------------- flow collections

FLOW = """\
---
tags: [a, b]   # flow list
meta: {x: 1, y: two}
empty: []
emap: {}
nested: {l: [1, 2], m: {k: v}}
---
"""


FLOW_COLLECTIONS_CASES: list[tuple[Op, str, str]] = [
    (("append", "tags", "c"), "tags: [a, b]", "tags: [a, b, c]"),
    (("append", "tags", "x, y"), "tags: [a, b]", 'tags: [a, b, "x, y"]'),
    (("append", "tags", {"k": "v"}), "tags: [a, b]", "tags: [a, b, {k: v}]"),
    (("append", "tags", "multi\nline"), "tags: [a, b]", 'tags: [a, b, "multi\\nline"]'),
    (("set", "tags.0", "z"), "tags: [a, b]", "tags: [z, b]"),
    (("delete", "tags.0"), "tags: [a, b]", "tags: [b]"),
    (("delete", "tags.1"), "tags: [a, b]", "tags: [a]"),
    (("set", "meta.x", 2), "meta: {x: 1, y: two}", "meta: {x: 2, y: two}"),
    (("set", "meta.z", "[3]"), "meta: {x: 1, y: two}", 'meta: {x: 1, y: two, z: "[3]"}'),
    (("delete", "meta.x"), "meta: {x: 1, y: two}", "meta: {y: two}"),
    (("delete", "meta.y"), "meta: {x: 1, y: two}", "meta: {x: 1}"),
    (("append", "nested.l", 3), "l: [1, 2]", "l: [1, 2, 3]"),
    (("set", "nested.m.k", "a: b"), "m: {k: v}", 'm: {k: "a: b"}'),
    (("set", "nested.m.j", "a\nb"), "m: {k: v}", 'm: {k: v, j: "a\\nb"}'),
    (("delete", "nested.m.k"), "m: {k: v}", "m: {}"),
    (("set", "nested.l", []), "l: [1, 2]", "l: []"),
    (("set", "tags", ["x"]), "tags: [a, b]", "tags: [x]"),
    (("set", "tags", {"k": [1]}), "tags: [a, b]   # flow list", "tags:   # flow list\n  k:\n    - 1"),
    (("append", "empty", "first"), "empty: []", "empty:\n  - first"),
    (("append", "empty", {"a": 1}), "empty: []", "empty:\n  - a: 1"),
    (("set", "emap.k", "v"), "emap: {}", "emap:\n  k: v"),
]


@pytest.mark.parametrize(("op", "old", "new"), FLOW_COLLECTIONS_CASES, ids=case_ids(FLOW_COLLECTIONS_CASES))
def test_flow_collections(op: Op, old: str, new: str) -> None:
    assert FLOW.count(old) == 1
    assert edit(FLOW, op) == FLOW.replace(old, new)


def test_empty_flow_list_in_a_list_item() -> None:
    assert edit("---\nl:\n  - []\n---\n", ("append", "l.0", 1)) == "---\nl:\n  - - 1\n---\n"


# ---------------------------------------------------------------------------- block scalars

BLOCKS = """\
---
lit: |   # literal
  line one
  line two
strip: |-
  stripped
keep: |+
  kept

fold: >  # folded
  folded
  text

after: x
---
"""


def test_block_scalars_read() -> None:
    assert Document.from_bytes(BLOCKS.encode()).data == {
        "lit": "line one\nline two\n",
        "strip": "stripped",
        "keep": "kept\n\n",
        "fold": "folded text\n",
        "after": "x",
    }


BLOCK_SCALARS_CASES: list[tuple[Op, str, str]] = [
    (("set", "lit", "new one\nnew two\n"), "  line one\n  line two\n", "  new one\n  new two\n"),
    (("set", "lit", "single"), "lit: |   # literal\n  line one\n  line two\n", "lit: |-   # literal\n  single\n"),
    (("set", "strip", "a\nb"), "  stripped\n", "  a\n  b\n"),
    (("set", "keep", "k\n"), "keep: |+\n  kept\n\n", "keep: |\n  k\n"),
    (("set", "fold", "new fold"), "fold: >  # folded\n  folded\n  text\n", "fold: |-  # folded\n  new fold\n"),
    (("set", "lit", 5), "lit: |   # literal\n  line one\n  line two\n", "lit: 5   # literal\n"),
    (("set", "strip", ["a"]), "strip: |-\n  stripped\n", "strip:\n  - a\n"),
    (("delete", "lit"), "lit: |   # literal\n  line one\n  line two\n", ""),
    (("delete", "keep"), "keep: |+\n  kept\n\n", ""),
    (("delete", "fold"), "fold: >  # folded\n  folded\n  text\n\n", ""),  # `keep` above must not grow
]


@pytest.mark.parametrize(("op", "old", "new"), BLOCK_SCALARS_CASES, ids=case_ids(BLOCK_SCALARS_CASES))
def test_block_scalars(op: Op, old: str, new: str) -> None:
    assert BLOCKS.count(old) == 1
    assert edit(BLOCKS, op) == BLOCKS.replace(old, new)


def test_delete_after_keep_scalar_in_a_list() -> None:
    text = "---\nl:\n  - |+\n    k\n\n  - x\n\n  - y\n---\n"
    assert edit(text, ("delete", "l.1")) == "---\nl:\n  - |+\n    k\n\n  - y\n---\n"


def test_keep_literal_is_not_written_where_it_would_swallow_blank_lines() -> None:
    text = "---\na: x\n\nb: y\nl:\n  - p\n\n  - q\n\nz: 1\n---\n"
    assert edit(text, ("set", "a", "p\n\n")) == text.replace("a: x", 'a: "p\\n\\n"')
    assert edit(text, ("set", "l.0", "p\n\n")) == text.replace("  - p\n", '  - "p\\n\\n"\n')
    assert edit(text, ("append", "l", "p\n\n")) == text.replace("  - q\n", '  - q\n  - "p\\n\\n"\n')
    assert edit(text, ("set", "new", "p\n\n")) == text.replace("z: 1\n", "z: 1\nnew: |+\n  p\n\n")


def test_literal_followed_by_deeper_comment_falls_back_to_quotes() -> None:
    text = "---\na: x\n    # deep comment\nb: y\n---\n"
    assert edit(text, ("set", "a", "p\nq")) == text.replace("a: x", 'a: "p\\nq"')


@pytest.mark.parametrize(
    ("text", "path", "expected"),
    [
        ("---\ntop: x\n---\n", "top", "---\ntop: |2-\n    indented\n  second\n---\n"),
        ("---\na:\n  b: x\n---\n", "a.b", "---\na:\n  b: |2-\n      indented\n    second\n---\n"),
        ("---\na:\n    b: x\n---\n", "a.b", "---\na:\n    b: |4-\n          indented\n        second\n---\n"),
        ("---\nl:\n  - x\n---\n", "l.0", "---\nl:\n  - |2-\n      indented\n    second\n---\n"),
        ("---\nl:\n- x\n---\n", "l.0", "---\nl:\n- |2-\n    indented\n  second\n---\n"),
        ("---\nl:\n  - k: x\n---\n", "l.0.k", "---\nl:\n  - k: |2-\n        indented\n      second\n---\n"),
    ],
    ids=["top", "nested", "nested-4", "item", "item-indentless", "item-key"],
)
def test_literal_indentation_indicator_counts_from_the_parent(text: str, path: str, expected: str) -> None:
    value = "  indented\nsecond"
    out = edit(text, ("set", path, value))
    assert out == expected
    assert Document.from_bytes(out.encode()).get(path) == value
    found, py = get_in(yaml.safe_load(out.split("---\n")[1]), parse_path(path))
    assert found and py == value


def test_new_nested_literal_with_leading_spaces() -> None:
    out = edit("---\nl:\n  - x\n---\n", ("append", "l", {"k": "  a\nb", "m": [" c\nd"]}))
    assert out == "---\nl:\n  - x\n  - k: |2-\n        a\n      b\n    m:\n      - |2-\n         c\n        d\n---\n"
    assert Document.from_bytes(out.encode()).get("l.1") == {"k": "  a\nb", "m": [" c\nd"]}


# ---------------------------------------------------------------------------- indentation styles

MIXED = """\
---
map:
    a: 1
    b:
        c: 2
list:
- x
- y
items:
-   name: one
    v: 1
-   name: two
    v: 2
---
"""


def test_new_nested_values_follow_the_file_indentation() -> None:
    assert edit(MIXED, ("set", "map.new", {"k": [1, 2]})) == MIXED.replace(
        "        c: 2\n", "        c: 2\n    new:\n        k:\n        - 1\n        - 2\n"
    )
    assert edit(MIXED, ("set", "map.b.d", {"k": 1})) == MIXED.replace(
        "        c: 2\n", "        c: 2\n        d:\n            k: 1\n"
    )
    assert edit(MIXED, ("set", "map.a", [1, 2])) == MIXED.replace("    a: 1\n", "    a:\n    - 1\n    - 2\n")


def test_append_follows_each_list_own_item_offset() -> None:
    assert edit(MIXED, ("append", "list", {"k": [1, 2]})) == MIXED.replace("- y\n", "- y\n- k:\n  - 1\n  - 2\n")
    assert edit(MIXED, ("append", "items", {"name": "three", "v": 3})) == MIXED.replace(
        "    v: 2\n", "    v: 2\n-   name: three\n    v: 3\n"
    )


def test_edits_inside_offset_items() -> None:
    assert edit(MIXED, ("delete", "items.0.name")) == MIXED.replace("-   name: one\n    v: 1\n", "-   v: 1\n")
    assert edit(MIXED, ("delete", "items.1")) == MIXED.replace("-   name: two\n    v: 2\n", "")
    assert edit(MIXED, ("set", "list", {"now": "map"})) == MIXED.replace("list:\n- x\n- y\n", "list:\n    now: map\n")


def test_two_space_file_gets_two_space_blocks() -> None:
    text = "---\na:\n  b:\n    - x\n---\n"
    assert edit(text, ("set", "c", {"d": {"e": [1]}})) == "---\na:\n  b:\n    - x\nc:\n  d:\n    e:\n      - 1\n---\n"


# ---------------------------------------------------------------------------- lists of mappings

PHASES = """\
---
phases:
  - name: Design  # first
    status: done
  - name: Build
    status: todo
    tasks:
      - a
flows:
  - {name: a, n: 1}
  - {name: b, n: 2}
---
"""


LISTS_OF_MAPPINGS_CASES: list[tuple[Op, str, str]] = [
    (("delete", "phases.0.name"), "  - name: Design  # first\n    status: done\n", "  - status: done\n"),
    (("delete", "phases.1.name"), "  - name: Build\n    status: todo\n", "  - status: todo\n"),
    (("delete", "phases.1.tasks"), "    tasks:\n      - a\n", ""),
    (("delete", "phases.1.tasks.0"), "    tasks:\n      - a\n", "    tasks: []\n"),
    (("delete", "phases.0"), "  - name: Design  # first\n    status: done\n", ""),
    (("delete", "phases.1"), "  - name: Build\n    status: todo\n    tasks:\n      - a\n", ""),
    (("set", "phases.1.status", "done"), "    status: todo\n", "    status: done\n"),
    (("set", "phases[1].status", "done"), "    status: todo\n", "    status: done\n"),
    (("set", "phases.-1.status", "x"), "    status: todo\n", "    status: x\n"),
    (("set", "phases.0.extra", "e"), "    status: done\n", "    status: done\n    extra: e\n"),
    (
        ("append", "phases", {"name": "Ship", "status": "todo"}),
        "      - a\n",
        "      - a\n  - name: Ship\n    status: todo\n",
    ),
    (
        ("append", "flows", {"name": "c", "n": 3}),
        "  - {name: b, n: 2}\n",
        '  - {name: b, n: 2}\n  - {name: c, "n": 3}\n',
    ),
    (
        ("append", "flows", {"l": [1, "x, y"]}),
        "  - {name: b, n: 2}\n",
        '  - {name: b, n: 2}\n  - {l: [1, "x, y"]}\n',
    ),
    (("delete", "flows.0.name"), "  - {name: a, n: 1}\n", "  - {n: 1}\n"),
    (("delete", "flows.0"), "  - {name: a, n: 1}\n", ""),
]


@pytest.mark.parametrize(("op", "old", "new"), LISTS_OF_MAPPINGS_CASES, ids=case_ids(LISTS_OF_MAPPINGS_CASES))
def test_lists_of_mappings(op: Op, old: str, new: str) -> None:
    assert PHASES.count(old) == 1
    assert edit(PHASES, op) == PHASES.replace(old, new)


def test_delete_first_item_of_a_nested_list_on_the_dash_line() -> None:
    assert edit("---\nl:\n- - a\n  - b\n- c\n---\n", ("delete", "l.0.0")) == "---\nl:\n- - b\n- c\n---\n"
    text = "---\nl:\n  - - a: 1\n      b: 2\n    - c\n---\n"
    assert edit(text, ("delete", "l.0.0")) == "---\nl:\n  - - c\n---\n"
    assert edit(text, ("delete", "l.0.1")) == "---\nl:\n  - - a: 1\n      b: 2\n---\n"


def test_delete_first_key_of_item_with_block_value() -> None:
    text = "---\nl:\n  - tasks:\n      - a\n    name: x\n  - y\n---\n"
    assert edit(text, ("delete", "l.0.tasks")) == "---\nl:\n  - name: x\n  - y\n---\n"


def test_index_out_of_range_is_a_usage_error() -> None:
    refused(PHASES, UsageError, ("set", "phases.2.status", "x"))
    refused(PHASES, UsageError, ("set", "phases.2", "x"))
    refused(PHASES, UsageError, ("set", "phases.-3", "x"))
    refused(PHASES, UsageError, ("delete", "phases.2"))
    refused(PHASES, UsageError, ("set", "phases.name", "x"))


# ---------------------------------------------------------------------------- inserting into lists


def test_inserted_items_leave_comments_on_their_items() -> None:
    text = "---\nl:\n  - a # ca\n  - b # cb\n---\n"
    assert edit(text, ("update", {"l": ["z", "a", "b"]})) == "---\nl:\n  - z\n  - a # ca\n  - b # cb\n---\n"
    assert edit(text, ("update", {"l": ["a", "m", "b"]})) == "---\nl:\n  - a # ca\n  - m\n  - b # cb\n---\n"
    assert edit(text, ("update", {"l": ["z", "a", "m", "b", "e"]})) == (
        "---\nl:\n  - z\n  - a # ca\n  - m\n  - b # cb\n  - e\n---\n"
    )


def test_insert_keeps_comment_lines_with_the_item_below() -> None:
    text = "---\nl:\n- a\n# about b\n- b\n---\n"
    assert edit(text, ("insert", "l.1", "m")) == "---\nl:\n- a\n- m\n# about b\n- b\n---\n"
    assert edit(text, ("insert", "l.0", "z")) == "---\nl:\n- z\n- a\n# about b\n- b\n---\n"


def test_insert_into_flow_lists_and_lists_of_mappings() -> None:
    assert edit("---\nl: [a, b]  # c\n---\n", ("insert", "l.1", "m")) == "---\nl: [a, m, b]  # c\n---\n"
    assert edit("---\nl: [a, b]\n---\n", ("update", {"l": ["z", "a", "b"]})) == "---\nl: [z, a, b]\n---\n"
    phases = "---\nphases:\n    -   name: One  # first\n        status: done\n    -   name: Two\n---\n"
    assert edit(phases, ("insert", "phases.1", {"name": "Between", "status": "pending"})) == (
        "---\nphases:\n    -   name: One  # first\n        status: done\n"
        "    -   name: Between\n        status: pending\n    -   name: Two\n---\n"
    )
    flowed = "---\nl:\n  - {a: 1}\n  - {a: 2}\n---\n"
    assert edit(flowed, ("insert", "l.1", {"a": 9})) == "---\nl:\n  - {a: 1}\n  - {a: 9}\n  - {a: 2}\n---\n"


def test_insert_where_the_text_cannot_take_it_rewrites_the_items() -> None:
    text = "---\n- - a\n  - b\n---\n"
    refused(text, EditError, ("insert", "0.0", "z"))
    assert edit(text, ("update", [["z", "a", "b"]])) == "---\n- - z\n  - a\n  - b\n---\n"


def test_insert_needs_an_existing_item() -> None:
    refused("---\nl: [a]\nk: x\n---\n", UsageError, ("insert", "l.3", "z"))
    refused("---\nl: [a]\nk: x\n---\n", UsageError, ("insert", "k.0", "z"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    items=st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=4), min_size=1, max_size=6, unique=True),
    inserts=st.lists(st.tuples(st.integers(0, 12), st.text(alphabet="xyz", min_size=1, max_size=3)), max_size=4),
    indent=st.sampled_from([0, 2, 4]),
    flow=st.booleans(),
)
def test_random_insertions_keep_every_item_line(
    items: list[str], inserts: list[tuple[int, str]], indent: int, flow: bool
) -> None:
    """Any items added anywhere: each old item keeps its own line (and comment), the data is exactly the new list."""
    if flow:
        text = "---\nl: [" + ", ".join(items) + "]  # the list\nz: 1\n---\n"
    else:
        text = "---\nl:\n" + "".join(f"{' ' * indent}- {item}  # about {item}\n" for item in items) + "z: 1\n---\n"
    new = list(items)
    for position, value in inserts:
        new.insert(position % (len(new) + 1), value)
    doc = Document.from_bytes(text.encode())
    doc.update({"l": new, "z": 1})
    out = doc.to_bytes().decode()
    assert same(Document.from_bytes(out.encode()).data, {"l": new, "z": 1})
    if flow:
        assert "]  # the list\n" in out
    else:
        lines = out.splitlines()
        for item in items:
            assert f"{' ' * indent}- {item}  # about {item}" in lines
        assert len([line for line in lines if line.lstrip().startswith("- ")]) == len(new)


# ---------------------------------------------------------------------------- deleting the last one


def test_deleting_the_only_key_or_item_leaves_an_empty_collection() -> None:
    text = "---\nsolo:\n  - only: 1\nm:\n  only: x\n---\n"
    assert edit(text, ("delete", "solo.0.only")) == "---\nsolo:\n  - {}\nm:\n  only: x\n---\n"
    assert edit(text, ("delete", "solo.0")) == "---\nsolo: []\nm:\n  only: x\n---\n"
    assert edit(text, ("delete", "m.only")) == "---\nsolo:\n  - only: 1\nm: {}\n---\n"
    assert edit(text, ("delete", "m")) == "---\nsolo:\n  - only: 1\n---\n"


def test_deleting_the_only_top_level_key_empties_the_front_matter() -> None:
    out = edit("---\nonly: 1\n---\nbody\n", ("delete", "only"))
    assert out == "---\n---\nbody\n"
    assert Document.from_bytes(out.encode()).data is None


def test_deleting_the_only_top_level_entry_keeps_the_comments() -> None:
    text = "---\n# important\nonly: 1  # c\n# trailing\n---\nbody\n"
    assert edit(text, ("delete", "only")) == "---\n# important\n# trailing\n---\nbody\n"
    text = "---\n# important\n- a\n# trailing\n---\nbody\n"
    assert edit(text, ("delete", "0")) == "---\n# important\n# trailing\n---\nbody\n"
    assert edit("---\n{a: 1}\n---\nbody\n", ("delete", "a")) == "---\n---\nbody\n"


def test_root_list_and_scalar_front_matter() -> None:
    assert edit("---\n- a\n---\n", ("set", "0", "b")) == "---\n- b\n---\n"
    refused("---\n- a\n---\n", UsageError, ("set", "x", "b"))
    refused("---\njust text\n---\n", UsageError, ("set", "x", "b"))


def test_keys_that_need_quoting() -> None:
    out = edit("---\na: 1\n---\n", ("set", ["a: b"], 1), ("set", [""], 2), ("set", ["x\ny"], 3), ("set", ["- k"], 4))
    assert out == '---\na: 1\n"a: b": 1\n"": 2\n"x\\ny": 3\n"- k": 4\n---\n'
    assert Document.from_bytes(out.encode()).data == {"a": 1, "a: b": 1, "": 2, "x\ny": 3, "- k": 4}


def test_key_too_long_for_an_implicit_key_is_refused() -> None:
    refused("---\na: 1\n---\n", EditError, ("set", ["k" * 2000], 1))


def test_delete_missing_is_a_usage_error() -> None:
    refused("---\na: 1\n---\n", UsageError, ("delete", "b"))
    refused("---\na: 1\n---\n", UsageError, ("delete", "a.b"))


# ---------------------------------------------------------------------------- set, append, update


def test_noop_set_leaves_bytes_identical() -> None:
    for path, value in [("title", "Hello"), ("tags", ["a", "b"]), ("status", "draft"), ("tags.0", "a")]:
        assert edit(COMMENTED, ("set", path, value)) == COMMENTED
    assert edit(BLOCKS, ("set", "keep", "kept\n\n")) == BLOCKS
    assert edit(FLOW, ("update", Document.from_bytes(FLOW.encode()).data)) == FLOW


def test_set_replaces_a_list_item_by_item() -> None:
    assert edit(COMMENTED, ("set", "tags", ["x", "b"])) == COMMENTED.replace("  - a   # first", "  - x   # first")


def test_set_through_null_and_scalars() -> None:
    assert edit("---\na:\n---\n", ("set", "a.b.c", 2)) == "---\na:\n  b:\n    c: 2\n---\n"
    assert edit("---\na: null\n---\n", ("set", "a.b", 2)) == "---\na:\n  b: 2\n---\n"
    assert edit("---\na: ~\n---\n", ("append", "a", 2)) == "---\na:\n  - 2\n---\n"
    refused("---\na: 1\n---\n", UsageError, ("set", "a.b", 2))
    refused("---\na: 1\n---\n", UsageError, ("append", "a", 2))
    refused("---\na: [1]\n---\n", UsageError, ("set", "a.0.x", 2))


def test_escaped_dot_in_path() -> None:
    assert edit("---\na: 1\n---\n", ("set", "a\\.b", 1)) == "---\na: 1\na.b: 1\n---\n"


def test_bad_paths_are_usage_errors() -> None:
    for path in ["", "a..b", "a[x]", "a.", ".a"]:
        refused("---\na: 1\n---\n", UsageError, ("set", path, 1))


def test_scalar_types_are_written_to_read_back() -> None:
    text = "---\nv: 1\n---\n"
    cases: list[tuple[Any, str]] = [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (0, "0"),
        (-7, "-7"),
        (10**30, str(10**30)),
        (1.0, "1.0"),
        (1e20, "1.0e+20"),
        (float("inf"), ".inf"),
        (date(2024, 1, 2), "2024-01-02"),
        (datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), "2024-01-02T03:04:05Z"),
    ]
    for value, rendered in cases:
        out = edit(text, ("set", "v", value))
        assert out == f"---\nv: {rendered}\n---\n"
        back = Document.from_bytes(out.encode()).get("v")
        assert same(back, value) if not isinstance(value, datetime) else back == value


def test_update_makes_the_smallest_edits() -> None:
    text = "---\na: 1  # keep me\nb: [1]\nc: {x: 1}\n---\n"
    assert edit(text, ("update", {"a": 1, "b": [1, 2], "d": "new"})) == "---\na: 1  # keep me\nb: [1, 2]\nd: new\n---\n"


def test_set_with_list_segments() -> None:
    assert edit("---\na: {b.c: 1}\n---\n", ("set", ["a", "b.c"], 2)) == "---\na: {b.c: 2}\n---\n"


def test_apply_rolls_back_every_edit_when_one_fails() -> None:
    doc = Document.from_bytes(ANCHORS.encode())
    from planstate.text.plaindata import Op as PlainOp

    with pytest.raises(EditError):
        doc.apply([PlainOp("replace", ("plain",), "changed"), PlainOp("replace", ("other", "x"), 9)])
    assert doc.to_bytes() == ANCHORS.encode()
    assert doc.get("plain") == "ok"


# ---------------------------------------------------------------------------- quoting

TRICKY_STRINGS = [
    "@x",
    "yes",
    "no",
    "Yes",
    "NO",
    "on",
    "off",
    "y",
    "n",
    "null",
    "Null",
    "~",
    "true",
    "false",
    "True",
    "a: b",
    "a:b",
    "a #b",
    "a#b",
    "#x",
    "*x",
    "&x",
    "!x",
    "%x",
    "-x",
    "- x",
    "-",
    "--",
    "---",
    "--- x",
    "...",
    "? x",
    "?x",
    ":x",
    "x:",
    "|x",
    ">x",
    "`x",
    "'x",
    '"x',
    ",x",
    "[x]",
    "{x}",
    "[x",
    "x]",
    "{x: 1}",
    "123",
    "-1",
    "+1",
    "0x1F",
    "0o17",
    "017",
    "1_000",
    "1:30",
    "1.5",
    "1e3",
    ".5",
    ".inf",
    "-.inf",
    ".nan",
    "2024-01-01",
    "2024-01-01T10:00:00Z",
    "2024-1-1",
    "=",
    "<<",
    "",
    " ",
    "  lead",
    "trail  ",
    " both ",
    "\t",
    "a\tb",
    "\ttab",
    "multi\nline",
    "multi\nline\n",
    "multi\n\n",
    "\n",
    "\n\nlead",
    "x\n  y",
    "a  \n  b",
    "key: value\n- item\n",
    "back\\slash",
    "\\n",
    'quo"te',
    "it's",
    "'single'",
    '"double"',
    "mix'\"ed",
    "ctl\x01\x02\x7f",
    "\x00",
    "bell\x07",
    "esc\x1b",
    "nel\x85",
    "ls\u2028ps\u2029",
    "\ufeffbom",
    "nbsp\u00a0",
    "a\r\nb",
    "cr\r",
    "é ✓ 🎉",
    "x" * 300,
]


@pytest.mark.parametrize("value", TRICKY_STRINGS, ids=[repr(v)[:30] for v in TRICKY_STRINGS])
@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("---\nk: x  # c\n---\n", "k"),
        ("---\nk: 'x'\n---\n", "k"),
        ('---\nk: "x"\n---\n', "k"),
        ("---\na:\n    k: x\n---\n", "a.k"),
        ("---\na: {k: x}\n---\n", "a.k"),
        ("---\nl:\n- x\n---\n", "l.0"),
        ("---\nl: [x, y]\n---\n", "l.0"),
        ("---\nz: 1\n---\n", "n.k"),
    ],
    ids=["plain", "single", "double", "nested", "flow-map", "item", "flow-item", "new"],
)
def test_tricky_strings_read_back_exactly(text: str, path: str, value: str) -> None:
    out = edit(text, ("set", path, value))
    back = Document.from_bytes(out.encode()).get(path)
    assert type(back) is str and back == value
    found, py = get_in(yaml.safe_load(Document.from_bytes(out.encode()).front_matter_text), parse_path(path))
    assert found and py == value  # YAML 1.1 (PyYAML) reads the same string


def test_single_line_values_stay_on_one_line() -> None:
    for value in TRICKY_STRINGS:
        if "\n" in value:
            continue
        out = edit("---\nk: x\nz: 1\n---\n", ("set", "k", value))
        assert out.count("\n") == 4, value


def test_quoted_style_is_kept() -> None:
    assert edit("---\nk: 'x'\n---\n", ("set", "k", "y")) == "---\nk: 'y'\n---\n"
    assert edit('---\nk: "x"\n---\n', ("set", "k", "y")) == '---\nk: "y"\n---\n'
    assert edit("---\nk: 'x'\n---\n", ("set", "k", "it's")) == "---\nk: 'it''s'\n---\n"
    assert edit("---\nk: x\n---\n", ("set", "k", "plain text")) == "---\nk: plain text\n---\n"


def test_multiline_text_becomes_a_literal_block() -> None:
    assert edit("---\nk: x\nz: 1\n---\n", ("set", "k", "one\ntwo\n")) == "---\nk: |\n  one\n  two\nz: 1\n---\n"
    assert edit("---\nk: x\nz: 1\n---\n", ("set", "k", "one\ntwo")) == "---\nk: |-\n  one\n  two\nz: 1\n---\n"
    assert edit("---\nk: x\nz: 1\n---\n", ("set", "k", "a\n\tb")) == "---\nk: |-\n  a\n  \tb\nz: 1\n---\n"


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=st.text(),
    where=st.sampled_from(
        [
            ("---\nk: x  # c\nz: 1\n---\n", "k"),
            ("---\na:\n    k: x\n    z: 1\n---\n", "a.k"),
            ("---\na: {k: x, z: 1}\n---\n", "a.k"),
            ("---\nl:\n- x\n- y\n---\n", "l.0"),
            ("---\nl: [x, y]\n---\n", "l.0"),
            ("---\nz: 1\n\n# end\n---\n", "n.m"),
            ("---\nk: |  # c\n  old\n\nz: 1\n---\n", "k"),
            ("---\nk: |+\n  old\n\nz: 1\n---\n", "k"),
            ("---\r\nk: x\r\nz:\r\n  - 1\r\n---\r\n", "z.0"),
        ]
    ),
)
def test_any_text_reads_back_identical(value: str, where: tuple[str, str]) -> None:
    text, path = where
    doc = Document.from_bytes(text.encode())
    doc.set(path, value)
    again = Document.from_bytes(doc.to_bytes())
    assert again.get(path) == value
    found, py = get_in(yaml.safe_load(again.front_matter_text), parse_path(path))
    assert found and py == value


# ---------------------------------------------------------------------------- parse errors


@pytest.mark.parametrize(
    ("data", "line", "column", "needle"),
    [
        (b"---\ntitle: [unclosed\n---\n", 3, 1, "expected ',' or ']'"),
        (b"---\na: 1\nb: : x\n---\n", 3, 4, "mapping values are not allowed"),
        (b"---\na: 1\n  b: 2\n---\n", 3, 3, "indentation: this line starts at column 3; expected column 1"),
        (b'---\na: 1\nb: "unterminated\n---\n', 4, 1, "end of stream"),
        (b"---\r\na: 1\r\nb: : x\r\n---\r\n", 3, 4, "mapping values are not allowed"),
        (b"\xef\xbb\xbf---\na: 1\nb: : x\n---\n", 3, 4, "mapping values are not allowed"),
        (b"---\n\ta: 1\n---\n", 2, 1, "'\\t'"),
        (b"---\na: @x\n---\n", 2, 4, "'@'"),
        (b"---\na: *nope\n---\n", 2, 4, "undefined alias"),
        (b"---\na: 1\na: 2\n---\n", 3, 1, "duplicate key"),
        (b"---\nb:\n  x: 1\n  x: 2\n---\n", 4, 3, "duplicate key"),
        (b"---\na: x\x01y\n---\n", 2, 5, "special characters"),
        (b"---\n? [a, b]\n: 1\n---\n", 2, 3, "keys must be plain values"),
        (b"---\ntitle: {{ .Title }}\n---\n", 2, 9, "keys must be plain values"),
        (b"---\na: &a [*a]\n---\n", 2, 4, "recursive alias"),
        (b"---\n%YAML 1.2\n---\n", 3, 1, "document start"),
    ],
    ids=[
        "unclosed-flow",
        "colon",
        "indent",
        "unterminated-string",
        "crlf",
        "bom",
        "tab",
        "at-sign",
        "undefined-alias",
        "duplicate-key",
        "nested-duplicate",
        "control-char",
        "complex-key",
        "template",
        "recursive-alias",
        "directive",
    ],
)
def test_parse_errors_point_at_the_file_line(data: bytes, line: int, column: int, needle: str) -> None:
    error = parse_error(data)
    assert (error.line, error.column) == (line, column)
    assert needle in error.message
    assert error.file == "STATE.md"
    assert str(error).startswith(f"STATE.md:{line}:{column}: ")


@pytest.mark.parametrize(
    ("data", "fixed"),
    [
        (b"---\nnext_action: Build: the index\n---\n", 'next_action: "Build: the index"'),
        (b"---\r\nnext_action: Build: the index\r\n---\r\n", 'next_action: "Build: the index"'),
        (b"---\nphases:\n  - name: A: b  # why\n---\n", '- name: "A: b"  # why'),
        (b'---\nnote: say "hi": now\n---\n', 'note: "say \\"hi\\": now"'),
    ],
    ids=["value", "crlf", "item-with-comment", "quotes-inside"],
)
def test_an_unquoted_colon_is_shown_quoted(data: bytes, fixed: str) -> None:
    error = parse_error(data)
    assert error.message == f"mapping values are not allowed here: quote the value, as in `{fixed}`"
    key, _, meant = data.decode().splitlines()[-2].strip().removeprefix("- ").partition(": ")
    assert yaml.safe_load(fixed.removeprefix("- ")) == {key: meant.split("  #")[0]}  # the line shown says it


def test_unclosed_front_matter() -> None:
    for data in [b"---\ntitle: x\n", b"---\ntitle: x\nbody without close\n", b"---\n", b"---"]:
        error = parse_error(data)
        assert (error.line, error.column) == (1, 1)
        assert "never closed" in error.message


def test_non_utf8_front_matter() -> None:
    error = parse_error(b"---\ntitle: caf\xe9\n---\n")
    assert (error.line, error.column) == (2, 11)
    assert "not UTF-8" in error.message and "0xe9" in error.message
    error = parse_error(b"\xef\xbb\xbf---\na: 1\ntitle: \xc3\xa9\xff\n---\n")
    assert (error.line, error.column) == (3, 9)
    assert "0xff" in error.message


def test_nul_bytes() -> None:
    error = parse_error(b"---\ntitle: x\x00\n---\n")
    assert (error.line, error.column) == (1, 1)
    assert "NUL" in error.message
    error = parse_error(b"---\nfill: " + b"x" * 10_000 + b"\nnul: \x00\n---\n")
    assert error.line == 3


def test_alias_bomb_is_refused() -> None:
    lines = ["---", 'a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    data = "\n".join([*lines, "title: bomb", "---", ""]).encode()
    error = parse_error(data)  # refused before expanding (how fast: benchmarks/, not here)
    assert "alias" in error.message
    assert error.line is not None


def test_small_alias_fan_out_is_fine() -> None:
    doc = Document.from_bytes(b"---\na: &a [1, 2]\nb: [*a, *a, *a]\n---\n")
    assert doc.get("b") == [[1, 2]] * 3


@pytest.mark.parametrize(
    "data",
    [
        b"---\n" + b"[" * 5000 + b"\n---\n",
        b"---\n" + b"a: [" * 5000 + b"\n---\n",
        b"---\n" + b"- " * 3000 + b"x\n---\n",
        b"---\n" + b"".join(b"  " * i + b"k:\n" for i in range(500)) + b"---\n",
        (
            "---\n"
            + "".join(f"a{i}: &a{i} " + "[" * 60 + (f"*a{i - 1}" if i else "x") + "]" * 60 + "\n" for i in range(3))
        ).encode()
        + b"---\n",
    ],
    ids=["flow", "flow-maps", "block-lists", "block-maps", "aliases"],
)
def test_deep_nesting_is_refused(data: bytes) -> None:
    error = parse_error(data)
    assert "deep" in error.message
    assert error.line is not None and error.line >= 2


def test_moderate_nesting_reads() -> None:
    doc = Document.from_bytes(b"---\n" + b"[" * 90 + b"]" * 90 + b"\n---\n")
    value = doc.data
    for _ in range(89):
        value = value[0]
    assert value == []


def test_tags_read_as_plain_values() -> None:
    doc = Document.from_bytes(b"---\na: !!str 12\nb: !!set {x, y}\nc: !custom y\nd: !!int '7'\n---\n")
    assert same(doc.data, {"a": "12", "b": {"x": None, "y": None}, "c": "y", "d": 7})


def test_parse_error_leaves_nothing_behind() -> None:
    data = b"---\na: [\n---\nbody\n"
    for _ in range(2):
        error = parse_error(data)
        assert error.line == 3


def test_edit_that_would_break_yaml_is_refused() -> None:
    text = "---\n? explicit\n: 5\nk: v\n---\n"
    refused(text, EditError, ("delete", "explicit"))
    assert edit(text, ("set", "k", "w")) == text.replace("k: v", "k: w")


# ---------------------------------------------------------------------------- random files, random edits

FUZZ_TEXT = st.text(alphabet=" \n-:#'\"|>[]{}!&*%@`,?xy0é.~", max_size=6)
FUZZ_DATA = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 5), FUZZ_TEXT),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(alphabet="abcxy", min_size=1, max_size=3), inner, max_size=3),
    ),
    max_leaves=10,
)
FUZZ_TOP = st.dictionaries(st.text(alphabet="abcxy", min_size=1, max_size=3), FUZZ_DATA, min_size=1, max_size=4)


def value_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a plain value (not the root itself)."""
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            out += value_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += value_paths(item, (*prefix, i))
    return out


def dump(data: Any, mapping: int, offset: int, flow: bool | None) -> str:
    """Write data the way ruamel.yaml would, with a given indentation style."""
    from io import StringIO

    from ruamel.yaml import YAML

    writer = YAML()
    writer.indent(mapping=mapping, sequence=offset + 2, offset=offset)
    writer.width = 30
    if flow is not None:
        writer.default_flow_style = flow
    out = StringIO()
    writer.dump(data, out)
    return out.getvalue()


FUZZ_STYLE = st.tuples(st.sampled_from([2, 3, 4]), st.integers(0, 2), st.sampled_from([None, True, False]))


def on_random_files(test: Callable[..., None]) -> Callable[..., None]:
    """`test`, run by Hypothesis on random files: their data (`old`), writing `style`, line endings (`crlf`) and
    `data` to draw edits from (see `random_document`)."""
    drawn = given(old=FUZZ_TOP, style=FUZZ_STYLE, crlf=st.booleans(), data=st.data())(test)
    return settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))(drawn)


def random_document(old: dict[str, Any], style: tuple[int, int, bool | None], crlf: bool) -> tuple[str, Document]:
    """`old` written as a file in `style` (see `dump`), with CRLF line endings or not, and that file read back."""
    text = "---\n" + dump(old, *style) + "---\nbody\n"
    if crlf:
        text = text.replace("\n", "\r\n")
    try:
        doc = Document.from_bytes(text.encode())
    except ParseError:  # ruamel's own writer sometimes writes YAML it cannot read back (`{a: : 0}`)
        reject()
    assume(same(doc.data, old))  # or reads back differently (`[?0]`)
    return text, doc


@on_random_files
def test_random_edits_on_random_files(
    old: dict[str, Any], style: tuple[int, int, bool | None], crlf: bool, data: st.DataObject
) -> None:
    text, doc = random_document(old, style, crlf)
    path = list(data.draw(st.sampled_from(value_paths(old))))
    kind = data.draw(st.sampled_from(["set", "delete", "append", "add", "insert"]))
    value = data.draw(FUZZ_DATA)
    try:
        if kind == "set":
            doc.set(path, value)
        elif kind == "delete":
            doc.delete(path)
        elif kind == "append":
            doc.append(path, value)
        elif kind == "insert":
            doc.insert(path, value)
        else:
            doc.set([*path, "new"], value)
    except UsageError:  # e.g. appending to a string: refused, nothing changed
        assert doc.to_bytes() == text.encode()
        return
    except EditError:  # an insertion the text cannot take (`- - a`): refused, nothing changed
        assert kind == "insert"
        assert doc.to_bytes() == text.encode()
        return
    out = doc.to_bytes()
    assert out.endswith(b"---\r\nbody\r\n" if crlf else b"---\nbody\n")
    if crlf:
        assert out.count(b"\n") == out.count(b"\r\n")
    assert same(Document.from_bytes(out).data, doc.data)


# ---------------------------------------------------------------------------- batched scalar edits


def _scalar_keys(doc: Document) -> list[str]:
    """Top-level keys whose values are one-line inline scalars (what a batched edit may replace)."""
    from ruamel.yaml.nodes import MappingNode, ScalarNode

    root = doc._root
    if not isinstance(root, MappingNode):
        return []
    keys = []
    for key, value in root.value:
        scalar = isinstance(key, ScalarNode) and isinstance(value, ScalarNode) and key.value != "<<"
        if scalar and value.style not in ("|", ">") and value.start_mark.line == value.end_mark.line and value.value:
            keys.append(key.value)
    return keys


def test_batched_scalar_edits_equal_edits_one_by_one() -> None:
    """`apply` splices several scalar replacements at once; the bytes equal those of one edit at a time."""
    from conftest import CORPUS

    from planstate.core.errors import PlanstateError
    from planstate.text.plaindata import Op

    checked = 0
    for path in sorted(p for p in CORPUS.rglob("*.md") if p.is_file()):
        try:
            doc = Document.from_bytes(path.read_bytes(), path)
        except ParseError:
            continue
        keys = _scalar_keys(doc)[:3]
        if len(keys) < 2:
            continue
        ops = [Op("replace", (k,), f"new value {i}: #{i}") for i, k in enumerate(keys)]
        one_by_one = Document.from_bytes(path.read_bytes(), path)
        try:
            for op in ops:
                one_by_one.apply([op])
        except PlanstateError:
            continue  # an alias or merge makes the edit refused; the batch must refuse it too
        doc.apply(ops)
        assert doc.to_bytes() == one_by_one.to_bytes(), path
        checked += 1
    assert checked > 500


def test_a_splice_read_back_through_the_fast_path_equals_the_round_trip_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from planstate.text import fastyaml, parser

    text = (
        b"---\ntitle: Auth  # kept\nupdated: 2026-11-20T10:00:00Z\nprogress:\n  bar: '##__ 50%'\n"
        b"phases:\n  - name: A\n    status: active\n---\nbody\n"
    )
    edits = {"title": "Auth v2", "updated": datetime(2026, 11, 21, 9, 30, tzinfo=UTC)}

    def edited(fast: bool) -> tuple[bytes, Any, int]:
        monkeypatch.setattr(fastyaml, "loaded", lambda: fast)
        doc = Document.from_bytes(text, "STATE.md")
        parses = []
        real = parser.parse
        monkeypatch.setattr(parser, "parse", lambda *a: parses.append(1) or real(*a))
        doc.update({**doc.data, "title": edits["title"], "updated": edits["updated"]})  # one batch, as a commit
        read_back = len(parses)
        doc.set("phases.0.name", "B")  # one edit more: it needs the node tree, parsed again for it
        monkeypatch.setattr(parser, "parse", real)
        return doc.to_bytes(), doc.data, read_back

    fast, slow = edited(True), edited(False)
    assert fast[:2] == slow[:2]
    assert b"title: Auth v2  # kept\n" in fast[0] and b"bar: '##__ 50%'" in fast[0]
    assert (fast[2], slow[2]) == (0, 1)  # the batch read back without a round-trip parse on the fast path


# ---------------------------------------------------------------------------- edits apart, one re-parse

from planstate.text.plaindata import Op as Edit  # noqa: E402  (Op above is this module's shape of a test case)


def _one_by_one(data: bytes, ops: list[Edit]) -> bytes | None:
    """The bytes after applying `ops` one at a time (each verified by its own parse); None when one is refused."""
    from planstate.core.errors import PlanstateError

    doc = Document.from_bytes(data, "STATE.md")
    try:
        for op in ops:
            doc.apply([op])
    except PlanstateError:
        return None
    return doc.to_bytes()


def _together(data: bytes, ops: list[Edit]) -> tuple[bytes | None, bool]:
    """The bytes after applying `ops` in one call (None when refused), and whether they were spliced apart."""
    from planstate.core.errors import PlanstateError

    doc = Document.from_bytes(data, "STATE.md")
    apart: list[bool] = []
    real = Document._apply_apart

    def spied(self: Document, ops: list[Edit]) -> list[Edit]:
        left = real(self, ops)  # the edits left to apply one by one
        apart.append(len(left) < len(ops))
        return left

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(Document, "_apply_apart", spied)
        try:
            doc.apply(ops)
        except PlanstateError:
            return None, any(apart)
    return doc.to_bytes(), any(apart)


def _mapping_paths(value: Any) -> list[tuple[Any, ...]]:
    """Every path to a mapping inside a plain value, the root included."""
    return [path for path in [(), *value_paths(value)] if isinstance(get_in(value, list(path))[1], dict)]


def test_edits_apart_in_real_files_equal_edits_one_by_one() -> None:
    """`apply` splices edits that lie apart in the text and change one inline scalar each (a nested scalar
    replaced, a key added to another mapping, a key of a scalar deleted) with one re-parse, and then any other edit
    (a value replaced by a collection) one by one; on every corpus file the bytes equal those of one edit at a
    time."""
    from conftest import CORPUS

    checked = apart_count = 0
    for path in sorted(p for p in CORPUS.rglob("*.md") if p.is_file()):
        data = path.read_bytes()
        try:
            doc = Document.from_bytes(data, path)
        except ParseError:
            continue
        if not isinstance(doc.data, dict) or len(doc.data) < 3:
            continue
        keys = list(doc.data)
        scalars = [p for p in value_paths(doc.data) if not isinstance(get_in(doc.data, list(p))[1], dict | list)]
        nested = [p for p in scalars if len(p) > 1]
        replaced = nested[0] if nested else (keys[0],)
        # Deleted: a key of a scalar, not beside the key added at the end; the collection: another key.
        deleted = [key for key in keys[1:-1] if key != replaced[0] and (key,) in scalars]
        others = [key for key in keys if key not in (replaced[0], *deleted[-1:])]
        if not deleted or not others:
            continue
        ops = [
            Edit("replace", replaced, "a new value: #2"),
            Edit("add", (*_mapping_paths(doc.data)[-1], "added_by_test"), "a new value: #1"),
            Edit("delete", (deleted[-1],), None),
            Edit("replace", (others[0],), ["new", {"value": 1}]),
        ]
        expected = _one_by_one(data, ops)
        got, apart = _together(data, ops)
        if expected is None:
            continue
        assert got == expected, path
        checked += 1
        apart_count += apart
    assert checked > 300 and apart_count > checked // 2


@on_random_files
def test_random_edits_apart_equal_edits_one_by_one(
    old: dict[str, Any], style: tuple[int, int, bool | None], crlf: bool, data: st.DataObject
) -> None:
    """Several edits at distinct places of a random file (values replaced, keys added, two to one mapping, or
    deleted; LF or CRLF line endings), applied in one call, give the bytes of the same edits one at a time, whether
    they were spliced apart or one by one."""
    text = random_document(old, style, crlf)[0].encode()
    assume(len(value_paths(old)) >= 2)
    paths = data.draw(st.lists(st.sampled_from(value_paths(old)), min_size=2, max_size=4, unique=True))
    assume(not any(a != b and b[: len(a)] == a for a in paths for b in paths))  # distinct places, none inside another
    ops: list[Edit] = []
    for path in paths:
        kind = data.draw(st.sampled_from(["replace", "add", "add two", "delete"]))
        _found, at = get_in(old, list(path))
        if kind.startswith("add") and isinstance(at, dict):
            ops.append(Edit("add", (*path, "new"), data.draw(FUZZ_DATA)))
            if kind == "add two":  # a second key added to the same mapping, after the first
                ops.append(Edit("add", (*path, "new2"), data.draw(FUZZ_DATA)))
        elif kind == "delete" and isinstance(path[-1], str):
            ops.append(Edit("delete", path, None))
        else:
            ops.append(Edit("replace", path, data.draw(FUZZ_DATA)))
    expected = _one_by_one(text, ops)
    assume(expected is not None)
    got, _apart = _together(text, ops)
    assert got == expected
