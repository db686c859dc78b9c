"""`planstate git textconv`: the canonical one-line-per-field view `git diff` shows, and raw text for anything else.

Golden files under tests/golden/git/ pin the view of the realistic STATE.md and of the examples in
docs/format.md; regenerate them after an intended change and review their diff:

    PLANSTATE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_textconv.py
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest
from builders import front_matter
from conftest import REPO, Run
from test_templates_golden import GOLDEN, matches_golden

from planstate.vcs.textconv import BODY_SEPARATOR, kind_of, textconv

FORMAT = (REPO / "docs" / "format.md").read_text(encoding="utf-8")
EXAMPLE = re.compile(r"<!-- example: (\w+) -->\n```markdown\n(.*?)\n```\n", re.DOTALL)


def view(text: str, path: str = "STATE.md") -> str:
    """The canonical view of a file's text."""
    return textconv(text.encode("utf-8"), path)


def front(view_text: str) -> list[str]:
    """The field lines of a view (before the body separator)."""
    return view_text.split(BODY_SEPARATOR + "\n", 1)[0].splitlines()


# ---------------------------------------------------------------------------- golden views


def test_realistic_state_view_matches_its_golden_file() -> None:
    data = (GOLDEN / "STATE.md").read_bytes()
    matches_golden("git/textconv-STATE.txt", textconv(data, ".planning/STATE.md").encode("utf-8"))


@pytest.mark.parametrize("kind", ["state", "decision", "blocker", "session"])
def test_format_example_views_match_their_golden_files(kind: str) -> None:
    text = dict((m.group(1), m.group(2) + "\n") for m in EXAMPLE.finditer(FORMAT))[kind]
    # as git hands an old version over: a temporary file named after the original, in no planning folder
    matches_golden(f"git/textconv-example-{kind}.txt", view(text, f"/tmp/Xy12ab_{kind}.md").encode("utf-8"))


def test_history_view_matches_its_golden_file() -> None:
    lines = [
        '{"at": "2026-11-22T08:00:00Z", "from": "paused", "to": "active", "trigger": "resume", "reason": null, '
        '"by": "worker-abc"}',
        '{"at": "2026-11-20T09:00:00Z", "from": null, "to": "active", "trigger": "init", "reason": null, '
        '"by": "alice"}',
        '{"at": "2026-11-21T18:00:00+01:00", "from": "active", "to": "paused", "trigger": "pause", '
        '"reason": "Waiting for\\nOAuth credentials", "by": "alice", "ticket": 42}',
        "not json at all",
        '{"to": "archived"}',
    ]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    matches_golden("git/textconv-history.txt", textconv(data, ".planning/history.jsonl").encode("utf-8"))


# ---------------------------------------------------------------------------- the view's rules


def test_fields_in_model_order_unknown_keys_after_sorted() -> None:
    text = "---\nzeta: 1\ntitle: T\nalpha: [a, b]\nschema_version: 1\nlifecycle:\n  state: active\n  custom: x\n---\n"
    assert front(view(text)) == [
        "schema_version: 1",
        "title: T",
        "lifecycle.state: active",
        "lifecycle.custom: x",
        "alpha[]: a",
        "alpha[]: b",
        "zeta: 1",
    ]


def test_phases_are_keyed_by_number_from_the_first_phase() -> None:
    base = "---\nlifecycle: {state: active}\nstructure: {phases_total: 2, first_phase: %d}\nphases:\n"
    phases = "  - {name: Zero, status: completed}\n  - {name: One}\n---\n"
    assert front(view(base % 0 + phases)) == [
        "structure.phases_total: 2",
        "structure.first_phase: 0",
        "phases.0.name: Zero",
        "phases.0.status: completed",
        "phases.1.name: One",
        "lifecycle.state: active",
    ]
    assert front(view(base % 1 + phases))[2] == "phases.1.name: Zero"


