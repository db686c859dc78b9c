"""`planstate diff`: real git repositories in tmp_path, changed through the real CLI, compared as a changelog.

The golden outputs (tests/golden/git/diff.*) pin a day of work in text, JSON and markdown; record ids
and commit ids (random and time-dependent) are replaced by placeholders first. Regenerate them after
an intended change and review their diff:

    PLANSTATE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_semdiff.py
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest
from conftest import Run, json_data, json_envelope, json_error
from test_templates_golden import matches_golden

from planstate.core.errors import UsageError
from planstate.vcs.snapshot import at_revision, working_tree
from planstate.workspace import Workspace

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Tester",
    "GIT_AUTHOR_EMAIL": "tester@example.com",
    "GIT_COMMITTER_NAME": "Tester",
    "GIT_COMMITTER_EMAIL": "tester@example.com",
    "GIT_AUTHOR_DATE": "2026-11-20T09:00:00Z",
    "GIT_COMMITTER_DATE": "2026-11-20T09:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
}
_ID = re.compile(r"\b(dec|blk|ses)-[0-9a-z]{12}\b")


class Repo:
    """A git repository with a planstate workspace, driven through the real CLI with a clock that we move."""

    def __init__(self, root: Path, run: Run, project: str = "") -> None:
        self.root = root
        self.project = root / project if project else root
        self.project.mkdir(parents=True, exist_ok=True)
        self._run = run
        self.now = "2026-11-20T09:00:00Z"
        self.git("init", "--quiet", "--initial-branch=main")
        self.git("config", "commit.gpgsign", "false")

    def git(self, *args: str, cwd: Path | None = None) -> str:
        """Run git, failing the test with git's words when it fails."""
        done = subprocess.run(
            ["git", *args], cwd=cwd or self.root, capture_output=True, text=True, env={**os.environ, **GIT_ENV}
        )
        assert done.returncode == 0, f"git {' '.join(args)}: {done.stdout}{done.stderr}"
        return done.stdout

    def commit(self, message: str) -> str:
        """Commit everything; the new commit's id."""
        self.git("add", "-A")
        self.git("commit", "--quiet", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD").strip()

    def ps(self, *args: str, at: str | None = None, expect: int = 0) -> CompletedProcess[str]:
        """Run `planstate args` in the project at time `at` (default: the current one)."""
        if at is not None:
            self.now = at
        done = self._run(*args, cwd=self.project, env={"PLANSTATE_NOW": self.now, "PLANSTATE_ACTOR": "alice"})
        assert done.returncode == expect, f"planstate {' '.join(args)}: {done.stdout}{done.stderr}"
        return done

    def made(self, *args: str, at: str | None = None) -> str:
        """Run a command that makes a record (with --json) and return the record's id."""
        data = json_data(self.ps(*args, "--json", at=at))
        return str(data["id"])

    def diff(self, *args: str) -> dict[str, Any]:
        """`planstate diff args --json`, parsed."""
        result: dict[str, Any] = json_data(self.ps("diff", *args, "--json"))
        return result

    def changes(self, *args: str) -> dict[str, Any]:
        """The one initiative of `planstate diff args --json`."""
        found = self.diff(*args)["initiatives"]
        assert len(found) == 1, found
        return dict(found[0])


def new_repo(tmp_path: Path, run: Run, project: str = "") -> Repo:
    """A repository with an initiative of three phases (Design active), committed."""
    repo = Repo(tmp_path / "repo", run, project)
    repo.ps("init", "--title", "User auth", "--phase", "Design", "--phase", "Build", "--phase", "Ship")
    repo.commit("planstate init")
    return repo


@pytest.fixture
def repo(tmp_path: Path, run: Run) -> Repo:
    """A fresh repository with a committed workspace."""
    return new_repo(tmp_path, run)


def normalized(text: str, commits: dict[str, str]) -> str:
    """Output with record ids (random) and commit ids replaced by stable placeholders."""
    for name, commit in commits.items():
        text = text.replace(commit, f"<{name}>").replace(commit[:12], f"<{name}>")
    seen: dict[str, str] = {}

    def stable(match: re.Match[str]) -> str:
        return seen.setdefault(match.group(0), f"{match.group(1)}-{len(seen) + 1:012d}")

    return _ID.sub(stable, text)


# ---------------------------------------------------------------------------- the golden day of work


def day_of_work(repo: Repo) -> dict[str, str]:
    """Records and changes of a realistic day on top of the initial commit; returns the commits by name."""
    proposed = repo.made(
        "decision", "add", "--proposed", "--title", "Use jose for JWT", "--context", "JWT library",
        "--decision", "jose", "--reason", "Web Crypto support", at="2026-11-20T09:10:00Z",
    )  # fmt: skip
    old = repo.made(
        "decision", "add", "--title", "Sessions in cookies", "--context", "Where sessions live",
        "--decision", "cookies", "--reason", "Simple", at="2026-11-20T09:20:00Z",
    )  # fmt: skip
    doomed = repo.made(
        "decision", "add", "--proposed", "--title", "Write our own signer", "--context", "JWT library",
        "--decision", "hand-written", "--reason", "No dependency", at="2026-11-20T09:30:00Z",
    )  # fmt: skip
    waiting = repo.made(
        "blocker", "add", "--title", "OAuth credentials", "--description", "Waiting for the customer's client id",
        "--affects", "phase 3", at="2026-11-20T09:40:00Z",
    )  # fmt: skip
    quota = repo.made(
        "blocker", "add", "--active", "--title", "Staging quota", "--description", "The staging DB is full",
        at="2026-11-20T09:50:00Z",
    )  # fmt: skip
    flaky = repo.made(
        "blocker", "add", "--active", "--title", "Flaky CI", "--description", "CI fails one run in three",
        at="2026-11-20T09:55:00Z",
    )  # fmt: skip
    session = repo.made(
        "session", "start", "--agent", "worker-abc", "--working-on", "Phase 1", at="2026-11-20T10:00:00Z"
    )
    base = repo.commit("morning")
    repo.git("tag", "morning")

    repo.ps("decision", "accept", proposed, at="2026-11-20T11:00:00Z")
    repo.made(
        "decision", "add", "--supersedes", old, "--title", "Sessions in Redis", "--context", "Where sessions live",
        "--decision", "Redis", "--reason", "Shared across instances",
    )  # fmt: skip
    repo.ps("decision", "reject", doomed, "--reason", "Too risky <for now>")
    repo.ps("blocker", "activate", waiting, "--reason", "Phase 3 is next")
    repo.ps("blocker", "bypass", quota, "--workaround", "Use a local database")
    repo.ps("blocker", "resolve", flaky, "--resolution", "Pinned the test seed")
    repo.made("blocker", "add", "--title", "Design review", "--description", "Waiting for design sign-off")
    repo.ps(
        "phase", "complete", "1", "--checkpoint", "passed", "--evidence", "tests=18/18", "--evidence", "coverage=91%",
        at="2026-11-20T12:30:00Z",
    )  # fmt: skip
    repo.ps("phase", "fail", "2", "--reason", "The schema migration deadlocks", at="2026-11-20T14:00:00Z")
    repo.ps("phase", "retry", "2", at="2026-11-20T14:30:00Z")
    repo.ps("set", "position.task", "Implement <b>token rotation</b>")
    repo.ps("next", "Finish the rotation endpoint.\nThen run the checkpoint.")
    repo.ps("append", "resume_context.files_modified", "src/auth/rotate.ts")
    repo.ps("append", "resume_context.open_questions", "Do we need token families?")
    repo.ps("set", "progress.current_phase_tasks", "8")
    repo.ps(
        "session", "end", "--session", session, "--completed", "Phase 1: schema", "--handoff-reason", "Context limit",
        at="2026-11-20T15:00:00Z",
    )  # fmt: skip
    repo.made("session", "start", "--agent", "worker-def", "--working-on", "Phase 2, plan 1")
    repo.ps("pause", "--reason", "Waiting for review", at="2026-11-20T16:00:00Z")
    return {"base": base}


@pytest.fixture(scope="module")
def golden_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, dict[str, str]]:
    """The day of work, built once: its base commit, and the working tree holding the day's changes."""
    import forkserver

    def run(*args: str, cwd: Path, env: dict[str, str]) -> CompletedProcess[str]:
        full = {**os.environ, "NO_COLOR": "1", **env}
        full.pop("PLANSTATE_DIR", None)
        return forkserver.run(list(args), cwd=cwd, env=full)

    repo = new_repo(tmp_path_factory.mktemp("golden-diff"), run)
    return repo, day_of_work(repo)


