"""After any steps (writes, hand edits, git, store damage) every read answers as on a copy without `.local/`."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from builders import blocker, decision, write_record
from conftest import Run
from gitutil import commit_all, git, new_repo
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from test_cache import same_size_edit
from watching import WatchProcess

# CI plays the tour and a fixed set of sequences (derandomized); PLANSTATE_ORACLE_EXAMPLES=100 makes a longer hunt, with
# new random sequences on every run (PLANSTATE_ORACLE_STEPS: the longest sequence).
HUNT = "PLANSTATE_ORACLE_EXAMPLES" in os.environ
EXAMPLES = int(os.environ.get("PLANSTATE_ORACLE_EXAMPLES", "6"))
STEPS = int(os.environ.get("PLANSTATE_ORACLE_STEPS", "16"))

READS: list[tuple[str, ...]] = [
    ("status", "--json"),
    ("resume", "--json"),
    ("check", "--json"),
    ("validate", "--json"),
    ("render", "--check", "--json"),
    ("decision", "list", "--json"),
    ("blocker", "list", "--json"),
    ("session", "list", "--json"),
    ("get", "next_action", "--json"),
]
FOLDERS = ("decisions", "blockers", "sessions")


# ---------------------------------------------------------------------------------------------- hand edits


def _retitle(text: str) -> str:
    """The first `title:` with words added."""
    return re.sub(r"(?m)^title: (.*)$", r"title: \1 (by hand)", text, count=1)


STATUSES = ["accepted", "rejected", "proposed", "superseded", "new", "active", "resolved", "bypassed", "ended"]


def _restatus(text: str) -> str:
    """The first `status:` set to the next status in STATUSES (valid for some kinds, not for others)."""
    found = re.search(r"(?m)^(\s*status: )(\w+)$", text)
    if found is None:
        return text
    now = found.group(2)
    after = STATUSES[(STATUSES.index(now) + 1) % len(STATUSES)] if now in STATUSES else "active"
    return text[: found.start(2)] + after + text[found.end(2) :]


def _note(text: str) -> str:
    """A line added at the end of the body."""
    return text + "\nA note written by hand.\n"


def _unknown_key(text: str) -> str:
    """A key the format does not define, first in the front matter."""
    return text.replace("---\n", "---\ncolour: blue\n", 1)


def _broken(text: str) -> str:
    """A line that is not YAML, first in the front matter."""
    return text.replace("---\n", "---\nbroken: [unclosed\n", 1)


def _mended(text: str) -> str:
    """The lines `_unknown_key` and `_broken` add, taken out again."""
    return text.replace("colour: blue\n", "").replace("broken: [unclosed\n", "")


def _in_region(text: str) -> str:
    """A line added inside the first generated region (a hand edit of generated text), else a note."""
    found = re.search(r"(?m)^<!-- planstate:begin [^\n]*\n", text)
    if found is None:
        return _note(text)
    return text[: found.end()] + "Written inside the region by hand.\n" + text[found.end() :]


CHANGES: dict[str, Callable[[str], str]] = {
    "retitle": _retitle,
    "restatus": _restatus,
    "note": _note,
    "unknown-key": _unknown_key,
    "broken": _broken,
    "mended": _mended,
    "in-region": _in_region,
}
SAME_SIZE = {  # one status for another as long: an edit that size, inode and mtime do not tell
    "status: accepted": "status: rejected",
    "status: rejected": "status: accepted",
    "status: proposed": "status: accepted",
    "status: resolved": "status: bypassed",
    "status: bypassed": "status: resolved",
    "status: pending": "status: skipped",
    "status: active": "status: failed",
}


def same_size_change(path: Path) -> None:
    """A same-size edit of `path` with its mtime put back: a status for another, else one letter's case."""
    text = path.read_text(encoding="utf-8")
    for old, new in SAME_SIZE.items():
        if old + "\n" in text:
            same_size_edit(path, old + "\n", new + "\n")
            return
    found = re.search(r"(?m)^(title|next_action|agent|description): \"?[A-Za-z][^\n]*$", text)
    if found is not None:
        line = found.group(0)
        i = line.index(":") + 2 + (line[line.index(":") + 2] == '"')
        same_size_edit(path, line, line[:i] + line[i].swapcase() + line[i + 1 :])


