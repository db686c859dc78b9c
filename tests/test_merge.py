"""The three-way data merge: every field has a rule, each rule does what docs/git.md says, and the merge's laws hold."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planstate.model.kinds import KINDS
from planstate.model.schema import ListOf, Model, Nested
from planstate.model.types import Nullable
from planstate.text.plaindata import same as strictly_same
from planstate.vcs import merge
from planstate.vcs.merge import MISSING
from planstate.vcs.mergerules import MEANING, RULES


def same(a: Any, b: Any) -> bool:
    """The merge's notion of one value: equal types all the way down, key order aside."""
    return strictly_same(a, b, ordered=False)


def _models() -> set[type[Model]]:
    """Every model reachable from the file kinds."""
    found: set[type[Model]] = set()
    todo: list[type[Model]] = list(KINDS.values())
    while todo:
        model = todo.pop()
        if model in found:
            continue
        found.add(model)
        for field in model.fields.values():
            kind: Any = field.kind
            while isinstance(kind, Nullable | ListOf):
                kind = kind.inner if isinstance(kind, Nullable) else kind.item
            if isinstance(kind, Nested):
                todo.append(kind.model)
    return found


def test_every_field_of_every_model_has_a_merge_rule() -> None:
    for model in _models():
        assert model in RULES, f"{model.__name__} has no merge rules in mergerules.RULES"
        missing = set(model.fields) - set(RULES[model])
        assert not missing, f"{model.__name__} fields without a merge rule: {sorted(missing)}"


def test_no_merge_rule_names_a_field_that_does_not_exist() -> None:
    for model, rules in RULES.items():
        stale = set(rules) - set(model.fields)
        assert not stale, f"mergerules.RULES[{model.__name__}] names unknown fields: {sorted(stale)}"


def test_every_rule_is_explained() -> None:
    for rules in RULES.values():
        for rule in rules.values():
            assert rule.name in MEANING


def test_derived_fields_are_recomputed_not_merged() -> None:
    for model, rules in RULES.items():
        for name, field in model.fields.items():
            assert (rules[name].name == "derived") == field.derived, f"{model.__name__}.{name}"


# ---------------------------------------------------------------------------- a realistic base


def T(hours: float) -> datetime:
    return datetime(2026, 11, 20, 9, tzinfo=UTC) + timedelta(hours=hours)


def base_state() -> dict[str, Any]:
    return {
        "schema_version": 1,
        "initiative": "user-auth",
        "title": "User authentication",
        "created": T(0),
        "updated": T(1),
        "structure": {"phases_total": 3, "first_phase": 1},
        "phases": [
            {
                "name": "Schema",
                "status": "completed",
                "started": T(0),
                "completed": T(1),
                "duration_seconds": 3600,
                "checkpoint": "passed",
                "evidence": {"tests": "18/18"},
                "attempts": 1,
            },
            {"name": "JWT", "status": "active", "started": T(1), "checkpoint": "pending", "attempts": 1},
            {"name": "OAuth", "status": "pending", "checkpoint": "pending"},
        ],
        "position": {"phase": 2, "phase_name": "JWT", "task": "Rotate tokens", "status": "in_progress"},
        "lifecycle": {"state": "active", "since": T(0), "by": "alice", "resume_count": 0},
        "progress": {"phases_total": 3, "phases_completed": 1, "percent": 33, "bar": "██████░░░░░░░░░░░░░░ 33%"},
        "next_action": "Finish rotation",
        "resume_context": {"files_modified": ["a.ts", "b.ts"], "key_implementations": [], "open_questions": ["q1"]},
    }


def merged(base: Any, ours: Any, theirs: Any, kind: str = "state") -> merge.Merged:
    return merge.merge(kind, copy.deepcopy(base), copy.deepcopy(ours), copy.deepcopy(theirs))


