"""The official MCP client driving a real `planstate mcp` process over stdio, callable from plain (sync) tests.

The client's session lives on an event loop in a thread of its own, so one server process can serve every test
of a module (starting one costs about a second of CPU) while each test calls it as a function.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from conftest import planstate_command

if TYPE_CHECKING:  # the SDK is imported when a client starts, not when the suite is collected
    from mcp.client.session import ClientSession
    from mcp.types import CallToolResult, InitializeResult, ListToolsResult

T = TypeVar("T")
TIMEOUT = 300  # seconds: only catches a hang, never judges speed


class Client:
    """A `planstate mcp` process and the official client's session with it; `close()` ends both."""

    def __init__(self, args: list[str], *, cwd: Path, env: dict[str, str]) -> None:
        from mcp.client.stdio import StdioServerParameters

        command = planstate_command()
        self.params = StdioServerParameters(
            command=command[0], args=[*command[1:], "mcp", *args], cwd=str(cwd), env=env
        )
        self.loop = asyncio.new_event_loop()
        self.session: ClientSession | None = None
        self.initialized: InitializeResult | None = None
        self._ready: Future[None] = Future()
        self._stop = asyncio.Event()
        self._thread = threading.Thread(target=self.loop.run_until_complete, args=(self._serve(),), daemon=True)
        self._thread.start()
        self._ready.result(TIMEOUT)

    async def _serve(self) -> None:
        from mcp.client.session import ClientSession
        from mcp.client.stdio import stdio_client

        try:
            async with stdio_client(self.params) as (read, write), ClientSession(read, write) as session:
                self.initialized = await session.initialize()
                self.session = session
                self._ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:  # the test reads it from the future instead of hanging
            if not self._ready.done():
                self._ready.set_exception(exc)
            raise

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(TIMEOUT)

    def call(self, tool: str, /, **arguments: Any) -> CallToolResult:
        """Call a tool and return its result as the client received it."""
        assert self.session is not None
        return self._run(self.session.call_tool(tool, arguments))

    def list_tools(self) -> ListToolsResult:
        """The server's tools/list answer."""
        assert self.session is not None
        return self._run(self.session.list_tools())

    def read(self, uri: str) -> str:
        """The text of a resource."""
        assert self.session is not None
        result = self._run(self.session.read_resource(uri))
        (content,) = result.contents
        return content.text  # type: ignore[union-attr]

    def resources(self) -> list[str]:
        """The URIs of the resources and resource templates the server lists."""
        assert self.session is not None
        plain = self._run(self.session.list_resources()).resources
        templates = self._run(self.session.list_resource_templates()).resource_templates
        return [str(r.uri) for r in plain] + [t.uri_template for t in templates]

    def close(self) -> None:
        """Close the session (the server ends when its stdin closes) and the loop's thread."""
        self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(TIMEOUT)


def server_env(**extra: str) -> dict[str, str]:
    """The environment of a server under test: this one without planstate's settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANSTATE_")}
    return {**env, "NO_COLOR": "1", **extra}
