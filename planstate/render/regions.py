"""Re-rendering the generated regions of STATE.md's body: planning each region's outcome, rendering its template.

The markers and their checksums are text/markers.py's. `sha` hashes the text planstate wrote in
a region, so a hand edit shows; `in` hashes what it was rendered from (template and context), so
a region whose inputs did not change costs no rendering. Text outside regions is never changed, a
region whose text would not change is not rewritten, and malformed markers are left alone (see
docs/format.md).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.core.digests import sha256_hex
from planstate.core.errors import PlanstateError
from planstate.text.limits import MAX_FRONT_MATTER
from planstate.text.markers import HASH_CHARS, Region, begin_line, looks_like_marker, parse, split_lines, text_hash
from planstate.text.markers import NAMES as NAMES  # the region names: rendering's as much as the markers'

# A region shows parts of the front matter and the records with some markup, so twice the longest front matter is
# room enough; a template that writes more (an override's loop gone wrong) fails, and never makes the file unreadable.
MAX_REGION = 2 * MAX_FRONT_MATTER

if TYPE_CHECKING:
    from planstate.render.sources import Sources
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative
    from planstate.text.document import Document

# Bump when filters or context building change the output for the same template and context.
RENDERER = "1"
TEMPLATE_FOLDER = "regions"


def template_name(region: str) -> str:
    """The template file of a region, relative to the templates folder (`regions/<name>.md.j2`)."""
    return f"{TEMPLATE_FOLDER}/{region}.md.j2"


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
    discarded: str | None = None  # `forced`: the hand-edited text the rendering replaced


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


def plan(
    sources: Sources,
    body: str,
    first_line: int = 1,
    *,
    force: bool | Collection[str] = False,
    touched: Collection[str] | None = None,
) -> Plan:
    """Render every region of `body` whose inputs changed.

    A region whose text no longer matches its checksum (or that has text but no checksum) was edited
    by hand and is kept, unless `force` (True, or the names of the regions to force) or unless its
    text is exactly what rendering gives (then only its checksum was stale). A region that shows
    records is left alone while one of those record files cannot be read. With `touched` (the record
    kinds a write changes), a region showing records of another kind is kept as planstate wrote it
    without reading them: the write cannot have changed its inputs.
    """
    layout = parse(body, first_line)
    lines = list(layout.lines)
    outcomes: list[Outcome] = []
    offset = 0  # how many lines the regions rendered so far added (or removed, when negative)
    for region in layout.regions:
        forced = force is True or (not isinstance(force, bool) and region.name in force)
        kind = RECORD_REGIONS.get(region.name)
        untouched = touched is not None and kind is not None and kind not in touched and not forced
        job = _Job(sources, region, lines, offset, first_line + region.begin, forced, untouched)
        outcomes.append(job.outcome())
        offset += job.grown
    troubles = [(first_line + t.at, t.message) for t in layout.troubles]
    return Plan("".join(lines), outcomes, troubles)


class _Job:
    """One region of a body being planned: its text now, what it is rendered from, and what happens to it.

    Rendering it replaces its lines in the body's `lines` (shared by every region's job).
    """

    def __init__(
        self,
        sources: Sources,
        region: Region,
        lines: list[str],
        offset: int,
        line: int,
        forced: bool,
        untouched: bool = False,
    ) -> None:
        from planstate.text import templates

        self.sources = sources
        self.region = region
        self.lines = lines
        self.line = line  # as the file is now, for messages
        self.forced = forced
        self.begin, self.end = region.begin + offset, region.end + offset
        self.interior = "".join(lines[self.begin + 1 : self.end])
        self.recorded = region.attrs.get("sha")
        # Text between markers without a checksum was typed by a person; empty markers are there to be filled.
        self.edited = (
            self.recorded != text_hash(self.interior) if self.recorded is not None else bool(self.interior.strip())
        )
        self.path = templates.find(template_name(region.name), sources.planning)
        self.shown = templates.shown_path(str(self.path), sources.planning)
        self.untouched = untouched  # a record region whose records the write does not change
        self.grown = 0  # how many lines rendering added to the body (removed, when negative)

    @cached_property
    def context(self) -> dict[str, Any]:
        """What the region is rendered from (a record region reads its records here: only its first ones and their
        count while its template is the built-in one, which shows no more)."""
        return self.sources.context(self.region.name, limited=self.showing is not None)

    @cached_property
    def source(self) -> str | Outcome:
        """The text of the region's template, or the template error of a template that cannot be read."""
        return self._template_source()

    @cached_property
    def showing(self) -> int | None:
        """How many records the region shows at most, when that is all its template shows of them (a record region
        with its built-in template); None for any other region."""
        from planstate.render import builtin
        from planstate.render.sources import LIMITS

        source = self.source
        if self.region.name not in RECORD_REGIONS or not isinstance(source, str):
            return None
        return LIMITS[self.region.name] if builtin.reproduces(self.region.name, source) else None

    @cached_property
    def failures(self) -> list[str]:
        """Why each record file the region shows cannot be used."""
        kind = RECORD_REGIONS.get(self.region.name)
        return self.sources.failures(kind) if kind is not None else []

    def outcome(self) -> Outcome:
        """Keep the region, report why it cannot be rendered, or render it into the body's lines."""
        if self.untouched and not self.edited and self.recorded is not None:
            return self._outcome("fresh")
        text = self._edit()
        if isinstance(text, Outcome):
            return text
        source = self.source
        if isinstance(source, Outcome):
            return source
        inputs = input_hash(self.region.name, source, self.context, self.showing)
        if self._fresh(inputs):
            return self._outcome("fresh")
        if self.failures:
            return self._outcome("blocked", _blocked(self.failures))
        rendered = text if text is not None else self._render(source)
        return rendered if isinstance(rendered, Outcome) else self._replace(rendered, inputs)

    def _edit(self) -> str | Outcome | None:
        """For a region edited by hand that is not to be overwritten (not forced, or its records cannot be read):
        the hand-edit outcome, or the rendered text when it is exactly the region's text (only its checksum is
        stale: a merge resolved by hand, say). None for any other region."""
        if not self.edited or (self.forced and not self.failures):
            return None
        text = None if self.failures else _render_quietly(self.region.name, self.context, self.sources.planning)
        if text is None or _normal(text) != _normal(self.interior):
            return self._outcome("hand-edit", line=self._edited_line(text))
        return text

    def _edited_line(self, rendered: str | None) -> int:
        """The file line of the first line of the region that differs from what planstate would write there (the
        begin marker's line when that cannot be rendered)."""
        if rendered is None:
            return self.line
        ours = _normal(rendered).split("\n")
        for index, line in enumerate(_normal(self.interior).split("\n")):
            if index >= len(ours) or line != ours[index]:
                return self.line + 1 + index
        return self.line + 1 + len(ours) - 1

    def _fresh(self, inputs: str) -> bool:
        """Tell whether the region is as planstate wrote it, from these very inputs."""
        return not self.edited and self.recorded is not None and self.region.attrs.get("in") == inputs

    def _template_source(self) -> str | Outcome:
        """The text of the region's template, or the template error of a template that cannot be read."""
        from planstate.text import templates

        try:
            return templates.source(self.path, self.sources.planning)
        except OSError as exc:
            return self._outcome("template-error", f"cannot read template: {exc}")
        except PlanstateError as exc:  # an override that is not a regular file inside the workspace
            return self._outcome("template-error", f"cannot read template: {exc.message}")

    def _render(self, source: str) -> str | Outcome:
        """The region rendered from its template's `source`, or the template error."""
        try:
            return render(self.region.name, self.context, self.sources.planning, source)
        except PlanstateError as exc:
            return self._outcome("template-error", exc.message, exc.line)

    def _replace(self, text: str, inputs: str) -> Outcome:
        """Put the rendered text and a fresh begin line into the body's lines, unless nothing would change."""
        lines, begin, end = self.lines, self.begin, self.end
        ending = "\r\n" if lines[begin].endswith("\r\n") else "\n"
        new_interior = text.replace("\n", ending)
        sha = text_hash(new_interior)
        if new_interior == self.interior and self.recorded == sha:
            return self._outcome("fresh")
        new_lines = split_lines(new_interior)
        lines[begin] = begin_line(self.region, sha, inputs, ending)
        lines[begin + 1 : end] = new_lines
        self.grown = len(new_lines) - (end - begin - 1)
        if self.edited and _normal(text) == _normal(self.interior):
            return self._outcome("rendered", STALE_CHECKSUM)
        if self.edited:
            return self._outcome("forced")._replace(discarded=self.interior)
        return self._outcome("rendered")

    def _outcome(
        self, status: str, message: str = "", template_line: int | None = None, *, line: int | None = None
    ) -> Outcome:
        return Outcome(
            self.region.name, self.line if line is None else line, status, message, self.shown, template_line
        )


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


