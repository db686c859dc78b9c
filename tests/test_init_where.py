"""`planstate init` where a workspace already is: it points at `initiative new` instead of leaving people stuck."""

from __future__ import annotations

from pathlib import Path

from conftest import Run, json_envelope, refused


def test_init_where_a_workspace_exists_points_at_initiative_new(run: Run, project: Path) -> None:
    before = (project / ".planning" / "STATE.md").read_bytes()
    result = run("init", "--title", "Other", cwd=project)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "already exists; planstate init never overwrites a workspace" in result.stderr
    assert "`planstate initiative new SLUG`" in result.stderr
    assert (project / ".planning" / "STATE.md").read_bytes() == before


def test_init_inside_a_workspace_warns_and_points_at_initiative_new(run: Run, project: Path) -> None:
    inner = project / "services" / "api"
    inner.mkdir(parents=True)
    result = run("init", "--title", "API", cwd=inner)
    assert result.returncode == 0
    assert (inner / ".planning" / "STATE.md").is_file()
    [warning] = result.stderr.splitlines()
    assert warning.startswith(f"planstate: warning: {project / '.planning'} is a workspace this folder is inside")
    assert "`planstate initiative new SLUG`" in warning
    again = run("init", "--title", "API 2", "--json", cwd=project / "services")
    assert again.returncode == 0
    assert json_envelope(again)["warnings"] == [
        warning.removeprefix("planstate: warning: ").replace(
            str(inner / ".planning"), str(project / "services" / ".planning")
        )
    ]
    assert run("check", cwd=inner).returncode == 0


def test_init_in_a_fresh_folder_warns_about_nothing(run: Run, tmp_path: Path) -> None:
    result = run("init", "--title", "Fresh", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert json_envelope(result)["warnings"] == []


def test_init_makes_a_folder_that_does_not_exist_and_leaves_nothing_when_refused(run: Run, tmp_path: Path) -> None:
    """As `git init DIR`: the project folder and the parents it lacks are made; a refused init leaves none."""
    result = run("init", "--dir", "src/shop", "--title", "Shop", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "src" / "shop" / ".planning" / "STATE.md").is_file()
    refused(run("init", "--dir", "new/app", "--initiative", "Bad Slug", cwd=tmp_path), "'Bad Slug' must be a slug")
    assert not (tmp_path / "new").exists()
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    refused(run("init", "--dir", "a-file/app", cwd=tmp_path), f"could not create {tmp_path / 'a-file' / 'app'}")
    refused(run("init", "--dir", "a-file", cwd=tmp_path), f"{tmp_path / 'a-file'} is not a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "src"]
