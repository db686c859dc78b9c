"""The planning changes of a pull request, for the GitHub Action in action.yml (or any CI): `planstate diff BASE...HEAD
--markdown`, written to the job summary and to a comment body, and whether `.planning/` changed at all.

python scripts/pr_summary.py --base BASE [--head HEAD] [--base-name NAME] [--head-name NAME] [--body FILE]

- prints the markdown, appends it to $GITHUB_STEP_SUMMARY when that is set; its heading names the head and the
  base by the names given (the branches: the action passes GITHUB_HEAD_REF and GITHUB_BASE_REF), else as given,
  and their commits by short ids;
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


def short(revision: str) -> str:
    """The short id of the commit `revision` names (`git rev-parse --short`)."""
    done = subprocess.run(["git", "rev-parse", "--short", f"{revision}^{{commit}}"], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"pr_summary: git rev-parse {revision} failed: {done.stderr.strip()}")
    return done.stdout.strip()


def heading(base: str, head: str, base_name: str | None, head_name: str | None) -> str:
    """The comment's heading: the head by name and short id, since it left the base (by name) at their merge base."""
    from planstate.vcs.difftext import md_code

    done = subprocess.run(["git", "merge-base", base, head], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"pr_summary: git merge-base {base} {head} failed: {done.stderr.strip() or 'none found'}")

    def shown(name: str | None, revision: str) -> str:
        """A side by its name; by its short id when it is named only by a commit id."""
        commit, name = short(revision), name or revision
        is_id = all(c in "0123456789abcdef" for c in name) and (name.startswith(commit) or commit.startswith(name))
        return md_code(commit) if is_id else f"{md_code(name)} ({md_code(commit)})"

    fork = md_code(short(done.stdout.strip()))
    return f"## Changes in `.planning/` on {shown(head_name, head)} since it left {shown(base_name, base)} at {fork}"


def titled(text: str, title: str) -> str:
    """The markdown of `planstate diff` under the comment's own heading instead of its own."""
    first, newline, rest = text.partition("\n")
    return title + newline + rest if first.startswith("## Changes in ") else text


def main(argv: list[str] | None = None) -> int:
    """Write the summary, the comment body and the `changed` output."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--base", required=True, help="the pull request's base (a commit or a fetched branch)")
    parser.add_argument("--head", default="HEAD", help="the pull request's head (default HEAD)")
    parser.add_argument("--base-name", help="how the heading names the base (its branch; default: --base)")
    parser.add_argument("--head-name", help="how the heading names the head (its branch; default: --head)")
    parser.add_argument("--body", type=Path, help="where to write the comment body")
    args = parser.parse_args(argv)
    try:
        changed = planning_changed(args.base, args.head)
        if changed:
            text = titled(summary(args.base, args.head), heading(args.base, args.head, args.base_name, args.head_name))
        else:
            text = "No changes in `.planning/` in this pull request.\n"
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