@pytest.mark.parametrize(("flag", "name"), [("", "diff.txt"), ("--json", "diff.json"), ("--markdown", "diff.md")])
def test_diff_of_a_day_of_work_matches_its_golden_file(
    golden_repo: tuple[Repo, dict[str, str]], flag: str, name: str
) -> None:
    repo, commits = golden_repo
    output = repo.ps("diff", "morning", *([flag] if flag else [])).stdout
    matches_golden(f"git/{name}", normalized(output, commits).encode("utf-8"))


def test_day_of_work_reads_like_a_changelog(golden_repo: tuple[Repo, dict[str, str]]) -> None:
    repo, commits = golden_repo
    found = repo.changes(commits["base"])
    assert found["status"] == "changed" and found["lifecycle"] == {"state": "paused"}
    assert [(t["from"], t["to"], t["trigger"], t["reason"]) for t in found["transitions"]] == [
        ("active", "paused", "pause", "Waiting for review")
    ]
    phases = [(p["number"], p["event"]) for p in found["phases"]]
    assert phases == [(1, "completed"), (2, "retried")]
    completed = found["phases"][0]
    assert completed["duration_seconds"] == 3.5 * 3600
    assert completed["evidence"] == {"tests": "18/18", "coverage": "91%"}
    assert found["phases"][1]["previous_failure"] == "The schema migration deadlocks"
    assert {c["field"]: (c["old"], c["new"]) for c in found["position"]} == {
        "position.phase": (1, 2),
        "position.task": (None, "Implement <b>token rotation</b>"),
        "next_action": ("Start phase 1: Design", "Finish the rotation endpoint.\nThen run the checkpoint."),
    }
    decisions = {(d["title"], d["event"]) for d in found["decisions"]}
    assert decisions == {
        ("Use jose for JWT", "accepted"),
        ("Sessions in cookies", "superseded"),
        ("Sessions in Redis", "added"),
        ("Write our own signer", "rejected"),
    }
    superseded = next(d for d in found["decisions"] if d["event"] == "superseded")
    assert superseded["superseded_by_title"] == "Sessions in Redis"
    blockers = {(b["title"], b["event"]) for b in found["blockers"]}
    assert blockers == {
        ("OAuth credentials", "activated"),
        ("Staging quota", "bypassed"),
        ("Flaky CI", "resolved"),
        ("Design review", "added"),
    }
    sessions = [(s["agent"], s["event"]) for s in found["sessions"]]
    assert sessions == [("worker-abc", "ended"), ("worker-def", "started")]
    ended = found["sessions"][0]
    assert ended["completed"] == ["Phase 1: schema"] and ended["handoff_reason"] == "Context limit"
    assert ended["duration_seconds"] == 5 * 3600
    fields = {(c["path"], c["field"]) for c in found["fields"]}
    assert fields == {
        (".planning/STATE.md", "progress.current_phase_tasks"),
        (".planning/STATE.md", "resume_context.files_modified[]"),
        (".planning/STATE.md", "resume_context.open_questions[]"),
    }
    assert found["unreadable"] == []


