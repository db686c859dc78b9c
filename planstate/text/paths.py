"""Field paths into front-matter data: the dotted notation (parse and format), phases by number, and reading and
editing by path."""

from __future__ import annotations

import re
from typing import Any

from planstate.core.errors import UsageError

_PATH_TOKEN = re.compile(r"\[(-?\d+)\]|((?:[^.\[\\]|\\.)+)")

Segment = str | int


def parse_path(path: str | list[Segment] | tuple[Segment, ...]) -> list[Segment]:
    """Split a dotted path (`phases.2.status`, `phases[2].status`, `a\\.b`) into segments."""
    if not isinstance(path, str):
        return list(path)
    if not path:
        raise UsageError("empty path")
    segments: list[Segment] = []
    for part in _split_dots(path):
        pos = 0
        while pos < len(part):
            m = _PATH_TOKEN.match(part, pos)
            if not m or m.end() == pos:
                raise UsageError(f"bad path {path!r}")
            if m.group(1) is not None:
                segments.append(int(m.group(1)))
            else:
                segments.append(re.sub(r"\\(.)", r"\1", m.group(2)))
            pos = m.end()
        if not part:
            raise UsageError(f"bad path {path!r}: empty segment")
    return segments


def _split_dots(path: str) -> list[str]:
    """Split on dots that are not escaped with a backslash."""
    parts, buf, i = [], [], 0
    while i < len(path):
        ch = path[i]
        if ch == "\\" and i + 1 < len(path):
            buf.append(path[i : i + 2])
            i += 2
            continue
        if ch == ".":
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
        i += 1
    parts.append("".join(buf))
    return parts


def format_path(segments: list[Segment] | tuple[Segment, ...]) -> str:
    """Join segments back into a dotted path that `parse_path` reads back (indexes as `.2`, the documented form)."""
    return ".".join(re.sub(r"([\\.\[])", r"\\\1", s) if isinstance(s, str) else str(s) for s in segments)


# ---------------------------------------------------------------------------- phases by number
#
# A person names a phase by its number, counted from the initiative's first phase (1, or 0 for a workflow that
# numbers from 0), so `phases.2.status` is phase 2's status wherever a path is read or shown: get, set, check and
# validate messages, textconv, diff and merge markers. The data underneath is a list, indexed from 0; these
# functions are the one place where one becomes the other.

PHASES = "phases"


def first_phase(data: Any) -> int:
    """The number of an initiative's first phase: `structure.first_phase`; for a file without a structure snapshot
    (written by an older tool), 0 when its position is phase 0, or when the phase its position names (by
    `phase_name`, else by being the active one) sits at that index counted from 0 and not from 1; else 1."""
    if not isinstance(data, dict):
        return 1
    structure = data.get("structure")
    first = structure.get("first_phase") if isinstance(structure, dict) else None
    if isinstance(first, int) and not isinstance(first, bool) and first in (0, 1):
        return first
    position, phases = data.get("position"), data.get(PHASES)
    if not isinstance(position, dict) or not isinstance(phases, list):
        return 1
    number = position.get("phase")
    if not isinstance(number, int) or isinstance(number, bool):
        return 1
    if number == 0:
        return 0

    def at(index: int, key: str) -> Any:
        item = phases[index] if 0 <= index < len(phases) else None
        return item.get(key) if isinstance(item, dict) else None

    name = position.get("phase_name")
    key, wanted = ("name", name) if isinstance(name, str) else ("status", "active")
    return 0 if at(number, key) == wanted and at(number - 1, key) != wanted else 1


def _phase_step(segments: list[Segment], data: Any, sign: int) -> list[Segment]:
    """`segments` with the phase number (sign 1) or list index (sign -1) of a `phases` path turned into the other."""
    if len(segments) < 2 or segments[0] != PHASES or not isinstance(data, dict):
        return list(segments)
    step = segments[1]
    if isinstance(step, str) and re.fullmatch(r"-?\d+", step):
        step = int(step)
    if not isinstance(step, int) or step < 0:
        return list(segments)  # a key, or a negative index (counted from the end): the same in both notations
    first = first_phase(data)
    if sign < 0:
        phases = data.get(PHASES)
        count = len(phases) if isinstance(phases, list) else None
        if step < first or (count is not None and step >= first + count):
            raise UsageError(f"there is no phase {step}: {_numbering(first, count)}", field=format_path(segments))
    return [PHASES, step + sign * first, *segments[2:]]


