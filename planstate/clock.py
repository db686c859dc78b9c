"""The current time, in whole UTC seconds; PLANSTATE_NOW pins it for tests and examples."""

from __future__ import annotations

import os
from datetime import UTC, datetime


def now() -> datetime:
    """Return the current UTC time without microseconds (or PLANSTATE_NOW when set)."""
    pinned = os.environ.get("PLANSTATE_NOW")
    if pinned:
        value = datetime.fromisoformat(pinned)
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC)
    return datetime.now(UTC).replace(microsecond=0)