def test_markdown_escapes_user_text(golden_repo: tuple[Repo, dict[str, str]]) -> None:
    repo, commits = golden_repo
    text = repo.ps("diff", commits["base"], "--markdown").stdout
    outside_code = re.sub(r"(`+)(?:(?!\1).)*?\1", "", text)
    assert "<" not in outside_code and "Too risky &lt;for now>" in text
    assert '`"Implement <b>token rotation</b>"`' in text  # in a code span, where it is shown, never run


# ---------------------------------------------------------------------------- revisions and where .planning/ is


def test_no_change_says_so_in_one_line(repo: Repo) -> None:
    text = repo.ps("diff").stdout
    assert text.count("\n") == 1 and text.startswith("No changes in .planning/ from HEAD (")
    assert repo.diff() == {
        "from_revision": {"revision": "HEAD", "commit": repo.git("rev-parse", "HEAD").strip()},
        "to_revision": {"revision": None, "commit": None},
        "initiatives": [],
    }
    assert repo.ps("diff", "--markdown").stdout.startswith("No changes in `.planning/`")


def test_tasks_are_listed_as_they_are_added_started_and_done(repo: Repo) -> None:
    schema = repo.made("task", "add", "Users table", "--phase", "1")
    docs = repo.made("task", "add", "Document the table", "--after", schema)
    text = repo.ps("diff").stdout
    assert f"  task added: {docs} Document the table (pending), after {schema}\n" in text
    assert f"  task added: {schema} Users table (pending), phase 1\n" in text
    repo.commit("two tasks")
    path = next((repo.project / ".planning" / "tasks").glob(f"{schema}-*.md"))
    path.write_text(path.read_text(encoding="utf-8").replace("status: pending", "status: done"), encoding="utf-8")
    assert [(t["id"], t["event"]) for t in repo.changes()["tasks"]] == [(schema, "done")]
    assert f"  task done: {schema} Users table\n" in repo.ps("diff").stdout
    repo.ps("check")


