"""Generated regions of STATE.md's body: finding the markers, checksums, and re-rendering one document's regions.

A region is the text between a `<!-- planstate:begin NAME sha=… in=… -->` line and a
`<!-- planstate:end NAME -->` line. `sha` hashes the text planstate wrote there, so a hand edit
shows; `in` hashes what it was rendered from (template and context), so a region whose inputs
did not change costs no rendering. Text outside regions is never changed, a region whose text
would not change is not rewritten, and malformed markers are left alone (see docs/format.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.core.digests import sha256_hex
from planstate.core.errors import PlanstateError
from planstate.text import envelope

if TYPE_CHECKING:
    from planstate.render.sources import Sources
    from planstate.store.initiatives import Initiative
    from planstate.text.document import Document
    from planstate.workspace import Workspace

# The region names, in the order a new STATE.md shows them.
NAMES = ("position", "progress", "next", "blockers", "phases", "gantt", "decisions", "sessions", "resume")
# Bump when filters or context building change the output for the same template and context.
RENDERER = "1"
HASH_CHARS = 12
TEMPLATE_FOLDER = "regions"

_CANDIDATE = re.compile(r"[ \t]*<!--[ \t]*planstate:")
_MARKER = re.compile(
    r"([ \t]*)<!--[ \t]*planstate:(begin|end)[ \t]+([A-Za-z0-9_-]+)((?:[ \t]+[A-Za-z0-9_-]+=[^\s>]*)*)[ \t]*-->[ \t]*"
)
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def template_name(region: str) -> str:
    """The template file of a region, relative to the templates folder (`regions/<name>.md.j2`)."""
    return f"{TEMPLATE_FOLDER}/{region}.md.j2"


def text_hash(text: str) -> str:
    """The short hash of a region's text; line endings are normalized first, so CRLF and LF agree."""
    data = text.replace("\r\n", "\n").encode("utf-8", errors="surrogateescape")
    return sha256_hex(data)[:HASH_CHARS]


# ---------------------------------------------------------------------------- parsing markers


class Region:
    """A well-formed region: its name, marker attributes and the line indexes of its two marker lines."""

    __slots__ = ("attrs", "begin", "end", "indent", "name")

    def __init__(self, name: str, attrs: dict[str, str], begin: int, end: int, indent: str = "") -> None:
        self.name = name
        self.attrs = attrs
        self.begin = begin
        self.end = end
        self.indent = indent

    def __repr__(self) -> str:
        return f"Region({self.name!r}, {self.attrs!r}, {self.begin}, {self.end})"

    def interior(self, lines: list[str]) -> str:
        """The region's text: the lines between its markers, as they are."""
        return "".join(lines[self.begin + 1 : self.end])


class Trouble(NamedTuple):
    """A marker problem: the line index it was found on and what is wrong."""

    at: int  # line index in the body
    message: str


class Layout:
    """A body split into lines, with its well-formed regions and its marker problems."""

    __slots__ = ("lines", "regions", "troubles")

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.regions: list[Region] = []
        self.troubles: list[Trouble] = []


class _Open:
    """A begin marker waiting for its end while parsing."""

    __slots__ = ("index", "marker", "tainted")

    def __init__(self, marker: re.Match[str], index: int) -> None:
        self.marker = marker
        self.index = index
        self.tainted = False  # a stray or unreadable marker lies inside it: not a region, left alone


