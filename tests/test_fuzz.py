"""A seeded fuzz of hand edits: STATE.md, a record or history.jsonl mutated at random, then every kind of command.

Each command must answer with exit 0, 1, 2 or 3; an error is one line on stderr that names the file it is
about; a command that fails changes no file; and no command hangs (the runner's timeout fails the test).
The count is fixed (SEEDS x MUTATIONS), so the run costs the same on every machine.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from conftest import Run

SEEDS = range(16)
COMMANDS = [
    ("status",),
    ("get", "title"),
    ("validate",),
    ("check",),
    ("resume",),
    ("decision", "list"),
    ("set", "next_action", "after the edit"),
    ("phase", "complete", "1"),
    ("decision", "add", "--context", "c", "--decision", "d", "--reason", "r"),
    ("render",),
]
FINDERS = ("validate", "check", "resume", "render")  # commands whose exit 1 means they found problems
SNIPPETS = [
    b": [",
    b"\t",
    b"&a x",
    b"*nope",
    b"!!python/object:os.system",
    b"---\n",
    b"...\n",
    b"\x00",
    b"\xef\xbb\xbf",
    b"\r\n",
    b"\xff\xfe",
    b"<<<<<<< ours\n",
    b"=======\n",
    b">>>>>>> theirs\n",
    b"{a: [b, {c: d}]}",
    b"2026-02-30T25:61:00Z",
    b"- - - -",
    b"x" * 5000,
    b"\xe2\x80\xae",
    b"<!-- planstate:begin next -->\n",
    b"<!-- planstate:end next -->\n",
    b'"unclosed',
    b"? complex key\n: value\n",
    b"null",
    b"-1",
    b"[]",
    b"{}",
]


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One random hand edit: a byte flipped, a line dropped or repeated, a snippet inserted, the file cut short."""
    if not data:
        return rng.choice(SNIPPETS)
    lines = data.splitlines(keepends=True)
    how = rng.randrange(6)
    if how == 0:
        at = rng.randrange(len(data))
        return data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1 :]
    if how == 1 and len(lines) > 1:
        del lines[rng.randrange(len(lines))]
        return b"".join(lines)
    if how == 2:
        at = rng.randrange(len(lines))
        lines.insert(at, lines[at])
        return b"".join(lines)
    if how == 3:
        return data[: rng.randrange(len(data))]
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice(SNIPPETS) + data[at:]


def snapshot(planning: Path) -> dict[str, bytes]:
    """Every committed planning file's bytes (not `.local/`)."""
    return {
        str(p.relative_to(planning)): p.read_bytes()
        for p in sorted(planning.rglob("*"))
        if p.is_file() and ".local" not in p.relative_to(planning).parts
    }


@pytest.mark.parametrize("seed", SEEDS)
def test_commands_survive_random_hand_edits(run: Run, project: Path, seed: int) -> None:
    rng = random.Random(seed)
    planning = project / ".planning"
    assert run("decision", "add", "--context", "c", "--decision", "d", "--reason", "r", cwd=project).returncode == 0
    record = next((planning / "decisions").glob("*.md"))
    target = rng.choice([planning / "STATE.md", record, planning / "history.jsonl"])
    data = target.read_bytes()
    for _ in range(rng.randrange(1, 4)):
        data = mutate(data, rng)
    target.write_bytes(data)
    for args in COMMANDS:
        before = snapshot(planning)
        done = run(*args, cwd=project, timeout=60)
        assert done.returncode in (0, 1, 2, 3), (args, done.returncode, done.stderr)
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr, (args, done.stderr)
        if done.returncode == 0:
            continue
        if done.returncode != 1 or args[0] not in FINDERS:  # exit 1 of these means findings, listed line by line
            errors = [line for line in done.stderr.splitlines() if not line.startswith("planstate: warning: ")]
            assert len(errors) == 1, (args, done.stderr)
            assert errors[0].startswith("planstate: .planning/"), (args, errors[0])
        if args[0] not in ("check", "render"):  # a finding is not a failed write: check/render may still repair
            assert snapshot(planning) == before, (args, os.fspath(target))
