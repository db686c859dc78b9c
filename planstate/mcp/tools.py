"""What each tool does: a verb of the command line with the CLI's words, and the API call it makes.

A tool that groups a command's subcommands (`decision`, `phase` …) takes them as `action`; the answer names the
command as the CLI does (`decision add`), so `data` is what `planstate decision add --json` prints. What tools/list
says of each tool, and its input schema, is mcp/catalog.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from planstate.core.errors import EXIT_FINDINGS, EXIT_OK, UsageError
from planstate.mcp.arguments import Arguments
from planstate.model.kinds import KINDS

if TYPE_CHECKING:
    from planstate.ops.records import Listing
    from planstate.workspace import Workspace


@dataclass
class Answer:
    """What a tool did: the command as the CLI names it, its `data`, exit code and warnings, and a short text."""

    command: str
    data: Any
    exit: int = EXIT_OK
    warnings: list[str] = field(default_factory=list)
    text: str | None = None  # instead of the data as JSON (the resume brief)
    workspace: str | None = None  # the workspace a call made (`init`), which no workspace was found for


# ---------------------------------------------------------------------------- reading


def resume(ws: Workspace, a: Arguments) -> Answer:
    """`planstate resume [--activate]`: the brief, as text fitted to `budget` and in full as data."""
    from planstate.cli.results import activate, activation_line
    from planstate.report.budget import DEFAULT_BUDGET, MIN_BUDGET, fit

    budget = a.get("budget")
    if budget is not None and budget < MIN_BUDGET:
        raise UsageError(f"budget must be at least {MIN_BUDGET} characters, not {budget}", argument="budget")
    if a.get("reason") is not None and not a.get("activate"):
        raise UsageError("resume reason=R records why it was resumed: add activate=true to resume")
    activated: dict[str, Any] | None = None
    first = None
    if a.get("activate"):
        activated, moved = activate(ws, a.get("reason"))
        first = activation_line(activated, moved)
    full = ws.brief()
    fitted, text = fit(ws.ctx, full, (budget or DEFAULT_BUDGET) - (len(first) + 1 if first else 0))
    shown = fitted if budget is not None else full  # data is complete unless a budget is asked for, as --json
    data = shown.to_dict()
    if activated is not None:
        data["activated"] = activated
    return Answer("resume", data, EXIT_FINDINGS if shown.trust else EXIT_OK, text=f"{first}\n{text}" if first else text)


def status(ws: Workspace, a: Arguments) -> Answer:
    """`planstate status`."""
    return Answer("status", ws.status().to_dict())


def get(ws: Workspace, a: Arguments) -> Answer:
    """`planstate get PATH`: a value of STATE.md's front matter; without a path, the whole front matter."""
    path = a.get("path")
    return Answer("get", ws.get(path) if path is not None else ws.ctx.state_document().data)


def schema(ws: Workspace, a: Arguments) -> Answer:
    """`planstate schema [KIND]`: the JSON Schema of a file kind."""
    from planstate.cli.commands.schema import schema_of

    kind = a.get("kind")
    return Answer("schema", schema_of(kind) if kind else {name: schema_of(name) for name in KINDS})


def check(ws: Workspace, a: Arguments) -> Answer:
    """`planstate check [--fix] [--diff] [--strict]`: drift findings (exit 1 on errors)."""
    from planstate.core.durations import parse

    after = a.get("stale_after")
    report = ws.check(
        fix=bool(a.get("fix")),
        diff=bool(a.get("diff")),
        stale_after=parse(after, "stale_after").total_seconds() if after is not None else None,
    )
    data = report.to_dict()
    if a.get("diff"):
        data["diff"] = "".join(change.diff() for change in report.changes)
    failed = report.errors or (a.get("strict") and report.warnings)
    return Answer("check", data, EXIT_FINDINGS if failed else EXIT_OK)


def diff(ws: Workspace, a: Arguments) -> Answer:
    """`planstate diff [REV1 [REV2]]`: what changed in .planning/, field by field."""
    return Answer("diff", ws.diff(a.get("rev1"), a.get("rev2")).to_dict())


# ---------------------------------------------------------------------------- fields, position, context


def set_(ws: Workspace, a: Arguments) -> Answer:
    """`planstate set` / `append` / `unset`: guarded writes of fields (typed JSON values)."""
    action = a.get("action", "values")
    if action == "values":
        values = a.require("values", action)
        if not values:
            raise UsageError("values must name at least one field", argument="values")
        return Answer("set", ws.set(values).to_dict())
    path = a.require("path", action)
    if action == "append":
        if not a.given("value"):
            raise UsageError("value is required for action 'append'", argument="value")
        return Answer("append", ws.append(path, a.values["value"]).to_dict())
    return Answer("unset", ws.unset(path).to_dict())