def _numbering(first: int, count: int | None) -> str:
    """How the phases of a file are numbered, for an error that names a phase it lacks."""
    if count == 0:
        return "there are no phases yet"
    if count is None:
        return f"phases are numbered from {first}"
    return f"phases are numbered {first} to {first + count - 1}" if count > 1 else f"the only phase is {first}"


def data_path(path: str | list[Segment] | tuple[Segment, ...], data: Any) -> list[Segment]:
    """The segments into `data` of a path as people write it (a phase by its number)."""
    return _phase_step(parse_path(path), data, -1)


def shown_path(segments: list[Segment] | tuple[Segment, ...], data: Any) -> str:
    """A path into `data` as people read it (a phase by its number), in the dotted notation."""
    return format_path(_phase_step(list(segments), data, 1))


def child(value: Any, seg: Segment) -> tuple[bool, Any]:
    """Step into a plain value by key or index."""
    if isinstance(value, dict):
        if seg in value:
            return True, value[seg]
        if isinstance(seg, int) and str(seg) in value:
            return True, value[str(seg)]
        if isinstance(seg, str) and re.fullmatch(r"-?\d+", seg) and int(seg) in value:
            return True, value[int(seg)]
        return False, None
    if isinstance(value, list):
        try:
            index = int(seg)
        except ValueError:
            return False, None
        if -len(value) <= index < len(value):
            return True, value[index]
    return False, None


def real_key(parent: Any, seg: Any) -> Any:
    """The key or index under which `parent` holds `seg` (`"2"` and `2` name the same entry)."""
    if isinstance(parent, list):
        return int(seg)
    if seg in parent:
        return seg
    if str(seg) in parent:
        return str(seg)
    return int(seg)


def get_in(data: Any, segments: list[Segment]) -> tuple[bool, Any]:
    """Find the value at `segments`: (found, value)."""
    value = data
    for seg in segments:
        found, value = child(value, seg)
        if not found:
            return False, None
    return True, value


def set_in(data: dict[str, Any], segments: list[Segment], value: Any) -> None:
    """Set the value at `segments`, creating missing mappings on the way."""
    parent: Any = data
    for i, seg in enumerate(segments[:-1]):
        found, nxt = child(parent, seg)
        if not found or nxt is None:
            if isinstance(parent, list):
                raise UsageError(f"no item at {format_path(segments[: i + 1])}")
            if isinstance(segments[i + 1], int):
                raise UsageError(f"no list at {format_path(segments[: i + 1])}")
            nxt = {}
            parent[real_key(parent, seg) if found else seg] = nxt
        if not isinstance(nxt, dict | list):
            raise UsageError(f"{format_path(segments[: i + 1])} is not a mapping or list")
        parent = nxt
    last = segments[-1]
    if isinstance(parent, list):
        try:
            index = int(last)
        except ValueError:
            raise UsageError(f"{format_path(segments[:-1])} is a list; {last!r} is not an index") from None
        if not -len(parent) <= index < len(parent):
            raise UsageError(f"index {index} is out of range at {format_path(segments[:-1])}; use append")
        parent[index] = value
    else:
        found, _ = child(parent, last)
        parent[real_key(parent, last) if found else last] = value


def delete_in(data: Any, segments: list[Segment]) -> bool:
    """Delete the key or item at `segments`; return False when there was nothing there."""
    found, parent = get_in(data, segments[:-1])
    if not found:
        return False
    ok, _ = child(parent, segments[-1])
    if not ok:
        return False
    del parent[real_key(parent, segments[-1])]
    return True
