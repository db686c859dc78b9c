"""The bundled example: create an initiative, record a decision and a blocker, work through a phase, then show
its status, the resume brief and the drift check.

    python examples/demo.py [FOLDER] [--quiet]

FOLDER defaults to a new temporary folder. Every step runs the real `planstate` command and is
printed first, so the output reads as a walk-through.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

STEPS = [
    [
        "init",
        "--title",
        "User authentication",
        "--phase",
        "Database schema",
        "--phase",
        "JWT implementation",
        "--phase",
        "OAuth integration",
        "--phase",
        "Deploy",
        "--next",
        "Design the users and sessions tables",
    ],
    [
        "decision",
        "add",
        "--context",
        "JWT library for signing and verifying access tokens",
        "--decision",
        "jose over jsonwebtoken",
        "--reason",
        "It uses the Web Crypto API and has better types",
        "--alternative",
        "jsonwebtoken: no Web Crypto support",
    ],
    ["blocker", "add", "--description", "Waiting for OAuth client credentials", "--affects", "phase 3", "--active"],
    ["task", "start", "Create users table migration"],
    ["context", "--file", "db/migrations/001_users.sql", "--question", "Do we need soft-deleted users?"],
    [
        "phase",
        "complete",
        "1",
        "--evidence",
        "migrations=3",
        "--evidence",
        "tests=18/18",
        "--next",
        "Implement access token issuing, then verify phase 2",
    ],
    ["status"],
    ["get", "position", "--json"],
    ["resume"],
    ["check"],
    ["validate"],
]


def command() -> list[str]:
    """The installed console script next to this Python, else `python -m planstate`."""
    script = Path(sys.executable).parent / "planstate"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "planstate"]


def main() -> int:
    """Run the walk-through."""
    args = [a for a in sys.argv[1:] if a != "--quiet"]
    quiet = "--quiet" in sys.argv[1:]
    folder = Path(args[0]) if args else Path(tempfile.mkdtemp(prefix="planstate-demo-"))
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PLANSTATE_ACTOR": os.environ.get("PLANSTATE_ACTOR", "demo")}
    for step in STEPS:
        if not quiet:
            print(f"\n$ planstate {' '.join(_quote(a) for a in step)}", flush=True)
        done = subprocess.run([*command(), *step], cwd=folder, env=env, stdout=subprocess.DEVNULL if quiet else None)
        if done.returncode != 0:
            print(f"step failed with exit code {done.returncode}: planstate {' '.join(step)}", file=sys.stderr)
            return done.returncode
    if not quiet:
        print(f"\nThe example initiative is in {folder}/.planning/ (open STATE.md to see the file).")
    return 0


def _quote(arg: str) -> str:
    return f'"{arg}"' if " " in arg or not arg else arg


if __name__ == "__main__":
    sys.exit(main())
