"""`planstate schema [KIND]`: print the JSON Schema of a file kind, or of every kind."""

from __future__ import annotations

import argparse
from typing import Any

from planstate.cli.output import out, reply
from planstate.cli.parser import Registrar
from planstate.core.errors import EXIT_OK


def register(cli: Registrar) -> None:
    """Add `schema`."""
    p = cli.add("schema", cmd_schema, "print the JSON Schema of a file kind")
    kinds = ("state", "decision", "blocker", "session", "task", "history")
    p.add_argument("name", nargs="?", choices=kinds, help="file kind")


def cmd_schema(args: argparse.Namespace) -> int:
    """Print the JSON Schema of a file kind (or of all kinds)."""
    from planstate.cli.display import dump_json
    from planstate.model.kinds import KINDS

    schema = schema_of(args.name) if args.name else {name: schema_of(name) for name in KINDS}
    if args.json:
        reply(schema)
    else:
        out(dump_json(schema))
    return EXIT_OK


def schema_of(name: str) -> dict[str, Any]:
    """The JSON Schema of one file kind (`planstate schema NAME`; the MCP server's `schema` tool too)."""
    from planstate.model.kinds import KINDS

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"planstate {name}",
        **KINDS[name].json_schema(),
    }
