"""Session heartbeats: a machine-local file per active session whose modification time is its last sign of life.

The files live in `.planning/.local/heartbeats/<id>`, never committed, so liveness never churns git.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.core.errors import UsageError
from planstate.core.layout import LOCAL
from planstate.text.yamltext import format_datetime

if TYPE_CHECKING:
    from planstate.store.context import Context

HEARTBEATS = Path(LOCAL, "heartbeats")  # under .planning/, gitignored with the rest of LOCAL


@dataclass
class Beat:
    """What `session heartbeat` did: which session beat, when, and where the heartbeat file is."""

    id: str
    at: datetime
    heartbeat: Path
    shown: str = ""  # the heartbeat file as shown (`.planning/.local/heartbeats/ID`)

    def to_dict(self) -> dict[str, Any]:
        """The beat as JSON-ready data: the session, when it beat, and its heartbeat file's `path`."""
        return {"id": self.id, "at": format_datetime(self.at), "path": self.shown or str(self.heartbeat)}


def heartbeat_path(ctx: Context, session_id: str) -> Path:
    """Where a session's heartbeat file is (it may not exist)."""
    return ctx.root / HEARTBEATS / session_id


def last_heartbeat(ctx: Context, session_id: str) -> datetime | None:
    """When a session last beat on this machine (its heartbeat file's modification time), or None."""
    try:
        mtime = heartbeat_path(ctx, session_id).stat().st_mtime
    except OSError:
        return None
    return datetime.fromtimestamp(int(mtime), UTC)


def beat(ctx: Context, session_id: str, agent: str, when: datetime) -> Path:
    """Create or touch a heartbeat file, setting its modification time to `when` (planstate's clock)."""
    path = heartbeat_path(ctx, session_id)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            # The content is for people looking at the folder; only the modification time counts.
            path.write_text(f"session {session_id}\nagent {agent}\nhost {os.uname().nodename}\n", encoding="utf-8")
        stamp = when.timestamp()
        os.utime(path, (stamp, stamp))
    except OSError as exc:
        raise UsageError(f"cannot write the heartbeat: {exc.strerror}", file=ctx.display(path)) from None
    return path


def forget(ctx: Context, session_id: str) -> None:
    """Remove the heartbeat of a session that is over; a leftover one is harmless (only active sessions beat)."""
    with contextlib.suppress(OSError):
        heartbeat_path(ctx, session_id).unlink(missing_ok=True)
