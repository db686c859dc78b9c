"""Generated regions of STATE.md: markers, checksums, minimal re-rendering, hand edits, safety of user text."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Run, exits, json_data, state_file

from planstate.text import markers as regions
from planstate.text.document import Document
from planstate.workspace import Workspace


def body_of(path: Path) -> str:
    """The markdown body of a planning file."""
    return Document.from_bytes(path.read_bytes()).body


def outside(body: str) -> list[str]:
    """The lines of a body outside its regions, marker lines without their attributes."""
    layout = regions.parse(body)
    inside = {i for r in layout.regions for i in range(r.begin + 1, r.end)}
    return [re.sub(r" sha=\S+ in=\S+", "", line) for i, line in enumerate(layout.lines) if i not in inside]


def region_text(path: Path, name: str) -> str:
    """The text of one region of a STATE.md."""
    layout = regions.parse(body_of(path))
    (region,) = [r for r in layout.regions if r.name == name]
    return region.interior(layout.lines)


def write_decision(project: Path, record_id: str, title: str, **fields: str) -> Path:
    """Write a decision file by hand (record commands never write STATE.md; neither does this)."""
    values = {
        "context": "c",
        "decision": "d",
        "reason": "r",
        "date": "2026-01-02",
        "status": "accepted",
        **fields,
    }
    lines = ["---", "schema_version: 1", f"id: {record_id}", f"title: {json.dumps(title)}"]
    lines += [f"{key}: {json.dumps(value)}" for key, value in values.items()]
    path = project / ".planning" / "decisions" / f"{record_id}-x.md"
    path.write_text("\n".join([*lines, "---", "Notes.", ""]), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------- parsing markers


def test_parse_finds_regions_and_their_attributes() -> None:
    body = (
        "# Title\n"
        "<!-- planstate:begin next sha=abc in=def extra=1 -->\n"
        "text\n"
        "<!-- planstate:end next -->\n"
        "between\n"
        "  <!--planstate:begin phases-->\n"
        "<!-- planstate:end phases -->\n"
    )
    layout = regions.parse(body, first_line=10)
    assert layout.troubles == []
    assert [(r.name, r.begin, r.end) for r in layout.regions] == [("next", 1, 3), ("phases", 5, 6)]
    assert layout.regions[0].attrs == {"sha": "abc", "in": "def", "extra": "1"}
    assert layout.regions[0].interior(layout.lines) == "text\n"
    assert layout.regions[1].indent == "  "


@pytest.mark.parametrize(
    ("body", "message", "line"),
    [
        ("<!-- planstate:begin nope -->\n<!-- planstate:end nope -->\n", "unknown region 'nope'", 1),
        ("x\n<!-- planstate:begin next -->\nkept\n", "region next has no end line", 2),
        ("<!-- planstate:end next -->\n", "end of region next without its begin line", 1),
        (
            "<!-- planstate:begin next -->\n<!-- planstate:end next -->\n"
            "<!-- planstate:begin next -->\n<!-- planstate:end next -->\n",
            "region next appears again (first at line 1)",
            3,
        ),
        (
            "<!-- planstate:begin next -->\n<!-- planstate:end next\n<!-- planstate:end next -->\n",
            "unreadable planstate marker",
            2,
        ),
        (
            "<!-- planstate:begin next -->\n<!-- planstate:end phases -->\n<!-- planstate:end next -->\n",
            "end of region phases without its begin line (region next is open since line 1; a mistyped",
            2,
        ),
    ],
    ids=["unknown", "no-end", "no-begin", "duplicate", "unreadable", "stray-end"],
)
def test_parse_reports_malformed_markers_and_renders_none_of_them(body: str, message: str, line: int) -> None:
    layout = regions.parse(body)
    assert layout.regions == []
    assert any(message in t.message and t.at + 1 == line for t in layout.troubles), layout.troubles


def test_a_begin_inside_an_open_region_ends_it_and_opens_its_own() -> None:
    body = (
        "<!-- planstate:begin next -->\nmy words\n<!-- planstate:begin phases -->\n"
        "<!-- planstate:end phases -->\n<!-- planstate:end next -->\n"
    )
    layout = regions.parse(body, first_line=10)
    assert [(r.name, r.begin, r.end) for r in layout.regions] == [("phases", 2, 3)]
    assert [(t.at, t.message) for t in layout.troubles] == [
        (
            0,
            "region next has no end line (`<!-- planstate:end next -->` expected before line 12, where region "
            "phases begins)",
        ),
        (4, "end of region next without its begin line"),
    ]


def test_a_mistyped_end_marker_is_two_troubles_and_the_regions_after_it_stay() -> None:
    names = ("gantt", "decisions", "sessions")
    body = "".join(f"<!-- planstate:begin {n} -->\n{n} text\n<!-- planstate:end {n} -->\n" for n in names)
    layout = regions.parse(body.replace("planstate:end gantt", "planstate:end gant"))
    assert [r.name for r in layout.regions] == ["decisions", "sessions"]
    assert [(t.at, t.message) for t in layout.troubles] == [
        (
            0,
            "region gantt has no end line (`<!-- planstate:end gantt -->` expected before line 4, where region "
            "decisions begins)",
        ),
        (
            2,
            "end of region gant without its begin line (region gantt is open since line 1; a mistyped "
            "`<!-- planstate:end gantt -->`?)",
        ),
    ]


def test_a_stray_or_unreadable_marker_inside_a_region_leaves_it_alone() -> None:
    for inner in ("<!-- planstate:end phases -->", "<!-- planstate:end next"):
        body = f"<!-- planstate:begin next -->\n{inner}\n<!-- planstate:end next -->\n<!-- planstate:begin phases -->\n"
        body += "<!-- planstate:end phases -->\n"
        layout = regions.parse(body)
        assert [r.name for r in layout.regions] == ["phases"]
        assert [t.at for t in layout.troubles] == [1]


def malformed_gantt(path: Path) -> str:
    """The gantt region's lines, its begin marker to its mistyped end marker."""
    text = path.read_text()
    return text[text.index("<!-- planstate:begin gantt") : text.index("<!-- planstate:end gant -->")]