POSITION = ("phase", "plan", "plan_name", "task", "wave", "status", "step")


def position(ws: Workspace, a: Arguments) -> Answer:
    """`planstate position [--phase N] …`: show the position, or set the fields given (null clears one)."""
    from planstate.ops.position import parse_plan

    given: dict[str, Any] = {}
    for name in POSITION:
        if not a.given(name):
            continue
        value = a.values[name]
        if name == "plan" and isinstance(value, str):
            value = parse_plan(value)
        elif isinstance(value, str) and not value.strip() and name != "status":
            value = None  # as the command line: empty text clears
        given[name] = value
    if not given:
        return Answer("position", ws.get("position"))
    return Answer("position", ws.position(**given).to_dict())


def task(ws: Workspace, a: Arguments) -> Answer:
    """`planstate task start TEXT` / `task done [--next TEXT]`."""
    from planstate.ops.position import parse_plan

    if a.get("action") == "done":
        return Answer("task done", ws.task.done(next=a.get("next")).to_dict())
    plan = a.get("plan")
    result = ws.task.start(
        a.require("text", "start"), plan=parse_plan(plan) if isinstance(plan, str) else plan, wave=a.get("wave")
    )
    return Answer("task start", result.to_dict())


def next_action(ws: Workspace, a: Arguments) -> Answer:
    """`planstate next [TEXT]`: show or set the next action."""
    text = a.get("text")
    return Answer("next", ws.get("next_action") if text is None else ws.next(text).to_dict())


CONTEXT_LISTS = ("files", "implementations", "questions", "answered")
CONTEXT_CLEARS = ("clear_files", "clear_implementations", "clear_questions")


def context(ws: Workspace, a: Arguments) -> Answer:
    """`planstate context`: show the resume context, or add to it (no duplicates) and clear lists."""
    if not any(a.get(name) for name in (*CONTEXT_LISTS, *CONTEXT_CLEARS)):
        return Answer("context", ws.get("resume_context"))
    result = ws.context(
        files=a.get("files", []),
        implementations=a.get("implementations", []),
        questions=a.get("questions", []),
        answered=a.get("answered", []),
        clear_files=bool(a.get("clear_files")),
        clear_implementations=bool(a.get("clear_implementations")),
        clear_questions=bool(a.get("clear_questions")),
    )
    return Answer("context", result.to_dict())


# ---------------------------------------------------------------------------- phases and the lifecycle


def phase(ws: Workspace, a: Arguments) -> Answer:
    """`planstate phase ACTION N …`: move a phase through its statuses, or change the phase structure."""
    action = a.require("action")
    api = ws.phase
    if action == "add":
        result: Any = api.add(a.require("name", action), after=a.get("after"), before=a.get("before"))
    else:
        number = a.require("number", action)
        if action == "start":
            result = api.start(number)
        elif action == "complete":
            result = api.complete(
                number,
                checkpoint=a.get("checkpoint", "passed"),
                evidence=a.get("evidence") or {},
                next_action=a.get("next_action"),
            )
        elif action == "fail":
            result = api.fail(number, reason=a.require("reason", action))
        elif action == "retry":
            result = api.retry(number)
        elif action == "skip":
            result = api.skip(number, reason=a.get("reason"))
        elif action == "rename":
            result = api.rename(number, a.require("name", action))
        elif action == "remove":
            result = api.remove(number)
        else:
            result = api.move(number, to=a.require("to", action))
    return Answer(f"phase {action}", result.to_dict(), warnings=list(result.warnings))


def lifecycle(ws: Workspace, a: Arguments) -> Answer:
    """`planstate pause|suspend|error|fail|retry|complete|abandon|archive|reopen [--reason R]`."""
    verb = a.require("action")
    if a.get("context") is not None and verb not in ("pause", "suspend"):
        raise UsageError(f"context is for pause and suspend, not {verb}", argument="context")
    if a.get("details") is not None and verb != "error":
        raise UsageError(f"details are for error, not {verb}", argument="details")
    return Answer(verb, ws.transition(verb, a.get("reason"), a.get("context"), a.get("details")).to_dict())


# ---------------------------------------------------------------------------- records and initiatives


def _listing(command: str, listing: Listing) -> Answer:
    """A list command's answer: unreadable and invalid files as warnings (as the CLI), and how many older records
    the page (the API's `limit`) leaves out."""
    from planstate.cli.results import listing_warnings

    warnings = listing_warnings(listing)
    note = listing.more_note("limit=0")
    if note is not None:
        warnings.append(note)
    return Answer(command, listing.to_dict(), warnings=warnings)