def split_lines(text: str) -> list[str]:
    """Split text into lines that keep their endings (only `\\n` ends a line, so joining gives the text back)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def has_markers(body: str) -> bool:
    """Tell cheaply whether a body may hold regions."""
    return "<!-- planstate:" in body or "planstate:begin" in body


def parse(body: str, first_line: int = 1) -> Layout:
    """Find the regions of a body. `first_line` is the file line the body starts on (for messages).

    Only a begin line followed by its end line, with no other marker between them, is a region.
    A begin line while another region is open ends that one as malformed (it has no end line) and
    opens its own region; an end line that does not close the open region is a stray marker of its
    own; so one mistyped marker leaves the regions after it alone. Markers inside fenced code blocks
    outside regions are text. Anything else is a Trouble, and the text it concerns is left alone.
    """
    layout = Layout(split_lines(body))
    current: _Open | None = None
    fence: tuple[str, int] | None = None
    pairs: list[Region] = []

    def line_no(index: int) -> int:
        return first_line + index

    for index, raw in enumerate(layout.lines):
        text = raw.rstrip("\r\n")
        if current is None:
            if fence is not None:
                if _closes(fence, text):
                    fence = None
                continue
            opening = _FENCE.match(text)
            if opening:
                fence = (opening.group(1)[0], len(opening.group(1)))
                continue
        if not _CANDIDATE.match(text):
            continue
        marker = _MARKER.fullmatch(text)
        if marker is None:
            layout.troubles.append(
                Trouble(
                    index,
                    "unreadable planstate marker; a marker is `<!-- planstate:begin NAME -->` or "
                    "`<!-- planstate:end NAME -->` alone on its line",
                )
            )
            if current is not None:
                current.tainted = True
            continue
        name = marker.group(3)
        if marker.group(2) == "begin":
            if current is not None:
                # Most likely its end line was mistyped or lost: stop the open region here, so the regions
                # after it are still regions (its own text is never rendered, so nothing a person typed is lost).
                layout.troubles.append(_unended(current, f"before line {line_no(index)}, where region {name} begins"))
            current = _Open(marker, index)
            continue
        if current is not None and current.marker.group(3) == name:
            if not current.tainted:
                pairs.append(
                    Region(name, _attributes(current.marker.group(4)), current.index, index, current.marker.group(1))
                )
            current = None
            continue
        where = ""
        if current is not None:
            open_name = current.marker.group(3)
            where = (
                f" (region {open_name} is open since line {line_no(current.index)}; "
                f"a mistyped `<!-- planstate:end {open_name} -->`?)"
            )
            current.tainted = True
        layout.troubles.append(Trouble(index, f"end of region {name} without its begin line{where}"))
    if current is not None:
        layout.troubles.append(_unended(current, "before the end of the file"))
    first: dict[str, Region] = {}
    repeated: set[str] = set()
    for region in pairs:
        if region.name not in NAMES:
            layout.troubles.append(
                Trouble(region.begin, f"unknown region {region.name!r}; regions are: {', '.join(NAMES)}")
            )
        elif region.name in first:
            repeated.add(region.name)
            layout.troubles.append(
                Trouble(
                    region.begin,
                    f"region {region.name} appears again (first at line {line_no(first[region.name].begin)}); "
                    "neither is rendered until one is removed",
                )
            )
        else:
            first[region.name] = region
    layout.regions = [r for r in first.values() if r.name not in repeated]
    layout.troubles.sort(key=lambda t: t.at)
    return layout


def _unended(opened: _Open, expected: str) -> Trouble:
    """The trouble of a region whose end line never came; `expected` says where it was due."""
    name = opened.marker.group(3)
    return Trouble(opened.index, f"region {name} has no end line (`<!-- planstate:end {name} -->` expected {expected})")


def _closes(fence: tuple[str, int], text: str) -> bool:
    """Tell whether a line closes a code fence opened with `fence` (its character and length)."""
    closing = _FENCE.match(text)
    return (
        closing is not None
        and closing.group(1)[0] == fence[0]
        and len(closing.group(1)) >= fence[1]
        and not text[closing.end() :].strip()
    )


def _attributes(text: str) -> dict[str, str]:
    """The `key=value` attributes after a marker's name, in order."""
    out: dict[str, str] = {}
    for item in text.split():
        key, _, value = item.partition("=")
        out[key] = value
    return out


def begin_line(region: Region, sha: str, inputs: str, ending: str) -> str:
    """A begin marker line with fresh `sha` and `in` attributes; other attributes are kept in their order."""
    attrs = {"sha": sha, "in": inputs, **{k: v for k, v in region.attrs.items() if k not in ("sha", "in")}}
    text = " ".join(f"{k}={v}" for k, v in attrs.items())
    return f"{region.indent}<!-- planstate:begin {region.name} {text} -->{ending}"


# ---------------------------------------------------------------------------- rendering

# The regions that show records, and the kind of record each shows: they cannot be rendered while a record
# file of that kind cannot be read (the row would silently disappear).
RECORD_REGIONS = {"blockers": "blocker", "decisions": "decision", "sessions": "session"}
# Statuses of regions left unrendered, and so reported: by `render`, `check` and a warning on every write.
UNRENDERED = ("hand-edit", "template-error", "blocked")
STALE_CHECKSUM = "shows the current state, but the checksum in its begin marker is stale"


