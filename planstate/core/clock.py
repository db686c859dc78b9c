"""The current time, in whole UTC seconds; PLANSTATE_NOW pins it for tests and examples."""

from __future__ import annotations

import os
from datetime import UTC, date, datetime, timedelta
from typing import Any

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def now() -> datetime:
    """Return the current UTC time without microseconds (or PLANSTATE_NOW when set)."""
    pinned = os.environ.get("PLANSTATE_NOW")
    if pinned:
        try:
            value = datetime.fromisoformat(pinned.strip())
        except ValueError:
            from planstate.core.errors import UsageError

            raise UsageError(f"PLANSTATE_NOW {pinned!r} is not an ISO 8601 timestamp (2026-11-20T09:00:00Z)") from None
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC)
    return datetime.now(UTC).replace(microsecond=0)


def parse_datetime(value: Any) -> datetime | None:
    """Read a timestamp from a datetime, a date or an ISO 8601 string; None if it is none of these."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def instant(value: Any) -> int | None:
    """A timestamp (as `parse_datetime` reads it) in whole microseconds since the epoch: these integers order as the
    timestamps do, exactly; None when it is no timestamp."""
    parsed = parse_datetime(value)
    return None if parsed is None else (parsed - _EPOCH) // _MICROSECOND