def test_revisions_one_two_and_ranges(repo: Repo) -> None:
    first = repo.git("rev-parse", "HEAD").strip()
    repo.ps("set", "position.task", "A")
    second = repo.commit("task A")
    repo.ps("set", "position.task", "B")
    third = repo.commit("task B")
    repo.ps("set", "position.task", "C")

    def tasks(*args: str) -> list[tuple[Any, Any]]:
        found = repo.diff(*args)["initiatives"]
        return [(c["old"], c["new"]) for i in found for c in i["position"] if c["field"] == "position.task"]

    assert tasks() == [("B", "C")]  # HEAD against the working tree
    assert tasks(first) == [(None, "C")]
    assert tasks(first, second) == [(None, "A")]
    assert tasks(f"{second}..{third}") == [("A", "B")]
    assert tasks("HEAD~2..") == [(None, "B")]  # an empty end is HEAD, as in git
    assert tasks("main...HEAD") == []  # from the merge base of main and HEAD (HEAD itself) to HEAD
    assert repo.diff(second, third)["from_revision"] == {"revision": second, "commit": second}


def diverged(repo: Repo) -> None:
    """A branch `feature` that set position.task, and main moved on after it left (next_action), committed."""
    repo.git("checkout", "--quiet", "-b", "feature")
    repo.ps("set", "position.task", "on the branch")
    repo.commit("feature work")
    repo.git("checkout", "--quiet", "main")
    repo.ps("set", "next_action", "on main")
    repo.commit("main work")


def test_symmetric_range_starts_at_the_merge_base(repo: Repo) -> None:
    diverged(repo)
    found = repo.changes("main...feature")
    assert [c["field"] for c in found["position"]] == ["position.task"]  # main's own change is not in it
    both = repo.changes("main..feature")
    assert sorted(c["field"] for c in both["position"]) == ["next_action", "position.task"]


def test_two_trees_that_are_not_a_line_of_history_get_a_hint(repo: Repo) -> None:
    """`A..B` (or `A B`) where A is not an ancestor of B compares two trees: main's own work would read as undone by
    the branch. One line says so and names the merge-base form, on stderr in text and in `warnings` with --json."""
    diverged(repo)
    hint = (
        "main is not an ancestor of feature: this compares their two trees, so what main gained since feature left "
        "it reads as undone; `planstate diff main...feature` compares from their merge base"
    )
    for args in (("main..feature",), ("main", "feature")):
        done = repo.ps("diff", *args)
        assert done.stderr == f"planstate: warning: {hint}\n" and done.stdout.startswith("Changes in .planning/")
        assert json_envelope(repo.ps("diff", *args, "--json"))["warnings"] == [hint]
    for args in (("main...feature",), ("HEAD~1..HEAD",), ("main", "main"), ("HEAD",)):  # nothing to warn of
        assert repo.ps("diff", *args).stderr == ""
        assert json_envelope(repo.ps("diff", *args, "--json"))["warnings"] == []


