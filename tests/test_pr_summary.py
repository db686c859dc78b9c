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


def summarise(
    repo: Path, tmp_path: Path, base: str, head: str, *names: str
) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    """Run the action's diff step as the action does (`names`: its `--base-name` and `--head-name`); the process, the
    job summary and the step's outputs."""
    step_summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(step_summary), "GITHUB_OUTPUT": str(outputs)}
    env.pop("PLANSTATE_DIR", None)
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--base", base, "--head", head, *names, "--body", str(tmp_path / "body.md")],
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


def test_the_heading_names_the_branches_and_short_ids(tmp_path: Path) -> None:
    """The action passes the two commit ids and the branches' names: the heading names the branches, with short ids,
    and the merge base it compares from; never a 40-digit id."""
    repo = new_repo(tmp_path / "repo")
    Workspace.init(repo, title="Demo", phases=["Design", "Build"], actor="tester")
    fork = commit_all(repo, "plan")
    git(repo, "switch", "--quiet", "-c", "feature/parser")
    Workspace.find(repo, actor="tester").next("Ship the parser")
    head = commit_all(repo, "next action")
    git(repo, "switch", "--quiet", "main")
    (repo / "README.md").write_text("main moved on\n")
    base = commit_all(repo, "readme on main")
    short = {commit: git(repo, "rev-parse", "--short", commit).stdout.strip() for commit in (fork, head, base)}

    names = ("--base-name", "main", "--head-name", "feature/parser")
    done, _, _ = summarise(repo, tmp_path, base, head, *names)
    assert done.returncode == 0, done.stderr
    first, rest = done.stdout.split("\n", 1)
    assert first == (
        f"## Changes in `.planning/` on `feature/parser` (`{short[head]}`) since it left `main` (`{short[base]}`) "
        f"at `{short[fork]}`"
    )
    assert "Ship the parser" in rest and "## Changes" not in rest
    # without names (outside a pull request, or another CI): commit ids by their short form, names as given
    done, _, _ = summarise(repo, tmp_path, base, head, "--base-name", "", "--head-name", "")
    assert done.stdout.splitlines()[0] == (
        f"## Changes in `.planning/` on `{short[head]}` since it left `{short[base]}` at `{short[fork]}`"
    )
    done, _, _ = summarise(repo, tmp_path, "main", "feature/parser")
    assert done.stdout.splitlines()[0] == (
        f"## Changes in `.planning/` on `feature/parser` (`{short[head]}`) since it left `main` (`{short[base]}`) "
        f"at `{short[fork]}`"
    )


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
    # the heading's names: the pull request's branches, unless the workflow says otherwise
    assert (action["inputs"]["base-name"]["default"], action["inputs"]["head-name"]["default"]) == (
        "${{ github.base_ref }}",
        "${{ github.head_ref }}",
    )
    assert summary["env"]["BASE_NAME"] == "${{ inputs.base-name }}" and '--base-name "$BASE_NAME"' in summary["run"]
    assert summary["env"]["HEAD_NAME"] == "${{ inputs.head-name }}" and '--head-name "$HEAD_NAME"' in summary["run"]
    comment = steps[-1]["run"]
    assert MARKER in comment and "PATCH" in comment  # one comment, updated in place
    assert comment.count('|| echo "::warning::') == 2  # a refused write warns, it does not fail the job
    assert '"$CHANGED" = "true"' in comment  # no new comment when .planning/ did not change
