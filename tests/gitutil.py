"""Real git repositories for tests: run git, give a repository an identity, commit, branch and merge."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run git in `cwd`; unless `check` is False, fail the test with git's own words when it fails."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if check:
        assert done.returncode == 0, f"git {' '.join(args)}: {done.stdout}{done.stderr}"
    return done


def configure(repo: Path, name: str = "tester") -> None:
    """A committer identity and merge (not rebase) pulls, whatever the machine's git config says."""
    git(repo, "config", "user.name", name)
    git(repo, "config", "user.email", f"{name}@example.com")
    git(repo, "config", "pull.rebase", "false")
    git(repo, "config", "commit.gpgsign", "false")


def new_repo(path: Path) -> Path:
    """An empty repository with branch main, configured for tests."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "--quiet", "--initial-branch=main")
    configure(path)
    return path


def commit_all(repo: Path, message: str) -> str:
    """Commit everything in the work tree; the new commit's id."""
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def unmerged(repo: Path) -> list[str]:
    """Paths git reports as unmerged (conflicted) after a merge."""
    return sorted(git(repo, "diff", "--name-only", "--diff-filter=U").stdout.split())


def install_driver(run: Callable[..., Any], repo: Path) -> None:
    """Configure the merge driver and the textconv in `repo` the way a user does: `planstate git install`."""
    done = run("git", "install", cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
