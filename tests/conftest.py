"""Shared test fixtures: paths to the corpus, the real CLI entry point, a pinned clock."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import forkserver
import pytest
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from watching import WatchProcess

# No property test's verdict depends on how busy the machine is: no per-example deadline, no "too slow" check.
settings.register_profile("planstate", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("planstate")
# Examples per property of the text layer's hunts (test_document, test_plain, test_yamltext): enough for every
# run of the suite to try new shapes; PLANSTATE_HYPOTHESIS_EXAMPLES=2000 makes a longer hunt.
EXAMPLES = int(os.environ.get("PLANSTATE_HYPOTHESIS_EXAMPLES", "100"))

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "corpus"  # real files from five public repos, bytes unmodified (see SOURCES.txt)


def planstate_command() -> list[str]:
    """The installed `planstate` console script next to this Python, else `python -m planstate`."""
    script = Path(sys.executable).parent / "planstate"
    if script.is_file():
        return [str(script)]
    found = shutil.which("planstate")
    return [found] if found else [sys.executable, "-m", "planstate"]


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers of this suite."""
    config.addinivalue_line(
        "markers",
        "real_cli: `run` starts the installed console script in a fresh interpreter (a test about the process: "
        "start-up, imports, signals, locks between processes, crashes), not a fork of the fork server",
    )


@pytest.fixture
def run(tmp_path: Path, request: pytest.FixtureRequest) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the real `planstate` command in `tmp_path` (or `cwd=`), returning the completed process.

    The command runs through the fork server (tests/forkserver.py): a real process running the console script's
    entry point, started by a fork instead of a fresh interpreter. Tests marked `real_cli`, and every test when
    PLANSTATE_TEST_REAL_CLI=1 is set, run the console script in a fresh interpreter.
    """
    real = request.node.get_closest_marker("real_cli") is not None

    def runner(
        *args: str,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        input: str | None = None,
        timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, "PLANSTATE_ACTOR": "tester", "NO_COLOR": "1", **(env or {})}
        full_env.pop("PLANSTATE_DIR", None) if env is None or "PLANSTATE_DIR" not in env else None
        return forkserver.run(list(args), cwd=cwd or tmp_path, env=full_env, input=input, timeout=timeout, real=real)

    return runner


# ---------------------------------------------------------------------------- workspace fixtures

PINNED_NOW = "2026-01-01T00:00:00Z"  # when the `project` fixture's workspace was made
# What "now" is for every test, unless a test sets PLANSTATE_NOW itself: the clock seam (core/clock.py), so no
# verdict depends on today's date. It lies after every date the builders write (tests/builders.T0 and what follows
# it); a test that needs a date newer than anything on disk takes it from `newest_date()`.
NOW = "2026-11-20T12:00:00Z"


@pytest.fixture(autouse=True)
def _pinned_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs at the fixed instant NOW, in process and in every command it starts."""
    monkeypatch.setenv("PLANSTATE_NOW", NOW)


@pytest.fixture
def real_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's clock instead of NOW, for the few tests of a process that must see time pass (a watcher that
    finds a session going stale while it runs); each such line says `real clock` (tests/test_clock_seam.py)."""
    monkeypatch.delenv("PLANSTATE_NOW")


def newest_date(days: int = 1) -> str:
    """A date (YYYY-MM-DD) `days` after the clock's today: newer than any date a command or a builder wrote."""
    from datetime import timedelta

    from planstate.core import clock

    return (clock.now() + timedelta(days=days)).date().isoformat()


def _init_demo(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`Workspace.init` the demo project (three phases) in `folder` with the clock pinned."""
    from planstate.workspace import Workspace

    with monkeypatch.context() as patch:
        patch.setenv("PLANSTATE_NOW", PINNED_NOW)
        Workspace.init(folder, title="Demo", phases=["Design", "Build", "Ship"], actor="tester")


@pytest.fixture(scope="session")
def _project_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo project made once per test process; `project` copies it (the clock is pinned, so a copy is
    byte for byte what a fresh `init` writes)."""
    folder = tmp_path_factory.mktemp("template") / "proj"
    folder.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        for name in [n for n in os.environ if n.startswith("PLANSTATE_")]:
            patch.delenv(name)
        _init_demo(folder, patch)
    return folder


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _project_template: Path) -> Path:
    """A project folder in tmp_path with a fresh `.planning/` (three phases, clock pinned at creation)."""
    folder = tmp_path / "proj"
    if any(n.startswith("PLANSTATE_") and n != "PLANSTATE_NOW" for n in os.environ):  # a setting init reads
        folder.mkdir()
        _init_demo(folder, monkeypatch)
    else:  # new files (times of now), as init writes them
        shutil.copytree(_project_template, folder, copy_function=shutil.copy)
    monkeypatch.delenv("PLANSTATE_DIR", raising=False)
    monkeypatch.delenv("PLANSTATE_LOCK_TIMEOUT", raising=False)
    return folder