class Outcome(NamedTuple):
    """What happened to one region: `fresh` (nothing to do), `rendered` (its text or its markers change),
    `hand-edit` (edited by hand, kept), `forced` (edited by hand, overwritten), `template-error` (left as it was)
    or `blocked` (a record it shows cannot be read, so it is left as it was)."""

    name: str
    line: int
    status: str
    message: str = ""
    template: str = ""
    template_line: int | None = None


class Plan:
    """The result of rendering a body: the new body, an outcome per region and the marker problems."""

    __slots__ = ("body", "outcomes", "troubles")

    def __init__(self, body: str, outcomes: list[Outcome], troubles: list[tuple[int, str]]) -> None:
        self.body = body
        self.outcomes = outcomes
        self.troubles = troubles  # (file line, message)

    @property
    def changed(self) -> list[Outcome]:
        """The regions whose text (or markers) change."""
        return [o for o in self.outcomes if o.status in ("rendered", "forced")]

    @property
    def unrendered(self) -> list[tuple[int, str]]:
        """(file line, why) of every region left unrendered and every marker problem, in file order."""
        out = list(self.troubles)
        for outcome in self.outcomes:
            if outcome.status in UNRENDERED:
                out.append((outcome.line, f"region {outcome.name} not rendered: {reason(outcome)}"))
        return sorted(out)


def reason(outcome: Outcome) -> str:
    """Why a region was left unrendered, in words."""
    if outcome.status == "hand-edit":
        return "it was edited by hand; kept until `planstate render --force`"
    if outcome.status == "template-error":
        where = f" ({outcome.template}:{outcome.template_line})" if outcome.template_line else ""
        return f"{outcome.message.removeprefix('template error: ')}{where}"
    return outcome.message


def plan(sources: Sources, body: str, first_line: int = 1, *, force: bool | Collection[str] = False) -> Plan:
    """Render every region of `body` whose inputs changed.

    A region whose text no longer matches its checksum (or that has text but no checksum) was edited
    by hand and is kept, unless `force` (True, or the names of the regions to force) or unless its
    text is exactly what rendering gives (then only its checksum was stale). A region that shows
    records is left alone while one of those record files cannot be read.
    """
    layout = parse(body, first_line)
    lines = list(layout.lines)
    outcomes: list[Outcome] = []
    offset = 0  # how many lines the regions rendered so far added (or removed, when negative)
    for region in layout.regions:
        line = first_line + region.begin  # as the file is now, for messages
        begin, end = region.begin + offset, region.end + offset
        interior = "".join(lines[begin + 1 : end])
        recorded = region.attrs.get("sha")
        # Text between markers without a checksum was typed by a person; empty markers are there to be filled.
        edited = recorded != text_hash(interior) if recorded is not None else bool(interior.strip())
        forced = force is True or (not isinstance(force, bool) and region.name in force)
        from planstate.text import templates

        name = template_name(region.name)
        planning = sources.planning
        path = templates.find(name, planning)
        shown = templates.shown_path(str(path), planning)
        kind = RECORD_REGIONS.get(region.name)
        context = sources.context(region.name)
        failures = sources.failures(kind) if kind is not None else []
        text: str | None = None
        if edited and (failures or not forced):
            text = None if failures else _render_quietly(region.name, context, planning)
            if text is None or _normal(text) != _normal(interior):
                outcomes.append(Outcome(region.name, line, "hand-edit", template=shown))
                continue
            # The text is what rendering gives: only the checksum is stale (a merge resolved by hand, say).
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            outcomes.append(Outcome(region.name, line, "template-error", f"cannot read template: {exc}", shown))
            continue
        inputs = input_hash(region.name, source, context)
        if not edited and recorded is not None and region.attrs.get("in") == inputs:
            outcomes.append(Outcome(region.name, line, "fresh", template=shown))
            continue
        if failures:
            outcomes.append(Outcome(region.name, line, "blocked", _blocked(failures), shown))
            continue
        if text is None:
            try:
                text = render(region.name, context, planning, source)
            except PlanstateError as exc:
                outcomes.append(Outcome(region.name, line, "template-error", exc.message, shown, exc.line))
                continue
        ending = "\r\n" if lines[begin].endswith("\r\n") else "\n"
        new_interior = text.replace("\n", ending)
        sha = text_hash(new_interior)
        if new_interior == interior and recorded == sha:
            outcomes.append(Outcome(region.name, line, "fresh", template=shown))
            continue
        new_lines = split_lines(new_interior)
        lines[begin] = begin_line(region, sha, inputs, ending)
        lines[begin + 1 : end] = new_lines
        offset += len(new_lines) - (end - begin - 1)
        if edited and _normal(text) == _normal(interior):
            outcomes.append(Outcome(region.name, line, "rendered", STALE_CHECKSUM, shown))
        else:
            outcomes.append(Outcome(region.name, line, "forced" if edited else "rendered", template=shown))
    troubles = [(first_line + t.at, t.message) for t in layout.troubles]
    return Plan("".join(lines), outcomes, troubles)


