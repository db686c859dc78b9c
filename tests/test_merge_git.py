"""The merge driver in real repositories: real `git merge` of branches changed through the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from subprocess import CompletedProcess

import pytest
from conftest import Run, exits, json_data

from tests.gitutil import commit_all, git, install_driver, new_repo, unmerged

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

MORNING = "2026-11-20T09:00:00Z"


def at(hour: int, minute: int = 0) -> dict[str, str]:
    """The environment that pins planstate's clock to that time of the test day."""
    return {"PLANSTATE_NOW": f"2026-11-20T{hour:02d}:{minute:02d}:00Z"}


@pytest.fixture
def repo(run: Run, tmp_path: Path) -> Path:
    """A repository with an initiative of three phases (phase 1 active), committed on main, the driver installed."""
    path = new_repo(tmp_path / "project")
    exits(
        run(
            "init",
            "--title",
            "User auth",
            "--phase",
            "Schema",
            "--phase",
            "JWT",
            "--phase",
            "OAuth",
            cwd=path,
            env=at(9),
        )
    )
    state = path / ".planning" / "STATE.md"
    text = state.read_text()
    state.write_text(text.replace("title: User auth\n", "title: User auth  # the name on the roadmap\n", 1))
    install_driver(run, path)
    commit_all(path, "planstate init")
    return path


def state_text(repo: Path) -> str:
    return (repo / ".planning" / "STATE.md").read_text()


def merge(repo: Path, branch: str) -> CompletedProcess[str]:
    return git(repo, "merge", "--no-edit", branch, check=False)


def branch(repo: Path, name: str) -> None:
    git(repo, "checkout", "--quiet", "-b", name)


def checkout(repo: Path, name: str) -> None:
    git(repo, "checkout", "--quiet", name)


def field(run: Run, repo: Path, path: str) -> object:
    return json_data(exits(run("get", path, "--json", cwd=repo)))


def test_different_fields_merge_cleanly_keep_comments_and_check_clean(run: Run, repo: Path) -> None:
    branch(repo, "feature")
    exits(run("set", "position.task", "Write the migration", cwd=repo, env=at(10)))
    exits(run("append", "resume_context.files_modified", "db/schema.sql", cwd=repo, env=at(10, 5)))
    commit_all(repo, "feature work")
    checkout(repo, "main")
    exits(run("set", "next_action", "Review the schema with Bob", cwd=repo, env=at(11)))
    exits(run("append", "resume_context.open_questions", "Which index type?", cwd=repo, env=at(11, 5)))
    commit_all(repo, "main work")

    done = merge(repo, "feature")
    assert done.returncode == 0, done.stdout + done.stderr
    assert unmerged(repo) == []
    text = state_text(repo)
    assert "title: User auth  # the name on the roadmap\n" in text  # our comment, where it was
    assert "<<<<<<<" not in text
    assert field(run, repo, "position.task") == "Write the migration"
    assert field(run, repo, "next_action") == "Review the schema with Bob"
    assert field(run, repo, "resume_context.files_modified") == ["db/schema.sql"]
    assert field(run, repo, "resume_context.open_questions") == ["Which index type?"]
    assert field(run, repo, "updated") == "2026-11-20T11:05:00Z"  # the later update
    assert "Write the migration" in text.split("---", 2)[2]  # the position region shows the merged task
    check = run("check", cwd=repo)
    assert check.returncode == 0, check.stdout + check.stderr


