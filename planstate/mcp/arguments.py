"""A tool's arguments checked against its input schema: one line naming the argument for every bad one.

The SDK would check them with pydantic and answer with a multi-line report prefixed by the tool's name; the
tools publish a small hand-written JSON Schema instead (tools/list stays within its budget) and this module
holds the one reading of it, so a wrong type is refused in the same one-line words as any other bad input.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Any

from planstate.core.errors import UsageError
from planstate.core.suggest import did_you_mean

_PYTHON = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}
_WORDS = {
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "an object",
    "null": "null",
}


class Arguments:
    """The checked arguments of one call: `get(name)` is None for one not given, `given(name)` tells them apart."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values = dict(values)

    def get(self, name: str, default: Any = None) -> Any:
        """The value of an argument, or `default` when it was not given (or given as null)."""
        value = self.values.get(name)
        return default if value is None else value

    def given(self, name: str) -> bool:
        """Whether the call named the argument (null included: for `position`, null clears a field)."""
        return name in self.values

    def require(self, name: str, action: str | None = None) -> Any:
        """The value of an argument the call (or its `action`) cannot do without."""
        value = self.values.get(name)
        if value is None:
            needs = f"action {action!r}" if action else "this tool"
            raise UsageError(f"{name} is required for {needs}", argument=name)
        return value


def check(schema: Mapping[str, Any], raw: Mapping[str, Any]) -> Arguments:
    """The arguments of a call, checked against the tool's input schema; UsageError naming the first bad one."""
    properties: Mapping[str, Any] = schema.get("properties", {})
    checked: dict[str, Any] = {}
    for name, value in raw.items():
        if name not in properties:
            raise UsageError(f"unknown argument {name!r}{did_you_mean(name, properties)}", argument=name)
        if value is None and not _nullable(properties[name]):
            continue  # some clients send null for every argument left out: it is left out
        checked[name] = _value(name, properties[name], value)
    for name in schema.get("required", ()):
        if checked.get(name) is None:
            raise UsageError(f"{name} is required", argument=name)
    return Arguments(checked)


def _value(name: str, rule: Mapping[str, Any], value: Any) -> Any:
    """`value` if it matches `rule` (a JSON text of a list or object is read, as clients sometimes send one)."""
    types = rule.get("type", ())
    types = [types] if isinstance(types, str) else list(types)
    if isinstance(value, str) and "string" not in types and ("array" in types or "object" in types):
        with contextlib.suppress(ValueError):
            value = json.loads(value)
    if types and not any(_is(value, kind) for kind in types):
        wanted = " or ".join(_WORDS[kind] for kind in types)
        raise UsageError(f"{name} must be {wanted}, not {json.dumps(value, ensure_ascii=False)[:60]}", argument=name)
    if "enum" in rule and value is not None and value not in rule["enum"]:
        allowed = ", ".join(str(v) for v in rule["enum"])
        raise UsageError(f"{name} {value!r} is not one of: {allowed}{did_you_mean(str(value), rule['enum'])}")
    if "integer" in types and isinstance(value, float):
        value = int(value)  # 3.0 is the whole number 3, as JSON Schema says
    items = rule.get("items")
    if items is not None and isinstance(value, list):
        return [_value(f"{name}[{i}]", items, item) for i, item in enumerate(value)]
    return value


def _nullable(rule: Mapping[str, Any]) -> bool:
    """Whether null means something for an argument (it clears a field), rather than leaving the argument out."""
    types = rule.get("type", ())
    return "null" in ([types] if isinstance(types, str) else types)


def _is(value: Any, kind: str) -> bool:
    """Whether `value` is of the JSON type `kind` (a boolean is not a number, as JSON Schema says)."""
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _PYTHON[kind])