def _normal(text: str) -> str:
    """Region text compared across line endings."""
    return text.replace("\r\n", "\n")


def _render_quietly(name: str, context: dict[str, Any], planning: Path | None) -> str | None:
    """The rendered text of a region, or None when its template fails (the caller keeps the region as it is)."""
    try:
        return render(name, context, planning)
    except PlanstateError:
        return None


def _blocked(failures: list[str]) -> str:
    """Why a record region cannot be rendered: the first record file that cannot be read, and how many more."""
    more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
    return f"cannot re-render: {failures[0]}{more}"


def input_hash(name: str, source: str, context: dict[str, Any]) -> str:
    """The short hash of what a region is rendered from: the renderer version, its template and its context."""
    payload = json.dumps([RENDERER, name, source, context], sort_keys=True, ensure_ascii=False, default=str)
    return sha256_hex(payload.encode("utf-8", errors="surrogateescape"))[:HASH_CHARS]


def render(name: str, context: dict[str, Any], planning: Path | None = None, source: str | None = None) -> str:
    """Render region `name`'s template with `context` into normalized text (no trailing spaces, one final newline).

    `source`, the text of the template in effect, lets a built-in template be rendered without Jinja
    (builtin.py). Raises PlanstateError naming the template file and line when the template
    fails (whatever it raises) or its output would contain a planstate marker line.
    """
    from planstate.render import builtin
    from planstate.text import templates

    text = builtin.render(name, source, context) if source is not None else None
    if text is None:
        template = templates.load(template_name(name), planning)
        try:
            text = template.render(**context)
        except Exception as exc:  # a user's template can raise anything: it is a template error, never a crash
            raise templates.template_failure(exc, template, planning) from None
        shown = template.filename or template_name(name)
    else:
        shown = template_name(name)
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    for number, line in enumerate(lines, start=1):
        if _CANDIDATE.match(line):
            raise PlanstateError(
                "template output contains a planstate marker line; regions cannot hold markers",
                file=templates.shown_path(shown, planning),
                line=number,
            )
    return "\n".join(lines) + "\n" if lines else ""


# ---------------------------------------------------------------------------- one document

_WARN: ContextVar[bool] = ContextVar("planstate_region_warnings", default=True)


@contextmanager
def quiet() -> Iterator[None]:
    """Within the block, writes do not warn about unrendered regions (`check --fix` and `watch --fix` report
    them as findings instead)."""
    token = _WARN.set(False)
    try:
        yield
    finally:
        _WARN.reset(token)


def refresh(
    ws: Workspace,
    doc: Document,
    initiative: Initiative,
    *,
    force: bool | Collection[str] = False,
    warn: bool = True,
    sources: Sources | None = None,
) -> Plan:
    """Re-render the regions of a STATE.md document in place (its front matter must be valid); return the plan.

    Only region interiors and their begin lines change; hand-edited regions stay unless `force`; a
    region with a template error or an unreadable record stays as it was. With `warn`, each region
    left unrendered gets one warning line on stderr (`planstate check` reports it in full).
    """
    from planstate.render.sources import Sources

    if sources is None:
        data = doc.data
        sources = Sources(data if isinstance(data, dict) else {}, ws, initiative)
    body = doc.body
    result = plan(sources, body, doc.body_line, force=force)
    if result.body != body:
        doc.set_body(result.body)
    ws.save_cache()
    if warn and _WARN.get():
        import sys

        for line, why in result.unrendered:
            sys.stderr.write(f"planstate: warning: {doc.path or 'STATE.md'}:{line}: {why}\n")
    return result


def render_new(doc: Document, planning: Path | None = None) -> Plan:
    """Render the regions of a new STATE.md, which has no records yet; `planning`'s template overrides apply."""
    from planstate.render.sources import Sources

    data = doc.data
    result = plan(Sources(data if isinstance(data, dict) else {}, planning=planning), doc.body, doc.body_line)
    doc.set_body(result.body)
    return result


# ---------------------------------------------------------------------------- the body of a file, and merges


