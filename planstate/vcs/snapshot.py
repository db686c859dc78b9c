"""Every planning file of a `.planning/` folder, read from the working tree or at a git revision, for comparing.

A snapshot holds the bytes of each initiative's STATE.md, history.jsonl and record files
(`decisions/`, `blockers/`, `sessions/`, and the `archive/` folder of each), for `.planning/` itself and each
`initiatives/SLUG/`, keyed by their path inside `.planning/`. Nothing is parsed here.
At a revision, one `git ls-tree` and one `git cat-file --batch` read them all (planstate/git.py);
a revision without `.planning/` is an empty snapshot. Working-tree files that cannot be read
(a FIFO, a file too big) are listed in `unreadable` rather than stopping the comparison.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from planstate.core import git
from planstate.core.errors import PlanstateError, UsageError
from planstate.core.files import read_bytes
from planstate.core.layout import ARCHIVE, HISTORY_FILE, INITIATIVES, STATE_FILE
from planstate.model.kinds import RECORD_FOLDERS

WORKING_TREE = "working tree"


class Snapshot(NamedTuple):
    """The planning files of one side of a comparison: path inside `.planning/` -> bytes."""

    label: str  # how the side is shown: the revision as given (`HEAD`, `main`), or "working tree"
    commit: str | None  # the commit id, None for the working tree
    files: dict[str, bytes]
    unreadable: dict[str, str]  # path inside `.planning/` -> why it could not be read

    def initiatives(self) -> dict[str, dict[str, bytes]]:
        """The files grouped by initiative folder (`""` for `.planning/` itself, `initiatives/SLUG`), with paths
        inside that folder; only folders that have a STATE.md (readable or not) count as initiatives."""
        grouped: dict[str, dict[str, bytes]] = {}
        for path, data in self.files.items():
            where = split(path)
            if where is not None:
                grouped.setdefault(where[0], {})[where[1]] = data
        present = {key for key, files in grouped.items() if STATE_FILE in files}
        present.update(w[0] for w in map(split, self.unreadable) if w is not None and w[1] == STATE_FILE)
        return {key: grouped.get(key, {}) for key in sorted(present)}


def split(path: str) -> tuple[str, str] | None:
    """(initiative folder, path inside it) of a planning file's path inside `.planning/`; None for other files."""
    parts = path.split("/")
    key = ""
    if len(parts) >= 3 and parts[0] == INITIATIVES:
        if parts[1].startswith("."):
            return None  # a staging folder of `initiative new`
        key, parts = f"{INITIATIVES}/{parts[1]}", parts[2:]
    if len(parts) == 1 and parts[0] in (STATE_FILE, HISTORY_FILE):
        return key, parts[0]
    if len(parts) == 3 and parts[1] == ARCHIVE:  # an archived record: `decisions/archive/x.md`
        folder = parts[:2]
    elif len(parts) == 2:
        folder = parts[:1]
    else:
        return None
    if folder[0] in RECORD_FOLDERS.values() and parts[-1].endswith(".md") and not parts[-1].startswith("."):
        return key, "/".join(parts)
    return None


def archived(name: str) -> bool:
    """Whether a record file's path inside its initiative folder (`decisions/archive/x.md`) is in an archive."""
    parts = name.split("/")
    return len(parts) == 3 and parts[1] == ARCHIVE


def working_tree(planning: Path) -> Snapshot:
    """The planning files on disk under `planning` (the `.planning/` folder), tracked by git or not."""
    files: dict[str, bytes] = {}
    unreadable: dict[str, str] = {}
    for prefix, folder in _initiative_folders(planning):
        for name in _planning_names(folder):
            path = folder / name
            if not os.path.lexists(path):
                continue
            try:
                files[prefix + name] = read_bytes(path, planning)
            except PlanstateError as exc:
                unreadable[prefix + name] = exc.message
    return Snapshot(WORKING_TREE, None, files, unreadable)


def _initiative_folders(planning: Path) -> list[tuple[str, Path]]:
    """(path prefix inside `.planning/`, folder) of `.planning/` itself and of every folder in `initiatives/` (but
    the staging dot-folders of `initiative new`)."""
    folders = [("", planning)]
    initiatives = planning / INITIATIVES
    if initiatives.is_dir():
        folders += [
            (f"{INITIATIVES}/{sub.name}/", sub)
            for sub in sorted(initiatives.iterdir())
            if not sub.name.startswith(".") and sub.is_dir()
        ]
    return folders


def _planning_names(folder: Path) -> list[str]:
    """The names, inside an initiative's folder, of the planning files it may have: STATE.md, history.jsonl and
    the `.md` files of its record folders and of their archives."""
    names = [STATE_FILE, HISTORY_FILE]
    for records in RECORD_FOLDERS.values():
        for inside in (records, f"{records}/{ARCHIVE}"):
            try:
                names += sorted(
                    f"{inside}/{entry.name}"
                    for entry in os.scandir(folder / inside)
                    if entry.name.endswith(".md") and not entry.name.startswith(".")
                )
            except (FileNotFoundError, NotADirectoryError):
                continue
    return names


def at_revision(planning: Path, revision: str, *, label: str | None = None) -> Snapshot:
    """The planning files under `planning` as committed at `revision` (shown as `label`, default the revision);
    UsageError (one line) when they cannot be read."""
    try:
        commit = git.resolve_revision(planning, revision)
        found = git.files_at(planning, commit)
    except git.RevisionError as exc:
        raise UsageError(str(exc)) from None
    return Snapshot(label or revision, commit, {p: d for p, d in found.items() if split(p) is not None}, {})


def merge_base(planning: Path, first: str, second: str) -> str:
    """The commit where `second` left `first` (their merge base); UsageError when there is none or a revision is bad."""
    try:
        return git.merge_base(planning, first, second)
    except git.RevisionError as exc:
        raise UsageError(str(exc)) from None


def is_ancestor(planning: Path, first: str, second: str) -> bool:
    """Whether commit `first` is an ancestor of commit `second` (True when git cannot tell: nothing to warn of)."""
    try:
        return git.is_ancestor(planning, first, second) is not False
    except git.RevisionError:
        return True


def short_id(planning: Path, commit: str) -> str:
    """A commit id by its short form (`git rev-parse --short`); the id as given when git cannot say."""
    try:
        return git.short_id(planning, commit)
    except git.RevisionError:
        return commit
