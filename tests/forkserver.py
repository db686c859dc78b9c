"""A fork server for the tests: one process per test worker imports planstate once, then each command is a fork.

A `planstate` command in a subprocess spends most of its ~100-150 ms starting Python and importing; the command
itself takes a few milliseconds. The server (started on first use, one per pytest process, gone with it) imports
every planstate module and what they import, then for each request forks the command: a child that takes the
caller's stdin, stdout and stderr (passed as file descriptors), cwd, environment and argv, runs the console script's
entry point `planstate.cli.main.main` exactly as the script does, and exits as an interpreter would (threads joined,
atexit run, streams flushed). The server waits for it (one descriptor per running command, so commands run side by
side) and reports its exit status as `subprocess` would (-N for a signal). The command is a real process with real
files, real git and the real entry point; only the interpreter start-up is shared.

`run()` falls back to a real subprocess of the console script when PLANSTATE_TEST_REAL_CLI=1 is set, when the
server cannot start, or when the command's environment changes how Python itself starts (PYTHON*, LANG, LC_*).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import locale
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

HEADER = struct.Struct("!I")
REAL_CLI = "PLANSTATE_TEST_REAL_CLI"
STARTUP_PREFIXES = ("PYTHON", "LC_", "LANG")  # settings read when an interpreter starts, fixed in the server


def script() -> Path:
    """The installed `planstate` console script next to this Python."""
    return Path(sys.executable).parent / "planstate"


# ----------------------------------------------------------------------------------------------- the server


def _preload() -> None:
    """Import every planstate module (not `__main__`) and every module they import, even inside functions."""
    import ast
    import importlib
    import pkgutil

    import planstate

    names: set[str] = set()
    for info in pkgutil.walk_packages(planstate.__path__, "planstate."):
        if info.name.endswith("__main__"):
            continue
        names.add(info.name)
        spec = importlib.util.find_spec(info.name)
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            continue
        tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
    for name in sorted(names):
        with contextlib.suppress(Exception):  # an optional import that fails here fails the same way in the command
            importlib.import_module(name)
    # The fast YAML path ready, as in a long-lived process (the MCP server): a write then verifies its splice with it
    # (text/document.Document._reread). Both paths give the same data; the round-trip one still reads every file.
    from planstate.text import fastyaml

    fastyaml.text_data("ready: true\n")


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """Read one request (a length-prefixed JSON object) and the three descriptors sent with it."""
    data, fds, _flags, _address = socket.recv_fds(conn, 1 << 16, 3)
    while len(data) < HEADER.size or len(data) < HEADER.size + HEADER.unpack_from(data)[0]:
        more = conn.recv(1 << 16)
        if not more:
            raise EOFError("the client went away")
        data += more
    (size,) = HEADER.unpack_from(data)
    return json.loads(data[HEADER.size : HEADER.size + size]), list(fds)


def _send(conn: socket.socket, message: dict[str, Any]) -> None:
    """Write one length-prefixed JSON message."""
    body = json.dumps(message).encode()
    conn.sendall(HEADER.pack(len(body)) + body)


def _exit_code(code: object) -> int:
    """The exit status an interpreter gives `SystemExit(code)` (printing a non-integer code, as it does)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _command(request: dict[str, Any], fds: list[int], inherited: list[int]) -> None:
    """In the forked child: close the server's descriptors (`inherited`), become the `planstate` process of the
    request, run it, and exit with its status."""
    try:
        for fd in inherited:
            os.close(fd)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [str(script()), *request["args"]]
    except BaseException as error:
        os.write(2, f"planstate fork server: cannot start the command: {error!r}\n".encode())
        os._exit(127)
    status = 0
    try:
        from planstate.cli.main import main

        status = _exit_code(main())
    except SystemExit as stop:
        status = _exit_code(stop.code)
    except KeyboardInterrupt:
        sys.excepthook(*sys.exc_info())
        status = -signal.SIGINT
    except BaseException:
        sys.excepthook(*sys.exc_info())
        status = 1
    # what an interpreter does on the way out: join threads, run atexit, flush the streams
    with contextlib.suppress(Exception):
        threading._shutdown()  # type: ignore[attr-defined]
    import atexit as exits

    exits._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception as error:
            with contextlib.suppress(Exception):
                print(f"Exception ignored in: {stream!r}\n{type(error).__name__}: {error}", file=sys.__stderr__)
            status = 120
    if status < 0:  # died of a signal, as an interpreter re-raises an uncaught Ctrl-C
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    os._exit(status)


def _start(conn: socket.socket, inherited: list[int]) -> tuple[int, int]:
    """Read a request from `conn`, fork its command, tell the client its pid; the pid and a descriptor that becomes
    readable when the command ends."""
    request, fds = _receive(conn)
    pid = os.fork()
    if pid == 0:
        _command(request, fds, inherited)
    for fd in fds:
        os.close(fd)
    ended = os.pidfd_open(pid)
    with contextlib.suppress(OSError):  # a client gone (it timed out) does not stop the server
        _send(conn, {"pid": pid})
    return pid, ended


