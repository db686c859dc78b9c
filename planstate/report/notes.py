"""People's notes: the text in STATE.md's body that people wrote, outside the generated regions."""

from __future__ import annotations

import re

NOTES_LIMIT = 1200  # characters of people's notes the brief carries


def notes(raw: bytes) -> str | None:
    """People's text in STATE.md's body: everything outside the generated regions but headings and the lines
    planstate's own STATE.md template writes there (its introduction), cut at NOTES_LIMIT characters."""
    from planstate.render.bodies import split_body
    from planstate.text.markers import parse

    body, _ = split_body(raw)
    layout = parse(body)
    inside = {i for r in layout.regions for i in range(r.begin, r.end + 1)}
    scaffold = _template_lines()
    kept = [
        line.rstrip()
        for i, line in enumerate(layout.lines)
        if i not in inside and not line.lstrip().startswith("#") and not scaffold.fullmatch(line.strip())
    ]
    text = "\n".join(kept).strip()
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    if not text:
        return None
    return text if len(text) <= NOTES_LIMIT else text[:NOTES_LIMIT].rstrip() + "…"


def _template_lines() -> re.Pattern[str]:
    """A pattern matching each line of the built-in STATE.md template's body, stripped (a `{{ value }}` in it
    matches anything): the text planstate wrote, not people."""
    from planstate.text.templates import builtin_dir

    try:
        text = (builtin_dir() / "STATE.md.j2").read_text(encoding="utf-8")
    except OSError:
        return re.compile(r"(?!)")
    body = text.split("\n---\n", 1)[-1]
    lines = {line.strip() for line in body.splitlines() if line.strip() and "{%" not in line}
    shapes = [".*".join(re.escape(part) for part in re.split(r"\{\{.*?\}\}", line)) for line in sorted(lines)]
    return re.compile("|".join(f"(?:{shape})" for shape in shapes) or r"(?!)")