def rewrite(path: Path, change: str) -> None:
    """`path` rewritten in place (the same inode) with one of CHANGES."""
    text = path.read_text(encoding="utf-8")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(CHANGES[change](text))


def remove(entry: Path) -> None:
    """A file or a folder deleted."""
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry)
    else:
        entry.unlink()


# ---------------------------------------------------------------------------------------------- the steps

PICK = st.integers(0, 999)  # an index into what exists when the step runs, taken modulo its length
TEXTS = st.sampled_from(["Write the migration", "Review the schema", "Ship it\nthen tell the team", "Wire OAuth"])
STEP_ARGUMENTS: dict[str, tuple[st.SearchStrategy[Any], ...]] = {}


def step(*arguments: st.SearchStrategy[Any]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Make a method of Project a step of the sequences, its arguments drawn from `arguments`."""

    def register(method: Callable[..., None]) -> Callable[..., None]:
        STEP_ARGUMENTS[method.__name__] = arguments
        return method

    return register


class Project:
    """A project in a real git repository, the steps that change it, and the oracle that judges each read."""

    def __init__(self, run: Run, base: Path, template: Path, *, watched: bool) -> None:
        self.run = run
        self.base = base
        self.project = base / "proj"
        self.copy = base / "oracle" / "proj"  # the same folder name: only the path differs
        self.planning = self.project / ".planning"
        shutil.copytree(template, self.project, copy_function=shutil.copy)
        self.known = [self.planning / "STATE.md"]  # the files hand edits pick from, in the order first seen
        self.saved: list[tuple[Path, Path]] = []  # (file, an older version of it, kept with its times)
        self.links: list[Path] = []  # second hard links to records, outside the project
        self.sessions: list[str] = []
        new_repo(self.project)
        self.commits = [commit_all(self.project, "init")]
        self.watcher: WatchProcess | None = None
        if watched:
            # A running watcher checks the workspace on every change it sees: commands must answer alike beside it.
            self.watcher = WatchProcess(self.project)
            self.watcher.wait_event("ready")

    def close(self) -> None:
        """Stop the watcher; remove the example's folders."""
        if self.watcher is not None and self.watcher.proc.poll() is None:
            self.watcher.proc.send_signal(signal.SIGINT)
            try:
                self.watcher.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.watcher.proc.kill()
                self.watcher.proc.wait()
        shutil.rmtree(self.base, ignore_errors=True)

    # ------------------------------------------------------------------------------------------ helpers

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run a planstate write in the project: refused or not, the oracle judges what it leaves."""
        done = self.run(*args, cwd=self.project)
        assert done.returncode in (0, 1, 2, 3) and "Traceback" not in done.stderr, (args, done.stdout, done.stderr)
        return done

    def files(self, records_only: bool = False) -> list[Path]:
        """STATE.md (unless `records_only`) and the record files that exist, in the order they were first seen."""
        seen = set(self.known)
        for folder in FOLDERS:
            where = self.planning / folder
            if where.is_dir():
                self.known += sorted(p for p in where.iterdir() if p.suffix == ".md" and p not in seen)
        return [p for p in self.known if p.is_file() and (p.parent.name in FOLDERS or not records_only)]

    def pick(self, pick: int, records_only: bool = False) -> Path | None:
        """The file `pick` chooses (modulo how many there are), saved first for `restore_older`; None if none."""
        files = self.files(records_only)
        if not files:
            return None
        path = files[pick % len(files)]
        kept = self.base / "saved" / str(len(self.saved))
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, kept)
        self.saved.append((path, kept))
        return path

    def apply(self, name: str, *arguments: Any) -> None:
        """Take one step."""
        getattr(self, name)(*arguments)

    # ------------------------------------------------------------------------------------------ CLI writes

    @step()  # first: where a shrunk sequence's steps that do not matter end up
    def nothing(self) -> None:
        """No change: the reads run again over the caches they just kept."""

    @step(st.sampled_from(["Use jose", "Keep SQLite", "Drop the cache"]))
    def decision_add(self, title: str) -> None:
        """`decision add`."""
        self.cli("decision", "add", "--context", "c", "--decision", title, "--reason", "r")

    @step(st.booleans())
    def blocker_add(self, active: bool) -> None:
        """`blocker add`, sometimes `--active`."""
        self.cli("blocker", "add", "--description", "Waiting on the API keys", *(["--active"] if active else []))

    @step(PICK)
    def blocker_resolve(self, pick: int) -> None:
        """`blocker resolve ID` (the id taken from the file's name)."""
        ids = ["-".join(p.stem.split("-")[:2]) for p in self.files(True) if p.parent.name == "blockers"]
        if ids:
            self.cli("blocker", "resolve", ids[pick % len(ids)], "--resolution", "done")

    @step(st.sampled_from(["worker-1", "worker-2"]))
    def session_start(self, agent: str) -> None:
        """`session start --agent X`."""
        done = self.cli("session", "start", "--agent", agent, "--json")
        if done.returncode == 0:
            self.sessions.append(json.loads(done.stdout)["data"]["id"])

    @step(st.none() | PICK)
    def session_end(self, pick: int | None) -> None:
        """`session end` (of the active session, or `--session` of one started)."""
        which = [] if pick is None or not self.sessions else ["--session", self.sessions[pick % len(self.sessions)]]
        self.cli("session", "end", *which, "--completed", "a task")

    @step(TEXTS)
    def set_next_action(self, text: str) -> None:
        """`set next_action TEXT`."""
        self.cli("set", "next_action", text)

    @step(TEXTS)
    def next(self, text: str) -> None:
        """`next TEXT`."""
        self.cli("next", text)

    @step(TEXTS)
    def task_start(self, text: str) -> None:
        """`task start TEXT`."""
        self.cli("task", "start", text)

    @step()
    def task_done(self) -> None:
        """`task done`."""
        self.cli("task", "done")

    @step(st.integers(1, 3))
    def phase_complete(self, phase: int) -> None:
        """`phase complete N` (refused unless N is the current phase)."""
        self.cli("phase", "complete", str(phase))

    @step()
    def render(self) -> None:
        """`render`."""
        self.cli("render")

    @step()
    def check_fix(self) -> None:
        """`check --fix`."""
        self.cli("check", "--fix")

    # ------------------------------------------------------------------------------------------ hand edits

    @step(PICK, st.sampled_from(sorted(CHANGES)))
    def rewrite_in_place(self, pick: int, change: str) -> None:
        """A file rewritten in place (the same inode)."""
        if path := self.pick(pick):
            rewrite(path, change)

    @step(PICK, st.sampled_from(sorted(CHANGES)))
    def rename_save(self, pick: int, change: str) -> None:
        """A file saved as editors do: a temp file beside it renamed over it (a new inode)."""
        if path := self.pick(pick):
            temp = path.with_name(f".{path.name}.saving")
            temp.write_text(CHANGES[change](path.read_text(encoding="utf-8")), encoding="utf-8")
            os.replace(temp, path)

    @step(PICK)
    def restore_older(self, pick: int) -> None:
        """An older version of a file, saved before a hand edit, copied back over it with its times (`cp -p`)."""
        if self.saved:
            path, kept = self.saved[pick % len(self.saved)]
            shutil.copy2(kept, path)

    @step(PICK)
    def same_size(self, pick: int) -> None:
        """A same-size edit in place with the mtime put back."""
        if path := self.pick(pick):
            same_size_change(path)

    @step(st.sampled_from(["decision", "blocker"]), st.integers(0, 30))
    def add_by_hand(self, kind: str, i: int) -> None:
        """A record file written by hand (tests/builders.py)."""
        write_record(self.project, kind, decision(i) if kind == "decision" else blocker(i))

    @step(PICK)
    def delete_record(self, pick: int) -> None:
        """A record file deleted."""
        if path := self.pick(pick, records_only=True):
            path.unlink()

    @step(PICK, st.booleans())
    def rename_record(self, pick: int, keep_id: bool) -> None:
        """A record file renamed (its name still starting with its id, or not)."""
        if path := self.pick(pick, records_only=True):
            path.rename(path.with_name(f"{path.stem}-renamed.md" if keep_id else f"renamed-{len(self.saved)}.md"))

    @step(PICK)
    def hard_link(self, pick: int) -> None:
        """A second hard link to a record, made outside the project."""
        if path := self.pick(pick, records_only=True):
            link = self.base / "links" / f"{len(self.links)}.md"
            link.parent.mkdir(parents=True, exist_ok=True)
            os.link(path, link)
            self.links.append(link)

    @step(PICK, st.none() | st.sampled_from(sorted(CHANGES)))
    def edit_through_link(self, pick: int, change: str | None) -> None:
        """A record edited in place through its other name: a rewrite, or (None) a same-size edit, mtime put back."""
        if self.links:
            link = self.links[pick % len(self.links)]
            same_size_change(link) if change is None else rewrite(link, change)

    # ------------------------------------------------------------------------------------------ git

    @step()
    def git_commit(self) -> None:
        """Everything committed."""
        self.commits.append(commit_all(self.project, f"step {len(self.commits)}"))

    @step(PICK)
    def git_checkout_older(self, pick: int) -> None:
        """An older commit's `.planning/` files checked out over the work tree."""
        git(self.project, "checkout", "-q", self.commits[pick % len(self.commits)], "--", ".planning", check=False)

    @step()
    def git_stash(self) -> None:
        """`git stash`."""
        git(self.project, "stash", "-q", check=False)

    @step()
    def git_stash_pop(self) -> None:
        """`git stash pop` (a conflict leaves its markers in the files)."""
        git(self.project, "stash", "pop", "-q", check=False)

    @step()
    def git_reset_hard(self) -> None:
        """`git reset --hard`."""
        git(self.project, "reset", "-q", "--hard", check=False)

    @step(PICK, st.integers(1, 3))
    def git_merge(self, pick: int, count: int) -> None:
        """A branch made from an older commit, in another worktree, that adds records by hand, merged."""
        self.git_commit()
        branch = f"side-{len(self.commits)}"
        side = self.base / branch
        git(self.project, "worktree", "add", "-q", "-b", branch, str(side), self.commits[pick % len(self.commits)])
        for i in range(count):
            write_record(side, "decision", decision(40 + len(self.commits) + i))
        commit_all(side, f"{count} decisions")
        git(self.project, "worktree", "remove", "--force", str(side))
        git(self.project, "merge", "-q", "--no-edit", branch, check=False)

    # ------------------------------------------------------------------------------------------ store damage

    @step(st.booleans())
    def delete_store(self, everything: bool) -> None:
        """`.local/cache` deleted, or all of `.local/` but the heartbeats."""
        local = self.planning / ".local"
        for entry in sorted(local.iterdir()) if local.is_dir() else []:
            if entry.name == "cache" or (everything and entry.name != "heartbeats"):
                remove(entry)

    # Bits flipped (how="flip") are not among the steps drawn: see test_bits_flipped_in_the_cache_cost_only_time.
    @step(st.sampled_from(["truncate", "garbage"]), st.integers(0, 2**16))
    def corrupt_cache(self, how: str, seed: int) -> None:
        """Every file under `.local/cache/` truncated, with bits flipped, or overwritten with garbage, in place."""
        rng = random.Random(seed)
        for path in sorted((self.planning / ".local" / "cache").rglob("*")):
            if not path.is_file():
                continue
            data = bytearray(path.read_bytes())
            if how == "truncate":
                data = data[: rng.randrange(len(data) + 1)]
            elif how == "flip" and data:
                for _ in range(1 + len(data) // 256):
                    data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            else:
                data = bytearray(rng.randbytes(max(len(data), 64)))
            with open(path, "r+b") as handle:
                handle.write(data)
                handle.truncate()

    # ------------------------------------------------------------------------------------------ the oracle

    def fresh_copy(self) -> None:
        """The project copied to `self.copy` without `.local/` but for its heartbeats, with their times."""
        # The heartbeats are machine-local state, not a cache: whether a session is live is decided by them (their
        # mtimes), so a copy without them would answer about another machine.
        shutil.rmtree(self.copy.parent, ignore_errors=True)
        planning = self.planning
        shutil.copytree(
            self.project, self.copy, symlinks=True, ignore=lambda d, _n: [".local"] if Path(d) == planning else []
        )
        beats = self.planning / ".local" / "heartbeats"
        if beats.is_dir():
            shutil.copytree(beats, self.copy / ".planning" / ".local" / "heartbeats", symlinks=True)

    def forget_copy_cache(self) -> None:
        """The copy's `.local/` emptied but for its heartbeats, so each command on the copy runs with no cache."""
        local = self.copy / ".planning" / ".local"
        for entry in local.iterdir() if local.is_dir() else []:
            if entry.name != "heartbeats":
                remove(entry)

    def differences(self) -> list[str]:
        """How each read's answer and exit code in the project differ from those on a copy without `.local/`."""
        self.fresh_copy()
        mine = [self.run(*args, cwd=self.project) for args in READS]  # first, so its caches answer
        problems = []
        for args, done in zip(READS, mine, strict=True):
            self.forget_copy_cache()
            # No watcher serves the copy anyway (it is another folder); saying so makes the oracle's way plain.
            theirs = self.run(*args, cwd=self.copy, env={"PLANSTATE_NO_WATCHER": "1"})
            a, b = answer(done), answer(theirs, self.copy, self.project)
            if (done.returncode, a) != (theirs.returncode, b):
                diff = [f"exit {done.returncode} != {theirs.returncode}"] * (done.returncode != theirs.returncode)
                problems.append(f"planstate {' '.join(args)}: " + "; ".join(diff + list(differing(a, b))))
            # Both crashing alike is no answer either (exit 4: an internal error, docs/cli.md).
            problems += [f"planstate {' '.join(args)}: {d.stderr.strip()}" for d in (done, theirs) if d.returncode == 4]
        return problems


def answer(done: subprocess.CompletedProcess[str], copy: Path | None = None, original: Path | None = None) -> Any:
    """A read command's answer: its JSON with the copy's path put back to the original's, else its text."""
    out = done.stdout
    if copy is not None and original is not None:
        for there, here in ((copy.resolve(), original.resolve()), (copy, original)):
            out = out.replace(str(there), str(here))
    try:
        return json.loads(out)
    except ValueError:
        return out


def differing(mine: Any, theirs: Any, where: str = "") -> Iterator[str]:
    """Each place where two JSON values differ, as `path: mine != theirs` (the cached one first)."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for key in sorted(set(mine) | set(theirs)):
            yield from differing(mine.get(key, "<absent>"), theirs.get(key, "<absent>"), f"{where}.{key}")
    elif isinstance(mine, list) and isinstance(theirs, list) and len(mine) == len(theirs):
        for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            yield from differing(a, b, f"{where}[{i}]")
    elif isinstance(mine, list) and isinstance(theirs, list):
        only_mine, only_theirs = [x for x in mine if x not in theirs], [x for x in theirs if x not in mine]
        yield f"{where}: {len(mine)} items != {len(theirs)}, only cached: {only_mine}, only without: {only_theirs}"
    elif mine != theirs:
        yield f"{where or '.'}: {json.dumps(mine)[:400]} != {json.dumps(theirs)[:400]}"


STEP = st.one_of([st.tuples(st.just(name), *arguments) for name, arguments in STEP_ARGUMENTS.items()])
# Every kind of step at least once, in a fixed order, on every run: the picks name files in the order first seen
# (STATE.md, then the records). It ends with the edits through a second hard link, a few steps after the link was
# made, so the linked file has settled (its identity is trusted) when they come.
TOUR: list[tuple[Any, ...]] = [
    ("decision_add", "Use jose"),
    ("blocker_add", True),
    ("session_start", "worker-1"),
    ("task_start", "Write the migration"),
    ("git_commit",),
    ("same_size", 0),
    ("rewrite_in_place", 1, "retitle"),
    ("rename_save", 2, "restatus"),
    ("restore_older", 1),
    ("add_by_hand", "decision", 3),
    ("add_by_hand", "blocker", 4),
    ("rename_record", 3, False),
    ("blocker_resolve", 0),
    ("delete_record", 4),
    ("set_next_action", "Review the schema"),
    ("task_done",),
    ("phase_complete", 1),
    ("render",),
    ("rewrite_in_place", 0, "in-region"),
    ("check_fix",),
    ("git_stash",),
    ("decision_add", "Keep SQLite"),
    ("git_stash_pop",),
    ("git_checkout_older", 0),
    ("git_merge", 0, 2),
    ("git_reset_hard",),
    ("rewrite_in_place", 2, "broken"),
    ("delete_store", True),
    ("rewrite_in_place", 2, "mended"),
    ("corrupt_cache", "truncate", 1),
    ("corrupt_cache", "garbage", 2),
    ("session_end", None),
    ("delete_store", False),
    ("hard_link", 0),  # after the listings are kept, none deleted again before the edits
    ("decision_add", "Drop the cache"),
    ("next", "Wire OAuth"),
    ("render",),
    ("set_next_action", "Ship it"),
    ("edit_through_link", 0, None),
    ("edit_through_link", 0, "restatus"),
]


def play(run: Run, base: Path, template: Path, steps: list[tuple[Any, ...]], *, watched: bool) -> None:
    """Take the steps in a new project; before the first and after each, every read answers as without `.local/`."""
    project = Project(run, base, template, watched=watched)
    try:
        for i, (name, *arguments) in enumerate([("start",), *steps]):
            if name != "start":
                project.apply(name, *arguments)
            problems = project.differences()
            assert not problems, f"after step {i} {(name, *arguments)}:\n" + "\n".join(problems)
    finally:
        project.close()


EXAMPLE_FOLDERS = iter(range(10**9))
PROPERTY = settings(
    max_examples=EXAMPLES,
    derandomize=not HUNT,
    database=None,
    deadline=None,
    # A hunt looks for new sequences; CI plays the tour first where it is an example.
    phases=[Phase.generate, Phase.shrink] if HUNT else list(Phase),
    # `run` and `tmp_path` hold nothing of an example: each example makes its own project under tmp_path.
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
# Not too short: a cache shows its faults after a history of steps (lists of up to 40 average 6 steps otherwise).
SEQUENCES = st.lists(STEP, min_size=STEPS // 4, max_size=STEPS)


@PROPERTY
@given(steps=SEQUENCES)
def test_reads_answer_as_without_local(
    run: Run, tmp_path: Path, _project_template: Path, steps: list[tuple[Any, ...]]
) -> None:
    """After each step, every read command answers as on a copy without `.local/`."""
    play(run, tmp_path / f"example-{next(EXAMPLE_FOLDERS)}", _project_template, steps, watched=False)


# Seeds 8 and 22 made 0.x answer a flipped key (`supersedeD_by`) and crash on a flipped schema; 234 made a hunt's status
# show `position.plqn`: all three are among those played.
@pytest.mark.parametrize("seed", [*range(10), 22, 234])
def test_bits_flipped_in_the_cache_cost_only_time(
    run: Run, tmp_path: Path, _project_template: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bits flipped in the store (one in 256 bytes): every read answers as without it, as SQLite refuses the damaged
    pages. Kept apart from the property, whose steps damage the store by truncation and garbage."""
    (tmp_path / "crashes").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "crashes"))  # the crash logs of the commands, not the machine's /tmp
    steps = [("decision_add", "Use jose"), ("corrupt_cache", "flip", seed)]
    play(run, tmp_path / "example", _project_template, steps, watched=False)


# The tour plays as a test of its own here, so two workers share the plain variant; under a watcher it is the property's
# first example.
def test_a_tour_of_every_step_answers_as_without_local(run: Run, tmp_path: Path, _project_template: Path) -> None:
    """Every kind of step, once each, in one sequence: each read answers as without `.local/` after each."""
    play(run, tmp_path / "example", _project_template, TOUR, watched=False)


@PROPERTY
@example(steps=TOUR)
@given(steps=SEQUENCES)
def test_reads_answer_as_without_local_under_a_watcher(
    run: Run, tmp_path: Path, _project_template: Path, steps: list[tuple[Any, ...]]
) -> None:
    """The same with `planstate watch` running for the whole sequence: a watcher changes no answer."""
    play(run, tmp_path / f"example-{next(EXAMPLE_FOLDERS)}", _project_template, steps, watched=True)
