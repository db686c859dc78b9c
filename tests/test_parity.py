"""The CLI and the Python API are one product: every command has an API call that writes the same bytes and
returns, as `to_dict()`, what the command prints with `--json`.

Each case runs the command through the real console script in one copy of a workspace and the API call
in an identical copy, with the same clock and actor, then compares the two trees byte for byte (record
ids, which carry randomness, are the one thing renamed before comparing) and the two results.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import forkserver
import pytest
from conftest import PINNED_NOW, json_envelope

from planstate.workspace import Workspace

NOW = "2026-01-02T09:30:00Z"
ACTOR = "tester"
RECORD_ID = re.compile(r"\b(dec|blk|ses|tsk)-[0-9a-z]{12}\b")
# A region's checksums cover the record ids it shows, so they differ with the ids (check verifies them elsewhere).
SUMS = re.compile(r"( sha=)[0-9a-f]+( in=)[0-9a-f]+")

Api = Callable[[Workspace], Any]


class Case:
    """One command and its API twin; `setup` prepares the workspace both copies start from."""

    def __init__(
        self,
        args: tuple[str, ...],
        api: Api,
        *,
        setup: Callable[[Workspace], None] | None = None,
        compare_result: bool = True,
    ) -> None:
        self.args = args
        self.api = api
        self.setup = setup
        self.compare_result = compare_result


def _records(ws: Workspace) -> None:
    """A decision, a blocker and a session whose ids the commands under test name as `@dec`, `@blk`, `@ses`."""
    ws.decision.add(context="Token storage", decision="httpOnly cookie", reason="XSS")
    ws.blocker.add(description="Waiting for OAuth keys", affects=["phase 2"])
    ws.session.start(agent="worker-1")


def _ids_of(ws: Workspace, kind: str) -> list[str]:
    """The ids of the records of `kind`, ordered by their titles (ids are time-ordered only to the second)."""
    folder = {"decision": "decisions", "blocker": "blockers", "session": "sessions", "task": "tasks"}[kind]
    paths = sorted((ws.root / folder).glob("*.md"), key=lambda p: p.name.split("-", 2)[2])
    return [found.group(0) for path in paths if (found := RECORD_ID.search(path.name))]


def _id(ws: Workspace, kind: str) -> str:
    """The id of the only record of `kind`."""
    (only,) = _ids_of(ws, kind)
    return only


def _proposed(ws: Workspace) -> None:
    ws.decision.add(context="Queue", decision="Use SQS", reason="managed", status="proposed")


def _failed(ws: Workspace) -> None:
    ws.phase.fail(1, reason="red")


def _two_decisions(ws: Workspace) -> None:
    """An older decision (`@dec`, whose file name sorts first) and a newer one (`@new`)."""
    ws.decision.add(context="Token storage", decision="localStorage", reason="simple", title="a-old")
    ws.decision.add(context="Token storage", decision="httpOnly cookie", reason="XSS", title="b-new")


def _finished_records(ws: Workspace) -> None:
    """A superseded decision, a resolved blocker and an ended session beside an accepted decision: what
    `records archive` moves and keeps."""
    _two_decisions(ws)
    ws.decision.supersede(*_ids_of(ws, "decision"))
    ws.blocker.resolve(ws.blocker.add(description="Waiting for OAuth keys").id, resolution="came")
    ws.session.end(ws.session.start(agent="worker-1").id)


def _tasks(ws: Workspace) -> None:
    """Two tasks of phase 1 (`@tsk` is the first) and one after the first, in wave 0."""
    first = ws.task.add("a-schema", phase=1)
    ws.task.add("b-seed", after=[first.id], wave=0)
    ws.task.add("c-docs", phase=1, wave=1)


def _finished_then_reopened(ws: Workspace) -> None:
    """Every phase completed, then the initiative reopened: only an explicit `complete` closes it again."""
    for number in (1, 2, 3):
        ws.phase.complete(number)
    ws.reopen(reason="one more look")


GSD_TOWN = Path(__file__).resolve().parent / "fixtures" / "gsd" / "PloganNV+gsd-town" / ".planning"

CASES: dict[str, Case] = {
    "status": Case(("status",), lambda ws: ws.status()),
    "get": Case(("get", "position"), lambda ws: ws.get("position")),
    "set": Case(
        ("set", "next_action", "Write the schema"), lambda ws: ws.set_text({"next_action": "Write the schema"})
    ),
    "append": Case(
        ("append", "resume_context.open_questions", "Which DB?"),
        lambda ws: ws.append_text("resume_context.open_questions", "Which DB?"),
    ),
    "unset": Case(
        ("unset", "position.task"), lambda ws: ws.unset("position.task"), setup=lambda ws: ws.task.start("t")
    ),
    "validate": Case(("validate",), lambda ws: ws.validate()),
    "decision add": Case(
        ("decision", "add", "--context", "C", "--decision", "D", "--reason", "R"),
        lambda ws: ws.decision.add(context="C", decision="D", reason="R"),
    ),
    "decision accept": Case(
        ("decision", "accept", "@dec"), lambda ws: ws.decision.accept(_id(ws, "decision")), setup=_proposed
    ),
    "decision reject": Case(
        ("decision", "reject", "@dec", "--reason", "too risky"),
        lambda ws: ws.decision.reject(_id(ws, "decision"), reason="too risky"),
        setup=_proposed,
    ),
    "decision list": Case(("decision", "list"), lambda ws: ws.decision.list(), setup=_records),
    "decision show": Case(
        ("decision", "show", "@dec"), lambda ws: ws.decision.show(_id(ws, "decision")), setup=_records
    ),
    "decision supersede": Case(
        ("decision", "supersede", "@old", "@new"),
        lambda ws: ws.decision.supersede(_ids_of(ws, "decision")[0], _ids_of(ws, "decision")[1]),
        setup=_two_decisions,
    ),
    "blocker add": Case(
        ("blocker", "add", "--description", "No keys", "--affects", "phase 2"),
        lambda ws: ws.blocker.add(description="No keys", affects=["phase 2"]),
    ),
    "blocker list": Case(("blocker", "list"), lambda ws: ws.blocker.list(), setup=_records),
    "blocker show": Case(("blocker", "show", "@blk"), lambda ws: ws.blocker.show(_id(ws, "blocker")), setup=_records),
    "blocker activate": Case(
        ("blocker", "activate", "@blk"), lambda ws: ws.blocker.activate(_id(ws, "blocker")), setup=_records
    ),
    "blocker bypass": Case(
        ("blocker", "bypass", "@blk", "--workaround", "mock it"),
        lambda ws: ws.blocker.bypass(_id(ws, "blocker"), workaround="mock it"),
        setup=lambda ws: (_records(ws), ws.blocker.activate(_id(ws, "blocker")))[0],
    ),
    "blocker resolve": Case(
        ("blocker", "resolve", "@blk", "--resolution", "keys came"),
        lambda ws: ws.blocker.resolve(_id(ws, "blocker"), resolution="keys came"),
        setup=_records,
    ),
    "session start": Case(("session", "start", "--agent", "a1"), lambda ws: ws.session.start(agent="a1")),
    "session end": Case(
        ("session", "end", "--session", "@ses", "--handoff-reason", "done"),
        lambda ws: ws.session.end(_id(ws, "session"), handoff_reason="done"),
        setup=_records,
    ),
    "session heartbeat": Case(
        ("session", "heartbeat", "--session", "@ses"),
        lambda ws: ws.session.heartbeat(_id(ws, "session")),
        setup=_records,
    ),
    "session reap": Case(("session", "reap"), lambda ws: ws.session.reap(), setup=_records),
    "session list": Case(("session", "list"), lambda ws: ws.session.list(), setup=_records),
    "session show": Case(("session", "show", "@ses"), lambda ws: ws.session.show(_id(ws, "session")), setup=_records),
    "records archive": Case(
        ("records", "archive", "--before", "2099-01-01"),
        lambda ws: ws.records.archive(before="2099-01-01"),
        setup=_finished_records,
    ),
    "phase start": Case(("phase", "start", "1"), lambda ws: ws.phase.start(1), setup=_failed),
    "phase complete": Case(
        ("phase", "complete", "1", "--evidence", "tests=3/3"),
        lambda ws: ws.phase.complete(1, evidence={"tests": "3/3"}),
    ),
    "phase fail": Case(("phase", "fail", "1", "--reason", "red"), lambda ws: ws.phase.fail(1, reason="red")),
    "phase retry": Case(("phase", "retry", "1"), lambda ws: ws.phase.retry(1), setup=_failed),
    "phase skip": Case(("phase", "skip", "1"), lambda ws: ws.phase.skip(1)),
    "phase add": Case(
        ("phase", "add", "Review", "--before", "2"), lambda ws: ws.phase.add("Review", before=2), setup=_records
    ),
    "phase rename": Case(("phase", "rename", "2", "Build it"), lambda ws: ws.phase.rename(2, "Build it")),
    "phase remove": Case(("phase", "remove", "2"), lambda ws: ws.phase.remove(2), setup=_records),
    "phase move": Case(("phase", "move", "3", "--to", "2"), lambda ws: ws.phase.move(3, to=2), setup=_records),
    "position": Case(("position", "--task", "t2"), lambda ws: ws.position(task="t2")),
    "next": Case(("next", "Ship it"), lambda ws: ws.next("Ship it")),
    "context": Case(("context", "--file", "a.py"), lambda ws: ws.context(files=["a.py"])),
    "task start": Case(("task", "start", "Write tests"), lambda ws: ws.task.start("Write tests")),
    "task done": Case(("task", "done"), lambda ws: ws.task.done(), setup=lambda ws: ws.task.start("t")),
    "task add": Case(
        ("task", "add", "Seed users", "--phase", "1", "--after", "@tsk", "--wave", "2"),
        lambda ws: ws.task.add("Seed users", phase=1, after=[_ids_of(ws, "task")[0]], wave=2),
        setup=_tasks,
    ),
    "task list": Case(("task", "list", "--phase", "1"), lambda ws: ws.task.list(phase=1), setup=_tasks),
    "ready": Case(("ready",), lambda ws: ws.ready(), setup=_tasks),
    "pause": Case(("pause", "--reason", "lunch"), lambda ws: ws.pause(reason="lunch")),
    "suspend": Case(("suspend", "--reason", "restart"), lambda ws: ws.suspend(reason="restart")),
    "error": Case(("error", "--reason", "disk full"), lambda ws: ws.error(reason="disk full")),
    "fail": Case(("fail", "--reason", "gave up"), lambda ws: ws.fail(reason="gave up")),
    "complete": Case(("complete",), lambda ws: ws.complete(), setup=_finished_then_reopened),
    "retry": Case(("retry",), lambda ws: ws.retry(), setup=lambda ws: ws.fail(reason="x")),
    "abandon": Case(("abandon",), lambda ws: ws.abandon()),
    "archive": Case(("archive",), lambda ws: ws.archive()),
    "reopen": Case(("reopen",), lambda ws: ws.reopen(), setup=lambda ws: ws.archive()),
    "resume": Case(("resume",), lambda ws: ws.brief()),
    "initiative new": Case(
        ("initiative", "new", "side", "--title", "Side", "--phase", "Only"),
        lambda ws: ws.initiative.new("side", title="Side", phases=["Only"]),
    ),
    "initiative switch": Case(
        ("initiative", "switch", "side", "--reason", "urgent"),
        lambda ws: ws.initiative.switch("side", reason="urgent"),
        setup=lambda ws: ws.initiative.new("side", title="Side", phases=["Only"]),  # paused: demo is active
    ),
    "initiative list": Case(("initiative", "list"), lambda ws: ws.initiative.list()),
    "render": Case(("render",), lambda ws: ws.render()),
    "check": Case(("check",), lambda ws: ws.check()),
    "import": Case(("import", "gsd", str(GSD_TOWN)), lambda ws: ws.import_from("gsd", GSD_TOWN)),
}

# Commands with no API twin, each with the reason.
EXEMPT = {
    "init": "creates the workspace: compared in test_init_writes_what_the_api_writes",
    "schema": "prints the JSON Schema of the models (planstate.model.kinds), no workspace involved",
    "watch": "runs until stopped; Workspace.watch is tested with the same events in test_watch",
    "diff": "needs git history; Workspace.diff is compared with the command in test_semdiff",
    "git textconv": "a git plumbing entry point for one file, with no workspace",
    "git merge-driver": "a git plumbing entry point for three files, with no workspace",
    "git install": "writes this clone's git config: compared in test_gitsetup",
    "git uninstall": "writes this clone's git config: compared in test_gitsetup",
    "git status": "runs the configured commands from a plain shell: Workspace.git_status is compared in test_gitsetup",
    "hooks install": "writes an agent's settings, not the workspace: tests/test_hooks.py",
    "hooks uninstall": "writes an agent's settings, not the workspace: tests/test_hooks.py",
    "hooks status": "reads agents' settings, not the workspace: tests/test_hooks.py",
    "hooks run": "an agent's entry point, fed its event on stdin: tests/test_hooks.py",
    "completion": "prints a shell script made from the command line itself, which the API does not have",
    "__complete": "the completion scripts' entry point: words from the command line's parser and the workspace",
    "mcp": "serves the API itself as MCP tools: tests/test_mcp.py compares each tool's files and answers with the CLI",
}


def documented_commands() -> list[str]:
    """Every command docs/cli.md documents (`### planstate <command>` headings)."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text(encoding="utf-8")
    return re.findall(r"^### planstate (.+)$", text, re.MULTILINE)