def test_a_mistyped_end_marker_leaves_the_other_regions_rendering(run: Run, project: Path) -> None:
    path = state_file(project)
    path.write_text(path.read_text().replace("<!-- planstate:end gantt -->", "<!-- planstate:end gant -->"))
    gantt = malformed_gantt(path)
    result = exits(run("check", "--format", "json", cwd=project), 1)
    found = [(f["code"], f["line"]) for f in json_data(result)["findings"]]
    lines = path.read_text().splitlines()
    begin = next(i for i, line in enumerate(lines, 1) if line.startswith("<!-- planstate:begin gantt"))
    typo = lines.index("<!-- planstate:end gant -->") + 1
    assert found == [("malformed-region", begin), ("malformed-region", typo)]
    exits(run("set", "position.task", "Typing", cwd=project))  # a write renders the regions around gantt
    assert "Typing" in region_text(path, "position")
    write_decision(project, "dec-1b2k9qx7m4fa", "Use jose")
    rendered = exits(run("render", cwd=project), 1)  # gantt is still not rendered, and says why
    assert "rendered decisions" in rendered.stdout
    assert "Use jose" in region_text(path, "decisions")
    assert malformed_gantt(path) == gantt  # the malformed region's text is untouched
    result = exits(run("check", "--format", "json", cwd=project), 1)
    assert [f["code"] for f in json_data(result)["findings"]] == ["malformed-region"] * 2


def test_markers_inside_code_fences_are_text() -> None:
    body = "```markdown\n<!-- planstate:begin next -->\n```\n~~~\n<!-- planstate:end x -->\n~~~\n"
    layout = regions.parse(body)
    assert layout.regions == [] and layout.troubles == []


