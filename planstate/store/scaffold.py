"""Scaffolding of new initiatives: a fresh STATE.md, history and record folders, written whole or not at all.

Storage layer: `Workspace.init` and `initiative new` build the files here and materialize them
with one rename, so a workspace or an initiative appears complete or not at all.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from pathlib import Path

from planstate.core.clock import now
from planstate.core.errors import UsageError
from planstate.core.files import fsync_dir, write_durably
from planstate.core.layout import HISTORY_FILE, STATE_FILE
from planstate.model.derived import progress_bar
from planstate.model.kinds import RECORD_FOLDERS, SCHEMA_VERSION
from planstate.model.validation import check
from planstate.text.document import Document

RenderRegions = Callable[[Document], None]


def initiative_files(
    *,
    slug: str,
    title: str,
    phases: list[str] | tuple[str, ...],
    first_phase: int,
    actor: str,
    next_action: str | None,
    shown: str,
    render_regions: RenderRegions,
    state: str = "active",
    reason: str | None = None,
    trigger: str | None = None,
    planning: Path | None = None,
) -> dict[str, bytes]:
    """The files of a new initiative (relative path to bytes): STATE.md, history.jsonl, record folders.

    `planning` is an existing workspace whose template overrides apply (none for `init`).
    `render_regions` fills the generated regions of the new STATE.md when its template has any
    (`Context.render_new_regions`): rendering is a view, which this layer does not import.
    """
    from planstate.store import history
    from planstate.text import templates

    _refuse_bad_arguments(slug, phases, first_phase)
    when = now()
    context = {
        "initiative": slug,
        "title": title,
        "phases": list(phases),
        "first_phase": first_phase,
        "now": when,
        "actor": actor,
        "state": state,
        "reason": reason,
        "bar": progress_bar(0),
        "next_action": next_action or (f"Start phase {first_phase}: {phases[0]}" if phases else None),
        "schema_version": SCHEMA_VERSION,
    }
    text = templates.render("STATE.md.j2", context, planning)  # in a workspace, its own template override wins
    doc = Document.from_bytes(text.encode("utf-8"), shown)
    check(doc, "state")
    if "planstate:begin" in doc.body:
        render_regions(doc)
    trigger = trigger or ("init" if state == "active" and reason is None else "create")
    files = {STATE_FILE: doc.check_writable()}
    files[HISTORY_FILE] = history.line(history.entry(when, None, state, trigger, reason, actor)).encode("utf-8")
    for folder in RECORD_FOLDERS.values():
        files[f"{folder}/.gitkeep"] = b""
    return files


def create_workspace(
    project: str | Path,
    *,
    title: str | None,
    phases: list[str] | tuple[str, ...],
    first_phase: int,
    initiative: str | None,
    actor: str | None,
    next_action: str | None,
    render_regions: RenderRegions,
) -> Path:
    """Create `.planning/` in `project` (STATE.md, history, record folders, .gitignore, .gitattributes), all at
    once or not at all; the new `.planning/` folder."""
    from planstate.core.actor import resolve
    from planstate.core.files import absolute
    from planstate.core.layout import PLANNING
    from planstate.store.history import GITATTRIBUTES
    from planstate.text import templates

    project_dir = absolute(project)
    target = project_dir / PLANNING
    if target.exists() or target.is_symlink():
        raise UsageError(
            f"{target} already exists; planstate init never overwrites a workspace "
            "(to plan another piece of work in it: `planstate initiative new SLUG`)"
        )
    if (project_dir.exists() or project_dir.is_symlink()) and not project_dir.is_dir():
        raise UsageError(f"{project_dir} is not a folder")
    title = title or project_dir.name.replace("-", " ").replace("_", " ").strip() or "Untitled"
    files = initiative_files(
        slug=initiative or slugify(title),
        title=title,
        phases=phases,
        first_phase=first_phase,
        actor=resolve(actor, project_dir),
        next_action=next_action,
        shown=f"{PLANNING}/{STATE_FILE}",
        render_regions=render_regions,
    )
    files[".gitignore"] = templates.render("gitignore.j2", {}).encode("utf-8")
    files[".gitattributes"] = GITATTRIBUTES.encode("utf-8")
    made = _make_folders(project_dir)
    try:
        materialize(files, project_dir, target)
    except BaseException:
        for folder in reversed(made):  # nothing half-made: the folders made for it go too (when still empty)
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    return target


def _make_folders(folder: Path) -> list[Path]:
    """Make `folder` and the parents it lacks, as `git init DIR` does; the folders made, outermost first."""
    made: list[Path] = []
    for each in [f for f in (folder, *folder.parents) if not f.exists()][::-1]:
        try:
            each.mkdir()
        except FileExistsError:  # made meanwhile by someone else: theirs, not ours to remove
            continue
        except OSError as exc:
            for ours in reversed(made):
                with contextlib.suppress(OSError):
                    ours.rmdir()
            raise UsageError(f"could not create {folder}: {exc.strerror or type(exc).__name__}") from None
        made.append(each)
    return made


def _refuse_bad_arguments(slug: str, phases: list[str] | tuple[str, ...], first_phase: int) -> None:
    """UsageError for a numbering base other than 0 or 1, a blank phase name or an id that is not a slug."""
    if first_phase not in (0, 1):
        raise UsageError("first_phase must be 0 or 1", argument="first_phase")
    if any(not name.strip() for name in phases):
        raise UsageError("phase names must not be empty")
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,62}", slug):
        raise UsageError(f"initiative id {slug!r} must be a slug: lowercase letters, digits and '-'")


def materialize(files: dict[str, bytes], parent: Path, target: Path) -> None:
    """Write `files` into a staging folder in `parent`, then rename it to `target`: it appears whole or not at all."""
    staging = parent / f".{target.name}.init-{os.getpid()}-{os.urandom(3).hex()}"
    try:
        staging.mkdir()
    except OSError as exc:
        raise UsageError(f"could not create {target}: {exc.strerror}") from None
    try:
        for name, data in files.items():
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            write_durably(path, data)
        for folder in {staging / name for name in files} | {staging}:
            fsync_dir(folder if folder.is_dir() else folder.parent)
        os.rename(staging, target)
        fsync_dir(parent)
    except BaseException as exc:
        _remove_tree(staging)
        if not isinstance(exc, OSError):
            raise
        if target.exists():
            raise UsageError(f"{target} already exists; planstate never overwrites a workspace") from None
        raise UsageError(f"could not create {target}: {exc.strerror}") from None


def slugify(text: str) -> str:
    """Turn a title into an initiative's slug: lowercase ASCII letters and digits joined by '-' (`init` and
    `initiative new` without one), "initiative" when nothing of it is left."""
    from planstate.core.ids import slug

    return slug(text) or "initiative"


def _remove_tree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
