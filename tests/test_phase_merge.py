"""A phase's transition merges as one unit, and validate refuses a phase whose fields contradict its status.

One branch completes phase 2 while another fails it: merged field by field, the phase would be completed
with a failure and a passed checkpoint at once, and nothing would say so. Instead the merge stops at one
conflict naming the phase by its number, and such a phase, made by hand, does not validate.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Completed, exits, json_data, state_file

from planstate.vcs import merge
from tests.gitutil import commit_all, git, install_driver, new_repo, unmerged

Run = Callable[..., Completed]
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def keep_ours(path: Path) -> None:
    """Resolve every conflict block of a file by keeping our side, as a person does in an editor."""
    out, side = [], None
    for line in path.read_text().splitlines(keepends=True):
        if line.startswith("<<<<<<< "):
            side = "ours"
        elif line.startswith("=======") and side == "ours":
            side = "theirs"
        elif line.startswith(">>>>>>> ") and side == "theirs":
            side = None
        elif side != "theirs":
            out.append(line)
    path.write_text("".join(out))


@needs_git
def test_completing_and_failing_the_same_phase_on_two_branches_is_one_conflict(run: Run, tmp_path: Path) -> None:
    repo, conflicts = _complete_and_fail_phase_two(run, tmp_path, "--evidence", "tests=5/5")
    # one conflict for the phase, not one per field; and phase 3, which x started as it completed phase 2, with it
    assert len(conflicts) == 2
    assert conflicts[1].startswith(
        "planstate: merge: .planning/STATE.md: conflict: phases.3 changed differently on each side: "
        'status "pending" (ours) vs "active" (theirs); started (removed) (ours) vs "'
    )
    assert conflicts[0].startswith(
        "planstate: merge: .planning/STATE.md: conflict: phases.2 changed differently on each side: "
        'status "failed" (ours) vs "completed" (theirs); checkpoint "pending" (ours) vs "passed" (theirs); '
        'failure "flaky" (ours) vs (removed) (theirs); failed_at "'
    )
    assert 'evidence (removed) (ours) vs {"tests": "5/5"} (theirs)' in conflicts[0]
    text = state_file(repo).read_text()
    labels = [block.splitlines()[0] for block in text.split("<<<<<<< ")[1:]]
    assert len(labels) == 2 and labels[0].endswith(": phases.2") and labels[1].endswith(": phases.3")

    keep_ours(state_file(repo))  # y's failed phase, whole: never a mix
    exits(run("validate", cwd=repo))
    phase = json_data(exits(run("get", "phases.2", "--json", cwd=repo)))
    assert phase["status"] == "failed" and phase["failure"] == "flaky"
    assert phase.get("completed") is None and phase["checkpoint"] == "pending" and not phase.get("evidence")
    exits(run("check", "--fix", cwd=repo))  # the regions, rendered again from the kept side
    assert exits(run("check", cwd=repo)).stdout.endswith(" 0 errors, 0 warnings\n")


@needs_git
@pytest.mark.parametrize("keep", ["ours", "theirs"])
def test_keeping_one_side_of_a_phase_conflict_keeps_that_sides_whole_progression(
    run: Run, tmp_path: Path, keep: str
) -> None:
    repo, conflicts = _complete_and_fail_phase_two(run, tmp_path, "--next", "Start OAuth")
    assert [line.split(": conflict: ")[1].split(" ")[0] for line in conflicts] == ["phases.2", "phases.3"]
    if keep == "ours":
        keep_ours(state_file(repo))
    else:
        git(repo, "checkout", "--theirs", ".planning/STATE.md")
    exits(run("check", "--fix", cwd=repo))
    phases = json_data(exits(run("get", "phases", "--json", cwd=repo)))
    want = {"ours": ["completed", "failed", "pending"], "theirs": ["completed", "completed", "active"]}[keep]
    assert [p["status"] for p in phases] == want
    exits(run("validate", cwd=repo))


def test_one_side_moving_a_phase_and_the_other_adding_evidence_merge_field_by_field() -> None:
    base: dict[str, Any] = {"phases": [{"name": "A", "status": "active", "checkpoint": "pending"}]}
    ours = {"phases": [{"name": "A", "status": "completed", "checkpoint": "passed", "completed": "2026-01-02"}]}
    theirs = {"phases": [{"name": "A", "status": "active", "checkpoint": "pending", "evidence": {"review": "ok"}}]}
    result = merge.merge("state", base, ours, theirs)
    assert result.conflicts == []
    assert result.data["phases"][0]["status"] == "completed" and result.data["phases"][0]["evidence"] == {
        "review": "ok"
    }


def test_both_sides_starting_a_phase_keep_the_earlier_start() -> None:
    base: dict[str, Any] = {"phases": [{"name": "A", "status": "pending", "checkpoint": "pending"}]}
    ours = {"phases": [{"name": "A", "status": "active", "checkpoint": "pending", "started": "2026-01-02T10:00:00Z"}]}
    theirs = {"phases": [{"name": "A", "status": "active", "checkpoint": "pending", "started": "2026-01-02T09:00:00Z"}]}
    result = merge.merge("state", base, ours, theirs)
    assert result.conflicts == [] and result.data["phases"][0]["started"] == "2026-01-02T09:00:00Z"


@pytest.mark.parametrize(
    ("status", "field", "value", "message"),
    [
        ("completed", "failure", "flaky", "phases.1.failure: is set, but the phase is completed"),
        ("completed", "checkpoint", "failed", "phases.1.checkpoint: is failed, but the phase is completed"),
        ("failed", "completed", "2026-01-01T00:00:00Z", "phases.1.completed: is set, but the phase is failed"),
        ("pending", "failed_at", "2026-01-01T00:00:00Z", "phases.1.failed_at: is set, but the phase is pending"),
        ("skipped", "checkpoint", "passed", "phases.1.checkpoint: is passed, but the phase is skipped"),
    ],
)
def test_validate_refuses_a_phase_that_contradicts_its_status(
    run: Run, tmp_path: Path, status: str, field: str, value: str, message: str
) -> None:
    exits(run("init", "--title", "Auth", "--phase", "Schema", "--phase", "JWT"))
    state = state_file(tmp_path)
    text = state.read_text()
    first = text.index("  - name: Schema\n")
    block_end = text.index("  - name: JWT\n")
    block = [line for line in text[first:block_end].splitlines(keepends=True) if not line.startswith("    status:")]
    block = [line for line in block if not line.startswith(f"    {field}:")]
    block.insert(1, f"    status: {status}\n")
    block.insert(2, f"    {field}: {value}\n")
    state.write_text(text[:first] + "".join(block) + text[block_end:])
    result = run("validate")
    assert result.returncode == 1, result.stdout + result.stderr  # validate's exit for a file with problems
    assert f".planning/STATE.md:{_line_of(state, f'    {field}: {value}')}:5: {message}" in result.stdout


def _line_of(path: Path, text: str) -> int:
    """The line number of the first line of a file that is `text`."""
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line == text)


def _complete_and_fail_phase_two(run: Run, tmp_path: Path, *completing: str) -> tuple[Path, list[str]]:
    """A repository where branch x completed phase 2 (and so started phase 3) and branch y failed it, merged on y:
    the repository and the driver's conflict lines."""
    repo = new_repo(tmp_path / "repo")
    exits(run("init", "--title", "Auth", "--phase", "Schema", "--phase", "JWT", "--phase", "OAuth", cwd=repo))
    install_driver(run, repo)
    exits(run("phase", "complete", "1", cwd=repo))
    commit_all(repo, "phase 2 started")
    git(repo, "checkout", "--quiet", "-b", "x")
    exits(run("phase", "complete", "2", *completing, cwd=repo))
    commit_all(repo, "x completes phase 2")
    git(repo, "checkout", "--quiet", "-b", "y", "main")
    exits(run("phase", "fail", "2", "--reason", "flaky", cwd=repo))
    commit_all(repo, "y fails phase 2")
    merged = git(repo, "merge", "--no-edit", "x", check=False)
    assert merged.returncode != 0 and unmerged(repo) == [".planning/STATE.md"]
    return repo, [line for line in merged.stderr.splitlines() if ": conflict: " in line]
