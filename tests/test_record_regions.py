"""Record commands keep STATE.md's record regions current, and merges of two clean branches stay check-clean.

Every planstate command leaves `planstate check` clean: a decision, blocker or session command renders the
regions that show records again (only the regions: `updated` stays). A `git merge` with the driver installed
renders them from both sides' records; without the driver, one `planstate check --fix` repairs the merge.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Completed, exits, json_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planstate.workspace import Workspace
from tests.gitutil import commit_all, git, install_driver, new_repo

Run = Callable[..., Completed]

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def clean(run: Run, cwd: Path) -> None:
    """Assert `planstate check` finds nothing at all."""
    result = run("check", "--json", cwd=cwd)
    report = json_data(result)
    assert result.returncode == 0 and report["findings"] == [], result.stdout


def region(state: Path, name: str) -> str:
    """The text of one generated region of a STATE.md, marker lines included."""
    text = state.read_text()
    start = text.index(f"<!-- planstate:begin {name} ")
    return text[start : text.index(f"<!-- planstate:end {name} -->", start)]


def updated(state: Path) -> str:
    """The `updated:` line of a STATE.md."""
    return next(line for line in state.read_text().splitlines() if line.startswith("updated:"))


def test_every_record_command_leaves_check_clean_and_updated_alone(run: Run, tmp_path: Path) -> None:
    state = tmp_path / ".planning" / "STATE.md"
    exits(run("init", "--title", "Auth", "--phase", "Schema", "--phase", "JWT"))
    clean(run, tmp_path)
    before = updated(state)
    steps = [
        ("decision", "add", "--context", "c", "--decision", "Use jose", "--reason", "Web Crypto", "--json"),
        ("decision", "add", "--context", "c", "--decision", "Use argon2", "--reason", "safer", "--proposed", "--json"),
        ("blocker", "add", "--description", "Waiting for OAuth credentials", "--json"),
        ("session", "start", "--agent", "claude", "--json"),
    ]
    made = []
    for step in steps:
        made.append(json_data(exits(run(*step)))["id"])
        clean(run, tmp_path)
    jose, argon, blocker, session = made
    for step in [
        ("decision", "accept", argon),
        ("decision", "add", "--context", "c", "--decision", "Use paseto", "--reason", "simpler", "--supersedes", jose),
        ("blocker", "activate", blocker),
        ("blocker", "resolve", blocker, "--resolution", "arrived"),
        ("session", "heartbeat"),
        ("session", "end", "--session", session, "--completed", "schema"),
    ]:
        exits(run(*step))
        clean(run, tmp_path)
    assert updated(state) == before  # records are not the state's truth: only the regions changed
    assert "Use paseto" in region(state, "decisions") and "superseded" in region(state, "decisions")
    assert "_No open blockers._" in region(state, "blockers") and "1 resolved blocker" in region(state, "blockers")
    assert "| ended |" in region(state, "sessions")


def test_the_sessions_region_reads_well_with_and_without_working_on(run: Run, tmp_path: Path) -> None:
    state = tmp_path / ".planning" / "STATE.md"
    exits(run("init", "--title", "Auth", "--phase", "Schema"))
    for agent, extra, done in [
        ("solo", (), ("schema",)),
        ("pair", ("--working-on", "Phase 1"), ("a", "b")),
        ("idle", (), ()),
    ]:
        made = json_data(exits(run("session", "start", "--agent", agent, *extra, "--json")))["id"]
        ended = [f"--completed={item}" for item in done]
        exits(run("session", "end", "--session", made, *ended))
    rows = {row.split(" | ")[1].split("]")[0].lstrip("["): row for row in region(state, "sessions").splitlines()[3:]}
    cells = {agent: row.split(" | ")[4] for agent, row in rows.items()}
    assert cells == {"solo": "completed 1 item", "pair": "Phase 1; completed 2 items", "idle": ""}
    clean(run, tmp_path)


def test_a_record_is_kept_when_state_md_cannot_be_read_and_state_md_is_left_alone(run: Run, tmp_path: Path) -> None:
    exits(run("init", "--title", "Auth", "--phase", "Schema"))
    state = tmp_path / ".planning" / "STATE.md"
    broken = state.read_text().replace("title: Auth", "title: [Auth", 1).encode()
    state.write_bytes(broken)
    result = run("decision", "add", "--context", "c", "--decision", "Use jose", "--reason", "r", "--phase", "1")
    exits(result)
    assert state.read_bytes() == broken
    assert len(list((tmp_path / ".planning" / "decisions").glob("*.md"))) == 1


def test_a_hand_edit_in_a_record_region_survives_a_record_command(run: Run, tmp_path: Path) -> None:
    exits(run("init", "--title", "Auth", "--phase", "Schema"))
    state = tmp_path / ".planning" / "STATE.md"
    text = state.read_text()
    state.write_text(text.replace("_No decisions recorded._", "_No decisions recorded yet, says Ann._"))
    result = exits(run("decision", "add", "--context", "c", "--decision", "Use jose", "--reason", "r"))
    assert "says Ann" in region(state, "decisions")  # never overwritten without --force
    assert "region decisions" in result.stderr and "hand" in result.stderr
    check = run("check")
    assert check.returncode == 1 and "error hand-edit: region decisions" in check.stdout


# ---------------------------------------------------------------------------- merges


def branches(run: Run, tmp_path: Path, *, driver: bool) -> Path:
    """A repository with a planstate workspace on main (driver installed or not) and a branch `x` from it."""
    repo = new_repo(tmp_path / "repo")
    exits(run("init", "--title", "Auth", "--phase", "Schema", "--phase", "JWT", cwd=repo))
    if driver:
        install_driver(run, repo)
    commit_all(repo, "init")
    git(repo, "branch", "x")
    return repo


@needs_git
def test_a_merge_with_the_driver_shows_both_sides_records(run: Run, tmp_path: Path) -> None:
    repo = branches(run, tmp_path, driver=True)
    git(repo, "checkout", "--quiet", "x")
    exits(run("decision", "add", "--context", "c", "--decision", "Use jose", "--reason", "x's", cwd=repo))
    exits(run("session", "start", "--agent", "codex", cwd=repo))
    commit_all(repo, "x")
    git(repo, "checkout", "--quiet", "main")
    exits(run("decision", "add", "--context", "c", "--decision", "Use argon2", "--reason", "main's", cwd=repo))
    exits(run("blocker", "add", "--description", "Waiting for keys", cwd=repo))
    commit_all(repo, "main")
    merged = git(repo, "merge", "--no-edit", "x")
    assert "CONFLICT" not in merged.stdout
    clean(run, repo)
    assert git(repo, "status", "--porcelain").stdout == ""
    state = repo / ".planning" / "STATE.md"
    assert "Use jose" in region(state, "decisions") and "Use argon2" in region(state, "decisions")
    assert "codex" in region(state, "sessions") and "Waiting for keys" in region(state, "blockers")


@needs_git
def test_a_merge_without_the_driver_is_repaired_by_one_check_fix(run: Run, tmp_path: Path) -> None:
    repo = branches(run, tmp_path, driver=False)
    git(repo, "checkout", "--quiet", "x")
    exits(run("decision", "add", "--context", "c", "--decision", "Use jose", "--reason", "x's", cwd=repo))
    commit_all(repo, "x")
    git(repo, "checkout", "--quiet", "main")
    exits(run("decision", "add", "--context", "c", "--decision", "Use argon2", "--reason", "main's", cwd=repo))
    commit_all(repo, "main")
    git(repo, "merge", "--no-edit", "x", check=False)
    assert run("check", cwd=repo).returncode == 1
    exits(run("check", "--fix", cwd=repo))
    clean(run, repo)
    decisions = region(repo / ".planning" / "STATE.md", "decisions")
    assert "Use jose" in decisions and "Use argon2" in decisions


@needs_git
def test_the_driver_trusts_no_merge_it_cannot_confirm(run: Run, tmp_path: Path) -> None:
    """A GITHEAD_ variable left in the environment by another command, or naming a commit whose STATE.md is not
    the one git passed, never makes the driver render records it is not sure of."""
    from planstate.vcs.recordsets import merged_in, merged_records

    repo = branches(run, tmp_path, driver=True)
    git(repo, "checkout", "--quiet", "x")
    exits(run("decision", "add", "--context", "c", "--decision", "Use jose", "--reason", "x's", cwd=repo))
    theirs = commit_all(repo, "x")
    git(repo, "checkout", "--quiet", "main")
    planning = repo / ".planning"
    base = git(repo, "show", "main:.planning/STATE.md").stdout.encode()
    other = git(repo, "show", "x:.planning/STATE.md").stdout.encode()
    assert merged_in({f"GITHEAD_{theirs}": "x", "GITHEAD_" + "a" * 40: "y"}) is None  # an octopus: unsure
    assert merged_in({"GITHEAD_HEAD": "x"}) is None
    cwd = Path.cwd()
    os.chdir(repo)  # git runs drivers at the top of the work tree
    try:
        environ = {f"GITHEAD_{theirs}": "x"}
        files = merged_records(Path(".planning"), "STATE.md", (base, base, other), lambda *a: None, environ=environ)
        assert files is not None and [name.split("/")[0] for name in files] == ["decisions"]
        wrong = (base, base, other + b"\n")  # not the STATE.md of the commit named
        assert merged_records(Path(".planning"), "STATE.md", wrong, lambda *a: None, environ=environ) is None
    finally:
        os.chdir(cwd)
    assert planning.is_dir()


# ---------------------------------------------------------------------------- random sequences on two branches

# What one branch does; front-matter writes (`next`) happen on one branch only, so the merge has no real conflict.
STEP = st.sampled_from(["decision", "blocker", "resolve", "session", "end"])


def _act(ws: Workspace, step: str, n: int, mine: dict[str, list[str]]) -> None:
    """Run one step through the public API, remembering the records this branch made."""
    if step == "decision":
        mine["decisions"].append(ws.decision.add(context="c", decision=f"choice {n}", reason=f"reason {n}").id)
    elif step == "blocker":
        mine["blockers"].append(ws.blocker.add(description=f"waiting on {n}").id)
    elif step == "resolve" and mine["blockers"]:
        ws.blocker.resolve(mine["blockers"].pop(0), resolution=f"done {n}")
    elif step == "session":
        mine["sessions"].append(ws.session.start(agent=f"agent{n}").id)
    elif step == "end" and mine["sessions"]:
        ws.session.end(mine["sessions"].pop(0), completed=[f"item {n}"])


@needs_git
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ours=st.lists(STEP, min_size=1, max_size=5),
    theirs=st.lists(STEP, min_size=1, max_size=5),
    next_on_theirs=st.booleans(),
)
def test_random_commands_on_two_branches_merge_check_clean(
    ours: list[str], theirs: list[str], next_on_theirs: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = new_repo(Path(tmp) / "repo")
        Workspace.init(repo, title="Auth", phases=["Schema", "JWT"], actor="tester")
        Workspace(repo / ".planning").git_install()
        commit_all(repo, "init")
        git(repo, "branch", "x")
        open_sessions = []
        for branch, steps in (("x", theirs), ("main", ours)):
            git(repo, "checkout", "--quiet", branch)
            ws = Workspace(repo / ".planning", actor=branch)
            mine: dict[str, list[str]] = {"decisions": [], "blockers": [], "sessions": []}
            for n, step in enumerate(steps):
                _act(ws, step, n, mine)
            if branch == "x" and next_on_theirs:
                ws.set({"next_action": "merge the branches"})
            open_sessions.append(len(mine["sessions"]))
            commit_all(repo, branch)
        merged = git(repo, "merge", "--no-edit", "x", check=False)
        assert merged.returncode == 0, merged.stdout + merged.stderr
        report = Workspace(repo / ".planning").check().to_dict()
        findings = report["findings"]
        # Sessions left running (on one branch or on both, merged) are a true warning about parallel agents.
        both_running = sum(open_sessions) > 1
        assert report["error_count"] == 0, report
        assert [f for f in findings if not (both_running and f["code"] == "multiple-active-sessions")] == []
        assert git(repo, "status", "--porcelain").stdout == ""
        planning = repo / ".planning"
        state = (planning / "STATE.md").read_text()
        for path in (planning / "decisions").glob("*.md"):  # at most 10: all shown
            assert path.name in state
        for path in (planning / "blockers").glob("*.md"):
            assert (path.name in state) == ("status: resolved" not in path.read_text())
        sessions = len(list((planning / "sessions").glob("*.md")))
        assert sum(f"sessions/{p.name}" in state for p in (planning / "sessions").glob("*.md")) == min(sessions, 5)
