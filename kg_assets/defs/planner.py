"""The planner's Dagster side: gather its inputs (inbox, warehouse, instance) and turn a plan into a run.

The inbox sensor, the nightly schedule and `kg run` all call `current_plan` and `run_spec`, so they
decide alike and launch alike: one run of the named `kg_pipeline` job over the plan's arrival days,
with consolidation and the dbt marts in the same run, after the partitions (step order, not timing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import sqlalchemy.exc

from kg_assets.core.chunking import CHUNKER_VERSION
from kg_assets.core.files import DocumentError
from kg_assets.core.files.inbox import entry_hash, scan_present_inbox
from kg_assets.core.planning import Plan, frame_digest, plan_work
from kg_assets.defs.dbt_manifest import MARTS_SCHEMA, model_code_versions
from kg_assets.defs.partitions import (
    CONSOLIDATION_ASSETS,
    PARTITIONED_ASSETS,
    RunScope,
    arrival_days,
    partition_range,
    range_tags,
)
from kg_assets.storage.warehouse import Warehouse

# linked_entities records the digest of the manual link decisions it applied; another digest means a
# `kg link` command ran since, and the graph is out of date although no document is.
OVERRIDES_DIGEST_KEY = "link_overrides_digest"
# The tag Dagster writes on every materialization with the asset's code version at the time.
CODE_VERSION_TAG = "dagster/code_version"


def today_utc(now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).astimezone(UTC).date().isoformat()


def current_plan(
    inbox: Path,
    warehouse: Warehouse,
    instance: dg.DagsterInstance,
    extractor_version: str,
    today: str,
    *,
    include_stale: bool = True,
    everything: bool = False,
    only: Sequence[str] | None = None,
) -> Plan:
    """The plan for the inbox as it is now. Raises InboxMissing when the inbox folder is gone, WarehouseBusy
    when another process holds the warehouse past the lock timeout, PlanError for an unknown `only` key."""
    listing = scan_present_inbox(inbox)
    built = warehouse.exists()
    if built:  # a lake another run is creating table by table is completed before it is read
        warehouse.ensure_schema()
    known = warehouse.document_states() if built else None
    stale = warehouse.stale_documents(extractor_version, CHUNKER_VERSION) if built and include_stale else []
    return plan_work(
        listing, known, today, lambda key: _hash_or_none(inbox, key),
        stale=stale, consolidate=include_stale and built and graph_out_of_date(instance, warehouse),
        everything=everything, only=only,
    )


def _hash_or_none(inbox: Path, key: str) -> str | None:
    try:
        return entry_hash(inbox, key)
    except (OSError, DocumentError):
        return None  # unreadable: the documents step records why


def graph_out_of_date(instance: dg.DagsterInstance, warehouse: Warehouse) -> bool:
    """Some partition was materialized after the last consolidation (or none ever ran, or one failed), or
    the manual link decisions changed since linked_entities applied them."""
    def latest(asset: str):
        event = instance.get_latest_materialization_event(dg.AssetKey(asset))
        return event.timestamp if event else None

    consolidated = [latest(a) for a in CONSOLIDATION_ASSETS]
    if any(t is None for t in consolidated):
        return True
    partitions = [t for t in (latest(a) for a in PARTITIONED_ASSETS) if t is not None]
    if partitions and max(partitions) > min(consolidated):
        return True
    linked = instance.get_latest_materialization_event(dg.AssetKey("linked_entities"))
    applied = linked.asset_materialization.metadata.get(OVERRIDES_DIGEST_KEY) if linked else None
    return applied is None or applied.value != frame_digest(warehouse.link_overrides())


@dataclass(frozen=True)
class RunSpec:
    """How to launch a plan: run tags (partition range), run config (scope), asset selection (None: all)."""

    tags: dict[str, str]
    run_config: dict
    asset_selection: list[dg.AssetKey] | None
    missing_days: list[str]  # partition keys to add to the instance before the run
    builds_marts: bool  # False: the job can be built without the dbt assets (and without importing dagster-dbt)


def run_spec(plan: Plan, instance: dg.DagsterInstance, warehouse: Warehouse) -> RunSpec:
    """The one run that carries out `plan`, as a `kg_pipeline` run (never an anonymous job).

    The dbt marts are views: they are (re)built only when a mart's SQL changed or was never built, since a
    view already shows the new rows. That saves dbt's start-up, the largest fixed cost of a small run."""
    marts = [] if marts_are_current(instance, warehouse) else list(model_code_versions())
    consolidation = [dg.AssetKey(a) for a in CONSOLIDATION_ASSETS]
    if not plan.days:
        return RunSpec({}, {}, consolidation + marts, [], bool(marts))
    existing = list(instance.get_dynamic_partitions(arrival_days.name))
    missing = sorted(set(plan.days) - set(existing))
    ordered = existing + missing
    scope = RunScope(documents=list(plan.documents) if plan.documents is not None else None, take_new=plan.take_new,
                     redo_extraction=plan.redo_extraction)
    selection = None if marts else [dg.AssetKey(a) for a in PARTITIONED_ASSETS] + consolidation
    return RunSpec(range_tags(*partition_range(plan.days, ordered)), scope.run_config(), selection, missing,
                   bool(marts))


def marts_are_current(instance: dg.DagsterInstance, warehouse: Warehouse) -> bool:
    """Every dbt model's view was last built from the SQL it has now (dagster-dbt's code version), and this
    warehouse has it: the instance alone cannot tell (another `--db`, a deleted file)."""
    versions = model_code_versions()
    for key, code_version in versions.items():
        event = instance.get_latest_materialization_event(key)
        if event is None or event.asset_materialization.tags.get(CODE_VERSION_TAG) != code_version:
            return False
    views = warehouse.view_names(MARTS_SCHEMA)
    return all(key.path[-1] in views for key in versions)


def add_days(instance: dg.DagsterInstance, days: Sequence[str], attempts: int = 3) -> None:
    """Adds the arrival days the instance lacks. Two processes that plan at once (two `kg run --partitions-only`,
    a run and the nightly schedule) may both find a day missing: Dagster reads then inserts, so the slower insert
    breaks the instance's unique key although the day is there. Adding again skips the days present by then."""
    for attempt in range(attempts if days else 0):
        try:
            instance.add_dynamic_partitions(arrival_days.name, list(days))
            return
        except sqlalchemy.exc.IntegrityError:
            if attempt == attempts - 1:
                raise
