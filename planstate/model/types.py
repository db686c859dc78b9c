"""Value types of the schema: how a value of each kind is checked, read, written and described.

Each kind (`Str`, `Int`, `DateTime`, ..., `Nullable`, `OneOf`) checks raw data and says what it
expected; the containers and models that hold values (schema.py) are built on them.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from typing import Any, Generic, NamedTuple, TypeVar

from planstate.core.clock import parse_datetime

T = TypeVar("T")

Path = tuple[str | int, ...]


class Problem(NamedTuple):
    """One validation problem: where (a path into the data) and what."""

    path: Path
    message: str


def type_name(value: Any) -> str:
    """How a problem names the type of a value: `a string`, `null`, `a list`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, datetime):
        return "a timestamp"
    if isinstance(value, date):
        return "a date"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


class Kind(Generic[T]):
    """A value type: how to check raw data, how to read it typed, how to describe it.

    A simple kind declares its `name`, its JSON Schema (`json`) and, for the plain "expected X,
    got Y" problem, what it `expects` and `fits`; kinds with bounds or patterns override `check`
    and `schema`.
    """

    name = ""  # a short human name of the type, for docs and messages
    json: dict[str, Any] = {}  # noqa: RUF012 - read-only, copied by schema()
    expects = ""  # what the problem says was expected: "a number"

    def fits(self, value: Any) -> bool:
        """Tell whether `value` has this kind's type (bounds and patterns aside)."""
        raise NotImplementedError

    def check(self, value: Any, path: Path, out: list[Problem]) -> None:
        """Append a Problem to `out` for each way `value` does not fit."""
        if not self.fits(value):
            out.append(Problem(path, f"expected {self.expects}, got {type_name(value)}"))

    def read(self, raw: Any, owner: Any = None, key: Any = None) -> T:
        """Turn raw data into the typed value returned by attribute access."""
        return raw  # type: ignore[no-any-return]

    def write(self, value: Any) -> Any:
        """Turn a typed value into raw data for the dict."""
        return value

    def schema(self) -> dict[str, Any]:
        """Return this kind as a JSON Schema fragment."""
        return dict(self.json)

    def describe(self) -> str:
        """A short human name of the type, for docs and messages."""
        return self.name

    def parse_text(self, text: str) -> Any:
        """Convert text given on a command line into a raw value (default: as YAML)."""
        return text


class Str(Kind[str]):
    """A string, optionally matching a pattern, of a minimum length."""

    name = "string"

    def __init__(self, pattern: str | None = None, *, hint: str = "", min_length: int = 0) -> None:
        self.pattern = re.compile(pattern) if pattern else None
        self.hint = hint
        self.min_length = min_length

    def check(self, value: Any, path: Path, out: list[Problem]) -> None:
        """Append a Problem to `out` for each way `value` does not fit."""
        if not isinstance(value, str):
            out.append(Problem(path, f"expected a string, got {type_name(value)}"))
        elif len(value) < self.min_length:
            out.append(Problem(path, "must not be empty"))
        elif self.pattern and not self.pattern.fullmatch(value):
            out.append(Problem(path, f"{value!r} does not match {self.hint or self.pattern.pattern}"))

    def schema(self) -> dict[str, Any]:
        """Return this kind as a JSON Schema fragment."""
        out: dict[str, Any] = {"type": "string"}
        if self.pattern:
            out["pattern"] = f"^(?:{self.pattern.pattern})$"
        if self.min_length:
            out["minLength"] = self.min_length
        return out


class Enum(Kind[str]):
    """One of a fixed set of strings."""

    def __init__(self, *values: str) -> None:
        self.values = values
        self.name = " | ".join(values)

    def check(self, value: Any, path: Path, out: list[Problem]) -> None:
        """Append a Problem to `out` for each way `value` does not fit."""
        if value not in self.values or not isinstance(value, str):
            shown = repr(value) if isinstance(value, str) else type_name(value)
            out.append(Problem(path, f"{shown} is not one of: {', '.join(self.values)}"))

    def schema(self) -> dict[str, Any]:
        """Return this kind as a JSON Schema fragment."""
        return {"type": "string", "enum": list(self.values)}


class Int(Kind[int]):
    """An integer within optional bounds."""

    name = "integer"
    expects = "an integer"

    def __init__(self, minimum: int | None = None, maximum: int | None = None) -> None:
        self.minimum = minimum
        self.maximum = maximum

    def fits(self, value: Any) -> bool:
        """Tell whether `value` is an integer (a boolean is not)."""
        return isinstance(value, int) and not isinstance(value, bool)

    def check(self, value: Any, path: Path, out: list[Problem]) -> None:
        """Append a Problem to `out` for each way `value` does not fit."""
        if not self.fits(value):
            super().check(value, path, out)
        elif self.minimum is not None and value < self.minimum:
            out.append(Problem(path, f"{value} is less than {self.minimum}"))
        elif self.maximum is not None and value > self.maximum:
            out.append(Problem(path, f"{value} is more than {self.maximum}"))

    def schema(self) -> dict[str, Any]:
        """Return this kind as a JSON Schema fragment."""
        out: dict[str, Any] = {"type": "integer"}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        return out


