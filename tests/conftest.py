"""Shared test fixtures: paths to the corpus, the real CLI entry point, a pinned clock."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus"
if not CORPUS.is_dir():
    CORPUS = REPO / "tests" / "corpus"


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

    def runner(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
               input: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, "PLANSTATE_ACTOR": "tester", "NO_COLOR": "1", **(env or {})}
        full_env.pop("PLANSTATE_DIR", None) if env is None or "PLANSTATE_DIR" not in env else None
        return subprocess.run(
            [*planstate_command(), *args], cwd=cwd or tmp_path, env=full_env, input=input,
            capture_output=True, text=True, timeout=timeout,
        )

    return runner
