"""The merge driver's text: our layout kept, one field per conflict, either side of it valid, history unions."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planstate.text.document import Document
from planstate.vcs import merge
from planstate.vcs.driver import kind_of, merge_bytes
from tests.conftest import EXAMPLES, REPO

BASE = (
    (REPO / "docs" / "format.md").read_text().split("<!-- example: state -->\n```markdown\n", 1)[1].split("```", 1)[0]
)


def edited(text: str, *edits: tuple[str, Any]) -> bytes:
    """The text with planstate's minimal edits applied (as `planstate set` makes them)."""
    doc = Document.from_bytes(text.encode(), "STATE.md")
    for path, value in edits:
        if value is merge.MISSING:
            doc.delete(path)
        else:
            doc.set(path, value)
    return doc.to_bytes()


def run_merge(base: bytes | str, ours: bytes | str, theirs: bytes | str, name: str = ".planning/STATE.md") -> Any:
    as_bytes = [side.encode() if isinstance(side, str) else side for side in (base, ours, theirs)]
    return merge_bytes(*as_bytes, name=name)


def take(text: str, side: str) -> str:
    """Resolve every conflict by keeping one side's lines."""
    out, keeping = [], "both"
    for line in text.splitlines(keepends=True):
        if line.startswith("<<<<<<< "):
            keeping = "ours"
        elif line.rstrip("\r\n") == "=======" and keeping == "ours":
            keeping = "theirs"
        elif line.startswith(">>>>>>> "):
            keeping = "both"
        elif keeping in ("both", side):
            out.append(line)
    return "".join(out)


def test_kinds_follow_the_path() -> None:
    assert kind_of(".planning/STATE.md") == "state"
    assert kind_of("svc/.planning/initiatives/x/blockers/blk-1-a.md") == "blocker"
    assert kind_of(".planning/decisions/dec-1-a.md") == "decision"
    assert kind_of(".planning/sessions/ses-1-a.md") == "session"
    assert kind_of(".planning/history.jsonl") == "history"
    assert kind_of(".planning/notes.md") is None


def test_a_clean_merge_keeps_our_comments_and_layout_byte_for_byte_outside_the_changed_values() -> None:
    ours = edited(BASE, ("position.task", "Ours"))
    theirs = edited(BASE, ("next_action", "Theirs"))
    result = run_merge(BASE, ours, theirs)
    assert result.clean and result.fallback is None
    expected = edited(ours.decode(), ("next_action", "Theirs"))
    assert result.data == expected


def test_a_conflict_marks_only_that_field_and_either_side_is_valid() -> None:
    ours = edited(BASE, ("position.task", "Ours"), ("title", "New title"))
    theirs = edited(BASE, ("position.task", "Theirs"), ("position.wave", 2))
    result = run_merge(BASE, ours, theirs)
    assert result.conflicts == ['position.task: "Ours" (ours) vs "Theirs" (theirs)']
    text = result.data.decode()
    assert text.count("<<<<<<< ours: position.task\n") == 1
    for side, task in (("ours", "Ours"), ("theirs", "Theirs")):
        data = Document.from_bytes(take(text, side).encode()).data
        assert data["position"]["task"] == task
        assert data["title"] == "New title" and data["position"]["wave"] == 2


def test_a_conflict_on_the_first_key_of_a_list_item_keeps_both_sides_valid() -> None:
    ours = edited(BASE, ("phases[2].name", "OAuth 2"))
    theirs = edited(BASE, ("phases[2].name", "OAuth via SSO"))
    result = run_merge(BASE, ours, theirs)
    assert [c.split(":")[0] for c in result.conflicts] == ["phases.3.name"]  # index 2: phase 3
    for side, name in (("ours", "OAuth 2"), ("theirs", "OAuth via SSO")):
        assert Document.from_bytes(take(result.data.decode(), side).encode()).data["phases"][2]["name"] == name


def test_removed_on_our_side_and_changed_on_theirs_marks_an_empty_side() -> None:
    ours = edited(BASE, ("next_action", merge.MISSING))
    theirs = edited(BASE, ("next_action", "Do this"))
    result = run_merge(BASE, ours, theirs)
    assert not result.clean
    text = result.data.decode()
    assert "next_action" not in Document.from_bytes(take(text, "ours").encode()).data
    assert Document.from_bytes(take(text, "theirs").encode()).data["next_action"] == "Do this"


def test_neighbouring_conflicts_share_one_hunk_naming_both_fields() -> None:
    ours = edited(BASE, ("position.plan", 4), ("position.plan_name", "Ours"))
    theirs = edited(BASE, ("position.plan", 5), ("position.plan_name", "Theirs"))
    result = run_merge(BASE, ours, theirs)
    text = result.data.decode()
    assert text.count("<<<<<<<") == 1 and "<<<<<<< ours: position.plan, position.plan_name\n" in text
    assert Document.from_bytes(take(text, "theirs").encode()).data["position"]["plan"] == 5


def test_crlf_files_stay_crlf_markers_included() -> None:
    base = BASE.replace("\n", "\r\n")
    ours = edited(base, ("position.task", "Ours"))
    theirs = edited(base, ("position.task", "Theirs"))
    text = run_merge(base, ours, theirs).data.decode()
    assert "\n" not in text.replace("\r\n", "")
    assert "<<<<<<< ours: position.task\r\n" in text


