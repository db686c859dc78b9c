"""One write to the workspace: every file it changes, validated together, then written atomically in a safe order.

A transaction runs under the workspace lock. It loads each file it touches once, lets the
operation change plain data (through typed models), and on commit: recomputes derived values,
validates every changed file, splices the changes into each file's original text, refreshes
STATE.md's generated regions, and only then writes: new records first, then changed records,
then STATE.md files in the order they were first touched, then history lines. Nothing is
written when any file fails validation. Each file is replaced atomically; a crash between
two files leaves each file whole, and every order above leaves a state `planstate check`
understands (a record that exists before STATE.md mentions it, a history line that lags).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate import history
from planstate.clock import now
from planstate.document import Document
from planstate.errors import UsageError, ValidationError
from planstate.files import atomic_write, create_exclusive, real_target, remove_stale_temp_files
from planstate.models import KINDS, State
from planstate.plain import same
from planstate.schema import Model
from planstate.validation import located, problems_for

if TYPE_CHECKING:
    from planstate.initiatives import Initiative
    from planstate.workspace import Workspace


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


class Written:
    """What a committed transaction wrote."""

    def __init__(self) -> None:
        self.created: list[Path] = []
        self.changed: list[Path] = []
        self.logged: list[Path] = []

    def __bool__(self) -> bool:
        return bool(self.created or self.changed or self.logged)


class Transaction:
    """The files one operation reads and changes; see the module docstring for the commit order."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._staged: dict[Path, Staged] = {}
        self._history: dict[Path, list[dict[str, Any]]] = {}
        self.written = Written()

    # ------------------------------------------------------------------ loading

    def load(self, kind: str, path: Path, initiative: Initiative | None = None) -> Staged:
        """Load a planning file of `kind` once per transaction; later calls return the same working copy."""
        key = path.absolute()
        staged = self._staged.get(key)
        if staged is not None:
            return staged
        doc = self.ws.read_document(path)
        if not doc.has_front_matter:
            raise UsageError("has no front matter (it must start with a '---' line)", file=doc.path, line=1)
        data = doc.data
        if not isinstance(data, dict):
            raise ValidationError(located(doc, problems_for(kind, data)))
        staged = Staged(kind, path, doc, doc.to_bytes(), data, initiative)
        self._staged[key] = staged
        return staged

    def state(self, initiative: Initiative | None = None) -> State:
        """The working state of an initiative's STATE.md (default: the workspace's target initiative)."""
        target = initiative or self.ws.target
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
        from planstate import yamltext

        key = path.absolute()
        if key in self._staged or path.exists():
            raise UsageError("already exists", file=self.ws.display(path))
        lines = yamltext.block(data, 0, yamltext.Indent())
        text = "---\n" + "\n".join(lines) + "\n---\n" + body
        doc = Document.from_bytes(text.encode("utf-8"), self.ws.display(path))
        staged = Staged(kind, path, doc, b"", doc.data, None, created=True)
        self._staged[key] = staged
        return KINDS[kind](staged.data)

    def log(self, initiative: Initiative, item: dict[str, Any]) -> None:
        """Stage one history entry for an initiative."""
        self._history.setdefault(initiative.history_path, []).append(item)

    # ------------------------------------------------------------------ committing

    def commit(self) -> Written:
        """Validate every changed file, then write them all (see the module docstring); return what was written."""
        pending: list[tuple[Staged, bytes]] = []
        problems = []
        for staged in self._staged.values():
            if not staged.created and same(staged.data, staged.doc.data):
                continue
            if staged.kind == "state":
                from planstate.derived import recompute

                recompute(State(staged.data))
            found = problems_for(staged.kind, staged.data)
            if found:
                problems.extend(located(staged.doc, found))
                continue
            if staged.created:
                pending.append((staged, staged.doc.to_bytes()))
                continue
            if staged.kind == "state":
                staged.data["updated"] = now()
            staged.doc.update(staged.data)
            if staged.kind == "state" and staged.initiative is not None:
                self.ws.refresh_regions(staged.doc, staged.initiative)
            new = staged.doc.to_bytes()
            if new != staged.original:
                pending.append((staged, new))
        if problems:
            raise ValidationError(problems)
        order = {"created": 0, "record": 1, "state": 2}
        pending.sort(
            key=lambda item: order["created" if item[0].created else "state" if item[0].kind == "state" else "record"]
        )
        for staged, data in pending:
            if staged.created:
                self._create(staged.path, data)
                self.written.created.append(staged.path)
            else:
                target = real_target(staged.path, self.ws.root, self.ws.root.parent)
                remove_stale_temp_files(target.parent)
                atomic_write(target, data, expected=staged.original, shown=staged.doc.path)
                self.written.changed.append(staged.path)
        for path, items in self._history.items():
            self._append_history(path, items)
            self.written.logged.append(path)
        for staged, content in pending:
            self.ws.remember(staged.path, content, staged.data)
        self.ws.save_cache()
        return self.written

    def _create(self, path: Path, data: bytes) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            create_exclusive(path, data)
        except FileExistsError:
            raise UsageError("already exists; nothing was written", file=self.ws.display(path)) from None
        except OSError as exc:
            raise UsageError(f"cannot write: {exc.strerror}", file=self.ws.display(path)) from None

    def _append_history(self, path: Path, items: list[dict[str, Any]]) -> None:
        """Append lines to a history file by rewriting it atomically (a crash never leaves half a line)."""
        try:
            old = path.read_bytes()
        except FileNotFoundError:
            old = b""
        if old and not old.endswith(b"\n"):
            old += b"\n"
        new = old + "".join(history.line(item) for item in items).encode("utf-8")
        atomic_write(path, new, shown=self.ws.display(path))