def test_a_merge_base_of_commit_ids_is_named_by_short_ids(repo: Repo) -> None:
    """The pull-request action passes two commit ids: the merge base's label names them short, as git does."""
    repo.git("checkout", "--quiet", "-b", "feature")
    repo.ps("set", "position.task", "on the branch")
    head = repo.commit("feature work")
    base = repo.git("rev-parse", "main").strip()
    short = {commit: repo.git("rev-parse", "--short", commit).strip() for commit in (base, head)}
    assert 7 <= len(short[base]) < 40
    label = f"merge base of {short[base]} and {short[head]}"
    assert repo.diff(f"{base}...{head}")["from_revision"]["revision"] == label
    heading = repo.ps("diff", f"{base}...{head}", "--markdown").stdout.splitlines()[0]
    assert heading == f"## Changes in `.planning/` (`{label}` (`{base[:12]}`) → `{head[:12]}`)"
    assert repo.diff("main...feature")["from_revision"]["revision"] == "merge base of main and feature"  # names stay


def test_bad_revision_is_one_line_exit_2(repo: Repo) -> None:
    done = repo.ps("diff", "no-such-branch", expect=2)
    assert (
        done.stderr == "planstate: revision 'no-such-branch' does not exist in this repository (or is not a commit)\n"
    )
    done = repo.ps("diff", "HEAD", "nope", expect=2)
    assert "'nope'" in done.stderr and done.stderr.count("\n") == 1
    done = repo.ps("diff", "--json", "--markdown", expect=2)
    assert "give one of them" in json_error(done)["message"]
    done = repo.ps("diff", "HEAD~1..HEAD", "HEAD", expect=2)
    assert "not both" in done.stderr
    done = repo.ps("diff", "--", "-x", expect=2)
    assert done.stderr.count("\n") == 1


def test_outside_a_repository_is_one_line_exit_2(tmp_path: Path, run: Run) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    assert run("init", "--title", "T", cwd=folder).returncode == 0
    done = run("diff", cwd=folder, env={"GIT_CEILING_DIRECTORIES": str(tmp_path)})
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "is not in a git work tree" in done.stderr


def test_empty_repository_names_head(tmp_path: Path, run: Run) -> None:
    repo = Repo(tmp_path / "r", run)
    repo.ps("init", "--title", "T")
    done = repo.ps("diff", expect=2)
    assert done.stderr == "planstate: revision 'HEAD' does not exist: the repository has no commits yet\n"


def test_revision_without_planning_shows_everything_added(tmp_path: Path, run: Run) -> None:
    repo = Repo(tmp_path / "r", run)
    (repo.root / "README.md").write_text("hello\n")
    repo.commit("before planstate")
    repo.ps("init", "--title", "User auth", "--phase", "Design")
    repo.made("decision", "add", "--title", "Use jose", "--context", "c", "--decision", "d", "--reason", "r")
    found = repo.changes()
    assert found["status"] == "added" and found["initiative"] == "user-auth" and found["lifecycle"]["state"] == "active"
    assert [(t["from"], t["to"], t["trigger"]) for t in found["transitions"]] == [(None, "active", "init")]
    assert [d["event"] for d in found["decisions"]] == ["added"]
    assert found["fields"] == [] and found["phases"] == []
    assert 'initiative user-auth "User auth" (.planning/): added, active' in repo.ps("diff").stdout


def test_planning_in_a_subfolder_of_the_repository(tmp_path: Path, run: Run) -> None:
    repo = new_repo(tmp_path, run, project="apps/web")
    (repo.root / "apps" / "other").mkdir()
    (repo.root / "apps" / "other" / "STATE.md").write_text("not ours\n")
    repo.commit("another app")
    repo.ps("set", "position.task", "monorepo task")
    found = repo.changes("HEAD")
    assert [(c["field"], c["new"]) for c in found["position"]] == [("position.task", "monorepo task")]
    sub = repo.project / "src"
    sub.mkdir()
    done = repo._run("diff", "--json", cwd=sub, env={"PLANSTATE_NOW": repo.now})
    assert json_data(done)["initiatives"][0]["position"][0]["new"] == "monorepo task"


def test_untracked_records_in_the_working_tree_count(repo: Repo) -> None:
    record = repo.made("blocker", "add", "--title", "New", "--description", "not yet committed")
    found = repo.changes()
    assert [(b["id"], b["event"], b["status"]) for b in found["blockers"]] == [(record, "added", "new")]
    assert found["blockers"][0]["path"].startswith(".planning/blockers/")


