"""No write produces a file planstate refuses to read, and the commands that shorten an over-long file still work."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Run, state_file

from planstate.core.errors import UsageError
from planstate.text.limits import MAX_FRONT_MATTER
from planstate.workspace import Workspace


def test_appends_stop_before_the_front_matter_limit(run: Run, project: Path) -> None:
    value = "x" * 120_000
    codes = []
    for i in range(10):
        before = state_file(project).read_bytes()
        done = run("append", "resume_context.open_questions", f"{i}{value}", cwd=project, timeout=120)
        codes.append(done.returncode)
        if done.returncode:
            assert done.stderr.startswith("planstate: .planning/STATE.md: the front matter would be ")
            assert f"planstate reads at most {MAX_FRONT_MATTER:,}, so nothing was written" in done.stderr
            assert state_file(project).read_bytes() == before
    assert codes[0] == 0 and 2 in codes and set(codes) == {0, 2}
    assert run("get", "title", cwd=project).returncode == 0  # every file written can be read back
    assert run("check", cwd=project).returncode == 0


def test_the_api_refuses_a_value_that_would_make_the_file_unreadable(project: Path) -> None:
    before = state_file(project).read_bytes()
    with pytest.raises(UsageError, match="the front matter would be"):
        Workspace.find(project).set_text({"next_action": "x" * 2_000_000})
    assert state_file(project).read_bytes() == before


def test_a_runaway_template_fails_its_region_not_the_file(run: Run, project: Path) -> None:
    override = project / ".planning" / "templates" / "regions" / "next.md.j2"
    override.parent.mkdir(parents=True)
    override.write_text("{{ 'x' * 20000000 }}\n")
    render = run("render", cwd=project, timeout=120)
    assert render.returncode == 1
    assert "template output is 20,000,001 characters; a region holds at most 2,097,152" in render.stderr
    done = run("set", "next_action", "q", cwd=project, timeout=120)
    assert done.returncode == 0 and "region next not rendered" in done.stderr
    assert state_file(project).stat().st_size < 100_000
    assert run("get", "next_action", cwd=project).stdout == "q\n"


def test_unset_and_set_shorten_a_file_over_the_limit(run: Run, project: Path) -> None:
    path = state_file(project)
    path.write_text(path.read_text().replace("open_questions: []\n", "open_questions:\n  - " + "y" * 1_100_000 + "\n"))
    refused = run("get", "title", cwd=project)
    assert refused.returncode == 2 and "planstate reads at most" in refused.stderr
    growing = run("set", "title", "Longer title", cwd=project, timeout=120)
    assert growing.returncode == 2 and "the front matter would be" in growing.stderr
    done = run("unset", "resume_context.open_questions.0", cwd=project, timeout=120)
    assert done.returncode == 0, done.stderr
    assert run("get", "title", cwd=project).stdout == "Demo\n"
    assert run("check", cwd=project).returncode == 0


def test_the_reader_refuses_exactly_the_characters_yaml_does() -> None:
    from ruamel.yaml.reader import Reader

    from planstate.text.limits import reader_class

    every = "".join(map(chr, range(0x110000)))
    ours = [m.start() for m in reader_class().NON_PRINTABLE.finditer(every)]
    assert ours == [m.start() for m in Reader.NON_PRINTABLE.finditer(every)]
    assert len(ours) == 2111  # C0 controls but tab and line ends, DEL to C1 but NEL, surrogates, U+FFFE, U+FFFF


def test_a_character_yaml_does_not_allow_is_refused_at_its_place(tmp_path: Path) -> None:
    from planstate.core.errors import ParseError
    from planstate.text.document import Document

    with pytest.raises(ParseError) as caught:
        Document.from_bytes("---\ntitle: café\nnote: a\x07b\n---\n".encode(), str(tmp_path / "STATE.md"))
    assert (caught.value.line, caught.value.column) == (3, 8)
