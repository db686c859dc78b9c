"""The page memo of list commands: the newest page of a kind's records, answered again while its folder is unchanged.

`decision list`, `blocker list` and `session list` use it. `decision list` at 10,000 decisions spent
most of its time ordering every summary to show 50. The page (the names of the records shown, in
order, and how many older ones match) depends only on the files of the kind's folder (its `archive/`
aside) and on the list's options, so it is kept as a memo (store/memo.py) keyed by the stat identity
of every entry of that folder and of planstate's own files, under a label naming the options. A list
whose window depends on the clock (`since`), that takes archived records, or that met a file it
could not read or a record that does not validate is not memoized. The records shown are read as a
list without memo reads them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.memo import Inputs


class Page(NamedTuple):
    """The records a list shows (file names, in order) and how many older ones match."""

    names: list[str]
    more: int


def _name(folder: Path, label: str) -> str:
    """The memo of the list `label` of one folder."""
    from planstate.core.digests import blake2b_hex

    return "list-" + blake2b_hex(repr((str(folder), label)).encode("utf-8"), 6)


def recall(ctx: Context, folder: Path, label: str) -> tuple[Inputs | None, Page | None]:
    """The key of `folder` now (None when it cannot have one), and the page the memo of the list `label` keeps
    under it (None when it keeps none that can be trusted)."""
    from planstate.core.layout import ARCHIVE
    from planstate.store import memo

    key = memo.folder_inputs(folder, label, leave_out=ARCHIVE)
    if key is None:
        return None, None
    kept: Any = memo.recall(ctx.root, _name(folder, label), key)
    try:
        names, more = kept["names"], kept["more"]
    except (KeyError, TypeError):
        return key, None
    if not isinstance(more, int) or not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return key, None
    return key, Page(names, more)


def keep(ctx: Context, folder: Path, label: str, key: Inputs, page: Page) -> None:
    """Keep `page` as the memo of the list `label` of `folder` under the key taken before the folder was read."""
    from planstate.store import memo

    memo.remember(ctx.root, _name(folder, label), key, {"names": page.names, "more": page.more})
