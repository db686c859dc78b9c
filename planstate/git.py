"""Every git call planstate makes, in one place: which files changed since a moment; git config and attributes.

Git is optional: outside a repository, or without git installed, these functions answer None
and callers say the check could not be made. Only writes to git config raise (GitError).
"""

from __future__ import annotations

import subprocess
from datetime import datetime
from pathlib import Path

from planstate.errors import PlanstateError

TIMEOUT = 10.0


def _git(cwd: Path, *args: str) -> str | None:
    """Run `git args` in `cwd`; its stdout, or None when git is missing, fails or takes too long."""
    done = _run(cwd, *args)
    return done.stdout if done is not None and done.returncode == 0 else None


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


# ---------------------------------------------------------------------------- configuration: git config and attributes


def _run(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str] | None:
    """Run `git args` in `cwd` and return the finished process (whatever its exit code); None when git is missing
    or takes too long."""
    try:
        return subprocess.run(
            ["git", "-c", "core.quotepath=off", *args],
            cwd=cwd,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None


class GitError(PlanstateError):
    """A git command that had to succeed failed; its message is git's own first line of complaint."""


def _failed(done: subprocess.CompletedProcess[str] | None, what: str) -> GitError:
    if done is None:
        return GitError(f"{what}: git is not installed or did not answer")
    said = next((line for line in done.stderr.splitlines() if line.strip()), f"exit {done.returncode}")
    return GitError(f"{what}: {said.removeprefix('fatal: ').removeprefix('error: ')}")


def config_values(cwd: Path, pattern: str, *, local: bool = False) -> dict[str, list[str]] | None:
    """The git config keys matching the regular expression `pattern` and their values (every value of a multi-valued
    key, in order), as git reads them in `cwd` (every scope, or only the repository's own with `local`); None when
    git cannot answer (not installed; with `local`, outside a repository). A key set without `=` has the value
    `true`."""
    done = _run(cwd, "config", *(["--local"] if local else []), "-z", "--get-regexp", pattern)
    if done is None or done.returncode not in (0, 1):  # 1: no key matches
        return None
    out: dict[str, list[str]] = {}
    for item in done.stdout.split("\0"):
        if not item:
            continue
        key, _newline, value = item.partition("\n")
        out.setdefault(key, []).append(value if _newline else "true")
    return out


def config_set(cwd: Path, key: str, value: str) -> None:
    """Set `key` to `value` in the repository's own config (`git config --local`), replacing every value it had;
    GitError when git refuses."""
    done = _run(cwd, "config", "--local", "--replace-all", key, value)
    if done is None or done.returncode != 0:
        raise _failed(done, f"git config --local {key}")


def config_remove_section(cwd: Path, section: str) -> None:
    """Remove a whole section (`merge.planstate`) from the repository's own config; GitError when git refuses
    (also when there is no such section: look first)."""
    done = _run(cwd, "config", "--local", "--remove-section", section)
    if done is None or done.returncode != 0:
        raise _failed(done, f"git config --local --remove-section {section}")


def check_attr(cwd: Path, attributes: list[str], paths: list[str]) -> dict[str, dict[str, str]] | None:
    """The value of each of `attributes` for each of `paths` (relative to `cwd`) as git applies them: `set`,
    `unset`, `unspecified` or the value (`planstate`), asked in one `git check-attr --stdin` call; None outside a
    git work tree or when git cannot answer."""
    if not paths:
        return {}
    done = _run(cwd, "check-attr", "-z", "--stdin", *attributes, stdin="\0".join(paths) + "\0")
    if done is None or done.returncode != 0:
        return None
    fields = done.stdout.split("\0")
    out: dict[str, dict[str, str]] = {}
    for index in range(0, len(fields) - 2, 3):
        path, attribute, value = fields[index : index + 3]
        out.setdefault(path, {})[attribute] = value
    return out
