"""Python renderings of the built-in templates of the regions the most frequent writes change.

An agent's most common writes (`next`, `context`, `task start`, `task done`, `position`, `set
next_action`) change the `next`, `resume`, `position` or `progress` region (a region whose inputs
changed while its text did not, such as `progress` after a task is counted, is rendered again on
every write until its text changes); every record command (`decision add`,
`blocker add`, `session start|end`) renders the `decisions`, `blockers` or `sessions` region.
Rendering those through Jinja costs the Jinja import, about twice the rest of the command, in
every process. These functions give the
same text as the built-in templates for the same context, so such a write needs no Jinja.
They are used only while the template in effect is exactly the built-in one (its SHA-256 is
listed here); an override in `.planning/templates/` always goes through Jinja. The test suite
renders random contexts both ways and requires the same text, and fails when a built-in
template changes without its rendering here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from planstate.core.digests import sha256_hex
from planstate.text.filters import block, cell, code, day, inline, link, when


def _next(c: dict[str, Any]) -> str:
    """`templates/regions/next.md.j2`."""
    out = [f"{block(c['next_action'])}\n" if c["next_action"] else NO_NEXT_ACTION]
    if c["open_questions"]:
        out.append("\n**Open questions:**\n\n")
        out.extend(f"- {inline(question)}\n" for question in c["open_questions"])
    return "".join(out)


NO_NEXT_ACTION = "_No next action is set (`planstate set next_action TEXT`)._\n"


def _resume(c: dict[str, Any]) -> str:
    """`templates/regions/resume.md.j2`."""
    files, done = c["files_modified"], c["key_implementations"]
    out: list[str] = []
    if files:
        out.append("**Files modified:**\n\n")
        out.extend(f"- {code(path)}\n" for path in files)
    if done:
        if files:
            out.append("\n")
        out.append("**Key implementations:**\n\n")
        out.extend(f"- {inline(item)}\n" for item in done)
    if not files and not done:
        out.append("_Nothing recorded yet (`planstate append resume_context.files_modified PATH`)._\n")
    return "".join(out)


def _position(c: dict[str, Any]) -> str:
    """`templates/regions/position.md.j2`."""
    phase, status = c["phase"], str(c["status"]).replace("_", " ")
    out: list[str] = []
    if phase:
        out.append(f"- **Phase {phase['number']} of {phase['total']}:** {inline(phase['name'])} ({phase['status']})\n")
    else:
        out.append("- **Phase:** none\n")
    if c["plan"] is not None:
        named = f": {inline(c['plan_name'])}" if c["plan_name"] else ""
        out.append(f"- **Plan:** {inline(c['plan'])}{named}\n")
    out.append(f"- **Task:** {inline(c['task'])} ({status})\n" if c["task"] else f"- **Task:** none ({status})\n")
    if c["step"]:
        out.append(f"- **Step:** {inline(c['step'])}\n")
    if c["wave"] is not None:
        out.append(f"- **Wave:** {c['wave']}\n")
    life = c["lifecycle"]
    line = f"- **Lifecycle:** {life['state']}"
    line += f" since {when(life['since'])} UTC" if life["since"] else ""
    line += f" by {inline(life['by'])}" if life["by"] else ""
    line += f": {inline(life['reason'])}" if life["reason"] else ""
    line += f" (was working on: {inline(life['context'])})" if life["context"] else ""
    out.append(line + "\n")
    return "".join(out)


def _progress(c: dict[str, Any]) -> str:
    """`templates/regions/progress.md.j2`."""
    out = f"`{c['bar']}` {c['phases_completed']} of {c['phases_total']} phases completed"
    if c["current_phase"] is not None and c["current_phase_tasks"] is not None:
        done = c["current_phase_completed"] if c["current_phase_completed"] is not None else 0
        out += f"; phase {c['current_phase']}: {done} of {c['current_phase_tasks']} tasks done"
    return out + "\n"


def _decisions(c: dict[str, Any]) -> str:
    """`templates/regions/decisions.md.j2`."""
    items, limit = c["decisions"], c["limit"]
    if not items:
        return "_No decisions recorded._\n"
    out = ["| Date | Decision | What | Why | Status |\n", "|---|---|---|---|---|\n"]
    for d in items[:limit]:
        by = f" by {code(d['superseded_by'])}" if d["superseded_by"] else ""
        kept = "" if d["reversible"] else ", irreversible"
        out.append(
            f"| {day(d['date'])} | {link(d['title'], d['link'])} | {cell(d['decision'])} | {cell(d['reason'])} "
            f"| {d['status']}{by}{kept} |\n"
        )
    if len(items) > limit:
        out.append(_count_line(len(items) - limit, "older decision", "decisions"))
    return "".join(out)


def _blockers(c: dict[str, Any]) -> str:
    """`templates/regions/blockers.md.j2`."""
    items, limit = c["blockers"], c["limit"]
    out: list[str] = []
    for b in items[:limit]:
        affects = f", affects {', '.join(inline(a) for a in b['affects'])}" if b["affects"] else ""
        out.append(
            f"- **{link(b['title'], b['link'])}** {code(b['id'])}, {b['status']} since {when(b['identified'])}"
            f"{affects}\n"
        )
        if b["description"] != b["title"]:
            out.append(f"  - {inline(b['description'])}\n")
        if b["blocked_tasks"]:
            out.append(f"  - Blocked tasks: {'; '.join(inline(t) for t in b['blocked_tasks'])}\n")
        if b["workaround"]:
            out.append(f"  - Workaround: {inline(b['workaround'])}\n")
    if len(items) > limit:
        out.append(_count_line(len(items) - limit, "more open blocker", "blockers"))
    if not items:
        out.append("_No open blockers._\n")
    resolved = c["resolved"]
    if resolved:
        out.append(_count_line(resolved, "resolved blocker", "blockers"))
    return "".join(out)


def _sessions(c: dict[str, Any]) -> str:
    """`templates/regions/sessions.md.j2`."""
    items, limit = c["sessions"], c["limit"]
    if not items:
        return "_No sessions recorded._\n"
    out = ["| Started | Agent | Status | Ended | Worked on | Handoff |\n", "|---|---|---|---|---|---|\n"]
    for s in items[:limit]:
        done = s["completed"]
        counted = f"completed {len(done)} item{'s' if len(done) != 1 else ''}" if done else ""
        worked = "; ".join(part for part in (cell(s["working_on"]), counted) if part)
        out.append(
            f"| {when(s['started'])} | {link(s['agent'], s['link'])} | {s['status']} | {when(s['ended'])} "
            f"| {worked} | {cell(s['handoff_reason'])} |\n"
        )
    if len(items) > limit:
        out.append(_count_line(len(items) - limit, "older session", "sessions"))
    return "".join(out)


def _decision_body(c: dict[str, Any]) -> str:
    """`templates/decision.md.j2`: the body of a new decision file."""
    out = [
        f"# {c['title']}\n\n## Context\n\n{c['context']}\n\n",
        f"## Decision\n\n{c['decision']}\n\n## Why\n\n{c['reason']}\n",
    ]
    if c["alternatives"]:
        out.append("\n## Alternatives considered\n\n")
        out.extend(f"- {alternative}\n" for alternative in c["alternatives"])
    if c["supersedes"]:
        out.append(f"\nSupersedes {c['supersedes']}.\n")
    out.append("\n## Notes\n\n")
    return "".join(out)


def _blocker_body(c: dict[str, Any]) -> str:
    """`templates/blocker.md.j2`: the body of a new blocker file."""
    out = [f"# {c['title']}\n"]
    if c["description"] != c["title"]:
        out.append(f"\n{c['description']}\n")
    if c["affects"]:
        out.append("\nAffects:\n\n")
        out.extend(f"- {item}\n" for item in c["affects"])
    out.append("\n## Notes\n\n")
    return "".join(out)


def _session_body(c: dict[str, Any]) -> str:
    """`templates/session.md.j2`: the body of a new session file."""
    out = [f"# Session {c['id']} ({c['agent']})\n"]
    if c["resumed_from"]:
        out.append(f"\nResuming from {c['resumed_from']} ({c['resumed_status']}).\n")
    if c["working_on"]:
        out.append(f"\nWorking on: {c['working_on']}\n")
    out.append("\n## Notes\n\n")
    return "".join(out)


def _count_line(count: int, what: str, folder: str) -> str:
    """The line under a record region that counts the records it does not list (`3 older decisions in ...`)."""
    return f"\n{count} {what}{'s' if count != 1 else ''} in `{folder}/`.\n"


# The SHA-256 of each built-in template these functions reproduce (tests/test_builtin_regions.py checks them).
RENDERINGS: dict[str, tuple[str, Callable[[dict[str, Any]], str]]] = {
    "next": ("c2393317b7f26199871f63f372a18e05f977fe60ccf6d73e0235b97d42eb09f8", _next),
    "resume": ("7f0ab61754a72b05905f84499f9b565eaed93717f166d4254560bb142411d51a", _resume),
    "position": ("2ca53e2db3a1bb47bf1a03adc96f8b73fc5788b54e3571ceab102940f25ce119", _position),
    "progress": ("553bcaed468ef1e81374e64646361d96d952076c1698ccb730f3f3cb3a2cbac6", _progress),
    "decisions": ("d5ccebc345dc909f3e36e8774249100d1edf215fe7d676009f51aa609c110b39", _decisions),
    "blockers": ("aca28d54e8d098a5f41ecf1e0cfb684a3bb22139d791b947baf777ef08e4d913", _blockers),
    "sessions": ("c21c4f4525fc9288594dda54fb882a054392deea95ea89f593135c25b5bcb824", _sessions),
}


# The same for the bodies of new record files (templates/<kind>.md.j2), by template name: `decision add`,
# `blocker add` and `session start` then import no Jinja at all.
BODIES: dict[str, tuple[str, Callable[[dict[str, Any]], str]]] = {
    "decision.md.j2": ("a36dbd669e0661e81f39c90662ccf687beb4437989aa16e14d2b91cbe7e85e42", _decision_body),
    "blocker.md.j2": ("f910f32a6684e46c29f1633229521c82a01d512f7d73417ce5151ecc320d6527", _blocker_body),
    "session.md.j2": ("0a01c4f8f654d02d6578289059e2606453d352250414ca8726f7d01b730f2fb7", _session_body),
}


def body(name: str, source: str, context: dict[str, Any]) -> str | None:
    """The body of a new record rendered from `context` without Jinja, when `source` (the template `name` in
    effect) is the built-in template this module reproduces; else None."""
    return _reproduced(BODIES, name, source, context)


def render(name: str, source: str, context: dict[str, Any]) -> str | None:
    """The raw text of region `name` rendered from `context` without Jinja, when `source` (the template in
    effect) is the built-in template this module reproduces; else None."""
    return _reproduced(RENDERINGS, name, source, context)


def reproduces(name: str, source: str) -> bool:
    """Tell whether `source` (the template of region `name` in effect) is the built-in one this module renders."""
    known = RENDERINGS.get(name)
    return known is not None and sha256_hex(source.encode("utf-8")) == known[0]


def _reproduced(
    table: dict[str, tuple[str, Callable[[dict[str, Any]], str]]], name: str, source: str, context: dict[str, Any]
) -> str | None:
    """What `table`'s function for `name` renders from `context`, when `source` is the very template it
    reproduces (by its SHA-256); else None (an override goes through Jinja)."""
    known = table.get(name)
    if known is None or sha256_hex(source.encode("utf-8")) != known[0]:
        return None
    return known[1](context)
