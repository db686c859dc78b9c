"""Every git call planstate makes, in one place: which files changed in the working tree since a moment.

Git is optional: outside a repository, or without git installed, these functions answer None
and callers say the check could not be made.
"""

from __future__ import annotations

import subprocess
from datetime import datetime
from pathlib import Path

TIMEOUT = 10.0


def _git(cwd: Path, *args: str) -> str | None:
    """Run `git args` in `cwd`; its stdout, or None when git is missing, fails or takes too long."""
    try:
        done = subprocess.run(
            ["git", "-c", "core.quotepath=off", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def toplevel(path: Path) -> Path | None:
    """The root of the git work tree holding `path`, or None outside a repository."""
    found = _git(path, "rev-parse", "--show-toplevel")
    return Path(found.strip()) if found and found.strip() else None


def merge_text(
    ours: bytes, base: bytes, theirs: bytes, labels: tuple[str, str, str], marker_size: int = 7
) -> tuple[bytes, int] | None:
    """Git's own three-way text merge (`git merge-file`): the result and its number of conflicts.

    `labels` name ours, base and theirs in the conflict markers. None when git is missing or fails.
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="planstate-merge-") as folder:
        names = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(folder) / name
            path.write_bytes(data)
            names.append(str(path))
        try:
            done = subprocess.run(
                ["git", "merge-file", "-p", f"--marker-size={marker_size}"]
                + [arg for label in labels for arg in ("-L", label)]
                + names,
                capture_output=True,
                timeout=TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
    if done.returncode < 0 or done.returncode > 127:
        return None
    return done.stdout, done.returncode


def changed_since(project: Path, since: datetime | None) -> list[str] | None:
    """Files changed since `since`: in commits made after it, plus uncommitted changes; paths relative to `project`.

    With `since` None, only the uncommitted changes. None when `project` is not in a git work tree or git cannot
    answer. Names are read NUL-separated (`-z`), so quotes, spaces and ` -> ` in them come through as they are.
    """
    top = toplevel(project)
    if top is None:
        return None
    names: set[str] = set()
    if since is not None:
        committed = _git(
            project,
            "log",
            "-z",
            f"--since={since.isoformat()}",
            "--name-only",
            "--pretty=format:",
            "--relative",
            "--",
            ".",
        )
        if committed is None:
            return None
        # commits are separated by an empty name; git may start a commit's names with the newline of its header
        names.update(name.lstrip("\n") for name in committed.split("\0") if name.strip("\n"))
    status = _git(project, "status", "--porcelain", "-z", "--untracked-files=all", "--", ".")
    if status is None:
        return None
    prefix = _relative_prefix(top, project)
    entries = iter(status.split("\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        path = entry[3:]
        if "R" in entry[:2] or "C" in entry[:2]:
            next(entries, None)  # a rename or copy: its source follows; the new name is what exists now
        if prefix and path.startswith(prefix):
            path = path[len(prefix) :]
        names.add(path)
    return sorted(names)


def _relative_prefix(top: Path, project: Path) -> str:
    """`git status` prints paths from the repository root; this is `project`'s part of them."""
    try:
        rel = project.resolve().relative_to(top.resolve())
    except ValueError:
        return ""
    return "" if str(rel) == "." else f"{rel.as_posix()}/"
