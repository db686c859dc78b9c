"""Initiatives of a workspace: where each one lives, which one is active, which one a command acts on.

The first initiative is `.planning/` itself (its STATE.md and record folders); further ones
live in `.planning/initiatives/<slug>/` with the same layout. At most one is `active`. A
command acts on the one it names, else the active one, else (none active) the one whose
lifecycle changed last; that last one is a guess when several could be meant, and a
transaction refuses to write on a guess.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.core.clock import parse_datetime
from planstate.core.errors import PlanstateError, UsageError
from planstate.core.layout import ARCHIVE, HISTORY_FILE, INITIATIVES, STATE_FILE
from planstate.model.kinds import RECORD_FOLDERS, SLUG

if TYPE_CHECKING:
    from planstate.store.context import Context

_SLUG = re.compile(SLUG)


class Initiative(NamedTuple):
    """Where one initiative lives: its folder (`.planning/` or `.planning/initiatives/<slug>/`)."""

    dir: Path
    folder_slug: str | None  # None for the root initiative, whose slug is in its STATE.md

    @property
    def root(self) -> bool:
        """Tell whether this is the workspace's first initiative (`.planning/` itself)."""
        return self.folder_slug is None

    @property
    def state_path(self) -> Path:
        """Its STATE.md."""
        return self.dir / STATE_FILE

    @property
    def history_path(self) -> Path:
        """Its history.jsonl."""
        return self.dir / HISTORY_FILE

    def folder(self, kind: str) -> Path:
        """Its folder of records of `kind` (decision, blocker, session)."""
        return self.dir / RECORD_FOLDERS[kind]

    def archive(self, kind: str) -> Path:
        """Its folder of archived records of `kind`: `archive/` inside the kind's folder."""
        return self.dir / RECORD_FOLDERS[kind] / ARCHIVE


class Summary(NamedTuple):
    """What selection and `initiative list` need to know about an initiative, read cheaply."""

    initiative: Initiative
    slug: str
    title: str
    state: str
    since: datetime | None
    problem: PlanstateError | None = None  # why its STATE.md could not be read


def discover(planning: Path) -> list[Initiative]:
    """Every initiative of the workspace at `planning`: the root first, then the others by slug."""
    found = [Initiative(planning, None)]
    folder = planning / INITIATIVES
    if folder.is_dir():
        for sub in sorted(folder.iterdir()):
            # a dot-folder is a staging folder of `initiative new` (being created, or left by a crash)
            if not sub.name.startswith(".") and sub.is_dir() and (sub / STATE_FILE).is_file():
                found.append(Initiative(sub, sub.name))
    return found


def summarize(ctx: Context, initiative: Initiative) -> Summary:
    """Read an initiative's slug, title and lifecycle state (through the store)."""
    try:
        data: Any = ctx.cached_data(initiative.state_path)
    except PlanstateError as exc:
        slug = initiative.folder_slug or "(root)"
        return Summary(initiative, slug, "", "unknown", None, exc)
    data = data if isinstance(data, dict) else {}
    lifecycle: dict[str, Any] = data["lifecycle"] if isinstance(data.get("lifecycle"), dict) else {}
    named = data.get("initiative")
    state = lifecycle["state"] if isinstance(lifecycle.get("state"), str) else "unknown"
    return Summary(
        initiative,
        initiative.folder_slug or (named if isinstance(named, str) else "(root)"),
        str(data.get("title") or ""),
        state,
        parse_datetime(lifecycle.get("since")),
    )


class Choice(NamedTuple):
    """The initiative a command acts on, and whether that was a guess."""

    initiative: Initiative
    guessed: tuple[str, ...] = ()  # no initiative is active and several could be meant: their slugs


def choose(ctx: Context, explicit: str | None) -> Choice:
    """The initiative a command acts on (see the module docstring), noting when the fallback guessed among several."""
    found = discover(ctx.root)
    if explicit is None and len(found) == 1:
        return Choice(found[0])  # the common case costs no parsing at all
    summaries = [summarize(ctx, i) for i in found]
    if explicit is not None:
        return Choice(named(summaries, explicit).initiative)
    return _active_or_latest(summaries)


def active_ones(summaries: list[Summary]) -> list[Summary]:
    """The active initiatives, for a write that changes which one is: an unreadable one's own error instead, since
    it may be active too."""
    for s in summaries:
        if s.problem is not None:
            raise s.problem
    return [s for s in summaries if s.state == "active"]


def named(summaries: list[Summary], slug: str) -> Summary:
    """The initiative whose slug is `slug`; UsageError listing the slugs there are when none is."""
    for s in summaries:
        if s.slug == slug:
            return s
    known = ", ".join(s.slug for s in summaries)
    raise UsageError(f"no initiative {slug!r} in this workspace (initiatives: {known})")


def _active_or_latest(summaries: list[Summary]) -> Choice:
    """The active initiative (UsageError when several are), else the one whose lifecycle changed last: a guess
    when several could be meant (archived ones only when all are). With none readably active, an initiative whose
    STATE.md cannot be read may be the active one: its own error, rather than another initiative's state."""
    active = [s for s in summaries if s.state == "active"]
    if len(active) > 1:
        names = ", ".join(s.slug for s in active)
        raise UsageError(
            f"{len(active)} initiatives are active ({names}); at most one may be. "
            "Pass initiative=SLUG, or make one active with `planstate initiative switch SLUG`",
            argument="initiative",
        )
    if active:
        return Choice(active[0].initiative)
    unreadable = [s.problem for s in summaries if s.problem is not None]
    if unreadable:
        raise unreadable[0]  # it may be the active one: answering from another initiative would be a guess
    candidates = [s for s in summaries if s.state != "archived"] or summaries
    epoch = datetime.min.replace(tzinfo=UTC)
    chosen = max(candidates, key=lambda s: s.since or epoch).initiative
    return Choice(chosen, tuple(s.slug for s in candidates) if len(candidates) > 1 else ())


def select(ctx: Context, explicit: str | None) -> Initiative:
    """The initiative a command acts on (see the module docstring)."""
    return choose(ctx, explicit).initiative


def check_slug(slug: str) -> str:
    """Return `slug` if it is a valid initiative slug, else raise UsageError."""
    if not _SLUG.fullmatch(slug):
        raise UsageError(f"initiative id {slug!r} must be a slug: lowercase letters, digits and '-', at most 63")
    return slug
