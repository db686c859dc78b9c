"""python-frontmatter interop (planstate/interop/handler.py): every corpus file makes a byte-identical no-op round
trip through `frontmatter.load(path, handler=PlanstateHandler(path))` and `frontmatter.dumps`, an edit changes
only its value's line, values read as planstate reads them (YAML 1.2), and records become Posts."""

from __future__ import annotations

from pathlib import Path

import frontmatter
from conftest import CORPUS, state_file

from planstate.interop.handler import PlanstateHandler, load, to_post
from planstate.workspace import Workspace


def test_every_corpus_file_round_trips_byte_for_byte() -> None:
    read = unread = 0
    for path in sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.name != "SOURCES.txt"):
        handler = PlanstateHandler(path)
        post = frontmatter.load(str(path), handler=handler)
        assert frontmatter.dumps(post).encode("utf-8", "surrogateescape") == path.read_bytes(), path
        read, unread = (read + 1, unread) if handler.document is not None else (read, unread + 1)
    # the files planstate refuses (duplicate keys, Hugo template code, a NUL byte) come back untouched too
    assert (read, unread) == (1161, 15)


def test_a_title_edit_changes_one_line(project: Path) -> None:
    path = state_file(project)
    before = path.read_text(encoding="utf-8").splitlines()
    post = load(path)
    post["title"] = "Renamed"
    after = frontmatter.dumps(post).splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert changed == [("title: Demo", "title: Renamed")]


def test_values_read_as_planstate_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "note.md"
    path.write_bytes(b"---\r\n# kept\r\nanswer: yes\r\ncount: 010\r\n---\r\nBody\r\n")
    post = load(path)
    assert post.metadata == {"answer": "yes", "count": 10}  # YAML 1.2; python-frontmatter's own reader says True, 8
    post.content = "New body"
    assert frontmatter.dumps(post) == "---\r\n# kept\r\nanswer: yes\r\ncount: 010\r\n---\r\nNew body\r\n"


def test_without_a_path_the_file_is_taken_to_end_with_one_newline() -> None:
    text = "---\ntitle: A  # comment\n---\nBody\n"
    post = frontmatter.loads(text, handler=PlanstateHandler())
    assert frontmatter.dumps(post) == text


def test_a_record_as_a_post(project: Path) -> None:
    ws = Workspace.find(project, actor="tester")
    entry = ws.decision.add(context="C", decision="Use jose", reason="R")
    post = to_post(entry)
    assert post["id"] == entry.id and post["decision"] == "Use jose"
    assert frontmatter.dumps(post).encode("utf-8") == entry.path.read_bytes()