def test_removed_records_and_initiatives(repo: Repo) -> None:
    record = repo.made("decision", "add", "--title", "Gone soon", "--context", "c", "--decision", "d", "--reason", "r")
    repo.ps("initiative", "new", "billing", "--title", "Billing", "--phase", "One")
    repo.commit("more")
    for path in (repo.project / ".planning" / "decisions").glob(f"{record}*"):
        path.unlink()
    shutil.rmtree(repo.project / ".planning" / "initiatives" / "billing")
    found = repo.diff()["initiatives"]
    assert [(i["initiative"], i["status"]) for i in found] == [("user-auth", "changed"), ("billing", "removed")]
    assert [(d["id"], d["event"], d["title"]) for d in found[0]["decisions"]] == [(record, "removed", "Gone soon")]
    assert found[1]["path"] == ".planning/initiatives/billing/"


def test_new_initiative_is_added_with_its_transitions(repo: Repo) -> None:
    repo.ps("initiative", "new", "billing", "--title", "Billing", "--phase", "One", "--switch")
    found = {i["initiative"]: i for i in repo.diff()["initiatives"]}
    assert found["billing"]["status"] == "added"
    assert found["user-auth"]["status"] == "changed"
    assert [t["to"] for t in found["user-auth"]["transitions"]] == ["paused"]


# ---------------------------------------------------------------------------- phases, lifecycle, fields


def test_phase_skipped_and_checkpoint_failed(repo: Repo) -> None:
    repo.ps("phase", "skip", "1", "--reason", "Design exists already", at="2026-11-20T10:00:00Z")
    found = repo.changes()
    assert [(p["number"], p["event"], p.get("reason")) for p in found["phases"]] == [
        (1, "skipped", "Design exists already"),
        (2, "started", None),
    ]
    repo.commit("skip")
    repo.ps("phase", "complete", "2", "--checkpoint", "failed", "--evidence", "tests=7/12", at="2026-11-20T11:00:00Z")
    events = repo.changes()["phases"]
    assert [(p["number"], p["event"], p["checkpoint"], p["evidence"]) for p in events] == [
        (2, events[0]["event"], "failed", {"tests": "7/12"})
    ]
    assert events[0]["event"] in ("failed", "checkpoint")


def test_lifecycle_from_state_when_history_says_nothing(repo: Repo) -> None:
    state = repo.project / ".planning" / "STATE.md"
    text = state.read_text()
    state.write_text(text.replace("state: active", "state: paused", 1))
    found = repo.changes()
    assert [(t["from"], t["to"], t["trigger"]) for t in found["transitions"]] == [("active", "paused", None)]


def test_a_command_that_kept_the_lifecycle_state_reads_as_a_history_step(repo: Repo) -> None:
    repo.ps("phase", "add", "Docs", at="2026-11-20T10:00:00Z")
    repo.ps("pause", "--reason", "Review", at="2026-11-20T11:00:00Z")
    lines = repo.ps("diff").stdout.splitlines()
    assert "  history: phase add by alice at 2026-11-20T10:00:00Z: added phase 4 (Docs); phases_total 3 → 4" in lines
    assert "  lifecycle: active → paused (pause) by alice at 2026-11-20T11:00:00Z: Review" in lines
    assert not any("active → active" in line for line in lines)
    found = repo.changes()["transitions"]
    assert [(t["from"], t["to"], t["trigger"]) for t in found] == [
        ("active", "active", "phase add"),
        ("active", "paused", "pause"),
    ]


def test_field_changes_skip_derived_fields_and_updated(repo: Repo) -> None:
    repo.ps("set", "title", "User authentication", at="2026-11-21T09:00:00Z")
    found = repo.changes()
    assert [(c["path"], c["field"], c["old"], c["new"]) for c in found["fields"]] == [
        (".planning/STATE.md", "title", "User auth", "User authentication")
    ]
    assert 'STATE.md: title: "User auth" → "User authentication"' in repo.ps("diff").stdout


def test_timestamps_written_differently_are_the_same(repo: Repo) -> None:
    state = repo.project / ".planning" / "STATE.md"
    text = state.read_text()
    assert "created: 2026-11-20T09:00:00Z" in text
    state.write_text(text.replace("created: 2026-11-20T09:00:00Z", 'created: "2026-11-20T10:00:00+01:00"  # moved'))
    assert repo.diff()["initiatives"] == []


