"""Shared test fixtures: paths to the corpus, the real CLI entry point, a pinned clock."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "corpus"  # real files from five public repos, bytes unmodified (see SOURCES.txt)


def planstate_command() -> list[str]:
    """The installed `planstate` console script next to this Python, else `python -m planstate`."""
    script = Path(sys.executable).parent / "planstate"
    if script.is_file():
        return [str(script)]
    found = shutil.which("planstate")
    return [found] if found else [sys.executable, "-m", "planstate"]


@pytest.fixture
def run(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the real `planstate` command in `tmp_path` (or `cwd=`), returning the completed process."""

    def runner(
        *args: str,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        input: str | None = None,
        timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, "PLANSTATE_ACTOR": "tester", "NO_COLOR": "1", **(env or {})}
        full_env.pop("PLANSTATE_DIR", None) if env is None or "PLANSTATE_DIR" not in env else None
        return subprocess.run(
            [*planstate_command(), *args],
            cwd=cwd or tmp_path,
            env=full_env,
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return runner


# ---------------------------------------------------------------------------- workspace fixtures

PINNED_NOW = "2026-01-01T00:00:00Z"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder in tmp_path with a fresh `.planning/` (three phases, clock pinned at creation)."""
    from planstate.workspace import Workspace

    folder = tmp_path / "proj"
    folder.mkdir()
    with monkeypatch.context() as patch:
        patch.setenv("PLANSTATE_NOW", PINNED_NOW)
        Workspace.init(folder, title="Demo", phases=["Design", "Build", "Ship"], actor="tester")
    monkeypatch.delenv("PLANSTATE_DIR", raising=False)
    monkeypatch.delenv("PLANSTATE_LOCK_TIMEOUT", raising=False)
    return folder


def state_file(project: Path) -> Path:
    """The STATE.md of a project folder."""
    return project / ".planning" / "STATE.md"


Completed = subprocess.CompletedProcess[str]


@pytest.fixture
def run_all(run: Callable[..., Completed]) -> Callable[..., list[Completed]]:
    """Run several `planstate` commands (each a tuple of arguments) side by side; results in order."""
    from concurrent.futures import ThreadPoolExecutor

    def runner(commands: list[tuple[str, ...]], **options: Any) -> list[Completed]:
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
