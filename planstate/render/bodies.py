"""A STATE.md body and git's conflicts in it: finding the body, and settling conflicts that lie only in regions.

A conflict block that lies wholly inside generated regions is settled by rendering those regions again from the
merged front matter, whichever side is kept; any other conflict is a person's to resolve, and rendering leaves the
file alone.
"""

from __future__ import annotations

from typing import NamedTuple

from planstate.text import envelope
from planstate.text.conflicts import Hunk, conflict_hunks
from planstate.text.markers import Region, parse, split_lines


def split_body(raw: bytes) -> tuple[str, int]:
    """A planning file's markdown body and the file line it starts on, without parsing the YAML.

    The front matter is found by the envelope's delimiter rule (text/envelope.py); a file without front matter
    is all body, and one whose front matter is never closed has none.
    """
    parts = envelope.split(raw)
    if not parts.closed:
        return "", 1
    return parts.body.decode("utf-8", errors="surrogateescape"), parts.body_line


class Resolution(NamedTuple):
    """A file's git conflicts as rendering takes them: its text with the conflicts resolved when they lie inside
    generated regions (else as it was), the regions they touched, and the (first, last) file lines of each conflict
    that keeps rendering away."""

    text: bytes
    touched: set[str]
    refused: list[tuple[int, int]]


def conflicts_for_render(raw: bytes) -> Resolution:
    """A file's git conflicts as rendering takes them: resolved when they all lie inside generated regions
    (`resolve_region_conflicts`); otherwise each is refused, and rendering leaves the file alone ((1, 1) when a
    conflict cannot be read)."""
    hunks = conflict_hunks(split_lines(raw.decode("utf-8", errors="surrogateescape"))) if b"<<<<<<<" in raw else []
    resolved = resolve_region_conflicts(raw) if hunks else None
    if resolved is not None:
        return Resolution(*resolved, [])
    if hunks == []:
        return Resolution(raw, set(), [])
    return Resolution(raw, set(), [(h.start + 1, h.stop + 1) for h in hunks or []] or [(1, 1)])


def resolve_region_conflicts(raw: bytes) -> tuple[bytes, set[str]] | None:
    """A STATE.md whose git conflicts all lie inside generated regions, with each conflict resolved to its first
    (`ours`) side, and the names of the regions the conflicts touched (to be rendered again from the merged
    records); None when a conflict touches the front matter or text outside regions, or cannot be read.

    A conflict lies inside regions when every line of both sides is a marker line of a region or text
    between a region's markers, as each side reads when all conflicts take that side.
    """
    lines = split_lines(raw.decode("utf-8", errors="surrogateescape"))
    hunks = conflict_hunks(lines)
    if not hunks:
        return None
    resolved: list[tuple[str, set[str]]] = []
    for pick in ("ours", "theirs"):
        text, spans = _side(lines, hunks, pick)
        body, body_line = split_body(text.encode("utf-8", errors="surrogateescape"))
        touched = _regions_holding(body, body_line, spans)
        if touched is None:
            return None
        resolved.append((text, touched))
    ours_text, touched = resolved[0]
    return ours_text.encode("utf-8", errors="surrogateescape"), touched


def _side(lines: list[str], hunks: list[Hunk], pick: str) -> tuple[str, list[tuple[int, int]]]:
    """The text as one side (`ours` or `theirs`) reads when every conflict takes that side, and each hunk's lines
    in that text: [first, last)."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    cursor = 0
    for hunk in hunks:
        out.extend(lines[cursor : hunk.start])
        chosen = hunk.ours if pick == "ours" else hunk.theirs
        spans.append((len(out), len(out) + len(chosen)))
        out.extend(chosen)
        cursor = hunk.stop + 1
    out.extend(lines[cursor:])
    return "".join(out), spans


def _regions_holding(body: str, body_line: int, spans: list[tuple[int, int]]) -> set[str] | None:
    """The names of the regions that hold every line of `spans` (0-based file line ranges); None when a line is
    outside every region (or the markers are malformed)."""
    layout = parse(body, body_line)
    if layout.troubles:
        return None
    offset = body_line - 1  # file line index of the body's first line
    touched: set[str] = set()
    for first, last in spans:
        names = _holders(layout.regions, first - offset, last - offset)
        if names is None:
            return None
        touched |= names
    return touched


def _holders(regions: list[Region], first: int, last: int) -> set[str] | None:
    """The names of the regions holding body lines [first, last), or None when one is outside every region; an
    empty range must lie between a region's markers."""
    if first == last:
        holder = next((r for r in regions if r.begin < first <= r.end), None)
        return None if holder is None else {holder.name}
    names: set[str] = set()
    for index in range(first, last):
        holder = next((r for r in regions if r.begin <= index <= r.end), None)
        if holder is None:
            return None
        names.add(holder.name)
    return names
