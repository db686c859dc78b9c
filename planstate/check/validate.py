"""`planstate validate`: every file of the workspace against the schema and the workspace-wide rules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.core.errors import PlanstateError
from planstate.model.validation import located, problems_for
from planstate.store import history

if TYPE_CHECKING:
    from planstate.store.context import Context


class Validation(NamedTuple):
    """How many files were validated and every problem found (each one line with its file, line and column)."""

    files: int
    problems: list[PlanstateError]

    def to_dict(self) -> dict[str, Any]:
        """Return the result as JSON-ready data: the files checked and each problem as a finding (an error's
        type, message and where it is)."""
        return {"files_checked": self.files, "findings": [p.to_dict() for p in self.problems]}


def validate(ctx: Context) -> Validation:
    """Validate every file of every initiative, then the rules across initiatives."""
    problems: list[PlanstateError] = []
    files = ctx.files()
    for kind, path in files:
        try:
            if kind == "history":
                problems.extend(history.read(path, ctx.display(path), ctx.root)[1])
                continue
            found = problems_for(kind, ctx.cached_data(path))  # through the cache: a parse only per new content
            if found:  # located in a fresh round-trip parse of the file, which gives the same data
                doc = ctx.read_document(path)
                doc.require_front_matter()
                problems.extend(located(doc, problems_for(kind, doc.data)))
        except PlanstateError as exc:
            problems.append(exc)
    problems.extend(ctx.initiative_problems())
    ctx.save_cache()
    return Validation(len(files), problems)
