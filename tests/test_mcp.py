"""`planstate mcp` end to end: the official MCP client drives the real server over stdio on real workspaces.

One server serves the module (each test names its own workspace in the calls' `dir`); the concurrency test starts
four more, each finding the workspace another way. Answers are checked against the JSON contract (planstate/schemas/,
as tests/test_json_contract.py checks the CLI), files on disk against what the same CLI command writes.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import forkserver
import pytest
from conftest import front, state_file
from gitutil import commit_all, new_repo
from mcpclient import Client, server_env
from test_json_contract import validate, vocabulary
from test_parity import ACTOR, NOW, RECORD_ID, _env, _tree

TOOL_NAMES = (
    "resume", "status", "get", "set", "position", "task", "next_action", "context", "phase", "lifecycle",
    "decision", "blocker", "session", "initiative", "check", "diff", "schema",
)  # fmt: skip

SHOWN = ("position", "context", "next")  # commands that show a value of STATE.md when asked to change nothing
if TYPE_CHECKING:  # the SDK is imported when a server starts, not when the suite is collected
    from mcp.types import CallToolResult

BUDGET = 16_000  # characters of the whole tools/list answer: about 4k tokens (issue 13)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, _project_template: Path) -> Path:
    """The module server's own workspace (`--dir`): what calls without `dir`, and resources, act on."""
    folder = tmp_path_factory.mktemp("home") / "proj"
    shutil.copytree(_project_template, folder)
    return folder


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, home: Path) -> Iterator[Client]:
    """One server for the module, started in a folder with no workspace and `--dir` naming `home`; the tests name
    their own workspace in each call's `dir`."""
    nowhere = tmp_path_factory.mktemp("nowhere")
    env = server_env(PLANSTATE_NOW=NOW, PLANSTATE_ACTOR=ACTOR, PLANSTATE_LOCK_TIMEOUT="600")
    client = Client(["--dir", str(home)], cwd=nowhere, env=env)
    yield client
    client.close()


def answer(result: CallToolResult, project: Path) -> dict[str, Any]:
    """The envelope of a successful call, after checking it against the contract and that it names `project`."""
    assert not result.is_error, result.content
    envelope = result.structured_content
    assert envelope is not None
    validate(envelope, "envelope")
    shown = envelope["command"] in SHOWN and not (isinstance(envelope["data"], dict) and "changes" in envelope["data"])
    if not shown:  # `position`, `context` and `next` without a change show a value, as `get` does
        validate(envelope["data"], envelope["command"])
    if envelope["command"] not in ("get", "schema", *SHOWN):  # a value as it is in a file
        vocabulary(envelope["data"])
    assert envelope["workspace"] == str(project / ".planning")
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith(f"planstate {envelope['command']}: ") and str(project / ".planning") in text
    return envelope


def data(result: CallToolResult, project: Path) -> Any:
    """The `data` of a call that exited 0."""
    envelope = answer(result, project)
    assert envelope["exit"] == 0 and envelope["ok"], envelope
    return envelope["data"]


def refusal(result: CallToolResult, *words: str) -> dict[str, Any]:
    """The error envelope of a refused call: `isError`, one line of text (the CLI's) holding `words`, exit 2."""
    assert result.is_error, result.structured_content
    (content,) = result.content
    line = content.text  # type: ignore[union-attr]
    assert "\n" not in line and line.startswith("planstate: "), line
    for word in words:
        assert word in line, line
    envelope = result.structured_content
    assert envelope is not None
    validate(envelope, "envelope")
    assert envelope["exit"] == 2 and not envelope["ok"] and envelope["error"]["text"] == line, envelope
    return envelope


# ---------------------------------------------------------------------------- the server and its tools


def test_initialize_and_list_the_tools(server: Client) -> None:
    assert server.initialized is not None
    assert server.initialized.server_info.name == "planstate"
    tools = {tool.name: tool for tool in server.list_tools().tools}
    assert set(tools) == {
        "resume", "status", "get", "set", "position", "task", "next_action", "context", "phase", "lifecycle",
        "decision", "blocker", "session", "initiative", "check", "diff", "schema",
    }  # fmt: skip
    read_only = {name for name, tool in tools.items() if tool.annotations and tool.annotations.read_only_hint}
    assert read_only == {"status", "get", "diff", "schema"}
    destructive = {name for name, tool in tools.items() if tool.annotations and tool.annotations.destructive_hint}
    assert destructive == {"set", "phase", "lifecycle"}
    for tool in tools.values():
        assert tool.input_schema["type"] == "object"
        assert {"dir", "initiative"} <= set(tool.input_schema["properties"])


def test_the_tool_list_fits_its_budget_and_docs_say_what_it_costs(server: Client) -> None:
    """What a client gives its model of each tool (name, description, input schema; not the output schema, which
    the client checks answers against) stays within budget, and docs/mcp.md says what each part costs."""
    listed = server.list_tools().model_dump(mode="json", by_alias=True, exclude_none=True)
    outputs = sum(len(json.dumps(tool.pop("outputSchema"), ensure_ascii=False)) for tool in listed["tools"])
    size = len(json.dumps(listed, ensure_ascii=False))
    assert size <= BUDGET, f"tools/list without the output schemas is {size} characters; the budget is {BUDGET}"
    doc = (Path(__file__).resolve().parent.parent / "docs" / "mcp.md").read_text(encoding="utf-8")
    assert f"is {size:,} characters, about {size / 4000:.1f}k tokens" in doc
    assert f"output schemas add {outputs:,} characters" in doc
    sizes = {tool["name"]: len(json.dumps(tool, ensure_ascii=False)) for tool in listed["tools"]}
    assert dict(re.findall(r"\| `(\w+)` \| ([\d,]+) ", doc)) == {name: f"{n:,}" for name, n in sizes.items()}
    assert server.initialized is not None and server.initialized.instructions is not None
    assert f"`instructions` add {len(server.initialized.instructions)} characters" in doc


