"""`planstate mcp`: serve the Workspace API to agents as MCP tools over stdio (docs/mcp.md)."""

from __future__ import annotations

import argparse

from planstate.cli.parser import Registrar
from planstate.core.errors import EXIT_OK, UsageError

INSTALL = "pip install 'planstate[mcp]'"


def register(cli: Registrar) -> None:
    """Add `mcp`."""
    cli.add(
        "mcp",
        cmd_mcp,
        "serve the planstate tools to an agent over stdio (Model Context Protocol)",
        json=False,
        examples=["planstate mcp", "planstate mcp --dir ~/src/shop --by claude"],
    )


def cmd_mcp(args: argparse.Namespace) -> int:
    """Run the MCP server until the client closes stdin."""
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        raise UsageError(f"the MCP server needs the mcp extra: {INSTALL}") from None
    from planstate.mcp.server import Settings, run

    run(
        Settings(
            dir=getattr(args, "dir", None),
            actor=getattr(args, "by", None),
            lock_timeout=getattr(args, "lock_timeout", None),
        )
    )
    return EXIT_OK
