"""The planning changes of a pull request, for the GitHub Action in action.yml (or any CI): `planstate diff BASE...HEAD
--markdown`, written to the job summary and to a comment body, and whether `.planning/` changed at all.

python scripts/pr_summary.py --base BASE [--head HEAD] [--body FILE]

- prints the markdown, appends it to $GITHUB_STEP_SUMMARY when that is set;
- writes the comment body (the markdown under a hidden marker line that finds the comment again) to FILE;
- writes `changed=true` or `changed=false` to $GITHUB_OUTPUT when that is set, and exits 0 either way;
- exits 2 when git or planstate fails (a base that is not fetched: check out with history, fetch-depth 0).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

MARKER = "<!-- planstate-pr-summary -->"


def planning_changed(base: str, head: str) -> bool:
    """Whether any `.planning/` folder changed between the merge base of BASE and HEAD, and HEAD."""
    done = subprocess.run(
        ["git", "diff", "--quiet", f"{base}...{head}", "--", ":(glob)**/.planning/**"],
        capture_output=True,
        text=True,
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"pr_summary: git diff {base}...{head} failed: {done.stderr.strip()}")
    return done.returncode == 1


def summary(base: str, head: str) -> str:
    """`planstate diff BASE...HEAD --markdown`: what the pull request changes in the plan."""
    done = subprocess.run(
        [sys.executable, "-m", "planstate", "diff", f"{base}...{head}", "--markdown"], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"pr_summary: planstate diff failed: {done.stderr.strip()}")
    return done.stdout


def main(argv: list[str] | None = None) -> int:
    """Write the summary, the comment body and the `changed` output."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--base", required=True, help="the pull request's base (a commit or a fetched branch)")
    parser.add_argument("--head", default="HEAD", help="the pull request's head (default HEAD)")
    parser.add_argument("--body", type=Path, help="where to write the comment body")
    args = parser.parse_args(argv)
    try:
        changed = planning_changed(args.base, args.head)
        text = summary(args.base, args.head) if changed else "No changes in `.planning/` in this pull request.\n"
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return 2
    sys.stdout.write(text)
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as handle:
            handle.write(text)
    if args.body is not None:
        args.body.write_text(f"{MARKER}\n{text}", encoding="utf-8")
    if os.environ.get("GITHUB_OUTPUT"):
        with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as handle:
            handle.write(f"changed={'true' if changed else 'false'}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