def test_records_of_both_sides_merge_and_one_blocker_conflicts_on_its_field_only(run: Run, repo: Path) -> None:
    made = exits(
        run(
            "blocker",
            "add",
            "--title",
            "OAuth credentials",
            "--description",
            "Waiting",
            "--active",
            "--json",
            cwd=repo,
            env=at(9, 30),
        )
    )
    blocker_id = json_data(made)["id"]
    commit_all(repo, "blocker")

    def work(name: str, hour: int, workaround: str) -> None:
        env = at(hour)
        exits(
            run(
                "decision",
                "add",
                "--title",
                f"Decision of {name}",
                "--context",
                "c",
                "--decision",
                "d",
                "--reason",
                "r",
                cwd=repo,
                env=env,
            )
        )
        exits(run("blocker", "add", "--title", f"Blocker of {name}", "--description", "x", cwd=repo, env=env))
        session = json_data(exits(run("session", "start", "--agent", name, "--json", cwd=repo, env=env)))["id"]
        exits(run("session", "end", "--session", session, "--completed", "step", cwd=repo, env=at(hour, 30)))
        exits(run("blocker", "bypass", blocker_id, "--workaround", workaround, cwd=repo, env=at(hour, 40)))
        commit_all(repo, f"{name} work")

    branch(repo, "bob")
    work("bob", 10, "Use email sign-in for now")
    checkout(repo, "main")
    work("alice", 11, "Mock the provider")

    done = merge(repo, "bob")
    assert done.returncode != 0
    conflicted = unmerged(repo)
    assert len(conflicted) == 1 and conflicted[0].startswith(f".planning/blockers/{blocker_id}")
    text = (repo / conflicted[0]).read_text()
    assert text.count("<<<<<<<") == 1
    hunk = text[text.index("<<<<<<<") : text.index(">>>>>>>")]
    assert "workaround" in hunk.splitlines()[0]
    assert [line for line in hunk.splitlines()[1:] if line != "======="] == [
        "workaround: Mock the provider",
        "workaround: Use email sign-in for now",
    ]
    assert "active → bypassed: Use email sign-in for now" in text and "active → bypassed: Mock the provider" in text
    for kind, count in (("decisions", 2), ("blockers", 3), ("sessions", 2)):
        assert len(list((repo / ".planning" / kind).glob("*.md"))) == count
    check = run("check", cwd=repo)
    assert check.returncode == 1
    assert "conflict-marker" in check.stdout and "workaround" in check.stdout


def test_the_same_field_changed_differently_is_exactly_one_conflict(run: Run, repo: Path) -> None:
    branch(repo, "feature")
    exits(run("set", "position.task", "Fix the tests", cwd=repo, env=at(10)))
    exits(run("set", "title", "User auth", cwd=repo, env=at(10)))
    commit_all(repo, "feature")
    checkout(repo, "main")
    exits(run("set", "position.task", "Write the docs", cwd=repo, env=at(11)))
    exits(run("set", "next_action", "Release", cwd=repo, env=at(11)))
    commit_all(repo, "main")

    done = merge(repo, "feature")
    assert done.returncode == 1
    assert unmerged(repo) == [".planning/STATE.md"]
    text = state_text(repo)
    assert text.count("<<<<<<<") == 1 and text.count("=======") == 1 and text.count(">>>>>>>") == 1
    lines = text.splitlines()
    start = lines.index("<<<<<<< ours: position.task")
    assert lines[start : start + 5] == [
        "<<<<<<< ours: position.task",
        "  task: Write the docs",
        "=======",
        "  task: Fix the tests",
        ">>>>>>> theirs: position.task",
    ]
    assert "conflict: position.task" in done.stderr or "position.task" in done.stdout + done.stderr
    check = run("check", cwd=repo)
    assert check.returncode == 1 and "position.task" in check.stdout

    # Resolving it the documented way: keep one side, check --fix, add, commit.
    del lines[start + 1 : start + 3]
    del lines[start]
    lines.remove(">>>>>>> theirs: position.task")
    (repo / ".planning" / "STATE.md").write_text("\n".join(lines) + "\n")
    exits(run("check", "--fix", cwd=repo))
    assert field(run, repo, "position.task") == "Fix the tests"
    assert field(run, repo, "next_action") == "Release"
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "--no-edit")
    assert exits(run("check", cwd=repo)).returncode == 0


