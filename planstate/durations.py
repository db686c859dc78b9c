"""Durations written the way people type them: `90s`, `30m`, `2h`, `1d`, `1w`, `1h30m`."""

from __future__ import annotations

import re
from datetime import timedelta

from planstate.errors import UsageError

_UNITS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}
_PART = re.compile(r"(\d+)([wdhms])")
_WHOLE = re.compile(r"(?:\d+[wdhms])+")


def parse(text: str, option: str = "duration") -> timedelta:
    """Read a duration such as `30m` or `1h30m`; UsageError naming `option` when it is not one."""
    cleaned = text.strip().lower()
    if not _WHOLE.fullmatch(cleaned):
        raise UsageError(
            f"{option} {text!r} is not a duration; write a number and a unit (s, m, h, d, w), e.g. 90s, 30m, 1h30m"
        )
    seconds = sum(int(amount) * _UNITS[unit] for amount, unit in _PART.findall(cleaned))
    if seconds <= 0:
        raise UsageError(f"{option} {text!r} must be longer than zero")
    return timedelta(seconds=seconds)


def show(value: timedelta) -> str:
    """Write a duration compactly (`1h30m`, `2d`), the inverse of `parse` for whole seconds."""
    seconds = int(value.total_seconds())
    if seconds <= 0:
        return "0s"
    parts = []
    for unit, size in _UNITS.items():
        if unit == "w":
            continue  # `14d` reads better than `2w` in messages
        amount, seconds = divmod(seconds, size)
        if amount:
            parts.append(f"{amount}{unit}")
    return "".join(parts)
