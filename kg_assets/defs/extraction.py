"""extraction: one multi_asset writing entity_mentions and local_relations per document partition.

Chunks already extracted successfully by the same extractor version are reused, so a rerun redoes
exactly the chunks that failed, changed or were never extracted.
"""


import dagster as dg
import polars as pl

from kg_assets.defs.ingest import eager
from kg_assets.defs.partitions import documents_partitions, single_run
from kg_assets.defs.resources import ExtractorResource, WarehouseResource
from kg_assets.defs.tables import table_metadata
from kg_assets.llm.base import ExtractionResult


def _spec(name: str, description: str, tables: tuple[str, ...]) -> dg.AssetSpec:
    return dg.AssetSpec(
        name,
        deps=["chunks"],
        group_name="extraction",
        kinds={"duckdb", "polars"},
        automation_condition=eager,
        metadata=table_metadata(*tables),
        description=description,
    )


@dg.multi_asset(
    name="extraction",
    specs=[
        _spec("entity_mentions", "Typed entity mentions per chunk, with normalized names and stable ids.",
              ("entity_mentions", "chunk_extractions")),
        _spec("local_relations", "Relations between entities mentioned in the same chunk.", ("local_relations",)),
    ],
    partitions_def=documents_partitions,
    backfill_policy=single_run,
    pool="duckdb",
)
def extraction(context: dg.AssetExecutionContext, warehouse: WarehouseResource, extractor: ExtractorResource):
    wh = warehouse.get()
    engine = extractor.get()
    keys = context.partition_keys
    chunks = wh.read_partitions("chunks", keys)
    previous = {t: wh.read_partitions(t, keys) for t in ("entity_mentions", "local_relations", "chunk_extractions")}
    reusable = previous["chunk_extractions"].filter(
        (pl.col("status") == "ok") & (pl.col("extractor_version") == engine.version)
    ).join(chunks.select("chunk_id"), on="chunk_id", how="semi").select("chunk_id")
    todo = chunks.join(reusable, on="chunk_id", how="anti")
    context.log.info(
        f"extracting {todo.height:,} of {chunks.height:,} chunks with the {extractor.describe(engine)}; "
        f"{reusable.height:,} reused"
    )
    result = engine.extract(todo) if todo.height else ExtractionResult.empty()
    kept = {t: frame.join(reusable, on="chunk_id", how="semi") for t, frame in previous.items()}
    frames = {
        "entity_mentions": pl.concat([kept["entity_mentions"], result.mentions]),
        "local_relations": pl.concat([kept["local_relations"], result.relations]),
        "chunk_extractions": pl.concat([kept["chunk_extractions"], result.chunk_status]),
    }
    wh.replace_partitions(frames, keys)

    failed = result.chunk_status.filter(pl.col("status") != "ok")
    for chunk_id, error in failed.select("chunk_id", "error").head(20).iter_rows():
        context.log.warning(f"chunk {chunk_id}: {error}")
    common = {
        "extractor": engine.name,
        "extractor_version": engine.version,
        "engine": extractor.describe(engine),
        "chunks_extracted": todo.height,
        "chunks_reused": reusable.height,
        "chunks_failed": failed.height,
    }
    yield dg.MaterializeResult(
        asset_key="entity_mentions",
        metadata={**common, "dagster/row_count": frames["entity_mentions"].height,
                  "entity_types": dg.MetadataValue.json(_type_counts(frames["entity_mentions"]))},
    )
    yield dg.MaterializeResult(
        asset_key="local_relations", metadata={**common, "dagster/row_count": frames["local_relations"].height}
    )


def _type_counts(mentions: pl.DataFrame) -> dict[str, int]:
    counts = mentions.group_by("entity_type").len().sort("entity_type")
    return dict(zip(counts["entity_type"].to_list(), counts["len"].to_list()))