class Number(Kind[float]):
    """An integer or a float."""

    name = "number"
    json = {"type": "number"}  # noqa: RUF012
    expects = "a number"

    def fits(self, value: Any) -> bool:
        """Tell whether `value` is a number (a boolean is not)."""
        return isinstance(value, int | float) and not isinstance(value, bool)


class Bool(Kind[bool]):
    """true or false."""

    name = "boolean"
    json = {"type": "boolean"}  # noqa: RUF012
    expects = "true or false"

    def fits(self, value: Any) -> bool:
        """Tell whether `value` is true or false."""
        return isinstance(value, bool)


class DateTime(Kind[datetime]):
    """An ISO 8601 timestamp (UTC when no offset is given)."""

    name = "timestamp"
    json = {"type": "string", "format": "date-time"}  # noqa: RUF012

    def check(self, value: Any, path: Path, out: list[Problem]) -> None:
        """Append a Problem to `out` for each way `value` does not fit."""
        if isinstance(value, bool) or parse_datetime(value) is None:
            shown = repr(value) if isinstance(value, str) else type_name(value)
            out.append(Problem(path, f"expected an ISO 8601 timestamp, got {shown}{_no_such(value, datetime)}"))

    def read(self, raw: Any, owner: Any = None, key: Any = None) -> datetime:
        """Turn raw data into the typed value returned by attribute access."""
        parsed = parse_datetime(raw)
        if parsed is None:
            raise ValueError(f"not a timestamp: {raw!r}")
        return parsed

    def write(self, value: Any) -> Any:
        """Turn a typed value into raw data for the dict."""
        if isinstance(value, datetime) and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


class Date(Kind[date]):
    """A calendar date (YYYY-MM-DD)."""

    name = "date"
    json = {"type": "string", "format": "date"}  # noqa: RUF012
    expects = "a date (YYYY-MM-DD)"

    def check(self, value: Any, path: Path, out: list[Problem]) -> None:
        """Append a Problem to `out` for each way `value` does not fit."""
        if not self.fits(value):
            out.append(Problem(path, f"expected {self.expects}, got {type_name(value)}{_no_such(value, date)}"))

    def fits(self, value: Any) -> bool:
        """Tell whether `value` is a date, or text that reads as one."""
        if isinstance(value, date):
            return True
        if isinstance(value, str):
            try:
                date.fromisoformat(value.strip())
            except ValueError:
                return False
            return True
        return False

    def read(self, raw: Any, owner: Any = None, key: Any = None) -> date:
        """Turn raw data into the typed value returned by attribute access."""
        if isinstance(raw, datetime):
            return raw.date()
        if isinstance(raw, date):
            return raw
        return date.fromisoformat(str(raw).strip())


def _no_such(value: Any, kind: type[date]) -> str:
    """Why text shaped like a date or timestamp is none (`2026-02-30`: " (day is out of range for month)")."""
    if not isinstance(value, str):
        return ""
    try:
        kind.fromisoformat(value.strip())
    except ValueError as exc:
        reason = str(exc)
        return "" if reason.startswith("Invalid isoformat") else f" ({reason})"
    return ""


class Scalar(Kind[Any]):
    """Any single value: string, number, boolean, date or null."""

    name = "scalar"
    json = {"type": ["string", "number", "boolean", "null"]}  # noqa: RUF012
    expects = "a single value"

    def fits(self, value: Any) -> bool:
        """Tell whether `value` is a single value, not a mapping or list."""
        return not isinstance(value, dict | list)


class Nullable(Kind[T | None]):
    """A value of another kind, or null."""

    def __init__(self, inner: Kind[T]) -> None:
        self.inner = inner

    def check(self, value: Any, path: Path, out: list[Problem]) -> None:
        """Append a Problem to `out` for each way `value` does not fit."""
        if value is not None:
            self.inner.check(value, path, out)

    def read(self, raw: Any, owner: Any = None, key: Any = None) -> T | None:
        """Turn raw data into the typed value returned by attribute access."""
        return None if raw is None else self.inner.read(raw, owner, key)

    def write(self, value: Any) -> Any:
        """Turn a typed value into raw data for the dict."""
        return None if value is None else self.inner.write(value)

    def schema(self) -> dict[str, Any]:
        """Return this kind as a JSON Schema fragment."""
        inner = self.inner.schema()
        if "type" in inner and "enum" not in inner and isinstance(inner["type"], str):
            return {**inner, "type": [inner["type"], "null"]}
        return {"anyOf": [inner, {"type": "null"}]}

    def describe(self) -> str:
        """A short human name of the type, for docs and messages."""
        return f"{self.inner.describe()} or null"


class OneOf(Kind[Any]):
    """A value matching any of several kinds."""

    def __init__(self, *kinds: Kind[Any]) -> None:
        self.kinds = kinds

    def check(self, value: Any, path: Path, out: list[Problem]) -> None:
        """Append a Problem to `out` for each way `value` does not fit."""
        for kind in self.kinds:
            probe: list[Problem] = []
            kind.check(value, path, probe)
            if not probe:
                return
        out.append(Problem(path, f"expected {self.describe()}, got {type_name(value)}"))

    def schema(self) -> dict[str, Any]:
        """Return this kind as a JSON Schema fragment."""
        return {"anyOf": [k.schema() for k in self.kinds]}

    def describe(self) -> str:
        """A short human name of the type, for docs and messages."""
        return " or ".join(k.describe() for k in self.kinds)
