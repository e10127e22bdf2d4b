"""extraction: one multi_asset writing entity_mentions and local_relations (and attribute observations)
per document partition.

Chunks already extracted successfully by the same extractor version are reused, so a rerun redoes
exactly the chunks that failed, changed or were never extracted; LLM answers are cached besides, so a
redone chunk whose requests already succeeded costs nothing. No DuckDB connection is open while the
extractor works: read, extract, then write everything in one transaction.
"""

import dagster as dg
import polars as pl

from kg_assets.defs.ingest import eager
from kg_assets.defs.partitions import documents_partitions, single_run
from kg_assets.defs.resources import ExtractorResource, WarehouseResource
from kg_assets.defs.tables import markdown_table, table_metadata
from kg_assets.extractors.base import ExtractionResult
from kg_assets.extractors.llm.cache import LLMCache

PARTITION_TABLES = ("entity_mentions", "local_relations", "attribute_observations", "chunk_extractions")


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
              ("entity_mentions", "attribute_observations", "chunk_extractions", "llm_calls")),
        _spec("local_relations", "Relations between entities mentioned in the same chunk.", ("local_relations",)),
    ],
    partitions_def=documents_partitions,
    backfill_policy=single_run,
    # LLM-using steps are capped across concurrent runs by this pool; DuckDB writes wait for the file lock.
    pool="llm",
)
def extraction(context: dg.AssetExecutionContext, warehouse: WarehouseResource, extractor: ExtractorResource):
    wh = warehouse.get()
    engine = extractor.build_extractor(run_id=context.run_id, progress=lambda done, total: context.log.info(f"extracted {done:,}/{total:,} chunks"))
    keys = context.partition_keys
    chunks = wh.chunks_for_extraction(keys)
    previous = {t: wh.read_partitions(t, keys) for t in PARTITION_TABLES}
    reusable = previous["chunk_extractions"].filter(
        (pl.col("status") == "ok") & (pl.col("extractor_version") == engine.version)
    ).join(chunks.select("chunk_id"), on="chunk_id", how="semi").select("chunk_id")
    todo = chunks.join(reusable, on="chunk_id", how="anti")
    context.log.info(
        f"extracting {todo.height:,} of {chunks.height:,} chunks with the {extractor.describe(engine)}; "
        f"{reusable.height:,} reused"
    )
    result = engine.extract(todo) if todo.height else ExtractionResult.empty()
    new = {
        "entity_mentions": result.mentions,
        "local_relations": result.relations,
        "attribute_observations": result.attributes,
        "chunk_extractions": result.chunk_status,
    }
    frames = {t: pl.concat([previous[t].join(reusable, on="chunk_id", how="semi"), new[t]]) for t in PARTITION_TABLES}
    wh.replace_partitions(frames, keys)
    if extractor.uses_llm:
        export_calls(wh, engine.settings.cache_path)

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
        "chunks_without_entities": int((frames["chunk_extractions"]["mention_count"] == 0).sum()),
        **_call_metadata(result.calls),
    }
    yield dg.MaterializeResult(
        asset_key="entity_mentions",
        metadata={**common, "dagster/row_count": frames["entity_mentions"].height,
                  "attribute_observations": frames["attribute_observations"].height,
                  "entity_types": dg.MetadataValue.json(_type_counts(frames["entity_mentions"]))},
    )
    yield dg.MaterializeResult(
        asset_key="local_relations", metadata={**common, "dagster/row_count": frames["local_relations"].height}
    )


def export_calls(wh, cache_path: str) -> None:
    """Copy the LLM call log (this run's and any killed run's) from the cache into kg.llm_calls."""
    with LLMCache(cache_path) as cache:
        calls = cache.unexported_calls()
        wh.upsert_rows("llm_calls", "call_id", calls)
        cache.mark_exported(calls["call_id"].to_list())


def _call_metadata(calls: pl.DataFrame) -> dict[str, object]:
    """Spend of this run: requests actually sent, cache hits, tokens, latency and estimated cost."""
    if calls.height == 0:
        return {}
    sent = calls.filter(pl.col("status") != "cache_hit")
    by_document = (
        sent.group_by("document_id")
        .agg(pl.len().alias("calls"), pl.col("prompt_tokens").sum(), pl.col("completion_tokens").sum(), pl.col("cost_usd").sum())
        .sort("cost_usd", "document_id", descending=[True, False])
        .head(25)
    )
    return {
        "llm_calls": sent.height,
        "llm_cache_hits": calls.height - sent.height,
        "llm_errors": int(calls["status"].is_in(["error", "parse_error"]).sum()),
        "prompt_tokens": int(sent["prompt_tokens"].sum() or 0),
        "completion_tokens": int(sent["completion_tokens"].sum() or 0),
        "latency_p50_ms": float(sent["latency_ms"].median() or 0.0),
        "latency_p95_ms": float(sent["latency_ms"].quantile(0.95) or 0.0),
        "estimated_cost_usd": float(sent["cost_usd"].sum() or 0.0),
        "cost_by_document": markdown_table(by_document),
    }


def _type_counts(mentions: pl.DataFrame) -> dict[str, int]:
    counts = mentions.group_by("entity_type").len().sort("entity_type")
    return dict(zip(counts["entity_type"].to_list(), counts["len"].to_list()))
