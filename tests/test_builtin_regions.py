"""The Python renderings of built-in region templates give exactly what Jinja gives from the same context."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planstate.render import builtin, regions

REPO = Path(__file__).resolve().parent.parent
SOURCES = {
    name: (REPO / "templates" / "regions" / f"{name}.md.j2").read_text(encoding="utf-8") for name in builtin.RENDERINGS
}

# Text people and agents type, with what markdown and Jinja treat specially: newlines, markers, braces, pipes.
text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "a\nb", "<!-- planstate:end next -->", "{{ 7*7 }}", "`x`", "a | b", "--> ", "é ✓"]),
)
maybe_text = st.one_of(st.none(), text)
scalar = st.one_of(st.none(), st.integers(-3, 99), text)
timestamp = st.one_of(st.none(), st.sampled_from(["2026-11-20T09:00:00Z", "2026-11-20", "soon"]))
lifecycle = st.fixed_dictionaries(
    {
        "state": st.sampled_from(["active", "paused", "completed"]),
        "since": timestamp,
        "reason": maybe_text,
        "by": maybe_text,
        "context": maybe_text,
    }
)
phase = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {"number": st.integers(0, 9), "total": st.integers(1, 9), "name": text, "status": st.sampled_from(["active"])}
    ),
)
link_target = st.sampled_from(["decisions/dec-1.md", "blockers/blk 2.md", "sessions/ses-(3).md"])
texts = st.lists(text, max_size=3)
decision = st.fixed_dictionaries(
    {
        "date": timestamp,
        "title": text,
        "link": link_target,
        "decision": maybe_text,
        "reason": maybe_text,
        "status": st.sampled_from(["accepted", "proposed", "superseded", "rejected"]),
        "superseded_by": maybe_text,
        "reversible": st.booleans(),
    }
)
blocker = st.fixed_dictionaries(
    {
        "title": text,
        "link": link_target,
        "id": text,
        "status": st.sampled_from(["new", "active", "bypassed"]),
        "identified": timestamp,
        "affects": texts,
        "description": text,
        "blocked_tasks": texts,
        "workaround": maybe_text,
    }
)
session = st.fixed_dictionaries(
    {
        "started": timestamp,
        "agent": text,
        "link": link_target,
        "status": st.sampled_from(["active", "ended", "crashed"]),
        "ended": timestamp,
        "working_on": maybe_text,
        "completed": texts,
        "handoff_reason": maybe_text,
    }
)
CONTEXTS: dict[str, Any] = {
    "decisions": st.fixed_dictionaries({"decisions": st.lists(decision, max_size=4), "limit": st.integers(0, 3)}),
    "blockers": st.fixed_dictionaries(
        {"blockers": st.lists(blocker, max_size=4), "resolved": st.integers(0, 3), "limit": st.integers(0, 3)}
    ),
    "sessions": st.fixed_dictionaries({"sessions": st.lists(session, max_size=4), "limit": st.integers(0, 3)}),
    "next": st.fixed_dictionaries({"next_action": maybe_text, "open_questions": st.lists(text, max_size=3)}),
    "resume": st.fixed_dictionaries(
        {"files_modified": st.lists(text, max_size=3), "key_implementations": st.lists(text, max_size=3)}
    ),
    "progress": st.fixed_dictionaries(
        {
            "phases_total": st.integers(0, 9),
            "phases_completed": st.integers(0, 9),
            "percent": st.integers(0, 100),
            "bar": st.sampled_from(["░░░░ 0%", "██░░ 50%", ""]),
            "current_phase": st.one_of(st.none(), st.integers(0, 9)),
            "current_phase_tasks": scalar,
            "current_phase_completed": st.one_of(scalar, st.booleans(), st.floats(0, 3)),
        }
    ),
    "position": st.fixed_dictionaries(
        {
            "phase": phase,
            "plan": scalar,
            "plan_name": maybe_text,
            "task": maybe_text,
            "wave": scalar,
            "status": st.sampled_from(["pending", "in_progress", "blocked", "verifying", "done"]),
            "step": maybe_text,
            "lifecycle": lifecycle,
        }
    ),
}


def both(name: str, context: dict[str, Any]) -> tuple[str | None, str | None]:
    """The region rendered through Jinja and through builtin_regions (each normalized, or None on a refusal)."""
    out: list[str | None] = []
    for source in (None, SOURCES[name]):
        try:
            out.append(regions.render(name, context, None, source))
        except regions.PlanstateError:
            out.append(None)  # a marker line in the output: both must refuse it
    return out[0], out[1]


@pytest.mark.parametrize("name", sorted(builtin.RENDERINGS))
def test_each_rendering_knows_the_template_it_reproduces(name: str) -> None:
    digest = hashlib.sha256(SOURCES[name].encode("utf-8")).hexdigest()
    assert builtin.RENDERINGS[name][0] == digest, (
        f"templates/regions/{name}.md.j2 changed: update _{name} in planstate/builtin.py, then its hash"
    )


@pytest.mark.parametrize("name", sorted(builtin.RENDERINGS))
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_python_and_jinja_render_the_same_text(name: str, data: st.DataObject) -> None:
    context = data.draw(CONTEXTS[name])
    jinja, python = both(name, context)
    assert python == jinja


def test_an_override_is_never_rendered_without_jinja() -> None:
    context = {"next_action": "x", "open_questions": []}
    assert builtin.render("next", SOURCES["next"] + " ", context) is None
    assert builtin.render("phases", "anything", {}) is None


BODY_SOURCES = {name: (REPO / "templates" / name).read_text(encoding="utf-8") for name in builtin.BODIES}
DECISION_BODY = st.fixed_dictionaries(
    {
        "title": text,
        "context": text,
        "decision": text,
        "reason": text,
        "alternatives": st.lists(text, max_size=3),
        "supersedes": st.one_of(st.none(), st.just(""), st.just("dec-1ng6ehnre3sq")),
    }
)


BLOCKER_BODY = st.fixed_dictionaries(
    {
        "id": st.just("blk-1ng6ehtqcn81"),
        "title": text,
        "status": st.just("new"),
        "description": text,
        "identified": st.just("2026-11-20T09:00:00Z"),
        "affects": st.lists(st.one_of(text, st.integers(0, 20)), max_size=3),
        "blocked_tasks": st.lists(text, max_size=2),
        "by": text,
    }
)
SESSION_BODY = st.fixed_dictionaries(
    {
        "id": st.just("ses-1ng6ehtqcn81"),
        "agent": text,
        "started": st.just("2026-11-20T09:00:00Z"),
        "working_on": st.one_of(st.none(), text),
        "resumed_from": st.one_of(st.none(), st.just(""), st.just("ses-1ng6ehnre3sq")),
        "resumed_status": st.one_of(st.none(), st.sampled_from(["ended", "crashed"])),
    }
)


@pytest.mark.parametrize("name", sorted(builtin.BODIES))
def test_each_body_rendering_knows_the_template_it_reproduces(name: str) -> None:
    digest = hashlib.sha256(BODY_SOURCES[name].encode("utf-8")).hexdigest()
    assert builtin.BODIES[name][0] == digest, f"templates/{name} changed: update its body in builtin.py, then its hash"
    assert builtin.body(name, BODY_SOURCES[name] + " ", {}) is None  # an override always goes through Jinja


@settings(max_examples=200, deadline=None)
@given(context=DECISION_BODY)
def test_a_decision_body_renders_the_same_in_python_and_jinja(context: dict[str, Any]) -> None:
    from planstate.text import templates

    assert builtin.body("decision.md.j2", BODY_SOURCES["decision.md.j2"], context) == templates.render(
        "decision.md.j2", context
    )


@settings(max_examples=100, deadline=None)
@given(context=BLOCKER_BODY, same_title=st.booleans())
def test_a_blocker_body_renders_the_same_in_python_and_jinja(context: dict[str, Any], same_title: bool) -> None:
    from planstate.text import templates

    if same_title:  # a blocker recorded with a description only: its title is that description
        context = {**context, "title": context["description"]}
    assert builtin.body("blocker.md.j2", BODY_SOURCES["blocker.md.j2"], context) == templates.render(
        "blocker.md.j2", context
    )


@settings(max_examples=100, deadline=None)
@given(context=SESSION_BODY)
def test_a_session_body_renders_the_same_in_python_and_jinja(context: dict[str, Any]) -> None:
    from planstate.text import templates

    assert builtin.body("session.md.j2", BODY_SOURCES["session.md.j2"], context) == templates.render(
        "session.md.j2", context
    )


@pytest.mark.parametrize(
    ("working_on", "completed", "cell"),
    [
        (None, ["schema"], "completed 1 item"),
        ("  ", ["a", "b"], "completed 2 items"),
        ("Phase 1", ["a", "b"], "Phase 1; completed 2 items"),
        ("Phase 1", [], "Phase 1"),
        (None, [], ""),
    ],
)
def test_the_worked_on_cell_of_a_session(working_on: str | None, completed: list[str], cell: str) -> None:
    row = {"started": None, "agent": "w", "link": "sessions/ses-1.md", "status": "ended", "ended": None}
    context = {"sessions": [{**row, "working_on": working_on, "completed": completed, "handoff_reason": None}]}
    jinja, python = both("sessions", {**context, "limit": 5})
    assert jinja == python
    assert jinja is not None and jinja.splitlines()[2] == f"|  | [w](sessions/ses-1.md) | ended |  | {cell} |  |"