def test_attempts_lists_and_maps() -> None:
    text = (
        "---\nlifecycle: {state: active}\nphases:\n  - name: Build\n    evidence: {tests: 7/12, a: 1}\n"
        "    previous:\n      - {started: 2026-11-20T09:00:00Z, failure: flaky, evidence: {}}\n"
        "resume_context:\n  files_modified: [src/a.ts, src/b.ts]\n  open_questions: []\n---\n"
    )
    assert front(view(text)) == [
        "phases.1.name: Build",
        "phases.1.evidence.a: 1",
        "phases.1.evidence.tests: 7/12",
        "phases.1.previous.0.started: 2026-11-20T09:00:00Z",
        "phases.1.previous.0.evidence: {}",
        "phases.1.previous.0.failure: flaky",
        "lifecycle.state: active",
        "resume_context.files_modified[]: src/a.ts",
        "resume_context.files_modified[]: src/b.ts",
        "resume_context.open_questions: []",
    ]


def test_multi_line_strings_are_blocks() -> None:
    text = "---\nlifecycle: {state: active}\nnext_action: |\n  First line.\n\n  After a blank.\n---\n"
    assert front(view(text))[1:] == ["next_action: |", "  First line.", "", "  After a blank."]


def test_timestamps_are_utc_with_z_however_they_are_written() -> None:
    text = (
        "---\nlifecycle:\n  state: active\n  since: '2026-11-22T09:00:00+01:00'\n"
        'created: 2026-11-22 08:00:00\nupdated: "2026-11-22T08:00:00Z"\n---\n'
    )
    assert front(view(text)) == [
        "created: 2026-11-22T08:00:00Z",
        "updated: 2026-11-22T08:00:00Z",
        "lifecycle.state: active",
        "lifecycle.since: 2026-11-22T08:00:00Z",
    ]


def test_strings_that_would_read_ambiguously_are_quoted() -> None:
    text = "---\nlifecycle: {state: active}\ntitle: ''\nnext_action: ' padded '\n---\n"
    assert front(view(text))[0] == 'title: ""'
    assert front(view(text))[2] == 'next_action: " padded "'


def test_region_markers_lose_their_volatile_attributes() -> None:
    body = (
        "# Notes\r\n"
        "<!-- planstate:begin position sha=e5fcdaf4c114 in=b8809f1b7682 -->\r\n"
        "text\r\n"
        "<!-- planstate:end position -->\r\n"
        "  <!-- planstate:begin next in=1 sha=2 keep=yes -->\r\n"
    )
    shown = view(front_matter({"lifecycle": {"state": "active"}}, body))
    assert shown.split(BODY_SEPARATOR + "\n", 1)[1] == (
        "# Notes\n<!-- planstate:begin position -->\ntext\n<!-- planstate:end position -->\n"
        "  <!-- planstate:begin next keep=yes -->\n"
    )


def test_a_rerender_that_only_changes_hashes_reads_the_same() -> None:
    data = (GOLDEN / "STATE.md").read_text(encoding="utf-8")
    churned = re.sub(r"sha=[0-9a-f]+", "sha=000000000000", data)
    assert churned != data and view(churned) == view(data)


@pytest.mark.parametrize(
    ("data", "path", "kind"),
    [
        ({"lifecycle": {"state": "active"}}, "/tmp/aB3xYz_STATE.md", "state"),
        ({"id": "dec-1b2k9qx7m4fa"}, "x.md", "decision"),
        ({"id": "block-001", "identified": "2026-11-21T10:00:00Z"}, "x.md", "blocker"),
        ({"id": "anything", "agent": "a", "started": "2026-11-21T10:00:00Z"}, "x.md", "session"),
        ({"id": "hand-made"}, ".planning/decisions/hand-made.md", "decision"),
        ({"title": "a blog post"}, "docs/post.md", None),
        ({"title": "a blog post"}, "STATE.md", "state"),
    ],
)
def test_kind_is_read_from_the_content_first(data: dict[str, object], path: str, kind: str | None) -> None:
    assert kind_of(data, path) == kind


# ---------------------------------------------------------------------------- anything else comes out raw


