"""`planstate git install` / `uninstall`, and what `planstate check` says about git: real repositories in tmp_path."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PINNED_NOW, REPO, Run, exits, json_data, state_file

from planstate.text import conflicts as checks
from planstate.vcs import gitsetup
from planstate.workspace import Workspace

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

ATTRIBUTES = ".planning/.gitattributes"
BLOCK = (
    "# planstate git install: begin (`planstate git uninstall` removes these lines)\n"
    "*.md merge=planstate diff=planstate\n"
    "history.jsonl merge=planstate\n"
    "# planstate git install: end\n"
)
ENV = {"PLANSTATE_NOW": PINNED_NOW}


def git(folder: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run git in `folder` (identity and default branch pinned), failing the test when git fails."""
    pinned = ["-c", "user.name=Tester", "-c", "user.email=tester@example.com", "-c", "init.defaultBranch=main"]
    return subprocess.run(
        ["git", *pinned, *args],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    )


def config(folder: Path) -> dict[str, str]:
    """This repository's own planstate config keys."""
    done = subprocess.run(
        ["git", "config", "--local", "--get-regexp", r"^(merge|diff)\.planstate\."],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    return dict(line.split(" ", 1) for line in done.stdout.splitlines())


@pytest.fixture
def repo(project: Path) -> Path:
    """The `project` workspace inside a fresh git repository, everything committed."""
    git(project, "init", "--quiet")
    git(project, "add", "-A")
    git(project, "commit", "--quiet", "-m", "start")
    return project


def command() -> str:
    """How the commands install writes run planstate: this Python by its absolute path, whatever PATH holds."""
    return f"{sys.executable} -m planstate"


def wanted() -> dict[str, str]:
    """The config install writes when the tests run it (this Python)."""
    return gitsetup.wanted_config()


def plain_shell(**more: str) -> dict[str, str]:
    """The environment of a shell without the venv: a teammate's terminal, an IDE's git, a GUI client."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    return {**env, "PATH": "/usr/bin:/bin", "PLANSTATE_NOW": PINNED_NOW, **more}


def planstate_on_path() -> dict[str, str]:
    """An environment whose PATH finds this installation's `planstate` first."""
    return {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


# ---------------------------------------------------------------------------- install and uninstall


def test_install_appends_the_block_and_sets_this_clones_config(run: Run, repo: Path) -> None:
    before = (repo / ATTRIBUTES).read_bytes()
    result = exits(run("git", "install", cwd=repo))
    assert (repo / ATTRIBUTES).read_bytes() == before + BLOCK.encode()  # every other line kept, as it was
    config_set = wanted()
    driver, textconv = config_set["merge.planstate.driver"], config_set["diff.planstate.textconv"]
    assert f"then {command()} git merge-driver %O %A %B %L %P; else " in driver  # git's contract kept
    assert "git merge-file -L ours -L base -L theirs --marker-size=%L %A %O %B; fi" in driver
    assert f'{command()} git textconv "$1" 2>/dev/null || ' in textconv and 'cat "$1"' in textconv
    assert result.stdout == (
        f"added 4 lines to {ATTRIBUTES}\n"
        "set merge.planstate.name = planstate field-level merge of .planning files\n"
        f"set merge.planstate.driver = {driver}\n"
        f"set diff.planstate.textconv = {textconv}\n"
        "set diff.planstate.cachetextconv = true\n"
        f"git runs planstate as {command()}: this installation's Python by its absolute path, so git finds it from "
        "any shell, with or without its virtual environment on PATH; where it cannot run, `git diff` shows the raw "
        "text and a merge is git's own, with conflict markers\n"
        f"next: commit {ATTRIBUTES}; run `planstate git install` once in every other clone too\n"
    )
    assert config(repo) == {
        "merge.planstate.name": "planstate field-level merge of .planning files",
        "merge.planstate.driver": driver,
        "diff.planstate.textconv": textconv,
        "diff.planstate.cachetextconv": "true",
    }
    # git reads the attributes: every file the driver handles gets it, and only the .md files the textconv
    attrs = git(repo, "check-attr", "merge", "diff", "--", ".planning/STATE.md", ".planning/history.jsonl").stdout
    assert attrs.splitlines() == [
        ".planning/STATE.md: merge: planstate",
        ".planning/STATE.md: diff: planstate",
        ".planning/history.jsonl: merge: planstate",
        ".planning/history.jsonl: diff: unspecified",
    ]


def test_install_twice_changes_nothing_and_says_so(run: Run, repo: Path) -> None:
    exits(run("git", "install", cwd=repo))
    path = repo / ATTRIBUTES
    before = (path.read_bytes(), path.stat().st_mtime_ns, (repo / ".git" / "config").read_bytes())
    assert exits(run("git", "install", cwd=repo)).stdout == "already installed: nothing to do\n"
    assert (path.read_bytes(), path.stat().st_mtime_ns, (repo / ".git" / "config").read_bytes()) == before
    data = json_data(exits(run("git", "install", "--json", cwd=repo)))
    assert data == {
        "action": "install",
        "changed": False,
        "attributes": {"path": ATTRIBUTES, "change": "unchanged", "lines": 0},
        "config": {"set": [], "unset": []},
        "git": True,
        "command": {"runs": command(), "why": gitsetup.WHY, "fallback": gitsetup.FALLBACK},
    }


def test_uninstall_restores_the_file_and_removes_only_its_config(run: Run, repo: Path) -> None:
    path = repo / ATTRIBUTES
    original = path.read_bytes()
    git(repo, "config", "merge.other.driver", "other-tool %A")  # someone else's driver, kept
    exits(run("git", "install", cwd=repo))
    with path.open("a") as handle:
        handle.write("*.txt diff=other\n")  # a line added after the block, kept
    result = exits(run("git", "uninstall", cwd=repo))
    assert path.read_bytes() == original + b"*.txt diff=other\n"
    assert result.stdout.splitlines() == [
        f"removed 4 lines from {ATTRIBUTES}",
        "unset merge.planstate.name (was planstate field-level merge of .planning files)",
        f"unset merge.planstate.driver (was {wanted()['merge.planstate.driver']})",
        f"unset diff.planstate.textconv (was {wanted()['diff.planstate.textconv']})",
        "unset diff.planstate.cachetextconv (was true)",
    ]
    assert config(repo) == {}
    assert git(repo, "config", "merge.other.driver").stdout == "other-tool %A\n"
    assert exits(run("git", "uninstall", cwd=repo)).stdout == "not installed: nothing to do\n"
    data = json_data(exits(run("git", "uninstall", "--json", cwd=repo)))
    assert data["changed"] is False and data["attributes"]["change"] == "unchanged"


def test_an_edited_block_is_replaced_where_it_stands(run: Run, repo: Path) -> None:
    path = repo / ATTRIBUTES
    path.write_text(
        "# mine\n*.txt diff\n"
        "# planstate git install: begin (`planstate git uninstall` removes these lines)\n"
        "*.md merge=planstate\n*.yaml merge=planstate\n"
        "# planstate git install: end\n"
        "README.md -merge\n"  # after the block: it still overrides the block for README.md
    )
    result = exits(run("git", "install", cwd=repo))
    assert result.stdout.startswith(f"replaced planstate's edited lines in {ATTRIBUTES} with the 4 lines it writes\n")
    assert path.read_text() == "# mine\n*.txt diff\n" + BLOCK + "README.md -merge\n"
    exits(run("git", "uninstall", cwd=repo))
    assert path.read_text() == "# mine\n*.txt diff\nREADME.md -merge\n"


@pytest.mark.parametrize(
    ("text", "installed", "removed"),
    [
        ("", BLOCK, ""),
        ("a merge=union", "a merge=union\n" + BLOCK, "a merge=union\n"),  # no line break at the end: one is added
        ("a\r\nb\r\n", "a\r\nb\r\n" + BLOCK.replace("\n", "\r\n"), "a\r\nb\r\n"),  # the file's line breaks
        (BLOCK + "x\n", BLOCK + "x\n", "x\n"),  # already there, not at the end: left where it is
        (BLOCK + BLOCK, BLOCK, ""),  # twice: once
        # a begin line without its end: it and the rules right after it are planstate's, the rest is not
        (
            "a\n# planstate git install: begin\n*.md  merge=planstate diff=planstate\nkeep\n",
            f"a\n{BLOCK}keep\n",
            "a\nkeep\n",
        ),
        # an end line without its begin: it and the rules right before it
        ("keep\nhistory.jsonl merge=planstate\n# planstate git install: end\n", "keep\n" + BLOCK, "keep\n"),
        # the same rule written by a person, outside the markers: theirs
        ("*.md merge=planstate\n", "*.md merge=planstate\n" + BLOCK, "*.md merge=planstate\n"),
    ],
    ids=["empty", "no-final-newline", "crlf", "in-the-middle", "twice", "begin-only", "end-only", "a-users-own-line"],
)
def test_block_editing_keeps_every_other_line(text: str, installed: str, removed: str) -> None:
    assert gitsetup.with_block(text) == installed
    assert gitsetup.with_block(installed) == installed
    assert gitsetup.without_block(installed) == removed
    assert gitsetup.without_block(removed) == removed
    if "planstate git install" in text:  # a partial or edited block comes out whole too
        assert gitsetup.without_block(text) == removed


def test_a_missing_attributes_file_is_created_and_removed_again(run: Run, repo: Path) -> None:
    (repo / ATTRIBUTES).unlink()
    assert exits(run("git", "install", cwd=repo)).stdout.startswith(f"created {ATTRIBUTES} with 4 lines\n")
    assert (repo / ATTRIBUTES).read_text() == BLOCK
    result = exits(run("git", "uninstall", cwd=repo))
    assert result.stdout.startswith(f"removed 4 lines from {ATTRIBUTES}, and the file, which held nothing else\n")
    assert not (repo / ATTRIBUTES).exists()


def test_outside_a_git_work_tree_install_writes_nothing(run: Run, project: Path, tmp_path: Path) -> None:
    env = {"GIT_CEILING_DIRECTORIES": str(tmp_path)}  # no repository above, whatever holds the temp folder
    before = (project / ATTRIBUTES).read_bytes()
    result = exits(run("git", "install", cwd=project, env=env), 2)
    assert result.stdout == ""
    assert result.stderr == (
        f"planstate: {project} is not inside a git work tree (or git is not installed): run `git init` (or clone) "
        "first, then `planstate git install` again; nothing was written\n"
    )
    assert (project / ATTRIBUTES).read_bytes() == before
    # uninstall still takes planstate's lines out of the file (a copy of a repository without its .git)
    (project / ATTRIBUTES).write_bytes(before + BLOCK.encode())
    result = exits(run("git", "uninstall", cwd=project, env=env))
    assert result.stdout == (
        f"removed 4 lines from {ATTRIBUTES}\nnot inside a git work tree: no git config to remove\n"
    )
    assert (project / ATTRIBUTES).read_bytes() == before
    assert exits(run("git", "uninstall", cwd=project, env=env)).stdout == (
        "not installed: nothing to do (not inside a git work tree: no git config to look at)\n"
    )


def test_a_config_from_an_older_install_is_updated(run: Run, repo: Path) -> None:
    git(repo, "config", "merge.planstate.driver", "/old/venv/bin/planstate git merge-driver %O %A %B %L %P")
    git(repo, "config", "--add", "merge.planstate.driver", "twice")  # several values: all replaced by one
    result = exits(run("git", "install", cwd=repo))
    driver = wanted()["merge.planstate.driver"]
    assert f"set merge.planstate.driver = {driver} (was twice)\n" in result.stdout
    assert git(repo, "config", "--get-all", "merge.planstate.driver").stdout == driver + "\n"


def test_the_api_mirrors_the_commands(repo: Path) -> None:
    ws = Workspace.find(repo)
    assert ws.git_status().installed is False and ws.git_status().attributes == "absent"
    report = ws.git_install()
    assert report.changed and report.attributes == "added" and len(report.config_set) == 4
    status = ws.git_status()
    assert status.installed and status.to_dict()["attributes"] == {"path": ATTRIBUTES, "state": "installed"}
    assert ws.git_install().changed is False
    with (repo / ATTRIBUTES).open("a") as handle:
        handle.write("# planstate git install: end\n")
    assert ws.git_status().attributes == "edited"
    assert ws.git_uninstall().config_removed.keys() == gitsetup.wanted_config().keys()
    assert ws.git_status().to_dict()["config"] == {}


def test_the_cli_reference_shows_real_output(run: Run, repo: Path) -> None:
    """docs/cli.md's examples of install and uninstall, run twice each, are what the commands print."""
    docs = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    env = planstate_on_path()  # the reference shows the usual case: `planstate` on PATH, the venv activated

    def shown(text: str) -> str:  # the reference names the venv's Python as a placeholder
        return text.replace(sys.executable, "/path/to/venv/bin/python")

    for command in ("install", "uninstall"):
        section = docs.split(f"### planstate git {command}\n", 1)[1].split("\n### ", 1)[0]
        example = section.split("```console\n", 1)[1].split("```\n", 1)[0]
        output = shown(exits(run("git", command, cwd=repo, env=env)).stdout)
        again = shown(exits(run("git", command, cwd=repo, env=env)).stdout)
        assert example == f"$ planstate git {command}\n{output}$ planstate git {command}\n{again}"
    # status, in a clone whose merge driver an older install wrote (the shell's words for "not found" as dash's)
    section = docs.split("### planstate git status\n", 1)[1].split("\n### ", 1)[0]
    example = section.split("```console\n", 1)[1].split("```\n", 1)[0]
    exits(run("git", "install", cwd=repo, env=env))
    git(repo, "config", "merge.planstate.driver", "planstate git merge-driver %O %A %B %L %P")
    said = subprocess.run(["sh", "-c", "planstate"], capture_output=True, text=True, env=plain_shell()).stderr.strip()
    output = shown(exits(run("git", "status", cwd=repo, env=env), 1).stdout).replace(
        said, "sh: 1: planstate: not found"
    )
    assert example == f"$ planstate git status\n{output}"


# ---------------------------------------------------------------------------- the command git runs


def test_the_command_is_absolute_even_when_path_finds_this_installation(run: Run, repo: Path) -> None:
    """Run from the README's activated venv, install still writes this Python by its absolute path: a bare `planstate`
    would run only in shells where that venv is on PATH."""
    result = exits(run("git", "install", cwd=repo, env=planstate_on_path()))
    assert config(repo) == wanted()
    assert f"git runs planstate as {command()}: this installation's Python by its absolute path" in result.stdout


def test_the_command_is_shell_quoted_and_resolves(tmp_path: Path) -> None:
    spaced = tmp_path / "a folder" / "python"
    spaced.parent.mkdir()
    spaced.symlink_to(sys.executable)
    done = subprocess.run(
        [str(spaced), "-c", "from planstate.vcs import gitsetup; print(gitsetup.command())"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PATH": os.defpath},
    )
    cmd = done.stdout.strip()
    assert cmd == f"'{spaced}' -m planstate"
    version = subprocess.run(f"{cmd} --version", shell=True, capture_output=True, text=True, check=True)
    assert version.stdout.startswith("planstate ")


def test_git_runs_the_configured_textconv_and_merge_driver(run: Run, repo: Path) -> None:
    exits(run("git", "install", cwd=repo))
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "install")
    trace = {"GIT_TRACE": "1"}
    path = state_file(repo)
    exits(run("set", "position.task", "Diff me", cwd=repo, env=ENV))
    diffed = subprocess.run(["git", "diff"], cwd=repo, capture_output=True, text=True, env={**os.environ, **trace})
    assert f"run_command: 'planstate_textconv() {{ {command()} git textconv " in diffed.stderr
    git(repo, "checkout", "--quiet", "--", ".")
    git(repo, "checkout", "--quiet", "-b", "other")
    exits(run("set", "position.task", "Theirs", cwd=repo, env=ENV))
    git(repo, "commit", "--quiet", "-am", "theirs")
    git(repo, "checkout", "--quiet", "main")
    exits(run("set", "position.task", "Ours", cwd=repo, env=ENV))
    git(repo, "commit", "--quiet", "-am", "ours")
    merged = subprocess.run(
        ["git", "merge", "--no-edit", "other"], cwd=repo, capture_output=True, text=True, env={**os.environ, **trace}
    )
    runs = [line for line in merged.stderr.splitlines() if "run_command:" in line and "merge-driver" in line]
    assert runs, merged.stderr
    assert all(f" then {command()} git merge-driver .merge_file_" in line for line in runs)
    assert any(" 7 '\\''.planning/STATE.md'\\''; else " in line for line in runs), runs
    assert path.exists()


# ---------------------------------------------------------------------------- git from a shell without the venv


def removed_venv(tmp_path: Path) -> Path:
    """The Python of a virtual environment that can run planstate (it sees this one's packages), to be removed."""
    folder = tmp_path / "old-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, capture_output=True)
    site = next((folder / "lib").glob("python3*/site-packages"))
    (site / "planstate-test.pth").write_text("".join(f"{entry}\n" for entry in sys.path if entry))
    return folder / "bin" / "python"


def not_found() -> str:
    """What this machine's `sh` says when it cannot find `planstate` on a plain PATH (dash: `sh: 1: planstate: not
    found`)."""
    return subprocess.run(["sh", "-c", "planstate"], capture_output=True, text=True, env=plain_shell()).stderr.strip()


def plain_git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run git as a shell without the venv does (whatever its exit code)."""
    pinned = ["-c", "user.name=Tester", "-c", "user.email=tester@example.com"]
    return subprocess.run(["git", *pinned, *args], cwd=repo, capture_output=True, text=True, env=plain_shell())


def diverged(run: Run, repo: Path, ours: str, theirs: str) -> None:
    """Branch `other` sets position.task to `theirs`, main to `ours`, each committed; main is checked out."""
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "install")
    git(repo, "checkout", "--quiet", "-b", "other")
    exits(run("set", "position.task", theirs, cwd=repo, env=ENV))
    git(repo, "commit", "--quiet", "-am", "theirs")
    git(repo, "checkout", "--quiet", "main")
    exits(run("set", "position.task", ours, cwd=repo, env=ENV))
    git(repo, "commit", "--quiet", "-am", "ours")


@pytest.mark.parametrize("runnable", [True, False], ids=["planstate-runs", "venv-removed"])
def test_git_diff_show_and_log_work_from_a_shell_without_the_venv(
    run: Run, repo: Path, tmp_path: Path, runnable: bool
) -> None:
    """Installed with the venv activated, git diff, show and log -p work from a shell without it: one line per field
    while planstate runs, the raw text (and one line on stderr) once its venv is gone; files outside .planning too."""
    if runnable:
        exits(run("git", "install", cwd=repo, env=planstate_on_path()))
    else:
        python = removed_venv(tmp_path)
        done = subprocess.run([str(python), "-m", "planstate", "git", "install"], cwd=repo, capture_output=True)
        assert done.returncode == 0, done.stderr
        shutil.rmtree(python.parent.parent)
    (repo / "notes.txt").write_text("one\n")
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "install")
    exits(run("set", "position.task", "Diff me", cwd=repo, env=ENV))
    (repo / "notes.txt").write_text("one\ntwo\n")
    changed = "+position.task: Diff me" if runnable else "+  task: Diff me"
    diffed = plain_git(repo, "diff")
    assert diffed.returncode == 0, diffed.stderr
    assert changed in diffed.stdout and "+two" in diffed.stdout
    git(repo, "commit", "--quiet", "-am", "diff me")
    said = diffed.stderr.splitlines()
    for args in (("show", "HEAD"), ("log", "-p", "-1")):
        shown = plain_git(repo, *args)
        assert shown.returncode == 0 and changed in shown.stdout and "+two" in shown.stdout, shown.stderr
        said += shown.stderr.splitlines()
        if runnable:
            assert said == []
        else:  # one line per file version git converted (git caches them), each saying what happened
            assert said and all(
                line.startswith("planstate: textconv: ")
                and line.endswith(": planstate could not run, showing the raw text")
                for line in said
            ), said


@pytest.mark.parametrize("runnable", [True, False], ids=["planstate-runs", "venv-removed"])
def test_a_conflicting_merge_from_a_shell_without_the_venv_keeps_both_sides_in_markers(
    run: Run, repo: Path, tmp_path: Path, runnable: bool
) -> None:
    """A field both branches changed: from a shell without the venv, git reports the conflict and the file holds both
    sides between markers of the size git asks for (%L), field-level while planstate runs, git's own once its venv is
    gone; never our side alone."""
    python = Path(sys.executable) if runnable else removed_venv(tmp_path)
    done = subprocess.run([str(python), "-m", "planstate", "git", "install"], cwd=repo, capture_output=True)
    assert done.returncode == 0, done.stderr
    (repo / ".git" / "info" / "attributes").write_text("STATE.md conflict-marker-size=9\n")
    diverged(run, repo, "Ours", "Theirs")
    if not runnable:
        shutil.rmtree(python.parent.parent)
    merged = plain_git(repo, "merge", "--no-edit", "other")
    assert merged.returncode == 1 and "CONFLICT (content): Merge conflict in .planning/STATE.md" in merged.stdout
    text = state_file(repo).read_text()
    assert "  task: Ours\n" in text and "  task: Theirs\n" in text  # theirs is not lost
    label = ": position.task" if runnable else ""
    assert f"\n{'<' * 9} ours{label}\n  task: Ours\n{'=' * 9}\n  task: Theirs\n{'>' * 9} theirs{label}\n" in text
    assert git(repo, "ls-files", "--unmerged").stdout.count(".planning/STATE.md") == 3  # git add must decide
    if runnable:
        assert "planstate: merge: .planning/STATE.md: conflict: position.task" in merged.stderr
    else:
        assert merged.stderr.splitlines() == [
            "planstate: merge: .planning/STATE.md: planstate could not run, merged by git merge-file instead"
        ]


def test_a_clean_merge_falls_back_cleanly(run: Run, repo: Path, tmp_path: Path) -> None:
    """Without planstate, a merge git's own text merge can make is made, and git commits it."""
    python = removed_venv(tmp_path)
    done = subprocess.run([str(python), "-m", "planstate", "git", "install"], cwd=repo, capture_output=True)
    assert done.returncode == 0, done.stderr
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "install")
    git(repo, "checkout", "--quiet", "-b", "other")
    exits(run("set", "next_action", "Theirs", cwd=repo, env=ENV))
    git(repo, "commit", "--quiet", "-am", "theirs")
    git(repo, "checkout", "--quiet", "main")
    with state_file(repo).open("a") as handle:
        handle.write("\nOur note at the end.\n")
    git(repo, "commit", "--quiet", "-am", "ours")
    shutil.rmtree(python.parent.parent)
    merged = plain_git(repo, "merge", "--no-edit", "other")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    text = state_file(repo).read_text()
    assert 'next_action: "Theirs"' in text and text.endswith("\nOur note at the end.\n") and "<<<<<<<" not in text
    assert merged.stderr.splitlines() == [
        "planstate: merge: .planning/STATE.md: planstate could not run, merged by git merge-file instead"
    ]


OLD_INSTALL = {  # what `planstate git install` wrote before, run with the venv activated
    "merge.planstate.driver": "planstate git merge-driver %O %A %B %L %P",
    "diff.planstate.textconv": "planstate git textconv",
}


def test_git_status_answers_what_the_api_answers(run: Run, repo: Path) -> None:
    exits(run("git", "install", cwd=repo))
    assert json_data(exits(run("git", "status", "--json", cwd=repo))) == Workspace.find(repo).git_status().to_dict()


def test_an_old_installs_bare_command_is_flagged_by_git_status_and_check(run: Run, repo: Path) -> None:
    exits(run("git", "install", cwd=repo))
    result = exits(run("git", "status", cwd=repo))
    assert result.stdout.splitlines()[-1] == "installed: git diff and git merge run planstate from any shell"
    fine = f"as install writes it; {command()} runs from a plain shell, git's own as the fallback"
    assert f"merge.planstate.driver: {fine}\n" in result.stdout
    for key, value in OLD_INSTALL.items():
        git(repo, "config", key, value)
    # found by running it, in a shell without the venv, even though this one finds `planstate` on PATH
    result = exits(run("git", "status", cwd=repo, env=planstate_on_path()), 1)
    problems = [line for line in result.stdout.splitlines() if line.startswith("problem: ")]
    said = not_found()
    assert problems == [
        "problem: merge.planstate.driver: planstate does not run from a plain shell (PATH=/usr/bin:/bin, no virtual "
        f"environment: {said}), so `git merge` keeps only our side of a file both sides changed, without conflict "
        "markers; run `planstate git install` again",
        "problem: diff.planstate.textconv: planstate does not run from a plain shell (PATH=/usr/bin:/bin, no virtual "
        f"environment: {said}), so `git diff` fails (exit 128), `git show` and `git log -p` show no diff; run "
        "`planstate git install` again",
    ]
    assert "merge.planstate.driver: set; planstate does not run from a plain shell, no fallback" in result.stdout
    data = json_data(exits(run("git", "status", "--json", cwd=repo), 1))
    assert [(c["key"], c["program"], c["runs"], c["fallback"]) for c in data["commands"]] == [
        ("merge.planstate.driver", "planstate", False, False),
        ("diff.planstate.textconv", "planstate", False, False),
    ]
    assert data["installed"] is False and len(data["problems"]) == 2
    # `check` says it without running anything
    findings = json_data(exits(run("check", "--json", cwd=repo, env=ENV)))["findings"]
    assert [(f["code"], f["field"], f["path"], f["line"]) for f in findings] == [
        ("driver-command-fragile", "diff.planstate.textconv", ATTRIBUTES, 4),
        ("driver-command-fragile", "merge.planstate.driver", ATTRIBUTES, 4),
    ]
    assert findings[0]["message"] == (
        "diff.planstate.textconv runs `planstate` by its name alone: in a shell without it on PATH (an IDE, a GUI "
        "client) `git diff` fails (exit 128), `git show` and `git log -p` show no diff"
    )
    # and the data loss it warns of is real: from a shell without the venv, git diff aborts
    exits(run("set", "position.task", "Diff me", cwd=repo, env=ENV))
    assert plain_git(repo, "diff").returncode == 128
    exits(run("git", "install", cwd=repo))
    assert exits(run("git", "status", cwd=repo)).returncode == 0
    assert json_data(exits(run("check", "--json", cwd=repo, env=ENV)))["findings"] == []


def test_git_status_and_check_flag_a_removed_interpreter(run: Run, repo: Path, tmp_path: Path) -> None:
    python = removed_venv(tmp_path)
    done = subprocess.run([str(python), "-m", "planstate", "git", "install"], cwd=repo, capture_output=True)
    assert done.returncode == 0, done.stderr
    shutil.rmtree(python.parent.parent)
    result = exits(run("git", "status", cwd=repo), 1)
    assert f"problem: merge.planstate.driver: {python} -m planstate does not run from a plain shell" in result.stdout
    assert "so git merges planning files as text, with conflict markers, as without planstate" in result.stdout
    messages = [f["message"] for f in json_data(exits(run("check", "--json", cwd=repo, env=ENV)))["findings"]]
    assert messages == [
        f"diff.planstate.textconv runs {python}, which is not there (a virtual environment moved or removed?): "
        "meanwhile `git diff` shows planning files' raw text, as without planstate",
        f"merge.planstate.driver runs {python}, which is not there (a virtual environment moved or removed?): "
        "meanwhile git merges planning files as text, with conflict markers, as without planstate",
    ]


def test_the_check_of_commands_runs_nothing(run: Run, repo: Path, tmp_path: Path) -> None:
    """`check` reads the config and stats a path; it starts no process but git's one `git config`."""
    exits(run("git", "install", cwd=repo))
    git(repo, "config", "merge.planstate.driver", OLD_INSTALL["merge.planstate.driver"])
    trace = tmp_path / "trace"
    exits(run("check", cwd=repo, env={**ENV, "GIT_TRACE": str(trace)}))
    assert trace.read_text().count("built-in:") == 1 and "run_command" not in trace.read_text()


@pytest.mark.parametrize(
    ("value", "program", "fallback"),
    [
        (OLD_INSTALL["merge.planstate.driver"], "planstate", False),
        ("'/a b/python' -m planstate git merge-driver %O %A %B %L %P", "'/a b/python' -m planstate", False),
        (gitsetup.wanted_config("/a b/python")["merge.planstate.driver"], "'/a b/python' -m planstate", True),
        ("other-tool %O %A %B", None, False),
        ("unclosed 'quote git merge-driver", None, False),
    ],
)
def test_the_planstate_part_of_a_command(value: str, program: str | None, fallback: bool) -> None:
    assert gitsetup.planstate_program(value, "merge-driver") == program
    assert gitsetup.has_fallback(value) is fallback


# ---------------------------------------------------------------------------- what `planstate check` says


def test_check_reports_attributes_without_drivers_and_install_fixes_it(run: Run, repo: Path) -> None:
    exits(run("git", "install", cwd=repo))
    assert exits(run("check", cwd=repo, env=ENV)).stdout == "2 files checked: 0 errors, 0 warnings\n"
    git(repo, "config", "--remove-section", "merge.planstate")
    git(repo, "config", "--remove-section", "diff.planstate")  # a fresh clone: the attributes came, the config did not
    data = json_data(exits(run("check", "--json", cwd=repo, env=ENV)))
    found = {f["code"]: f for f in data["findings"]}
    assert set(found) == {"merge-driver-missing", "diff-driver-missing"}
    assert (found["merge-driver-missing"]["path"], found["merge-driver-missing"]["line"]) == (ATTRIBUTES, 4)
    assert found["merge-driver-missing"]["message"] == (
        "merge=planstate applies to 2 planning files, but this clone's git config has no merge.planstate.driver: "
        "git silently merges them as plain text"
    )
    assert found["diff-driver-missing"]["hint"].startswith("run `planstate git install`")
    exits(run("check", "--strict", cwd=repo, env=ENV), 1)
    exits(run("git", "install", cwd=repo))
    assert exits(run("check", "--strict", cwd=repo, env=ENV)).stdout == "2 files checked: 0 errors, 0 warnings\n"


def test_outside_a_work_tree_the_driver_rule_asks_git_nothing(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The driver rule is silent outside a git work tree, and knows it from `stat` calls: no `.git` in the folder or
    above it means no git process (a check of 17,000 files would otherwise list them all for `git check-attr`).
    Inside a work tree (a subfolder too), or when GIT_DIR says where the repository is, git is asked."""
    from planstate.core import git as gitcalls

    Workspace.find(repo).git_install()
    git(repo, "config", "--remove-section", "merge.planstate")  # the attributes are there, the driver is not
    outside = tmp_path / "outside"
    shutil.copytree(repo, outside, ignore=shutil.ignore_patterns(".git"))
    calls: list[tuple[str, ...]] = []
    real = gitcalls._run

    def spied(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str] | None:
        calls.append(args)
        return real(cwd, *args, stdin=stdin)

    monkeypatch.setattr(gitcalls, "_run", spied)
    assert gitsetup.survey(outside / ".planning", lambda: ["STATE.md"])[0] == {}
    assert calls == []
    assert gitcalls.maybe_in_work_tree(repo / ".planning")
    assert not gitcalls.maybe_in_work_tree(outside / ".planning")
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    assert gitcalls.maybe_in_work_tree(outside / ".planning")
    monkeypatch.delenv("GIT_DIR")
    found = gitsetup.survey(repo / ".planning", lambda: ["STATE.md"])[0]
    assert found == {"merge": ["STATE.md"]}  # in the repository: found, by git
    assert calls


def test_a_check_outside_a_work_tree_imports_nothing_of_git(run: Run, repo: Path, tmp_path: Path) -> None:
    """Outside a git work tree a check, warm or not, imports neither `subprocess` nor `vcs.gitsetup` (10 ms of
    every check); in one whose clone lacks a driver it still finds the attributes without it."""
    Workspace.find(repo).git_install()
    git(repo, "config", "--remove-section", "merge.planstate")
    outside = tmp_path / "outside"
    shutil.copytree(repo, outside, ignore=shutil.ignore_patterns(".git"))
    for _ in range(2):  # the second check is warm (its memo answers)
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "planstate", "check"],
            cwd=outside,
            capture_output=True,
            text=True,
            env={**os.environ, **ENV},
        )
        assert done.returncode == 0, done.stderr
        imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time")}
        assert "planstate.check.workspacerules" in imported  # the drivers' rule ran...
        assert not imported & {"subprocess", "planstate.vcs.gitsetup"}  # ...and imported nothing to run git
    codes = {f["code"] for f in json_data(exits(run("check", "--json", cwd=repo, env=ENV), 0))["findings"]}
    assert codes == {"merge-driver-missing"}


def test_the_check_memo_keeps_the_names_of_the_files_only_while_a_driver_is_missing(run: Run, repo: Path) -> None:
    """The names of the files a check read (17,000 of them are most of its memo's bytes) serve only the drivers'
    rule, which asks for them only when a driver is missing: the memo keeps them only then. A memo kept without
    them, asked by a clone that has since lost its drivers (the files unchanged: a hit), runs the check again and
    finds what a check without memo finds."""
    import json

    from planstate.store.cache import Store

    def kept_names() -> object:
        kept = Store(repo / ".planning" / ".local" / "cache").memo("check")
        assert kept is not None
        return json.loads(kept.body)["names"]

    exits(run("git", "install", cwd=repo))
    exits(run("check", cwd=repo, env=ENV))
    assert kept_names() is None
    git(repo, "config", "--remove-section", "merge.planstate")
    codes = [f["code"] for f in json_data(exits(run("check", "--json", cwd=repo, env=ENV)))["findings"]]
    assert codes == ["merge-driver-missing"]
    assert kept_names() == ["STATE.md", "history.jsonl"]
    again = [f["code"] for f in json_data(exits(run("check", "--json", cwd=repo, env=ENV)))["findings"]]
    assert again == codes  # from the memo's names, the files unchanged


def test_a_driver_configured_in_any_scope_counts(run: Run, repo: Path, tmp_path: Path) -> None:
    exits(run("git", "install", cwd=repo))
    git(repo, "config", "--remove-section", "merge.planstate")
    git(repo, "config", "--remove-section", "diff.planstate")
    glob = tmp_path / "global.gitconfig"
    glob.write_text(f'[merge "planstate"]\n\tdriver = {command()} git merge-driver %O %A %B %L %P\n')
    env = {**ENV, "GIT_CONFIG_GLOBAL": str(glob)}
    codes = [f["code"] for f in json_data(exits(run("check", "--json", cwd=repo, env=env)))["findings"]]
    assert codes == ["diff-driver-missing"]


def test_the_driver_check_is_silent_outside_git_and_without_the_attributes(
    run: Run, project: Path, tmp_path: Path
) -> None:
    (project / ATTRIBUTES).write_text(BLOCK)
    env = {**ENV, "GIT_CEILING_DIRECTORIES": str(tmp_path)}
    assert exits(run("check", "--strict", cwd=project, env=env)).stdout == "2 files checked: 0 errors, 0 warnings\n"
    git(project, "init", "--quiet")
    (project / ATTRIBUTES).write_text("history.jsonl merge=union\n")  # no planstate attribute: no driver needed
    assert exits(run("check", "--strict", cwd=project, env=ENV)).returncode == 0


def test_the_driver_check_asks_git_twice_at_most(run: Run, repo: Path, tmp_path: Path) -> None:
    for number in range(5):
        args = ("--title", f"D{number}", "--context", "c", "--decision", "d", "--reason", "r")
        exits(run("decision", "add", *args, cwd=repo))
    exits(run("render", cwd=repo))
    (repo / ATTRIBUTES).write_text(BLOCK)  # attributes without config
    trace = tmp_path / "trace"  # git writes its trace there: planstate keeps git's stderr to itself
    result = exits(run("check", cwd=repo, env={**ENV, "GIT_TRACE": str(trace)}))
    calls = [line.split("trace: built-in: ", 1)[1] for line in trace.read_text().splitlines() if "built-in:" in line]
    assert [call.split()[1] for call in calls] == ["config", "check-attr"], calls
    assert "merge=planstate applies to 7 planning files" in result.stdout  # STATE.md, history.jsonl, 5 decisions
    trace.unlink()
    exits(run("git", "install", cwd=repo))
    exits(run("check", cwd=repo, env={**ENV, "GIT_TRACE": str(trace)}))
    assert trace.read_text().count("built-in:") == 1  # configured: git config alone answers


def test_the_resume_brief_does_not_ask_git_about_drivers(run: Run, repo: Path, tmp_path: Path) -> None:
    (repo / ATTRIBUTES).write_text(BLOCK)
    trace = tmp_path / "trace"
    exits(run("resume", cwd=repo, env={**ENV, "GIT_TRACE": str(trace)}))
    assert "check-attr" not in (trace.read_text() if trace.exists() else "")


# ---------------------------------------------------------------------------- conflicts the driver wrote


FIELD_CONFLICT = (
    "<<<<<<< ours: position.task\n"
    "  task: Write the docs\n"
    "=======\n"
    "  task: Fix the tests\n"
    ">>>>>>> theirs: position.task\n"
)


def test_a_field_conflict_names_the_field_and_how_to_resolve_it(run: Run, project: Path) -> None:
    path = state_file(project)
    text = path.read_text()
    path.write_text(text.replace("  task: null\n", FIELD_CONFLICT, 1))
    first = text.splitlines().index("  task: null") + 1
    data = json_data(exits(run("check", "--json", cwd=project, env=ENV), 1))
    (finding,) = data["findings"]
    assert finding == {
        "code": "conflict-marker",
        "severity": "error",
        "path": ".planning/STATE.md",
        "line": first,
        "column": None,
        "field": "position.task",
        "message": f"unresolved merge conflict on position.task (lines {first}-{first + 4}): both sides changed it "
        "differently",
        "hint": "keep one side's lines for position.task, delete the three marker lines, run `planstate check --fix` "
        "(it renders the regions again), then `git add .planning/STATE.md`",
        "fixable": False,
    }
    # docs/checks.md shows this very line as its second conflict-marker example
    text_out = exits(run("check", cwd=project, env=ENV), 1).stdout.splitlines()[0]
    docs = (REPO / "docs" / "checks.md").read_text(encoding="utf-8").split("### `conflict-marker`\n", 1)[1]
    examples = docs.split("\n### ", 1)[0].split("```console\n$ planstate check\n")
    assert examples[2].split("\n```", 1)[0] == text_out
    # resolved as the hint says: keep one side's lines, delete the markers
    path.write_text(text.replace("  task: null\n", "  task: Fix the tests\n", 1))
    assert exits(run("check", "--fix", cwd=project, env=ENV)).stdout.endswith("0 errors, 0 warnings, 1 fixed\n")
    assert "Fix the tests" in path.read_text().split("<!-- planstate:begin position", 1)[1]


@pytest.mark.parametrize(
    ("opening", "closing", "field"),
    [
        (b"<<<<<<< ours: position.task", b">>>>>>> theirs: position.task", "position.task"),
        (b"<<<<<<< HEAD: phases[1].completed\r", b">>>>>>> feature/x: phases[1].completed\r", "phases[1].completed"),
        (b"<<<<<<< a: b: evidence.x", b">>>>>>> c: evidence.x", "evidence.x"),  # a label holding ': '
        (b"<<<<<<< HEAD", b">>>>>>> other-branch", None),  # git's own markers
        (b"<<<<<<< HEAD", b">>>>>>> 1a2b3c4 (fix: the tests)", None),  # a rebase's label
        (b"<<<<<<< ours: position.task", b">>>>>>> theirs: position.phase", None),  # two different paths
    ],
)
def test_the_field_is_read_from_both_marker_lines(opening: bytes, closing: bytes, field: str | None) -> None:
    assert checks.marked_field(opening, closing) == field
    raw = b"\n".join([b"x", opening, b"a", b"=======", b"b", closing, b""])
    assert checks.conflict_blocks(raw) == [checks.Conflict(2, 6, field)]


# ---------------------------------------------------------------------------- what changed since a moment (resume)


def dated(when: str) -> dict[str, str]:
    """The environment of a git commit made at `when`."""
    return {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}


def test_changed_since_lists_committed_and_uncommitted_files_of_the_project_but_the_planning_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The project may be a folder of its repository: paths come relative to it, whichever of the git calls (run at
    once) answered them; the planning folder is left out; outside a work tree, or without git, there is no answer."""
    from datetime import UTC, datetime

    from planstate.core import git as planstate_git

    repo = tmp_path / "repo"
    project = repo / "apps" / "web"
    (project / ".planning").mkdir(parents=True)
    git(repo, "init", "--quiet")
    (project / "old.py").write_text("a\n")
    (repo / "elsewhere.py").write_text("outside the project\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "before", env=dated("2026-01-01T00:00:00Z"))
    (project / "committed.py").write_text("b\n")
    (project / ".planning" / "STATE.md").write_text("planning files never count\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "after", env=dated("2026-03-01T00:00:00Z"))
    (project / "old.py").write_text("changed\n")
    (project / "committed.py").unlink()  # a tracked file deleted: a change too
    (project / "new file.py").write_text("untracked\n")
    (project / "new folder").mkdir()
    (project / "new folder" / "[x].py").write_text("untracked, in an untracked folder, a glob in its name\n")
    (project / ".gitignore").write_text("*.log\n")
    (project / "build.log").write_text("ignored\n")
    (project / ".planning" / "notes.md").write_text("untracked, but planning\n")
    since = datetime(2026, 2, 1, tzinfo=UTC)
    uncommitted = [".gitignore", "committed.py", "new file.py", "new folder/[x].py", "old.py"]
    assert planstate_git.changed_since(project, since, leave_out=".planning") == sorted(uncommitted)
    assert planstate_git.changed_since(project, None, leave_out=".planning") == uncommitted
    assert ".planning/notes.md" in (planstate_git.changed_since(project, None) or [])
    monkeypatch.setattr(planstate_git, "UNTRACKED_NAMED", 2)  # too many entries to name: git looks at them all
    assert planstate_git.changed_since(project, None, leave_out=".planning") == uncommitted
    outside = tmp_path / "outside"
    outside.mkdir()
    assert planstate_git.changed_since(outside, since) is None
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    assert planstate_git.changed_since(project, since) is None
