"""Jobs, the nightly refresh of stale partitions, and the declarative-automation sensor."""

import dagster as dg

from kg_assets.core.chunking import CHUNKER_VERSION
from kg_assets.defs.partitions import (
    CONSOLIDATION_ASSETS,
    PARTITIONED_ASSETS,
    documents_partitions,
    partition_ranges,
    range_tags,
)
from kg_assets.defs.resources import ExtractorResource, WarehouseResource
from kg_assets.storage.warehouse import WarehouseBusy


kg_pipeline = dg.define_asset_job(
    "kg_pipeline",
    selection=dg.AssetSelection.all(),
    description="Everything: documents -> chunks -> extraction -> linked entities -> knowledge graph -> dbt marts, with checks.",
)
consolidation = dg.define_asset_job(
    "consolidation",
    selection=dg.AssetSelection.all() - dg.AssetSelection.assets(*PARTITIONED_ASSETS),
    description="Everything built from all partitions at once: entities, graph, attributes, dbt marts.",
)


@dg.schedule(
    name="nightly_refresh",
    cron_schedule="0 2 * * *",
    target=dg.AssetSelection.assets(*PARTITIONED_ASSETS, *CONSOLIDATION_ASSETS),
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Re-runs partitions made by an older chunker/extractor version or with failed chunks, then consolidates.",
)
def nightly_refresh(context: dg.ScheduleEvaluationContext, warehouse: WarehouseResource, extractor: ExtractorResource):
    wh = warehouse.get()
    try:
        stale = wh.stale_documents(extractor.build_extractor().version, CHUNKER_VERSION) if wh.exists() else []
    except WarehouseBusy as exc:  # a run holds the write lock; the next tick tries again
        return dg.SkipReason(f"warehouse busy: {exc}")
    ordered = context.instance.get_dynamic_partitions(documents_partitions.name)
    tick = context.scheduled_execution_time.isoformat()
    requests = [
        dg.RunRequest(run_key=f"{tick}:{first}..{last}", asset_selection=[dg.AssetKey(a) for a in PARTITIONED_ASSETS],
                      tags=range_tags(first, last))
        for first, last in partition_ranges(stale, ordered)
    ]
    requests.append(dg.RunRequest(run_key=f"{tick}:consolidation",
                                  asset_selection=[dg.AssetKey(a) for a in CONSOLIDATION_ASSETS]))
    context.log.info(f"{len(stale)} stale documents in {len(requests) - 1} runs")
    return requests


automation_sensor = dg.AutomationConditionSensorDefinition(
    "kg_automation",
    target=dg.AssetSelection.all(),
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=60,
)
