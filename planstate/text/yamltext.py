"""Render Python values as YAML text that reads back as the same value, in a chosen style."""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime
from typing import Any, NamedTuple

from planstate.text.limits import NON_PRINTABLE

# A plain scalar that matches any of these is read as something other than a string by a
# YAML 1.1 or 1.2 loader (PyYAML, ruamel, js-yaml, go-yaml), so it must be quoted. Compiled on first use (by `re`'s
# cache): compiling it costs 3 ms, and most commands only read (`status` formats a time with this module).
_NON_STRING = r"""^(?:
      ~|null|Null|NULL
    | y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF
    | [-+]?(?:0|[1-9][0-9_]*)                     # decimal int (1.1 allows _)
    | [-+]?0[0-7_]+ | 0o[0-7_]+                   # octal
    | [-+]?0x[0-9a-fA-F_]+ | [-+]?0b[01_]+        # hex, binary
    | [-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?  # sexagesimal (1.1)
    | [-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?  # float with a dot
    | [-+]?[0-9][0-9_]*(?:[eE][-+]?[0-9]+)         # float without a dot
    | [-+]?\.(?:inf|Inf|INF) | \.(?:nan|NaN|NAN)
    | [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}
        (?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)?   # timestamp
    | = | <<
    )$"""
_INDICATORS = set("-?:,[]{}#&*!|>'\"%@`")
_FLOW_UNSAFE = set(",[]{}?")  # `?` ends a plain scalar in flow context for YAML 1.1 (PyYAML)
_UNPRINTABLE = re.compile(f"[{NON_PRINTABLE}\ufeff]")  # a BOM is allowed in YAML, but not invisibly in a value
_DOUBLE_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\n": "\\n",
    "\t": "\\t",
    "\r": "\\r",
    "\x00": "\\0",
    "\x07": "\\a",
    "\x08": "\\b",
    "\x0b": "\\v",
    "\x0c": "\\f",
    "\x1b": "\\e",
    "\x85": "\\N",
    "\u2028": "\\L",
    "\u2029": "\\P",
}


class Indent(NamedTuple):
    """How a file indents nested blocks: mapping children, sequence dashes, item content."""

    mapping: int = 2
    sequence: int = 2
    item: int = 2


def plain_ok(text: str, *, flow: bool = False) -> bool:
    """Tell whether `text` can be written as a plain scalar and read back as the same string."""
    if not text or text != text.strip(" \t") or "\n" in text or "\r" in text:
        return False
    if text[0] in _INDICATORS or _UNPRINTABLE.search(text) or "\t" in text:
        return False
    if ": " in text or " #" in text or text.endswith(":") or text.startswith("---") or text.startswith("..."):
        return False
    if flow and (_FLOW_UNSAFE & set(text)):
        return False
    if "\u2028" in text or "\u2029" in text or "\x85" in text:
        return False
    return not re.match(_NON_STRING, text, re.VERBOSE)


def double_quoted(text: str) -> str:
    """Return `text` as a double-quoted YAML scalar with escapes."""
    out = []
    for ch in text:
        esc = _DOUBLE_ESCAPES.get(ch)
        if esc is None and _UNPRINTABLE.match(ch):
            code = ord(ch)
            esc = f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"
        out.append(esc if esc is not None else ch)
    return '"' + "".join(out) + '"'


def single_quoted_ok(text: str) -> bool:
    """Tell whether `text` can be written single-quoted on one line."""
    return not (_UNPRINTABLE.search(text) or any(c in text for c in "\n\r\t\x85\u2028\u2029"))


def single_quoted(text: str) -> str:
    """Return `text` as a single-quoted YAML scalar."""
    return "'" + text.replace("'", "''") + "'"


def format_datetime(value: datetime) -> str:
    """Return an ISO 8601 timestamp, with `Z` for UTC."""
    if value.tzinfo is not None and value.utcoffset() == UTC.utcoffset(None):
        value = value.replace(tzinfo=None)
        return value.isoformat() + "Z"
    return value.isoformat()


