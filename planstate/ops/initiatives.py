"""Initiative operations: lifecycle transitions, and creating, listing and switching initiatives.

At most one initiative is active. Every write that makes one active checks the others under the
workspace lock; `initiative switch` pauses the active one before it resumes the other, in one
transaction that writes the paused STATE.md first, so the rule holds at every instant, even
after a crash between the two writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from planstate.core.errors import PlanstateError, UsageError
from planstate.core.layout import INITIATIVES, STATE_FILE
from planstate.model.kinds import to_json
from planstate.ops import lifecycle
from planstate.ops.phaserules import checked_state, refusal
from planstate.store.initiatives import Summary, active_ones, check_slug, discover, named, summarize

if TYPE_CHECKING:
    from pathlib import Path

    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative
    from planstate.store.transaction import Transaction


@dataclass
class Transitioned:
    """One lifecycle transition that was made."""

    initiative: str
    source: str
    target: str
    reason: str | None
    at: datetime | None
    trigger: str

    def to_dict(self) -> dict[str, Any]:
        """The transition as JSON-ready data."""
        data: dict[str, Any] = to_json(
            {
                "initiative": self.initiative,
                "from": self.source,
                "to": self.target,
                "reason": self.reason,
                "at": self.at,
            }
        )
        return data


@dataclass
class Created:
    """A new initiative, and the initiatives `--switch` paused for it."""

    initiative: str
    title: str
    dir: str
    state: str
    paused: list[Transitioned] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data."""
        return {
            "initiative": self.initiative,
            "title": self.title,
            "path": self.dir,
            "lifecycle": {"state": self.state},
            "paused": [t.to_dict() for t in self.paused],
        }


@dataclass
class Listed:
    """One row of `initiative list`."""

    initiative: str
    title: str
    state: str
    since: datetime | None
    dir: str
    current: bool
    problem: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON-ready data."""
        data: dict[str, Any] = to_json(
            {
                "initiative": self.initiative,
                "title": self.title,
                "lifecycle": {"state": self.state, "since": self.since},
                "path": self.dir,
                "current": self.current,
                "problem": self.problem,
            }
        )
        return data


@dataclass
class Listing:
    """The initiatives of a workspace; `hidden` counts archived ones left out."""

    initiatives: list[Listed]
    hidden: int

    def to_dict(self) -> dict[str, Any]:
        """The listing as JSON-ready data."""
        return {"initiatives": [i.to_dict() for i in self.initiatives], "hidden": self.hidden}


@dataclass
class Switched:
    """What `initiative switch` did: the transitions in the order they were written."""

    initiative: str
    already_active: bool
    transitions: list[Transitioned]

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data."""
        return {
            "initiative": self.initiative,
            "already_active": self.already_active,
            "transitions": [t.to_dict() for t in self.transitions],
        }


def transition(
    ctx: Context,
    command: str,
    *,
    reason: str | None = None,
    context: str | None = None,
    details: dict[str, Any] | None = None,
) -> Transitioned:
    """Apply one lifecycle command to the target initiative; refuse a move the table does not allow."""
    if command not in lifecycle.COMMANDS:
        raise UsageError(f"{command!r} is not a lifecycle command; commands: {', '.join(lifecycle.COMMANDS)}")
    if details and command != "error":
        raise UsageError("error details are kept only by the error command")
    initiative = ctx.target
    with ctx.transaction() as tx:
        state = checked_state(tx, initiative)
        target = _allowed(tx, initiative, state.lifecycle.state, command)
        if target == "active":
            _refuse_second_active(ctx, tx, initiative, command)
        source, target = lifecycle.apply(tx, initiative, command, reason=reason, context=context)
        if details and state.lifecycle.error is not None:
            state.lifecycle.error.details = details
    return Transitioned(state.initiative, source, target, reason, state.lifecycle.since, command)


