"""Durations: one grammar for every argument that takes one (`90s`, `30m`, `1.5h`, `1h30m`, `2d`, `1w`) and one way
of showing them to people (`45s`, `12m`, `2h 30m`, `3d 4h`)."""

from __future__ import annotations

import math
import re
from datetime import timedelta

from planstate.core.errors import UsageError

_UNITS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}
_NUMBER = r"(\d+(?:\.\d+)?)"
_PART = re.compile(_NUMBER + r"([wdhms])")
_WHOLE = re.compile(r"(?:\d+(?:\.\d+)?[wdhms][ \t]*)+")
# Longer durations are refused: a window that far back (or a threshold that far ahead) means a typo, and
# subtracting it from now would run past the calendar Python can represent.
MAX_SECONDS = 100 * 365 * 86400
EXAMPLES = "90s, 30m, 1.5h, 1h30m, 2d, 1w"


def parse(text: str, argument: str | None = None) -> timedelta:
    """Read a duration such as `30m`, `1.5h` or `1h30m`; a UsageError about `argument` (the parameter `text` was
    given as, named first in the message) when it is not one."""
    cleaned = text.strip().lower()
    subject = f"{argument} {text!r}" if argument else repr(text)
    if not _WHOLE.fullmatch(cleaned):
        raise UsageError(
            f"{subject} is not a duration; write numbers with units (s, m, h, d, w), e.g. {EXAMPLES}",
            argument=argument,
        )
    seconds = sum(float(amount) * _UNITS[unit] for amount, unit in _PART.findall(cleaned))
    if seconds <= 0:
        raise UsageError(f"{subject} must be longer than zero", argument=argument)
    if not math.isfinite(seconds) or seconds > MAX_SECONDS:
        raise UsageError(f"{subject} is too long; durations are at most 100 years", argument=argument)
    whole = round(seconds)
    return timedelta(seconds=whole if abs(seconds - whole) < 1e-9 else seconds)


def show(seconds: float | timedelta) -> str:
    """A duration for people: `45s` below a minute, then whole minutes (`12m`, `2h 30m`), days above 48 hours
    (`3d 4h`). Times are floored: a phase that ran 59 minutes 59 seconds ran `59m`."""
    value = seconds.total_seconds() if isinstance(seconds, timedelta) else float(seconds)
    whole = max(0, math.floor(value)) if math.isfinite(value) else 0
    if whole < 60:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 60:
        return f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h {minutes}m" if minutes else f"{hours}h"
    days, hours = divmod(hours, 24)
    return f"{days}d {hours}h" if hours else f"{days}d"
