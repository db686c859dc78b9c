"""What `planstate render` did (or would do) to each STATE.md, and unified diffs of file changes.

Kept apart from regions.py, which every STATE.md write imports: these are only needed by the
`render` and `check` commands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from planstate.render.regions import Plan, refresh

DISCARDED = "discarded"  # under .planning/.local/: the hand edits `render --force` replaced, kept to be recovered

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative


@dataclass
class FileChange:
    """A file's bytes before and after a change (made or proposed)."""

    path: Path
    shown: str
    before: bytes
    after: bytes
    removed: ClassVar[bool] = False  # the file goes (see Removal)

    def diff(self) -> str:
        """The change as a unified diff (`a/FILE`, `b/FILE`, or `/dev/null` for a removed file), empty when nothing
        changes."""
        import difflib

        old = self.before.decode("utf-8", errors="surrogateescape").splitlines(keepends=True)
        new = self.after.decode("utf-8", errors="surrogateescape").splitlines(keepends=True)
        out = []
        target = "/dev/null" if self.removed else f"b/{self.shown}"
        for line in difflib.unified_diff(old, new, f"a/{self.shown}", target):
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
        return "".join(out)


class Removal(FileChange):
    """A file that goes: its bytes before, none after."""

    removed = True

    def __init__(self, path: Path, shown: str, before: bytes) -> None:
        super().__init__(path, shown, before, b"")


@dataclass
class RenderedFile(FileChange):
    """One STATE.md after `render`: its regions' outcomes, its marker problems and whether it was written."""

    plan: Plan | None = None
    written: bool = False
    conflicts: list[tuple[int, str]] = field(default_factory=list)  # (line, why) of conflicts left alone
    resolved: bool = False  # whether git conflicts inside regions were resolved
    kept: dict[str, str] = field(default_factory=dict)  # region -> where its discarded hand edit was saved

    @property
    def changed(self) -> bool:
        """Whether rendering changes (or changed) the file."""
        return self.after != self.before

    @property
    def problems(self) -> list[tuple[int, str]]:
        """What keeps regions from being rendered: hand edits, template errors, unreadable records, malformed
        markers, and git conflicts that reach outside the regions."""
        out = [] if self.plan is None else self.plan.unrendered
        return sorted([*out, *self.conflicts])

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data."""
        outcomes = self.plan.outcomes if self.plan is not None else []
        return {
            "path": self.shown,
            "changed": self.changed,
            "written": self.written,
            "regions": [
                {"name": o.name, "line": o.line, "status": o.status, "message": o.message or None} for o in outcomes
            ],
            "problems": [{"line": line, "message": message} for line, message in self.problems],
            "kept": [{"region": name, "path": where} for name, where in self.kept.items()],
        }


@dataclass
class RenderReport:
    """What `planstate render` did (or, with `check`, would do) to each STATE.md."""

    files: list[RenderedFile]

    @property
    def changed(self) -> list[RenderedFile]:
        """The files whose regions change."""
        return [f for f in self.files if f.changed]

    @property
    def clean(self) -> bool:
        """True when nothing changes and no region is hand-edited, broken or unrenderable."""
        return not self.changed and not any(f.problems for f in self.files)

    def diff(self) -> str:
        """The unified diff of every change."""
        return "".join(f.diff() for f in self.files)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (whether it is clean is the exit code: `ok` of the envelope)."""
        return {"files": [f.to_dict() for f in self.files]}


