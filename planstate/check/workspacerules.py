"""Rules about the whole workspace: one active initiative, folders named after their ids, git drivers in place."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from planstate.check.findings import Finding
from planstate.check.reader import FileRead
from planstate.core.layout import STATE_FILE

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative

# What each git attribute needs in this clone's config, and what git does without it ({} names the files).
_DRIVERS = {
    "merge": ("merge.planstate.driver", "git silently merges {} as plain text"),
    "diff": ("diff.planstate.textconv", "`git diff` shows {} raw text"),
}


def initiatives(ctx: Context) -> list[Finding]:
    """More than one active initiative; an initiative whose folder name is not its id (the rules of `validate`)."""
    out: list[Finding] = []
    for error in ctx.initiative_problems():
        if error.field == "lifecycle.state":
            hint = "keep one active; `planstate initiative switch SLUG` pauses the others"
            out.append(Finding.from_error("multiple-active-initiatives", error, hint))
        else:
            hint = "rename the folder to the initiative's id, or correct the id"
            out.append(Finding.from_error("filename-id-mismatch", error, hint))
    return out


def no_second_active(finding: Finding, reads: dict[Path, FileRead]) -> Finding:
    """The finding, not fixable when it is a history repair that would record a move to `active` while another
    initiative is active too: `resume --activate` would refuse that move, and so does `check --fix`."""
    if finding.code != "history-mismatch" or not finding.fixable or finding.initiative is None:
        return finding
    found = reads.get(finding.initiative / STATE_FILE)
    data = found.mapping if found is not None else None
    if not isinstance(data, dict) or data.get("lifecycle", {}).get("state") != "active":
        return finding
    hint = "another initiative is active too: keep one active first, with `planstate initiative switch SLUG`"
    return dataclasses.replace(finding, hint=hint, can_fix=False)


def temp_files(ctx: Context, initiative: Initiative) -> list[Finding]:
    """Temp files a killed write left in the folders of an initiative (`.STATE.md.123.ab12cd34.tmp`): git shows
    them, so they get committed; `--fix` deletes them."""
    return [
        Finding(
            code="stale-temp-file",
            file=ctx.display(path),
            line=None,
            column=None,
            message="a temp file left by a planstate write that was killed; nothing reads it",
            hint="`planstate check --fix` deletes it",
            initiative=initiative.dir,
        )
        for path in left_by_killed_writes(initiative)
    ]


def left_by_killed_writes(initiative: Initiative) -> list[Path]:
    """The temp files killed writes left in an initiative's folder and its record folders."""
    from planstate.core.files import stale_temp_files
    from planstate.model.kinds import RECORD_FOLDERS

    folders = [initiative.dir, *map(initiative.folder, RECORD_FOLDERS)]
    return [path for folder in folders for path in stale_temp_files(folder)]


def drivers(ctx: Context, names: Callable[[], Iterable[str]]) -> list[Finding]:
    """`merge=planstate` or `diff=planstate` on the planning files `names()` gives (their paths inside `.planning/`,
    asked for only when a driver is missing) while this clone's git config defines no such driver: git silently
    merges them as text (or diffs their raw text). Silent outside a git work tree, which a few `stat` calls tell
    before anything of git is imported (`vcs.gitsetup` and `subprocess`: 10 ms of every check)."""
    from planstate.core.git import maybe_in_work_tree

    if not maybe_in_work_tree(ctx.root):
        return []
    from planstate.vcs.gitsetup import survey

    def relative() -> list[str]:
        return sorted(name for name in names() if not os.path.isabs(name))  # a file outside the workspace: not ours

    missing, weak = survey(ctx.root, relative)
    found = [_missing_driver(ctx, attribute, files) for attribute, files in missing.items()]
    return found + [_fragile_driver(ctx, key, attribute, why) for key, (attribute, why) in weak.items()]


def _fragile_driver(ctx: Context, key: str, attribute: str, why: str) -> Finding:
    """The finding of a configured driver command that may not run planstate from another shell (`why`)."""
    where = _attribute_at(ctx, attribute)
    return Finding(
        "driver-command-fragile",
        where[0],
        where[1],
        None,
        f"{key} {why}",
        "run `planstate git install` again: it writes this Python by its absolute path, with git's own diff and "
        "merge as the fallback",
        field=key,
    )


def _attribute_at(ctx: Context, attribute: str) -> tuple[str, int | None]:
    """The attributes line that gives `attribute=planstate` (as shown), or the `.planning/` folder."""
    from planstate.vcs.gitsetup import attribute_line

    root = ctx.root
    where = attribute_line(root, attribute)
    return (os.path.relpath(where[0], root.parent), where[1]) if where else (ctx.display(root), None)


def _missing_driver(ctx: Context, attribute: str, files: list[str]) -> Finding:
    """The finding of a git attribute (`merge` or `diff`) that applies to `files` without its driver."""
    key, effect = _DRIVERS[attribute]
    one = len(files) == 1
    effect = effect.format(("it" if one else "them") if attribute == "merge" else ("its" if one else "their"))
    file, line = _attribute_at(ctx, attribute)
    count = f"{len(files)} planning file{'s' if len(files) != 1 else ''}"
    return Finding(
        f"{attribute}-driver-missing",
        file,
        line,
        None,
        f"{attribute}=planstate applies to {count}, but this clone's git config has no {key}: {effect}",
        "run `planstate git install`; git config is per clone, so once in every clone",
        stable=f"{attribute}=planstate",
    )
