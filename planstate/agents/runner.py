"""`planstate hooks run EVENT --agent AGENT`: what a hook does, and what it prints for the agent.

A hook must never break an agent's session: `run` returns the text to print whatever happens (no workspace, a
broken STATE.md, garbage on stdin) and writes nothing unless the workspace reads cleanly. What it remembers per
agent session lives in `.planning/.local/hooks/<agent>-<digest of the session id>/` (machine-local):

- `session`: the planstate session the agent session runs in (`claim-*` decides which hook starts it when two
  installs fire at once);
- `compactions`: how many times the agent compacted its context;
- `brief-<source>-<n>`: the brief was injected for that source after n compactions (created exclusively, so two
  hooks firing at once inject it once).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.agents.spec import Agent
from planstate.core.errors import PlanstateError
from planstate.core.files import atomic_write, create_exclusive
from planstate.core.layout import LOCAL

if TYPE_CHECKING:
    from planstate.workspace import Workspace

BUDGET = 2400  # characters of the brief: about 600 tokens
HARD_CAP = 8000  # characters of everything a hook adds to the agent's context, whatever the brief holds
HOOKS = Path(LOCAL, "hooks")
MAX_STDIN = 1 << 20  # an agent's event is a few hundred bytes; more is not an event

HEADER = (
    "planstate keeps this project's plan in .planning/. {session}Record progress with `planstate task done`, "
    "decisions with `planstate decision add`, blockers with `planstate blocker add`; `planstate resume` shows "
    "this brief again.\n\n"
)


def run(a: Agent, event: str, stdin: bytes) -> str:
    """Do what the hook of `event` does for agent `a` and return what to print; never raises."""
    try:
        context = _handle(a, event, _event(stdin))
    except Exception:  # a hook must never fail the session: nothing to say is the answer to anything unexpected
        context = None
    return a.output(event, context)


def _event(stdin: bytes) -> dict[str, Any]:
    """The agent's event (a JSON object on stdin), or an empty one for anything else."""
    try:
        data = json.loads(stdin[:MAX_STDIN].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _handle(a: Agent, event: str, data: dict[str, Any]) -> str | None:
    """Act on one event; the context to give the agent, or None."""
    roles = a.roles(event)
    session_id = data.get("session_id")
    if not roles or not isinstance(session_id, str) or not session_id:
        return None
    ws = _workspace(data)
    if ws is None:
        return None
    ledger = ws.ctx.root / HOOKS / f"{a.name}-{hashlib.sha256(session_id.encode()).hexdigest()[:16]}"
    if set(roles) <= {"beat", "end"} and not (ledger / "session").exists():
        return None  # no planstate session to beat or end: done without reading a file (most events are these)
    try:
        ws.state()  # a write to a workspace that does not read cleanly could make things worse: say so, write nothing
    except PlanstateError as exc:
        if "start" in roles:
            return f"planstate could not brief this session: {exc}. Run `planstate check`, then `planstate resume`."
        return None
    context = None
    if "compact" in roles:
        _note_compaction(ledger)
    if "start" in roles:
        context = _start(ws, a, ledger, str(data.get("source") or "startup"))
    if "beat" in roles:
        _beat(ws, ledger)
    if "reinject" in roles:
        context = _reinject(ws, ledger)
    if "end" in roles:
        _end(ws, a, ledger, str(data.get("reason") or "exit"))
    return context


def _workspace(data: dict[str, Any]) -> Workspace | None:
    """The workspace of the agent's folder (`cwd` of the event, else the process's), or None when there is none."""
    import os

    from planstate.workspace import Workspace

    cwd = data.get("cwd")
    start = Path(cwd) if isinstance(cwd, str) and cwd and os.path.isdir(cwd) else None
    try:
        return Workspace.find(start)
    except PlanstateError:
        return None


def _start(ws: Workspace, a: Agent, ledger: Path, source: str) -> str | None:
    """Start (or reuse) the planstate session of this agent session; the brief, once per source (and, for
    `compact`, once per compaction)."""
    from planstate.report.budget import fit

    marker = ledger / f"brief-{_safe(source)}-{_compactions(ledger) if source == 'compact' else 0}"
    if marker.exists():  # briefed already (a second install, or Codex resuming a thread): keep the session alive
        with contextlib.suppress(PlanstateError):
            _session(ws, a, ledger)
        return None
    b = ws.brief()
    if b.trust:
        problems = "; ".join(str(t.get("problem")) for t in b.trust[:3])
        return f"planstate could not brief this session: {problems}. Run `planstate check`, then `planstate resume`."
    try:
        session = _session(ws, a, ledger)
    except PlanstateError:  # a completed initiative takes no new session; the brief still helps
        session = None
    if not _claim(marker):
        return None  # a hook of this session firing at the same moment injects it (two installs)
    _, text = fit(ws.ctx, b, BUDGET)
    shown = f"Your planstate session is {session}. " if session else ""
    return (HEADER.format(session=shown) + text)[:HARD_CAP]


def _session(ws: Workspace, a: Agent, ledger: Path) -> str | None:
    """The active planstate session of this agent session, started when there is none."""
    current = _read(ledger / "session")
    if current:
        try:
            ws.session.heartbeat(current)  # refuses a session that ended or was reaped: then start another
            return current
        except PlanstateError:
            pass
    if not _claim(ledger / f"claim-{current or 'first'}"):
        return None  # a hook firing at the same moment starts it
    try:
        entry = ws.session.start(agent=a.name)
    except BaseException:
        (ledger / f"claim-{current or 'first'}").unlink(missing_ok=True)  # the next event may try again
        raise
    atomic_write(ledger / "session", entry.id.encode())
    return entry.id


def _beat(ws: Workspace, ledger: Path) -> None:
    """Mark the planstate session of this agent session alive."""
    current = _read(ledger / "session")
    if current:
        with contextlib.suppress(PlanstateError):
            ws.session.heartbeat(current)


def _note_compaction(ledger: Path) -> None:
    """Count a compaction: the brief it dropped is owed again."""
    ledger.mkdir(parents=True, exist_ok=True)
    atomic_write(ledger / "compactions", str(_compactions(ledger) + 1).encode())


def _reinject(ws: Workspace, ledger: Path) -> str | None:
    """The brief again after a compaction (agents without a SessionStart on compaction), once per compaction."""
    from planstate.report.budget import fit

    count = _compactions(ledger)
    if count == 0 or not _claim(ledger / f"brief-compact-{count}"):
        return None
    b = ws.brief()
    if b.trust:
        return None
    _, text = fit(ws.ctx, b, BUDGET)
    current = _read(ledger / "session")
    shown = f"Your planstate session is {current}. " if current else ""
    return (HEADER.format(session=shown) + text)[:HARD_CAP]


def _end(ws: Workspace, a: Agent, ledger: Path, reason: str) -> None:
    """End the planstate session of this agent session and forget the session's notes."""
    current = _read(ledger / "session")
    if current:
        with contextlib.suppress(PlanstateError):  # it ended already: nothing to do
            ws.session.end(current, handoff_reason=f"the {a.title} session ended ({reason[:60]})")
    shutil.rmtree(ledger, ignore_errors=True)


def _compactions(ledger: Path) -> int:
    """How many compactions this agent session has had."""
    text = _read(ledger / "compactions")
    return int(text) if text and text.isdigit() else 0


def _claim(path: Path) -> bool:
    """Create `path` if nobody has: True for the one caller that did."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        create_exclusive(path, b"")
    except FileExistsError:
        return False
    return True


def _read(path: Path) -> str | None:
    """A small ledger file's text, or None."""
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def _safe(word: str) -> str:
    """A source name fit for a file name."""
    return "".join(c for c in word if c.isalnum())[:20] or "unknown"
