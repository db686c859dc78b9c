"""Every git call planstate makes, in one place: changes since a moment, files at a revision, config and attributes.

Git is optional: outside a repository, or without git installed, these functions answer None
and callers say the check could not be made. Only writes to git config raise (GitError).
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.core.errors import PlanstateError

if TYPE_CHECKING:  # imported where git is run: a check outside git (`maybe_in_work_tree`) needs none of it
    import subprocess

TIMEOUT = 10.0
# git's own three-way merge of a merge driver's files (its %-placeholders), conflict markers and all: what a merge
# driver that cannot run falls back to
MERGE_FILE = "git merge-file -L ours -L base -L theirs --marker-size=%L %A %O %B"


def _process(
    cwd: Path | None, args: list[str], *, stdin: str | bytes | None = None, text: bool = False, timeout: float = TIMEOUT
) -> subprocess.CompletedProcess[Any]:
    """Run `git args` (paths printed as they are, not quoted) and return the finished process, whatever its exit
    code; OSError or SubprocessError when git cannot be run or takes longer than `timeout` seconds."""
    import subprocess

    return subprocess.run(
        ["git", "-c", "core.quotepath=off", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=text,
        timeout=timeout,
        check=False,
    )


def _run(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str] | None:
    """Run `git args` in `cwd` and return the finished process (whatever its exit code); None when git is missing
    or takes too long."""
    import subprocess

    try:
        return _process(cwd, list(args), stdin=stdin, text=True)
    except (OSError, subprocess.SubprocessError):
        return None


def _git(cwd: Path, *args: str) -> str | None:
    """Run `git args` in `cwd`; its stdout, or None when git is missing, fails or takes too long."""
    done = _run(cwd, *args)
    return done.stdout if done is not None and done.returncode == 0 else None


def _git_all(cwd: Path, *commands: list[str]) -> list[str | None]:
    """Run several git commands in `cwd` at once (each a process; together they take about as long as the slowest,
    not the sum); the stdout of each, or None for one that fails or takes too long (all of them when git is
    missing)."""
    import subprocess

    started: list[subprocess.Popen[str] | None] = []
    for args in commands:
        try:
            started.append(
                subprocess.Popen(
                    ["git", "-c", "core.quotepath=off", *args],
                    cwd=cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        except OSError:
            started.append(None)
    out: list[str | None] = []
    for process in started:
        if process is None:
            out.append(None)
            continue
        try:
            stdout, _stderr = process.communicate(timeout=TIMEOUT)
        except subprocess.SubprocessError:
            process.kill()
            process.communicate()
            out.append(None)
            continue
        out.append(stdout if process.returncode == 0 else None)
    return out


def toplevel(path: Path) -> Path | None:
    """The root of the git work tree holding `path`, or None outside a repository."""
    found = _git(path, "rev-parse", "--show-toplevel")
    return Path(found.strip()) if found and found.strip() else None


def user_name(cwd: Path) -> str | None:
    """git's `user.name` as read in `cwd` (the repository's config, else the user's), or None when none is set or git
    cannot answer."""
    found = (_git(cwd, "config", "user.name") or "").strip()
    return found or None


def maybe_in_work_tree(path: Path) -> bool:
    """Whether git may see `path` inside a work tree: a `.git` (folder or file) in it or a folder above it, or git
    told where its repository is (`GIT_DIR`, `GIT_WORK_TREE`). False means git certainly sees none, known from a few
    `stat` calls instead of a git process; True still leaves git to say."""
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
        return True
    folder = path.absolute()
    while True:
        if os.path.lexists(folder / ".git"):
            return True
        if folder.parent == folder:
            return False
        folder = folder.parent


def merge_text(
    ours: bytes, base: bytes, theirs: bytes, labels: tuple[str, str, str], marker_size: int = 7
) -> tuple[bytes, int] | None:
    """Git's own three-way text merge (`git merge-file`): the result and its number of conflicts.

    `labels` name ours, base and theirs in the conflict markers. None when git is missing; PlanstateError with
    git's own words when it refuses (binary files).
    """
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="planstate-merge-") as folder:
        names = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(folder) / name
            path.write_bytes(data)
            names.append(str(path))
        command = ["merge-file", "-p", f"--marker-size={marker_size}"]
        command += [arg for label in labels for arg in ("-L", label)] + names
        try:
            done = _process(None, command)
        except (OSError, subprocess.SubprocessError):
            return None
    if done.returncode < 0 or done.returncode > 127:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = said[-1].removeprefix("error: ") if said else f"exit {done.returncode}"
        raise PlanstateError(f"git merge-file: {reason}")
    return done.stdout, done.returncode


UNTRACKED_NAMED = 512  # at most this many entries of a project are named to git one by one (see `_untracked_in`)


def changed_since(project: Path, since: datetime | None, leave_out: str | None = None) -> list[str] | None:
    """Files changed since `since`: in commits made after it, plus uncommitted changes; paths relative to `project`.

    With `since` None, only the uncommitted changes. `leave_out`: a folder of `project` (its name) whose files git
    neither lists nor looks at (`.planning/`, 17,000 files a year, which git would otherwise list from every commit,
    and read through for untracked files). None when `project` is not in a git work tree or git cannot answer.
    Names are read NUL-separated (`-z`), so quotes, spaces and ` -> ` in them come through as they are. The git
    calls run at once.
    """
    if not maybe_in_work_tree(project):
        return None
    paths = [".", f":(exclude,literal){leave_out}"] if leave_out else ["."]
    asked = {
        "top": ["rev-parse", "--show-toplevel"],
        "tracked": ["status", "--porcelain", "-z", "--untracked-files=no", "--", *paths],
    }
    untracked = _untracked_in(project, leave_out)
    if untracked:
        asked["untracked"] = ["ls-files", "-z", "--others", "--exclude-standard", "--", *untracked]
    if since is not None:
        when = f"--since={since.isoformat()}"
        asked["log"] = ["log", "-z", when, "--name-only", "--pretty=format:", "--relative", "--", *paths]
    said = dict(zip(asked, _git_all(project, *asked.values()), strict=True))
    top, tracked = said["top"], said["tracked"]
    if not (top and top.strip()) or tracked is None or any(said.get(k, "") is None for k in ("untracked", "log")):
        return None
    # commits are separated by an empty name; git may start a commit's names with the newline of its header
    names = {name.lstrip("\n") for name in (said.get("log") or "").split("\0") if name.strip("\n")}
    names.update(name for name in (said.get("untracked") or "").split("\0") if name)  # relative to `project`
    return sorted(names | _status_names(tracked, _relative_prefix(Path(top.strip()), project)))


def _untracked_in(project: Path, leave_out: str | None) -> list[str]:
    """The pathspecs under which git looks for untracked files of `project`: each of its entries but `leave_out` and
    `.git`, named one by one, since git reads through a folder a pathspec excludes all the same (the planning folder
    would cost 13 ms at 17,000 records); the whole project, less `leave_out`, when it has many entries or cannot be
    listed. Empty when it has no other entry."""
    whole = [".", f":(exclude,literal){leave_out}"] if leave_out else ["."]
    if leave_out is None:
        return whole
    try:
        entries = [name for name in os.listdir(project) if name not in (leave_out, ".git")]
    except OSError:
        return whole
    return whole if len(entries) > UNTRACKED_NAMED else [f":(literal){name}" for name in entries]


def _status_names(status: str, prefix: str) -> set[str]:
    """The files `git status --porcelain -z` lists, relative to the folder whose `prefix` it prints them with."""
    names: set[str] = set()
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
    return names


def _relative_prefix(top: Path, project: Path) -> str:
    """`git status` prints paths from the repository root; this is `project`'s part of them."""
    try:
        rel = project.resolve().relative_to(top.resolve())
    except ValueError:
        return ""
    return "" if str(rel) == "." else f"{rel.as_posix()}/"


