"""The pull-request summary of action.yml: its diff step (scripts/pr_summary.py) against a real repository with a
base branch, and the action's shape (history checked out, the step it runs, the fork-safe comment)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml
from gitutil import commit_all, git, new_repo

from planstate.workspace import Workspace

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "pr_summary.py"
MARKER = "<!-- planstate-pr-summary -->"


def summarise(repo: Path, tmp_path: Path, base: str, head: str) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    """Run the action's diff step as the action does; the process, the job summary and the step's outputs."""
    step_summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(step_summary), "GITHUB_OUTPUT": str(outputs)}
    env.pop("PLANSTATE_DIR", None)
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--base", base, "--head", head, "--body", str(tmp_path / "body.md")],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done, step_summary, outputs


def test_the_diff_step_against_a_base_branch(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    Workspace.init(repo, title="Demo", phases=["Design", "Build"], actor="tester")
    commit_all(repo, "plan")
    git(repo, "switch", "--quiet", "-c", "feature")
    Workspace.find(repo, actor="tester").next("Ship the parser")
    commit_all(repo, "next action")
    git(repo, "switch", "--quiet", "main")
    (repo / "README.md").write_text("main moved on\n")
    commit_all(repo, "readme on main")

    done, step_summary, outputs = summarise(repo, tmp_path, "main", "feature")
    assert done.returncode == 0, done.stderr
    assert "Changes in `.planning/`" in done.stdout and "Ship the parser" in done.stdout
    assert step_summary.read_text() == done.stdout
    assert outputs.read_text() == "changed=true\n"
    assert (tmp_path / "body.md").read_text() == f"{MARKER}\n{done.stdout}"

    git(repo, "switch", "--quiet", "-c", "docs-only", "main")
    (repo / "NOTES.md").write_text("no planning here\n")
    commit_all(repo, "notes")
    (tmp_path / "outputs.txt").unlink()
    done, _, outputs = summarise(repo, tmp_path, "main", "docs-only")
    assert done.returncode == 0, done.stderr
    assert outputs.read_text() == "changed=false\n"
    assert done.stdout == "No changes in `.planning/` in this pull request.\n"


def test_a_base_that_was_not_fetched_fails_the_step_in_one_line(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    commit_all(repo, "empty")
    done, _, outputs = summarise(repo, tmp_path, "no-such-branch", "HEAD")
    assert done.returncode == 2 and done.stderr.startswith("pr_summary: git diff no-such-branch...HEAD failed")
    assert not outputs.exists()


def test_the_action_checks_out_history_runs_the_step_and_never_fails_on_a_read_only_token() -> None:
    action = yaml.safe_load((REPO / "action.yml").read_text())
    steps = action["runs"]["steps"]
    assert action["runs"]["using"] == "composite"
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0
    summary = next(s for s in steps if s.get("id") == "summary")
    assert "scripts/pr_summary.py" in summary["run"]
    comment = steps[-1]["run"]
    assert MARKER in comment and "PATCH" in comment  # one comment, updated in place
    assert comment.count('|| echo "::warning::') == 2  # a refused write warns, it does not fail the job
    assert '"$CHANGED" = "true"' in comment  # no new comment when .planning/ did not change
