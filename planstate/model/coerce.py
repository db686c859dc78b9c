"""Values typed on a command line, fitted to the type the schema expects at the target field.

The rules (docs/cli.md "Values"): a field that takes text gets the text exactly as typed,
except a YAML null spelling for a nullable field, and text that starts with a quote or a block
indicator, which is read as that YAML string. A number field of a field that takes a number or
text (`position.plan`) reads `3` as 3. Every other field reads the text as YAML, and refuses
text YAML would read only in part (a ` #` comment, content after the value).
"""

from __future__ import annotations

import re
from typing import Any

from planstate.core.errors import UsageError
from planstate.model.types import Enum, Kind, Nullable, OneOf, Problem, Str
from planstate.text.plaindata import to_plain

NULLS = ("null", "Null", "NULL", "~")
_BLOCK = re.compile(r"[|>][1-9+-]{0,2}[ \t]*(?:#[^\n]*)?\r?\n")
_QUOTE_HINT = "to keep it, quote the value in YAML, e.g. '\"fix #12\"' (the shell's own quotes do not count)"


def read_yaml_value(text: str, field: str | None = None) -> Any:
    """Read `text` as one YAML scalar or flow collection (YAML 1.2, as the files are read).

    Refused (UsageError naming `field`) when it does not parse, or when YAML would silently drop
    part of it: a comment (` #`), or anything it does not read into the value.
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    if text.strip() == "":
        return text
    yaml = YAML(typ="safe", pure=True)
    try:
        value = yaml.load(text)
        dropped = _dropped(yaml, text)
    except YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise UsageError(f"cannot read {text!r} as a YAML value: {problem}; {_QUOTE_HINT}", field=field) from None
    if dropped:
        raise UsageError(
            f"YAML would read {text!r} without {dropped.strip()!r} (a comment, or text after the value); {_QUOTE_HINT}",
            field=field,
        )
    return to_plain(value)


def _dropped(yaml: Any, text: str) -> str:
    """The first run of characters of `text` that no YAML token covers (a comment, stray text); empty if none."""
    covered = _covered(yaml, text)
    start = next((i for i, ch in enumerate(text) if not covered[i] and not ch.isspace()), None)
    if start is None:
        return ""
    end = start
    while end < len(text) and not covered[end] and text[end] != "\n":
        end += 1
    return text[start:end]


def _covered(yaml: Any, text: str) -> list[bool]:
    """For each character of `text`, whether a YAML token covers it."""
    from ruamel.yaml.tokens import StreamEndToken

    covered = [False] * len(text)
    for token in yaml.scan(text):
        if isinstance(token, StreamEndToken):
            break
        for i in range(token.start_mark.index, min(token.end_mark.index, len(text))):
            covered[i] = True
    return covered


def _accepts(kind: Kind[Any], value: Any) -> bool:
    probe: list[Problem] = []
    kind.check(value, (), probe)
    return not probe


def _wants_text(kind: Kind[Any]) -> bool:
    """Tell whether a kind takes strings (so `123` typed for a title means the text "123")."""
    while isinstance(kind, Nullable):
        kind = kind.inner
    if isinstance(kind, OneOf):
        return any(_wants_text(k) for k in kind.kinds)
    return isinstance(kind, Str | Enum)


def _nullable(kind: Kind[Any]) -> bool:
    """Tell whether a kind takes null (directly or as one of its alternatives)."""
    if isinstance(kind, Nullable):
        return True
    return isinstance(kind, OneOf) and any(_nullable(k) for k in kind.kinds)


def from_text(text: str, kind: Kind[Any] | None, field: str | None = None) -> Any:
    """Turn command-line text into the value to write for a field of schema `kind` (see the module docstring).

    Errors are UsageError naming `field`. The value is not validated here: the write validates it.
    """
    if kind is None or not _wants_text(kind):
        return read_yaml_value(text, field)
    if _nullable(kind) and text in NULLS:
        return None
    if text[:1] in ("'", '"') or _BLOCK.match(text):
        value = read_yaml_value(text, field)
        if not isinstance(value, str):
            raise UsageError(
                f"{text!r} starts like a quoted or block YAML string but is not one string; "
                'quote all of it, e.g. \'"a \\"b\\" c"\'',
                field=field,
            )
        return value
    number = _number(text)
    if number is not None and _accepts(kind, number):
        return number  # `position.plan 3` is the plan number 3; `position.plan 3b` stays text
    return text


def _number(text: str) -> int | float | None:
    """The number `text` spells in YAML (`3`, `-1`, `0.5`), or None for anything else."""
    if text != text.strip() or not re.fullmatch(r"[-+]?(?:\d+|\d*\.\d+(?:[eE][-+]?\d+)?)", text):
        return None
    return float(text) if "." in text else int(text)
