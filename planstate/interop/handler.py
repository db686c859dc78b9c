"""python-frontmatter interop: a handler that reads planstate files as planstate does and writes them back byte for
byte, and `to_post()` for records.

python-frontmatter sorts keys, drops comments and reads YAML 1.1 (`yes` is True), so its own YAML handler neither
reads nor writes planstate files faithfully. This handler parses with planstate's Document (YAML 1.2, comments,
order and layout kept) and, when the post is dumped, splices only the values that changed into the original text::

    post = frontmatter.load(path, handler=PlanstateHandler(path))
    post["title"] = "New title"
    text = frontmatter.dumps(post)  # the file with one value changed

python-frontmatter hands a handler the file's text with its surrounding whitespace stripped and, opened by path, its
line endings made LF; given the path, the handler reads the bytes themselves (BOM, CRLF, the last newline) so a
no-op round trip is byte-identical. Without a path it assumes the file ended with one LF.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import frontmatter
from frontmatter.default_handlers import BaseHandler

from planstate.core.errors import PlanstateError
from planstate.text.document import Document

if TYPE_CHECKING:
    from planstate.ops.records import Entry
    from planstate.store.recordfiles import Record


class PlanstateHandler(BaseHandler):
    """A python-frontmatter handler for planstate files: read as planstate reads them, written back by splicing."""

    FM_BOUNDARY = re.compile(r"^-{3}\s*$", re.MULTILINE)
    START_DELIMITER = END_DELIMITER = "---"

    def __init__(self, path: str | Path | None = None) -> None:
        super().__init__()
        self.path = Path(path) if path is not None else None
        self.document: Document | None = None
        self.content: str | None = None  # the body as python-frontmatter holds it (stripped)
        self.unread: tuple[str, str] | None = None  # a file planstate cannot read: its text as given, and whole

    def split(self, text: str) -> tuple[str, str]:
        """Parse the file with planstate's Document; ValueError (python-frontmatter's "no front matter") when it
        cannot, so python-frontmatter keeps the text as the content."""
        raw = self._original(text)
        try:
            doc = Document.from_bytes(raw, str(self.path) if self.path else None)
            doc.require_front_matter()
            _ = doc.data
        except PlanstateError as exc:
            self.unread = (text, raw.decode("utf-8", errors="surrogateescape"))
            raise ValueError(str(exc)) from None
        self.document = doc
        self.content = doc.body.strip()
        return doc.front_matter_text, doc.body

    def _original(self, text: str) -> bytes:
        """The file's own bytes when the handler knows the path and they hold `text`; else `text` and one LF."""
        if self.path is not None and self.path.is_file():
            raw = self.path.read_bytes()
            decoded = raw.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
            if decoded.strip() == text.replace("\r\n", "\n").strip():
                return raw
        return (text + "\n").encode("utf-8")

    def load(self, fm: str) -> dict[str, Any]:
        """The front matter as planstate reads it (YAML 1.2: `yes` stays a string, `010` stays 10)."""
        data = self.document.data if self.document is not None else None
        return dict(data) if isinstance(data, dict) else {}

    def export(self, metadata: dict[str, object], **kwargs: object) -> str:
        """Front matter for a post this handler did not read: planstate's YAML for new files."""
        from planstate.text import yamltext

        return "\n".join(yamltext.block(dict(metadata), 0, yamltext.Indent()))

    def format(self, post: frontmatter.Post, **kwargs: object) -> str:
        """The post as file text: the original with only the changed values and, when changed, the body replaced."""
        if self.document is None and self.unread is not None and post.content == self.unread[0] and not post.metadata:
            return self.unread[1]  # a file planstate does not read, left as it was
        if self.document is None:
            body = post.content + "\n" if post.content else ""
            return f"---\n{self.export(post.metadata)}\n---\n{body}" if post.metadata else body
        doc = Document.from_bytes(self.document.to_bytes(), self.document.path)
        if dict(post.metadata) != self.load(""):  # an empty front matter stays as it is written (`---`, a comment)
            doc.update(dict(post.metadata))
        if post.content != self.content:
            newline = "\r\n" if b"\r\n" in self.document.to_bytes() else "\n"
            doc.set_body(post.content.replace("\n", newline) + newline if post.content else "")
        return doc.to_bytes().decode("utf-8", errors="surrogateescape")


def load(path: str | Path) -> frontmatter.Post:
    """A planstate file as a python-frontmatter Post that `frontmatter.dumps` writes back byte for byte."""
    return frontmatter.load(str(path), handler=PlanstateHandler(path))


def to_post(record: Entry | Record) -> frontmatter.Post:
    """A record (an `Entry` from `ws.decision.show()` and the like, or a `Record`) as a python-frontmatter Post,
    for code that passes Posts around; `frontmatter.dumps(post)` gives its file's text."""
    return load(record.path)