def test_unknown_fields_and_record_field_edits_are_listed(repo: Repo) -> None:
    record = repo.made("decision", "add", "--title", "T", "--context", "c", "--decision", "d", "--reason", "first")
    repo.commit("decision")
    path = next((repo.project / ".planning" / "decisions").glob(f"{record}*"))
    path.write_text(path.read_text().replace("reason: first", "reason: second\nteam: core"))
    found = repo.changes()
    shown = {(c["field"], c["old"], c["new"]) for c in found["fields"]}
    assert shown == {("reason", "first", "second"), ("team", None, "core")}
    assert all(c["path"] == f".planning/decisions/{path.name}" for c in found["fields"])


def test_unreadable_files_are_listed_not_fatal(repo: Repo) -> None:
    record = repo.made("blocker", "add", "--title", "T", "--description", "d")
    repo.commit("blocker")
    path = next((repo.project / ".planning" / "blockers").glob(f"{record}*"))
    path.write_text("---\ntitle: [unclosed\n---\n")
    repo.ps("set", "position.task", "still reported")
    found = repo.changes()
    assert [(u["path"], u["side"]) for u in found["unreadable"]] == [(f".planning/blockers/{path.name}", "new")]
    assert found["unreadable"][0]["message"].startswith("line ")
    assert found["position"][0]["new"] == "still reported"
    assert "unreadable (newer side): .planning/blockers/" in repo.ps("diff").stdout


def test_conflict_markers_in_a_file_are_listed(repo: Repo) -> None:
    state = repo.project / ".planning" / "STATE.md"
    text = state.read_text()
    state.write_text(text.replace("title: User auth\n", "<<<<<<< ours\ntitle: A\n=======\ntitle: B\n>>>>>>> theirs\n"))
    found = repo.changes()
    assert [(u["path"], u["side"]) for u in found["unreadable"]] == [(".planning/STATE.md", "new")]


# ---------------------------------------------------------------------------- the API and snapshots


def test_workspace_diff_api(repo: Repo) -> None:
    repo.ps("set", "position.task", "through the API")
    ws = Workspace.find(repo.project)
    result = ws.diff()
    assert not result.empty
    assert 'position.task: null → "through the API"' in result.to_text()
    with pytest.raises(UsageError, match="revision 'nope' does not exist"):
        ws.diff("nope")


def test_snapshots_read_only_planning_files(repo: Repo) -> None:
    planning = repo.project / ".planning"
    (planning / "notes.md").write_text("not a planning file\n")
    (planning / "templates").mkdir()
    (planning / "templates" / "x.md").write_text("nor this\n")
    repo.commit("extra files")
    at_head = at_revision(planning, "HEAD")
    on_disk = working_tree(planning)
    assert sorted(at_head.files) == sorted(on_disk.files) == ["STATE.md", "history.jsonl"]
    assert at_head.files == on_disk.files
    assert at_head.commit == repo.git("rev-parse", "HEAD").strip() and on_disk.commit is None
    assert list(at_head.initiatives()) == [""]


def test_snapshot_at_a_revision_reads_many_files(repo: Repo) -> None:
    folder = repo.project / ".planning" / "sessions"
    for i in range(300):
        (folder / f"ses-{i:03d}-x.md").write_text(f"---\nid: ses-{i:03d}\n---\n{'x' * i}\n")
    repo.commit("many")
    snap = at_revision(repo.project / ".planning", "HEAD")
    assert len([p for p in snap.files if p.startswith("sessions/ses-")]) == 300
    assert snap.files["sessions/ses-299-x.md"].endswith(b"x" * 299 + b"\n")


def test_state_md_that_cannot_be_read_in_the_working_tree(repo: Repo) -> None:
    state = repo.project / ".planning" / "STATE.md"
    state.unlink()
    os.mkfifo(state)  # a FIFO in its place: reported, never read (which would hang)
    found = repo.changes()
    assert found["status"] == "changed" and found["initiative"] == "user-auth"
    assert found["unreadable"] == [{"path": ".planning/STATE.md", "side": "new", "message": "not a regular file"}]
