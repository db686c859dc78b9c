"""Every markdown file of the shared corpus: read back byte for byte, and one-line edits stay one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS
from ruamel.yaml import YAML
from ruamel.yaml.nodes import MappingNode, ScalarNode

from planstate.core.errors import ParseError
from planstate.text.document import Document
from planstate.text.plaindata import same

FILES = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".md", ".markdown") and p.is_file())
NEW_VALUE = "planstate edit: #1 ✓"  # needs quoting: ': ', ' #' and a non-ASCII character
NEW_KEY = "planstate_added"


def first_scalar_key(text: str) -> tuple[str, int] | None:
    """The first top-level key whose value is a one-line, unanchored, non-block scalar, and that value's line.

    The line is 0-based in the front matter text: the key's line for an empty value, else the value's own line.
    """
    if not text.strip():
        return None
    root = YAML(typ="rt").compose(text)
    if not isinstance(root, MappingNode):
        return None
    for key, value in root.value:
        if not isinstance(key, ScalarNode) or not isinstance(value, ScalarNode) or key.value == "<<":
            continue
        if value.style in ("|", ">") or getattr(value, "anchor", None):
            continue
        if value.start_mark.line != value.end_mark.line:
            continue
        empty = value.start_mark.index == value.end_mark.index
        return key.value, key.start_mark.line if empty else value.start_mark.line
    return None


def changed_lines(old: bytes, new: bytes) -> list[int]:
    """Indexes of the lines that differ between two texts with the same number of lines."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    assert len(a) == len(b), f"line count changed from {len(a)} to {len(b)}"
    return [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]


def check_parse_error(path: Path, data: bytes) -> None:
    """The file is refused with a ParseError that points at a line of the file, and nothing else happens."""
    with pytest.raises(ParseError) as caught:
        Document.from_bytes(data, path)
    error = caught.value
    assert error.file == str(path)
    assert error.line is not None and 1 <= error.line <= data.count(b"\n") + 1
    assert error.column is None or error.column >= 1
    assert str(error).startswith(f"{path}:{error.line}")
    assert error.message
    with pytest.raises(ParseError) as again:  # deterministic: the same error every time
        Document.from_bytes(data, path)
    assert (again.value.line, again.value.column, again.value.message) == (error.line, error.column, error.message)
    assert path.read_bytes() == data  # reading never writes


def check_set_one_line(data: bytes, doc: Document, key: str, line: int) -> None:
    """Setting the first one-line scalar changes exactly its line, and reads back as the new value."""
    before = doc.data
    doc.set([key], NEW_VALUE)
    out = doc.to_bytes()
    assert changed_lines(data, out) == [line + 1]  # the front matter starts on the file's second line
    again = Document.from_bytes(out)
    assert again.get([key]) == NEW_VALUE
    expected = dict(before)
    expected[key] = NEW_VALUE
    assert same(again.data, expected)
    assert again.body == doc.body
    assert out.endswith(data[len(data) - len(doc.body.encode("utf-8", "surrogateescape")) :])


def check_add_one_line(data: bytes, doc: Document) -> None:
    """With no one-line scalar to change, adding a top-level key adds exactly one line."""
    before = doc.data
    doc.set([NEW_KEY], NEW_VALUE)
    out = doc.to_bytes()
    a, b = data.splitlines(keepends=True), out.splitlines(keepends=True)
    assert len(b) == len(a) + 1
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), len(a))
    assert b[:at] + b[at + 1 :] == a
    assert b[at].decode("utf-8").startswith(f"{NEW_KEY}: ")
    again = Document.from_bytes(out)
    assert again.get([NEW_KEY]) == NEW_VALUE
    expected: dict[Any, Any] = dict(before or {})
    expected[NEW_KEY] = NEW_VALUE
    assert same(again.data, expected)


def test_corpus_is_there() -> None:
    assert len(FILES) == 1176, f"expected the 1,176 corpus files in {CORPUS}, found {len(FILES)}"


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(CORPUS)) for p in FILES])
def test_corpus_file(path: Path) -> None:
    data = path.read_bytes()
    try:
        doc = Document.from_bytes(data, path)
    except ParseError:
        check_parse_error(path, data)
        return
    assert doc.to_bytes() == data
    found = first_scalar_key(doc.front_matter_text)
    if found is not None:
        check_set_one_line(data, doc, *found)
    else:
        check_add_one_line(data, doc)
