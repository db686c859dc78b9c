"""The workspace as the layers below the API see it: its folder, who acts, the lock, the store, the target, writes.

`Workspace` (the public API) holds one `Context` and hands it to operations, renderers and checks;
they never receive the public object. Regions are a view above this layer, so the API passes in
the function that re-renders them (`Regions`) instead of this module importing the renderer.
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.core.errors import NoWorkspace, PlanstateError, UsageError
from planstate.core.files import absolute, read_bytes, real_target
from planstate.core.layout import INITIATIVES, LOCAL, PLANNING
from planstate.core.lock import WorkspaceLock, check_timeout
from planstate.model.kinds import RECORD_FOLDERS, RECORD_KINDS
from planstate.text.document import Document

if TYPE_CHECKING:
    from planstate.store.cache import Facets, Store
    from planstate.store.folders import Vouched
    from planstate.store.initiatives import Initiative, Summary
    from planstate.store.transaction import Transaction


class Regions(NamedTuple):
    """How STATE.md's generated regions are rendered, given by the layer that owns them."""

    # re-render before a write of an existing STATE.md; its record regions only for the record kinds given (all: None)
    refresh: Callable[[Context, Document, Initiative, Collection[str] | None], None]
    render_new: Callable[[Document, Path | None], None]  # render a new STATE.md (the planning folder's overrides)


