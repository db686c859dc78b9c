"""How `planstate diff` writes its lines: a writer for plain text and one for markdown, and lines declared as parts.

A line is a tuple of `Part`s; each part is a piece of text with one value of the entry put in, written by
the writer (user text as it is or escaped, ids and values as they are or as code), and left out when its
value is absent. difftables.py declares every event's line this way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from planstate.core.durations import show as show_duration
from planstate.text import filters

MAX_SHOWN = 300  # characters of one value in the text and markdown output (JSON has it whole)


class Plain:
    """How the text output writes user text, values and code: as they are."""

    def text(self, value: Any) -> str:
        """User text on one line, clipped."""
        return clip(" ".join(str(value).split()))

    def value(self, value: Any) -> str:
        """A field's value as JSON on one line, clipped."""
        return clip(value_text(value))

    def code(self, value: Any) -> str:
        """An id, a path or a command."""
        return str(value)

    def strong(self, value: str) -> str:
        """What a line is about."""
        return value


class Markdown(Plain):
    """How the markdown output writes them: user text escaped (no raw HTML, no links), values and ids as code."""

    def text(self, value: Any) -> str:
        """User text on one line, clipped and escaped."""
        return md(clip(" ".join(str(value).split())))

    def value(self, value: Any) -> str:
        """A field's value as JSON in a code span."""
        return md_code(clip(value_text(value)))

    def code(self, value: Any) -> str:
        """An id, a path or a command in a code span."""
        return md_code(str(value))

    def strong(self, value: str) -> str:
        """What a line is about, in bold."""
        return f"**{value}**"


def clip(text: str) -> str:
    """At most MAX_SHOWN characters, an ellipsis saying where it was cut."""
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def value_text(value: Any) -> str:
    """A value on one line: strings in double quotes (JSON escapes), null, numbers and lists as JSON."""
    if value is None:
        return "null"
    return json.dumps(value, ensure_ascii=False)


def md(text: str) -> str:
    """User text for markdown: one line, no raw HTML, and no emphasis, link, code or heading syntax."""
    return re.sub(r"([\\`*_\[\]#!|~])", r"\\\1", filters.inline(text)).replace("@", "@\u200b")


def md_code(text: str) -> str:
    """Text as a markdown code span."""
    return filters.code(text)


# ---------------------------------------------------------------------------- lines as parts

Show = Callable[[Plain, Any], str]


def text(f: Plain, value: Any) -> str:
    """User text: as it is, or escaped for markdown."""
    return f.text(value)


def code(f: Plain, value: Any) -> str:
    """An id or a command: as it is, or a code span."""
    return f.code(value)


def raw(f: Plain, value: Any) -> str:
    """A word of planstate's own vocabulary (a status, a checkpoint result): as it is in both outputs."""
    return str(value)


def duration(f: Plain, value: Any) -> str:
    """Seconds, as people read a duration (`3h 30m`)."""
    return show_duration(value)


def texts(separator: str) -> Show:
    """A list of user texts, joined by `separator`."""

    def show(f: Plain, value: Any) -> str:
        return separator.join(f.text(item) for item in value)

    return show


def evidence(f: Plain, value: Any) -> str:
    """A checkpoint's evidence, `name: value` by name."""
    return ", ".join(f"{f.text(k)}: {f.text(v)}" for k, v in sorted(value.items()))


def given(entry: dict[str, Any], key: str) -> bool:
    """The default test of whether a part is shown: its value is there and not empty."""
    return bool(entry.get(key))


def always(entry: dict[str, Any], key: str) -> bool:
    """For a part that is always shown, even when its value is null."""
    return True


def not_null(entry: dict[str, Any], key: str) -> bool:
    """For a part shown whenever its value is not null (a duration of 0 seconds is shown)."""
    return entry.get(key) is not None


class Part(NamedTuple):
    """A piece of a line: `template` with the value of `key` written by `show` put in at `{}`.

    The piece is left out unless `shown(entry, key)` holds; without a key it is fixed text, always there.
    """

    template: str
    key: str | None = None
    show: Show = text
    shown: Callable[[dict[str, Any], str], bool] = given


def render(parts: tuple[Part, ...], entry: dict[str, Any], f: Plain) -> str:
    """The parts of a line that apply to `entry`, written by `f` and joined."""
    out = []
    for part in parts:
        if part.key is None:
            out.append(part.template)
        elif part.shown(entry, part.key):
            out.append(part.template.format(part.show(f, entry.get(part.key))))
    return "".join(out)