def test_files_that_do_not_parse_or_are_newer_go_to_git_text_merge() -> None:
    broken = BASE.replace("title:", "title: [unclosed\nx:", 1)
    result = run_merge(BASE, edited(BASE, ("next_action", "A")), broken)
    assert result.fallback and "does not parse" in result.fallback
    newer = BASE.replace("schema_version: 1", "schema_version: 9", 1)
    result = run_merge(BASE, edited(BASE, ("next_action", "A")), newer)
    assert result.fallback and "newer" in result.fallback
    assert run_merge("a\n", "b\n", "a\n", name="README.md").data == b"b\n"


def test_added_on_both_sides_merges_from_nothing() -> None:
    ours = edited(BASE, ("title", "Ours"))
    theirs = edited(BASE, ("position.task", "Theirs"))
    result = run_merge(b"", ours, theirs)
    assert [c.split(":")[0] for c in result.conflicts] == ["title", "position.task"]


def test_history_is_the_union_of_entries_ordered_by_time() -> None:
    def line(at: str, to: str) -> str:
        return json.dumps({"at": at, "from": "active", "to": to, "trigger": to, "reason": None, "by": "x"}) + "\n"

    base = line("2026-11-20T09:00:00Z", "active")
    ours = base + line("2026-11-20T12:00:00Z", "paused")
    theirs = base + line("2026-11-20T10:00:00Z", "error") + "not json\n" + line("2026-11-20T12:00:00Z", "paused")
    result = run_merge(base, ours, theirs, name=".planning/history.jsonl")
    assert result.clean
    assert result.data.decode().splitlines() == [
        base.strip(),
        line("2026-11-20T10:00:00Z", "error").strip(),
        line("2026-11-20T12:00:00Z", "paused").strip(),
        "not json",
    ]


def test_regions_come_from_the_side_that_changed_them_and_are_rendered_again() -> None:
    base = BASE + "\n<!-- planstate:begin next -->\n<!-- planstate:end next -->\n\nnotes\n"
    rendered = run_merge(base, base, edited(base, ("title", "x"))).data.decode()  # a clean merge renders
    assert "Continue implementing the refresh token rotation endpoint." in rendered.split("---", 2)[2]
    ours = edited(rendered, ("next_action", "Ours next"))
    theirs = rendered.replace("notes\n", "notes, theirs\n")
    result = run_merge(rendered, ours, theirs)
    assert result.clean
    body = result.data.decode().split("\n---\n", 1)[1]
    assert "Ours next" in body and "notes, theirs" in body


def test_the_cli_driver_writes_ours_and_exits_1_on_a_conflict(tmp_path: Path) -> None:
    files = {}
    for name, data in (("O", BASE.encode()), ("A", edited(BASE, ("title", "A"))), ("B", edited(BASE, ("title", "B")))):
        files[name] = tmp_path / name
        files[name].write_bytes(data)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "planstate",
            "git",
            "merge-driver",
            *(str(files[n]) for n in "OAB"),
            "9",
            ".planning/STATE.md",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert "conflict: title" in done.stderr
    assert "<<<<<<<<< ours: title\n" in files["A"].read_text()


EDIT = st.one_of(
    st.tuples(
        st.sampled_from(["position.task", "next_action", "title", "position.plan_name"]),
        st.sampled_from(["A", "B", "C"]),
    ),
    st.tuples(st.sampled_from(["position.wave", "progress.current_phase_tasks"]), st.integers(0, 3)),
    st.tuples(st.just("phases[1].evidence"), st.dictionaries(st.sampled_from(["t", "c"]), st.sampled_from(["1", "2"]))),
    st.tuples(st.just("resume_context.open_questions"), st.lists(st.sampled_from(["q1", "q2", "q3"]), unique=True)),
    st.tuples(st.just("next_action"), st.just(merge.MISSING)),
)


BASE_DATA = Document.from_bytes(BASE.encode()).data


# Each example parses and merges three whole files (~0.2 s): 60 a run, more with PLANSTATE_HYPOTHESIS_EXAMPLES.
@settings(max_examples=EXAMPLES * 3 // 5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(EDIT, max_size=4), st.lists(EDIT, max_size=4))
def test_the_text_agrees_with_the_data_merge_on_either_side_of_every_conflict(
    ours_edits: list[Any], theirs_edits: list[Any]
) -> None:
    def apply(edits: list[Any]) -> Document:
        doc = Document.from_bytes(BASE.encode(), "STATE.md")
        for path, value in edits:  # one after another, as `planstate set` and `unset` would make them
            if value is not merge.MISSING:
                doc.set(path, value)
            elif "next_action" in doc.data:
                doc.delete(path)
        return doc

    ours_doc, theirs_doc = apply(ours_edits), apply(theirs_edits)
    ours, theirs = ours_doc.to_bytes(), theirs_doc.to_bytes()  # to_bytes re-reads its text: it holds the data
    expected = merge.merge("state", copy.deepcopy(BASE_DATA), ours_doc.data, theirs_doc.data)
    result = run_merge(BASE, ours, theirs)
    text = result.data.decode()
    assert len(result.conflicts) == len(expected.conflicts)
    for side in ("ours", "theirs"):
        data = Document.from_bytes(take(text, side).encode()).data
        want = json.loads(json.dumps(expected.data, default=str))
        for conflict in expected.conflicts:
            value = conflict.ours if side == "ours" else conflict.theirs
            target = want
            for seg in conflict.path[:-1]:
                target = target[seg]
            if value is merge.MISSING:
                target.pop(conflict.path[-1], None)
            else:
                target[conflict.path[-1]] = json.loads(json.dumps(value, default=str))
        got = json.loads(json.dumps(data, default=str))
        if side == "theirs" and expected.conflicts:
            got.pop("progress", None), want.pop("progress", None)  # derived: recomputed by check --fix after resolving
        assert got == want
