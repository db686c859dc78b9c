"""A new record's front matter is written from its data and never parsed on the way: reading the file back round trip
gives exactly that data, whatever people typed; and a record write renders STATE.md's regions without a YAML parse."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import Run, exits

from planstate import Workspace
from planstate.text.document import Document
from planstate.text.plaindata import same

# Text YAML reads as something else unless quoted, or that needs a block scalar, an escape or care with spaces.
TRICKY = [
    "yes",
    "No",
    "null",
    "~",
    "1e3",
    "0x1F",
    "0o17",
    "12:30",
    "2026-11-22",
    "2026-11-22T08:00:00Z",
    "- item",
    "key: value",
    "# not a comment",
    "'single'",
    '"double"',
    "two\nlines",
    "ends with a newline\n",
    "trailing space ",
    " leading space",
    "tab\there",
    "é ✓ 中文",
    "{{ jinja }}",
    "[a, b]",
    "{a: b}",
    "@at",
    "`tick`",
    "*star",
    "&anchor",
    "!tag",
    "%directive",
    "| pipe",
    "> fold",
    "---",
    "...",
    "a: b # c",
    "\\back\\slash",
    "\x07bell",
]


def read_back(path: Path) -> object:
    """A file's front matter as the round-trip parser reads it."""
    return Document.from_bytes(path.read_bytes(), str(path)).data


def test_new_records_read_back_as_the_data_they_were_written_from(project: Path) -> None:
    ws = Workspace.find(project)
    made = []
    for index, text in enumerate(TRICKY):
        made.append(
            ws.decision.add(
                context=text, decision=f"{index}: {text}", reason=text, alternatives=[text, "plain"], title=text
            )
        )
        made.append(ws.blocker.add(description=f"{index}: {text}", affects=[text], title=text))
    made.append(ws.session.start(agent="agent", working_on=TRICKY[15]))
    for entry in made:
        assert same(read_back(entry.path), entry.data), entry.path
    assert ws.check().findings == []


def test_a_decision_add_renders_the_regions_without_parsing_yaml(run: Run, project: Path) -> None:
    """The new decision's front matter and STATE.md's come from their data and the cache: nothing imports a YAML
    parser (a fresh interpreter, so nothing is imported already)."""
    exits(run("decision", "add", "--context", "c", "--decision", "Warm the cache", "--reason", "r", cwd=project))
    code = (
        "import sys\n"
        "from planstate.cli.main import main\n"
        "sys.argv = ['planstate', 'decision', 'add', '--context', 'c', '--decision', 'Use jose', '--reason', 'r']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as done:\n"
        "    assert not done.code, done.code\n"
        "print(sorted(n for n in sys.modules if n.split('.')[0] in ('ruamel', 'yaml', 'jinja2')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert "Use jose" in (project / ".planning" / "STATE.md").read_text(encoding="utf-8")
    exits(run("check", cwd=project))


def test_a_transaction_lists_a_record_folder_once_and_a_new_record_is_named_against_that_listing(
    run: Run, project: Path
) -> None:
    ws = Workspace.find(project)
    folder = project / ".planning" / "decisions"
    with ws.ctx.transaction(state=False) as tx:
        listed = tx.names(folder, "decision")
        assert tx.names(folder, "decision") is listed  # scanned once: the region refresh at commit takes the same scan
        assert sorted(listed) == sorted(p.name for p in folder.iterdir())
        assert tx.names(folder / "missing", "decision") == []
    ws.decision.add(context="c", decision="Named against the listing", reason="r")
    exits(run("check", cwd=project))
    records = [p for p in folder.iterdir() if p.name.endswith(".md")]
    assert len(records) == len([name for name in listed if name.endswith(".md")]) + 1
