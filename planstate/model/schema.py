"""A small typed-model layer: typed views over plain dicts, validation with paths, JSON Schema.

Models here are views, not copies: a model wraps the plain dict read from the front matter,
reads and writes go straight to that dict, and keys the schema does not know stay in it.
That is what lets a write change only the fields it meant to change.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, MutableSequence
from datetime import UTC, date, datetime
from typing import Any, ClassVar, Generic, NamedTuple, TypeVar, overload

from planstate.core.clock import parse_datetime

T = TypeVar("T")
M = TypeVar("M", bound="Model")

Path = tuple[str | int, ...]


class Problem(NamedTuple):
    """One validation problem: where (a path into the data) and what."""

    path: Path
    message: str


def _type_name(value: Any) -> str:
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
            out.append(Problem(path, f"expected {self.expects}, got {_type_name(value)}"))

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
            out.append(Problem(path, f"expected a string, got {_type_name(value)}"))
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
            shown = repr(value) if isinstance(value, str) else _type_name(value)
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
            shown = repr(value) if isinstance(value, str) else _type_name(value)
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
            out.append(Problem(path, f"expected {self.expects}, got {_type_name(value)}{_no_such(value, date)}"))

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
        out.append(Problem(path, f"expected {self.describe()}, got {_type_name(value)}"))

    def schema(self) -> dict[str, Any]:
        """Return this kind as a JSON Schema fragment."""
        return {"anyOf": [k.schema() for k in self.kinds]}

    def describe(self) -> str:
        """A short human name of the type, for docs and messages."""
        return " or ".join(k.describe() for k in self.kinds)


class Detached:
    """Where a missing list or mapping will be attached in its parent on first write."""

    def __init__(self, owner: Model, key: str) -> None:
        self.owner = owner
        self.key = key


class ListView(MutableSequence[T]):
    """A typed list over a raw list in the data; a missing list is created on first write."""

    def __init__(self, kind: Kind[T], raw: list[Any] | None, where: Detached | None) -> None:
        self._kind = kind
        self._raw = raw
        self._where = where

    def _items(self) -> list[Any]:
        if self._raw is None and self._where is not None:
            found = self._where.owner._data().get(self._where.key)
            if isinstance(found, list):
                self._raw = found
        return self._raw if self._raw is not None else []

    def _writable(self) -> list[Any]:
        items = self._items()
        if self._raw is None:
            self._raw = items
            if self._where is not None:
                self._where.owner._writable()[self._where.key] = items
        return self._raw

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> MutableSequence[T]: ...
    def __getitem__(self, index: int | slice) -> T | MutableSequence[T]:
        items = self._items()
        if isinstance(index, slice):
            return [self._kind.read(v) for v in items[index]]
        return self._kind.read(items[index], self, index)

    @overload
    def __setitem__(self, index: int, value: T) -> None: ...
    @overload
    def __setitem__(self, index: slice, value: Any) -> None: ...
    def __setitem__(self, index: int | slice, value: Any) -> None:
        items = self._writable()
        if isinstance(index, slice):
            items[index] = [self._kind.write(v) for v in value]
        else:
            items[index] = self._kind.write(value)

    def __delitem__(self, index: int | slice) -> None:
        del self._writable()[index]

    def __len__(self) -> int:
        return len(self._items())

    def __iter__(self) -> Iterator[T]:
        for i, v in enumerate(self._items()):
            yield self._kind.read(v, self, i)

    def insert(self, index: int, value: T) -> None:
        """Insert an item before `index`."""
        self._writable().insert(index, self._kind.write(value))

    def raw(self) -> list[Any]:
        """The underlying plain list (empty when the list does not exist yet)."""
        return self._items()

    def __repr__(self) -> str:
        return f"ListView({self._items()!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ListView):
            return self._items() == other._items()
        return isinstance(other, list) and self._items() == other

    __hash__ = None  # type: ignore[assignment]


class ListOf(Kind[ListView[T]]):
    """A list whose items are all of one kind."""

    def __init__(self, item: Kind[T]) -> None:
        self.item = item

    def check(self, value: Any, path: Path, out: list[Problem]) -> None:
        """Append a Problem to `out` for each way `value` does not fit."""
        if not isinstance(value, list):
            out.append(Problem(path, f"expected a list, got {_type_name(value)}"))
            return
        for i, v in enumerate(value):
            self.item.check(v, (*path, i), out)

    def read(self, raw: Any, owner: Any = None, key: Any = None) -> ListView[T]:
        """Turn raw data into the typed value returned by attribute access."""
        where = Detached(owner, key) if isinstance(owner, Model) and key is not None else None
        return ListView(self.item, raw if isinstance(raw, list) else None, where)

    def write(self, value: Any) -> Any:
        """Turn a typed value into raw data for the dict."""
        if isinstance(value, ListView):
            return list(value.raw())
        return [self.item.write(v) for v in value]

    def schema(self) -> dict[str, Any]:
        """Return this kind as a JSON Schema fragment."""
        return {"type": "array", "items": self.item.schema()}

    def describe(self) -> str:
        """A short human name of the type, for docs and messages."""
        return f"list of {self.item.describe()}"


class MapOf(Kind[dict[str, T]]):
    """A mapping from free-form string keys to values of one kind."""

    def __init__(self, value: Kind[T]) -> None:
        self.value = value

    def check(self, value: Any, path: Path, out: list[Problem]) -> None:
        """Append a Problem to `out` for each way `value` does not fit."""
        if not isinstance(value, dict):
            out.append(Problem(path, f"expected a mapping, got {_type_name(value)}"))
            return
        for k, v in value.items():
            self.value.check(v, (*path, k), out)

    def read(self, raw: Any, owner: Any = None, key: Any = None) -> dict[str, T]:
        """Turn raw data into the typed value returned by attribute access."""
        if isinstance(raw, dict):
            return raw
        if isinstance(owner, Model) and key is not None:
            fresh: dict[str, T] = {}
            owner._writable()[key] = fresh
            return fresh
        return {}

    def schema(self) -> dict[str, Any]:
        """Return this kind as a JSON Schema fragment."""
        return {"type": "object", "additionalProperties": self.value.schema()}

    def describe(self) -> str:
        """A short human name of the type, for docs and messages."""
        return f"mapping of {self.value.describe()}"


class Nested(Kind[M]):
    """A nested model (a mapping with known fields)."""

    def __init__(self, model: type[M]) -> None:
        self.model = model

    def check(self, value: Any, path: Path, out: list[Problem]) -> None:
        """Append a Problem to `out` for each way `value` does not fit."""
        self.model.check_data(value, path, out)

    def read(self, raw: Any, owner: Any = None, key: Any = None) -> M:
        """Turn raw data into the typed value returned by attribute access."""
        if isinstance(raw, dict):
            return self.model(raw)
        where = Detached(owner, key) if isinstance(owner, Model) and key is not None else None
        return self.model(None, where=where)

    def write(self, value: Any) -> Any:
        """Turn a typed value into raw data for the dict."""
        if isinstance(value, Model):
            return value._writable()
        return value

    def schema(self) -> dict[str, Any]:
        """Return this kind as a JSON Schema fragment."""
        return self.model.json_schema()

    def describe(self) -> str:
        """A short human name of the type, for docs and messages."""
        return self.model.__name__


class Field(Generic[T]):
    """A declared field of a model: its kind, whether it is required, its meaning."""

    def __init__(
        self,
        kind: Kind[T],
        doc: str,
        *,
        required: bool = False,
        default: Any = None,
        derived: bool = False,
        example: Any = None,
        key: str | None = None,
        managed: str | None = None,
    ) -> None:
        self.kind = kind
        self.doc = doc
        self.required = required
        self.default = default
        self.derived = derived
        self.managed = managed  # the commands that change it; `set`, `append` and `unset` refuse it
        self.example = example
        self.key = key
        self.name = key or ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = self.key or name

    @overload
    def __get__(self, obj: None, owner: type) -> Field[T]: ...
    @overload
    def __get__(self, obj: Model, owner: type) -> T: ...
    def __get__(self, obj: Model | None, owner: type) -> Field[T] | T:
        if obj is None:
            return self
        data = obj._data()
        raw = data.get(self.name, self.default)
        return self.kind.read(raw, obj, self.name)

    def __set__(self, obj: Model, value: T) -> None:
        obj._writable()[self.name] = self.kind.write(value)


class Model:
    """A typed view over a plain dict; unknown keys stay in the dict untouched."""

    fields: ClassVar[dict[str, Field[Any]]] = {}
    doc: ClassVar[str] = ""

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        collected: dict[str, Field[Any]] = {}
        for base in reversed(cls.__mro__):
            for value in vars(base).values():
                if isinstance(value, Field):
                    collected[value.name] = value
        cls.fields = collected

    def __init__(self, data: dict[str, Any] | None = None, *, where: Detached | None = None) -> None:
        self._raw = data
        self._where = where

    def __setattr__(self, name: str, value: Any) -> None:
        """Set a declared field (or a private attribute); refuse any other name, so a typo is not lost silently."""
        if name.startswith("_") or hasattr(getattr(type(self), name, None), "__set__"):
            object.__setattr__(self, name, value)
            return
        known = sorted(n for n, v in vars_of(type(self)).items() if isinstance(v, Field))
        raise AttributeError(f"{type(self).__name__} has no field {name!r}; its fields: {', '.join(known)}")

    def _data(self) -> dict[str, Any]:
        """The underlying dict, found in the parent when this mapping was attached after the view was made."""
        if self._raw is None and self._where is not None:
            found = self._where.owner._data().get(self._where.key)
            if isinstance(found, dict):
                self._raw = found
        return self._raw if self._raw is not None else {}

    def _writable(self) -> dict[str, Any]:
        data = self._data()
        if self._raw is None:
            self._raw = data
            if self._where is not None:
                self._where.owner._writable()[self._where.key] = data
        return self._raw

    def to_data(self) -> dict[str, Any]:
        """The underlying plain dict (shared, not a copy)."""
        return self._writable()

    def exists(self) -> bool:
        """Tell whether this mapping is present in the data."""
        return self._raw is not None or (
            self._where is not None and isinstance(self._where.owner._data().get(self._where.key), dict)
        )

    def extra(self) -> dict[str, Any]:
        """Keys present in the data that the schema does not declare."""
        return {k: v for k, v in self._data().items() if k not in self.fields}

    @classmethod
    def check_data(cls, value: Any, path: Path = (), out: list[Problem] | None = None) -> list[Problem]:
        """Validate raw data against this model; return (and append to `out`) the problems."""
        problems = out if out is not None else []
        if not isinstance(value, dict):
            problems.append(Problem(path, f"expected a mapping, got {_type_name(value)}"))
            return problems
        for name, field in cls.fields.items():
            if name not in value:
                if field.required:
                    problems.append(Problem((*path, name), "is required"))
                continue
            field.kind.check(value[name], (*path, name), problems)
        return problems

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """Return the JSON Schema of this model."""
        props: dict[str, Any] = {}
        for name, field in cls.fields.items():
            prop = dict(field.kind.schema())
            prop["description"] = field.doc + (" Derived: recomputed on every write." if field.derived else "")
            if field.managed:
                prop["description"] += f" Managed: changed by `{field.managed}`."
            if field.example is not None:
                prop["examples"] = [field.example]
            props[name] = prop
        out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": True}
        required = [n for n, f in cls.fields.items() if f.required]
        if required:
            out["required"] = required
        if cls.doc:
            out["description"] = cls.doc
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data()!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Model) and type(other) is type(self) and self._data() == other._data()

    __hash__ = None  # type: ignore[assignment]


def vars_of(cls: type) -> dict[str, Any]:
    """The attributes a class and its bases define, the subclass's winning."""
    out: dict[str, Any] = {}
    for base in reversed(cls.__mro__):
        out.update(vars(base))
    return out


def lookup(model: type[Model], path: Path) -> tuple[Field[Any] | None, Kind[Any] | None]:
    """Find the declared field and the kind of the value at a data path.

    List indexes and free-map keys are walked through; (None, None) where the schema says nothing.
    """
    current: Kind[Any] | None = Nested(model)
    found: Field[Any] | None = None
    for seg in path:
        while isinstance(current, Nullable):
            current = current.inner
        if isinstance(current, Nested):
            found = current.model.fields.get(str(seg))
            if found is None:
                return None, None
            current = found.kind
        elif isinstance(current, ListOf):
            current = current.item
        elif isinstance(current, MapOf):
            current = current.value
        else:
            return None, None
    return found, current
