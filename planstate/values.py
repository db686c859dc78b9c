"""Values typed on a command line: read as YAML, then fitted to the type the schema expects."""

from __future__ import annotations

from typing import Any

from planstate.errors import UsageError
from planstate.plain import to_plain
from planstate.schema import Enum, Kind, Nullable, OneOf, Problem, Str


def read_yaml_value(text: str) -> Any:
    """Read `text` as a YAML scalar or flow collection (YAML 1.2, as the files are read)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    if text.strip() == "":
        return text
    try:
        value = YAML(typ="safe", pure=True).load(text)
    except YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise UsageError(f"cannot read {text!r} as a YAML value: {problem}") from None
    return to_plain(value)


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


def from_text(text: str, kind: Kind[Any] | None) -> Any:
    """Turn command-line text into the value to write, guided by the schema kind at the target.

    The text is read as YAML; when the field takes strings and YAML read something else
    (a number, a date, `yes`), the text itself is used, so `planstate set title 2026` means "2026".
    """
    value = read_yaml_value(text)
    if kind is None or _accepts(kind, value):
        return value
    if _wants_text(kind) and not isinstance(value, dict | list) and _accepts(kind, text):
        return text
    return value
