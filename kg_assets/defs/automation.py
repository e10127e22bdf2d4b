"""Jobs, the inbox sensor and the nightly refresh: both ask the one planner (`defs.planner`) what to run.

Every run they request is a run of the named `kg_pipeline` job: the plan's arrival days, then
consolidation and the dbt marts after them in the same run. There is no declarative automation, so a
materialization never cascades into further runs and consolidation never starts before its partitions.
"""

from pathlib import Path

import dagster as dg

from kg_assets.core.files.inbox import InboxMissing
from kg_assets.core.planning import SENSOR_RETRIES, PlanCursor, advance
from kg_assets.defs.partitions import PARTITIONED_ASSETS, arrival_days
from kg_assets.defs.planner import add_days, current_plan, run_spec, today_utc
from kg_assets.defs.resources import ExtractorResource, IngestResource, WarehouseResource
from kg_assets.storage.warehouse import Warehouse, WarehouseBusy

# A sensor tick must finish within Dagster's tick timeout: it does not wait long for a busy warehouse.
SENSOR_LOCK_TIMEOUT_S = 5.0

kg_pipeline = dg.define_asset_job(
    "kg_pipeline",
    selection=dg.AssetSelection.all(),
    partitions_def=arrival_days,
    description="Everything over some arrival days: documents -> chunks -> extraction -> linked entities -> "
    "knowledge graph -> dbt marts, with checks (run config `scope` narrows the documents).",
)
consolidation = dg.define_asset_job(
    "consolidation",
    selection=dg.AssetSelection.all() - dg.AssetSelection.assets(*PARTITIONED_ASSETS),
    description="Everything built from all partitions at once: entities, graph, attributes, dbt marts "
    "(e.g. after `kg link merge|split`).",
)


@dg.sensor(
    name="inbox_sensor",
    job=kg_pipeline,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="New, changed, renamed and deleted inbox files (content hashes against the warehouse) become one "
    "kg_pipeline run over their arrival days. The cursor is a generation counter and a plan digest.",
)
def inbox_sensor(context: dg.SensorEvaluationContext, settings: IngestResource, warehouse: WarehouseResource,
                 extractor: ExtractorResource):
    cursor = PlanCursor.parse(context.cursor)
    wh = Warehouse.from_settings(warehouse, min(warehouse.lock_timeout_s, SENSOR_LOCK_TIMEOUT_S))
    try:
        plan = current_plan(Path(settings.inbox_dir), wh, context.instance, extractor.build_extractor().version,
                            today_utc(), include_stale=False)
    except (InboxMissing, WarehouseBusy) as exc:  # nothing is retracted for a missing inbox; a busy file waits a tick
        return dg.SkipReason(str(exc))
    failed = plan.digest == cursor.requested and _run_failed(context.instance, cursor.run_key)
    cursor, run_key = advance(cursor, plan, requested_run_failed=failed)
    if run_key is None:
        skip = ("no inbox change to run" if plan.is_empty else
                "its last run failed; left to the nightly refresh" if failed else "already requested")
        return dg.SensorResult(skip_reason=skip, cursor=cursor.dump())
    if failed:
        context.log.warning(f"inbox: the run for this plan failed; requesting it again ({cursor.retries} of "
                            f"{SENSOR_RETRIES})")
    try:
        spec = run_spec(plan, context.instance, wh)
    except WarehouseBusy as exc:  # the marts' views could not be read: the next tick asks again
        return dg.SkipReason(str(exc))
    request = dg.RunRequest(run_key=run_key, tags=spec.tags, run_config=spec.run_config,
                            asset_selection=spec.asset_selection)
    context.log.info(f"inbox: {plan.summary()}; one run over {', '.join(plan.days) or 'no day (consolidation)'}")
    return dg.SensorResult(
        run_requests=[request],
        dynamic_partitions_requests=[arrival_days.build_add_request(spec.missing_days)] if spec.missing_days else [],
        cursor=cursor.dump(),
    )


def _run_failed(instance: dg.DagsterInstance, run_key: str | None) -> bool:
    """Whether the sensor's run with this run key failed (a canceled run was stopped on purpose: not retried)."""
    if run_key is None:
        return False
    runs = instance.get_runs(dg.RunsFilter(tags={"dagster/sensor_name": "inbox_sensor", "dagster/run_key": run_key}),
                             limit=1)
    return bool(runs) and runs[0].status == dg.DagsterRunStatus.FAILURE


@dg.schedule(
    name="nightly_refresh",
    cron_schedule="0 2 * * *",
    job=kg_pipeline,
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Runs what the planner finds stale (another chunker/extractor version, failed chunks, inbox changes "
    "the sensor missed, a graph older than its partitions); skips when nothing is.",
)
def nightly_refresh(context: dg.ScheduleEvaluationContext, settings: IngestResource, warehouse: WarehouseResource,
                    extractor: ExtractorResource):
    wh = warehouse.get()
    try:
        plan = current_plan(Path(settings.inbox_dir), wh, context.instance,
                            extractor.build_extractor().version, today_utc(context.scheduled_execution_time))
        if plan.is_empty:
            return dg.SkipReason(f"nothing stale ({plan.summary()})")
        spec = run_spec(plan, context.instance, wh)
    except (InboxMissing, WarehouseBusy) as exc:
        return dg.SkipReason(str(exc))
    add_days(context.instance, spec.missing_days)  # a schedule cannot request partitions; the instance gets them
    context.log.info(f"nightly: {plan.summary()}")
    return dg.RunRequest(run_key=f"nightly:{context.scheduled_execution_time.isoformat()}:{plan.digest}",
                         tags=spec.tags, run_config=spec.run_config, asset_selection=spec.asset_selection)
