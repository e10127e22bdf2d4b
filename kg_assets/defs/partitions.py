"""The `documents` dynamic partitions and batching of partition keys into few runs."""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

documents_partitions = dg.DynamicPartitionsDefinition(name="documents")

# What a run over some documents materializes, and what consolidates all of them afterwards.
PARTITIONED_ASSETS = ("documents", "chunks", "entity_mentions", "local_relations", "messages", "message_facts")
CONSOLIDATION_ASSETS = ("linked_entities", "knowledge_graph", "entity_attributes", "user_facts", "chat_users")

# Public Dagster run tags: a run over a partition key range materializes every key in it at once.
RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"

# Assets of one document partition batch, in one run each time: never one run per document.
single_run = dg.BackfillPolicy.single_run()


def partition_ranges(keys: Sequence[str], ordered_keys: Sequence[str], max_ranges: int = 8) -> list[tuple[str, str]]:
    """Contiguous (first, last) ranges of `keys` in partition order, at most `max_ranges` of them.

    New documents are appended to the partitions, so they form one range; scattered edits may form
    several. Past `max_ranges`, the closest ranges are joined: the extra documents in a joined gap are
    unchanged and cost little (extraction reuses every chunk it already did).
    """
    position = {key: i for i, key in enumerate(ordered_keys)}
    indexes = sorted({position[k] for k in keys if k in position})
    if not indexes:
        return []
    spans = [[indexes[0], indexes[0]]]
    for index in indexes[1:]:
        if index == spans[-1][1] + 1:
            spans[-1][1] = index
        else:
            spans.append([index, index])
    while len(spans) > max_ranges:
        gap = min(range(len(spans) - 1), key=lambda i: spans[i + 1][0] - spans[i][1])
        spans[gap : gap + 2] = [[spans[gap][0], spans[gap + 1][1]]]
    return [(ordered_keys[a], ordered_keys[b]) for a, b in spans]


def range_tags(first: str, last: str) -> dict[str, str]:
    return {RANGE_START_TAG: first, RANGE_END_TAG: last}
