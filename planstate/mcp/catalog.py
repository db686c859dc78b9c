"""The catalog of tools: each tool's name, what tools/list says of it, its input schema and its call (mcp/tools.py).

Schemas stay small on purpose: every client sends the whole tools/list to its model (docs/mcp.md measures it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from planstate.cli.commands import LIFECYCLE_VERBS
from planstate.mcp.arguments import Arguments
from planstate.mcp.tools import (
    Answer,
    blocker,
    check,
    context,
    decision,
    diff,
    get,
    init,
    initiative,
    lifecycle,
    next_action,
    phase,
    position,
    resume,
    schema,
    session,
    set_,
    status,
    task,
)
from planstate.model.kinds import KINDS, TASK_STATUSES
from planstate.ops.records import PAGE

if TYPE_CHECKING:
    from planstate.workspace import Workspace


@dataclass
class Tool:
    """One tool: its name, what tools/list says of it, and the call it makes on a Workspace."""

    name: str
    description: str
    properties: dict[str, Any]
    call: Callable[[Workspace, Arguments], Answer]
    required: tuple[str, ...] = ()
    read_only: bool = False
    destructive: bool = False
    # The action that makes a workspace, and the call that does it (given the project as `dir`): no workspace is
    # found for it beforehand.
    creates: tuple[str, Callable[[Arguments], Answer]] | None = None

    def makes_workspace(self, given: Arguments) -> bool:
        """Whether this call creates the workspace rather than acting on one."""
        return self.creates is not None and given.get("action") == self.creates[0]

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of its arguments, as tools/list publishes it."""
        schema: dict[str, Any] = {"type": "object", "properties": {**self.properties, **COMMON}}
        if self.required:
            schema["required"] = list(self.required)
        return schema


def _s(description: str | None = None, *, kind: str | list[str] = "string", **more: Any) -> dict[str, Any]:
    """A property of an input schema."""
    out: dict[str, Any] = {"type": kind, **more}
    if description:
        out["description"] = description
    return out


def _action(*names: str) -> dict[str, Any]:
    return _s(kind="string", enum=list(names))


TEXTS = {"type": "array", "items": {"type": "string"}}
FLAG = {"type": "boolean"}
WHOLE = {"type": "integer"}
COMMON = {
    "dir": _s("project or .planning/ folder (default: server's)"),
    "initiative": _s("initiative slug (default: the active one)"),
}
SINCE = _s("date, timestamp or duration back (2d, 12h)")
LIMIT = _s(f"newest N (default {PAGE})", kind="integer")
REQUEST = _s("retry key: the same key answers with the record already made")