@pytest.fixture(scope="module")
def declared(server: Client) -> dict[str, dict[str, Any]]:
    """The output schema each tool declares in tools/list, by tool."""
    schemas = {tool.name: tool.output_schema for tool in server.list_tools().tools}
    assert all(schema is not None for schema in schemas.values()), [n for n, s in schemas.items() if s is None]
    return {name: schema for name, schema in schemas.items() if schema is not None}


def conforms(result: CallToolResult, tool: str, declared: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The structured content of a call, after checking it against the output schema its tool declares."""
    import jsonschema

    assert result.structured_content is not None, result.content
    jsonschema.Draft202012Validator(declared[tool]).validate(result.structured_content)
    return result.structured_content


def _every_command(call: Any, initiative: str) -> None:
    """One call of every command of every tool, in an order the lifecycle allows; `call(tool, **arguments)`
    returns the envelope's `data`."""
    call("resume")
    call("resume", budget=2000)
    call("status")
    call("get", path="title")
    call("get")
    call("schema", kind="session")
    call("schema")
    call("set", values={"title": "Every command"})
    call("set", action="append", path="resume_context.files_modified", value="a.py")
    call("set", action="unset", path="position.wave")
    call("position")
    call("position", wave=2, task="Write")
    call("task", action="start", text="Write the schema", plan=1)
    call("task", action="done", next="Review it")
    call("next_action")
    call("next_action", text="Finish the design")
    call("context")
    call("context", files=["b.py"], questions=["Which index?"])
    made = call("decision", action="add", context="C", decision="D", reason="R", status="proposed")
    call("decision", action="accept", id=made["id"])
    other = call("decision", action="add", context="C", decision="E", reason="R", status="proposed")
    call("decision", action="reject", id=other["id"], reason="No")
    newer = call("decision", action="add", context="C", decision="F", reason="R")
    call("decision", action="supersede", id=made["id"], new=newer["id"])
    call("decision", action="list", all=True)
    call("decision", action="show", id=made["id"])
    blocker = call("blocker", action="add", description="Keys", affects=["phase 2"])
    call("blocker", action="activate", id=blocker["id"], reason="Next")
    call("blocker", action="bypass", id=blocker["id"], workaround="Sandbox")
    call("blocker", action="resolve", id=blocker["id"], resolution="Came")
    call("blocker", action="list", all=True)
    call("blocker", action="show", id=blocker["id"])
    session = call("session", action="start", agent="claude", working_on="schemas")
    call("session", action="heartbeat", id=session["id"])
    call("session", action="end", id=session["id"], completed=["schemas"])
    call("session", action="list")
    call("session", action="show", id=session["id"])
    call("session", action="reap", dry_run=True)
    call("phase", action="complete", number=1, evidence={"tests": "1/1"})
    call("phase", action="fail", number=2, reason="Red")
    call("phase", action="retry", number=2)
    call("phase", action="fail", number=2, reason="Red again")
    call("phase", action="start", number=3)
    call("phase", action="add", name="Docs", after=3)
    call("phase", action="add", name="Extra", after=4)
    call("phase", action="rename", number=5, name="More")
    call("phase", action="move", number=5, to=4)
    call("phase", action="remove", number=4)
    call("phase", action="skip", number=3, reason="By hand")
    for verb in ("pause", "suspend", "abandon"):  # each left again by resume
        call("lifecycle", action=verb, reason=verb)
        call("resume", activate=True)
    call("lifecycle", action="error", reason="Disk full", details={"disk": "sda"})
    call("lifecycle", action="retry")
    call("lifecycle", action="fail", reason="Gave up")
    call("lifecycle", action="retry")
    call("lifecycle", action="archive")
    call("lifecycle", action="reopen")
    call("initiative", action="new", slug="side", title="Side")  # no phases: it can be completed
    call("initiative", action="switch", slug="side")
    call("lifecycle", action="complete")
    call("lifecycle", action="reopen", initiative="side")  # completed, it is no longer the active one
    call("initiative", action="switch", slug=initiative)
    call("initiative", action="list", all=True)
    call("check", fix=True, diff=True)
    call("diff")


def test_every_answer_matches_the_output_schema_its_tool_declares(
    server: Client, declared: dict[str, dict[str, Any]], project: Path, tmp_path: Path
) -> None:
    """Each tool declares the envelope of its answers, with the `data` schema of each command it runs; every
    command of every tool answers as declared (jsonschema, as a client checks), refusals included."""
    import jsonschema

    assert set(declared) == set(TOOL_NAMES)
    new_repo(project)
    commit_all(project, "start")
    seen: dict[str, set[str]] = {}

    def call(tool: str, /, **arguments: Any) -> Any:
        result = server.call(tool, dir=str(project), **arguments)
        assert not result.is_error, result.content
        answered = conforms(result, tool, declared)
        seen.setdefault(tool, set()).add(answered["command"])
        return answered["data"]

    _every_command(call, "demo")
    fresh = tmp_path / "fresh"
    made = server.call("initiative", action="init", dir=str(fresh), title="Fresh")
    seen["initiative"].add(conforms(made, "initiative", declared)["command"])
    for tool, schema in declared.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        named = {branch["properties"]["command"]["const"] for branch in schema["anyOf"] if "properties" in branch}
        assert seen[tool] == named, tool  # every command a schema names was answered, and no other
    refused = server.call("decision", dir=str(project), action="show", id="dec-nope")
    assert conforms(refused, "decision", declared)["error"]["type"] == "UsageError"


def test_a_whole_initiative_through_the_tools(server: Client, project: Path) -> None:
    new_repo(project)
    commit_all(project, "start")
    d = str(project)

    def call(tool: str, /, **arguments: Any) -> Any:
        return data(server.call(tool, dir=d, **arguments), project)

    brief = server.call("resume", dir=d)
    assert answer(brief, project)["data"]["initiative"] == "demo"
    assert "Demo" in brief.content[0].text  # type: ignore[union-attr]
    assert call("status")["current_phase"]["number"] == 1
    assert call("get", path="phases.1.name") == "Design"
    assert call("schema", kind="decision")["title"] == "planstate decision"
    session = call("session", action="start", agent="claude", working_on="the schema")
    assert session["agent"] == "claude" and session["heartbeat"]
    assert call("session", action="heartbeat", id=session["id"])["id"] == session["id"]
    call("task", action="start", text="Write the schema", plan=1)
    call("context", files=["schema.sql"], questions=["Which index?"])
    assert call("context")["files_modified"] == ["schema.sql"]
    call("context", answered=["Which index?"])
    call("position", wave=2)
    assert call("position")["wave"] == 2
    call("set", values={"title": "Demo two"})
    call("set", action="append", path="resume_context.key_implementations", value="schema.sql: tables")
    call("set", action="unset", path="position.wave")
    call("task", action="done", next="Review the schema")
    assert call("get", path="position.task") == "Review the schema"
    assert call("next_action") == "Start phase 1: Design"
    call("next_action", text="Finish the design")
    first = call(
        "decision", action="add", context="Store", decision="Postgres", reason="Known", alternatives=["SQLite"]
    )
    proposed = call("decision", action="add", context="Queue", decision="SQS", reason="Managed", status="proposed")
    assert call("decision", action="accept", id=proposed["id"])["status"] == "accepted"
    later = call("decision", action="add", context="Store", decision="Postgres 16", reason="JSON")
    assert call("decision", action="supersede", id=first["id"], new=later["id"])["superseded"]["id"] == first["id"]
    listed = [r["id"] for r in call("decision", action="list", all=True)["decisions"]]
    assert set(listed) == {first["id"], proposed["id"], later["id"]}
    newest = answer(server.call("decision", dir=d, action="list", all=True, limit=1), project)
    assert [r["id"] for r in newest["data"]["decisions"]] == listed[-1:]
    assert newest["warnings"] == ["… 2 more: the newest 1 of 3 decisions are shown (use limit=0 for all)"]
    assert (newest["data"]["total"], newest["data"]["more"]) == (3, 2)
    assert "Postgres 16" in call("decision", action="show", id=later["id"])["body"]
    blocker = call("blocker", action="add", description="Waiting for keys", affects=["phase 2"])
    call("blocker", action="activate", id=blocker["id"], reason="Phase 2 is next")
    call("blocker", action="bypass", id=blocker["id"], workaround="Sandbox keys")
    assert call("blocker", action="resolve", id=blocker["id"], resolution="Keys came")["status"] == "resolved"
    assert call("blocker", action="list", all=True)["blockers"][0]["id"] == blocker["id"]
    assert call("blocker", action="show", id=blocker["id"])["status"] == "resolved"
    done = call("phase", action="complete", number=1, evidence={"tests": "41/41"}, next_action="Start building")
    assert done["to"] == "completed" and done["current_phase_number"] == 2
    call("phase", action="fail", number=2, reason="Red build")
    call("phase", action="retry", number=2)
    call("phase", action="add", name="Docs", after=3)
    call("phase", action="rename", number=4, name="Write the docs")
    call("phase", action="move", number=4, to=3)
    call("phase", action="remove", number=3)
    call("phase", action="skip", number=2, reason="Done by hand")
    assert call("lifecycle", action="pause", reason="Lunch", context="Shipping")["to"] == "paused"
    resumed = answer(server.call("resume", dir=d, activate=True, reason="Back"), project)["data"]
    assert resumed["activated"]["to"] == "active"
    call("lifecycle", action="error", reason="Disk full", details={"disk": "/dev/sda"})
    call("lifecycle", action="retry")
    side = call("initiative", action="new", slug="side", title="Side quest", phases=["One"])
    assert side["initiative"] == "side"
    assert call("initiative", action="new", title="Spare Parts")["initiative"] == "spare-parts"  # slug from the title
    assert call("initiative", action="switch", slug="side")["initiative"] == "side"
    assert call("get", path="title", initiative="demo") == "Demo two"
    call("initiative", action="switch", slug="demo")
    assert {i["initiative"] for i in call("initiative", action="list")["initiatives"]} == {
        "demo",
        "side",
        "spare-parts",
    }
    ended = call("session", action="end", id=session["id"], completed=["the schema"], handoff_reason="Done")
    assert ended["status"] == "ended"
    assert call("session", action="list")["sessions"][0]["id"] == session["id"]
    assert call("session", action="show", id=session["id"])["completed"] == ["the schema"]
    assert call("session", action="reap", dry_run=True)["dry_run"] is True
    changes = call("diff")["initiatives"]
    assert {c["initiative"] for c in changes} == {"demo", "side", "spare-parts"}
    assert call("check", fix=True)["error_count"] == 0
    # the files are the truth: what the tools said is what is on disk, and the CLI reads it back
    assert front(project)["title"] == "Demo two"
    assert front(project)["next_action"] == "Start building"
    assert len(list((project / ".planning" / "decisions").glob("*.md"))) == 3
    assert (project / ".planning" / "initiatives" / "side" / "STATE.md").is_file()
    assert forkserver.run(["check"], cwd=project, env=_env(), timeout=60).returncode == 0


# ---------------------------------------------------------------------------- a tool writes what the CLI writes

SAME = {
    "set": ({"values": {"next_action": "Ship it"}}, ("set", "next_action", "Ship it")),
    "append": (
        {"action": "append", "path": "resume_context.files_modified", "value": "a.py"},
        ("append", "resume_context.files_modified", "a.py"),
    ),
    "unset": ({"action": "unset", "path": "position.plan"}, ("unset", "position.plan")),
    "position": (
        {"task": "Write", "wave": 2, "plan": "3"},
        ("position", "--task", "Write", "--wave", "2", "--plan", "3"),
    ),
    "task start": ({"action": "start", "text": "T", "plan": 1}, ("task", "start", "T", "--plan", "1")),
    "next": ({"text": "N"}, ("next", "N")),
    "context": ({"files": ["a.py"], "questions": ["Why?"]}, ("context", "--file", "a.py", "--question", "Why?")),
    "phase complete": (
        {"action": "complete", "number": 1, "evidence": {"tests": "41/41"}},
        ("phase", "complete", "1", "--evidence", "tests=41/41"),
    ),
    "phase add": ({"action": "add", "name": "Docs", "after": 2}, ("phase", "add", "Docs", "--after", "2")),
    "pause": ({"action": "pause", "reason": "lunch"}, ("pause", "--reason", "lunch")),
    "decision add": (
        {"action": "add", "context": "C", "decision": "D", "reason": "R", "alternatives": ["X"]},
        ("decision", "add", "--context", "C", "--decision", "D", "--reason", "R", "--alternative", "X"),
    ),
    "blocker add": (
        {"action": "add", "description": "Keys", "affects": ["phase 2"]},
        ("blocker", "add", "--description", "Keys", "--affects", "phase 2"),
    ),
    "session start": ({"action": "start", "agent": "claude"}, ("session", "start", "--agent", "claude")),
    "initiative new": (
        {"action": "new", "slug": "side", "title": "Side"},
        ("initiative", "new", "side", "--title", "Side"),
    ),
}
TOOL_OF = {
    "set": "set", "append": "set", "unset": "set", "position": "position", "task start": "task", "next": "next_action",
    "context": "context", "phase complete": "phase", "phase add": "phase", "pause": "lifecycle",
    "decision add": "decision", "blocker add": "blocker", "session start": "session", "initiative new": "initiative",
}  # fmt: skip


def _ids(value: Any) -> Any:
    return json.loads(RECORD_ID.sub(lambda m: f"{m.group(1)}-ID", json.dumps(value)))


@pytest.mark.parametrize("name", sorted(SAME))
def test_a_tool_writes_the_bytes_the_command_writes(name: str, server: Client, project: Path, tmp_path: Path) -> None:
    arguments, command = SAME[name]
    forkserver.run(["position", "--plan", "1"], cwd=project, env=_env(), timeout=60)  # something for unset
    twin = tmp_path / "twin"
    shutil.copytree(project, twin)
    by_cli = forkserver.run([*command, "--json"], cwd=twin, env=_env(), timeout=60)
    assert by_cli.returncode == 0, by_cli.stderr
    by_tool = server.call(TOOL_OF[name], dir=str(project), **arguments)
    envelope = answer(by_tool, project)
    assert _tree(project) == _tree(twin)
    said = json.loads(by_cli.stdout)
    assert envelope["command"] == said["command"] == name
    assert _ids(envelope["data"]) == _ids(said["data"])
    assert envelope["warnings"] == said["warnings"]


@pytest.mark.parametrize("exists", [True, False], ids=["folder", "new-folder"])
def test_init_makes_the_workspace_the_command_makes(server: Client, tmp_path: Path, exists: bool) -> None:
    """In a folder that does not exist yet, both make it (and the parents it lacks), as `git init DIR` does."""
    by_tool, by_cli = tmp_path / "tool" / "shop", tmp_path / "cli" / "shop"
    by_cli.parent.mkdir()
    if exists:
        by_tool.mkdir(parents=True)
        by_cli.mkdir()
    made = answer(server.call("initiative", action="init", dir=str(by_tool), title="Shop", phases=["A", "B"]), by_tool)
    command = ["init", "--dir", "shop", "--title", "Shop", "--phase", "A", "--phase", "B", "--json"]
    said = json.loads(forkserver.run(command, cwd=by_cli.parent, env=_env()).stdout)
    assert _tree(by_tool) == _tree(by_cli)
    assert made["command"] == said["command"] == "init"
    assert made["data"] == said["data"] == {"path": ".planning/", "initiative": "shop", "title": "Shop"}
    assert data(server.call("status", dir=str(by_tool)), by_tool)["phases_total"] == 2


# ---------------------------------------------------------------------------- bad input: one line, nothing written

BAD: list[tuple[str, dict[str, Any], tuple[str, ...]]] = [
    ("get", {"path": 3}, ("path must be text, not 3",)),
    ("get", {"path": "nxt_action"}, ("no value at nxt_action; did you mean 'next_action'?",)),
    ("get", {"pth": "title"}, ("unknown argument 'pth'; did you mean 'path'?",)),
    ("get", {"path": ""}, ("empty path",)),
    ("status", {"dir": "/nonexistent/planstate"}, ("no .planning/ workspace at /nonexistent/planstate",)),
    ("resume", {"budget": 10}, ("budget must be at least",)),
    ("set", {"values": "title=x"}, ("values must be an object",)),
    ("set", {"values": {"phases.1.status": "done"}}, ("phases.1.status",)),
    ("set", {"values": {"next_action": 3}}, ("next_action: expected a string",)),
    ("set", {"action": "unset", "path": "title"}, ("title",)),
    ("set", {"action": "remove"}, ("action 'remove' is not one of: values, append, unset",)),
    ("position", {"phase": 9}, ("position.phase: 9 is not a phase",)),
    ("position", {"wave": "two"}, ("wave must be a whole number or null",)),
    ("task", {"action": "start"}, ("text is required for action 'start'",)),
    ("next_action", {"text": ["a"]}, ("text must be text",)),
    ("context", {"files": "a.py"}, ("files must be a list",)),
    ("phase", {"action": "retry", "number": 1}, ("retry",)),
    ("phase", {"action": "start", "number": 7}, ("7",)),
    ("phase", {"action": "complete", "number": 1, "checkpoint": "maybe"}, ("checkpoint 'maybe' is not one of",)),
    ("lifecycle", {"action": "complete"}, ("complete",)),
    ("lifecycle", {"action": "resume"}, ("action 'resume' is not one of",)),
    ("lifecycle", {"action": "fail", "context": "x"}, ("context is for pause and suspend, not fail",)),
    ("decision", {"action": "add", "context": "c", "decision": "d"}, ("reason is required",)),
    ("decision", {"action": "show", "id": "dec-nope"}, ("no decision with id 'dec-nope'",)),
    ("decision", {"action": "add", "context": "c", "decision": "d", "reason": "r", "status": "done"}, ("status",)),
    ("blocker", {"action": "add", "description": "x", "affects": ["phase 9"]}, ("phase 9",)),
    ("blocker", {"action": "resolve", "id": "blk-nope", "resolution": "r"}, ("no blocker with id 'blk-nope'",)),
    ("session", {"action": "end", "id": "ses-nope"}, ("no session with id 'ses-nope'",)),
    ("session", {"action": "start", "exclusiv": True}, ("unknown argument 'exclusiv'; did you mean 'exclusive'?",)),
    ("session", {"action": "list", "since": "soonish"}, ("since 'soonish' is not a date",)),
    ("session", {"action": "list", "limit": -1}, ("limit must be 0 or more",)),
    ("initiative", {"action": "switch", "slug": "nope"}, ("nope",)),
    ("initiative", {"action": "new", "slug": "Bad Slug"}, ("Bad Slug",)),
    ("initiative", {"action": "new"}, ("needs a slug, or a title to make one from",)),
    ("initiative", {"action": "init"}, ("already exists; planstate init never overwrites a workspace",)),
    ("check", {"stale_after": "soon"}, ("stale_after",)),
    ("diff", {"rev1": "nope"}, ("git",)),
    ("schema", {"kind": "nope"}, ("kind 'nope' is not one of",)),
]


@pytest.mark.parametrize(("tool", "arguments", "words"), BAD, ids=[f"{t}-{i}" for i, (t, _a, _w) in enumerate(BAD)])
def test_bad_input_is_one_line_and_writes_nothing(
    tool: str,
    arguments: dict[str, Any],
    words: tuple[str, ...],
    server: Client,
    project: Path,
    declared: dict[str, dict[str, Any]],
) -> None:
    before = _tree(project)
    result = server.call(tool, **{"dir": str(project), **arguments})
    refusal(result, *words)
    conforms(result, tool, declared)  # a refusal is an answer its output schema describes too
    assert _tree(project) == before


def test_every_tool_has_a_bad_input_case() -> None:
    assert {tool for tool, _arguments, _words in BAD} == {
        "resume", "status", "get", "set", "position", "task", "next_action", "context", "phase", "lifecycle",
        "decision", "blocker", "session", "initiative", "check", "diff", "schema",
    }  # fmt: skip


def test_a_bug_inside_a_tool_is_one_line_naming_its_crash_log_exit_4(project: Path, broken_status: Path) -> None:
    """As on the command line: an exception nothing expected is `isError`, exit 4, one line naming the crash log,
    which holds the call and the traceback. A bug cannot be made real on purpose, so the server runs in this process
    with one method broken (the seam tests/test_cli_main.py uses for the CLI's crash log)."""
    from planstate.mcp.catalog import TOOLS
    from planstate.mcp.server import Server, Settings

    logs = broken_status
    result = Server(Settings()).call(TOOLS["status"], {"dir": str(project)})
    assert result.is_error
    (content,) = result.content
    line = content.text  # type: ignore[union-attr]
    assert "\n" not in line and line.startswith("planstate: internal error: RuntimeError: status went wrong"), line
    envelope = result.structured_content
    assert envelope is not None
    validate(envelope, "envelope")
    assert envelope["exit"] == 4 and not envelope["ok"] and envelope["error"]["text"] == line
    found = re.search(r"\(traceback: (.+)\)$", line)
    assert found, line
    log = Path(found.group(1))
    assert log.parent == logs
    text = log.read_text(encoding="utf-8")
    assert "command line: planstate mcp status " in text and "Traceback (most recent call last)" in text
    assert "in broken\n" in text


def test_a_folder_name_longer_than_the_system_allows_is_refused(server: Client, tmp_path: Path) -> None:
    refusal(server.call("get", dir="x" * 5000, path="title"), "no .planning/ workspace at ", "(File name too long)")


def test_without_a_workspace_the_error_names_the_tool_that_makes_one(tmp_path: Path) -> None:
    """A server started where no workspace is (a client starting it in `/` or the home folder) says how to make
    one in the tools' words, and `initiative` with action=init makes it, in a folder made for it if need be."""
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    client = Client([], cwd=nowhere, env=server_env(PLANSTATE_NOW=NOW, PLANSTATE_ACTOR=ACTOR))
    try:
        envelope = refusal(
            client.call("status"),
            f"no .planning/ folder in {nowhere} or any parent folder; make one with the initiative tool "
            "(action=init, dir=PATH) or pass dir=PATH (or set PLANSTATE_DIR)",
        )
        assert "workspace" not in envelope and "planstate init" not in envelope["error"]["text"]
        new = tmp_path / "src" / "shop"
        refusal(
            client.call("status", dir=str(new)),
            f"no .planning/ workspace at {new} (no such folder); pass the .planning/ folder or the project folder "
            "that holds it, or make one with the initiative tool (action=init, dir=PATH)",
        )
        assert not (tmp_path / "src").exists()
        made = answer(client.call("initiative", action="init", dir=str(new), title="Shop"), new)
        assert made["data"] == {"path": ".planning/", "initiative": "shop", "title": "Shop"}
        assert data(client.call("status", dir=str(new)), new)["title"] == "Shop"
    finally:
        client.close()


def test_errors_name_the_tools_arguments(server: Client, project: Path) -> None:
    for agent in ("a", "b"):
        forkserver.run(["session", "start", "--agent", agent], cwd=project, env=_env(), timeout=60)
    refusal(server.call("session", dir=str(project), action="heartbeat"), "; name one with id=ID or PLANSTATE_SESSION")


def test_null_is_an_argument_left_out_except_where_it_clears_a_field(server: Client, project: Path) -> None:
    d = str(project)
    assert data(server.call("get", dir=d, path="title", initiative=None), project) == "Demo"
    data(server.call("position", dir=d, task="Write", wave=2), project)
    data(server.call("position", dir=d, task=None, status=None), project)
    assert data(server.call("position", dir=d), project)["task"] is None
    assert data(server.call("position", dir=d), project)["wave"] == 2


def test_a_write_sees_what_changed_since_the_servers_last_call(server: Client, project: Path) -> None:
    """The files are the truth between calls: a CLI write, and a hand edit of the same size with its mtime set
    back (only the ctime shows it), are both kept by the server's next write."""
    import os

    d = str(project)
    data(server.call("set", dir=d, values={"next_action": "First from MCP"}), project)
    forkserver.run(["set", "title", "Done by the CLI"], cwd=project, env=_env(), timeout=60)
    data(server.call("set", dir=d, values={"next_action": "Second from MCP"}), project)
    assert front(project)["title"] == "Done by the CLI" and front(project)["next_action"] == "Second from MCP"
    path = state_file(project)
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    assert text.count("Done by the CLI") == 1
    path.write_text(text.replace("Done by the CLI", "Done by a hand."), encoding="utf-8")  # the same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    data(server.call("set", dir=d, values={"next_action": "Third from MCP"}), project)
    assert front(project)["title"] == "Done by a hand." and front(project)["next_action"] == "Third from MCP"
    assert data(server.call("get", dir=d, path="title"), project) == "Done by a hand."


def test_a_call_without_dir_acts_on_the_servers_workspace(server: Client, home: Path) -> None:
    assert data(server.call("get", path="title"), home) == "Demo"


# ---------------------------------------------------------------------------- resources and sessions


def test_every_resource_is_the_file_or_answer_a_tool_gives(server: Client, home: Path) -> None:
    assert set(server.resources()) == {
        "planstate://state", "planstate://brief", "planstate://decision/{id}", "planstate://blocker/{id}",
        "planstate://session/{id}", "planstate://schema/{kind}",
    }  # fmt: skip
    assert server.read("planstate://state") == state_file(home).read_text(encoding="utf-8")
    assert data(server.call("get"), home)["title"] == "Demo"  # the same front matter, as a tool answers
    assert server.read("planstate://brief") == server.call("resume").content[0].text.split("\n", 1)[1]  # type: ignore[union-attr]
    made = data(server.call("decision", action="add", context="C", decision="D", reason="R", request_id="res"), home)
    assert server.read(f"planstate://decision/{made['id']}") == (home / made["path"]).read_text(encoding="utf-8")
    schema = json.loads(server.read("planstate://schema/blocker"))
    assert schema == data(server.call("schema", kind="blocker"), home)


@pytest.mark.parametrize(
    ("uri", "words"),
    [
        ("planstate://decision/dec-nope", "planstate: no decision with id 'dec-nope' in .planning/decisions/"),
        ("planstate://blocker/blk-nope", "planstate: no blocker with id 'blk-nope' in .planning/blockers/"),
        ("planstate://session/ses-nope", "planstate: no session with id 'ses-nope' in .planning/sessions/"),
        ("planstate://schema/decisoin", "planstate: no file kind 'decisoin'; did you mean 'decision'?; kinds: "),
        ("planstate://widget/w-1", "Unknown resource: planstate://widget/w-1"),
    ],
    ids=["decision", "blocker", "session", "schema", "unknown-kind"],
)
def test_a_resource_that_is_not_there_is_the_protocols_resource_not_found(
    server: Client, home: Path, uri: str, words: str
) -> None:
    """-32602 with the uri as `data` (the code SEP-2164 gives "resource not found", the SDK's ResourceNotFoundError;
    clients also accept the -32002 of earlier revisions), not -32603, an internal error."""
    from mcp.shared.exceptions import MCPError
    from mcp.types import INVALID_PARAMS

    with pytest.raises(MCPError) as raised:
        server.read(uri)
    assert (raised.value.code, raised.value.data) == (INVALID_PARAMS, {"uri": uri})
    assert raised.value.message.startswith(words) and "\n" not in raised.value.message


def test_an_unknown_tool_names_the_tool_it_most_likely_means(server: Client) -> None:
    envelope = refusal(server.call("stauts"), "planstate: unknown tool 'stauts'; did you mean 'status'?")
    assert envelope["command"] is None and "workspace" not in envelope
    assert refusal(server.call("frobnicate"))["error"]["text"] == "planstate: unknown tool 'frobnicate'"


def test_the_server_heartbeats_the_session_it_started_on_every_call(server: Client, home: Path) -> None:
    beats = home / ".planning" / ".local" / "heartbeats"
    started = data(server.call("session", action="start", agent="claude", request_id="beat"), home)
    heartbeat = beats / started["id"]
    heartbeat.unlink()
    data(server.call("status"), home)
    assert heartbeat.is_file()  # the call was the session's sign of life
    data(server.call("session", action="end", id=started["id"]), home)
    heartbeat.unlink(missing_ok=True)
    data(server.call("status"), home)
    assert not heartbeat.exists()  # ended: no longer beaten
    again = data(server.call("session", action="start", agent="claude", request_id="beat-2"), home)
    ended = forkserver.run(["session", "end", "--session", again["id"]], cwd=home, env=_env(), timeout=60)
    assert ended.returncode == 0, ended.stderr
    warned = answer(server.call("status"), home)["warnings"]
    assert warned == [f"session {again['id']} is no longer heartbeated by this server: " + warned[0].split(": ", 1)[1]]
    assert f"session {again['id']} is ended" in warned[0]
    assert answer(server.call("status"), home)["warnings"] == []


# ---------------------------------------------------------------------------- retries do not duplicate


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("decision", {"action": "add", "context": "C", "decision": "D", "reason": "R"}),
        ("blocker", {"action": "add", "description": "Keys"}),
        ("session", {"action": "start", "agent": "claude"}),
    ],
)
def test_a_retried_create_answers_with_the_record_already_made(
    tool: str, arguments: dict[str, Any], server: Client, project: Path
) -> None:
    folder = project / ".planning" / f"{tool}s"
    first = data(server.call(tool, dir=str(project), request_id="req-1", **arguments), project)
    again = answer(server.call(tool, dir=str(project), request_id="req-1", **arguments), project)
    assert again["data"]["id"] == first["id"] and again["data"]["request_id"] == "req-1"
    assert again["warnings"] == [
        f"request_id 'req-1' already made {tool} {first['id']}; answering with it, nothing written"
    ]
    assert len(list(folder.glob("*.md"))) == 1
    other = data(server.call(tool, dir=str(project), request_id="req-2", **arguments), project)
    assert other["id"] != first["id"]
    assert len(list(folder.glob("*.md"))) == 2


