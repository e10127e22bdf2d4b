"""In which order the engine sends a run's chunks: grouped by document, in chunk order inside each (working memory
carries a document's names from one chunk to the next), and the documents taken in turns."""

from __future__ import annotations

from collections.abc import Callable, Sequence


def by_document(items: Sequence, row_of: Callable[[object], dict]) -> list[list]:
    """Items grouped by their row's document (first-seen order), each group in chunk order."""
    groups: dict[str, list] = {}
    for item in items:
        groups.setdefault(row_of(item)["document_id"], []).append(item)
    return [sorted(group, key=lambda item: row_of(item).get("chunk_index") or 0) for group in groups.values()]


def round_robin(groups: Sequence[Sequence]) -> list:
    """The first item of every group, then the second of every group, and so on."""
    order = []
    for rank in range(max((len(g) for g in groups), default=0)):
        order.extend(group[rank] for group in groups if rank < len(group))
    return order
