"""The lowest layer: time, ids, durations, digests, safe file I/O, the lock, git calls, errors."""