def test_every_command_has_an_api_twin_or_a_reason() -> None:
    commands = documented_commands()
    assert set(CASES) | set(EXEMPT) == set(commands)
    assert not set(CASES) & set(EXEMPT)


def _env() -> dict[str, str]:
    """The environment of both sides: the same clock and actor, nothing else of planstate's."""
    import os

    env = {**os.environ, "PLANSTATE_NOW": NOW, "PLANSTATE_ACTOR": ACTOR, "NO_COLOR": "1"}
    for name in ("PLANSTATE_DIR", "PLANSTATE_INITIATIVE", "PLANSTATE_SESSION", "PLANSTATE_LOCK_TIMEOUT"):
        env.pop(name, None)
    return env


def _tree(project: Path) -> dict[str, bytes]:
    """Every committed planning file (not `.local/`), record ids replaced by their kind."""
    planning = project / ".planning"
    out = {}
    for path in sorted(planning.rglob("*")):
        rel = path.relative_to(planning)
        if path.is_file() and rel.parts[0] != ".local":
            out[RECORD_ID.sub(r"\1-ID", str(rel))] = _ids(path)
    return out


def _ids(path: Path) -> bytes:
    """A file's bytes with record ids replaced by their kind (and the region checksums that cover them)."""
    text = RECORD_ID.sub(lambda m: f"{m.group(1)}-ID", path.read_text(encoding="utf-8"))
    return SUMS.sub(r"\1SUM\2SUM", text).encode("utf-8")


