"""Jinja templates: the built-in ones shipped with planstate and the user's overrides in .planning/templates/."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.core.errors import UsageError
from planstate.core.layout import LOCAL
from planstate.text import yamltext

if TYPE_CHECKING:
    import jinja2

OVERRIDES = "templates"  # the folder of user overrides inside .planning/
BYTECODE = Path(LOCAL) / "cache" / "jinja"  # compiled templates, inside .planning/

# One environment per (folder, sandboxed, bytecode folder) and process, so a long-running process (the watcher)
# compiles each template once.
_environments: dict[tuple[str, bool, str | None], jinja2.Environment] = {}


_builtin: list[Path] = []  # the built-in folder, once found (a write renders several regions)


def builtin_dir() -> Path:
    """The folder of built-in templates: inside the installed package, or at the source root."""
    if _builtin:
        return _builtin[0]
    package = Path(__file__).resolve().parent.parent  # planstate/, above this module's text/
    for candidate in (package / "templates", package.parent / "templates"):
        if candidate.is_dir():
            _builtin.append(candidate)
            return candidate
    raise UsageError(f"planstate's templates are missing (looked in {package}/templates)")


def override_path(name: str, planning: Path | None) -> Path | None:
    """The user's override of template `name` in `.planning/templates/` (same relative path), if there is one.

    Any entry by that name overrides (a symlink or a folder too): reading it then says what is wrong with it,
    rather than the built-in template quietly standing in."""
    if planning is None:
        return None
    override = planning / OVERRIDES / name
    return override if os.path.lexists(override) else None


def find(name: str, planning: Path | None = None) -> Path:
    """The template file `name`: the user's override when present, else the built-in one."""
    override = override_path(name, planning)
    if override is not None:
        return override
    path = builtin_dir() / name
    if not path.is_file():
        raise UsageError(f"no template named {name!r}")
    return path


def source(path: Path, planning: Path | None) -> str:
    """The text of a template file found by `find`: a user's override is read only as a regular file inside the
    workspace (UsageError otherwise, as when loading it), a built-in one as it is."""
    from planstate.core.files import read_bytes

    if planning is not None and (planning / OVERRIDES) in path.parents:
        data = read_bytes(path, planning, planning.parent)
    else:
        data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError("template is not UTF-8 text", file=shown_path(str(path), planning)) from None


def yaml_inline(value: Any) -> str:
    """Jinja filter: a value as inline YAML that reads back as the same value."""
    return yamltext.flow(value) if isinstance(value, dict | list) else yamltext.scalar(value)


def environment(folder: Path, *, sandboxed: bool, bytecode: Path | None = None) -> jinja2.Environment:
    """A Jinja environment loading from `folder`: strict about undefined names, no autoescaping (output is markdown).

    User overrides get a sandboxed environment: a template in a repository is not trusted to run code.
    `bytecode` names a folder where compiled templates are kept between processes (best effort).
    """
    key = (str(folder), sandboxed, str(bytecode) if bytecode is not None else None)
    env = _environments.get(key)
    if env is not None:
        return env
    import jinja2

    options: dict[str, Any] = {
        "loader": _workspace_loader(folder) if sandboxed else jinja2.FileSystemLoader(str(folder)),
        "undefined": jinja2.StrictUndefined,
        "keep_trailing_newline": True,
        "trim_blocks": True,
        "lstrip_blocks": True,
        "autoescape": False,
        "bytecode_cache": _bytecode_cache(bytecode) if bytecode is not None else None,
    }
    if sandboxed:
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        env = ImmutableSandboxedEnvironment(**options)
    else:
        env = jinja2.Environment(**options)
    from planstate.text.filters import FILTERS  # user text made safe for its spot in the markdown

    env.filters.update(FILTERS)
    env.filters["yaml"] = yaml_inline
    _environments[key] = env
    return env