def _allowed(tx: Transaction, initiative: Initiative, source: str, command: str) -> str:
    """The state `command` leads to; a refusal located at lifecycle.state when the table has no such move."""
    try:
        return lifecycle.target_of(source, command)
    except UsageError as exc:
        raise refusal(tx, ["lifecycle", "state"], exc.message, initiative) from None


def _refuse_second_active(ctx: Context, tx: Transaction, initiative: Initiative, command: str) -> None:
    """Refuse to make `initiative` active while another one is (read under the lock, so it is current)."""
    others = [s for s in _summaries(ctx) if s.state == "active" and s.initiative != initiative]
    if not others:
        return
    other = others[0].slug
    own = checked_state(tx, initiative).initiative
    how = (
        f"`planstate initiative switch {own}` pauses it and resumes {own}"
        if command == "resume"
        else f"pause it first (`planstate pause --initiative {other}`)"
    )
    raise refusal(
        tx,
        ["lifecycle", "state"],
        f"cannot {command} {own}: initiative {other} is active and at most one may be; {how}",
        initiative,
    )


def _summaries(ctx: Context) -> list[Summary]:
    found = [summarize(ctx, i) for i in discover(ctx.root)]
    ctx.save_cache()
    return found


class InitiativeAPI:
    """`ws.initiative`: create, list and switch the initiatives of the workspace."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def new(
        self,
        slug: str | None = None,
        *,
        title: str | None = None,
        phases: list[str] | tuple[str, ...] = (),
        first_phase: int = 1,
        switch: bool = False,
    ) -> Created:
        """Create `.planning/initiatives/SLUG/`: active when none is, else paused (unless `switch`); without a
        slug, the one `init` makes from the title."""
        from planstate.store.scaffold import initiative_files, materialize, slugify

        ctx = self.ctx
        if slug is None:
            if title is None or not title.strip():
                needed = "a new initiative needs a slug, or a title to make one from: title=T"
                raise UsageError(needed, argument="title")
            slug = slugify(title)
        check_slug(slug)
        title = _title(slug, title)
        folder = ctx.root / INITIATIVES
        # The outer transaction changes nothing itself: it holds the (re-entrant) workspace lock from
        # the checks, across the commit that pauses the active initiative, to the new folder's rename.
        # It names its initiatives itself, so it never acts on a guessed target.
        with ctx.transaction(explicit=True):
            summaries = _summaries(ctx)
            _refuse_taken(slug, summaries, folder)
            active = active_ones(summaries)
            state = "active" if switch or not active else "paused"
            reason = None if state == "active" else f"created while {active[0].slug} is active"
            files = initiative_files(
                slug=slug,
                title=title,
                phases=phases,
                first_phase=first_phase,
                actor=ctx.actor,
                next_action=None,
                shown=ctx.display(folder / slug / STATE_FILE),
                state=state,
                reason=reason,
                trigger="create",
                planning=ctx.root,
                render_regions=ctx.render_new_regions,
            )
            paused: list[Transitioned] = []
            if switch and active:
                paused = self._pause(active, f"switched to {slug}")
            folder.mkdir(exist_ok=True)
            materialize(files, folder, folder / slug)
        if state == "active":
            ctx.forget_target()  # the new initiative is the active one now: later calls act on it
        return Created(slug, title, ctx.display(folder / slug), state, paused)

    def _pause(self, active: list[Summary], reason: str) -> list[Transitioned]:
        """Pause the given active initiatives in one transaction (committed before the caller goes on)."""
        with self.ctx.transaction(explicit=True) as tx:
            for s in active:
                checked_state(tx, s.initiative)  # refuse a broken STATE.md before changing any
            return _pause_all(tx, active, reason)

    def list(self, *, all: bool = False) -> Listing:
        """The initiatives, root first; archived ones only with `all`."""
        ctx = self.ctx
        summaries = _summaries(ctx)
        try:
            current: Initiative | None = ctx.target
        except PlanstateError:
            current = None  # two active ones, one unreadable, or a slug naming none: list anyway, mark none
        rows = []
        hidden = 0
        for s in summaries:
            if s.state == "archived" and not all:
                hidden += 1
                continue
            shown = ctx.display(s.initiative.dir)
            rows.append(Listed(s.slug, s.title, s.state, s.since, shown, s.initiative == current, _said(s.problem)))
        return Listing(rows, hidden)

    def switch(self, slug: str, *, reason: str | None = None) -> Switched:
        """Pause the active initiative and resume `slug`, in one transaction; refuse before changing anything."""
        ctx = self.ctx
        with ctx.transaction(explicit=True) as tx:
            summaries = _summaries(ctx)  # under the lock: nobody changes them while we decide
            target = _named(summaries, slug)
            if target.state == "active":
                return Switched(slug, True, [])
            active = active_ones(summaries)
            # Load the active ones first: a transaction writes STATE.md files in the order it loaded them.
            for s in active:
                checked_state(tx, s.initiative)
            state = checked_state(tx, target.initiative)
            source = state.lifecycle.state
            if not any(t.command == "resume" for t in lifecycle.allowed(source)):
                raise refusal(tx, ["lifecycle", "state"], _cannot_switch(slug, source, active), target.initiative)
            transitions = _pause_all(tx, active, reason or f"switched to {slug}")
            why_resumed = reason or (f"switched from {', '.join(s.slug for s in active)}" if active else None)
            lifecycle.apply(tx, target.initiative, "resume", reason=why_resumed, trigger="initiative switch")
            transitions.append(
                Transitioned(slug, source, "active", why_resumed, state.lifecycle.since, "initiative switch")
            )
        ctx.forget_target()  # later calls through this context act on the initiative that is active now
        return Switched(slug, False, transitions)


def _title(slug: str, title: str | None) -> str:
    """A new initiative's title: as given (not blank), else its slug in words."""
    title = title if title is not None else slug.replace("-", " ").capitalize()
    if not title.strip():
        raise UsageError("the title must not be empty")
    return title