def input_hash(name: str, source: str, context: dict[str, Any], shown: int | None = None) -> str:
    """The short hash of what a region is rendered from: the renderer version, its template and its context.
    `shown`: the template shows only that many of the region's records and their count, so only those are its
    input (a write adding the 10,001st decision hashes eleven fingerprints, not 10,001)."""
    payload = json.dumps(
        [RENDERER, name, source, context],
        sort_keys=True,
        ensure_ascii=False,
        default=lambda value: _hashable(value, shown),
    )
    return sha256_hex(payload.encode("utf-8", errors="surrogateescape"))[:HASH_CHARS]


def _hashable(value: Any, shown: int | None = None) -> Any:
    """What an input hash takes of a value JSON cannot hold: a region's records by their fingerprints (so the
    records stay unread; with `shown`, their count and the first `shown`), anything else as text."""
    fingerprint = getattr(value, "fingerprint", None)
    if not callable(fingerprint):
        return str(value)
    return fingerprint() if shown is None else fingerprint(shown)


def render(name: str, context: dict[str, Any], planning: Path | None = None, source: str | None = None) -> str:
    """Render region `name`'s template with `context` into normalized text (no trailing spaces, one final newline).

    `source`, the text of the template in effect, lets a built-in template be rendered without Jinja
    (builtin.py). Raises PlanstateError naming the template file and line when the template
    fails (whatever it raises) or its output would contain a planstate marker line.
    """
    from planstate.text import templates

    text, shown = _template_output(name, context, planning, source)
    if len(text) > MAX_REGION:
        raise PlanstateError(
            f"template output is {len(text):,} characters; a region holds at most {MAX_REGION:,}",
            file=templates.shown_path(shown, planning),
        )
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    for number, line in enumerate(lines, start=1):
        if looks_like_marker(line):
            raise PlanstateError(
                "template output contains a planstate marker line; regions cannot hold markers",
                file=templates.shown_path(shown, planning),
                line=number,
            )
    return "\n".join(lines) + "\n" if lines else ""