def split_body(raw: bytes) -> tuple[str, int]:
    """A planning file's markdown body and the file line it starts on, without parsing the YAML.

    The front matter is found by the envelope's delimiter rule (text/envelope.py); a file without front matter
    is all body, and one whose front matter is never closed has none.
    """
    parts = envelope.split(raw)
    if not parts.closed:
        return "", 1
    return parts.body.decode("utf-8", errors="surrogateescape"), parts.body_line


class Hunk(NamedTuple):
    """One git conflict block: its marker lines (0-based line indexes of the file) and the lines of each side."""

    start: int  # the `<<<<<<<` line
    stop: int  # the `>>>>>>>` line
    ours: list[str]
    theirs: list[str]


_OURS = re.compile(r"<{7}(?: |\r?\n|$)")
_BASE = re.compile(r"\|{7}(?: |\r?\n|$)")
_SPLIT = re.compile(r"={7}\r?\n?$")
_THEIRS = re.compile(r">{7}(?: |\r?\n|$)")


def conflict_hunks(lines: list[str]) -> list[Hunk] | None:
    """The git conflict blocks of a file's lines (both the `merge` and the `diff3` style); None when a block is
    not closed, so the conflict cannot be understood."""
    hunks: list[Hunk] = []
    index = 0
    while index < len(lines):
        if not _OURS.match(lines[index]):
            index += 1
            continue
        start = index
        ours: list[str] = []
        theirs: list[str] = []
        side: list[str] | None = ours
        index += 1
        while index < len(lines) and not _THEIRS.match(lines[index]):
            line = lines[index]
            if _OURS.match(line):
                return None  # a conflict inside a conflict: not one git writes
            if _BASE.match(line) and side is ours:
                side = None  # diff3: the common ancestor's lines, kept by neither side
            elif _SPLIT.match(line) and side is not theirs:
                side = theirs
            elif side is not None:
                side.append(line)
            index += 1
        if index == len(lines) or side is not theirs:
            return None
        hunks.append(Hunk(start, index, ours, theirs))
        index += 1
    return hunks


def resolve_region_conflicts(raw: bytes) -> tuple[bytes, set[str]] | None:
    """A STATE.md whose git conflicts all lie inside generated regions, with each conflict resolved to its first
    (`ours`) side, and the names of the regions the conflicts touched (to be rendered again from the merged
    records); None when a conflict touches the front matter or text outside regions, or cannot be read.

    A conflict lies inside regions when every line of both sides is a marker line of a region or text
    between a region's markers, as each side reads when all conflicts take that side.
    """
    text = raw.decode("utf-8", errors="surrogateescape")
    lines = split_lines(text)
    hunks = conflict_hunks(lines)
    if not hunks:
        return None
    sides = []
    for pick in ("ours", "theirs"):
        out: list[str] = []
        spans: list[tuple[int, int]] = []  # each hunk's lines in this side's text: [first, last)
        cursor = 0
        for hunk in hunks:
            out.extend(lines[cursor : hunk.start])
            chosen = hunk.ours if pick == "ours" else hunk.theirs
            spans.append((len(out), len(out) + len(chosen)))
            out.extend(chosen)
            cursor = hunk.stop + 1
        out.extend(lines[cursor:])
        joined = "".join(out)
        body, body_line = split_body(joined.encode("utf-8", errors="surrogateescape"))
        touched = _regions_holding(body, body_line, spans)
        if touched is None:
            return None
        sides.append((joined, touched))
    (ours_text, touched), _theirs = sides
    return ours_text.encode("utf-8", errors="surrogateescape"), touched


def _regions_holding(body: str, body_line: int, spans: list[tuple[int, int]]) -> set[str] | None:
    """The names of the regions that hold every line of `spans` (0-based file line ranges); None when a line is
    outside every region (or the markers are malformed)."""
    layout = parse(body, body_line)
    if layout.troubles:
        return None
    offset = body_line - 1  # file line index of the body's first line
    touched: set[str] = set()
    for first, last in spans:
        if first == last:  # an empty side: its place must be between a region's markers
            holder = next((r for r in layout.regions if r.begin < first - offset <= r.end), None)
            if holder is None:
                return None
            touched.add(holder.name)
            continue
        for index in range(first - offset, last - offset):
            holder = next((r for r in layout.regions if r.begin <= index <= r.end), None)
            if holder is None:
                return None
            touched.add(holder.name)
    return touched
