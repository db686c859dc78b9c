"""How results look: plain text for pipes and agents, rich text on a terminal, JSON on request."""

from __future__ import annotations

import os
import sys
from typing import Any

from planstate.model.kinds import to_json


def dump_json(value: Any) -> str:
    """Serialise a result as indented JSON (timestamps as ISO strings)."""
    import json  # `get` of a text value, the most common command, prints it bare and needs neither this nor YAML

    return json.dumps(to_json(value), indent=2, ensure_ascii=False)


def value_text(value: Any) -> str:
    """A value as `planstate get` prints it: scalars bare, collections as YAML blocks."""
    if isinstance(value, str):
        return value
    from planstate.text import yamltext

    if isinstance(value, dict | list):
        if not value:
            return yamltext.flow(value)
        return "\n".join(yamltext.block(value, 0, yamltext.Indent()))
    return yamltext.scalar(value)


def short(value: Any, width: int = 60) -> str:
    """A one-line rendering of a value for change summaries."""
    from planstate.text import yamltext

    text = yamltext.flow(value) if isinstance(value, dict | list) else yamltext.scalar(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def use_rich() -> bool:
    """Rich output only on a terminal, and never when NO_COLOR or PLANSTATE_PLAIN is set."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR") and not os.environ.get("PLANSTATE_PLAIN")


def status_lines(status: dict[str, Any]) -> list[tuple[str, str]]:
    """The rows of the status summary as (label, text)."""
    rows: list[tuple[str, str]] = []
    lifecycle = status["lifecycle"]
    if status.get("lifecycle_since"):
        lifecycle += f" since {status['lifecycle_since']}"
    if status.get("lifecycle_reason"):
        lifecycle += f" ({status['lifecycle_reason']})"
    rows.append(("lifecycle", lifecycle))
    if status.get("status") and status["status"] not in ("active", status["lifecycle"]):
        rows.append(("status", status["status"].replace("_", " ")))
    if status["phases_total"]:
        current = "none started" if status["current_phase"] is None else status["current_phase"]
        phase = f"{current} ({status['phases_completed']} of {status['phases_total']} completed)"
        if status.get("current_phase_name"):
            phase = f"{status['current_phase']}: {status['current_phase_name']} [{status['current_phase_status']}]"
            phase += f", {status['phases_completed']} of {status['phases_total']} phases completed"
        rows.append(("phase", phase))
    else:
        rows.append(("phase", "no phases defined"))
    for blocker in status.get("blockers") or []:
        rows.append(("blocked by", f"{blocker['id']}: {blocker['title']}"))
    position = status.get("position") or {}
    if position.get("task"):
        rows.append(("task", f"{position['task']} [{position.get('status', 'pending')}]"))
    for label in ("plan", "wave", "step"):
        if position.get(label) is not None:
            rows.append((label, str(position[label])))
    rows.append(("progress", status["bar"]))
    rows.append(("next", (status.get("next_action") or "(not set)").strip()))
    for question in status.get("open_questions") or []:
        rows.append(("question", question))
    return rows


def status_plain(status: dict[str, Any]) -> str:
    """The status summary as plain text."""
    lines = [f"{status['initiative']}: {status['title']}"]
    for label, text in status_lines(status):
        first, *rest = text.splitlines() or [""]
        lines.append(f"  {label:<10} {first}")
        lines.extend(f"  {'':<10} {more}" for more in rest)
    return "\n".join(lines)


def print_status_rich(status: dict[str, Any]) -> None:
    """Print the status summary with rich on a terminal."""
    from rich.console import Console
    from rich.table import Table

    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    colours = {"active": "green", "completed": "bold green", "paused": "yellow", "error": "red", "failed": "red"}
    for label, text in status_lines(status):
        style = colours.get(status["lifecycle"], "") if label == "lifecycle" else ""
        table.add_row(label, f"[{style}]{_escape(text)}[/]" if style else _escape(text))
    console = Console()
    console.print(f"[bold]{_escape(status['initiative'])}[/]: {_escape(status['title'])}")
    console.print(table)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def print_brief_rich(text: str) -> None:
    """Print the resume brief on a terminal: the heading bold, warnings and the trust block coloured."""
    from rich.console import Console
    from rich.text import Text

    console = Console(highlight=False)
    for line in text.rstrip("\n").split("\n"):
        stripped = line.strip()
        style = ""
        if line.startswith("# "):
            style = "bold"
        elif line.startswith("STOP") or stripped.startswith("fix:"):
            style = "bold red"
        elif "WARNING" in line or line.startswith("Check before you continue"):
            style = "yellow"
        elif line.endswith(":") and not line.startswith(" "):
            style = "bold cyan"
        console.print(Text(line, style=style))