def _template_output(name: str, context: dict[str, Any], planning: Path | None, source: str | None) -> tuple[str, str]:
    """A region's template output, and the template's file as messages name it: the built-in template in Python
    when `source` is one of them (builtin.py), else through Jinja."""
    from planstate.render import builtin
    from planstate.text import templates

    text = builtin.render(name, source, context) if source is not None else None
    if text is not None:
        return text, template_name(name)
    template = templates.load(template_name(name), planning)
    try:
        text = template.render(**context)
    except Exception as exc:  # a user's template can raise anything: it is a template error, never a crash
        raise templates.template_failure(exc, template, planning) from None
    return text, template.filename or template_name(name)


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
    ctx: Context,
    doc: Document,
    initiative: Initiative,
    *,
    force: bool | Collection[str] = False,
    warn: bool = True,
    sources: Sources | None = None,
    touched: Collection[str] | None = None,
) -> Plan:
    """Re-render the regions of a STATE.md document in place (its front matter must be valid); return the plan.

    Only region interiors and their begin lines change; hand-edited regions stay unless `force`; a
    region with a template error or an unreadable record stays as it was. With `warn`, each region
    left unrendered gets one warning line on stderr (`planstate check` reports it in full). `touched`: the
    record kinds the write changes (see `plan`); None renders every region whose inputs changed.
    """
    from planstate.render.sources import Sources

    if sources is None:
        data = doc.data
        sources = Sources(data if isinstance(data, dict) else {}, ctx, initiative)
    body = doc.body
    result = plan(sources, body, doc.body_line, force=force, touched=touched)
    if result.body != body:
        doc.set_body(result.body)
    ctx.save_cache()
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
