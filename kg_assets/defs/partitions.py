"""Arrival-day partitions, the run scope, and the one function that says which documents a run covers.

Per-document assets are partitioned by the UTC day a document first arrived (`YYYY-MM-DD`), recorded in
`kg.documents.arrival_day`. The keys are dynamic: a day becomes a partition only when it brings documents,
so the UI lists as many partitions as there were days with arrivals, and never one per document. A run
over some days processes, by default, every document of those days; its `scope` run config narrows that
to a list (what the planner does for a few changed files, and what a user does to reprocess one file).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime

import dagster as dg
import polars as pl
from pydantic import Field

from kg_assets.core.isolation import DocumentFailure, failures_frame
from kg_assets.defs.tables import markdown_table
from kg_assets.storage.warehouse import Warehouse

arrival_days = dg.DynamicPartitionsDefinition(name="arrival_days")

# What the UI says of these partitions: a DynamicPartitionsDefinition has no description of its own, so every
# asset partitioned by arrival day carries this in its description (`describe_arrival_days`).
ARRIVAL_DAYS_DESCRIPTION = (
    "**Partitions: arrival days.** A partition key is the UTC day, `YYYY-MM-DD`, on which documents first "
    "arrived in the inbox (`kg.documents.arrival_day`); a run over a key processes that day's documents. "
    "Keys appear as days bring documents (the inbox sensor, the nightly schedule and `kg run` add them); a key "
    "that is not such a day, or a day still to come, is refused.")
ARRIVAL_DAY_KEY = "{day}: an arrival day, the UTC day on which these documents first arrived in the inbox"

# What a run over some days materializes per partition, and what consolidates all of them afterwards.
PARTITIONED_ASSETS = ("documents", "chunks", "entity_mentions", "local_relations", "attribute_observations",
                      "chunk_extractions", "llm_calls", "messages", "message_facts", "fact_extractions")
CONSOLIDATION_ASSETS = ("linked_entities", "entity_aliases", "entity_summaries", "graph_nodes", "graph_edges",
                        "entity_attributes", "attribute_supersessions", "user_facts", "chat_users")

# Public Dagster run tags: a run over a partition key range materializes every key in it at once.
RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"


def partitioned(pool: str | None) -> dict[str, object]:
    """What every per-document asset and multi_asset declares: the arrival days, and the pool of its step
    (`defs/pools.py`). Assets of several days batch into one run each time (single-run backfills)."""
    return {"partitions_def": arrival_days, "backfill_policy": dg.BackfillPolicy.single_run(), "pool": pool}


class RunScope(dg.ConfigurableResource):
    """Which documents of the run's arrival days this run processes (launchpad: resources.scope.config)."""

    documents: list[str] | None = Field(
        None, description="only these document ids (inbox-relative paths); unset: every document of the run's days. "
        "A listed file the warehouse has not seen yet arrives on the run's last day.")
    take_new: bool = Field(
        False, description="also take every inbox file the warehouse has not seen yet, as arrivals of the run's "
        "last day (the planner sets it instead of listing thousands of new files)")

    redo_extraction: bool = Field(
        False, description="re-extract these documents' chunks even where the same extractor version already "
        "did (a reprocess; the LLM cache still answers requests it has seen)")

    def run_config(self) -> dict:
        return {"resources": {"scope": {"config": self.model_dump(exclude_defaults=True)}}}


def describe_arrival_days(spec: dg.AssetSpec) -> dg.AssetSpec:
    """An asset partitioned by arrival day, with what its partition keys are at the end of its description."""
    if spec.partitions_def != arrival_days or ARRIVAL_DAYS_DESCRIPTION in (spec.description or ""):
        return spec
    return spec.replace_attributes(description="\n\n".join(filter(None, [spec.description, ARRIVAL_DAYS_DESCRIPTION])))