def serve(path: str) -> None:
    """Listen on the unix socket `path` until stdin closes (the test process went away)."""
    import gc

    here = str(Path(__file__).resolve().parent)
    sys.path[:] = [str(script().parent), *(p for p in sys.path if p not in ("", here))]  # as the console script's
    _preload()
    # Nothing the preload made is garbage, so freezing it changes no command's outcome; it keeps a collection in a
    # command (a full one costs ~90 ms here) from walking, and so copying, every page of the preloaded heap.
    gc.freeze()
    assert threading.active_count() == 1, "the server must not run threads: only the forking one survives a fork"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    os.write(1, b"ready\n")
    running: dict[int, tuple[int, socket.socket]] = {}  # pidfd of a running command -> its pid, its client
    while True:
        readable, _, _ = select.select([listener.fileno(), 0, *running], [], [])
        if 0 in readable:
            return
        for ended in [fd for fd in readable if fd in running]:
            pid, conn = running.pop(ended)
            _pid, status = os.waitpid(pid, 0)
            os.close(ended)
            with contextlib.suppress(OSError):
                _send(conn, {"returncode": os.waitstatus_to_exitcode(status)})
            conn.close()
        if listener.fileno() in readable:
            conn, _ = listener.accept()
            inherited = [listener.fileno(), conn.fileno(), *running, *(c.fileno() for _p, c in running.values())]
            try:
                pid, ended = _start(conn, inherited)
            except Exception:
                conn.close()
                continue
            running[ended] = (pid, conn)


# ----------------------------------------------------------------------------------------------- the client


class _Server:
    """The server process of this pytest process, started on first use."""

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="planstate-fork-")
        self.path = os.path.join(self.folder, "socket")
        self.startup = _startup(dict(os.environ))
        here = str(Path(__file__).resolve().parent)
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                f"import sys; sys.path.insert(0, {here!r}); import forkserver; forkserver.serve({self.path!r})",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=self.folder,
        )
        assert self.process.stdout is not None
        if self.process.stdout.readline() != b"ready\n":
            raise RuntimeError("the planstate fork server did not start")
        atexit.register(self.stop)

    def stop(self) -> None:
        """End the server and remove its socket."""
        with contextlib.suppress(Exception):
            assert self.process.stdin is not None
            self.process.stdin.close()
            self.process.wait(timeout=10)
        with contextlib.suppress(OSError):
            os.unlink(self.path)
            os.rmdir(self.folder)

    def run(
        self, args: list[str], cwd: str, env: dict[str, str], data: bytes | None, timeout: float | None
    ) -> tuple[int, bytes, bytes]:
        """Run one command; its exit code, stdout and stderr (raising TimeoutExpired after `timeout` seconds)."""
        with contextlib.ExitStack() as stack:
            stdin: IO[bytes]
            if data is None:
                stdin = stack.enter_context(open(os.devnull, "rb"))
            else:
                stdin = stack.enter_context(tempfile.TemporaryFile())
                stdin.write(data)
                stdin.seek(0)
            out = stack.enter_context(tempfile.TemporaryFile())
            err = stack.enter_context(tempfile.TemporaryFile())
            conn = stack.enter_context(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
            conn.settimeout(timeout)
            conn.connect(self.path)
            body = json.dumps({"args": args, "cwd": cwd, "env": env}).encode()
            message = HEADER.pack(len(body)) + body
            sent = socket.send_fds(conn, [message], [stdin.fileno(), out.fileno(), err.fileno()])
            if sent < len(message):  # a long request (an argument of 200 kB) does not fit the socket at once
                # Only then: once the whole request is in, a quick command can end and the server close the
                # connection before this process runs again, and even an empty send would meet a broken pipe.
                conn.sendall(message[sent:])
            reader = conn.makefile("rb")
            pid = 0
            try:
                pid = _read(reader)["pid"]
                code = _read(reader)["returncode"]
            except TimeoutError:
                if pid:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                out.seek(0)
                err.seek(0)
                raise subprocess.TimeoutExpired(args, timeout or 0, out.read(), err.read()) from None
            out.seek(0)
            err.seek(0)
            return code, out.read(), err.read()


def _read(reader: Any) -> dict[str, Any]:
    """Read one length-prefixed JSON message."""
    head = reader.read(HEADER.size)
    if len(head) < HEADER.size:
        raise RuntimeError("the planstate fork server closed the connection")
    (size,) = HEADER.unpack(head)
    message: dict[str, Any] = json.loads(reader.read(size))
    return message


def _startup(env: dict[str, str]) -> dict[str, str]:
    """The settings of `env` that change how an interpreter starts."""
    return {k: v for k, v in env.items() if k.startswith(STARTUP_PREFIXES)}


_server: _Server | None = None
_owner = 0


def _the_server() -> _Server | None:
    """This process's server, started on first use (None when it cannot start)."""
    global _server, _owner
    if _owner != os.getpid():
        _owner, _server = os.getpid(), None
        with contextlib.suppress(Exception):
            _server = _Server()
    return _server


def _text(data: bytes) -> str:
    """Decode output as `subprocess.run(text=True)` does: the locale's encoding, universal newlines."""
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


def run(
    args: list[str],
    *,
    cwd: Path | str,
    env: dict[str, str],
    input: str | None = None,
    timeout: float | None = None,
    real: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run `planstate *args` as `subprocess.run([script, *args], capture_output=True, text=True)` would (with
    `real`, it is that: a test about the process itself)."""
    command = [str(script()), *args]
    server = None if real or os.environ.get(REAL_CLI) == "1" or not script().is_file() else _the_server()
    if server is None or _startup(env) != server.startup or not os.path.isdir(cwd):
        return subprocess.run(command, cwd=cwd, env=env, input=input, capture_output=True, text=True, timeout=timeout)
    data = None if input is None else input.encode(locale.getpreferredencoding(False))
    try:
        code, out, err = server.run(list(args), str(cwd), env, data, timeout)
    except subprocess.TimeoutExpired as expired:
        raise subprocess.TimeoutExpired(command, timeout or 0, expired.output, expired.stderr) from None
    return subprocess.CompletedProcess(command, code, _text(out), _text(err))