def scalar(value: Any, *, style: str | None = None, flow: bool = False) -> str:
    """Render a scalar inline (one line); `style` is the style to keep: None, "'" or '"'."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        if "e" in text and "." not in text:
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"
        return text
    if isinstance(value, datetime):
        return format_datetime(value)
    if isinstance(value, date):
        return value.isoformat()
    if not isinstance(value, str):
        raise TypeError(f"cannot write a {type(value).__name__} as a YAML scalar")
    if style == '"':
        return double_quoted(value)
    if style == "'" and single_quoted_ok(value):
        return single_quoted(value)
    if plain_ok(value, flow=flow):
        return value
    return double_quoted(value)


def literal_ok(text: str) -> bool:
    """Tell whether `text` can be written as a literal block scalar and read back the same."""
    if not text.strip() or "\r" in text or _UNPRINTABLE.search(text):
        return False
    if any(ln and not ln.strip(" ") for ln in text.split("\n")):
        return False  # lines of only spaces are ambiguous inside a block scalar
    return not any(c in text for c in "\x85\u2028\u2029")


def literal_block(text: str, indent: int, parent: int = 0) -> list[str]:
    """Render `text` as a block scalar: header (`|-`...) then lines at `indent`; an indicator counts from `parent`."""
    if text.endswith("\n\n") or text == "\n":
        chomp = "+"
    elif text.endswith("\n"):
        chomp = ""
    else:
        chomp = "-"
    lines = text.split("\n")
    if chomp != "-":
        lines = lines[:-1]
    first_content = next((ln for ln in lines if ln.strip()), "")
    indicator = str(indent - parent) if first_content.startswith(" ") else ""
    pad = " " * indent
    body = [pad + ln if ln else "" for ln in lines]
    return ["|" + indicator + chomp, *body]


def needs_block(value: Any) -> bool:
    """Tell whether a value must be written as a block (multi-line text, non-empty collection)."""
    if isinstance(value, dict | list):
        return bool(value)
    return isinstance(value, str) and "\n" in value


def flow(value: Any) -> str:
    """Render any value in flow style on one line."""
    if isinstance(value, dict):
        inner = ", ".join(f"{key_text(k, flow=True)}: {flow(v)}" for k, v in value.items())
        return "{" + inner + "}"
    if isinstance(value, list):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    return scalar(value, flow=True)


def key_text(key: Any, *, flow: bool = False) -> str:
    """Render a mapping key."""
    return scalar(key, flow=flow)


def block(value: Any, col: int, indent: Indent, *, literals: bool = True) -> list[str]:
    """Render a non-empty dict or list as block lines at column `col` (multi-line text as literals if `literals`)."""
    pad = " " * col
    lines: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            head = f"{pad}{key_text(k)}:"
            lines.extend(_value_after(head, v, col, indent, literals=literals))
        return lines
    for item in value:
        dash = f"{pad}-"
        item_col = col + indent.item
        if isinstance(item, dict) and item:
            sub = block(item, item_col, indent, literals=literals)
            lines.append(dash + " " * (indent.item - 1) + sub[0][item_col:])
            lines.extend(sub[1:])
        elif isinstance(item, list) and item:
            lines.append(dash)
            lines.extend(block(item, item_col, indent, literals=literals))
        elif literals and isinstance(item, str) and "\n" in item and literal_ok(item):
            lit = literal_block(item, item_col, col)
            lines.append(f"{dash} {lit[0]}")
            lines.extend(lit[1:])
        else:
            lines.append(f"{dash} {flow(item) if isinstance(item, dict | list) else scalar(item)}")
    return lines


def _value_after(head: str, v: Any, col: int, indent: Indent, *, literals: bool = True) -> list[str]:
    """Render `head` (`key:` at column `col`) followed by its value, inline or as a nested block."""
    if isinstance(v, dict) and v:
        return [head, *block(v, col + indent.mapping, indent, literals=literals)]
    if isinstance(v, list) and v:
        return [head, *block(v, col + indent.sequence, indent, literals=literals)]
    if literals and isinstance(v, str) and "\n" in v and literal_ok(v):
        lit = literal_block(v, col + indent.mapping, col)
        return [f"{head} {lit[0]}", *lit[1:]]
    text = flow(v) if isinstance(v, dict | list) else scalar(v)
    return [f"{head} {text}"]


def entry(key: Any, value: Any, col: int, indent: Indent, *, literals: bool = True) -> list[str]:
    """Render one `key: value` mapping entry at column `col`."""
    return _value_after(f"{' ' * col}{key_text(key)}:", value, col, indent, literals=literals)
