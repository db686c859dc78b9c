"""The server: the tools of tools.py on the official MCP SDK's `MCPServer`, each call answered in the one envelope.

Every call finds its workspace afresh (its `dir` argument, else the server's `--dir`, else `PLANSTATE_DIR`, else
the working folder and its parents) and names it in the answer, so a client that started the server in `/` or in
the home folder learns where it wrote. Plain tools run in the SDK's worker threads; the workspace lock orders
writers across threads and processes alike. An expected error is an `isError` result whose text is the CLI's one
line and whose structured content is the CLI's error envelope; a bug is one line naming its crash log.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool as SdkTool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import ConfigDict

from planstate import __version__
from planstate.cli.envelope import envelope
from planstate.core.errors import EXIT_INTERNAL, EXIT_OK, LockTimeout, NoWorkspace, PlanstateError, UsageError
from planstate.core.suggest import did_you_mean
from planstate.mcp import arguments
from planstate.mcp.catalog import NAMES, TOOLS, Tool
from planstate.mcp.tools import Answer

if TYPE_CHECKING:
    from mcp.server.mcpserver.context import Context

    from planstate.workspace import Workspace

LOCK_TIMEOUT = 10.0  # seconds a write waits for the lock: well below the 60 s clients wait for an answer
INSTRUCTIONS = (
    "planstate keeps the state of software work in .planning/ (STATE.md, decisions, blockers, sessions). "
    "Call resume first. Each call acts on `dir` if given, else the server's workspace; every answer names it. "
    "Answers are planstate's JSON envelope {command, ok, exit, data|error, warnings, workspace}. "
    "Field paths: phases.2.status is phase 2. Pass request_id when adding a record so a retry does not duplicate it. "
    "A session started here (session action=start) is heartbeated by every later call until it ends."
)


@dataclass
class Settings:
    """What `planstate mcp` was started with: the default workspace, who acts, how long a write waits."""

    dir: str | None = None
    actor: str | None = None
    lock_timeout: float | None = None


class _Raw(ArgModelBase):
    """The arguments as the client sent them: arguments.py checks them, in one-line words."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    def model_dump_one_level(self) -> dict[str, Any]:
        """Every argument given, unchanged."""
        return dict(self.model_extra or {})


class _SdkTool(SdkTool):
    """A tool as the SDK registers it, whose output schema is built when tools/list first asks, not at start-up."""

    answers: tuple[str, ...] = ()  # the commands its answers name (`decision add` …)

    @cached_property
    def output_schema(self) -> dict[str, Any] | None:
        """The envelope of its answers, with the `data` of each command it runs (mcp/outputs.py)."""
        from planstate.mcp.outputs import output_schema

        return output_schema(self.answers)


