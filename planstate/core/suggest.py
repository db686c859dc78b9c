"""\"Did you mean\": the known word closest to a mistyped one, for every message about an unknown name."""

from __future__ import annotations

from collections.abc import Iterable


def closest(word: str, known: Iterable[str]) -> str | None:
    """The known word that `word` most likely misspells (difflib's ratio of at least 0.6), or None."""
    import difflib

    found = difflib.get_close_matches(word, [k for k in known if k != word], n=1, cutoff=0.6)
    return found[0] if found else None


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """`; did you mean 'X'?` to end a message about the unknown `word`, or nothing when no known word is close."""
    found = closest(word, known)
    return f"; did you mean {found!r}?" if found is not None else ""
