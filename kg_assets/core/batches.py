"""Work split into bounded batches: a step that holds a batch's rows in memory holds at most one batch."""

from __future__ import annotations

from collections.abc import Iterable


def batches_by_size(sizes: Iterable[tuple[str, int]], limit: int) -> list[list[str]]:
    """The keys of `sizes` ((key, size) in order) in consecutive batches of at most `limit` in total size; a key
    larger than `limit` alone is a batch of its own, and keys of size 0 ride along (a document without chunks
    still has its old rows replaced). No batches for no keys."""
    batches: list[list[str]] = []
    current: list[str] = []
    total = 0
    for key, size in sizes:
        if current and total + size > limit:
            batches.append(current)
            current, total = [], 0
        current.append(key)
        total += size
    if current:
        batches.append(current)
    return batches