def state_file(project: Path) -> Path:
    """The STATE.md of a project folder."""
    return project / ".planning" / "STATE.md"


Completed = subprocess.CompletedProcess[str]
Run = Callable[..., Completed]
RunAll = Callable[..., list[Completed]]


# ---------------------------------------------------------------------------- what a command did


def ok(result: Completed) -> Completed:
    """Assert a command succeeded without a word on stderr; return it."""
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert result.stderr == ""
    return result


def exits(result: Completed, code: int = 0) -> Completed:
    """Assert a command's exit code (showing its output when it differs); return it."""
    assert result.returncode == code, f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    return result


def refused(result: Completed, *parts: str) -> str:
    """Assert a command exited 2 with nothing on stdout and one line on stderr, `planstate: ` and every part in it;
    return the line."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == "", result.stdout
    assert result.stderr.count("\n") == 1 and result.stderr.endswith("\n"), result.stderr
    line = result.stderr.removesuffix("\n")
    assert line.startswith("planstate: ") and "Traceback" not in line, line
    for part in parts:
        assert part in line, line
    return line


def front(folder: Path) -> dict[str, Any]:
    """The front matter of the root STATE.md of a project folder."""
    from planstate.text.document import Document

    value = Document.from_bytes(state_file(folder).read_bytes()).data
    assert isinstance(value, dict)
    return value


@pytest.fixture
def run_all(run: Run) -> RunAll:
    """Run several `planstate` commands (each a tuple of arguments) side by side; results in order. They wait
    for the workspace lock as long as it takes (PLANSTATE_LOCK_TIMEOUT=600 unless `env` sets it): on a busy
    machine a queue of writers is slow, never refused."""
    from concurrent.futures import ThreadPoolExecutor

    def runner(commands: list[tuple[str, ...]], **options: Any) -> list[Completed]:
        options["env"] = {"PLANSTATE_LOCK_TIMEOUT": "600", **(options.get("env") or {})}
        with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
            return list(pool.map(lambda args: run(*args, **options), commands))

    return runner


def outside_regions(path: Path) -> str:
    """A STATE.md's text with each generated region (its marker lines included) left out: what a record command,
    which renders only the regions, must leave exactly as it was."""
    from planstate.text.markers import parse

    layout = parse(path.read_text(encoding="utf-8"))
    lines = list(layout.lines)
    for region in reversed(layout.regions):
        del lines[region.begin : region.end + 1]
    return "".join(lines)


# ---------------------------------------------------------------------------- the --json envelope (docs/json.md)


def json_envelope(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """A command's `--json` answer: one JSON document on stdout, the envelope, whose `ok` and `exit` agree with
    the process's exit code."""
    import json

    answer: dict[str, Any] = json.loads(result.stdout)
    assert answer["schema"] == "planstate/1", answer
    assert answer["exit"] == result.returncode and answer["ok"] == (result.returncode == 0), answer
    assert isinstance(answer["warnings"], list), answer
    return answer


def json_data(result: subprocess.CompletedProcess[str]) -> Any:
    """The `data` of a command's `--json` answer, after checking its envelope."""
    answer = json_envelope(result)
    assert "error" not in answer, answer["error"]
    return answer["data"]


def json_error(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The `error` object of a command's `--json` answer that failed, after checking its envelope."""
    answer = json_envelope(result)
    assert "data" not in answer and not answer["ok"], answer
    error: dict[str, Any] = answer["error"]
    return error


@pytest.fixture
def broken_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A bug planted in `Workspace.status` (it raises RuntimeError "status went wrong"), the one seam a crash test
    cannot make real; crash logs go to the folder returned."""
    import tempfile

    from planstate.workspace import Workspace

    def broken(self: Workspace) -> None:
        raise RuntimeError("status went wrong")

    logs = tmp_path / "logs"
    logs.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(logs))
    monkeypatch.setattr(Workspace, "status", broken)
    return logs


@pytest.fixture
def watch(project: Path) -> Iterator[Callable[..., WatchProcess]]:
    """Start `planstate watch` in the project (JSON lines unless `--format` is given); stopped at teardown."""
    from watching import WatchProcess  # it imports this module

    started: list[WatchProcess] = []

    def start(*args: str, env: dict[str, str] | None = None) -> WatchProcess:
        process = WatchProcess(project, *args, env=env)
        started.append(process)
        process.wait_event("ready")
        return process

    yield start
    for process in started:
        if process.proc.poll() is None:
            process.proc.kill()
            process.proc.wait()
