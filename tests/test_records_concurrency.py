"""Many processes recording at once: every record lands in its own file with its own id, and nothing is lost."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Run, json_data

from planstate.model.kinds import KINDS

pytestmark = pytest.mark.real_cli  # processes contending for the lock, each started as a user starts it

PROCESSES = 8
EACH = 8  # every add waits for the seven other writers' adds: more adds nothing but time

# Each process waits for the `go` file, then runs `planstate decision add` EACH times through the
# CLI's own entry point (argument parsing, a fresh Workspace and its lock every time), in a loop
# inside the process: real processes contend for the lock without paying Python's start-up 200 times.
WRITER = """
import os, sys, time
from planstate.cli.main import main
go, writer, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
while not os.path.exists(go):
    time.sleep(0.002)
for i in range(count):
    code = main([
        "--lock-timeout", "120", "decision", "add", "--title", "Same title for everyone",
        "--context", f"writer {writer}", "--decision", f"decision {writer}-{i}", "--reason", "load test",
    ])
    if code != 0:
        sys.exit(f"writer {writer} decision {i}: exit {code}")
"""


def test_eight_processes_adding_decisions_at_once_lose_nothing(run: Run, project: Path) -> None:
    go = project / "go"
    env = {**os.environ, "PLANSTATE_ACTOR": "tester"}
    env.pop("PLANSTATE_NOW", None)
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(go), str(n), str(EACH)],
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(PROCESSES)
    ]
    go.touch()
    outputs = [w.communicate(timeout=300) for w in writers]
    for writer, (stdout, stderr) in zip(writers, outputs, strict=True):
        assert writer.returncode == 0, stderr
        assert stderr == ""
        assert stdout.count("Recorded decision dec-") == EACH

    files = sorted((project / ".planning" / "decisions").glob("*.md"))
    assert len(files) == PROCESSES * EACH
    ids = [f.name[:16] for f in files]
    assert len(set(ids)) == PROCESSES * EACH
    assert all(f.name == f"{i}-same-title-for-everyone.md" for f, i in zip(files, ids, strict=True))
    made = {(f"writer {n}", f"decision {n}-{i}") for n in range(PROCESSES) for i in range(EACH)}

    listed = json_data(run("decision", "list", "--limit", "0", "--json", cwd=project))["decisions"]
    assert sorted(d["id"] for d in listed) == ids
    assert {(d["context"], d["decision"]) for d in listed} == made
    for record in listed:
        assert KINDS["decision"].check_data({k: v for k, v in record.items() if k != "path"}) == []

    result = run("validate", cwd=project)
    assert result.returncode == 0, result.stdout
    assert result.stdout == f"{PROCESSES * EACH + 2} files valid\n"