# ---------------------------------------------------------------------------- configuration: git config and attributes


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


# ---------------------------------------------------------------------------- revisions: reading .planning/ at a commit


class RevisionError(Exception):
    """A revision could not be read: git is missing, the folder is not in a repository, or the revision does not exist.

    Its message is one line; callers turn it into their own error type (this layer knows none)."""


def _git_bytes(cwd: Path, args: list[str], stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run `git args` in `cwd` with bytes in and out; RevisionError when git cannot be run at all."""
    import subprocess

    try:
        return _process(cwd, args, stdin=stdin, timeout=TIMEOUT * 6)
    except FileNotFoundError:
        raise RevisionError("git is not installed (or not on PATH)") from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise RevisionError(f"git failed: {exc}") from None


def repository_prefix(folder: Path) -> str:
    """Where `folder` is inside its repository (`apps/web/`, empty at the root); RevisionError outside a repository."""
    done = _git_bytes(folder, ["rev-parse", "--is-inside-work-tree", "--show-prefix"])
    lines = done.stdout.decode("utf-8", errors="surrogateescape").splitlines()
    if done.returncode != 0 or not lines or lines[0].strip() != "true":
        raise RevisionError(f"{folder} is not in a git work tree; planstate diff compares git revisions")
    return lines[1].strip() if len(lines) > 1 else ""


def resolve_revision(folder: Path, revision: str) -> str:
    """The commit id `revision` names, seen from `folder`; RevisionError naming it when there is no such commit."""
    if not revision or revision.startswith("-"):
        raise RevisionError(f"{revision!r} is not a revision")
    done = _git_bytes(folder, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}"])
    if done.returncode == 0 and done.stdout.strip():
        return done.stdout.decode("ascii").strip()
    repository_prefix(folder)  # outside a repository, say that rather than "no such revision"
    if revision == "HEAD" and _git_bytes(folder, ["rev-parse", "--verify", "--quiet", "HEAD"]).returncode != 0:
        raise RevisionError("revision 'HEAD' does not exist: the repository has no commits yet")
    raise RevisionError(f"revision {revision!r} does not exist in this repository (or is not a commit)")


def files_at(folder: Path, commit: str) -> dict[str, bytes]:
    """The regular files of `folder` (and below it) at `commit`: path relative to `folder` -> bytes.

    One `git ls-tree` lists them and one `git cat-file --batch` reads every blob, whatever their number.
    Symlinks and submodules are left out; a folder the commit does not have gives no files.
    """
    prefix = repository_prefix(folder)
    spec = ["--", prefix] if prefix else []
    listing = _git_bytes(folder, ["ls-tree", "-r", "-z", "--full-tree", commit, *spec])
    if listing.returncode != 0:
        message = listing.stderr.decode("utf-8", errors="replace").strip().splitlines()
        raise RevisionError(f"git ls-tree {commit[:12]} failed: {message[0] if message else 'no reason given'}")
    wanted = _regular_files(listing.stdout, prefix)
    if not wanted:
        return {}
    batch = _git_bytes(folder, ["cat-file", "--batch"], "".join(f"{oid}\n" for oid, _ in wanted).encode("ascii"))
    if batch.returncode != 0:
        raise RevisionError(f"git cat-file failed: {batch.stderr.decode('utf-8', errors='replace').strip()}")
    return _blobs(batch.stdout, wanted)


def _regular_files(listing: bytes, prefix: str) -> list[tuple[str, str]]:
    """(object id, path below `prefix`) of the regular files `git ls-tree -r -z` lists under `prefix`."""
    wanted: list[tuple[str, str]] = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, name = entry.partition(b"\t")
        mode, kind, object_id = meta.split(b" ")[:3]
        path = name.decode("utf-8", errors="surrogateescape")
        if kind == b"blob" and mode in (b"100644", b"100755") and path.startswith(prefix):
            wanted.append((object_id.decode("ascii"), path[len(prefix) :]))
    return wanted


def _blobs(data: bytes, wanted: list[tuple[str, str]]) -> dict[str, bytes]:
    """The contents `git cat-file --batch` answered for `wanted`, in its order: path -> bytes."""
    out: dict[str, bytes] = {}
    at = 0
    for blob, path in wanted:
        end = data.index(b"\n", at)
        header = data[at:end].split(b" ")
        if len(header) < 3 or header[0].decode("ascii") != blob:
            raise RevisionError(f"git cat-file answered {data[at:end]!r} for {blob}")
        size = int(header[2])
        out[path] = data[end + 1 : end + 1 + size]
        at = end + 1 + size + 1  # the contents are followed by a newline
    return out


def merge_base(folder: Path, first: str, second: str) -> str:
    """The best common ancestor of two revisions (what `git diff A...B` compares B with); RevisionError when none."""
    a, b = resolve_revision(folder, first), resolve_revision(folder, second)
    done = _git_bytes(folder, ["merge-base", a, b])
    if done.returncode != 0 or not done.stdout.strip():
        raise RevisionError(f"revisions {first!r} and {second!r} have no common ancestor")
    return done.stdout.decode("ascii").strip()


def is_ancestor(folder: Path, first: str, second: str) -> bool | None:
    """Whether commit `first` is an ancestor of commit `second` (or the same commit), by `git merge-base
    --is-ancestor`; None when git cannot tell."""
    done = _git_bytes(folder, ["merge-base", "--is-ancestor", first, second])
    return {0: True, 1: False}.get(done.returncode)


def short_id(folder: Path, commit: str) -> str:
    """The shortest unambiguous abbreviation of `commit` (`git rev-parse --short`, at least 7 digits); the commit's
    first 12 digits when git does not answer."""
    done = _git_bytes(folder, ["rev-parse", "--short", commit])
    found = done.stdout.decode("ascii", errors="replace").strip()
    return found if done.returncode == 0 and found else commit[:12]
