"""The bundled example: create an initiative, change it a few times, show its status.

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
    ["set", "position.task", "Create users table migration", "position.status", "in_progress"],
    ["append", "resume_context.files_modified", "db/migrations/001_users.sql"],
    ["append", "resume_context.key_implementations", "Passwords hashed with argon2id"],
    ["append", "resume_context.open_questions", "Do we need soft-deleted users?"],
    ["set", "next_action", "Write the sessions table migration, then verify phase 1"],
    ["status"],
    ["get", "position", "--json"],
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