class _MCPServer(MCPServer[Any]):
    """The SDK's server, refusing a call to a tool it does not have as planstate refuses any bad input."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """Run the tool `name`; an unknown name is one line naming the tool it most likely means."""
        if name not in TOOLS:
            return _refusal(None, UsageError(f"unknown tool {name!r}{did_you_mean(name, NAMES)}"), None)
        return await super().call_tool(name, arguments, context)


class Server:
    """The tools bound to the settings the server started with."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        # The session a `session start` through this server made in each workspace (and initiative named), which
        # every later call there heartbeats until `session end` ends it: an agent's calls are its sign of life.
        self.sessions: dict[tuple[str, str | None], str] = {}
        self._sessions_lock = threading.Lock()

    def workspace(self, given: arguments.Arguments) -> Workspace:
        """The workspace a call acts on: its `dir`, else the server's `--dir`, else PLANSTATE_DIR, else the cwd."""
        from planstate.workspace import Workspace

        timeout = self.settings.lock_timeout
        if timeout is None and not os.environ.get("PLANSTATE_LOCK_TIMEOUT"):
            timeout = LOCK_TIMEOUT
        return Workspace.find(
            explicit=given.get("dir") or self.settings.dir,
            lock_timeout=timeout,
            initiative=given.get("initiative") or os.environ.get("PLANSTATE_INITIATIVE") or None,
            actor=self.settings.actor,
        )

    def call(self, tool: Tool, raw: dict[str, Any]) -> CallToolResult:
        """Run one tool call: its answer, or its error, as a CallToolResult holding the envelope."""
        root: str | None = None
        try:
            given = arguments.check(tool.input_schema(), raw)
            if tool.makes_workspace(given):
                return _result(self._create(tool, given), None)
            ws = self.workspace(given)
            root = str(ws.root)
            key = (root, given.get("initiative"))
            beat = self._beat(ws, key) if tool.name != "session" else []
            answer = tool.call(ws, given)
            self._follow(key, answer)
            answer.warnings.extend(beat)
        except PlanstateError as exc:
            return _refusal(command_of(tool, raw), exc, root)
        except Exception as exc:  # a bug: one line and a crash log, as the command line does
            return _crash(command_of(tool, raw), tool, raw, exc, root)
        return _result(answer, root)

    def _create(self, tool: Tool, given: arguments.Arguments) -> Answer:
        """Make a workspace (`init`) in the call's `dir`, else the server's --dir, else PLANSTATE_DIR, else here."""
        assert tool.creates is not None
        values = {**given.values, "dir": given.get("dir") or self.settings.dir, "by": self.settings.actor}
        return tool.creates[1](arguments.Arguments(values))

    def _beat(self, ws: Workspace, key: tuple[str, str | None]) -> list[str]:
        """Heartbeat the session this server started in the workspace, if any; a warning when it cannot be."""
        with self._sessions_lock:
            session = self.sessions.get(key)
        if session is None:
            return []
        try:
            ws.session.heartbeat(session)
        except PlanstateError as exc:  # ended or reaped elsewhere: stop beating it, and say so once
            with self._sessions_lock:
                self.sessions.pop(key, None)
            return [f"session {session} is no longer heartbeated by this server: {exc}"]
        return []

    def _follow(self, key: tuple[str, str | None], answer: Answer) -> None:
        """Remember the session a `session start` made, and forget it when `session end` ends it."""
        with self._sessions_lock:
            if answer.command == "session start":
                self.sessions[key] = answer.data["id"]
            elif answer.command == "session end" and self.sessions.get(key) == answer.data["id"]:
                del self.sessions[key]

    def own_workspace(self) -> Workspace:
        """The server's workspace, for what names none (resources): its --dir, else PLANSTATE_DIR, else the cwd."""
        return self.workspace(arguments.Arguments({}))

    def sdk_tools(self) -> list[SdkTool]:
        """The tools as the SDK registers them, with the hand-written schemas and no pydantic argument check."""
        return [self._sdk_tool(TOOLS[name]) for name in NAMES]

    def _sdk_tool(self, tool: Tool) -> SdkTool:
        def run(**raw: Any) -> CallToolResult:
            return self.call(tool, raw)

        return _SdkTool(
            answers=tuple(answers(tool)),
            fn=run,
            name=tool.name,
            title=None,
            description=tool.description,
            parameters=tool.input_schema(),
            fn_metadata=FuncMetadata(arg_model=_Raw),
            is_async=False,  # run in a worker thread: a lock wait never stalls the other calls
            context_kwarg=None,
            annotations=ToolAnnotations(read_only_hint=tool.read_only, destructive_hint=tool.destructive),
        )


def build(settings: Settings) -> MCPServer[Any]:
    """The MCP server with every tool."""
    from planstate.mcp import resources
    from planstate.text import fastyaml

    fastyaml.load()  # a long-lived process: every parse after this one goes through libyaml (parser._fast)
    server = Server(settings)
    mcp = _MCPServer(
        "planstate",
        version=__version__,
        instructions=INSTRUCTIONS,
        tools=server.sdk_tools(),
        log_level="WARNING",
    )
    resources.register(mcp, server.own_workspace)
    return mcp


def run(settings: Settings) -> None:
    """Serve on stdin/stdout until the client closes them."""
    build(settings).run("stdio")


_COMMANDS: dict[str, Callable[[str | None], str]] = {
    "set": lambda action: {"append": "append", "unset": "unset"}.get(action or "", "set"),
    "lifecycle": lambda action: action or "lifecycle",
    "next_action": lambda _action: "next",
    "initiative": lambda action: "init" if action == "init" else f"initiative {action}" if action else "initiative",
}