def decision(ws: Workspace, a: Arguments) -> Answer:
    """`planstate decision add|list|show|supersede|accept|reject`."""
    action = a.require("action")
    api = ws.decision
    if action == "list":
        listing = api.list(all=bool(a.get("all")), status=a.get("status"), since=a.get("since"), limit=a.get("limit"))
        return _listing("decision list", listing)
    if action == "add":
        entry = api.add(
            context=a.require("context", action),
            decision=a.require("decision", action),
            reason=a.require("reason", action),
            alternatives=a.get("alternatives", []),
            irreversible=bool(a.get("irreversible")),
            supersedes=a.get("supersedes"),
            title=a.get("title"),
            status=a.get("status", "accepted"),
            phase=a.get("phase"),
            request_id=a.get("request_id"),
        )
    elif action == "supersede":
        return Answer("decision supersede", api.supersede(a.require("id", action), a.require("new", action)).to_dict())
    elif action == "show":
        entry = api.show(a.require("id", action))
    elif action == "accept":
        entry = api.accept(a.require("id", action))
    else:
        entry = api.reject(a.require("id", action), reason=a.get("reason"))
    return Answer(f"decision {action}", entry.to_dict(), warnings=list(entry.warnings))


def blocker(ws: Workspace, a: Arguments) -> Answer:
    """`planstate blocker add|list|show|activate|bypass|resolve`."""
    action = a.require("action")
    api = ws.blocker
    if action == "list":
        listing = api.list(status=a.get("status"), all=bool(a.get("all")), since=a.get("since"), limit=a.get("limit"))
        return _listing("blocker list", listing)
    if action == "add":
        entry = api.add(
            description=a.require("description", action),
            affects=a.get("affects", []),
            title=a.get("title"),
            active=bool(a.get("active")),
            blocked_tasks=a.get("blocked_tasks", []),
            request_id=a.get("request_id"),
        )
    elif action == "show":
        entry = api.show(a.require("id", action))
    elif action == "activate":
        entry = api.activate(a.require("id", action), reason=a.get("reason"))
    elif action == "bypass":
        entry = api.bypass(a.require("id", action), workaround=a.require("workaround", action))
    else:
        entry = api.resolve(a.require("id", action), resolution=a.require("resolution", action))
    return Answer(f"blocker {action}", entry.to_dict(), warnings=list(entry.warnings))


def session(ws: Workspace, a: Arguments) -> Answer:
    """`planstate session start|heartbeat|end|list|show|reap`."""
    action = a.require("action")
    api = ws.session
    if action == "list":
        listing = api.list(status=a.get("status"), since=a.get("since"), limit=a.get("limit"))
        return _listing("session list", listing)
    if action == "heartbeat":
        return Answer("session heartbeat", api.heartbeat(a.get("id")).to_dict())
    if action == "reap":
        reaped = api.reap(
            stale_after=a.get("stale_after", "30m"),
            abandon_after=a.get("abandon_after"),
            dry_run=bool(a.get("dry_run")),
        )
        return Answer("session reap", reaped.to_dict(), warnings=[f"skipped {p}" for p in reaped.problems])
    if action == "start":
        entry = api.start(
            agent=a.get("agent"),
            working_on=a.get("working_on"),
            exclusive=bool(a.get("exclusive")),
            request_id=a.get("request_id"),
        )
    elif action == "end":
        entry = api.end(
            a.get("id"),
            completed=a.get("completed", []),
            issues=a.get("issues", []),
            handoff_reason=a.get("handoff_reason"),
            notes=a.get("notes"),
            context_usage=a.get("context_usage"),
        )
    else:
        entry = api.show(a.require("id", action))
    return Answer(f"session {action}", entry.to_dict(), warnings=list(entry.warnings))


def init(a: Arguments) -> Answer:
    """`planstate init` in the project `dir`: a new workspace with its first initiative (`slug` names it)."""
    from planstate.cli.commands.init import create

    ws, data, warnings = create(
        a.get("dir"),
        title=a.get("title"),
        phases=a.get("phases", []),
        first_phase=a.get("first_phase", 1),
        initiative=a.get("slug") or a.get("initiative"),  # as `planstate init --initiative SLUG`
        actor=a.get("by"),
        next_action=a.get("next_action"),
    )
    return Answer("init", data, warnings=warnings, workspace=str(ws.root))


def initiative(ws: Workspace, a: Arguments) -> Answer:
    """`planstate initiative new|list|switch`."""
    action = a.require("action")
    api = ws.initiative
    if action == "list":
        return Answer("initiative list", api.list(all=bool(a.get("all"))).to_dict())
    if action == "switch":
        return Answer("initiative switch", api.switch(a.require("slug", action), reason=a.get("reason")).to_dict())
    created = api.new(
        a.get("slug"),  # without one, made from the title, as the command line does
        title=a.get("title"),
        phases=a.get("phases", []),
        first_phase=a.get("first_phase", 1),
        switch=bool(a.get("switch")),
    )
    return Answer("initiative new", created.to_dict())