def render_file(ctx: Context, initiative: Initiative, *, force: bool = False, write: bool = False) -> RenderedFile:
    """Re-render the regions of an initiative's STATE.md; with `write`, replace the file atomically if they changed.

    The caller holds the workspace lock when writing. The front matter must be valid (ValidationError
    otherwise). A region-only write leaves `updated` alone: it tracks changes of the truth. Git
    conflicts confined to generated regions are resolved by keeping the first side's regions and
    rendering them again from the merged records; any other conflict leaves the file alone.
    """
    from planstate.core.errors import UsageError
    from planstate.core.files import atomic_write, read_bytes, real_target, remove_stale_temp_files
    from planstate.model.validation import check
    from planstate.render.bodies import conflicts_for_render
    from planstate.text.conflicts import Conflict, describe
    from planstate.text.document import Document

    path = initiative.state_path
    shown = ctx.display(path)
    before = read_bytes(path, ctx.root, ctx.root.parent)
    text, touched, refused = conflicts_for_render(before)
    if refused:
        problems = [
            (first, f"{describe(Conflict(first, last, None))} outside generated regions; resolve it by hand")
            for first, last in refused
        ]
        return RenderedFile(path, shown, before, before, None, False, problems)
    # Without conflicts, the front matter comes through the store as for a write's region refresh: no YAML is parsed
    # unless a problem is to be located.
    doc = Document.from_bytes(text, shown) if touched else ctx.read_known_document(path, before)
    if not doc.has_front_matter:
        raise UsageError("has no front matter (it must start with a '---' line)", file=doc.path, line=1)
    check(doc, "state")
    result = refresh(ctx, doc, initiative, force=True if force else touched, warn=False)
    after = doc.check_writable() if write else doc.to_bytes()
    written = False
    kept: dict[str, str] = {}
    if write and after != before:
        kept = _keep_discarded(ctx, initiative, result)  # before the write: a hand edit is never only in memory
        # STATE.md is written here without a Transaction because only its body changes: a transaction
        # writes a file only when its front matter data changes. The workspace lock is held (taken again
        # here, it is re-entrant; render_initiative holds it from before the read), and
        # `expected=before` makes the write fail (ConflictError, exit 3) if anything changed the file
        # since it was read above, so no concurrent edit, by planstate or an editor, is lost.
        with ctx.locked():
            target = real_target(path, ctx.root, ctx.root.parent)
            remove_stale_temp_files(target.parent)
            atomic_write(target, after, expected=before, shown=doc.path, guard=ctx.lock.verify)
        written = True
    return RenderedFile(path, shown, before, after, result, written, resolved=bool(touched), kept=kept)


def _keep_discarded(ctx: Context, initiative: Initiative, plan: Plan) -> dict[str, str]:
    """Save the hand-edited text of each region `render --force` replaces under .planning/.local/discarded/, one
    file per region, named by time, initiative and region; return where each went (as shown to people)."""
    from planstate.core.clock import now
    from planstate.core.files import atomic_write
    from planstate.core.layout import LOCAL

    kept: dict[str, str] = {}
    folder = ctx.root / LOCAL / DISCARDED
    stamp = now().strftime("%Y%m%dT%H%M%SZ")
    slug = initiative.folder_slug or "root"
    for outcome in plan.outcomes:
        if outcome.discarded is None:
            continue
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{stamp}-{slug}-{outcome.name}.md"
        number = 1
        while target.exists():
            number += 1
            target = folder / f"{stamp}-{slug}-{outcome.name}-{number}.md"
        atomic_write(target, outcome.discarded.encode("utf-8", errors="surrogateescape"))
        kept[outcome.name] = ctx.display(target)
    return kept


def render_all(ctx: Context, *, check: bool = False, force: bool = False) -> RenderReport:
    """Re-render STATE.md's regions: every initiative's, or only the one named; `check` writes nothing."""
    from planstate.store.initiatives import discover

    targets = [ctx.target] if ctx.initiative_slug else discover(ctx.root)
    return RenderReport([render_initiative(ctx, i, check=check, force=force) for i in targets])


def render_initiative(
    ctx: Context, initiative: Initiative, *, check: bool = False, force: bool = False
) -> RenderedFile:
    """Re-render one initiative's STATE.md regions under the workspace lock (`check`: compute only)."""
    if check:
        return render_file(ctx, initiative, force=force)
    with ctx.locked():
        return render_file(ctx, initiative, force=force, write=True)
