"""Rules about STATE.md's generated regions: malformed markers, hand edits, template errors, stale regions."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from planstate.check.findings import Finding
from planstate.check.reader import FileRead
from planstate.model.types import Problem

if TYPE_CHECKING:
    from pathlib import Path

    from planstate.render.regions import Outcome
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative

Loader = Callable[[str], tuple[Sequence[dict[str, Any]], list[str]]]


def regions(
    ctx: Context,
    initiative: Initiative,
    state: FileRead,
    data: dict[str, Any],
    records: dict[str, list[FileRead]] | None,
) -> list[Finding]:
    """Plan a render of STATE.md's regions from the records this check read (None: from the record files, as a
    render plans it), and report what it would do or cannot."""
    from planstate.render.bodies import split_body
    from planstate.render.regions import plan
    from planstate.render.sources import Sources
    from planstate.text.markers import has_markers

    assert state.raw is not None
    body, body_line = split_body(state.raw)
    if not has_markers(body):
        return []
    loader = _loader(ctx, records) if records is not None else None
    result = plan(Sources(data, ctx, initiative, loader=loader), body, body_line)
    hint = "fix or delete the marker lines; planstate leaves the text around them alone until then"
    out = [Finding("malformed-region", state.shown, line, None, message, hint) for line, message in result.troubles]
    for outcome in result.outcomes:
        report = _OUTCOMES.get(outcome.status)
        if report is not None:
            out.append(report(state.shown, initiative.dir, outcome))
    return out


def _loader(ctx: Context, records: dict[str, list[FileRead]]) -> Loader:
    """The records the regions show, from the files this check read, and the files that cannot be shown. A valid
    record's order and fingerprint come from the summary the store keeps with the data this check read, so its
    item is built only if a region shows it."""
    from planstate.render.sources import Records, Row, invalid_record, unusable
    from planstate.store.recordfiles import ORDER, item_fingerprint, region_item

    def item(kind: str, found: FileRead) -> dict[str, Any]:
        if found.item is None:
            found.item = region_item(kind, found.path, found.full())
        return found.item

    def load(kind: str) -> tuple[Records, list[str]]:
        rows: list[Row] = []
        failures: list[str] = []
        for found in records[kind]:
            if found.error is not None:
                failures.append(unusable(found.shown, found.error))
            elif not found.valid:
                problem = found.problems[0] if found.problems else Problem((), "front matter is not a mapping")
                failures.append(invalid_record(found.shown, problem))
            else:
                known = found.summary if found.summary is not None else ctx.record_summary(found.path)
                show = functools.partial(item, kind, found)
                if known is not None and known[4] is None:
                    rows.append(Row(known[1], known[0], known[2], known[3], show))
                else:
                    shown = show()
                    status = shown.get("status")
                    order = str(shown.get(ORDER[kind]))
                    fingerprint = item_fingerprint(shown)
                    rows.append(
                        Row(order, str(shown["id"]), status if isinstance(status, str) else None, fingerprint, show)
                    )
        return Records(rows), failures

    return load


def _hand_edit(file: str, initiative: Path, outcome: Outcome) -> Finding:
    return Finding(
        "hand-edit",
        file,
        outcome.line,
        None,
        f"region {outcome.name} was edited by hand; planstate keeps it until you decide",
        "move your text outside the markers, then run `planstate render --force`",
        field=f"region {outcome.name}",
    )


def _stale(file: str, initiative: Path, outcome: Outcome) -> Finding:
    return Finding(
        "stale-region",
        file,
        outcome.line,
        None,
        f"region {outcome.name} {outcome.message or 'does not show the current state'}",
        f"run `planstate render`, then `git add {file}`; `planstate check --fix` renders it too",
        field=f"region {outcome.name}",
        initiative=initiative,
    )


def _blocked(file: str, initiative: Path, outcome: Outcome) -> Finding:
    return Finding(
        "stale-region",
        file,
        outcome.line,
        None,
        f"region {outcome.name} may not show the current state and {outcome.message}",
        "fix that record file (its own finding says how), then run `planstate render`",
        field=f"region {outcome.name}",
        can_fix=False,
    )


def _template_error(file: str, initiative: Path, outcome: Outcome) -> Finding:
    reason = outcome.message.removeprefix("template error: ")
    return Finding(
        "template-error",
        outcome.template or file,
        outcome.template_line,
        None,
        f"region {outcome.name} of {file} cannot be rendered: {reason}",
        "fix your override in .planning/templates/regions/, or delete it to use the built-in template",
        field=f"region {outcome.name}",
    )


# The finding of each region outcome that needs one (a region planned `rendered` is stale: `check --fix` renders it).
_OUTCOMES: dict[str, Callable[[str, Path, Outcome], Finding]] = {
    "hand-edit": _hand_edit,
    "rendered": _stale,
    "blocked": _blocked,
    "template-error": _template_error,
}
