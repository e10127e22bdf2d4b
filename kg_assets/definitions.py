"""The kg_assets code location: every domain's definitions merged, resources and pools from one Settings."""

from __future__ import annotations

import dagster as dg

from kg_assets.defs import automation, checks, extraction, facts, graph, ingest
from kg_assets.defs.garbage_collection import collect_less_often
from kg_assets.defs.partitions import describe_arrival_days
from kg_assets.defs.pools import Pools, backend_pools
from kg_assets.defs.resources import build_resources
from kg_assets.extractors.factory import build_extractor
from kg_assets.settings import Settings


def build_definitions(settings: Settings, marts: bool = True) -> dg.Definitions:
    """Every definition; `marts=False` leaves out the dbt assets, for a run that does not build them: importing
    dagster-dbt and dbt-core is seconds of start-up. The steps' pools follow `settings.warehouse.backend`."""
    pools = backend_pools(settings.warehouse.backend)
    return dg.Definitions.merge(
        dg.Definitions(assets=[
            *ingest.assets(pools), *extraction.assets(pools, build_extractor(settings.extractor).version),
            *graph.assets(pools), *facts.assets(pools),
        ]).map_asset_specs(func=describe_arrival_days),
        dg.Definitions(asset_checks=checks.checks),
        _marts(pools) if marts else dg.Definitions(),
        dg.Definitions(
            jobs=[automation.kg_pipeline, automation.consolidation],
            schedules=[automation.nightly_refresh],
            sensors=[automation.inbox_sensor],
        ),
        # Every step in the run's own process: a UI launch then pays one Python start-up, not one per step
        # (seconds of imports each), and DuckDB's one writer is a pool of this process anyway.
        dg.Definitions(resources=build_resources(settings), executor=dg.in_process_executor),
    )


def _marts(pools: Pools) -> dg.Definitions:
    from kg_assets.defs import dbt

    return dg.Definitions(assets=[dbt.mart_assets(pools.dbt)], resources={"dbt": dbt.dbt_resource()})


_LOADED: dict[str, dg.Definitions] = {}
# Every process that loads the code location (a UI-launched run's worker, the code server, the daemon's) runs its
# steps with the collector `kg run` uses.
collect_less_often()


@dg.definitions
def defs() -> dg.Definitions:
    """What `dagster dev` and `dagster definitions validate` load: settings from the environment, checked
    here, so a bad value stops the code location from loading and names its variable. Built once per
    settings in a process: a run worker loads the repository twice before its first step."""
    settings = Settings.from_env()
    key = settings.model_dump_json()
    if key not in _LOADED:
        _LOADED[key] = build_definitions(settings)
    return _LOADED[key]
