"""A small typed-model layer: typed views over plain dicts, validation with paths, JSON Schema.

Models here are views, not copies: a model wraps the plain dict read from the front matter,
reads and writes go straight to that dict, and keys the schema does not know stay in it.
That is what lets a write change only the fields it meant to change. The value types the
fields hold are in types.py.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableSequence
from typing import Any, ClassVar, Generic, TypeVar, overload

from planstate.model.types import Kind, Nullable, Path, Problem, T, type_name

M = TypeVar("M", bound="Model")


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
            out.append(Problem(path, f"expected a list, got {type_name(value)}"))
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
            out.append(Problem(path, f"expected a mapping, got {type_name(value)}"))
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
            problems.append(Problem(path, f"expected a mapping, got {type_name(value)}"))
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


def field_names(model: type[Model], path: Path) -> list[str]:
    """The names the schema declares at `path` (a mapping's fields), for suggesting one in place of a typo."""
    _field, kind = lookup(model, path) if path else (None, Nested(model))
    while isinstance(kind, Nullable):
        kind = kind.inner
    return list(kind.model.fields) if isinstance(kind, Nested) else []


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