def test_a_retry_key_is_looked_for_only_among_the_last_days_records(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from planstate.core import ids
    from planstate.workspace import Workspace

    monkeypatch.setenv("PLANSTATE_NOW", NOW)
    ws = Workspace.find(project, actor=ACTOR)
    first = ws.decision.add(context="C", decision="D", reason="R", request_id="k")
    assert ws.decision.add(context="C", decision="D", reason="R", request_id="k").id == first.id
    old = ids.new_id("decision", time.time() - 2 * 24 * 3600)  # real clock: ids carry it; two days ago
    first.path.rename(first.path.with_name(first.path.name.replace(first.id, old)))
    renamed = next(first.path.parent.glob(f"{old}-*.md"))
    renamed.write_text(renamed.read_text(encoding="utf-8").replace(first.id, old), encoding="utf-8")
    again = ws.decision.add(context="C", decision="D", reason="R", request_id="k")
    assert again.id not in (first.id, old) and not again.warnings
    assert len(list(first.path.parent.glob("*.md"))) == 2


def test_a_write_that_cannot_take_the_lock_says_to_call_again(project: Path) -> None:
    from planstate.mcp.catalog import TOOLS
    from planstate.mcp.server import Server, Settings
    from planstate.workspace import Workspace

    before = _tree(project)
    with Workspace.find(project).transaction():  # holds the workspace lock while the tool waits for it
        result = Server(Settings(dir=str(project), lock_timeout=0.2)).call(TOOLS["next_action"], {"text": "Later"})
    assert result.is_error and result.structured_content is not None
    assert result.structured_content["exit"] == 3 and result.structured_content["error"]["type"] == "LockTimeout"
    line = result.content[0].text  # type: ignore[union-attr]
    assert line.startswith("planstate: ") and line.endswith(
        "(call again, or start the server as `planstate mcp --lock-timeout SECONDS`)"
    )
    assert _tree(project) == before


# ---------------------------------------------------------------------------- four servers and the CLI at once


def test_four_servers_and_the_cli_writing_at_once_lose_nothing(project: Path, tmp_path: Path, run_all: Any) -> None:
    """Each server finds the workspace another way (its --dir, PLANSTATE_DIR, its working folder, the call's dir),
    and each names the same workspace in every answer."""
    from concurrent.futures import ThreadPoolExecutor

    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    other = tmp_path / "other"  # a workspace the call's `dir` wins over
    other.mkdir()
    forkserver.run(["init", "--title", "Other"], cwd=other, env=_env(), timeout=60)
    base = server_env(PLANSTATE_ACTOR=ACTOR)
    setups = [
        (["--dir", str(project), "--lock-timeout", "600"], nowhere, base, {}),
        (["--lock-timeout", "600"], nowhere, {**base, "PLANSTATE_DIR": str(project)}, {}),
        (["--lock-timeout", "600"], project / ".planning" / "decisions", base, {}),
        (["--dir", str(other), "--lock-timeout", "600"], nowhere, base, {"dir": str(project)}),
    ]
    clients = [Client(args, cwd=cwd, env=env) for args, cwd, env, _call in setups]
    writes = 3
    try:

        def write(index: int) -> list[CallToolResult]:
            client, extra = clients[index], setups[index][3]
            out = []
            for n in range(writes):
                out.append(client.call("context", files=[f"s{index}-{n}.py"], **extra))
                out.append(
                    client.call("decision", action="add", context="c", decision=f"s{index}-{n}", reason="r", **extra)
                )
            return out

        with ThreadPoolExecutor(max_workers=5) as pool:
            futures = [pool.submit(write, i) for i in range(len(clients))]
            cli = run_all(
                [("context", "--file", f"cli-{n}.py") for n in range(writes)]
                + [
                    ("decision", "add", "--context", "c", "--decision", f"cli-{n}", "--reason", "r")
                    for n in range(writes)
                ],
                cwd=project,
            )
            results = [result for future in futures for result in future.result()]
    finally:
        for client in clients:
            client.close()
    assert all(done.returncode == 0 for done in cli), [done.stderr for done in cli if done.returncode]
    for result in results:
        answer(result, project)
    files = json.loads(
        forkserver.run(["get", "resume_context.files_modified", "--json"], cwd=project, env=_env()).stdout
    )
    expected = {f"s{i}-{n}.py" for i in range(4) for n in range(writes)} | {f"cli-{n}.py" for n in range(writes)}
    assert set(files["data"]) == expected
    assert len(list((project / ".planning" / "decisions").glob("*.md"))) == 5 * writes
    assert not list((other / ".planning" / "decisions").glob("*.md"))


def test_calls_in_the_servers_worker_threads_lose_nothing(project: Path) -> None:
    """The SDK runs each call in a worker thread: the workspace lock orders them as it orders processes."""
    from concurrent.futures import ThreadPoolExecutor

    from planstate.mcp.catalog import TOOLS
    from planstate.mcp.server import Server, Settings

    server = Server(Settings(dir=str(project), lock_timeout=600))
    names = [f"t{i}-{n}.py" for i in range(4) for n in range(4)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda name: server.call(TOOLS["context"], {"files": [name]}), names))
    assert not [r.content for r in results if r.is_error]
    assert sorted(front(project)["resume_context"]["files_modified"]) == sorted(names)


# ---------------------------------------------------------------------------- the command line's side


def test_without_the_extra_the_command_says_how_to_install_it(project: Path) -> None:
    code = "import sys\nsys.modules['mcp'] = None\nfrom planstate.cli.main import main\nsys.exit(main(['mcp']))\n"
    done = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == "planstate: the MCP server needs the mcp extra: pip install 'planstate[mcp]'\n"


def test_other_commands_never_import_the_sdk(project: Path) -> None:
    code = (
        "import sys\nfrom planstate.cli.main import main\ncode = main(['status'])\n"
        "print([m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'planstate.mcp', 'pydantic'))], code)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines()[-1] == "[] 0"
