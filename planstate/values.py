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
    (a number, a date, `yes`, a mapping), the text itself is used, so `planstate set title 2026`
    means "2026" and `planstate set position.task "fix: login"` means "fix: login".
    Likewise multi-line text is kept as typed instead of being folded into one line by YAML,
    unless it is written as a quoted or block YAML string.
    """
    value = read_yaml_value(text)
    if kind is not None and _folded(text, value) and _wants_text(kind) and _accepts(kind, text):
        return text  # `set next_action "line 1<newline>line 2"` keeps its lines
    if kind is None or _accepts(kind, value):
        return value
    if _wants_text(kind) and _accepts(kind, text):
        return text  # also for text YAML reads as a mapping, such as `fix: the login bug`
    return value


def _folded(text: str, value: Any) -> bool:
    """Tell whether YAML turned multi-line unquoted text into a different (folded) string."""
    if "\n" not in text or not isinstance(value, str) or value == text:
        return False
    return text.lstrip()[:1] not in ("'", '"', "|", ">")