RAW = {
    "bad-yaml": b"---\ntitle: [unclosed\nlifecycle: {state: active}\n---\nbody\n",
    "conflict": b"---\n<<<<<<< ours\ntitle: A\n=======\ntitle: B\n>>>>>>> theirs\n---\n",
    "binary": b"\x00\x01\x02PNG\xff\xfe",
    "not-utf8": b"---\ntitle: caf\xe9\n---\n",
    "no-front-matter": b"# Just markdown\n\nNo front matter here.\n",
    "unclosed": b"---\ntitle: T\n",
    "not-a-mapping": b"---\n- a\n- b\n---\n",
    "other-markdown": b"---\nlayout: post\ntags: [a]\n---\nA blog post.\n",
    "empty": b"",
}


@pytest.mark.parametrize("name", list(RAW))
def test_files_that_are_not_planning_files_print_raw(name: str) -> None:
    data = RAW[name]
    assert textconv(data, f"{name}.md").encode("utf-8", errors="surrogateescape") == data


@pytest.mark.parametrize("name", ["bad-yaml", "binary", "not-utf8", "conflict"])
def test_cli_prints_a_broken_file_raw_with_exit_0(run: Run, tmp_path: Path, name: str) -> None:
    path = tmp_path / "STATE.md"
    path.write_bytes(RAW[name])
    done = subprocess.run(
        [sys.executable, "-m", "planstate", "git", "textconv", str(path)], capture_output=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == RAW[name] and done.stderr == b""


def test_history_lines_that_are_not_entries_stay_in_place() -> None:
    data = b'{"at": "2026-01-02T00:00:00Z", "to": "active"}\n[1]\n{"at": "2026-01-01T00:00:00Z", "to": "paused"}\n'
    assert textconv(data, "history.jsonl").splitlines() == [
        "2026-01-02T00:00:00Z (none) → active",
        "[1]",
        "2026-01-01T00:00:00Z (none) → paused",
    ]


# ---------------------------------------------------------------------------- real git diff


pytestmark_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_PAGER": "cat"}
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


@pytestmark_git
def test_git_diff_with_textconv_shows_one_field_per_line(run: Run, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "--quiet", "--initial-branch=main")
    for key, value in (("user.name", "T"), ("user.email", "t@example.com"), ("commit.gpgsign", "false")):
        _git(repo, "config", key, value)
    env = {"PLANSTATE_NOW": "2026-11-20T09:00:00Z"}
    assert run("init", "--title", "Auth", "--phase", "Design", "--phase", "Build", cwd=repo, env=env).returncode == 0
    assert run("set", "position.task", "Write the schema", cwd=repo, env=env).returncode == 0
    _git(repo, "add", "-A")
    _git(repo, "commit", "--quiet", "-m", "init")
    _git(repo, "config", "diff.planstate.textconv", f"{sys.executable} -m planstate git textconv")
    (repo / ".gitattributes").write_text("*.md diff=planstate\n")

    env = {"PLANSTATE_NOW": "2026-11-20T10:00:00Z"}
    assert run("set", "position.task", "Write the migrations", cwd=repo, env=env).returncode == 0
    changed = [
        line
        for line in _git(repo, "diff", "--", ".planning/STATE.md").splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    assert "-position.task: Write the schema" in changed
    assert "+position.task: Write the migrations" in changed
    assert "-updated: 2026-11-20T09:00:00Z" in changed and "+updated: 2026-11-20T10:00:00Z" in changed
    assert not any(line.startswith(("-task:", "+task:")) for line in changed)  # never the raw YAML lines
    assert not any("sha=" in line for line in changed)

    _git(repo, "add", "-A")
    _git(repo, "commit", "--quiet", "-m", "task")
    shown = _git(repo, "show", "HEAD", "--", ".planning/STATE.md")
    assert "+position.task: Write the migrations" in shown

    state = repo / ".planning" / "STATE.md"
    state.write_bytes(state.read_bytes() + b"\x00 now binary")  # textconv must never fail, or git diff breaks
    assert "now binary" in _git(repo, "diff", "--text", "--", ".planning/STATE.md")


def test_a_file_that_cannot_be_read_is_one_line_and_exit_2(
    run: Callable[..., CompletedProcess[str]], tmp_path: Path
) -> None:
    for target in (tmp_path / "missing.md", tmp_path):
        done = run("git", "textconv", str(target))
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.count("\n") == 1 and "cannot be read" in done.stderr
