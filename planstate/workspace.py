"""The public API: a `.planning/` workspace, found like git finds `.git`, read and changed in transactions.

`Workspace` is what a user calls; each method runs one operation of a lower layer on the
workspace's `Context` (`ws.ctx`, store/context.py), which is what those layers receive.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.model.kinds import UNSET, State, Unset
from planstate.model.validation import check
from planstate.store.context import Context, Regions, locate

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable
    from datetime import datetime

    from planstate.check.findings import Report as CheckReport
    from planstate.check.validate import Validation
    from planstate.interop.plan import Planned
    from planstate.interop.write import Imported
    from planstate.ops.archiving import RecordsAPI
    from planstate.ops.blockers import BlockerAPI
    from planstate.ops.decisions import DecisionAPI
    from planstate.ops.fields import Edited, Fields
    from planstate.ops.initiatives import InitiativeAPI, Transitioned
    from planstate.ops.phases import PhaseAPI
    from planstate.ops.position import TaskAPI
    from planstate.ops.sessions import SessionAPI
    from planstate.ops.tasks import Ready
    from planstate.render.result import RenderReport
    from planstate.report.brief import Brief
    from planstate.report.status import Status
    from planstate.store.initiatives import Initiative
    from planstate.store.transaction import Transaction
    from planstate.text.document import Document
    from planstate.vcs.diffresult import SemanticDiff
    from planstate.vcs.gitsetup import Report as GitSetupReport
    from planstate.vcs.gitsetup import Status as GitSetupStatus

__all__ = ["Workspace"]


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
        self.ctx = Context(  # what the layers below see: the folder, lock, cache, target (store/context.py)
            root,
            regions=REGIONS,
            lock_timeout=lock_timeout,
            initiative=initiative,
            actor=actor,
        )

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
        planning, selected = locate(explicit, start)
        return cls(planning, lock_timeout=lock_timeout, initiative=initiative or selected, actor=actor)

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
        from planstate.store.scaffold import create_workspace

        target = create_workspace(
            project,
            title=title,
            phases=phases,
            first_phase=first_phase,
            initiative=initiative,
            actor=actor,
            next_action=next_action,
            render_regions=lambda doc: _render_new(doc, None),
        )
        return cls(target, actor=actor)

    # ------------------------------------------------------------ where it is, reading

    @property
    def root(self) -> Path:
        """The `.planning/` folder."""
        return self.ctx.root

    @property
    def actor(self) -> str:
        """Who acts: recorded in the history and in new records."""
        return self.ctx.actor

    @property
    def initiative_slug(self) -> str | None:
        """The initiative named when the workspace was opened; None: the active one is acted on."""
        return self.ctx.initiative_slug

    @property
    def target(self) -> Initiative:
        """The initiative this workspace acts on: the one named, else the active one (see initiatives.py)."""
        return self.ctx.target

    @property
    def state_path(self) -> Path:
        """The STATE.md of the initiative this workspace acts on."""
        return self.ctx.state_path

    def state(self) -> State:
        """The validated state, as a typed model over a private copy of the data."""
        doc = self.ctx.state_document()
        check(doc, "state")
        return State(doc.data)

    def get(self, path: str) -> Any:
        """The value at a dotted path of STATE.md's front matter (a phase by its number: `phases.2.name`)."""
        return self._fields().get(path)

    # ------------------------------------------------------------ writing

    @contextmanager
    def transaction(self, *, explicit: bool = False) -> Iterator[Transaction]:
        """A write: hold the lock, let the caller load and change files, then validate and write them all.

        Nothing is written when the body raises or any changed file fails validation. See transaction.py.
        Refused when no initiative is active and the target would be a guess among several: a write
        must name its initiative, reads may still show the most recently changed one.
        `explicit=True` is for operations that name every initiative they change themselves
        (`initiative new`, `initiative switch`): the workspace's target, guessed or not, plays no part.
        """
        with self.ctx.transaction(explicit=explicit) as tx:
            yield tx

    @contextmanager
    def edit(self) -> Iterator[State]:
        """A transaction on STATE.md alone: lock, read, let the caller change the state, validate, write atomically.

        Nothing is written when the body raises, when validation fails, or when nothing changed.
        """
        with self.transaction() as tx:
            yield tx.state()

    def set(self, values: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> Edited:
        """Set fields (dotted path to value) in one transaction; return what changed.

        Values are typed (`3`, `None`, `["a"]`); `set_text` takes them as typed on a command line.
        """
        return self._fields().set(values)

    def set_text(self, values: Mapping[str, str] | Iterable[tuple[str, str]]) -> Edited:
        """Set fields from text as typed on a command line (see docs/cli.md "Values"), in one transaction."""
        return self._fields().set_text(values)

    def append(self, path: str, value: Any) -> Edited:
        """Append an item to a list field."""
        return self._fields().append(path, value)

    def append_text(self, path: str, text: str) -> Edited:
        """Append an item given as text typed on a command line (see docs/cli.md "Values") to a list field."""
        return self._fields().append_text(path, text)

    def unset(self, path: str) -> Edited:
        """Remove a field (an optional key or a list item)."""
        return self._fields().unset(path)

    def _fields(self) -> Fields:
        from planstate.ops.fields import Fields

        return Fields(self.ctx)

    # ------------------------------------------------------------ records: decisions, blockers, sessions

    @property
    def decision(self) -> DecisionAPI:
        """The decision commands: `ws.decision.add(...)`, `.list()`, `.show(id)`, `.supersede(old, new)`."""
        from planstate.ops.decisions import DecisionAPI

        return DecisionAPI(self.ctx)

    @property
    def blocker(self) -> BlockerAPI:
        """The blocker commands: `ws.blocker.add(...)`, `.list()`, `.show(id)`, `.activate`, `.bypass`, `.resolve`."""
        from planstate.ops.blockers import BlockerAPI

        return BlockerAPI(self.ctx)

    @property
    def session(self) -> SessionAPI:
        """The session commands: `ws.session.start()`, `.heartbeat()`, `.end()`, `.list()`, `.show(id)`, `.reap()`."""
        from planstate.ops.sessions import SessionAPI

        return SessionAPI(self.ctx)

    @property
    def records(self) -> RecordsAPI:
        """What applies to every kind of record: `ws.records.archive(before=...)`."""
        from planstate.ops.archiving import RecordsAPI

        return RecordsAPI(self.ctx)

    # ------------------------------------------------------------ phases, position, lifecycle, initiatives

    @property
    def phase(self) -> PhaseAPI:
        """The phase commands: `ws.phase.start(n)`, `.complete(n, checkpoint=, evidence=)`, `.fail`, `.retry`..."""
        from planstate.ops.phases import PhaseAPI

        return PhaseAPI(self.ctx)

    @property
    def task(self) -> TaskAPI:
        """The task commands: `ws.task.start(text, plan=, wave=)`, `ws.task.done(next=)`, and the task records:
        `ws.task.add(title, phase=, after=, wave=)`, `ws.task.list(all=, status=, phase=)`."""
        from planstate.ops.position import TaskAPI

        return TaskAPI(self.ctx)

    @property
    def initiative(self) -> InitiativeAPI:
        """The initiative commands: `ws.initiative.new(slug, ...)`, `.list(all=)`, `.switch(slug, reason=)`."""
        from planstate.ops.initiatives import InitiativeAPI

        return InitiativeAPI(self.ctx)

    def ready(self, *, phase: int | None = None) -> Ready:
        """The ready queue (`planstate ready`): pending tasks whose dependencies are done and that no blocker stops,
        by wave, then age."""
        from planstate.ops.tasks import ready

        return ready(self.ctx, phase=phase)

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
            self.ctx, phase=phase, plan=plan, plan_name=plan_name, task=task, wave=wave, status=status, step=step
        )

    def next(self, text: str) -> Edited:
        """Set the next action."""
        from planstate.ops.position import set_next

        return set_next(self.ctx, text)

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
            self.ctx,
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

        return transition(self.ctx, command, reason=reason, context=context, details=details)

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
        """Re-render STATE.md's generated regions (every initiative's, or the named one's); `check` writes nothing.

        Hand-edited regions are kept unless `force`. See regions.py and docs/checks.md.
        """
        from planstate.render.result import render_all

        return render_all(self.ctx, check=check, force=force)

    def check(self, *, fix: bool = False, diff: bool = False, stale_after: float | None = None) -> CheckReport:
        """Check every file for drift (docs/checks.md); `fix` applies the safe fixes, `diff` includes their changes."""
        from planstate.check import checks

        after = checks.STALE_AFTER if stale_after is None else stale_after
        return checks.check(self.ctx, fix_findings=fix, diff=diff, stale_after=after)

    def validate(self) -> Validation:
        """Validate every file; the result holds how many files were checked and every problem found."""
        from planstate.check.validate import validate

        return validate(self.ctx)

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
        """Watch the workspace and call `emit` with an event per finding that appears or clears, until `stop` is
        set."""
        import threading

        from planstate.check import watch
        from planstate.check.checks import STALE_AFTER

        watch.Watcher(
            self.ctx,
            emit,
            fix=fix,
            stale_after=STALE_AFTER if stale_after is None else stale_after,
            interval=watch.INTERVAL if interval is None else interval,
            debounce=watch.DEBOUNCE if debounce is None else debounce,
        ).run(stop or threading.Event())

    # ------------------------------------------------------------ git

    def git_install(self) -> GitSetupReport:
        """Write planstate's lines into `.planning/.gitattributes` and this clone's git config for the merge driver and
        the textconv, idempotently (docs/cli.md, `planstate git install`)."""
        from planstate.vcs import gitsetup

        return gitsetup.install(self.ctx)

    def git_uninstall(self) -> GitSetupReport:
        """Remove what `git_install` wrote, and nothing else."""
        from planstate.vcs import gitsetup

        return gitsetup.uninstall(self.ctx)

    def git_status(self) -> GitSetupStatus:
        """Whether planstate's merge driver and textconv are installed here (attributes and this clone's config), and
        whether each configured command runs planstate from a plain shell (docs/cli.md, `planstate git status`)."""
        from planstate.vcs import gitsetup

        return gitsetup.status(self.ctx)

    def diff(self, rev1: str | None = None, rev2: str | None = None) -> SemanticDiff:
        """What changed in `.planning/` (every initiative): HEAD to the working tree without revisions, `rev1` to the
        working tree with one, `rev1` to `rev2` with two; `rev1` may be `A..B`, or `A...B` (from the merge base of A and
        B to B, as `git diff A...B`). UsageError when a revision does not exist or the workspace is not in a git
        repository."""
        from planstate.vcs.semdiff import between

        return between(self.root, rev1, rev2)

    # ------------------------------------------------------------ importing

    def import_from(
        self,
        source: str,
        path: str | Path,
        *,
        dry_run: bool = False,
        on_plan: Callable[[Imported], None] | None = None,
    ) -> Imported:
        """Import another tool's plans into this workspace (`planstate import SOURCE PATH`, docs/import.md):
        found again by their origin on a second import, so nothing is created twice; `dry_run` writes nothing;
        `on_plan` is shown what will be done before anything is written."""
        from planstate.interop.sources import read
        from planstate.interop.write import run

        return run(self.ctx, read(source, path), dry_run=dry_run, on_plan=on_plan)

    @classmethod
    def init_from(
        cls,
        project: str | Path,
        source: str,
        path: str | Path,
        *,
        actor: str | None = None,
        dry_run: bool = False,
        on_plan: Callable[[Imported], None] | None = None,
    ) -> Imported:
        """Create `.planning/` in `project` from another tool's plans: its current work becomes the first
        initiative (as `init` makes it), the rest further initiatives; `dry_run` only says what it would do, and
        `on_plan` is shown that before anything is written."""
        from planstate.interop.sources import read
        from planstate.interop.write import into_new

        def create(main: Planned) -> Context:
            phases = [p["name"] for p in main.phases]
            made = cls.init(
                project,
                title=main.title,
                phases=phases,
                first_phase=main.first_phase,
                initiative=main.slug,
                actor=actor,
            )
            return made.ctx

        return into_new(read(source, path), create, dry_run=dry_run, on_plan=on_plan)

    # ------------------------------------------------------------ summaries

    def status(self) -> Status:
        """Where the initiative is: the summary `planstate status` prints."""
        from planstate.report.status import status

        return status(self.ctx)

    def brief(self, *, now: datetime | None = None) -> Brief:
        """The resume brief of the target initiative (what `planstate resume` prints; see report/brief.py)."""
        from planstate.report.brief import brief

        return brief(self.ctx, now=now)


def _refresh(ctx: Context, doc: Document, initiative: Initiative, touched: Collection[str] | None) -> None:
    """Re-render an existing STATE.md's regions (a view: imported only when the file has regions)."""
    from planstate.render.regions import refresh

    refresh(ctx, doc, initiative, touched=touched)


def _render_new(doc: Document, planning: Path | None) -> None:
    """Render the regions of a new STATE.md (a view: imported only when the template has regions)."""
    from planstate.render.regions import render_new

    render_new(doc, planning)


REGIONS = Regions(refresh=_refresh, render_new=_render_new)
