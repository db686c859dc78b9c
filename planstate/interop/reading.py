"""Reading foreign planning files, never writing them: front matter through python-frontmatter, markdown by shape."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


class Foreign:
    """One foreign file as read: its front matter (empty when it has none or it does not parse) and its text."""

    def __init__(self, path: Path, meta: dict[str, Any], content: str, problem: str | None = None) -> None:
        self.path = path
        self.meta = meta
        self.content = content
        self.problem = problem  # why the front matter could not be read, when it could not


def load(path: Path) -> Foreign:
    """Read a markdown file with python-frontmatter (YAML, TOML or JSON front matter, detected); a front matter
    that does not parse leaves `meta` empty and says why in `problem`, so one odd file never stops an import."""
    import frontmatter

    raw = path.read_bytes().decode("utf-8", errors="replace").lstrip("\ufeff")
    try:
        post = frontmatter.loads(raw)
    except Exception as exc:  # any parser's error: the file is foreign, and the import goes on
        return Foreign(path, {}, raw, f"front matter not read ({type(exc).__name__})")
    meta = post.metadata if isinstance(post.metadata, dict) else {}
    return Foreign(path, dict(meta), post.content)


def mapping(value: Any) -> dict[str, Any]:
    """`value` when it is a mapping, else an empty one: foreign data may hold anything where a mapping belongs."""
    return value if isinstance(value, dict) else {}


def read_text(path: Path) -> str:
    """A foreign text file's content (UTF-8, undecodable bytes replaced, a BOM dropped)."""
    return path.read_bytes().decode("utf-8", errors="replace").lstrip("\ufeff")


def sections(text: str, level: int) -> list[tuple[str, str]]:
    """The sections of markdown `text` at heading `level` (2 for `##`): (heading, text up to the next heading of
    that level or above), outside code fences; text before the first heading is left out."""
    out: list[tuple[str, list[str]]] = []
    fence = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        match = None if fence else _HEADING.match(line)
        if match and len(match.group(1)) <= level:
            if len(match.group(1)) == level:
                out.append((match.group(2).strip(), []))
            else:
                out.append(("", []))  # a higher heading ends the section; its text is not a section of this level
            continue
        if out:
            out[-1][1].append(line)
    return [(name, "\n".join(lines).strip("\n")) for name, lines in out if name]


def section(text: str, level: int, name: str) -> str | None:
    """The text of the first section at `level` whose heading starts with `name` (case aside), or None."""
    for heading, body in sections(text, level):
        if heading.casefold().startswith(name.casefold()):
            return body
    return None


def bullets(text: str) -> list[str]:
    """The top-level list items of markdown `text` (`- ` or `* `), continuation lines joined with a space."""
    items: list[str] = []
    current: list[str] | None = None
    for line in text.splitlines():
        match = re.match(r"^[-*]\s+(.*)$", line)
        if match:
            if current is not None:
                items.append(" ".join(current))
            current = [match.group(1).strip()]
        elif current is not None and line.startswith((" ", "\t")) and line.strip():
            current.append(line.strip())
        elif current is not None:
            items.append(" ".join(current))
            current = None
    if current is not None:
        items.append(" ".join(current))
    return [item for item in items if item]


def table(text: str) -> list[dict[str, str]]:
    """The rows of the first markdown table in `text`, as {header: cell}."""
    rows: list[list[str]] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("|"):
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
                continue
            rows.append(cells)
        elif rows:
            break
    if len(rows) < 2:
        return []
    header = rows[0]
    return [dict(zip(header, row + [""] * (len(header) - len(row)), strict=False)) for row in rows[1:]]


def tag_block(text: str, tag: str) -> str | None:
    """The text inside `<tag>…</tag>` (or up to the end, when it is never closed), or None."""
    match = re.search(rf"<{tag}>(.*?)(?:</{tag}>|\Z)", text, re.S)
    return match.group(1).strip("\n") if match else None


def labelled(text: str, name: str) -> str | None:
    """The value of a `Name: value` or `**Name:** value` line (the first one), stripped, or None."""
    pattern = rf"^\s*(?:[-*]\s+)?\**{re.escape(name)}\**:\**\s*(.*?)\s*$"
    match = re.search(pattern, text, re.M | re.I)
    return match.group(1).strip().strip("*").strip() if match else None


def plain(text: str) -> str:
    """Markdown inline text as plain text: emphasis and code marks removed, spaces collapsed."""
    text = re.sub(r"\*\*(.*?)\*\*", r"\1", text)
    text = re.sub(r"(?<!\w)[*_](.*?)[*_](?!\w)", r"\1", text)
    text = text.replace("`", "")
    return re.sub(r"\s+", " ", text).strip()


def digest(text: str) -> str:
    """A short stable key for a piece of text that has no id in its source (12 hex digits of its SHA-256)."""
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:12]


def headings(text: str, level: int) -> list[str]:
    """The headings at `level` in markdown `text`, in order."""
    return [name for name, _ in sections(text, level)]