def test_checksum_ignores_line_endings() -> None:
    assert regions.text_hash("a\nb\n") == regions.text_hash("a\r\nb\r\n")
    assert regions.text_hash("a\n") != regions.text_hash("a \n")
    assert re.fullmatch(r"[0-9a-f]{12}", regions.text_hash(""))


# ---------------------------------------------------------------------------- writes re-render regions


def test_init_renders_every_region_and_render_check_is_clean(run: Run, project: Path) -> None:
    layout = regions.parse(body_of(state_file(project)))
    assert [r.name for r in layout.regions] == list(regions.NAMES)
    assert all(set(r.attrs) == {"sha", "in"} for r in layout.regions)
    assert "- **Phase 1 of 3:** Design (active)" in region_text(state_file(project), "position")
    assert exits(run("render", "--check", cwd=project)).stdout == ".planning/STATE.md: up to date\n"
    assert exits(run("check", cwd=project)).stdout == "2 files checked: 0 errors, 0 warnings\n"


def test_set_rerenders_only_the_region_whose_inputs_changed(run: Run, project: Path) -> None:
    path = state_file(project)
    before = body_of(path)
    exits(run("set", "next_action", "Write the schema", cwd=project))
    after = body_of(path)
    assert outside(after) == outside(before)
    old, new = regions.parse(before), regions.parse(after)
    texts = {r.name: r.interior(old.lines) for r in old.regions}
    assert [r.name for r in new.regions if r.interior(new.lines) != texts[r.name]] == ["next"]
    assert region_text(path, "next") == "Write the schema\n"


