"""Two real git clones record decisions and blockers on the same day with the same titles, then merge cleanly
(the merge driver installed), and `planstate check` is clean after each merge."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import Run, exits, json_data

from tests.gitutil import configure, git, install_driver

DAY = {"PLANSTATE_NOW": "2026-05-06T10:00:00Z"}

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def test_two_clones_record_the_same_titles_and_merge_without_conflict(run: Run, tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "--quiet", "--initial-branch=main")
    configure(origin, "origin")
    exits(run("init", "--title", "Auth", "--phase", "Schema", "--phase", "JWT", cwd=origin, env=DAY))
    install_driver(run, origin)  # commits .gitattributes; each clone configures the driver again below
    git(origin, "add", "-A")
    git(origin, "commit", "--quiet", "-m", "planstate init")
    git(origin, "config", "receive.denyCurrentBranch", "updateInstead")

    clones = []
    for name in ("alice", "bob"):
        clone = tmp_path / name
        git(tmp_path, "clone", "--quiet", str(origin), name)
        configure(clone, name)
        install_driver(run, clone)
        clones.append(clone)
    alice, bob = clones

    made: dict[str, list[str]] = {}
    for clone in clones:
        env = {**DAY, "PLANSTATE_ACTOR": clone.name}
        decision = run(
            "decision",
            "add",
            "--title",
            "Use jose for JWT",
            "--context",
            f"{clone.name}'s context",
            "--decision",
            "jose",
            "--reason",
            "Web Crypto",
            "--json",
            cwd=clone,
            env=env,
        )
        blocker = run("blocker", "add", "--description", "Waiting for OAuth credentials", "--json", cwd=clone, env=env)
        made[clone.name] = [json_data(exits(decision))["id"], json_data(exits(blocker))["id"]]
        assert git(clone, "status", "--porcelain").stdout.splitlines() == [
            " M .planning/STATE.md",
            "?? .planning/blockers/" + Path(json_data(blocker)["path"]).name,
            "?? .planning/decisions/" + Path(json_data(decision)["path"]).name,
        ]  # the two new files and STATE.md's regions showing them: no heartbeat or cache in git
        assert exits(run("check", cwd=clone)).stdout.endswith("0 errors, 0 warnings\n")
        git(clone, "add", "-A")
        git(clone, "commit", "--quiet", "-m", f"{clone.name}: decision and blocker")

    git(alice, "push", "--quiet", "origin", "main")
    git(bob, "pull", "--quiet", "--no-edit", "origin", "main")
    assert git(bob, "status", "--porcelain").stdout == ""
    assert len(git(bob, "log", "--merges", "--oneline").stdout.splitlines()) == 1  # a real merge, not a rebase

    assert exits(run("validate", cwd=bob)).stdout == "6 files valid\n"
    assert exits(run("check", cwd=bob)).stdout.endswith(
        "0 errors, 0 warnings\n"
    )  # the regions show both sides' records
    decisions = json_data(exits(run("decision", "list", "--json", cwd=bob)))["decisions"]
    assert sorted(d["id"] for d in decisions) == sorted([made["alice"][0], made["bob"][0]])
    assert {d["title"] for d in decisions} == {"Use jose for JWT"}
    assert {d["by"] for d in decisions} == {"alice", "bob"}
    blockers = json_data(exits(run("blocker", "list", "--json", cwd=bob)))["blockers"]
    assert sorted(b["id"] for b in blockers) == sorted([made["alice"][1], made["bob"][1]])

    # And back: alice pulls the merge, moves bob's blocker, bob moves alice's; the next merge is clean too.
    git(bob, "push", "--quiet", "origin", "main")
    git(alice, "pull", "--quiet", "--no-edit", "origin", "main")
    exits(run("blocker", "activate", made["bob"][1], cwd=alice))
    exits(run("blocker", "resolve", made["alice"][1], "--resolution", "arrived", cwd=bob))
    for clone in clones:
        git(clone, "commit", "--quiet", "-am", f"{clone.name}: moved a blocker")
    git(alice, "push", "--quiet", "origin", "main")
    git(bob, "pull", "--quiet", "--no-edit", "origin", "main")
    states = {
        b["id"]: b["status"] for b in json_data(exits(run("blocker", "list", "--all", "--json", cwd=bob)))["blockers"]
    }
    assert states == {made["bob"][1]: "active", made["alice"][1]: "resolved"}
    exits(run("validate", cwd=bob))
    assert exits(run("check", cwd=bob)).stdout.endswith("0 errors, 0 warnings\n")
    assert git(bob, "status", "--porcelain").stdout == ""
