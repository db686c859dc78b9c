"""SHA-256 and BLAKE2b from Python's built-in implementations, without loading OpenSSL through hashlib.

`import hashlib` loads OpenSSL's library, a few milliseconds that every planstate process would
pay for checksums of a few kilobytes. The built-in modules give the same digests; hashlib is the
fallback where an interpreter was built without them.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any


def _sha256() -> Callable[[bytes], Any]:
    try:
        from _sha2 import sha256  # type: ignore[import-not-found]  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found]  # Python 3.11
        except ImportError:
            from hashlib import sha256
    return sha256  # type: ignore[no-any-return]


def _blake2b() -> Callable[..., Any]:
    try:
        from _blake2 import blake2b
    except ImportError:
        from hashlib import blake2b
    return blake2b


_SHA256 = _sha256()
_BLAKE2B = _blake2b()


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of `data` as lowercase hex."""
    return str(_SHA256(data).hexdigest())


def blake2b_hex(data: bytes, digest_size: int) -> str:
    """The BLAKE2b of `data` with a digest of `digest_size` bytes, as lowercase hex."""
    return str(_BLAKE2B(data, digest_size=digest_size).hexdigest())


def names_and_numbers(names: Iterable[str], numbers: Iterable[Hashable]) -> str:
    """A key of names and numbers, each in order: the BLAKE2b of the names (joined by NUL, which no file name holds),
    and Python's hash of the numbers (integers, or tuples of them: a folder's stat identities) as one tuple.

    Integers hash to themselves in every process (PYTHONHASHSEED changes only the hashes of text), and each step of
    a tuple's hash is one-to-one in the hash of its item, so one number changed (by less than 2**61 - 1) always
    changes it; several changed collide once in 2**64. It costs a tenth of digesting the numbers' bytes, which
    marshalling 17,000 stat identities would need first."""
    joined = "\0".join(names).encode("utf-8", "surrogateescape")
    return f"{blake2b_hex(joined, 16)}-{hash(tuple(numbers)):x}"
