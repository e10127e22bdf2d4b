"""The kg_assets code location: every domain's definitions merged, resources built from one Settings."""

from __future__ import annotations

import dagster as dg

from kg_assets.defs import automation, checks, extraction, facts, graph, ingest
from kg_assets.defs.resources import build_resources
from kg_assets.extractors.factory import build_extractor
from kg_assets.settings import Settings


def build_definitions(settings: Settings, marts: bool = True) -> dg.Definitions:
    """Every definition; `marts=False` leaves out the dbt assets, for a run that does not build them: importing
    dagster-dbt and dbt-core is seconds of start-up."""
    return dg.Definitions.merge(
        dg.Definitions(assets=[ingest.documents, ingest.chunks]),
        # Rows made by another extractor or version show as stale partitions in the UI (code version).
        dg.Definitions(assets=[extraction.extraction.map_asset_specs(
            lambda spec: spec.replace_attributes(code_version=build_extractor(settings.extractor).version))]),
        dg.Definitions(assets=[graph.link_overrides, graph.linked_entities, graph.entity_summaries, graph.knowledge_graph,
                               graph.entity_attributes]),
        dg.Definitions(assets=facts.assets),
        dg.Definitions(asset_checks=checks.checks),
        _marts() if marts else dg.Definitions(),
        dg.Definitions(
            jobs=[automation.kg_pipeline, automation.consolidation],
            schedules=[automation.nightly_refresh],
            sensors=[automation.inbox_sensor],
        ),
        dg.Definitions(resources=build_resources(settings)),
    )


def _marts() -> dg.Definitions:
    from kg_assets.defs import dbt

    return dg.Definitions(assets=[dbt.kg_dbt_models], resources={"dbt": dbt.dbt_resource()})


@dg.definitions
def defs() -> dg.Definitions:
    """What `dagster dev` and `dagster definitions validate` load: settings from the environment, checked
    here, so a bad value stops the code location from loading and names its variable."""
    return build_definitions(Settings.from_env())
