"""Writers lose nothing when `.planning/.local/lock`, or the whole `.local/`, is deleted while they run.

Real processes: four writers each append 20 items through the console script while a fifth process
keeps deleting the lock file (or `.local/`). Every append that exited 0 must be in STATE.md; an
append may instead be refused with exit 3 (nothing written), never lost.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import planstate_command

from planstate.workspace import Workspace

WRITERS = 4
APPENDS = 10  # the remover strikes many times during 40 writes; more writes add only time

WRITER = """
import subprocess, sys
command, writer, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(count):
    done = subprocess.run(
        [command, "append", "resume_context.files_modified", f"item-{writer}-{i}"], capture_output=True, text=True
    )
    print(f"item-{writer}-{i} {done.returncode} {done.stderr.strip()}", flush=True)
"""

REMOVER = """
import os, shutil, sys, time
target, pause = sys.argv[1], float(sys.argv[2])
while True:
    try:
        if os.path.isdir(target):
            shutil.rmtree(target)
        else:
            os.unlink(target)
    except OSError:
        pass
    time.sleep(pause)
"""


@pytest.mark.parametrize(("removed", "pause"), [("lock", 0.02), ("folder", 0.05)])
def test_no_append_is_lost_while_the_lock_is_deleted(project: Path, removed: str, pause: float) -> None:
    command = planstate_command()
    assert len(command) == 1, "the console script is needed for this test"
    local = project / ".planning" / ".local"
    target = local / "lock" if removed == "lock" else local
    env = {**os.environ, "PLANSTATE_ACTOR": "tester", "PLANSTATE_LOCK_TIMEOUT": "120"}
    remover = subprocess.Popen([sys.executable, "-c", REMOVER, str(target), str(pause)])
    try:
        writers = [
            subprocess.Popen(
                [sys.executable, "-c", WRITER, command[0], str(n), str(APPENDS)],
                cwd=project,
                env=env,
                stdout=subprocess.PIPE,
                text=True,
            )
            for n in range(WRITERS)
        ]
        reports = [writer.communicate(timeout=600)[0].splitlines() for writer in writers]
    finally:
        remover.kill()
        remover.wait()
    outcomes = [line.split(" ", 2) for report in reports for line in report]
    assert len(outcomes) == WRITERS * APPENDS
    assert {code for _item, code, _error in outcomes} <= {"0", "3"}, [o for o in outcomes if o[1] not in "03"]
    landed = set(Workspace.find(project).get("resume_context.files_modified"))
    succeeded = {item for item, code, _error in outcomes if code == "0"}
    assert succeeded <= landed  # every append that said it worked is there
    assert landed <= {item for item, _code, _error in outcomes}