def test_a_stale_branch_never_reactivates_what_main_archived(run: Run, repo: Path) -> None:
    made = exits(
        run(
            "blocker", "add", "--title", "Flaky CI", "--description", "x", "--active", "--json", cwd=repo, env=at(9, 10)
        )
    )
    blocker_id = json_data(made)["id"]
    commit_all(repo, "blocker")
    branch(repo, "stale")
    exits(run("pause", "--reason", "lunch", cwd=repo, env=at(10)))
    exits(run("resume", "--activate", "--reason", "back", cwd=repo, env=at(10, 30)))
    exits(run("set", "position.task", "Old idea", cwd=repo, env=at(10, 40)))
    exits(run("blocker", "bypass", blocker_id, "--workaround", "retry twice", cwd=repo, env=at(10, 45)))
    commit_all(repo, "stale work")
    checkout(repo, "main")
    exits(run("blocker", "resolve", blocker_id, "--resolution", "Fixed the runner", cwd=repo, env=at(11)))
    exits(run("archive", "--reason", "Replaced by SSO", cwd=repo, env=at(12)))
    commit_all(repo, "archive")

    done = merge(repo, "stale")
    assert done.returncode == 0, done.stdout + done.stderr
    assert field(run, repo, "lifecycle.state") == "archived"
    assert field(run, repo, "lifecycle.reason") == "Replaced by SSO"
    assert field(run, repo, "position.task") == "Old idea"  # its other work still merges
    blocker = json_data(exits(run("blocker", "show", blocker_id, "--json", cwd=repo)))
    assert blocker["status"] == "resolved" and blocker["workaround"] == "retry twice"
    history = [json.loads(line) for line in (repo / ".planning" / "history.jsonl").read_text().splitlines()]
    assert [h["to"] for h in history] == ["active", "paused", "active", "archived"]
    assert [h["at"] for h in history] == sorted(h["at"] for h in history)
    check = run("check", cwd=repo)
    assert "history-mismatch" not in check.stdout and "multiple" not in check.stdout, check.stdout


def test_a_stale_branch_that_worked_after_the_archive_stays_archived_and_check_says_so(run: Run, repo: Path) -> None:
    branch(repo, "stale")
    exits(run("pause", "--reason", "lunch", cwd=repo, env=at(13)))
    commit_all(repo, "stale pause after the archive")
    checkout(repo, "main")
    exits(run("archive", "--reason", "Replaced by SSO", cwd=repo, env=at(12)))
    commit_all(repo, "archive")

    done = merge(repo, "stale")
    assert done.returncode == 0, done.stdout + done.stderr
    assert field(run, repo, "lifecycle.state") == "archived"
    check = run("check", cwd=repo)
    assert check.returncode == 1 and "history-mismatch" in check.stdout


def test_the_body_outside_regions_merges_line_by_line(run: Run, repo: Path) -> None:
    state = repo / ".planning" / "STATE.md"
    state.write_text(state.read_text() + "\n## Notes\n\nfirst note\n\nmiddle\n\nlast note\n")
    commit_all(repo, "notes")
    branch(repo, "feature")
    state.write_text(state.read_text().replace("first note", "first note, edited on feature"))
    exits(run("set", "position.task", "Feature task", cwd=repo, env=at(10)))
    commit_all(repo, "feature")
    checkout(repo, "main")
    state.write_text(state.read_text().replace("last note", "last note, edited on main"))
    exits(run("set", "next_action", "Main action", cwd=repo, env=at(11)))
    commit_all(repo, "main")

    done = merge(repo, "feature")
    assert done.returncode == 0, done.stdout + done.stderr
    text = state_text(repo)
    assert "first note, edited on feature" in text and "last note, edited on main" in text
    assert exits(run("check", cwd=repo)).returncode == 0


def test_a_side_that_does_not_parse_falls_back_to_git_text_merge(run: Run, repo: Path) -> None:
    state = repo / ".planning" / "STATE.md"
    branch(repo, "broken")
    state.write_text(state.read_text().replace("schema_version: 1\n", "schema_version: 1\nbroken: [unclosed\n", 1))
    commit_all(repo, "break it")
    checkout(repo, "main")
    exits(run("set", "next_action", "Main action", cwd=repo, env=at(11)))
    commit_all(repo, "main")

    done = merge(repo, "broken")
    assert "merged as text by git" in done.stderr + done.stdout
    text = state_text(repo)
    assert "broken: [unclosed" in text and "Main action" in text  # git's line merge, whatever it made of it