def checked_arrival_days(days: Sequence[str], today: str | None = None) -> list[str]:
    """`days` when each is an arrival day (a real UTC date, YYYY-MM-DD, not after today); otherwise a
    dg.Failure naming the keys, before anything is read or written."""
    today = today or datetime.now(UTC).strftime("%Y-%m-%d")
    bad = [day for day in days if not _is_day(day) or day > today]
    if bad:
        raise dg.Failure(
            description=f"partition keys {bad} are not arrival days: a key of arrival_days is a UTC day, YYYY-MM-DD, "
            f"not after today ({today}), on which documents arrived. Delete the key (Partitions tab of the asset) "
            "and launch the day the documents arrived instead.",
            metadata={"bad_keys": ", ".join(bad), "today_utc": today})
    return list(days)


def _is_day(key: str) -> bool:
    try:
        return bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}", key)) and date.fromisoformat(key).isoformat() == key
    except ValueError:
        return False


def documents_in_scope(warehouse: Warehouse, days: Sequence[str], scope: RunScope) -> pl.DataFrame:
    """document_id and arrival_day of the current documents a run over `days` processes.

    Every per-document asset after `documents` calls this, so all of them cover the same documents:
    those the documents step recorded on these days, narrowed to `scope.documents` when it is set.
    Days that are not arrival days fail the step (`checked_arrival_days`).
    """
    frame = warehouse.documents_of_days(checked_arrival_days(days))
    if scope.documents is not None:
        frame = frame.filter(pl.col("document_id").is_in(scope.documents))
    return frame


def per_day_counts(days: Sequence[str], frame: pl.DataFrame, **aggregations: pl.Expr) -> dict[str, dict[str, int]]:
    """{day: {name: value}} of `aggregations` over rows carrying an `arrival_day`, zero for days without rows."""
    grouped = frame.group_by("arrival_day").agg(**aggregations) if frame.height else None
    found = {row.pop("arrival_day"): row for row in grouped.iter_rows(named=True)} if grouped is not None else {}
    return {day: {name: int(found.get(day, {}).get(name) or 0) for name in aggregations} for day in days}


def add_partition_metadata(context: dg.AssetExecutionContext, per_day: dict[str, dict], asset_key: str | None = None) -> None:
    """Each day's own numbers on its own materialization (not the run's totals on every day of a range), and
    what its key is: the Partitions tab shows a selected key's metadata, not the asset's description."""
    for day, metadata in per_day.items():
        context.add_asset_metadata({**metadata, "partition_key": ARRIVAL_DAY_KEY.format(day=day)},
                                   asset_key=asset_key, partition_key=day)


def partition_range(days: Sequence[str], ordered_keys: Sequence[str]) -> tuple[str, str]:
    """The one (first, last) range of partition keys that covers `days`, in the instance's key order."""
    position = {key: i for i, key in enumerate(ordered_keys)}
    missing = [d for d in days if d not in position]
    if missing:
        raise ValueError(f"arrival days {missing} are not partitions of the instance yet")
    indexes = sorted(position[d] for d in days)
    return ordered_keys[indexes[0]], ordered_keys[indexes[-1]]


def range_tags(first: str, last: str) -> dict[str, str]:
    return {RANGE_START_TAG: first, RANGE_END_TAG: last}


def record_failures(context: dg.AssetExecutionContext, warehouse: Warehouse, failures: list[DocumentFailure]) -> dict:
    """What a per-document step does with the documents whose content made it raise (`core.isolation`):
    their documents rows become error rows naming the step, the log says so, and the returned entries go into
    the step's metadata (how many, and which with what error)."""
    warehouse.fail_documents(failures_frame(failures))
    for failure in failures[:50]:
        context.log.warning(f"document {failure.document_id} failed in step {failure.step}: {failure.error}")
    return failure_metadata(failures)


def failure_metadata(failures: list[DocumentFailure]) -> dict:
    """How many documents failed in a step, and which with what error (the first 50), for its metadata."""
    return {"failed_documents": len(failures), "failures": markdown_table(failures_frame(failures).head(50))}
