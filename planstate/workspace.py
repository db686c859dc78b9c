"""The public API: a `.planning/` workspace, found like git finds `.git`, read and changed in transactions."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.core.errors import PlanstateError, UsageError
from planstate.core.files import read_bytes
from planstate.core.lock import WorkspaceLock, check_timeout
from planstate.model.derived import progress_bar, recompute
from planstate.model.kinds import RECORD_FOLDERS, UNSET, State, Unset, is_complete, phase_at, to_json
from planstate.model.schema import Kind, ListOf, Nested, Nullable, lookup
from planstate.model.validation import check, located, problems_for
from planstate.store.scaffold import default_actor, materialize, slugify
from planstate.store.scaffold import initiative_files as _initiative_files
from planstate.text.document import Document
from planstate.text.paths import delete_in, format_path, get_in, parse_path, set_in
from planstate.text.plaindata import same

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable
    from datetime import datetime

    from planstate.check.checks import Report as CheckReport
    from planstate.ops.blockers import BlockerAPI
    from planstate.ops.decisions import DecisionAPI
    from planstate.ops.initiatives import InitiativeAPI, Transitioned
    from planstate.ops.phases import PhaseAPI
    from planstate.ops.position import Edited, TaskAPI
    from planstate.ops.sessions import SessionAPI
    from planstate.render.result import RenderedFile, RenderReport
    from planstate.report.brief import Brief
    from planstate.store.cache import FrontMatterCache
    from planstate.store.initiatives import Initiative
    from planstate.store.transaction import Transaction
    from planstate.vcs.gitsetup import Report as GitSetupReport
    from planstate.vcs.gitsetup import Status as GitSetupStatus
    from planstate.vcs.semdiff import SemanticDiff

PLANNING = ".planning"
STATE_FILE = "STATE.md"
LOCAL = ".local"

# Kept here for callers that import the scaffolding from the API module (planstate.store.scaffold owns it).
__all__ = [
    "LOCAL",
    "PLANNING",
    "STATE_FILE",
    "Change",
    "Workspace",
    "absolute",
    "default_actor",
    "initiative_files",
    "materialize",
    "slugify",
]


class Change:
    """One field changed by a write: its path, old and new value."""

    def __init__(self, path: str, old: Any, new: Any, *, removed: bool = False) -> None:
        self.path = path
        self.old = old
        self.new = new
        self.removed = removed

    def to_dict(self) -> dict[str, Any]:
        """Return the change as JSON-ready data (`removed` is present when the field was removed)."""
        out = {"path": self.path, "old": to_json(self.old), "new": to_json(self.new)}
        if self.removed:
            out["removed"] = True
        return out


class Workspace:
    """A `.planning/` folder: the one object the CLI, the MCP server and Python code work through."""

    def __init__(
        self,
        root: str | Path,
        *,
        lock_timeout: float | None = None,
        initiative: str | None = None,
        actor: str | None = None,
    ) -> None:
        self.root = absolute(root)
        self.initiative_slug = initiative
        self.actor = actor or default_actor()
        self._target: Initiative | None = None
        self._guessed: tuple[str, ...] = ()  # the candidates, when no initiative is active and several could be meant
        self._writing = 0  # depth of open transactions
        self._cache: FrontMatterCache | None = None
        timeout = lock_timeout
        if timeout is None and os.environ.get("PLANSTATE_LOCK_TIMEOUT"):
            try:
                timeout = check_timeout(float(os.environ["PLANSTATE_LOCK_TIMEOUT"]))
            except (ValueError, UsageError):
                raise UsageError("PLANSTATE_LOCK_TIMEOUT must be a number of seconds >= 0") from None
        self._lock = WorkspaceLock(self.root / LOCAL / "lock", timeout)

    # ------------------------------------------------------------ finding and creating

    @classmethod
    def find(
        cls,
        start: str | Path | None = None,
        *,
        explicit: str | Path | None = None,
        lock_timeout: float | None = None,
        initiative: str | None = None,
        actor: str | None = None,
    ) -> Workspace:
        """Find the workspace: `explicit` (or PLANSTATE_DIR), else `.planning/` in `start` or a parent.

        `explicit` may be the `.planning/` folder, the project folder that holds it, or a folder
        inside it; inside `initiatives/<slug>/`, that initiative is the target unless `initiative`
        names another.
        """
        given = explicit if explicit is not None else os.environ.get("PLANSTATE_DIR") or None
        if given is not None:
            path = absolute(given)
            planning, selected = _planning_of(path)
            if planning is None:
                what = "no such folder" if not path.exists() else "not a .planning/ folder, not in one, holds none"
                raise UsageError(
                    f"no {PLANNING}/ workspace at {path} ({what}); pass the {PLANNING}/ folder "
                    "or the project folder that holds it"
                )
            return cls(planning, lock_timeout=lock_timeout, initiative=initiative or selected, actor=actor)
        here = absolute(start if start is not None else ".")
        for folder in (here, *here.parents):
            if (folder / PLANNING).is_dir():
                return cls(folder / PLANNING, lock_timeout=lock_timeout, initiative=initiative, actor=actor)
        raise UsageError(
            f"no {PLANNING}/ folder in {here} or any parent folder; run `planstate init` "
            "or pass --dir (or set PLANSTATE_DIR)"
        )

    @classmethod
    def init(
        cls,
        project: str | Path,
        *,
        title: str | None = None,
        phases: list[str] | tuple[str, ...] = (),
        first_phase: int = 1,
        initiative: str | None = None,
        actor: str | None = None,
        next_action: str | None = None,
    ) -> Workspace:
        """Create `.planning/` in `project`: STATE.md, history, record folders, .gitignore and .gitattributes."""
        from planstate.store.history import GITATTRIBUTES
        from planstate.text import templates

        project_dir = absolute(project)
        target = project_dir / PLANNING
        if target.exists() or target.is_symlink():
            raise UsageError(f"{target} already exists; planstate init never overwrites a workspace")
        if not project_dir.is_dir():
            raise UsageError(f"{project_dir} is not a folder")
        title = title or project_dir.name.replace("-", " ").replace("_", " ").strip() or "Untitled"
        files = _initiative_files(
            slug=initiative or slugify(title),
            title=title,
            phases=phases,
            first_phase=first_phase,
            actor=actor or default_actor(),
            next_action=next_action,
            shown=f"{PLANNING}/{STATE_FILE}",
            render_regions=lambda doc: _render_new_regions(doc, None),
        )
        files[".gitignore"] = templates.render("gitignore.j2", {}).encode("utf-8")
        files[".gitattributes"] = GITATTRIBUTES.encode("utf-8")
        materialize(files, project_dir, target)
        return cls(target, actor=actor)

    # ------------------------------------------------------------ paths and reading

    @property
    def target(self) -> Initiative:
        """The initiative this workspace acts on: `--initiative`, else the active one (see initiatives.py)."""
        if self._target is None:
            from planstate.store.initiatives import choose

            choice = choose(self, self.initiative_slug)
            self._target, self._guessed = choice.initiative, choice.guessed
            self.save_cache()
        if self._writing and self._guessed:
            raise self._unsure()
        return self._target

    def _unsure(self) -> UsageError:
        """The refusal of a write whose target was only guessed: no initiative is active and several could be meant."""
        return UsageError(f"no initiative is active; pass --initiative SLUG (initiatives: {', '.join(self._guessed)})")

    def forget_target(self) -> None:
        """Choose the target initiative again on next use (after a command changed which one is active)."""
        if self.initiative_slug is None:
            self._target = None
            self._guessed = ()

    @property
    def state_path(self) -> Path:
        """The STATE.md of the initiative this workspace acts on."""
        return self.target.state_path

    def cached_data(self, path: Path) -> Any:
        """The front matter of a workspace file as plain data, parsed once per content of the file (see cache.py)."""
        data = read_bytes(path, self.root, self.root.parent)
        shown = self.display(path)
        return self.cached_parse(path, data, lambda raw: _front_matter(raw, shown))

    def cached_parse(self, path: Path, raw: bytes, parse: Callable[[bytes], Any]) -> Any:
        """The front matter of `raw` (the bytes of `path` already read), from the cache when this content was
        parsed before, else `parse(raw)`, which is then remembered."""
        return self._front_matter_cache().get(raw, self._cache_key(path), parse)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the workspace lock (re-entrant) for a write that needs no transaction."""
        with self._lock:
            yield

    def remember(self, path: Path, content: bytes, data: Any) -> None:
        """Put the data of a file this process just wrote (as `content`) into the front-matter cache."""
        self._front_matter_cache().put(content, self._cache_key(path), data)

    def _front_matter_cache(self) -> FrontMatterCache:
        if self._cache is None:
            from planstate.store.cache import FrontMatterCache

            self._cache = FrontMatterCache(self.root / LOCAL / "cache", "front-matter")
        return self._cache

    def _cache_key(self, path: Path) -> str:
        try:
            return str(path.absolute().relative_to(self.root))
        except ValueError:
            return str(path)

    def save_cache(self) -> None:
        """Write the front-matter cache if reading filled it (best effort)."""
        if self._cache is not None:
            self._cache.save()

    def display(self, path: Path) -> str:
        """A path as shown to people: relative to the project folder that holds `.planning/`."""
        try:
            return str(path.relative_to(self.root.parent))
        except ValueError:
            return str(path)

    def read_document(self, path: Path) -> Document:
        """Read and parse one workspace file."""
        data = read_bytes(path, self.root, self.root.parent)
        return Document.from_bytes(data, self.display(path))

    def state_document(self) -> Document:
        """The parsed STATE.md (front matter not yet validated)."""
        doc = self.read_document(self.state_path)
        doc.require_front_matter()
        return doc

    def state(self) -> State:
        """The validated state, as a typed model over a private copy of the data."""
        doc = self.state_document()
        check(doc, "state")
        return State(doc.data)

    def get(self, path: str) -> Any:
        """The value at a dotted path of STATE.md's front matter."""
        return self.state_document().get(path)

    # ------------------------------------------------------------ writing

    @contextmanager
    def transaction(self, *, explicit: bool = False) -> Iterator[Transaction]:
        """A write: hold the lock, let the caller load and change files, then validate and write them all.

        Nothing is written when the body raises or any changed file fails validation. See transaction.py.
        Refused when no initiative is active and the target would be a guess among several: a write
        must name its initiative (`--initiative`), reads may still show the most recently changed one.
        `explicit=True` is for operations that name every initiative they change themselves
        (`initiative new`, `initiative switch`): the workspace's target, guessed or not, plays no part.
        """
        from planstate.store.transaction import Transaction

        guarded = not explicit
        if guarded and self._target is not None and self._guessed:
            raise self._unsure()
        with self._lock:
            self._writing += guarded
            try:
                tx = Transaction(self)
                yield tx
                tx.commit()
            finally:
                self._writing -= guarded

    @contextmanager
    def edit(self) -> Iterator[State]:
        """A transaction on STATE.md alone: lock, read, let the caller change the state, validate, write atomically.

        Nothing is written when the body raises, when validation fails, or when nothing changed.
        """
        with self.transaction() as tx:
            yield tx.state()

    def render_new_regions(self, doc: Document) -> None:
        """Render the generated regions of a new STATE.md made in this workspace (its template overrides apply)."""
        _render_new_regions(doc, self.root)

    def refresh_regions(self, doc: Document, initiative: Initiative) -> None:
        """Re-render STATE.md's generated regions before a write; a body without region markers costs nothing."""
        if "planstate:begin" not in doc.body:
            return
        from planstate.render.regions import refresh

        refresh(self, doc, initiative)

    def set(self, values: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> list[Change]:
        """Set fields (dotted path to value) in one transaction; return what changed.

        Values are typed (`3`, `None`, `["a"]`); `set_text` takes them as typed on a command line.
        """
        pairs = self._pairs(values)
        targets = [(path, self._writable_path(path)) for path, _value in pairs]
        for (path, segs), (_path, value) in zip(targets, pairs, strict=True):
            self._refuse_blank(value, lookup(State, tuple(segs))[1], path)
        with self.edit() as state:
            data = state.to_data()
            before = {path: _peek(data, segs) for path, segs in targets}
            for (_path, segs), (_same, value) in zip(targets, pairs, strict=True):
                set_in(data, segs, value)
        return _changes(before, {path: _peek(data, segs) for path, segs in targets})

    def set_text(self, values: Mapping[str, str] | Iterable[tuple[str, str]]) -> list[Change]:
        """Set fields from text as typed on a command line (see docs/cli.md "Values"), in one transaction."""
        from planstate.model.coerce import from_text

        pairs = self._pairs(values)
        typed = []
        for path, text in pairs:
            segs = self._writable_path(path)
            typed.append((path, self._typed(from_text, text, lookup(State, tuple(segs))[1], path)))
        return self.set(typed)

    def append(self, path: str, value: Any) -> list[Change]:
        """Append an item to a list field."""
        segs = self._writable_path(path)
        _field, kind = lookup(State, tuple(segs))
        if not isinstance(kind, ListOf):
            raise UsageError("is not a list; use set", file=self._shown(), field=path)
        self._refuse_blank(value, kind.item, path)
        with self.edit() as state:
            data = state.to_data()
            before = _peek(data, segs)
            items = list(before) if isinstance(before, list) else []
            items.append(value)
            set_in(data, segs, items)
        return _changes({path: before}, {path: items})

    def append_text(self, path: str, text: str) -> list[Change]:
        """Append an item given as text typed on a command line (see docs/cli.md "Values") to a list field."""
        from planstate.model.coerce import from_text

        segs = self._writable_path(path)
        kind = lookup(State, tuple(segs))[1]
        if not isinstance(kind, ListOf):
            raise UsageError("is not a list; use set", file=self._shown(), field=path)
        return self.append(path, self._typed(from_text, text, kind.item, path))

    def _pairs(self, values: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
        """The (path, value) pairs of a write; the same field twice (`phases.0` and `phases[0]` too) is refused."""
        pairs = list(values.items()) if isinstance(values, Mapping) else list(values)
        seen: dict[str, str] = {}
        for path, _value in pairs:
            key = format_path(parse_path(path))
            if key in seen:
                raise UsageError(
                    f"{path!r} is given twice (as {seen[key]!r} too); set each field once",
                    file=self._shown(),
                    field=key,
                )
            seen[key] = path
        return pairs

    def _refuse_blank(self, value: Any, kind: Kind[Any] | None, path: str) -> None:
        """Refuse text that is empty or only spaces for a field that must hold text (a title, a phase name)."""
        from planstate.model.schema import Str

        if isinstance(kind, Str) and kind.min_length > 0 and isinstance(value, str) and not value.strip():
            raise UsageError("must not be empty or only spaces", file=self._shown(), field=path)

    def _typed(self, convert: Any, text: str, kind: Kind[Any] | None, path: str) -> Any:
        """Convert command-line text for the field at `path`; its errors name STATE.md and the field."""
        try:
            return convert(text, kind, field=path)
        except UsageError as exc:
            raise UsageError(exc.message, file=self._shown(), field=exc.field or path) from None

    def unset(self, path: str) -> list[Change]:
        """Remove a field (an optional key or a list item)."""
        segs = self._writable_path(path)
        field, _kind = lookup(State, tuple(segs))
        if field is not None and field.required and not isinstance(segs[-1], int) and field.name == segs[-1]:
            raise UsageError("is required and cannot be removed", file=self._shown(), field=path)
        with self.edit() as state:
            data = state.to_data()
            before = _peek(data, segs)
            if not delete_in(data, segs):
                raise UsageError("has no value to remove", file=self._shown(), field=path)
        return [Change(path, before, None, removed=True)]

    def _writable_path(self, path: str) -> list[Any]:
        """Check that a path names a field planstate lets a person set; return its segments."""
        segs = parse_path(path)
        field, kind = lookup(State, tuple(segs))
        if kind is None:
            raise UsageError(
                "is not a field of STATE.md (see `planstate schema state` for the fields)",
                file=self._shown(),
                field=format_path(segs),
            )
        if field is not None and field.derived:
            raise self._refusal(segs, "is derived and recomputed on every write; change its source instead")
        managed = _managed(segs)
        if managed is not None:
            raise self._refusal(segs, managed)
        return segs

    def _refusal(self, segs: list[Any], message: str) -> UsageError:
        """A refusal to write the field at `segs`, located at its line in STATE.md when the file has it."""
        line = column = None
        with contextlib.suppress(PlanstateError):  # a file that cannot be read: the refusal stands on its own
            line, column = self.state_document().locate(list(segs))
        return UsageError(message, file=self._shown(), line=line, column=column, field=format_path(segs))

    def _shown(self) -> str:
        """STATE.md as shown in messages."""
        return self.display(self.state_path)

    # ------------------------------------------------------------ records: decisions, blockers, sessions

    @property
    def decision(self) -> DecisionAPI:
        """The decision commands: `ws.decision.add(...)`, `.list()`, `.show(id)`, `.supersede(id, by=...)`."""
        from planstate.ops.decisions import DecisionAPI

        return DecisionAPI(self)

    @property
    def blocker(self) -> BlockerAPI:
        """The blocker commands: `ws.blocker.add(...)`, `.list()`, `.show(id)`, `.activate`, `.bypass`, `.resolve`."""
        from planstate.ops.blockers import BlockerAPI

        return BlockerAPI(self)

    @property
    def session(self) -> SessionAPI:
        """The session commands: `ws.session.start()`, `.heartbeat()`, `.end()`, `.list()`, `.show(id)`, `.reap()`."""
        from planstate.ops.sessions import SessionAPI

        return SessionAPI(self)

    # ------------------------------------------------------------ phases, position, lifecycle, initiatives

    @property
    def phase(self) -> PhaseAPI:
        """The phase commands: `ws.phase.start(n)`, `.complete(n, checkpoint=, evidence=)`, `.fail`, `.retry`..."""
        from planstate.ops.phases import PhaseAPI

        return PhaseAPI(self)

    @property
    def task(self) -> TaskAPI:
        """The task commands: `ws.task.start(text, plan=, wave=)`, `ws.task.done(next=)`."""
        from planstate.ops.position import TaskAPI

        return TaskAPI(self)

    @property
    def initiative(self) -> InitiativeAPI:
        """The initiative commands: `ws.initiative.new(slug, ...)`, `.list(all=)`, `.switch(slug, reason=)`."""
        from planstate.ops.initiatives import InitiativeAPI

        return InitiativeAPI(self)

    def position(
        self,
        *,
        phase: int | Unset = UNSET,
        plan: int | str | Unset | None = UNSET,
        plan_name: str | Unset | None = UNSET,
        task: str | Unset | None = UNSET,
        wave: int | Unset | None = UNSET,
        status: str | Unset = UNSET,
        step: str | Unset | None = UNSET,
    ) -> Edited:
        """Set position fields in one transaction; None clears a field, an omitted one stays as it is."""
        from planstate.ops.position import set_position

        return set_position(
            self, phase=phase, plan=plan, plan_name=plan_name, task=task, wave=wave, status=status, step=step
        )

    def next(self, text: str) -> Edited:
        """Set the next action."""
        from planstate.ops.position import set_next

        return set_next(self, text)

    def context(
        self,
        *,
        files: list[str] | tuple[str, ...] = (),
        implementations: list[str] | tuple[str, ...] = (),
        questions: list[str] | tuple[str, ...] = (),
        answered: list[str] | tuple[str, ...] = (),
        clear_files: bool = False,
        clear_implementations: bool = False,
        clear_questions: bool = False,
    ) -> Edited:
        """Change the resume context: clear lists, remove answered questions, append new items (no duplicates)."""
        from planstate.ops.position import update_context

        return update_context(
            self,
            files=files,
            implementations=implementations,
            questions=questions,
            answered=answered,
            clear_files=clear_files,
            clear_implementations=clear_implementations,
            clear_questions=clear_questions,
        )

    def transition(
        self,
        command: str,
        reason: str | None = None,
        context: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> Transitioned:
        """Apply a lifecycle command (see planstate.ops.lifecycle.TABLE) to the target initiative."""
        from planstate.ops.initiatives import transition

        return transition(self, command, reason=reason, context=context, details=details)

    def pause(self, reason: str | None = None, context: str | None = None) -> Transitioned:
        """Pause the initiative on purpose; `context` says what was being worked on (default: the task)."""
        return self.transition("pause", reason, context)

    def suspend(self, reason: str | None = None, context: str | None = None) -> Transitioned:
        """Suspend the initiative because of a circumstance (a restart, a lost connection)."""
        return self.transition("suspend", reason, context)

    def resume(self, reason: str | None = None) -> Transitioned:
        """Make a paused, suspended or abandoned initiative active again."""
        return self.transition("resume", reason)

    def error(self, reason: str | None = None, details: dict[str, Any] | None = None) -> Transitioned:
        """Record a recoverable error: the message (`reason`), its time, and optional details."""
        return self.transition("error", reason, details=details)

    def fail(self, reason: str | None = None) -> Transitioned:
        """Give up on the initiative (it can be retried)."""
        return self.transition("fail", reason)

    def retry(self, reason: str | None = None) -> Transitioned:
        """Make an initiative in error or failed active again."""
        return self.transition("retry", reason)

    def complete(self, reason: str | None = None) -> Transitioned:
        """Complete the initiative explicitly (every phase must be completed or skipped)."""
        return self.transition("complete", reason)

    def abandon(self, reason: str | None = None) -> Transitioned:
        """Mark the initiative abandoned (it can be resumed)."""
        return self.transition("abandon", reason)

    def archive(self, reason: str | None = None) -> Transitioned:
        """Archive the initiative: a soft delete, hidden from lists unless asked for."""
        return self.transition("archive", reason)

    def reopen(self, reason: str | None = None) -> Transitioned:
        """Make a completed or archived initiative active again."""
        return self.transition("reopen", reason)

    # ------------------------------------------------------------ generated regions, checks and the watcher

    def render(self, *, check: bool = False, force: bool = False) -> RenderReport:
        """Re-render STATE.md's generated regions (every initiative's, or `--initiative`'s); `check` writes nothing.

        Hand-edited regions are kept unless `force`. See regions.py and docs/checks.md.
        """
        from planstate.render.result import RenderReport
        from planstate.store.initiatives import discover

        targets = [self.target] if self.initiative_slug else discover(self.root)
        return RenderReport([self.render_initiative(i, check=check, force=force) for i in targets])

    def render_initiative(self, initiative: Initiative, *, check: bool = False, force: bool = False) -> RenderedFile:
        """Re-render one initiative's STATE.md regions under the workspace lock (`check`: compute only)."""
        from planstate.render.result import render_file

        if check:
            return render_file(self, initiative, force=force)
        with self._lock:
            return render_file(self, initiative, force=force, write=True)

    def check(self, *, fix: bool = False, diff: bool = False, stale_after: float | None = None) -> CheckReport:
        """Check every file for drift (docs/checks.md); `fix` applies the safe fixes, `diff` includes their changes."""
        from planstate.check import checks

        after = checks.STALE_AFTER if stale_after is None else stale_after
        return checks.check(self, fix_findings=fix, diff=diff, stale_after=after)

    def git_install(self) -> GitSetupReport:
        """Write planstate's lines into `.planning/.gitattributes` and this clone's git config for the merge driver and
        the textconv, idempotently (docs/cli.md, `planstate git install`)."""
        from planstate.vcs import gitsetup

        return gitsetup.install(self)

    def git_uninstall(self) -> GitSetupReport:
        """Remove what `git_install` wrote, and nothing else."""
        from planstate.vcs import gitsetup

        return gitsetup.uninstall(self)

    def git_status(self) -> GitSetupStatus:
        """Whether planstate's merge driver and textconv are installed here (attributes and this clone's config)."""
        from planstate.vcs import gitsetup

        return gitsetup.status(self)

    def watch(
        self,
        emit: Callable[[dict[str, Any]], None],
        *,
        fix: bool = False,
        stale_after: float | None = None,
        interval: float | None = None,
        debounce: float | None = None,
        stop: threading.Event | None = None,
    ) -> None:
        """Watch the workspace and call `emit` with an event per finding that appears or clears, until `stop` is set."""
        import threading

        from planstate.check import checks, watch

        watch.Watcher(
            self,
            emit,
            fix=fix,
            stale_after=checks.STALE_AFTER if stale_after is None else stale_after,
            interval=watch.INTERVAL if interval is None else interval,
            debounce=watch.DEBOUNCE if debounce is None else debounce,
        ).run(stop or threading.Event())

    # ------------------------------------------------------------ git: what changed between revisions

    def diff(self, rev1: str | None = None, rev2: str | None = None) -> SemanticDiff:
        """What changed in `.planning/` (every initiative): HEAD to the working tree without revisions, `rev1` to the
        working tree with one, `rev1` to `rev2` with two; `rev1` may be `A..B`, or `A...B` (from the merge base of A and
        B to B, as `git diff A...B`). UsageError when a revision does not exist or the workspace is not in a git
        repository."""
        from planstate.vcs import semdiff, snapshot

        if rev1 is not None and ".." in rev1:
            if rev2 is not None:
                raise UsageError(f"give either the range {rev1!r} or two revisions, not both")
            symmetric = "..." in rev1
            rev1, _, rev2 = rev1.partition("..." if symmetric else "..")
            rev1, rev2 = rev1 or "HEAD", rev2 or "HEAD"
            if symmetric:  # as `git diff A...B`: from where B left A to B
                base = snapshot.merge_base(self.root, rev1, rev2)
                old = snapshot.at_revision(self.root, base, label=f"merge base of {rev1} and {rev2}")
                return semdiff.compare(old, snapshot.at_revision(self.root, rev2))
        old = snapshot.at_revision(self.root, rev1 or "HEAD")
        new = snapshot.working_tree(self.root) if rev2 is None else snapshot.at_revision(self.root, rev2)
        return semdiff.compare(old, new)

    # ------------------------------------------------------------ summaries and checks

    def status(self) -> dict[str, Any]:
        """Where the initiative is: the summary `planstate status` prints."""
        doc = self.state_document()
        check(doc, "state")
        state = State(doc.data)
        recompute(state)  # on a private copy: report true values even if the file's copies are stale
        position = state.position
        current = phase_at(state, position.phase) if position.exists() else None
        progress = state.progress
        lifecycle = state.lifecycle
        return {
            "file": doc.path,
            "initiative": state.initiative,
            "title": state.title,
            "lifecycle": lifecycle.state,
            "lifecycle_since": to_json(lifecycle.since),
            "lifecycle_reason": lifecycle.reason,
            "lifecycle_by": lifecycle.by,
            "lifecycle_context": lifecycle.context,
            "complete": is_complete(state),
            "completed_at": to_json(lifecycle.completed_at),
            "error": to_json(lifecycle.error._data()) if lifecycle.error is not None else None,
            "current_phase": position.phase if position.exists() else None,
            "current_phase_name": current.name if current else None,
            "current_phase_status": current.status if current else None,
            "current_phase_started": to_json(current.started) if current else None,
            "current_phase_checkpoint": current.checkpoint if current else None,
            "phases_total": progress.phases_total if progress.exists() else 0,
            "phases_completed": progress.phases_completed if progress.exists() else 0,
            "percent": progress.percent if progress.exists() else 0,
            "bar": progress.bar if progress.exists() else progress_bar(0),
            "position": to_json(position._data()) if position.exists() else None,
            "next_action": state.next_action,
            "open_questions": list(state.resume_context.open_questions),
            "updated": to_json(state.updated),
        }

    def brief(self, *, now: datetime | None = None) -> Brief:
        """The resume brief of the target initiative (what `planstate resume` prints; see resume.py)."""
        from planstate.report.brief import brief

        return brief(self, now=now)

    def files(self) -> list[tuple[str, Path]]:
        """Every planning file of every initiative with its kind: each STATE.md first, then its records."""
        from planstate.store import recordfiles
        from planstate.store.initiatives import discover

        out: list[tuple[str, Path]] = []
        for initiative in discover(self.root):
            out.append(("state", initiative.state_path))
            for kind in RECORD_FOLDERS:
                out.extend((kind, p) for p in recordfiles.files(initiative.folder(kind)))
            if initiative.history_path.exists():
                out.append(("history", initiative.history_path))
        return out

    def validate(self) -> tuple[int, list[PlanstateError]]:
        """Validate every file; return how many files were checked and every problem found."""
        from planstate.store import history

        problems: list[PlanstateError] = []
        files = self.files()
        for kind, path in files:
            try:
                if kind == "history":
                    problems.extend(history.read(path, self.display(path), self.root)[1])
                    continue
                doc = self.read_document(path)
                doc.require_front_matter()
                problems.extend(located(doc, problems_for(kind, doc.data)))
            except PlanstateError as exc:
                problems.append(exc)
        problems.extend(self._initiative_problems())
        return len(files), problems

    def _initiative_problems(self) -> list[PlanstateError]:
        """Workspace-wide rules: at most one active initiative; a sub-initiative's folder matches its slug."""
        from planstate.store.initiatives import discover, summarize

        summaries = [summarize(self, i) for i in discover(self.root)]
        self.save_cache()
        out: list[PlanstateError] = []
        active = [s for s in summaries if s.state == "active"]
        for extra in active[1:]:
            doc = self.read_document(extra.initiative.state_path)
            line, col = doc.locate("lifecycle.state")
            others = ", ".join(s.slug for s in active if s is not extra)
            out.append(
                PlanstateError(
                    f"is active, but so is {others}; at most one initiative may be active",
                    file=doc.path,
                    line=line,
                    column=col,
                    field="lifecycle.state",
                )
            )
        for s in summaries:
            data = self.cached_data(s.initiative.state_path) if s.problem is None else None
            slug = data.get("initiative") if isinstance(data, dict) else None
            if s.initiative.folder_slug is not None and isinstance(slug, str) and slug != s.initiative.folder_slug:
                doc = self.read_document(s.initiative.state_path)
                line, col = doc.locate("initiative")
                out.append(
                    PlanstateError(
                        f"is {slug!r} but the folder is initiatives/{s.initiative.folder_slug}/; they must match",
                        file=doc.path,
                        line=line,
                        column=col,
                        field="initiative",
                    )
                )
        return out


def _front_matter(raw: bytes, shown: str) -> Any:
    """Parse a planning file's bytes and return its front matter as plain data."""
    doc = Document.from_bytes(raw, shown)
    doc.require_front_matter()
    return doc.data


def _managed(segs: list[Any]) -> str | None:
    """Why a path may not be written directly: it is, is inside, or holds a field only commands change."""
    for depth in range(1, len(segs) + 1):
        field, _kind = lookup(State, tuple(segs[:depth]))
        if field is not None and field.managed and segs[depth - 1] == field.name:
            return f"is changed only by commands: {field.managed}"
    inner = _managed_inside(lookup(State, tuple(segs))[1])
    if inner is not None:
        suffix, commands = inner
        return f"holds {format_path(segs)}{suffix}, which is changed only by commands: {commands}"
    return None


def _managed_inside(kind: Any, prefix: str = "") -> tuple[str, str] | None:
    """The first managed field within a value of `kind` (a nested model or a list of them), with its commands."""
    while isinstance(kind, Nullable):
        kind = kind.inner
    if isinstance(kind, ListOf):
        return _managed_inside(kind.item, prefix + "[]")
    if not isinstance(kind, Nested):
        return None
    for name, field in kind.model.fields.items():
        if field.managed:
            return f"{prefix}.{name}", field.managed
        found = _managed_inside(field.kind, f"{prefix}.{name}")
        if found is not None:
            return found
    return None


def _render_new_regions(doc: Document, planning: Path | None) -> None:
    """Render the regions of a new STATE.md (a view: imported only when the template has regions)."""
    from planstate.render.regions import render_new

    render_new(doc, planning)


def initiative_files(**options: Any) -> dict[str, bytes]:
    """planstate.store.scaffold.initiative_files, rendering regions with the built-in renderer (for older callers)."""
    planning = options.get("planning")
    options.setdefault("render_regions", lambda doc: _render_new_regions(doc, planning))
    return _initiative_files(**options)


def _planning_of(path: Path) -> tuple[Path | None, str | None]:
    """The `.planning/` folder a `--dir` names, and the initiative it selects (inside `initiatives/<slug>/`)."""
    if not path.is_dir():
        return None, None
    for candidate in (path, path.resolve()):
        if candidate.name == PLANNING:
            return candidate, None
        if (candidate / PLANNING).is_dir():
            return candidate / PLANNING, None
        for folder in candidate.parents:
            if folder.name == PLANNING and folder.is_dir():
                inside = candidate.relative_to(folder).parts
                return folder, inside[1] if len(inside) >= 2 and inside[0] == "initiatives" else None
    return None, None


def _peek(data: Any, segs: list[Any]) -> Any:
    return get_in(data, segs)[1]


def _changes(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    return [Change(p, before[p], after[p]) for p in before if not same(before[p], after[p])]


def absolute(path: str | Path) -> Path:
    """An absolute path; a clear error when the current folder was deleted under the process."""
    try:
        return Path(path).absolute()
    except FileNotFoundError:
        raise UsageError("the current folder no longer exists; cd to an existing folder") from None