def test_a_write_that_changes_no_region_input_does_not_import_jinja(project: Path) -> None:
    """`set title` changes no region's inputs, so the write path never loads Jinja (about 25 ms a process)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "planstate", "set", "title", "Another title"],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, "PLANSTATE_ACTOR": "tester"},
    )
    assert done.returncode == 0, done.stderr
    assert "title: Another title" in state_file(project).read_text()
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time")}
    assert "planstate.render.regions" in imported  # the regions were looked at...
    assert not any(name.split(".")[0] == "jinja2" for name in imported)  # ...and none needed rendering


def test_rendering_is_deterministic_and_a_noop_writes_nothing(run: Run, project: Path) -> None:
    path = state_file(project)
    exits(run("set", "position.task", "Write tests", cwd=project))
    before = path.read_bytes()
    os.utime(path, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    assert exits(run("render", cwd=project)).stdout == ".planning/STATE.md: up to date\n"
    assert exits(run("render", "--force", cwd=project)).stdout == ".planning/STATE.md: up to date\n"
    assert path.read_bytes() == before
    assert path.stat().st_mtime_ns == 1_000_000_000_000_000_000
    # Rendering from scratch (markers without hashes) gives the same bytes again.
    stripped = re.sub(rb" sha=\S+ in=\S+ -->", b" -->", before)
    path.write_bytes(stripped)
    exits(run("render", cwd=project))
    assert path.read_bytes() == before


def test_a_record_added_by_file_makes_its_region_stale_until_render(run: Run, project: Path) -> None:
    path = state_file(project)
    write_decision(project, "dec-1b2k9qx7m4fa", "Use jose")
    result = exits(run("check", cwd=project), 1)
    assert ".planning/STATE.md:" in result.stdout and "error stale-region: region decisions does not" in result.stdout
    assert exits(run("render", "--check", cwd=project), 1).stdout == ".planning/STATE.md: would render decisions\n"
    before = path.read_bytes()
    assert exits(run("render", cwd=project)).stdout == ".planning/STATE.md: rendered decisions\n"
    assert "Use jose" in region_text(path, "decisions")
    assert b"updated: 2026-01-01T00:00:00Z" in path.read_bytes()  # a region-only write leaves `updated` alone
    assert outside(body_of(path)) == outside(Document.from_bytes(before).body)
    exits(run("check", cwd=project))


def test_render_diff_shows_the_change_and_check_mode_writes_nothing(run: Run, project: Path) -> None:
    path = state_file(project)
    write_decision(project, "dec-1b2k9qx7m4fa", "Use jose")
    before = path.read_bytes()
    result = exits(run("render", "--check", "--diff", cwd=project), 1)
    assert path.read_bytes() == before
    lines = result.stdout.splitlines()
    assert lines[:2] == ["--- a/.planning/STATE.md", "+++ b/.planning/STATE.md"]
    assert "-_No decisions recorded._" in lines
    assert any(line.startswith("+| 2026-01-02 | [Use jose](decisions/dec-1b2k9qx7m4fa-x.md)") for line in lines)
    assert lines[-1] == ".planning/STATE.md: would render decisions"
    data = json_data(exits(run("render", "--json", "--diff", cwd=project)))
    assert data["diff"].startswith("--- a/.planning/STATE.md")
    assert data["files"][0]["written"] is True
    assert [r["name"] for r in data["files"][0]["regions"] if r["status"] == "rendered"] == ["decisions"]
    assert exits(run("render", "--check", cwd=project)).returncode == 0


# ---------------------------------------------------------------------------- people's edits


def test_a_hand_edit_inside_a_region_is_kept_until_render_force(run: Run, project: Path) -> None:
    path = state_file(project)
    text = path.read_text().replace("- **Task:** none (pending)", "- **Task:** my own words")
    path.write_text(text)
    written = exits(run("set", "next_action", "Something else", cwd=project))  # an ordinary write keeps the edit...
    assert "- **Task:** my own words" in path.read_text()
    assert region_text(path, "next") == "Something else\n"  # ...and still renders the other regions
    assert written.stderr == (  # ...and says, in one line, which region it left alone and why
        "planstate: warning: .planning/STATE.md:72: region position not rendered: it was edited by hand; "
        "kept until `planstate render --force`\n"
    )
    exits(run("set", "position.task", "Write tests", cwd=project))  # even when the region's inputs change
    assert "- **Task:** my own words" in path.read_text()
    result = exits(run("check", "--fix", cwd=project), 1)  # --fix does not touch it: not safe
    assert "error hand-edit: region position was edited by hand" in result.stdout
    assert "planstate render --force" in result.stdout
    assert result.stderr == ""  # check reports it as a finding, not as a warning of its own writes
    result = exits(run("render", cwd=project), 1)
    assert "region position not rendered: it was edited by hand; kept until `planstate render --force`" in (
        result.stderr
    )
    assert exits(run("render", "--check", cwd=project), 1)
    exits(run("render", "--force", cwd=project))
    assert "- **Task:** Write tests (pending)" in region_text(path, "position")
    exits(run("check", cwd=project))


def test_a_deleted_region_stays_deleted(run: Run, project: Path) -> None:
    path = state_file(project)
    text = path.read_text()
    start = text.index("<!-- planstate:begin gantt")
    end = text.index("<!-- planstate:end gantt -->\n") + len("<!-- planstate:end gantt -->\n")
    path.write_text(text[:start] + text[end:])
    exits(run("phase", "complete", "1", cwd=project, env={"PLANSTATE_NOW": "2026-01-01T02:00:00Z"}))
    exits(run("render", cwd=project))
    assert "planstate:begin gantt" not in path.read_text()
    assert [r.name for r in regions.parse(body_of(path)).regions] == [n for n in regions.NAMES if n != "gantt"]
    exits(run("check", cwd=project))


def test_a_moved_region_is_rendered_where_it_is(run: Run, project: Path) -> None:
    path = state_file(project)
    text = path.read_text()
    start = text.index("<!-- planstate:begin progress")
    end = text.index("<!-- planstate:end progress -->\n") + len("<!-- planstate:end progress -->\n")
    block = text[start:end]
    path.write_text(text[:start] + text[end:] + "\n## Notes\n\nMine.\n\n" + block)
    exits(run("phase", "complete", "1", cwd=project))
    after = path.read_text()
    assert after.endswith("<!-- planstate:end progress -->\n")
    assert "`███████░░░░░░░░░░░░░ 33%` 1 of 3 phases completed" in region_text(path, "progress")
    assert after.index("## Notes\n\nMine.\n") < after.index("<!-- planstate:begin progress")
    exits(run("check", cwd=project))


def test_crlf_state_keeps_crlf_in_regions(run: Run, project: Path) -> None:
    path = state_file(project)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    exits(run("set", "next_action", "Line one\nline two", cwd=project))
    data = path.read_bytes()
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert b"Line one\r\nline two\r\n<!-- planstate:end next -->" in data
    exits(run("check", cwd=project))  # no hand edit: checksums ignore line endings
    exits(run("render", "--check", cwd=project))


def test_text_outside_regions_and_malformed_regions_are_never_changed(run: Run, project: Path) -> None:
    path = state_file(project)
    text = path.read_text()
    text = text.replace("## Blockers\n", "## Blockers\n\nMy notes about blockers.\n")
    text += "\n<!-- planstate:begin next -->\nA second next region: malformed, left alone.\n"
    path.write_text(text)
    before = body_of(path)
    exits(run("set", "next_action", "Changed", "position.task", "T", cwd=project))
    after = body_of(path)
    assert "My notes about blockers." in after
    assert after.endswith("<!-- planstate:begin next -->\nA second next region: malformed, left alone.\n")
    assert region_text(path, "next") == "Changed\n"  # the well-formed next region before it is still rendered
    assert outside(after) == outside(before)
    result = exits(run("check", cwd=project), 1)
    assert "error malformed-region: region next has no end line" in result.stdout


# ---------------------------------------------------------------------------- user text is data


MALICIOUS = "{{ 7*7 }} {% raw %} <!-- planstate:end decisions --> a|b `x` -->"


def test_malicious_values_render_literally_and_keep_the_structure(run: Run, project: Path) -> None:
    path = state_file(project)
    write_decision(project, "dec-1b2k9qx7m4fa", MALICIOUS, decision=MALICIOUS + "\n<!-- planstate:begin next -->")
    exits(run("render", cwd=project))
    exits(run("set", "next_action", "<!-- planstate:end next -->\n```\n{{ 7*7 }}\n{% endraw %}", cwd=project))
    exits(run("set", "position.task", "<!-- planstate:end position -->", cwd=project))
    layout = regions.parse(body_of(path))
    assert layout.troubles == []
    assert [r.name for r in layout.regions] == list(regions.NAMES)
    decisions = region_text(path, "decisions")
    assert "{{ 7*7 }} {% raw %} &lt;!-- planstate:end decisions --&gt; a\\|b `x` --&gt;" in decisions
    assert "49" not in decisions
    assert len(decisions.splitlines()) == 3  # header, rule, one row: the newline in the value did not split it
    assert region_text(path, "next") == "&lt;!-- planstate:end next --&gt;\n\\```\n{{ 7*7 }}\n{% endraw %}\n"
    assert "- **Task:** &lt;!-- planstate:end position --&gt; (pending)" in region_text(path, "position")
    exits(run("check", cwd=project))


def test_a_user_override_is_used_and_sandboxed(run: Run, project: Path) -> None:
    path = state_file(project)
    folder = project / ".planning" / "templates" / "regions"
    folder.mkdir(parents=True)
    (folder / "next.md.j2").write_text("NEXT: {{ next_action | inline | upper }}\n")
    result = exits(run("check", cwd=project), 1)  # a new template is a new input: the region is stale
    assert "stale-region: region next" in result.stdout
    exits(run("render", cwd=project))
    assert region_text(path, "next") == "NEXT: START PHASE 1: DESIGN\n"
    exits(run("check", cwd=project))
    # A template may not reach Python internals, and undefined names are errors.
    (folder / "next.md.j2").write_text("ok\n{{ ''.__class__.__mro__[1].__subclasses__() }}\n")
    result = exits(run("check", "--format", "json", cwd=project), 1)
    (finding,) = [f for f in json_data(result)["findings"] if f["code"] == "template-error"]
    assert finding["path"] == ".planning/templates/regions/next.md.j2" and finding["line"] == 2
    assert "unsafe" in finding["message"] or "not safely callable" in finding["message"], finding
    (folder / "next.md.j2").write_text("{{ no_such_name }}\n")
    result = exits(run("check", cwd=project), 1)
    assert ".planning/templates/regions/next.md.j2:1: error template-error: region next of .planning/STATE.md" in (
        result.stdout
    )
    assert "'no_such_name' is undefined" in result.stdout
    exits(run("set", "next_action", "still writable", cwd=project))  # a broken override never blocks a write
    assert region_text(path, "next") == "NEXT: START PHASE 1: DESIGN\n"
    result = exits(run("render", cwd=project), 1)
    assert result.stderr.startswith("planstate: .planning/STATE.md:")
    assert "'no_such_name' is undefined (.planning/templates/regions/next.md.j2:1)" in result.stderr


def test_template_output_may_not_hold_a_marker_line(project: Path) -> None:
    folder = project / ".planning" / "templates" / "regions"
    folder.mkdir(parents=True)
    (folder / "resume.md.j2").write_text("x\n<!-- planstate:end resume -->\n")
    report = Workspace.find(project).render()
    (problem,) = report.files[0].problems
    assert "template output contains a planstate marker line" in problem[1]
    assert [r.name for r in regions.parse(body_of(state_file(project))).regions] == list(regions.NAMES)


def test_render_api_mirrors_the_command(project: Path) -> None:
    write_decision(project, "dec-1b2k9qx7m4fa", "Use jose")
    ws = Workspace.find(project)
    preview = ws.render(check=True)
    assert not preview.clean and [f.shown for f in preview.changed] == [".planning/STATE.md"]
    assert preview.diff().startswith("--- a/.planning/STATE.md\n+++ b/.planning/STATE.md\n")
    done = ws.render()
    assert done.files[0].written and ws.render(check=True).clean


def test_render_refuses_an_invalid_front_matter(run: Run, project: Path) -> None:
    path = state_file(project)
    path.write_text(path.read_text().replace("  phase: 1\n", "  phase: one\n"))
    result = exits(run("render", cwd=project), 2)
    assert result.stderr.startswith("planstate: .planning/STATE.md:") and "position.phase" in result.stderr
    assert len(result.stderr.splitlines()) == 1


# ---------------------------------------------------------------------------- records that cannot be read


def decisions_region_after_a_broken_record(run: Run, project: Path) -> tuple[Path, str]:
    """Render two decisions into the region, then break one of the files as a torn editor save would."""
    write_decision(project, "dec-1b2k9qx7m4fa", "Use jose")
    broken = write_decision(project, "dec-1b2k9qx7m4fb", "Use Redis")
    exits(run("render", cwd=project))
    shown = region_text(state_file(project), "decisions")
    assert "Use Redis" in shown
    broken.write_text("---\nschema_version: 1\nid: dec-1b2k9qx7m4fb\ntitle: [Half", encoding="utf-8")
    return broken, shown


@pytest.mark.parametrize("breakage", ["parse", "schema"])
def test_an_unreadable_record_never_drops_out_of_its_region(run: Run, project: Path, breakage: str) -> None:
    broken, shown = decisions_region_after_a_broken_record(run, project)
    if breakage == "schema":
        write_decision(project, "dec-1b2k9qx7m4fb", "Use Redis", status="maybe")  # valid YAML, invalid value
        why = ".planning/decisions/dec-1b2k9qx7m4fb-x.md does not validate (status: 'maybe' is not one of"
    else:
        why = "cannot re-render: .planning/decisions/dec-1b2k9qx7m4fb-x.md does not parse"
    path = state_file(project)
    # render keeps the region and says why, exit 1
    result = exits(run("render", cwd=project), 1)
    assert region_text(path, "decisions") == shown
    assert "region decisions not rendered: cannot re-render: .planning/decisions/dec-1b2k9qx7m4fb-x.md" in (
        result.stderr
    )
    # a write of STATE.md alone reads no decision: it renders its own regions and leaves this one as it is
    written = exits(run("set", "next_action", "Carry on", cwd=project))
    assert region_text(path, "decisions") == shown and region_text(path, "next") == "Carry on\n"
    assert written.stderr == ""
    # a write of a decision renders what it can, keeps the region and warns in one line
    written = exits(run("decision", "add", "--context", "c", "--decision", "Use Kafka", "--reason", "r", cwd=project))
    assert region_text(path, "decisions") == shown
    (warning,) = written.stderr.splitlines()
    assert warning.startswith("planstate: warning: .planning/STATE.md:") and "region decisions not rendered" in warning
    # check reports the record's own problem and a stale region it cannot fix, saying why; --fix leaves it alone
    before = path.read_bytes()
    data = json_data(exits(run("check", "--fix", "--format", "json", cwd=project), 1))
    codes = {f["code"]: f for f in data["findings"]}
    assert ("parse-error" if breakage == "parse" else "schema-error") in codes
    stale = codes["stale-region"]
    assert stale["fixable"] is False and why in stale["message"] and stale["field"] == "region decisions"
    assert data["fixed"] == [] and path.read_bytes() == before
    # once the record is repaired, the region is rendered with both decisions
    write_decision(project, "dec-1b2k9qx7m4fb", "Use Redis")
    exits(run("check", "--fix", cwd=project))
    assert "Use jose" in region_text(path, "decisions") and "Use Redis" in region_text(path, "decisions")
    assert broken.exists()


# ---------------------------------------------------------------------------- templates that fail at runtime

FAILING = {
    "division": ("{{ phases_total }}\n{{ 1/0 }}\n", 2, "ZeroDivisionError"),
    "type": ('{{ phases_total + "s" }}\n', 1, "unsupported operand"),
    "sandbox": ("{% for i in range(10**9) %}{% endfor %}\n", 1, "Range too big"),
}


@pytest.mark.parametrize("case", list(FAILING))
def test_a_region_template_failing_at_runtime_never_breaks_a_write(run: Run, project: Path, case: str) -> None:
    source, line, words = FAILING[case]
    path = state_file(project)
    folder = project / ".planning" / "templates" / "regions"
    folder.mkdir(parents=True)
    (folder / "progress.md.j2").write_text(source)
    progress = region_text(path, "progress")
    written = exits(run("set", "next_action", "Keep going", cwd=project))
    assert region_text(path, "next") == "Keep going\n" and region_text(path, "progress") == progress
    (warning,) = written.stderr.splitlines()
    assert warning.startswith("planstate: warning: .planning/STATE.md:") and "region progress not rendered" in warning
    assert words in warning and f"(.planning/templates/regions/progress.md.j2:{line})" in warning
    data = json_data(exits(run("check", "--format", "json", cwd=project), 1))
    (finding,) = data["findings"]
    assert (finding["code"], finding["path"], finding["line"]) == (
        "template-error",
        ".planning/templates/regions/progress.md.j2",
        line,
    )
    assert words in finding["message"]
    result = exits(run("render", cwd=project), 1)
    assert "Traceback" not in result.stderr and words in result.stderr


def test_a_resume_template_failing_at_runtime_is_one_line_exit_2(run: Run, project: Path) -> None:
    (project / ".planning" / "templates").mkdir()
    (project / ".planning" / "templates" / "resume.md.j2").write_text("# {{ b.title }}\n{{ b.title + 1 }}\n")
    result = exits(run("resume", cwd=project), 2)
    assert result.stderr.startswith("planstate: .planning/templates/resume.md.j2:2: template error: ")
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("kind", "args"),
    [
        ("decision", ("decision", "add", "--title", "T", "--context", "c", "--decision", "d", "--reason", "r")),
        ("blocker", ("blocker", "add", "--title", "T", "--description", "d")),
        ("session", ("session", "start", "--agent", "a")),
    ],
)
def test_a_record_template_failing_at_runtime_writes_nothing(
    run: Run, project: Path, kind: str, args: tuple[str, ...]
) -> None:
    (project / ".planning" / "templates").mkdir()
    (project / ".planning" / "templates" / f"{kind}.md.j2").write_text("# {{ id }}\n\n{{ 1/0 }}\n")
    folder = project / ".planning" / f"{kind}s"
    before = sorted(folder.iterdir())
    result = exits(run(*args, cwd=project), 2)
    assert result.stderr == (
        f"planstate: .planning/templates/{kind}.md.j2:3: template error: ZeroDivisionError: division by zero\n"
    )
    assert sorted(folder.iterdir()) == before


# ---------------------------------------------------------------------------- markers without a checksum


def test_text_between_markers_without_a_checksum_is_a_hand_edit(run: Run, project: Path) -> None:
    path = state_file(project)
    with path.open("a", encoding="utf-8") as handle:
        handle.write("\n<!-- planstate:begin resume -->\nMy precious notes\n<!-- planstate:end resume -->\n")
    text = path.read_text()
    start = text.index("<!-- planstate:begin resume sha=")
    end = text.index("<!-- planstate:end resume -->\n") + len("<!-- planstate:end resume -->\n")
    path.write_text(text[:start] + text[end:])  # the rendered resume region is gone; the typed one stays
    written = exits(run("set", "next_action", "Write it down", cwd=project))
    assert "My precious notes" in region_text(path, "resume")
    assert "region resume not rendered: it was edited by hand" in written.stderr
    result = exits(run("check", "--fix", cwd=project), 1)
    assert "error hand-edit: region resume was edited by hand" in result.stdout
    assert "My precious notes" in region_text(path, "resume")
    exits(run("render", "--force", cwd=project))
    assert "My precious notes" not in path.read_text()
    exits(run("check", cwd=project))


def test_markers_without_a_checksum_around_nothing_are_filled(run: Run, project: Path) -> None:
    path = state_file(project)
    with path.open("a", encoding="utf-8") as handle:
        handle.write("\n<!-- planstate:begin next -->\n\n<!-- planstate:end next -->\n")
    text = path.read_text()
    start = text.index("<!-- planstate:begin next sha=")
    end = text.index("<!-- planstate:end next -->\n") + len("<!-- planstate:end next -->\n")
    path.write_text(text[:start] + text[end:])
    exits(run("set", "next_action", "Fill me", cwd=project))
    assert region_text(path, "next") == "Fill me\n"
    exits(run("check", cwd=project))


def test_markers_and_text_on_one_line_are_left_alone(run: Run, project: Path) -> None:
    path = state_file(project)
    line = "<!-- planstate:begin next -->My precious notes<!-- planstate:end next -->\n"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line)
    exits(run("set", "next_action", "Elsewhere", cwd=project))
    assert path.read_text().endswith(line)
    assert "malformed-region" in exits(run("check", cwd=project), 1).stdout


# ---------------------------------------------------------------------------- a stale checksum on current text


def test_current_text_under_a_stale_checksum_is_a_stale_marker_not_a_hand_edit(run: Run, project: Path) -> None:
    path = state_file(project)
    write_decision(project, "dec-1b2k9qx7m4fa", "Use jose")
    exits(run("render", cwd=project))
    text = path.read_text()
    current = re.search(r"<!-- planstate:begin decisions sha=(\w+)", text)
    assert current is not None
    path.write_text(text.replace(f"sha={current.group(1)}", "sha=000000000000"))  # as a hand-merged file may be
    data = json_data(exits(run("check", "--format", "json", cwd=project), 1))
    (finding,) = data["findings"]
    assert finding["code"] == "stale-region" and finding["fixable"] is True
    assert "checksum" in finding["message"]
    exits(run("check", "--fix", cwd=project))
    assert f"sha={current.group(1)}" in path.read_text()
