"""A day of two agents in two clones, 120 random CLI operations each (OPERATIONS), then one real `git merge`.

Done-when of issue 6: the merge conflicts only where both sides truly changed the same field; every
field only one side changed arrives as that side changed it; after taking a side of each conflict,
`planstate check --fix` leaves a clean workspace, and `planstate diff` reads like the day's changelog.
"""

from __future__ import annotations

import random
import shutil
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest
from conftest import Run, json_data

from planstate.text.document import Document
from planstate.text.paths import shown_path
from tests.gitutil import commit_all, configure, git, install_driver, new_repo, unmerged

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

OPERATIONS = 120  # each kind of operation comes up several times for each agent; more adds only time
PHASES = ["Schema", "API", "Auth", "UI", "Docs", "Release"]


class Agent:
    """One agent in its own clone: a seeded stream of CLI operations with its own clock."""

    def __init__(self, run: Run, clone: Path, name: str, seed: int, offset_minutes: int) -> None:
        self.run, self.clone, self.name = run, clone, name
        self.rng = random.Random(seed)
        self.clock = datetime(2026, 11, 20, 9, tzinfo=UTC) + timedelta(minutes=offset_minutes)
        self.phase = 1
        self.completed_phases = 0
        self.session: str | None = None
        self.blockers: dict[str, str] = {}  # id -> status, of the blockers this agent (or the base) made
        self.decisions: list[str] = []
        self.paused = False
        self.done: list[str] = []
        self.refused: list[str] = []
        self.titles: list[str] = []

    def cli(self, *args: str) -> CompletedProcess[str]:
        """Run one planstate command two minutes after the last one; a refusal (exit 2) is part of the game."""
        self.clock += timedelta(minutes=2)
        env = {"PLANSTATE_NOW": self.clock.strftime("%Y-%m-%dT%H:%M:%SZ"), "PLANSTATE_ACTOR": self.name}
        result = self.run(*args, cwd=self.clone, env=env)
        assert result.returncode in (0, 2), f"{args}: exit {result.returncode}: {result.stderr}"
        (self.done if result.returncode == 0 else self.refused).append(" ".join(args[:2]))
        return result

    def step(self, number: int) -> None:
        """One random operation, chosen among those that make sense now."""
        r = self.rng
        if self.paused:
            self.cli("resume", "--activate", "--reason", f"back at {number}")
            self.paused = False
            return
        choice = r.choices(
            ["task", "next", "file", "decision", "blocker", "move", "session", "phase", "pause", "tasks", "question"],
            weights=[14, 10, 10, 12, 8, 12, 10, 3, 3, 8, 6],
        )[0]
        if choice == "task":
            self.cli("set", "position.task", f"{self.name} task {number}")
        elif choice == "next":
            self.cli("set", "next_action", f"{self.name}: next step {number}")
        elif choice == "file":
            self.cli("append", "resume_context.files_modified", f"src/{self.name}/m{number}.py")
        elif choice == "question":
            self.cli("append", "resume_context.open_questions", f"{self.name} question {number}?")
        elif choice == "decision":
            title = f"{self.name} decision {number}"
            made = self.cli(
                "decision", "add", "--title", title, "--context", "c", "--decision", "d", "--reason", "r", "--json"
            )
            if made.returncode == 0:
                self.decisions.append(json_data(made)["id"])
                self.titles.append(title)
        elif choice == "blocker":
            title = f"{self.name} blocker {number}"
            made = self.cli("blocker", "add", "--title", title, "--description", "x", "--json")
            if made.returncode == 0:
                self.blockers[json_data(made)["id"]] = "new"
                self.titles.append(title)
        elif choice == "move":
            open_ones = sorted(b for b, s in self.blockers.items() if s != "resolved")
            if not open_ones:
                return self.step(number)
            blocker = r.choice(open_ones)
            status = self.blockers[blocker]
            if status == "new":
                moved = self.cli("blocker", "activate", blocker, "--reason", f"{self.name} saw it")
                self.blockers[blocker] = "active" if moved.returncode == 0 else status
            elif status == "active" and r.random() < 0.5:
                moved = self.cli("blocker", "bypass", blocker, "--workaround", f"{self.name} workaround {number}")
                self.blockers[blocker] = "bypassed" if moved.returncode == 0 else status
            else:
                moved = self.cli("blocker", "resolve", blocker, "--resolution", f"{self.name} fixed it")
                self.blockers[blocker] = "resolved" if moved.returncode == 0 else status
        elif choice == "session":
            if self.session is None:
                made = self.cli("session", "start", "--agent", self.name, "--working-on", f"step {number}", "--json")
                if made.returncode == 0:
                    self.session = json_data(made)["id"]
            else:
                self.cli("session", "end", "--session", self.session, "--completed", f"step {number}")
                self.session = None
        elif choice == "phase" and self.completed_phases < 2:
            done = self.cli("phase", "complete", str(self.phase), "--evidence", f"{self.name}_tests={number}")
            if done.returncode == 0:
                self.phase += 1
                self.completed_phases += 1
        elif choice == "pause":
            self.paused = self.cli("pause", "--reason", f"{self.name} break").returncode == 0
        elif choice == "tasks":
            self.cli("set", "progress.current_phase_tasks", str(r.randint(1, 20)))
        else:
            self.cli("set", "position.step", f"{self.name} step {number}")
        return None

    def work(self) -> None:
        """The day: every operation, a commit every 20, and a clean end (session ended, not paused)."""
        for number in range(1, OPERATIONS + 1):
            self.step(number)
            if number % 20 == 0:
                commit_all(self.clone, f"{self.name}: through operation {number}")
        if self.session is not None:
            self.cli("session", "end", "--session", self.session)
        if self.paused:
            self.cli("resume", "--activate")
        commit_all(self.clone, f"{self.name}: end of day")


