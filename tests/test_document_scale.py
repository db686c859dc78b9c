"""Document at scale: locating every one of many keys costs one key index and one line index, not a scan each."""

from __future__ import annotations

from typing import Any

import pytest

from planstate.text import nodes, spans
from planstate.text.document import Document
from planstate.text.spans import LineIndex

KEYS = 30_000


def test_locating_every_key_of_a_large_front_matter_builds_each_index_once(monkeypatch: pytest.MonkeyPatch) -> None:
    indexed: list[Any] = []
    lines: list[LineIndex] = []
    real_key_index = nodes.key_index

    def key_index(node: Any) -> dict[str, int]:
        indexed.append(node)
        return real_key_index(node)

    class CountedLineIndex(LineIndex):
        def __init__(self, text: str, first_line: int) -> None:
            lines.append(self)
            super().__init__(text, first_line)

    monkeypatch.setattr(nodes, "key_index", key_index)
    monkeypatch.setattr(spans, "LineIndex", CountedLineIndex)
    text = "---\n" + "".join(f"key{i}: {i}\n" for i in range(KEYS)) + "nested:\n  inner: [a, b]\n---\nbody\n"
    doc = Document.from_bytes(text.encode())
    assert not indexed and not lines  # parsing builds neither
    for i in range(KEYS):
        assert doc.locate(f"key{i}") == (i + 2, 1)
    assert doc.locate("nested.inner.1") == (KEYS + 3, 14)
    assert doc.locate("nested.missing") == (KEYS + 2, 1)  # the deepest existing parent
    assert len(indexed) == 2  # the top-level mapping and `nested`, each once
    assert len(lines) == 1


def test_the_indexes_follow_edits() -> None:
    doc = Document.from_bytes(b"---\nb: 1\nc: 2\n---\n")
    assert doc.locate("c") == (3, 1)
    doc.set("a", 0)
    doc.delete("b")
    assert doc.locate("c") == (2, 1)
    assert doc.locate("a") == (3, 1)
    assert doc.locate("b") == (2, 1)  # gone: the front matter's first line


def test_a_key_added_to_each_of_many_mappings_detects_the_indentation_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # A write to a hand-written STATE.md adds `duration_seconds` to every completed phase: one walk of the whole
    # node tree per added key made `set` on 200 phases grow 22 times from 20 phases (tests/test_growth.py).
    from planstate.text import splice

    walks: list[Any] = []
    real_detect = splice.detect_indent

    def detect_indent(root: Any) -> Any:
        walks.append(root)
        return real_detect(root)

    monkeypatch.setattr(splice, "detect_indent", detect_indent)
    phases = "".join(f"  - name: Phase {i}\n    status: completed\n" for i in range(500))
    doc = Document.from_bytes(f"---\ntitle: T\nphases:\n{phases}---\nbody\n".encode())
    doc.update({"title": "T", "phases": [{"name": f"Phase {i}", "status": "completed", "done": i} for i in range(500)]})
    assert len(walks) == 1
    assert doc.data["phases"][499] == {"name": "Phase 499", "status": "completed", "done": 499}
    assert doc.to_bytes().decode().endswith("  - name: Phase 499\n    status: completed\n    done: 499\n---\nbody\n")