def command_of(tool: Tool, raw: dict[str, Any]) -> str:
    """The command a call is, as the CLI names it (`decision add`, `pause`, `next`), as far as the call says."""
    action = raw.get("action")
    allowed = tool.properties.get("action", {}).get("enum", ())
    action = action if isinstance(action, str) and action in allowed else None
    if tool.name in _COMMANDS:
        return _COMMANDS[tool.name](action)
    return f"{tool.name} {action}" if action else tool.name


def answers(tool: Tool) -> list[str]:
    """The commands a tool's answers name, one for each action (and the default one, where `action` may be left
    out): what its output schema describes."""
    actions = tool.properties.get("action", {}).get("enum", ())
    default = [] if actions and "action" in tool.required else [command_of(tool, {})]
    return list(dict.fromkeys([*default, *(command_of(tool, {"action": action}) for action in actions)]))


def _result(answer: Answer, root: str | None) -> CallToolResult:
    """A tool's answer: the envelope as structured content; as text, one line, the warnings and the data."""
    root = root or answer.workspace
    answered = envelope(answer.command, answer.exit, answer.data, warnings=answer.warnings, workspace=root)
    head = f"planstate {answer.command}: {'ok' if answer.exit == EXIT_OK else f'exit {answer.exit}'} ({root})"
    lines = [head, *(f"warning: {w}" for w in answer.warnings)]
    lines.append(answer.text if answer.text is not None else json.dumps(answered["data"], ensure_ascii=False))
    return CallToolResult(content=[TextContent(type="text", text="\n".join(lines))], structured_content=answered)


MAKE = "make one with the initiative tool (action=init, dir=PATH)"  # how a workspace is made through the server
# API arguments a tool calls otherwise (`Workspace.find(explicit=PATH)` is the call's `dir`, `session=ID` its `id`).
_ARGUMENTS = {"explicit": "dir", "session": "id"}


def _in_tool_words(exc: UsageError) -> UsageError:
    """`exc` with the API argument it names (`explicit=PATH`) spelled as the tool's argument (`dir=PATH`)."""
    import re

    name = str(exc.argument)
    message = re.sub(rf"(?<![\w.-]){re.escape(name)}(?=[= ])", _ARGUMENTS[name], exc.message)
    return UsageError(
        message, argument=_ARGUMENTS[name], file=exc.file, line=exc.line, column=exc.column, field=exc.field
    )


def _refusal(command: str | None, exc: PlanstateError, root: str | None) -> CallToolResult:
    """An expected error: the CLI's one line as text, its error envelope as structured content."""
    if isinstance(exc, NoWorkspace):  # the tool that makes one, not the command line's `planstate init`
        exc = exc.made_by(MAKE)
    if isinstance(exc, UsageError) and exc.argument in _ARGUMENTS:
        exc = _in_tool_words(exc)
    if isinstance(exc, LockTimeout):
        exc = LockTimeout(
            f"{exc.message} (call again, or start the server as `planstate mcp --lock-timeout SECONDS`)", file=exc.file
        )
    line = f"planstate: {exc}"
    answered = envelope(command, exc.exit_code, error=exc, text=line, workspace=root)
    return CallToolResult(content=[TextContent(type="text", text=line)], structured_content=answered, is_error=True)


def _crash(command: str, tool: Tool, raw: dict[str, Any], exc: Exception, root: str | None) -> CallToolResult:
    """A bug: one line naming the crash log that holds the traceback, exit 4."""
    from planstate.cli.errors import InternalError, save_crash_log

    log = save_crash_log(exc, ["mcp", tool.name, json.dumps(raw, default=str)])
    line = f"planstate: internal error: {type(exc).__name__}: {exc} (traceback: {log})"
    error = InternalError(line.removeprefix("planstate: "))
    answered = envelope(command, EXIT_INTERNAL, error=error, text=line, workspace=root)
    return CallToolResult(content=[TextContent(type="text", text=line)], structured_content=answered, is_error=True)
