"""The resources, for clients that read them: STATE.md, the brief, each record by id, the JSON Schema of each kind.

Each is also a tool call (many clients never read resources): `get` without a path, `resume`, `decision`/`blocker`/
`session` with `action: show`, and `schema`. Resources name no workspace of their own, so they read the server's:
its `--dir`, else PLANSTATE_DIR, else the folder it was started in. A record or kind that is not there is the
protocol's "resource not found" (-32602, the uri as `data`); any other refusal an internal error (-32603), each
with planstate's one line.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

from planstate.core.errors import NotFound, PlanstateError
from planstate.core.suggest import did_you_mean

if TYPE_CHECKING:
    from planstate.workspace import Workspace

RECORDS = ("decision", "blocker", "session")


def register(server: MCPServer[Any], workspace: Callable[[], Workspace]) -> None:
    """Add the resources to `server`; `workspace()` is the server's own workspace, found afresh on each read."""

    def read(what: Callable[[Workspace], str]) -> str:
        try:
            return what(workspace())
        except NotFound as exc:  # the protocol's "resource not found" (the SDK adds the uri as `data`)
            raise ResourceNotFoundError(f"planstate: {exc}") from None
        except PlanstateError as exc:  # the client sees the one line, as a tool's caller does
            raise ResourceError(f"planstate: {exc}") from None

    @server.resource("planstate://state", name="state", description="STATE.md of the active initiative",
                     mime_type="text/markdown")  # fmt: skip
    def state() -> str:
        return read(lambda ws: _text(ws, ws.state_path))

    @server.resource("planstate://brief", name="brief", description="The resume brief", mime_type="text/plain")
    def brief() -> str:
        def text(ws: Workspace) -> str:
            from planstate.report.budget import fit

            return fit(ws.ctx, ws.brief())[1]

        return read(text)

    for kind in RECORDS:
        _record(server, kind, read)

    @server.resource("planstate://schema/{kind}", name="schema", description="JSON Schema of a file kind "
                     "(state, decision, blocker, session, history)", mime_type="application/json")  # fmt: skip
    def schema(kind: str) -> str:
        from planstate.cli.commands.schema import schema_of
        from planstate.model.kinds import KINDS

        if kind not in KINDS:
            raise ResourceNotFoundError(f"planstate: no file kind {kind!r}{did_you_mean(kind, KINDS)}; kinds: "
                                        f"{', '.join(KINDS)}")  # fmt: skip
        return json.dumps(schema_of(kind), indent=2)


def _text(ws: Workspace, path: Path) -> str:
    """A planning file's text, read as every planning file is (a regular file inside the workspace, not too big)."""
    from planstate.core.files import read_bytes

    return read_bytes(path, ws.root, ws.root.parent).decode("utf-8", errors="replace")


def _record(server: MCPServer[Any], kind: str, read: Callable[[Callable[[Workspace], str]], str]) -> None:
    """Add the resource of one record kind: the record's file as it is on disk, by id or unique id prefix."""

    def record(id: str) -> str:
        def text(ws: Workspace) -> str:
            api: Any = getattr(ws, kind)
            return _text(ws, api.show(id).path)

        return read(text)

    server.resource(
        f"planstate://{kind}/{{id}}", name=kind, description=f"A {kind} file by id", mime_type="text/markdown"
    )(record)
