"""A hand edit inside a generated region: reported at the edited line, and kept somewhere when `render --force`
replaces it."""

from __future__ import annotations

from pathlib import Path

from conftest import Run, json_data, state_file


def edit_row(path: Path, region: str, row: int, text: str) -> int:
    """Replace the `row`-th line inside a region (0: the first line after its begin marker); return its line."""
    lines = path.read_text().splitlines(keepends=True)
    begin = next(i for i, line in enumerate(lines) if f"planstate:begin {region} " in line)
    lines[begin + 1 + row] = text + "\n"
    path.write_text("".join(lines))
    return begin + 2 + row


def test_a_hand_edit_is_reported_at_the_line_edited(run: Run, project: Path) -> None:
    line = edit_row(state_file(project), "phases", 3, "| 2 | Build | pending | my own note |")
    result = run("check", cwd=project)
    assert result.returncode == 1
    assert f".planning/STATE.md:{line}: error hand-edit: region phases was edited by hand" in result.stdout
    rendered = run("render", cwd=project)
    assert rendered.returncode == 1
    assert f".planning/STATE.md:{line}: region phases not rendered" in rendered.stderr


def test_render_force_keeps_the_replaced_text_and_says_where(run: Run, project: Path) -> None:
    path = state_file(project)
    edit_row(path, "phases", 3, "| 2 | Build | pending | my own note |")
    edited = path.read_text()
    begin = edited.index("planstate:begin phases")
    interior = edited[edited.index("\n", begin) + 1 : edited.index("<!-- planstate:end phases")]
    result = run("render", "--force", "--json", cwd=project)
    assert result.returncode == 0, result.stderr
    [kept] = json_data(result)["files"][0]["kept"]
    assert kept["region"] == "phases"
    assert kept["path"].startswith(".planning/.local/discarded/") and kept["path"].endswith("-root-phases.md")
    assert (project / kept["path"]).read_text() == interior
    assert "my own note" not in path.read_text()
    assert run("check", cwd=project).returncode == 0
    edit_row(path, "phases", 3, "| 2 | Build | pending | a second note |")
    text = run("render", "--force", cwd=project)
    assert "region phases: the hand-edited text it replaced is kept in .planning/.local/discarded/" in text.stdout
    assert len(list((project / ".planning" / ".local" / "discarded").iterdir())) == 2  # never overwritten