def _said(problem: PlanstateError | None) -> str | None:
    """An initiative's read problem as listed: the error's one line."""
    return None if problem is None else str(problem)


def _refuse_taken(slug: str, summaries: list[Summary], folder: Path) -> None:
    """Refuse a new initiative's slug that an initiative (or any folder in `initiatives/`) already has."""
    taken = {s.slug for s in summaries}
    if slug in taken or (folder / slug).exists():
        raise UsageError(f"initiative {slug!r} already exists (initiatives: {', '.join(sorted(taken))})")


def _named(summaries: list[Summary], slug: str) -> Summary:
    """The initiative `slug` names; UsageError when there is none, or its STATE.md cannot be read."""
    found = named(summaries, slug)
    if found.problem is not None:
        raise found.problem
    return found


def _pause_all(tx: Transaction, active: list[Summary], reason: str) -> list[Transitioned]:
    """Pause the given active initiatives inside `tx` (`initiative switch`); what each went through."""
    done = []
    for s in active:
        lifecycle.apply(tx, s.initiative, "pause", reason=reason, trigger="initiative switch")
        paused_at = checked_state(tx, s.initiative).lifecycle.since
        done.append(Transitioned(s.slug, "active", "paused", reason, paused_at, "initiative switch"))
    return done


def _cannot_switch(slug: str, source: str, active: list[Summary]) -> str:
    """Why `slug` cannot be switched to, and the commands that get it there."""
    command = next((t.command for t in lifecycle.allowed(source) if t.target == "active"), "reopen")
    steps = f"`planstate {command} --initiative {slug}`"
    if active:
        steps = f"`planstate pause --initiative {active[0].slug}`, then {steps}"
    return f"cannot switch to {slug}: its state is {source} and switching only resumes; {command} it instead: {steps}"
