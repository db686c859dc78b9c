"""Regenerate the field tables of docs/format.md from planstate.models (run with --check in tests).

python scripts/docgen.py          # rewrite the tables in place
python scripts/docgen.py --check  # exit 1 if docs/format.md is out of date
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planstate.models import KINDS  # noqa: E402
from planstate.schema import ListOf, Model, Nested, Nullable  # noqa: E402

FORMAT = ROOT / "docs" / "format.md"
BLOCK = re.compile(r"(<!-- fields:(\w+) -->\n)(.*?)(<!-- /fields:\2 -->)", re.DOTALL)


def rows(model: type[Model], prefix: str = "") -> list[str]:
    """Table rows for every field of `model`, nested fields under their parent."""
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
        type_text = field.kind.describe().replace("|", "\\|")
        out.append(f"| `{prefix}{name}` | {type_text} | {', '.join(notes)} | {field.doc} |")
        if isinstance(kind, Nested):
            out.extend(rows(kind.model, f"{prefix}{name}."))
        elif isinstance(kind, ListOf) and isinstance(kind.item, Nested):
            out.extend(rows(kind.item.model, f"{prefix}{name}[]."))
    return out


def table(kind: str) -> str:
    """The markdown table of one file kind."""
    header = "| field | type | notes | meaning |\n|---|---|---|---|\n"
    return header + "\n".join(rows(KINDS[kind])) + "\n"


def render(text: str) -> str:
    """Return `text` with every fields block regenerated."""
    return BLOCK.sub(lambda m: m.group(1) + table(m.group(2)) + m.group(4), text)


def main() -> int:
    """Rewrite or check docs/format.md."""
    text = FORMAT.read_text(encoding="utf-8")
    new = render(text)
    if "--check" in sys.argv[1:]:
        if new != text:
            print("docs/format.md field tables are out of date: run python scripts/docgen.py")
            return 1
        return 0
    FORMAT.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
