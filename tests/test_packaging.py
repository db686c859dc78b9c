"""The wheel ships the templates inside the package, so an installed planstate finds them."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_wheel_contains_templates_and_console_script(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(REPO),
        ],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("planstate-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    templates = [p for p in (REPO / "templates").rglob("*") if p.is_file()]
    assert any(p.parent.name == "regions" for p in templates)
    for template in templates:
        assert f"planstate/templates/{template.relative_to(REPO / 'templates').as_posix()}" in names
    schemas = sorted(p.name for p in (REPO / "planstate" / "schemas").glob("*.json"))
    assert "envelope.json" in schemas  # the JSON contract (docs/json.md) ships with the package
    for schema in schemas:
        assert f"planstate/schemas/{schema}" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "planstate = planstate.cli.main:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_installed_wheel_renders_init_from_its_own_templates(tmp_path: Path) -> None:
    """Install the wheel into a fresh target folder and run init from there, away from the checkout."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "w"),
            str(REPO),
        ],
        check=True,
        capture_output=True,
    )
    wheel = next((tmp_path / "w").glob("planstate-*.whl"))
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    project = tmp_path / "project"
    project.mkdir()
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import planstate; "
        "assert planstate.__file__.startswith(sys.argv[1]), planstate.__file__; "
        "from planstate.cli.main import main; sys.exit(main(['init', '--dir', sys.argv[2], '--title', 'Wheel']))"
    )
    done = subprocess.run([sys.executable, "-c", code, str(target), str(project)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    text = (project / ".planning" / "STATE.md").read_text()
    assert "title: Wheel" in text
    assert "<!-- planstate:begin phases sha=" in text  # regions rendered from the wheel's templates/regions/