class Context:
    """A `.planning/` folder with who acts in it, its lock, its store and the initiative acted on."""

    def __init__(
        self,
        root: str | Path,
        *,
        regions: Regions,
        lock_timeout: float | None = None,
        initiative: str | None = None,
        actor: str | None = None,
    ) -> None:
        self.root = absolute(root)
        self._root_text = str(self.root)
        parent = str(self.root.parent)
        self._base_text = parent if parent.endswith(os.sep) else parent + os.sep  # what `display` strips
        self.regions = regions
        self.initiative_slug = initiative
        self._actor = actor  # the name given; resolved on first use (`actor`), so a read never asks git
        self._resolved_actor: str | None = None
        self._target: Initiative | None = None
        self._guessed: tuple[str, ...] = ()  # the candidates, when no initiative is active and several could be meant
        self._writing = 0  # depth of open transactions that act on the target
        self._depth = 0  # depth of open transactions
        self._vouching = 0  # depth of open `vouching` scopes
        # The record folders a scan vouched for in the open `vouching` scope (absolute folder -> store/folders
        # .Vouched): scanned once; a transaction's commit keeps the rows of those it wrote into up to date.
        self.vouched: dict[Path, Vouched] = {}
        self._store: Store | None = None
        self._prefetched: dict[Path, tuple[bytes, bool, Document]] = {}  # see transaction()
        # The records a committing transaction is about to write (absolute path -> data): the regions it
        # renders for STATE.md must show them, though they are not on disk yet (recordfiles.load_all).
        self.pending: dict[Path, dict[str, Any]] = {}
        # The record files it is about to move to an archive folder (absolute paths): the regions no longer show them.
        self.leaving: set[Path] = set()
        timeout = lock_timeout
        if timeout is None and os.environ.get("PLANSTATE_LOCK_TIMEOUT"):
            try:
                timeout = check_timeout(float(os.environ["PLANSTATE_LOCK_TIMEOUT"]))
            except (ValueError, UsageError):
                raise UsageError("PLANSTATE_LOCK_TIMEOUT must be a number of seconds >= 0") from None
        self.lock = WorkspaceLock(self.root / LOCAL / "lock", timeout)

    @property
    def actor(self) -> str:
        """Who acts, recorded in the history and in new records (core/actor.py has the order)."""
        if self._resolved_actor is None:
            from planstate.core.actor import resolve

            self._resolved_actor = resolve(self._actor, self.root)
        return self._resolved_actor

    # ------------------------------------------------------------ the initiative acted on

    @property
    def target(self) -> Initiative:
        """The initiative acted on: the one named, else the active one (see initiatives.py)."""
        if self._target is None:
            from planstate.store.initiatives import choose

            choice = choose(self, self.initiative_slug)
            self._target, self._guessed = choice.initiative, choice.guessed
            self.save_cache()
        if self._writing and self._guessed:
            raise self._unsure()
        return self._target

    def _unsure(self) -> UsageError:
        """The refusal of a write whose target was only guessed: no initiative is active and several could be meant."""
        return UsageError(
            f"no initiative is active (initiatives: {', '.join(self._guessed)}); name one with initiative=SLUG",
            argument="initiative",
        )

    def forget_target(self) -> None:
        """Choose the target initiative again on next use (after a command changed which one is active)."""
        if self.initiative_slug is None:
            self._target = None
            self._guessed = ()

    @property
    def state_path(self) -> Path:
        """The STATE.md of the initiative acted on."""
        return self.target.state_path

    # ------------------------------------------------------------ reading

    def display(self, path: Path) -> str:
        """A path as shown to people: relative to the project folder that holds `.planning/`."""
        text, base = str(path), self._base_text
        if text.startswith(base) and len(text) > len(base):
            return text[len(base) :]  # the common case, without pathlib's cost (17,000 files a check)
        try:
            return str(path.relative_to(self.root.parent))
        except ValueError:
            return str(path)

    def read_document(self, path: Path, *, oversize: bool = False) -> Document:
        """Read and parse one workspace file (`oversize`: also a front matter over the size limit, see Document)."""
        data = read_bytes(path, self.root, self.root.parent)
        early = self._prefetched.pop(path.absolute(), None)
        if early is not None and early[:2] == (data, oversize):
            return early[2]  # parsed before the lock was taken, from the very bytes read now
        return Document.from_bytes(data, self.display(path), repair=oversize)

    def read_known_document(self, path: Path, data: bytes | None = None) -> Document:
        """Read one workspace file whose front matter comes through the store (`cached_parse`): its body can be
        changed and written, and its YAML is parsed only if its front matter is edited or located (a record write
        that renders STATE.md's regions parses no YAML). `data`: its bytes, when the caller has read them."""
        if data is None:
            data = read_bytes(path, self.root, self.root.parent)
        shown = self.display(path)
        known = self.cached_parse(path, data, lambda raw: _front_matter(raw, shown))
        return Document.from_bytes(data, shown, known=known)

    def _prefetch(self, path: Path, oversize: bool) -> None:
        """Parse `path` ahead of taking the lock; `read_document` uses the parse if the file is unchanged by then.

        Parsing STATE.md is most of a write's work: done before the lock, it shortens the time other writers wait."""
        try:
            data = read_bytes(path, self.root, self.root.parent)
            self._prefetched[path.absolute()] = (
                data,
                oversize,
                Document.from_bytes(data, self.display(path), repair=oversize),
            )
        except (OSError, PlanstateError):
            pass  # read again under the lock, which reports it

    def state_document(self) -> Document:
        """The parsed STATE.md of the initiative acted on (front matter not yet validated)."""
        doc = self.read_document(self.state_path)
        doc.require_front_matter()
        return doc

    def cached_data(self, path: Path) -> Any:
        """The front matter of a workspace file as plain data: from the store while the file's stat identity vouches
        for it, else read and parsed once per content of the file (see cache.py)."""
        from planstate.store.cache import MISS
        from planstate.store.scan import IDENTITY

        store = self.store
        key = self.cache_key(path)
        identity = None
        with suppress(OSError, PlanstateError):
            info = os.stat(real_target(path, self.root, self.root.parent))
            if stat.S_ISREG(info.st_mode):
                identity = IDENTITY(info)  # taken before reading: a change after it shows next time
                known = store.known(key, identity)
                if known is not MISS:
                    return known
        data = read_bytes(path, self.root, self.root.parent)
        return store.get(data, key, self.parser(path), identity, _summarizer(path))

    def cached_parse(
        self, path: Path, raw: bytes, parse: Callable[[bytes], Any], identity: tuple[int, ...] | None = None
    ) -> Any:
        """The front matter of `raw` (the bytes of `path` already read; `identity`, its stat identity taken before
        reading), from the store when this content was parsed before, else `parse(raw)`, which is then kept."""
        ident = identity if identity is not None and len(identity) == 5 else None
        return self.store.get(raw, self.cache_key(path), parse, ident, _summarizer(path))

    def parser(self, path: Path) -> Callable[[bytes], Any]:
        """How a planning file's bytes become its front matter (the fast C path when it vouches, else round trip)."""
        shown = self.display(path)
        return lambda raw: _front_matter(raw, shown)

    def remember(self, path: Path, content: bytes, data: Any) -> None:
        """Keep in the store the data of a file this process just wrote (as `content`); its stat identity is taken
        by the next read, which compares the digest of its bytes once (an identity taken now could be that of an
        edit made right after the write)."""
        self.store.put(content, self.cache_key(path), data, None, _summarizer(path))

    def mark_clean(self, path: Path, identity: tuple[int, ...] | None, version: str) -> None:
        """Note in the store that the per-file rules of `version` found nothing in the bytes of `path` read with
        `identity`."""
        self.store.mark_clean(self.cache_key(path), identity, version)  # type: ignore[arg-type]

    def record_summary(self, path: Path) -> list[Any] | None:
        """The summary the store keeps with a record file's data as last read (recordfiles.summary_values: id,
        order, status, fingerprint, problem, unknown keys); None when it keeps none."""
        import json

        row = self.store.row(self.cache_key(path))
        text = row.summary if row is not None else None
        try:
            found = json.loads(text) if text is not None else None
        except ValueError:
            return None
        return found if isinstance(found, list) and len(found) == 6 else None  # another shape: as if none

    def save_cache(self) -> bool:
        """Write what reading put in the store (best effort); tell whether all of it is saved."""
        return self._store.save() if self._store is not None else True

    @property
    def store(self) -> Store:
        """The workspace's store (store/cache.py), opened on first use."""
        if self._store is None:
            from planstate.store.cache import Store

            self._store = Store(self.root / LOCAL / "cache")
        return self._store

    def cache_key(self, path: Path) -> str:
        """The store's name of a file: its path inside the workspace, `/`-separated."""
        text, root = str(path), self._root_text
        if text.startswith(root) and text[len(root) : len(root) + 1] == os.sep:
            return text[len(root) + 1 :]  # the common case, without pathlib's cost (17,000 files a check)
        try:
            return str(path.absolute().relative_to(self.root))
        except ValueError:
            return str(path)

    def files(self) -> list[tuple[str, Path]]:
        """Every planning file of every initiative with its kind: each STATE.md first, then its records (archived
        ones after those of their kind)."""
        from planstate.store import recordfiles
        from planstate.store.initiatives import discover

        out: list[tuple[str, Path]] = []
        for initiative in discover(self.root):
            out.append(("state", initiative.state_path))
            for kind in RECORD_FOLDERS:
                out.extend((kind, p) for p in recordfiles.files(initiative.folder(kind)))
                out.extend((kind, p) for p in recordfiles.files(initiative.archive(kind)))
            if initiative.history_path.exists():
                out.append(("history", initiative.history_path))
        return out

    def initiative_problems(self) -> list[PlanstateError]:
        """Workspace-wide rules: at most one active initiative; a sub-initiative's folder matches its slug."""
        from planstate.store.initiatives import discover, summarize

        summaries = [summarize(self, i) for i in discover(self.root)]
        self.save_cache()
        return self._extra_actives(summaries) + self._folders_not_slugs(summaries)

    def _extra_actives(self, summaries: list[Summary]) -> list[PlanstateError]:
        """Every active initiative after the first: at most one may be active."""
        active = [s for s in summaries if s.state == "active"]
        out = []
        for extra in active[1:]:
            others = ", ".join(s.slug for s in active if s is not extra)
            message = f"is active, but so is {others}; at most one initiative may be active"
            out.append(self._located(extra.initiative.state_path, "lifecycle.state", message))
        return out

    def _folders_not_slugs(self, summaries: list[Summary]) -> list[PlanstateError]:
        """Initiatives in `initiatives/` whose STATE.md names another slug than their folder."""
        out = []
        for s in summaries:
            data = self.cached_data(s.initiative.state_path) if s.problem is None else None
            slug = data.get("initiative") if isinstance(data, dict) else None
            folder = s.initiative.folder_slug
            if folder is not None and isinstance(slug, str) and slug != folder:
                message = f"is {slug!r} but the folder is {INITIATIVES}/{folder}/; they must match"
                out.append(self._located(s.initiative.state_path, "initiative", message))
        return out

    def _located(self, path: Path, field: str, message: str) -> PlanstateError:
        """An error at `field` of the file at `path`, with its line and column."""
        doc = self.read_document(path)
        line, col = doc.locate(field)
        return PlanstateError(message, file=doc.path, line=line, column=col, field=field)

    # ------------------------------------------------------------ writing

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the workspace lock (re-entrant) for a write that needs no transaction."""
        with self.lock:
            yield

    @contextmanager
    def transaction(
        self, *, explicit: bool = False, oversize: bool = False, state: bool = True
    ) -> Iterator[Transaction]:
        """A write: hold the lock, let the caller load and change files, then validate and write them all.

        Nothing is written when the body raises or any changed file fails validation. See transaction.py.
        Refused when no initiative is active and the target would be a guess among several: a write
        must name its initiative, reads may still show the most recently changed one.
        `explicit=True` is for operations that name every initiative they change themselves
        (`initiative new`, `initiative switch`): the target, guessed or not, plays no part.
        `oversize=True` reads files over the front-matter size limit, for the writes that can shorten them
        (`set`, `unset`); what they write must still meet the limit.
        `state=False` is for record writes, which never load STATE.md and only render its regions: STATE.md is then
        not parsed ahead of the lock.
        """
        from planstate.store.transaction import Transaction

        guarded = not explicit
        if guarded and state and not self._writing:
            unchosen = self._target is None
            with suppress(PlanstateError):  # the body meets the same error where it needs the target
                self._prefetch(self.target.state_path, oversize)
            if unchosen:
                self.forget_target()  # chosen again under the lock: a writer may switch the active initiative meanwhile
        if guarded and self._target is not None and self._guessed:
            raise self._unsure()
        with self.lock:
            self._writing += guarded
            self._depth += 1
            self.vouched = {}  # what was scanned before the lock was taken is scanned again under it
            try:
                with self.vouching():
                    tx = Transaction(self, oversize=oversize)
                    yield tx
                    tx.commit()
            finally:
                self._writing -= guarded
                self._depth -= 1
                self.vouched = {}  # the write may have changed what an outer scope scanned
                self._prefetched.clear()

    @contextmanager
    def vouching(self) -> Iterator[None]:
        """Scan each record folder at most once while this lasts (store/folders.vouch): an operation that reads a
        folder several ways (a check, a write's region refresh) takes one scan of it."""
        self._vouching += 1
        try:
            yield
        finally:
            self._vouching -= 1
            if not self._vouching:
                self.vouched = {}

    @property
    def keeps_vouched(self) -> bool:
        """Whether a `vouching` scope is open (a scan of a folder is then taken once)."""
        return self._vouching > 0

    def refresh_regions(self, doc: Document, initiative: Initiative, touched: Collection[str] | None = None) -> None:
        """Re-render STATE.md's generated regions before a write; a body without region markers costs nothing.

        `touched`: the record kinds the write changes. A region showing records of another kind cannot change
        with it and is left as it is, so a write of STATE.md alone reads no record (`render` and `check` still
        see a region made stale behind planstate's back)."""
        if "planstate:begin" in doc.body:
            self.regions.refresh(self, doc, initiative, touched)

    def render_new_regions(self, doc: Document) -> None:
        """Render the generated regions of a new STATE.md made in this workspace (its template overrides apply)."""
        self.regions.render_new(doc, self.root)


def locate(explicit: str | Path | None, start: str | Path | None) -> tuple[Path, str | None]:
    """The `.planning/` folder to work in and the initiative its path selects: `explicit` (or PLANSTATE_DIR),
    else `.planning/` in `start` (default: the current folder) or a parent."""
    given = explicit if explicit is not None else os.environ.get("PLANSTATE_DIR") or None
    if given is not None:
        path = absolute(given)
        try:
            planning, selected = _planning_of(path)
            what = "no such folder" if not path.exists() else "not a .planning/ folder, not in one, holds none"
        except OSError as exc:  # a name longer than the system allows, a folder that cannot be searched
            planning, selected, what = None, None, exc.strerror or type(exc).__name__
        if planning is None:
            raise NoWorkspace(path, what)
        return planning, selected
    here = absolute(start if start is not None else ".")
    found = nearest(here)
    if found is not None:
        return found, None
    raise NoWorkspace(here)


def nearest(folder: Path) -> Path | None:
    """The `.planning/` folder in `folder` or the nearest of its parents that has one."""
    for candidate in (folder, *folder.parents):
        if (candidate / PLANNING).is_dir():
            return candidate / PLANNING
    return None


def _planning_of(path: Path) -> tuple[Path | None, str | None]:
    """The `.planning/` folder a given path names, and the initiative it selects (inside `initiatives/<slug>/`)."""
    if not path.is_dir():
        return None, None
    for candidate in (path, path.resolve()):
        if candidate.name == PLANNING:
            return candidate, None
        if (candidate / PLANNING).is_dir():
            return candidate / PLANNING, None
        for folder in candidate.parents:
            if folder.name == PLANNING and folder.is_dir():
                inside = candidate.relative_to(folder).parts
                return folder, inside[1] if len(inside) >= 2 and inside[0] == INITIATIVES else None
    return None, None


def _summarizer(path: Path) -> Callable[[Any], Facets] | None:
    """How the store summarizes a record file's front matter (by its folder's kind): its facets; None for other
    files."""
    kind = RECORD_KINDS.get(path.parent.name)
    if kind is None:
        return None
    facets = _facets()
    return lambda data: facets(kind, path, data)


@functools.cache
def _facets() -> Callable[[str, Path, Any], Facets]:
    """recordfiles.facets, imported once (an import inside a function costs microseconds on every call, and a cold
    check summarizes 17,000 records)."""
    from planstate.store.recordfiles import facets

    return facets


def _front_matter(raw: bytes, shown: str) -> Any:
    """Parse a planning file's bytes and return its front matter as plain data: through the fast C path when it
    vouches for the file (text/fastyaml.py), else the round-trip parser, which reports any error in place."""
    from planstate.text.fastyaml import MISS, front_matter_data

    fast = front_matter_data(raw)
    if fast is not MISS:
        return fast
    doc = Document.from_bytes(raw, shown)
    doc.require_front_matter()
    return doc.data