def _tools() -> list[Tool]:
    """Every tool, in the order tools/list gives them (reading first, as an agent starts)."""
    ident = _s("record id or unique prefix")
    status_filter = _s("status filter (add: accepted|proposed)")
    return [
        Tool(
            "resume",
            "Where the work is and what is next: the resume brief. Call first. activate=true resumes a stopped "
            "initiative. exit 1: state not trustworthy.",
            {"activate": FLAG, "reason": _s(), "budget": _s("max characters of the text", kind="integer")},
            resume,
            read_only=False,
        ),
        Tool(
            "status", "Summary: lifecycle, current phase, progress, position, next action.", {}, status, read_only=True
        ),
        Tool(
            "get",
            "A value of STATE.md's front matter by field path (phases.2.status is phase 2); no path: all of it.",
            {"path": _s()},
            get,
            read_only=True,
        ),
        Tool(
            "set",
            "Change STATE.md fields: action values (default: {path: value}), append (path, value to a list), unset "
            "(path). Values are typed JSON.",
            {
                "action": _action("values", "append", "unset"),
                "values": {"type": "object"},
                "path": _s(),
                "value": {},
            },
            set_,
            destructive=True,
        ),
        Tool(
            "position",
            "Show the position, or set the fields given (null clears).",
            {
                "phase": WHOLE,
                "plan": _s(kind=["integer", "string", "null"]),
                "plan_name": _s(kind=["string", "null"]),
                "task": _s(kind=["string", "null"]),
                "wave": _s(kind=["integer", "null"]),
                "status": _action(*TASK_STATUSES),
                "step": _s(kind=["string", "null"]),
            },
            position,
        ),
        Tool(
            "task",
            "start: the task being worked on (status in_progress); done: count it, optionally start next.",
            {
                "action": _action("start", "done"),
                "text": _s(),
                "plan": _s(kind=["integer", "string"]),
                "wave": WHOLE,
                "next": _s(),
            },
            task,
            required=("action",),
        ),
        Tool("next_action", "Show, or set with text, the next action.", {"text": _s()}, next_action),
        Tool(
            "context",
            "Show or add to the resume context: files modified, key implementations, open questions.",
            {
                "files": TEXTS,
                "implementations": TEXTS,
                "questions": TEXTS,
                "answered": _s("questions now answered (removed)", kind="array", items={"type": "string"}),
                "clear_files": FLAG,
                "clear_implementations": FLAG,
                "clear_questions": FLAG,
            },
            context,
        ),
        Tool(
            "phase",
            "Phase N: start, complete (checkpoint, evidence), fail (reason), retry, skip; structure: add (name, "
            "after|before), rename, remove, move (to).",
            {
                "action": _action("start", "complete", "fail", "retry", "skip", "add", "rename", "remove", "move"),
                "number": WHOLE,
                "name": _s(),
                "checkpoint": _action("passed", "failed"),
                "evidence": _s('e.g. {"tests": "41/41"}', kind="object"),
                "next_action": _s(),
                "reason": _s(),
                "after": WHOLE,
                "before": WHOLE,
                "to": WHOLE,
            },
            phase,
            required=("action",),
            destructive=True,
        ),
        Tool(
            "lifecycle",
            "Move the initiative: pause/suspend (context), error (details), fail, retry, complete, abandon, archive, "
            "reopen.",
            {"action": _action(*LIFECYCLE_VERBS), "reason": _s(), "context": _s(), "details": {"type": "object"}},
            lifecycle,
            required=("action",),
            destructive=True,
        ),
        Tool(
            "decision",
            "Decisions: add (context, decision, reason), list, show, supersede (id, new), accept, reject.",
            {
                "action": _action("add", "list", "show", "supersede", "accept", "reject"),
                "id": ident,
                "new": _s("id of the replacement"),
                "context": _s(),
                "decision": _s(),
                "reason": _s(),
                "alternatives": TEXTS,
                "irreversible": FLAG,
                "supersedes": _s(),
                "title": _s(),
                "phase": WHOLE,
                "status": status_filter,
                "all": FLAG,
                "since": SINCE,
                "limit": LIMIT,
                "request_id": REQUEST,
            },
            decision,
            required=("action",),
        ),
        Tool(
            "blocker",
            "Blockers: add (description, affects e.g. 'phase 3'), list, show, activate, bypass (workaround), resolve "
            "(resolution).",
            {
                "action": _action("add", "list", "show", "activate", "bypass", "resolve"),
                "id": ident,
                "description": _s(),
                "affects": TEXTS,
                "blocked_tasks": TEXTS,
                "title": _s(),
                "active": FLAG,
                "reason": _s(),
                "workaround": _s(),
                "resolution": _s(),
                "status": _s(),
                "all": FLAG,
                "since": SINCE,
                "limit": LIMIT,
                "request_id": REQUEST,
            },
            blocker,
            required=("action",),
        ),
        Tool(
            "session",
            "Work sessions: start (agent, working_on), heartbeat, end (completed, issues, handoff_reason), list, "
            "show, reap (stale ones crashed).",
            {
                "action": _action("start", "heartbeat", "end", "list", "show", "reap"),
                "id": _s("session id (default: the active one)"),
                "agent": _s(),
                "working_on": _s(),
                "exclusive": FLAG,
                "completed": TEXTS,
                "issues": TEXTS,
                "handoff_reason": _s(),
                "notes": _s(),
                "context_usage": _s(kind=["string", "number"]),
                "status": _s(),
                "since": SINCE,
                "limit": LIMIT,
                "stale_after": _s(),
                "abandon_after": _s(),
                "dry_run": FLAG,
                "request_id": REQUEST,
            },
            session,
            required=("action",),
        ),
        Tool(
            "initiative",
            "Initiatives: init (a new .planning/ in dir), new (slug or title, phases), list, switch (pause the active "
            "one, resume slug).",
            {
                "action": _action("init", "new", "list", "switch"),
                "slug": _s(),
                "title": _s(),
                "phases": TEXTS,
                "first_phase": WHOLE,
                "next_action": _s(),
                "switch": FLAG,
                "all": FLAG,
                "reason": _s(),
            },
            initiative,
            required=("action",),
            creates=("init", init),
        ),
        Tool(
            "check",
            "Check every file for drift; fix applies the safe fixes. exit 1: errors found.",
            {"fix": FLAG, "diff": FLAG, "strict": FLAG, "stale_after": _s()},
            check,
        ),
        Tool(
            "diff",
            "What changed in .planning/ between git revisions (default HEAD to the working tree), field by field.",
            {"rev1": _s(), "rev2": _s()},
            diff,
            read_only=True,
        ),
        Tool(
            "schema",
            "JSON Schema of a file kind.",
            {"kind": _action(*KINDS)},
            schema,
            read_only=True,
        ),
    ]


TOOLS: Mapping[str, Tool] = {tool.name: tool for tool in _tools()}
NAMES: Sequence[str] = tuple(TOOLS)
