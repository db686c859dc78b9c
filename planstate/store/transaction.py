"""One write to the workspace: every file it changes, validated together, then written atomically in a safe order.

A transaction runs under the workspace lock. It loads each file it touches once, lets the
operation change plain data (through typed models), and on commit: refuses changes to an
archived or completed initiative, validates every changed file, recomputes derived values
(of valid data only) and validates again, splices the changes into each file's original text,
refreshes STATE.md's generated regions, re-reads every file it will write to make sure nobody
changed it meanwhile, and only then writes: new records first, then changed records, then
STATE.md files in the order they were first touched, then history lines. A record moved (to an archive
folder) is one rename, made after the new records and before the changed ones. Nothing is written
when any check fails. Each file is replaced atomically; a crash between two files leaves each
file whole, and every order above leaves a state `planstate check` understands (a record that
exists before STATE.md mentions it, a history line that lags). If a file still changes between
that re-read and its write (a race with an editor), the error names the files already written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.core.clock import now
from planstate.core.errors import ConflictError, PlanstateError, UsageError, ValidationError
from planstate.core.files import (
    atomic_write,
    create_exclusive,
    fsync_dir,
    move_exclusive,
    read_bytes,
    real_target,
    remove_stale_temp_files,
)
from planstate.core.layout import STATE_FILE
from planstate.model.derived import without_derived
from planstate.model.kinds import KINDS, READ_ONLY_STATES, State, read_only_message
from planstate.model.schema import Model
from planstate.model.types import Problem
from planstate.model.validation import located, problems_for
from planstate.store import history
from planstate.text.document import Document
from planstate.text.plaindata import clone, same

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative


class Staged:
    """A file loaded into a transaction: its document, original bytes and the working copy of its data."""

    # A plain class, not a dataclass: importing dataclasses costs agents milliseconds on every write.
    def __init__(
        self,
        kind: str,
        path: Path,
        doc: Document,
        original: bytes,
        data: dict[str, Any],
        initiative: Initiative | None = None,
        created: bool = False,
    ) -> None:
        self.kind = kind
        self.path = path
        self.doc = doc
        self.original = original
        self.data = data
        self.initiative = initiative
        self.created = created


class Moving:
    """A record file a transaction moves, unchanged: its kind, where it is and goes, its bytes and data as read."""

    def __init__(self, kind: str, path: Path, target: Path, original: bytes, data: Any) -> None:
        self.kind = kind
        self.path = path
        self.target = target
        self.original = original
        self.data = data


class Written:
    """What a committed transaction wrote."""

    def __init__(self) -> None:
        self.created: list[Path] = []
        self.moved: list[tuple[Path, Path]] = []  # (from, to)
        self.changed: list[Path] = []
        self.logged: list[Path] = []

    def __bool__(self) -> bool:
        return bool(self.created or self.moved or self.changed or self.logged)


class Transaction:
    """The files one operation reads and changes; see the module docstring for the commit order."""

    def __init__(self, ctx: Context, *, oversize: bool = False) -> None:
        self.ctx = ctx
        self.oversize = oversize  # read files over the front-matter limit (a write that shortens them)
        self._staged: dict[Path, Staged] = {}
        self._history: dict[Path, list[dict[str, Any]]] = {}
        self._moves: dict[Path, Moving] = {}  # record file (absolute) -> its move
        self._targets: set[Path] = set()  # where the moves go (absolute)
        self._repairs: set[Path] = set()
        self._touched: set[str] = set()  # the kinds of the records the commit writes
        self.written = Written()

    def repair(self, initiative: Initiative) -> None:
        """Let this transaction correct the STATE.md of an initiative even when it is read-only: for
        `check --fix`, which only puts a value no command could have written back to what it must be."""
        self._repairs.add(initiative.dir.absolute())

    # ------------------------------------------------------------------ loading

    def load(self, kind: str, path: Path, initiative: Initiative | None = None) -> Staged:
        """Load a planning file of `kind` once per transaction; later calls return the same working copy."""
        key = path.absolute()
        staged = self._staged.get(key)
        if staged is not None:
            return staged
        doc = self.ctx.read_document(path, oversize=self.oversize)
        doc.require_front_matter()
        data = doc.data
        if not isinstance(data, dict):
            raise ValidationError(located(doc, problems_for(kind, data)))
        staged = Staged(kind, path, doc, doc.to_bytes(), data, initiative)
        self._staged[key] = staged
        return staged

    def state(self, initiative: Initiative | None = None) -> State:
        """The working state of an initiative's STATE.md (default: the workspace's target initiative)."""
        target = initiative or self.ctx.target
        return State(self.load("state", target.state_path, target).data)

    def record(self, kind: str, path: Path) -> Any:
        """The working copy of a record file as its typed model (Decision, Blocker or Session)."""
        return KINDS[kind](self.load(kind, path).data)

    def original(self, path: Path) -> dict[str, Any]:
        """The data of a loaded file as it was read, before this transaction changed it."""
        doc = self._staged[path.absolute()].doc
        data = doc.data
        return data if isinstance(data, dict) else {}

    def create(self, kind: str, path: Path, data: dict[str, Any], body: str) -> Model:
        """Stage a new record file with front matter `data` and markdown `body`; return its working model."""
        from planstate.text import yamltext

        key = path.absolute()
        if key in self._staged or path.exists():
            raise UsageError("already exists", file=self.ctx.display(path))
        lines = yamltext.block(data, 0, yamltext.Indent())
        text = "---\n" + "\n".join(lines) + "\n---\n" + body
        # The text is written from `data`, so its data is known: no YAML is parsed unless the record is edited
        # before commit (tests/test_transaction.py reads every kind of new record back round trip).
        doc = Document.from_bytes(text.encode("utf-8"), self.ctx.display(path), known=clone(data))
        staged = Staged(kind, path, doc, b"", doc.data, None, created=True)
        self._staged[key] = staged
        return KINDS[kind](staged.data)

    def move(self, kind: str, path: Path, target: Path) -> None:
        """Stage moving a record file, unchanged, to `target` (a new name in a folder of the workspace, made when
        missing): one rename at commit, so no instant shows the record twice or not at all. A symlink is refused
        (moving the link could break where it points)."""
        if path.is_symlink():
            raise UsageError("is a symlink; planstate moves only regular files", file=self.ctx.display(path))
        if target.absolute() in self._targets or os.path.lexists(target):
            raise UsageError("already exists", file=self.ctx.display(target))
        self._targets.add(target.absolute())
        # Read through the store, not parsed for editing: archiving thousands of records stays cheap.
        original = read_bytes(path, self.ctx.root, self.ctx.root.parent)
        self._moves[path.absolute()] = Moving(kind, path, target, original, self.ctx.cached_data(path))

    def names(self, folder: Path, kind: str) -> list[str]:
        """The name of every entry of the record folder `folder` of `kind` (none when it is missing), from one scan
        in this transaction: a new record's id is checked against them, and the commit's region refresh reads the
        folder's records through the same scan (store/folders.vouch)."""
        from planstate.store import folders

        vouched = folders.vouch(self.ctx, folder, kind)
        if vouched is not None:
            return vouched.listing.names
        try:
            return os.listdir(folder)
        except (FileNotFoundError, NotADirectoryError):
            return []

    def log(self, initiative: Initiative, item: dict[str, Any]) -> None:
        """Stage one history entry for an initiative."""
        self._history.setdefault(initiative.history_path, []).append(item)

    # ------------------------------------------------------------------ committing

    def commit(self) -> Written:
        """Check, validate and splice every changed file, then write them all (see the module docstring)."""
        changed = [s for s in self._staged.values() if s.created or not same(s.data, s.doc.data)]
        if any(s.path.absolute() in self._moves for s in changed):
            raise UsageError("a record is moved unchanged; change it in a transaction of its own")
        self._refuse_read_only(changed)
        for folder in {moving.path.parent.parent for moving in self._moves.values()}:
            frozen = self._frozen(folder)
            if frozen is not None:
                raise frozen
        self.ctx.pending = {s.path.absolute(): s.data for s in changed if s.kind != "state"}
        self.ctx.leaving = set(self._moves)
        # the record regions this write renders: those of the kinds of records it writes or moves
        self._touched = {s.kind for s in changed if s.kind != "state"} | {m.kind for m in self._moves.values()}
        try:
            pending = self._prepare(changed)
            pending += self._record_regions(changed, [m.path for m in self._moves.values()])
        finally:
            self.ctx.pending = {}
            self.ctx.leaving = set()
        order = {"created": 0, "record": 1, "state": 2}
        pending.sort(
            key=lambda item: order["created" if item[0].created else "state" if item[0].kind == "state" else "record"]
        )
        logs = [self._history_write(path, items) for path, items in self._history.items()]
        self._refuse_changed_on_disk(pending, logs)
        self._write(pending, logs)
        for staged, content in pending:
            self.ctx.remember(staged.path, content, staged.data)
        for moving in self._moves.values():
            self.ctx.remember(moving.target, moving.original, moving.data)
        self._vouch_written([staged.path for staged, _content in pending])
        self.ctx.save_cache()
        return self.written

    def _vouch_written(self, written: list[Path]) -> None:
        """Keep the row of each record folder this write vouched for as a scan after it would make it (the files it
        wrote or moved in, too recent to vouch for alone; those it moved out, gone): the next command trusts the
        rows it has (store/folders.wrote)."""
        from planstate.store import folders

        moved_in = [moving.target for moving in self._moves.values()]
        for folder, vouched in self.ctx.vouched.items():
            names = [path.name for path in (*written, *moved_in) if path.parent.absolute() == folder]
            gone = [moving.path.name for moving in self._moves.values() if moving.path.parent.absolute() == folder]
            if names or gone:
                folders.wrote(self.ctx, vouched, names, gone)
        self.ctx.vouched = {}  # what a later write under the same lock scans, it scans afresh

    def _prepare(self, changed: list[Staged]) -> list[tuple[Staged, bytes]]:
        """Validate each changed file, recompute derived values of valid STATE.md data, and splice the new text.

        Derived values are computed from the data, so data of the wrong type (a hand-edited
        `first_phase: x`) is reported before anything computes with it, and checked again after.
        """
        pending: list[tuple[Staged, bytes]] = []
        problems: list[PlanstateError] = []
        for staged in changed:
            found = _problems(staged)
            if found:
                problems.extend(located(staged.doc, found))
                continue
            new = self._spliced(staged)
            if new is not None:
                pending.append((staged, new))
        if problems:
            raise ValidationError(problems)
        return pending

    def _record_regions(self, changed: list[Staged], moved: list[Path]) -> list[tuple[Staged, bytes]]:
        """The STATE.md of each initiative whose records change, its regions rendered again with those records,
        when this transaction does not write that STATE.md anyway; so every record command leaves its regions
        current. Only the regions change: `updated` tracks changes of the truth, and two clones adding records
        then differ only inside regions, which the merge driver renders again (`check --fix` without it).
        A STATE.md that cannot be read or does not validate is left alone: the record still counts, and
        validate and check report the file."""
        from planstate.core.layout import INITIATIVES
        from planstate.store.initiatives import Initiative
        from planstate.text.markers import has_markers

        states = {s.path.absolute() for s in changed if s.kind == "state"}
        root = self.ctx.root.absolute()
        records = [s.path for s in changed if s.kind != "state"] + moved
        folders = sorted({path.parent.parent.absolute() for path in records})
        out: list[tuple[Staged, bytes]] = []
        for folder in folders:
            if folder == root:
                initiative = Initiative(self.ctx.root, None)
            elif folder.parent == root / INITIATIVES:
                initiative = Initiative(folder, folder.name)
            else:
                continue
            path = initiative.state_path
            if path.absolute() in states:
                continue
            try:
                doc = self.ctx.read_known_document(path)  # only its body changes: its YAML is not parsed
                if not has_markers(doc.body) or not isinstance(doc.data, dict):
                    continue
                if problems_for("state", doc.data):
                    continue
                original = doc.to_bytes()
                self.ctx.refresh_regions(doc, initiative, self._touched)
                new = doc.check_writable()
            except PlanstateError:
                continue
            if new != original:
                out.append((Staged("state", path, doc, original, doc.data, initiative), new))
        return out

    def _spliced(self, staged: Staged) -> bytes | None:
        """A valid file's new bytes (a STATE.md with `updated` now and its regions re-rendered); None when an
        existing file comes out unchanged."""
        if staged.created:
            if not same(staged.data, staged.doc.data):  # changed through its model after tx.create
                staged.doc.update(staged.data)
            return staged.doc.check_writable()
        if staged.kind == "state":
            staged.data["updated"] = now()
        staged.doc.update(staged.data)
        if staged.kind == "state" and staged.initiative is not None:
            self.ctx.refresh_regions(staged.doc, staged.initiative, self._touched)
        new = staged.doc.check_writable()
        return new if new != staged.original else None

    # ---- archived and completed initiatives are read-only

    def _refuse_read_only(self, changed: list[Staged]) -> None:
        """Refuse changes to an initiative that was archived or completed when read.

        Allowed: a lifecycle transition (only `lifecycle` changes, with a history line), recomputed
        derived values, changes of existing sessions (ending or reaping one that was running), and the
        repairs of `check --fix` (see `repair`).
        Region re-renders do not go through here (`render`, `check --fix` write them under the lock).
        """
        logged = {path.parent for path in self._history}
        for staged in changed:
            if staged.kind == "session" and not staged.created:
                continue
            folder = staged.path.parent if staged.kind == "state" else staged.path.parent.parent
            if staged.kind == "state" and folder.absolute() in self._repairs:
                continue
            frozen = self._frozen(folder)
            if frozen is None:
                continue
            if staged.kind == "state":
                transition = folder in logged
                if same(_work_of(staged.doc.data, transition), _work_of(staged.data, transition)):
                    continue
            raise frozen

    def _frozen(self, folder: Path) -> UsageError | None:
        """The refusal for an initiative folder whose STATE.md, as read, is archived or completed; else None."""
        state_path = folder / STATE_FILE
        staged = self._staged.get(state_path.absolute())
        try:
            data = staged.doc.data if staged is not None else self.ctx.cached_data(state_path)
        except PlanstateError:
            return None  # not an initiative folder, or a broken STATE.md: its own error comes elsewhere
        lifecycle = data.get("lifecycle") if isinstance(data, dict) else None
        state = lifecycle.get("state") if isinstance(lifecycle, dict) else None
        if state not in READ_ONLY_STATES:
            return None
        slug = data.get("initiative") if isinstance(data.get("initiative"), str) else folder.name
        message = read_only_message(slug, state)
        doc = staged.doc if staged is not None else self.ctx.read_document(state_path)
        line, column = doc.locate("lifecycle.state")
        return UsageError(message, file=doc.path, line=line, column=column, field="lifecycle.state")

    # ---- writing

    def _history_write(self, path: Path, items: list[dict[str, Any]]) -> tuple[Path, Path, bytes | None, bytes]:
        """Plan an append to a history file: (path, real file, its bytes now or None, its new bytes).

        The file is read through the same guards as every planning file (a regular file inside the
        workspace, of sane size), and is rewritten whole and atomically: a crash never leaves half a line.
        """
        old: bytes | None = None
        target = path
        if os.path.lexists(path):
            target = real_target(path, self.ctx.root, self.ctx.root.parent)
            old = read_bytes(path, self.ctx.root, self.ctx.root.parent)
        base = old or b""
        if base and not base.endswith(b"\n"):
            base += b"\n"
        return path, target, old, base + "".join(history.line(item) for item in items).encode("utf-8")

    def _refuse_changed_on_disk(
        self, pending: list[tuple[Staged, bytes]], logs: list[tuple[Path, Path, bytes | None, bytes]]
    ) -> None:
        """Re-read every file about to be written; ConflictError (before any write) if one changed since it was read.

        The workspace lock keeps other planstate processes out, but not an editor saving a file.
        """
        for staged, _data in pending:
            if staged.created:
                if os.path.lexists(staged.path):
                    raise UsageError("already exists; nothing was written", file=self.ctx.display(staged.path))
            elif self._current(staged.path) != staged.original:
                raise ConflictError(_CHANGED + "; nothing was written, run the command again", file=staged.doc.path)
        for moving in self._moves.values():
            if self._current(moving.path) != moving.original:
                raise ConflictError(
                    _CHANGED + "; nothing was written, run the command again", file=self.ctx.display(moving.path)
                )
            if os.path.lexists(moving.target):
                raise UsageError("already exists; nothing was written", file=self.ctx.display(moving.target))
        for path, _target, old, _new in logs:
            if self._current(path) != old:
                raise ConflictError(
                    _CHANGED + "; nothing was written, run the command again", file=self.ctx.display(path)
                )

    def _current(self, path: Path) -> bytes | None:
        """The bytes of a planning file on disk now (None when it is gone)."""
        if not os.path.lexists(path):
            return None
        return read_bytes(path, self.ctx.root, self.ctx.root.parent)

    def _write(self, pending: list[tuple[Staged, bytes]], logs: list[tuple[Path, Path, bytes | None, bytes]]) -> None:
        """Write new records, move records, write changed files, then history lines; an error after a write names
        what was written."""
        created = [item for item in pending if item[0].created]
        changed = [item for item in pending if not item[0].created]
        moves = list(self._moves.values())
        done: list[str] = []
        remaining = (
            [self.ctx.display(staged.path) for staged, _data in created]
            + [self.ctx.display(moving.path) for moving in moves]
            + [self.ctx.display(staged.path) for staged, _data in changed]
            + [self.ctx.display(path) for path, *_rest in logs]
        )
        try:
            for staged, data in created:
                self._create(staged.path, data)
                self.written.created.append(staged.path)
                done.append(remaining.pop(0))
            for moving in moves:
                self._move(moving)
                done.append(remaining.pop(0))
            for folder in sorted({p for m in moves for p in (m.path.parent, m.target.parent)}):
                fsync_dir(folder)  # once per folder, not per move: archiving thousands of records stays quick
            for staged, data in changed:
                target = real_target(staged.path, self.ctx.root, self.ctx.root.parent)
                remove_stale_temp_files(target.parent)
                atomic_write(target, data, expected=staged.original, shown=staged.doc.path, guard=self.ctx.lock.verify)
                self.written.changed.append(staged.path)
                done.append(remaining.pop(0))
            for path, target, old, new in logs:
                atomic_write(target, new, expected=old, shown=self.ctx.display(path), guard=self.ctx.lock.verify)
                self.written.logged.append(path)
                done.append(remaining.pop(0))
        except PlanstateError as exc:
            if not done:
                raise
            raise written_in_part(exc, done, remaining) from None

    def _move(self, moving: Moving) -> None:
        """Move a record to its target; the target's folder must be a real folder inside the workspace."""
        target = moving.target
        try:
            if not os.path.lexists(target.parent):
                target.parent.mkdir(parents=True)
            folder = real_target(target.parent, self.ctx.root, self.ctx.root.parent)
            if not folder.is_dir():
                raise UsageError("is not a folder; nothing was written", file=self.ctx.display(target.parent))
            move_exclusive(moving.path, folder / target.name, guard=self.ctx.lock.verify, flush=False)
        except FileExistsError:
            raise UsageError("already exists; nothing was written", file=self.ctx.display(target)) from None
        except OSError as exc:
            raise UsageError(f"cannot move: {exc.strerror}", file=self.ctx.display(moving.path)) from None
        self.written.moved.append((moving.path, target))

    def _create(self, path: Path, data: bytes) -> None:
        """Create a new record file; its folder must be a real folder inside the workspace (a symlinked one that
        leads elsewhere is refused, so a create never writes outside `.planning/`)."""
        try:
            if not os.path.lexists(path.parent):
                path.parent.mkdir(parents=True)
            folder = real_target(path.parent, self.ctx.root, self.ctx.root.parent)
            if not folder.is_dir():
                raise UsageError("is not a folder; nothing was written", file=self.ctx.display(path.parent))
            create_exclusive(folder / path.name, data, guard=self.ctx.lock.verify)
        except FileExistsError:
            raise UsageError("already exists; nothing was written", file=self.ctx.display(path)) from None
        except OSError as exc:
            raise UsageError(f"cannot write: {exc.strerror}", file=self.ctx.display(path)) from None


