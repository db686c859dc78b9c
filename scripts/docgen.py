"""Regenerate the generated blocks of the docs (run with --check in tests).

docs/format.md: the field tables, from planstate.model.kinds.
docs/git.md: the merge rule of every field, from planstate.vcs.mergerules.
docs/lifecycle.md: the transition table, its Mermaid diagram and the "how it is left" column of the states
table, from planstate.ops.lifecycle.TABLE (the states' meanings are prose, kept as written).

python scripts/docgen.py          # rewrite the blocks in place
python scripts/docgen.py --check  # exit 1 if a doc is out of date
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planstate.model.kinds import KINDS, LIFECYCLE_STATES  # noqa: E402
from planstate.model.schema import ListOf, Model, Nested  # noqa: E402
from planstate.model.types import Nullable  # noqa: E402
from planstate.ops.lifecycle import TABLE, allowed  # noqa: E402
from planstate.vcs.mergerules import MEANING, RULES  # noqa: E402

FORMAT = ROOT / "docs" / "format.md"
LIFECYCLE = ROOT / "docs" / "lifecycle.md"
GIT = ROOT / "docs" / "git.md"
MERGE_BLOCK = re.compile(r"(<!-- merge:(\w+) -->\n)(.*?)(<!-- /merge:\2 -->)", re.DOTALL)
BLOCK = re.compile(r"(<!-- fields:(\w+) -->\n)(.*?)(<!-- /fields:\2 -->)", re.DOTALL)
LIFECYCLE_BLOCK = re.compile(r"(<!-- lifecycle:(\w+) -->\n)(.*?)(<!-- /lifecycle:\2 -->)", re.DOTALL)


def rows(model: type[Model], prefix: str = "", managed: bool = False) -> list[str]:
    """Table rows for every field of `model`, nested fields under their parent (`managed`: the parent is)."""
    out = []
    for name, field in model.fields.items():
        kind: Any = field.kind
        while isinstance(kind, Nullable):
            kind = kind.inner
        notes = []
        if field.required:
            notes.append("required")
        if field.derived:
            notes.append("derived")
        if field.default not in (None, "") and not field.required:
            notes.append(
                f"default `{str(field.default).lower() if isinstance(field.default, bool) else field.default}`"
            )
        if field.managed:
            notes.append(f"managed by `{field.managed}`".replace("|", "\\|"))
        elif managed:
            notes.append("managed")
        type_text = field.kind.describe().replace("|", "\\|")
        out.append(f"| `{prefix}{name}` | {type_text} | {', '.join(notes)} | {field.doc} |")
        inner = managed or bool(field.managed)
        if isinstance(kind, Nested):
            out.extend(rows(kind.model, f"{prefix}{name}.", inner))
        elif isinstance(kind, ListOf) and isinstance(kind.item, Nested):
            out.extend(rows(kind.item.model, f"{prefix}{name}[].", inner))
    return out


def table(kind: str) -> str:
    """The markdown table of one file kind."""
    header = "| field | type | notes | meaning |\n|---|---|---|---|\n"
    return header + "\n".join(rows(KINDS[kind])) + "\n"


def render(text: str) -> str:
    """Return `text` with every fields block regenerated."""
    return BLOCK.sub(lambda m: m.group(1) + table(m.group(2)) + m.group(4), text)


def transition_table() -> str:
    """The lifecycle transitions as a markdown table, in table order."""
    lines = ["| from | command | to |", "|---|---|---|"]
    lines += [f"| `{t.source}` | `{t.command}` | `{t.target}` |" for t in TABLE]
    return "\n".join(lines) + "\n"


def transition_diagram() -> str:
    """The lifecycle transitions as a Mermaid state diagram (creation enters `active`, or `paused`)."""
    lines = ["```mermaid", "stateDiagram-v2", "    [*] --> active: init / initiative new"]
    lines += [f"    {t.source} --> {t.target}: {t.command}" for t in TABLE]
    lines.append("```")
    return "\n".join(lines) + "\n"


def exits(state: str) -> str:
    """The commands that leave `state`, with where each one leads, in table order."""
    return ", ".join(f"`{t.command}` (→ `{t.target}`)" for t in allowed(state)) or "none"


def states_table(block: str) -> str:
    """The states table with its last column ("how it is left") regenerated from TABLE.

    The meaning of each state is prose and stays as written; a state missing from the table is an error."""
    lines = block.splitlines()
    out = lines[:2]
    seen = []
    for line in lines[2:]:
        cells = line.strip().removeprefix("| ").removesuffix(" |").split(" | ")
        if len(cells) != 3 or not re.fullmatch(r"`\w+`", cells[0]):
            raise SystemExit(f"docs/lifecycle.md: states table row is not `| `state` | meaning | how |`: {line}")
        state = cells[0].strip("`")
        seen.append(state)
        out.append(f"| {cells[0]} | {cells[1]} | {exits(state)} |")
    missing = [s for s in LIFECYCLE_STATES if s not in seen]
    if missing:
        raise SystemExit(f"docs/lifecycle.md: the states table has no row for {', '.join(missing)}")
    return "\n".join(out) + "\n"


def render_lifecycle(text: str) -> str:
    """Return `text` with the lifecycle blocks (states column, transition table, diagram) regenerated."""
    blocks = {"table": lambda _old: transition_table(), "diagram": lambda _old: transition_diagram()}
    blocks["states"] = states_table
    return LIFECYCLE_BLOCK.sub(lambda m: m.group(1) + blocks[m.group(2)](m.group(3)) + m.group(4), text)


def merge_rows(model: type[Model], prefix: str = "") -> list[str]:
    """Table rows: the merge rule of every field of `model`, nested fields under their parent."""
    out = []
    for name, field in model.fields.items():
        rule = RULES[model][name]
        out.append(f"| `{prefix}{name}` | `{rule}` |")
        kind: Any = field.kind
        while isinstance(kind, Nullable):
            kind = kind.inner
        if rule.name == "lifecycle":
            continue  # one unit: its fields follow the unit's winner
        if isinstance(kind, Nested):
            out.extend(merge_rows(kind.model, f"{prefix}{name}."))
        elif isinstance(kind, ListOf) and isinstance(kind.item, Nested) and rule.name != "log":
            out.extend(merge_rows(kind.item.model, f"{prefix}{name}[]."))
    return out


def merge_table(kind: str) -> str:
    """The merge rules of one file kind, or (`rules`) what each rule means."""
    if kind == "rules":
        lines = ["| rule | what the merge does |", "|---|---|"]
        lines += [f"| `{name if name != 'final' else 'final:STATUS'}` | {text} |" for name, text in MEANING.items()]
        return "\n".join(lines) + "\n"
    return "| field | rule |\n|---|---|\n" + "\n".join(merge_rows(KINDS[kind])) + "\n"


def render_git(text: str) -> str:
    """Return `text` with every merge-rule block regenerated."""
    return MERGE_BLOCK.sub(lambda m: m.group(1) + merge_table(m.group(2)) + m.group(4), text)


def main() -> int:
    """Rewrite or check docs/format.md, docs/lifecycle.md and docs/git.md."""
    stale = []
    for path, regenerate in ((FORMAT, render), (LIFECYCLE, render_lifecycle), (GIT, render_git)):
        text = path.read_text(encoding="utf-8")
        new = regenerate(text)
        if new == text:
            continue
        stale.append(path.relative_to(ROOT))
        if "--check" not in sys.argv[1:]:
            path.write_text(new, encoding="utf-8")
    if stale and "--check" in sys.argv[1:]:
        print(f"{', '.join(map(str, stale))} out of date: run python scripts/docgen.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