def edit(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(data)
    target = out
    for seg in path[:-1]:
        target = target[seg]
    if value is MISSING:
        target.pop(path[-1], None)
    else:
        target[path[-1]] = value
    return out


# ---------------------------------------------------------------------------- the rules, one by one


def test_one_side_changed_takes_it_and_both_alike_take_it() -> None:
    base = base_state()
    ours = edit(base, ("position", "task"), "Write docs")
    theirs = edit(base, ("next_action",), "Ship")
    result = merged(base, ours, theirs)
    assert result.conflicts == []
    assert result.data["position"]["task"] == "Write docs"
    assert result.data["next_action"] == "Ship"
    alike = merged(base, ours, edit(ours, ("next_action",), base["next_action"]))
    assert alike.conflicts == [] and alike.data["position"]["task"] == "Write docs"


def test_both_changed_differently_is_one_conflict_on_that_field() -> None:
    base = base_state()
    result = merged(base, edit(base, ("position", "task"), "A"), edit(base, ("position", "task"), "B"))
    assert [c.path for c in result.conflicts] == [("position", "task")]
    assert result.data["position"]["task"] == "A"  # ours stays in the data; the markers show theirs
    assert result.conflicts[0].theirs == "B"


def test_removed_on_one_side_changed_on_the_other_is_a_conflict() -> None:
    base = base_state()
    result = merged(base, edit(base, ("next_action",), MISSING), edit(base, ("next_action",), "Other"))
    assert [(c.path, c.ours, c.theirs) for c in result.conflicts] == [(("next_action",), MISSING, "Other")]
    gone = merged(base, edit(base, ("next_action",), MISSING), base)
    assert "next_action" not in gone.data and gone.conflicts == []


def test_timestamps_take_the_later_update_and_the_earlier_start() -> None:
    base = base_state()
    result = merged(base, edit(base, ("updated",), T(5)), edit(base, ("updated",), T(3)))
    assert result.conflicts == [] and result.data["updated"] == T(5)
    ours = edit(base, ("phases", 2), {**base["phases"][2], "status": "active", "started": T(4)})
    theirs = edit(base, ("phases", 2), {**base["phases"][2], "status": "active", "started": T(3)})
    result = merged(base, ours, theirs)
    assert result.conflicts == [] and result.data["phases"][2]["started"] == T(3)


def test_phases_merge_by_number_field_by_field_and_durations_are_recomputed() -> None:
    base = base_state()
    ours = edit(base, ("phases", 1), {**base["phases"][1], "status": "completed", "completed": T(3)})
    theirs = edit(base, ("phases", 1), {**base["phases"][1], "evidence": {"tests": "40/40"}})
    result = merged(base, ours, theirs)
    assert result.conflicts == []
    phase = result.data["phases"][1]
    assert (phase["status"], phase["evidence"], phase["duration_seconds"]) == ("completed", {"tests": "40/40"}, 7200)
    assert result.data["progress"]["phases_completed"] == 2  # derived: recomputed from the merged phases


def test_evidence_merges_key_by_key() -> None:
    base = base_state()
    ours = edit(base, ("phases", 0, "evidence"), {"tests": "18/18", "coverage": "80%"})
    theirs = edit(base, ("phases", 0, "evidence"), {"migrations": 3})
    result = merged(base, ours, theirs)
    assert result.conflicts == [] and result.data["phases"][0]["evidence"] == {"coverage": "80%", "migrations": 3}


def test_string_lists_merge_as_sets_and_honour_deletions() -> None:
    base = base_state()
    ours = edit(base, ("resume_context", "files_modified"), ["a.ts", "c.ts"])  # removed b, added c
    theirs = edit(base, ("resume_context", "files_modified"), ["a.ts", "b.ts", "d.ts"])  # added d
    result = merged(base, ours, theirs)
    assert result.conflicts == []
    assert result.data["resume_context"]["files_modified"] == ["a.ts", "c.ts", "d.ts"]


def test_append_only_logs_keep_both_sides_entries_in_time_order() -> None:
    blocker = {
        "schema_version": 1,
        "id": "blk-1",
        "title": "Creds",
        "status": "active",
        "description": "d",
        "identified": T(0),
        "log": ["2026-11-20T09:05:00Z new → active: x"],
    }
    ours = {
        **blocker,
        "log": [*blocker["log"], "2026-11-20T12:00:00Z active → bypassed: y"],
        "status": "bypassed",
        "workaround": "y",
    }
    theirs = {**blocker, "log": [*blocker["log"], "2026-11-20T11:00:00Z note: z"]}
    result = merged(blocker, ours, theirs, "blocker")
    assert result.conflicts == []
    assert result.data["log"] == [
        "2026-11-20T09:05:00Z new → active: x",
        "2026-11-20T11:00:00Z note: z",
        "2026-11-20T12:00:00Z active → bypassed: y",
    ]


@pytest.mark.parametrize(
    ("kind", "record", "final", "other"),
    [
        ("blocker", {"status": "active"}, "resolved", "bypassed"),
        ("decision", {"status": "accepted"}, "superseded", "rejected"),
        ("session", {"status": "active"}, "ended", "crashed"),
    ],
)
def test_a_stale_side_never_undoes_a_final_status(kind: str, record: dict[str, Any], final: str, other: str) -> None:
    base = {"schema_version": 1, "id": "x-1", **record}
    result = merged(base, {**base, "status": final}, {**base, "status": other}, kind)
    assert result.conflicts == [] and result.data["status"] == final
    result = merged(base, {**base, "status": other}, {**base, "status": final}, kind)
    assert result.conflicts == [] and result.data["status"] == final


def test_decision_accepted_on_one_side_and_rejected_on_the_other_is_a_conflict() -> None:
    base = {"schema_version": 1, "id": "dec-1", "status": "proposed"}
    result = merged(base, {**base, "status": "accepted"}, {**base, "status": "rejected"}, "decision")
    assert [c.path for c in result.conflicts] == [("status",)]


def test_archived_wins_over_a_later_transition_of_a_stale_branch() -> None:
    base = base_state()
    archived = edit(base, ("lifecycle",), {"state": "archived", "since": T(5), "by": "bob", "reason": "done"})
    resumed = edit(base, ("lifecycle",), {"state": "active", "since": T(9), "by": "eve", "resume_count": 1})
    for ours, theirs in ((archived, resumed), (resumed, archived)):
        result = merged(base, ours, theirs)
        assert result.conflicts == [] and result.data["lifecycle"]["state"] == "archived"
        assert result.data["lifecycle"] == archived["lifecycle"]  # the unit: no field of the other side leaks in


def test_otherwise_the_later_lifecycle_transition_wins_as_a_unit() -> None:
    base = base_state()
    paused = edit(base, ("lifecycle",), {"state": "paused", "since": T(3), "reason": "lunch", "context": "x"})
    errored = edit(base, ("lifecycle",), {"state": "error", "since": T(4), "error": {"message": "boom"}})
    assert merged(base, paused, errored).data["lifecycle"] == errored["lifecycle"]
    assert merged(base, errored, paused).data["lifecycle"] == errored["lifecycle"]


def test_unknown_keys_merge_as_values_and_mappings() -> None:
    base = {**base_state(), "team": {"owner": "alice", "reviewers": 1}}
    ours = edit(base, ("team", "owner"), "bob")
    theirs = edit(edit(base, ("team", "reviewers"), 2), ("extra",), "new")
    result = merged(base, ours, theirs)
    assert result.conflicts == []
    assert result.data["team"] == {"owner": "bob", "reviewers": 2} and result.data["extra"] == "new"


def test_same_tells_types_apart() -> None:
    assert not same(1, 1.0) and not same(1, True) and same({"a": [1]}, {"a": [1]}) and not same([1], [1, 1])


def test_added_on_both_sides_merges_from_nothing() -> None:
    a = {**base_state(), "title": "A"}
    b = {**base_state(), "title": "B"}
    result = merge.merge("state", None, a, b)
    assert [c.path for c in result.conflicts] == [("title",)]


# ---------------------------------------------------------------------------- the laws (hypothesis)

TEXT = st.text(alphabet=st.characters(codec="utf-8", categories=("L", "N", "Zs")), min_size=1, max_size=12)
TIME = st.integers(min_value=0, max_value=200).map(lambda h: T(h))


def _edits() -> st.SearchStrategy[tuple[tuple[Any, ...], Any]]:
    """One edit of a base state: a path and its new value (MISSING removes the key)."""
    return st.one_of(
        st.tuples(st.just(("title",)), TEXT),
        st.tuples(st.just(("next_action",)), st.one_of(TEXT, st.none(), st.just(MISSING))),
        st.tuples(st.just(("updated",)), TIME),
        st.tuples(st.sampled_from([("position", "task"), ("position", "step"), ("position", "plan_name")]), TEXT),
        st.tuples(st.just(("position", "status")), st.sampled_from(["pending", "in_progress", "blocked", "done"])),
        st.tuples(
            st.sampled_from([("phases", i, "status") for i in range(3)]),
            st.sampled_from(["pending", "active", "completed", "failed", "skipped"]),
        ),
        st.tuples(st.sampled_from([("phases", i, "completed") for i in range(3)]), TIME),
        st.tuples(
            st.sampled_from([("phases", i, "evidence") for i in range(3)]), st.dictionaries(TEXT, TEXT, max_size=3)
        ),
        st.tuples(
            st.sampled_from([("resume_context", "files_modified"), ("resume_context", "open_questions")]),
            st.lists(st.sampled_from(["a.ts", "b.ts", "c.ts", "q1", "q2", "d.ts"]), max_size=4, unique=True),
        ),
        st.tuples(
            st.just(("lifecycle",)),
            st.builds(
                lambda state, since, by: {"state": state, "since": since, "by": by},
                st.sampled_from(["active", "paused", "archived", "completed", "error"]),
                TIME,
                TEXT,
            ),
        ),
        st.tuples(st.just(("custom",)), st.one_of(TEXT, st.dictionaries(TEXT, TEXT, max_size=2))),
    )


def _apply(base: dict[str, Any], edits: list[tuple[tuple[Any, ...], Any]]) -> dict[str, Any]:
    out = base
    for path, value in edits:
        out = edit(out, path, value)
    return out


EDITS = st.lists(_edits(), max_size=6)
LAWS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _normal(data: dict[str, Any]) -> dict[str, Any]:
    """The data as a merge returns it: derived values recomputed."""
    return merged(data, data, data).data


@LAWS
@given(EDITS)
def test_merging_an_unchanged_side_gives_the_other(edits: list[Any]) -> None:
    base = base_state()
    x = _apply(base, edits)
    result = merged(base, x, base)
    assert result.conflicts == [] and same(result.data, _normal(x))
    result = merged(base, base, x)
    assert result.conflicts == [] and same(result.data, _normal(x))


@LAWS
@given(EDITS)
def test_merging_the_same_change_twice_gives_it(edits: list[Any]) -> None:
    base = base_state()
    x = _apply(base, edits)
    result = merged(base, x, x)
    assert result.conflicts == [] and same(result.data, _normal(x))


@LAWS
@given(EDITS, EDITS)
def test_non_conflicting_merges_do_not_depend_on_the_order(ours_edits: list[Any], theirs_edits: list[Any]) -> None:
    base = base_state()
    x, y = _apply(base, ours_edits), _apply(base, theirs_edits)
    one, two = merged(base, x, y), merged(base, y, x)
    assert sorted(c.path for c in one.conflicts) == sorted(c.path for c in two.conflicts)
    if not one.conflicts:
        assert same(one.data, two.data)


@LAWS
@given(EDITS, EDITS)
def test_conflicts_only_where_both_sides_changed_the_field(ours_edits: list[Any], theirs_edits: list[Any]) -> None:
    base = base_state()
    x, y = _apply(base, ours_edits), _apply(base, theirs_edits)
    conflicts = merged(base, x, y).conflicts
    for conflict in conflicts:
        assert not same(conflict.ours, conflict.theirs)
        if _is_phase(conflict.path) and (same(conflict.ours, conflict.base) or same(conflict.theirs, conflict.base)):
            # one side moved this phase: it joins the progression because another phase conflicts
            assert any(_is_phase(c.path) and not same(c.ours, c.base) and not same(c.theirs, c.base) for c in conflicts)
        else:
            assert not same(conflict.ours, conflict.base) and not same(conflict.theirs, conflict.base)


def _is_phase(path: tuple[Any, ...]) -> bool:
    """Whether a conflict is about a whole phase (a unit: its transition)."""
    return len(path) == 2 and path[0] == "phases"
