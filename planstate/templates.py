"""Jinja templates: the built-in ones shipped with planstate and the user's overrides in .planning/templates/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import planstate
from planstate import yamltext
from planstate.errors import UsageError


def builtin_dir() -> Path:
    """The folder of built-in templates: inside the installed package, or at the source root."""
    package = Path(planstate.__file__).resolve().parent
    for candidate in (package / "templates", package.parent / "templates"):
        if candidate.is_dir():
            return candidate
    raise UsageError(f"planstate's templates are missing (looked in {package}/templates)")


def find(name: str, planning: Path | None = None) -> Path:
    """The template file `name`: the user's override when present, else the built-in one."""
    if planning is not None:
        override = planning / "templates" / name
        if override.is_file():
            return override
    path = builtin_dir() / name
    if not path.is_file():
        raise UsageError(f"no template named {name!r}")
    return path


def yaml_inline(value: Any) -> str:
    """Jinja filter: a value as inline YAML that reads back as the same value."""
    return yamltext.flow(value) if isinstance(value, dict | list) else yamltext.scalar(value)


def render(name: str, context: dict[str, Any], planning: Path | None = None) -> str:
    """Render template `name` with `context`; user text in the context is data, never template code."""
    import jinja2

    path = find(name, planning)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(path.parent)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["yaml"] = yaml_inline
    try:
        return env.get_template(path.name).render(**context)
    except jinja2.TemplateError as exc:
        line = getattr(exc, "lineno", None)
        raise UsageError(f"template error: {exc}", file=str(path), line=line) from None
