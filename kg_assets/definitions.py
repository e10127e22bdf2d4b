"""The kg_assets code location: every domain's definitions merged, resources bound from env vars."""

from __future__ import annotations

import dagster as dg

from kg_assets.defs import automation, checks, dbt, extraction, graph, ingest
from kg_assets.defs.resources import default_resources


def build_definitions() -> dg.Definitions:
    return dg.Definitions.merge(
        dg.Definitions(assets=[ingest.documents, ingest.chunks], sensors=[ingest.inbox_sensor]),
        dg.Definitions(assets=[extraction.extraction]),
        dg.Definitions(assets=[graph.linked_entities, graph.knowledge_graph, graph.entity_attributes]),
        dg.Definitions(asset_checks=checks.checks),
        dg.Definitions(assets=[dbt.kg_dbt_models], resources={"dbt": dbt.dbt_resource()}),
        dg.Definitions(
            jobs=[automation.kg_pipeline, automation.consolidation],
            schedules=[automation.nightly_refresh],
            sensors=[automation.automation_sensor],
        ),
        dg.Definitions(resources=default_resources()),
    )


defs = build_definitions()