_CHANGED = "changed on disk while planstate was updating it (an editor saving?)"


def written_in_part(exc: PlanstateError, done: list[str], remaining: list[str]) -> PlanstateError:
    """The error of a write of several files that failed after writing some (`done`): it names them, and the
    files not written."""
    what = exc.message.split("; nothing was written")[0]
    message = (
        f"{what}; already written: {', '.join(done)}; not written: {', '.join(remaining)}. "
        "Run `planstate check` to see the state before running the command again"
    )
    return type(exc)(message, file=exc.file, line=exc.line, column=exc.column, field=exc.field)


def _work_of(data: Any, transition: bool) -> Any:
    """STATE.md data without what a read-only initiative may still change: `updated`, derived values and,
    in a lifecycle transition, `lifecycle`."""
    if not isinstance(data, dict):
        return data
    out = without_derived(data, State)
    out.pop("updated", None)
    if transition:
        out.pop("lifecycle", None)
    return out


def _problems(staged: Staged) -> list[Problem]:
    """A changed file's problems; a valid STATE.md is checked again after its derived values are recomputed."""
    found = problems_for(staged.kind, staged.data)
    if not found and staged.kind == "state":
        from planstate.model.derived import recompute

        recompute(State(staged.data))
        found = problems_for(staged.kind, staged.data)
    return found