def _leaves(data: Any, path: tuple[Any, ...] = ()) -> dict[tuple[Any, ...], Any]:
    """Fields by path; lists and the lifecycle unit are single values; derived copies are left out."""
    derived = {
        ("progress", "phases_total"),
        ("progress", "phases_completed"),
        ("progress", "percent"),
        ("progress", "bar"),
        ("position", "phase_name"),
    }
    if isinstance(data, dict) and path != ("lifecycle",):
        out: dict[tuple[Any, ...], Any] = {}
        for key, value in data.items():
            out.update(_leaves(value, (*path, key)))
        return out
    if path in derived:
        return {}
    if isinstance(data, list) and path == ("phases",):
        out = {}
        for i, item in enumerate(data):
            for sub, value in _leaves(item).items():
                if sub != ("duration_seconds",):
                    out[(*path, i, *sub)] = value
        return out
    return {path: data}


def _data_at(repo: Path, rev: str, name: str) -> Any:
    shown = git(repo, "show", f"{rev}:{name}", check=False)
    if shown.returncode != 0:
        return None
    return Document.from_bytes(shown.stdout.encode("utf-8"), name).data


def _conflict_paths(text: str) -> list[str]:
    return [line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("<<<<<<< ours: ")]


def test_two_agents_work_a_day_in_two_clones_and_merge_with_conflicts_only_where_both_changed_a_field(
    run: Run, tmp_path: Path
) -> None:
    origin = new_repo(tmp_path / "origin")
    phases = [arg for name in PHASES for arg in ("--phase", name)]
    assert (
        run(
            "init", "--title", "Checkout rewrite", *phases, cwd=origin, env={"PLANSTATE_NOW": "2026-11-20T08:00:00Z"}
        ).returncode
        == 0
    )
    shared = json_data(
        run(
            "blocker",
            "add",
            "--title",
            "Staging is down",
            "--description",
            "x",
            "--json",
            cwd=origin,
            env={"PLANSTATE_NOW": "2026-11-20T08:30:00Z"},
        )
    )["id"]
    commit_all(origin, "the plan")
    clones = []
    for name in ("alice", "bob"):
        git(tmp_path, "clone", "--quiet", str(origin), name)
        clone = tmp_path / name
        configure(clone, name)
        install_driver(run, clone)
        clones.append(clone)
    base = git(origin, "rev-parse", "HEAD").stdout.strip()

    agents = [
        Agent(run, clone, name, seed, offset)
        for clone, name, seed, offset in zip(clones, ("alice", "bob"), (20261120, 4242), (0, 1), strict=True)
    ]
    for agent in agents:
        agent.blockers[shared] = "new"
    threads = [threading.Thread(target=agent.work) for agent in agents]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    alice, bob = agents
    for agent in agents:
        assert len(agent.done) >= OPERATIONS * 0.9, f"{agent.name}: {len(agent.refused)} refused: {agent.refused}"
        # A person adds a note in their own paragraph of the body, by hand; then the day ends check-clean.
        state = agent.clone / ".planning" / "STATE.md"
        anchor = "## Where we are\n" if agent.name == "alice" else "## Decisions\n"
        note = f"{agent.name.title()}'s note: the payment sandbox resets nightly.\n\n"
        state.write_text(state.read_text().replace(anchor, note + anchor, 1))
        day_end = run("check", "--json", cwd=agent.clone)
        errors = [f for f in json_data(day_end)["findings"] if f["severity"] == "error"]
        assert day_end.returncode == 0 and errors == [], f"{agent.name}: {day_end.stdout}"
        commit_all(agent.clone, f"{agent.name}: a note by hand")

    repo = alice.clone
    git(repo, "fetch", "--quiet", str(bob.clone), "main:bob")
    merged = git(repo, "merge", "--no-edit", "bob", check=False)

    # Conflicts only in files both sides changed, and inside them only on fields both changed differently.
    changed_by = {side: set(git(repo, "diff", "--name-only", base, side).stdout.split()) for side in ("HEAD", "bob")}
    conflicted = unmerged(repo)
    assert set(conflicted) <= changed_by["HEAD"] & changed_by["bob"], merged.stdout + merged.stderr
    for name in conflicted:
        text = (repo / name).read_text()
        paths = _conflict_paths(text)
        assert paths, f"{name} is conflicted without field markers (a text merge?):\n{text}"
        assert text.count("<<<<<<<") == len(paths)
        datas = [_data_at(repo, rev, name) or {} for rev in (base, "HEAD", "bob")]
        sides = [_leaves(data) for data in datas]
        for shown in paths:  # as people read them: a phase by its number
            for one in shown.split(", "):  # a field, or a unit merged as one (a phase's transition: `phases.2`)
                b, o, t = ({k: v for k, v in side.items() if _within(shown_path(k, datas[0]), one)} for side in sides)
                assert o != t, f"{name}: {one} conflicted but both sides hold {o!r}"
                whole_phase = one.startswith("phases.") and one.count(".") == 1
                if not whole_phase:  # a phase one side moved joins the phases that conflict (vcs/merge._progression)
                    assert o != b and t != b, f"{name}: {one} conflicted but base={b!r} ours={o!r} theirs={t!r}"

    # Every field only one side changed arrives as that side changed it (files without conflicts).
    for name in sorted((changed_by["HEAD"] | changed_by["bob"]) - set(conflicted)):
        if not name.endswith(".md"):
            continue
        kind = "state" if name.endswith("STATE.md") else None
        merged_data = Document.read(repo / name).data
        sides = [_leaves(_data_at(repo, rev, name) or {}) for rev in (base, "HEAD", "bob")]
        result = _leaves(merged_data)
        for key in set(sides[1]) | set(sides[2]):
            b, o, t = (side.get(key) for side in sides)
            if o == b and t != b:
                assert result.get(key) == t, f"{name}: {key} changed only by bob"
            elif t == b and o != b:
                assert result.get(key) == o, f"{name}: {key} changed only by alice"
        assert kind is None or merged_data["lifecycle"]["state"] in ("active", "paused")

    # Take our side of each conflict, let check --fix render, and the workspace is clean.
    for name in conflicted:
        path = repo / name
        path.write_text(_take_ours(path.read_text()))
    fixed = run("check", "--fix", cwd=repo)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "--no-edit")
    check = run("check", cwd=repo)
    assert check.returncode == 0, check.stdout
    # Status, resume and check tell one truth about the merged day, people's notes included.
    status = json_data(run("status", "--json", cwd=repo))
    brief = json_data(run("resume", "--json", cwd=repo))
    assert brief["trusted"] and status["status"] == brief["status"]
    assert status["current_phase"]["checkpoint"] == brief["current_phase"]["checkpoint"]
    assert "Alice's note" in brief["notes"] and "Bob's note" in brief["notes"]

    # The merge read as a changelog of the day: both agents' records, phases and lifecycle.
    day = run("diff", base, "HEAD", cwd=repo)
    assert day.returncode == 0, day.stderr
    for title in alice.titles + bob.titles:
        assert title in day.stdout, f"{title} missing from planstate diff"
    assert "Schema" in day.stdout
    assert json_data(run("diff", base, "HEAD", "--json", cwd=repo))


def _within(path: str, shown: str) -> bool:
    """Whether the field at `path` is the field `shown`, or inside it."""
    return path == shown or path.startswith((shown + ".", shown + "["))


def _take_ours(text: str) -> str:
    """Resolve every conflict by keeping our side's lines."""
    out, keep = [], True
    for line in text.splitlines(keepends=True):
        if line.startswith("<<<<<<< "):
            keep = True
        elif line.startswith("=======") and line.strip() == "=======":
            keep = False
        elif line.startswith(">>>>>>> "):
            keep = True
        elif keep:
            out.append(line)
    return "".join(out)
