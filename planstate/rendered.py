"""What `planstate render` did (or would do) to each STATE.md, and unified diffs of file changes.

Kept apart from regions.py, which every STATE.md write imports: these are only needed by the
`render` and `check` commands.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.regions import Plan, refresh

if TYPE_CHECKING:
    from planstate.initiatives import Initiative
    from planstate.workspace import Workspace


@dataclass
class FileChange:
    """A file's bytes before and after a change (made or proposed)."""

    path: Path
    shown: str
    before: bytes
    after: bytes

    def diff(self) -> str:
        """The change as a unified diff (`a/FILE`, `b/FILE`), empty when nothing changes."""
        import difflib

        old = self.before.decode("utf-8", errors="surrogateescape").splitlines(keepends=True)
        new = self.after.decode("utf-8", errors="surrogateescape").splitlines(keepends=True)
        out = []
        for line in difflib.unified_diff(old, new, f"a/{self.shown}", f"b/{self.shown}"):
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
        return "".join(out)


@dataclass
class RenderedFile(FileChange):
    """One STATE.md after `render`: its regions' outcomes, its marker problems and whether it was written."""

    plan: Plan | None = None
    written: bool = False

    @property
    def changed(self) -> bool:
        """Whether rendering changes (or changed) the file."""
        return self.after != self.before

    @property
    def problems(self) -> list[tuple[int, str]]:
        """What keeps regions from being rendered: hand edits, template errors and malformed markers."""
        out = [] if self.plan is None else list(self.plan.troubles)
        for outcome in self.plan.outcomes if self.plan is not None else []:
            if outcome.status == "hand-edit":
                out.append((outcome.line, f"region {outcome.name} was edited by hand; kept (--force overwrites it)"))
            elif outcome.status == "template-error":
                where = f" ({outcome.template}:{outcome.template_line})" if outcome.template_line else ""
                out.append((outcome.line, f"region {outcome.name}: {outcome.message}{where}"))
        return sorted(out)

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data."""
        outcomes = self.plan.outcomes if self.plan is not None else []
        return {
            "file": self.shown,
            "changed": self.changed,
            "written": self.written,
            "regions": [
                {"name": o.name, "line": o.line, "status": o.status, "message": o.message or None} for o in outcomes
            ],
            "problems": [{"line": line, "message": message} for line, message in self.problems],
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
        """The report as JSON-ready data."""
        return {"clean": self.clean, "files": [f.to_dict() for f in self.files]}


def render_file(ws: Workspace, initiative: Initiative, *, force: bool = False, write: bool = False) -> RenderedFile:
    """Re-render the regions of an initiative's STATE.md; with `write`, replace the file atomically if they changed.

    The caller holds the workspace lock when writing. The front matter must be valid (ValidationError
    otherwise). A region-only write leaves `updated` alone: it tracks changes of the truth.
    """
    from planstate.errors import UsageError
    from planstate.files import atomic_write, real_target, remove_stale_temp_files
    from planstate.validation import check

    path = initiative.state_path
    doc = ws.read_document(path)
    if not doc.has_front_matter:
        raise UsageError("has no front matter (it must start with a '---' line)", file=doc.path, line=1)
    check(doc, "state")
    before = doc.to_bytes()
    result = refresh(ws, doc, initiative, force=force)
    after = doc.to_bytes()
    written = False
    if write and after != before:
        target = real_target(path, ws.root, ws.root.parent)
        remove_stale_temp_files(target.parent)
        atomic_write(target, after, expected=before, shown=doc.path)
        written = True
    return RenderedFile(path, ws.display(path), before, after, result, written)