def _workspace_loader(folder: Path) -> jinja2.BaseLoader:
    """A loader of the user's templates that reads only regular files inside the workspace: a repository may
    commit a symlink (or an `{% include %}` of one) pointing at any file of the machine, or a FIFO."""
    import jinja2
    from jinja2.loaders import split_template_path

    from planstate.core.files import read_bytes

    planning = folder.parent

    class WorkspaceLoader(jinja2.BaseLoader):
        def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Any]:
            path = folder.joinpath(*split_template_path(template))
            if not os.path.lexists(path):
                raise jinja2.TemplateNotFound(template)
            data = read_bytes(path, planning, planning.parent)  # refuses what leaves the workspace or is not a file
            try:
                source = data.decode("utf-8")
            except UnicodeDecodeError:
                raise UsageError("template is not UTF-8 text", file=shown_path(str(path), planning)) from None
            mtime = path.stat().st_mtime_ns
            return source, str(path), lambda: path.exists() and path.stat().st_mtime_ns == mtime

    return WorkspaceLoader()


def _bytecode_cache(folder: Path) -> jinja2.BytecodeCache:
    """A bytecode cache in `folder` (inside `.planning/.local/`) that never fails a render and never creates
    `.planning/` itself: a cache that cannot be written is skipped."""
    import jinja2

    planning = folder.parents[2]

    class BestEffortCache(jinja2.FileSystemBytecodeCache):
        def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            try:
                super().load_bytecode(bucket)
            except (OSError, ValueError, EOFError):
                bucket.reset()  # missing, unreadable or torn: compiled anew, as with no cache

        def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            if not planning.is_dir():
                return  # the workspace was deleted or moved meanwhile: do not bring part of it back
            try:
                os.makedirs(self.directory, exist_ok=True)
                super().dump_bytecode(bucket)
            except OSError:
                pass

    return BestEffortCache(str(folder))


def load(name: str, planning: Path | None = None) -> jinja2.Template:
    """The compiled template `name`: the user's override (sandboxed) when present, else the built-in one."""
    import jinja2

    override = override_path(name, planning)
    cache = planning / BYTECODE if planning is not None else None
    if override is not None and planning is not None:
        env = environment(planning / OVERRIDES, sandboxed=True, bytecode=cache)
    else:
        env = environment(builtin_dir(), sandboxed=False, bytecode=cache)
    try:
        return env.get_template(name)
    except jinja2.TemplateSyntaxError as exc:
        shown = shown_path(exc.filename or name, planning)
        raise UsageError(f"template error: {exc.message}", file=shown, line=exc.lineno) from None
    except jinja2.TemplateNotFound:
        raise UsageError(f"no template named {name!r}") from None


def render(name: str, context: dict[str, Any], planning: Path | None = None) -> str:
    """Render template `name` with `context`; user text in the context is data, never template code.

    Any failure of the template (an undefined name, `1/0`, a sandbox refusal, a value too large) is a
    UsageError naming the template file and line: a user's template must never crash a command.
    """
    template = load(name, planning)
    try:
        return template.render(**context)
    except Exception as exc:  # a template can raise anything (1/0, an overflow): the template failed, not planstate
        raise template_failure(exc, template, planning) from None


def template_failure(exc: Exception, template: jinja2.Template, planning: Path | None) -> UsageError:
    """The one-line error for an exception raised while rendering `template`: its file (relative to the project
    when it is the user's), its line, and what went wrong."""
    shown = shown_path(template.filename or template.name or "template", planning)
    return UsageError(f"template error: {describe(exc)}", file=shown, line=error_line(exc, template))


def describe(exc: BaseException) -> str:
    """What went wrong in a template, in words: Jinja's message, else the exception's class and message."""
    import jinja2

    if isinstance(exc, jinja2.TemplateError):
        return str(exc.message if exc.message else exc)
    if isinstance(exc, UsageError):  # a file the template reads was refused: that line says why
        return str(exc)
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def shown_path(filename: str, planning: Path | None) -> str:
    """A template's path for messages: relative to the project folder for the user's overrides (which are loaded
    from `planning`, so the path needs no resolving), else as it is."""
    if planning is not None:
        try:
            return str(Path(filename).relative_to(planning.parent))
        except ValueError:
            pass
    return filename


def error_line(exc: BaseException, template: jinja2.Template) -> int | None:
    """The template line a render error happened on (Jinja maps its frames to template lines), when known."""
    line = getattr(exc, "lineno", None)
    if isinstance(line, int):
        return line
    import traceback

    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if template.filename and frame.filename == template.filename:
            found = frame.lineno
    return found
