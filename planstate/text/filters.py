"""Jinja filters that put user text into markdown safely: `inline`, `cell`, `block`, `code`, `link`, `when`, `day`,
`duration` and `mermaid`.

User text is data: these filters make it safe for its spot in the markdown, so no value can start
an HTML comment (and so a planstate marker), break a table row or open a code fence that swallows
the rest of the file. Every template environment gets them (templates.py); regions.py and the
templates never need each other.
"""

from __future__ import annotations

import re
from typing import Any


def _text(value: Any) -> str:
    return "" if value is None else str(value).replace("\r\n", "\n").replace("\r", "\n")


def _neutral(text: str) -> str:
    """No raw HTML from user text: `<` becomes `&lt;` (it still reads as `<`), `-->` cannot close a comment."""
    return text.replace("<", "&lt;").replace("-->", "--&gt;")


def inline(value: Any) -> str:
    """Filter `inline`: text on one line (newlines and runs of blanks become one space), without raw HTML."""
    return _neutral(" ".join(_text(value).split()))


def cell(value: Any) -> str:
    """Filter `cell`: text for a table cell: one line, `|` escaped, without raw HTML."""
    return inline(value).replace("|", "\\|")


_FENCE_START = re.compile(r"^( {0,3})(`{3,}|~{3,})")


def block(value: Any) -> str:
    """Filter `block`: multi-line text as paragraphs: lines kept, trailing blanks dropped, no raw HTML, and a line
    that would open a code fence is escaped."""
    lines = [_neutral(line.rstrip()) for line in _text(value).strip("\n").split("\n")]
    return "\n".join(_FENCE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), line) for line in lines)


def code(value: Any) -> str:
    """Filter `code`: text as an inline code span, fenced with more backticks than it contains."""
    text = " ".join(_text(value).split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def link(value: Any, target: str) -> str:
    """Filter `link`: `[text](target)` with the text escaped for a link (and a table cell) and the target quoted."""
    from urllib.parse import quote

    text = cell(value).replace("[", "\\[").replace("]", "\\]")
    return f"[{text}]({quote(target)})"


def when(value: Any) -> str:
    """Filter `when`: a timestamp as `YYYY-MM-DD HH:MM` (UTC); other text as is."""
    from datetime import UTC

    from planstate.core.clock import parse_datetime

    moment = parse_datetime(value)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M") if moment is not None else inline(value)


def day(value: Any) -> str:
    """Filter `day`: a date or timestamp as `YYYY-MM-DD`."""
    text = inline(value)
    return text[:10] if re.match(r"\d{4}-\d{2}-\d{2}", text) else text


def duration(value: Any) -> str:
    """Filter `duration`: seconds as `45s`, `12m`, `2h 30m` or `3d 4h` (durations.show); empty for none."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return ""
    from planstate.core.durations import show

    return show(value)


def mermaid(value: Any) -> str:
    """Filter `mermaid`: text for a Mermaid task name: one line without `:`, `;`, `#`, `%`, `<` or `>`."""
    return " ".join(re.sub(r"[:;#%<>]", " ", _text(value)).split()) or "-"


FILTERS: dict[str, Any] = {
    "inline": inline,
    "cell": cell,
    "block": block,
    "code": code,
    "link": link,
    "when": when,
    "day": day,
    "duration": duration,
    "mermaid": mermaid,
}
