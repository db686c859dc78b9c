"""The record files a `git merge` in progress will hold, so the merge driver can render STATE.md's record regions.

Git hands a merge driver three versions of one file and nothing else, and merges the record files apart
from STATE.md. `git merge` names the commit it merges in the environment (`GITHEAD_<id>`, for its
conflict labels); with it, HEAD and their merge base, the record files of each side are read from git
and merged three ways: a file both sides have alike is kept, one side's change (an addition, an edit, a
removal) wins over the other's silence, and a file both sides changed goes through the driver's own
merge. The three STATE.md versions git passed must be the ones in those commits, so an environment
left over from another command is never trusted. Without such a commit (a rebase, a cherry-pick, an
octopus merge) the driver does not know the records, and the regions wait for `planstate check --fix`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from planstate.core.errors import PlanstateError
from planstate.core.layout import HISTORY_FILE, STATE_FILE
from planstate.vcs import snapshot

_HEAD = re.compile(r"GITHEAD_([0-9a-f]{40}|[0-9a-f]{64})")

# Merges three versions of a record file (base may be empty) into its merged bytes; None when they conflict.
MergeFile = Callable[[bytes, bytes, bytes, str], bytes | None]


def merged_in(environ: Mapping[str, str] | None = None) -> str | None:
    """The commit `git merge` is merging into HEAD, when it names exactly one (GITHEAD_<id>)."""
    heads = [m.group(1) for m in map(_HEAD.fullmatch, environ if environ is not None else os.environ) if m]
    return heads[0] if len(heads) == 1 else None


def merged_records(
    planning: Path,
    state: str,
    versions: tuple[bytes, bytes, bytes],
    merge_file: MergeFile,
    *,
    environ: Mapping[str, str] | None = None,
) -> dict[str, bytes | None] | None:
    """The live record files (outside `archive/`: those the regions show) of the initiative whose STATE.md is
    `state` (its path inside `planning`), as the merge will hold them: path inside the initiative folder
    (`decisions/x.md`) -> bytes, or None for a file whose two sides conflict. None when the merge in progress
    cannot be known for sure (see the module docstring)."""
    theirs_id = merged_in(environ)
    if theirs_id is None:
        return None
    try:
        sides = [
            snapshot.at_revision(planning, snapshot.merge_base(planning, "HEAD", theirs_id)),
            snapshot.at_revision(planning, "HEAD"),
            snapshot.at_revision(planning, theirs_id),
        ]
    except PlanstateError:
        return None
    for side, text in zip(sides, versions, strict=True):
        if side.files.get(state, b"") != text:
            return None  # not the merge git is running: never render from records we are not sure of
    folder = state.rpartition("/")[0]
    prefix = f"{folder}/" if folder else ""
    base, ours, theirs = (
        {path[len(prefix) :]: data for path, data in side.files.items() if _record_of(path, folder)} for side in sides
    )
    # A record one side archived is in `archive/` after the merge (git follows the rename, and applies the other
    # side's changes there): it is no longer one of the live records the regions show.
    moved = {_live(name) for side in (ours, theirs) for name in side if snapshot.archived(name)}
    merged: dict[str, bytes | None] = {}
    for name in sorted({*ours, *theirs, *base}):
        if snapshot.archived(name) or name in moved:
            continue
        mine, other, old = ours.get(name), theirs.get(name), base.get(name)
        if mine == other or other == old:
            chosen = mine
        elif mine == old:
            chosen = other
        elif mine is None or other is None:
            merged[name] = None  # removed on one side, changed on the other: git reports the conflict
            continue
        else:
            chosen = merge_file(old or b"", mine, other, prefix + name)
            if chosen is None:
                merged[name] = None
                continue
        if chosen is not None:
            merged[name] = chosen
    return merged


def _live(name: str) -> str:
    """Where an archived record file (`decisions/archive/x.md`) was before it was archived (`decisions/x.md`)."""
    records, _archive, file = name.split("/")
    return f"{records}/{file}"


def _record_of(path: str, folder: str) -> bool:
    """Whether a planning file's path inside `.planning/` is a record file of the initiative folder `folder`."""
    where = snapshot.split(path)
    return where is not None and where[0] == folder and where[1] not in (STATE_FILE, HISTORY_FILE)
