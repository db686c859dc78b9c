"""The brief as text for people: rendered from its template, and fitted to a character budget.

What a budget may drop, and in which order, is `DROP_ORDER`; the heading, the status with the lifecycle's why and
the next action are never dropped (the next action is shortened with an ellipsis only when nothing else is left).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from planstate.core.clock import parse_datetime
from planstate.report.brief import ELLIPSIS, shorten

if TYPE_CHECKING:
    from planstate.report.brief import Brief
    from planstate.store.context import Context

ACTIVATION_LIMIT = 120  # characters of the line `--activate` prints above the brief (it counts toward the budget)
DEFAULT_BUDGET = 4000  # characters of the text brief when no --budget is given

MIN_BUDGET = 400  # below this, a budget cannot keep the heading, the status and a useful next action
# Parts of the brief that a budget may drop, least important first. What is never dropped: the heading, the
# status with the lifecycle's why, and the next action (shortened with an ellipsis only when nothing else is left).
DROP_ORDER = (
    "notes",
    "files_modified",
    "key_implementations",
    "open_questions",
    "timing",
    "decisions",
    "last_session",
    "sessions",
    "checkpoints",
    "blockers",
    "verification",
    "position",
    "current_phase",
    "progress",
)


def duration_text(seconds: float | None) -> str:
    """A duration for the brief: `durations.show`, or `unknown` when there is none."""
    from planstate.core.durations import show

    return "unknown" if seconds is None else show(seconds)


def when_text(value: Any, now: datetime) -> str:
    """A timestamp for people with how long ago it was: `2026-11-21 17:00 UTC (2d 3h ago)`."""
    at = parse_datetime(value)
    if at is None:
        return "unknown"
    ago = (now - at).total_seconds()
    stamp = at.strftime("%Y-%m-%d %H:%M UTC")
    return f"{stamp} ({duration_text(ago)} ago)" if ago >= 0 else stamp


def render_text(ctx: Context, b: Brief) -> str:
    """The brief for people, from the `resume.md.j2` template (users may override it)."""
    from planstate.text import templates

    context = {"b": b.to_dict(), "raw": b, "duration": duration_text, "when": lambda v: when_text(v, b.now)}
    return templates.render("resume.md.j2", context, planning=ctx.root).rstrip("\n") + "\n"


def fit(ctx: Context, b: Brief, budget: int = DEFAULT_BUDGET) -> tuple[Brief, str]:
    """Drop the least important parts until the text fits in `budget` characters; return the brief and its text.

    The status line and the next action are never cut inside: everything else goes first, then the next
    action is shortened with an ellipsis, then the list of problems and long lifecycle texts. Only when
    even that does not fit is the text cut, at a line, and says so.
    """
    text = render_text(ctx, b)
    for part in DROP_ORDER:
        if len(text) <= budget:
            return b, text
        if getattr(b, part) in (None, [], {}):
            continue
        if render_text(ctx, b.without(part, note=False)) == text:
            continue  # it shows nothing (no files left to list, say): "left out" would not be true
        b = b.without(part)
        text = render_text(ctx, b)
    if len(text) > budget and b.next_action and len(b.next_action) > 1:
        b, text = _shorten_next_action(ctx, b, budget)
    if len(text) > budget:
        b = _shorten_the_rest(b)
        text = render_text(ctx, b)
    if len(text) > budget:
        note = "\n(cut to fit the budget; the brief as JSON, or a larger budget, shows everything)\n"
        keep = text[: max(0, budget - len(note))]
        text = (keep[: keep.rfind("\n")] if "\n" in keep else keep).rstrip() + note
        b.dropped.append("text")
    return b, text


def _shorten_next_action(ctx: Context, b: Brief, budget: int) -> tuple[Brief, str]:
    """The brief with the longest start of its next action (and an ellipsis) that fits in `budget`."""
    from dataclasses import replace

    assert b.next_action is not None
    full = b.next_action
    dropped = [*b.dropped, "next_action"]
    low, high = 1, len(full) - 1
    best = replace(b, next_action=full[:1].rstrip() + ELLIPSIS, dropped=dropped)
    while low <= high:
        middle = (low + high) // 2
        trial = replace(b, next_action=full[:middle].rstrip() + ELLIPSIS, dropped=dropped)
        if len(render_text(ctx, trial)) <= budget:
            best, low = trial, middle + 1
        else:
            high = middle - 1
    return best, render_text(ctx, best)


def _shorten_the_rest(b: Brief) -> Brief:
    """The brief with the first problem only (and how many more), and its title and lifecycle texts shortened."""
    from dataclasses import replace

    changes: dict[str, Any] = {"title": shorten(b.title, 60) if b.title else b.title}
    if len(b.trust) > 1:
        more = len(b.trust) - 1
        extra = {"problem": f"and {more} more problem{'s' if more != 1 else ''}", "code": None, "path": None}
        changes["trust"] = [b.trust[0], {**extra, "line": None, "fix": "run `planstate check` to see them all"}]
        changes["dropped"] = [*b.dropped, "trust"]
    if b.lifecycle is not None:
        lifecycle = dict(b.lifecycle)
        for key in ("reason", "context"):
            if lifecycle.get(key):
                lifecycle[key] = shorten(lifecycle[key], 60)
        if lifecycle.get("error"):
            lifecycle["error"] = {**lifecycle["error"], "message": shorten(lifecycle["error"]["message"], 60)}
        changes["lifecycle"] = lifecycle
    return replace(b, **changes)
