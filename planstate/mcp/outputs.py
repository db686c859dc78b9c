"""Each tool's output schema: the envelope its structured content is, with the `data` of every command it runs.

Built from the JSON Schemas of planstate/schemas/ (the CLI's `--json` contract, docs/json.md) into one document per
tool, since a client resolves a `$ref` only inside the schema it was given: the command schemas' references to
`envelope.json#/$defs/…` become the tool schema's own `$defs`. Titles and descriptions are left out (they tell
people what a value means; a client checking an answer needs none), and nothing is read before tools/list asks.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"
ENVELOPE = "envelope.json"
_ANNOTATIONS = frozenset({"$schema", "title", "description"})
_NAMED = frozenset({"properties", "$defs", "patternProperties", "dependentSchemas"})  # name -> schema maps
_VALUES = frozenset({"const", "enum", "default", "examples", "required"})  # values, not schemas


def output_schema(commands: Sequence[str]) -> dict[str, Any]:
    """The JSON Schema of a tool's structured content when it answers as one of `commands` (`decision add` …):
    the envelope, whose `data` matches the schema of the command it names, or whose `error` says why it refused."""
    envelope = _plain(_load(ENVELOPE))
    defs: dict[str, Any] = {}
    branches: list[dict[str, Any]] = []
    for command in commands:
        data = _plain(_load(f"{command.replace(' ', '-')}.json"))
        # One definition for commands whose data is alike (`phase start`, `phase fail` …): a smaller tools/list.
        name = next((n for n, d in defs.items() if d == data), f"data-{command.replace(' ', '-')}")
        defs[name] = data
        branches.append({"properties": {"command": {"const": command}, "data": {"$ref": f"#/$defs/{name}"}}})
    branches.append({"required": ["error"]})
    shared: dict[str, Any] = envelope["$defs"]
    wanted = {"error"} | {ref for data in defs.values() for ref in _refs(data)}
    while more := {ref for name in wanted for ref in _refs(shared[name])} - wanted:
        wanted |= more
    schema = {key: value for key, value in envelope.items() if key != "$defs"}
    schema["anyOf"] = branches
    schema["$defs"] = {**{name: shared[name] for name in sorted(wanted)}, **defs}
    return schema


@functools.cache
def _load(name: str) -> Any:
    """A schema file of planstate/schemas/, parsed (each is read once per process)."""
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


def _plain(schema: Any) -> Any:
    """`schema` without annotations, its references to the envelope's definitions made local (`#/$defs/path`)."""
    if isinstance(schema, list):
        return [_plain(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _ANNOTATIONS:
            continue
        if key == "$ref":
            out[key] = value.removeprefix(ENVELOPE)
        elif key in _NAMED:
            out[key] = {name: _plain(item) for name, item in value.items()}
        elif key in _VALUES:
            out[key] = value
        else:
            out[key] = _plain(value)
    return out


def _refs(schema: Any) -> Iterator[str]:
    """The names of the local definitions `schema` refers to (`#/$defs/NAME`)."""
    if isinstance(schema, list):
        for item in schema:
            yield from _refs(item)
    elif isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref":
                yield value.removeprefix("#/$defs/")
            elif key in _NAMED:
                for item in value.values():
                    yield from _refs(item)
            elif key not in _VALUES:
                yield from _refs(value)
