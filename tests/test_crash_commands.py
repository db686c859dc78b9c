"""Writers of every kind killed with SIGKILL at random moments: record creates, record moves (status changes, and
archiving into `archive/`), phase transitions and renders leave files that validate, and `check --fix` always
brings the workspace back to clean.

A real child process runs the operations in a loop through the API (the CLI runs the same code); the test kills
it at a random moment KILLS times (a fixed count, seeded), checking the workspace after each kill.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import Run

KILLS = 16

WRITER = """
import sys
import jinja2, planstate.store.transaction, planstate.render.regions, planstate.render.sources
from planstate.workspace import Workspace
ws = Workspace(sys.argv[1], lock_timeout=60)
print("imported", flush=True)
sys.stdin.readline()
i = 0
while True:
    ws.decision.add(context=f"c{i}", decision=f"d{i}", reason="r")
    blocker = ws.blocker.add(description=f"b{i}")
    ws.blocker.resolve(blocker.id, resolution="done")
    ws.records.archive(before="2099-01-01")  # moves the resolved blocker into blockers/archive/
    status = ws.status()  # a writer killed between fail and retry left the phase failed
    if status["current_phase_status"] != "failed":
        ws.phase.fail(status["current_phase"], reason=f"red {i}")
    ws.phase.retry(status["current_phase"])
    ws.render()
    print("wrote", flush=True)
    i += 1
"""


def test_killed_writers_of_every_kind_leave_a_workspace_check_fix_makes_clean(run: Run, project: Path) -> None:
    planning = project / ".planning"
    rng = random.Random(20261123)
    for _ in range(KILLS):
        child = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(planning)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert child.stdin is not None and child.stdout is not None
        try:
            assert child.stdout.readline() == "imported\n"
            child.stdin.write("go\n")
            child.stdin.flush()
            if rng.random() < 0.5:  # then the kill lands in a later round
                assert child.stdout.readline() == "wrote\n", child.stderr.read() if child.stderr else ""
            time.sleep(rng.uniform(0, 0.4))
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
            for stream in (child.stdin, child.stdout, child.stderr):
                if stream is not None:
                    stream.close()
        validate = run("validate", cwd=project, timeout=60)
        assert validate.returncode == 0, validate.stdout + validate.stderr  # every file whole and valid
        fixed = run("check", "--fix", cwd=project, timeout=60)
        assert fixed.returncode == 0, fixed.stdout + fixed.stderr
        clean = run("check", cwd=project, timeout=60)
        assert clean.returncode == 0 and clean.stdout.endswith(" 0 errors, 0 warnings\n"), clean.stdout