def _plain(value: Any) -> Any:
    """An API result as the `data` of what `--json` prints: `to_dict()`, or the value itself."""
    if hasattr(value, "to_dict"):
        value = value.to_dict()
    return json.loads(RECORD_ID.sub(lambda m: f"{m.group(1)}-ID", json.dumps(value, default=str)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_command_and_api_write_the_same_bytes_and_say_the_same(
    name: str, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = CASES[name]
    monkeypatch.setenv("PLANSTATE_NOW", PINNED_NOW)
    if case.setup is not None:
        case.setup(Workspace.find(project, actor=ACTOR))
    twin = tmp_path / "twin"
    shutil.copytree(project, twin)
    ws = Workspace.find(project, actor=ACTOR)
    named = {"@dec": _id, "@blk": _id, "@ses": _id}
    kinds = {"@dec": "decision", "@blk": "blocker", "@ses": "session"}
    picks = {
        "@old": lambda w: _ids_of(w, "decision")[0],
        "@new": lambda w: _ids_of(w, "decision")[1],
        "@tsk": lambda w: _ids_of(w, "task")[0],
    }
    args = [named[a](ws, kinds[a]) if a in named else picks[a](ws) if a in picks else a for a in case.args]
    cli = forkserver.run([*args, "--json"], cwd=twin, env=_env(), timeout=60)
    for key, value in _env().items():
        if key.startswith("PLANSTATE_"):
            monkeypatch.setenv(key, value)
    result = case.api(Workspace.find(project, actor=ACTOR))
    assert cli.returncode in (0, 1), cli.stderr
    assert _tree(twin) == _tree(project)
    json_envelope(cli)
    if case.compare_result:
        said = json.loads(RECORD_ID.sub(lambda m: f"{m.group(1)}-ID", cli.stdout.replace(str(twin), str(project))))
        assert said["data"] == _plain(result)  # the API's to_dict() is the envelope's `data`


def test_init_writes_what_the_api_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    by_cli, by_api = tmp_path / "cli", tmp_path / "api"
    by_cli.mkdir()
    by_api.mkdir()
    done = forkserver.run(
        ["init", "--title", "Demo", "--phase", "A", "--phase", "B"], cwd=by_cli, env=_env(), timeout=60
    )
    assert done.returncode == 0, done.stderr
    monkeypatch.setenv("PLANSTATE_NOW", NOW)
    Workspace.init(by_api, title="Demo", phases=["A", "B"], actor=ACTOR)
    assert _tree(by_cli) == _tree(by_api)
